/* Tokenize and detokenize (II.8, encode and decode) on real tokenizer.json files: falcon and neox from
 * test/fixtures/tokenizers, the tiny one of test/bad/good_tokenizer, and llama2 and llama3_1 from
 * test/.cache when `make tokenizer-cache` has fetched them. The input's first byte picks the tokenizer
 * (bits 1..) and whether special tokens are added (bit 0); the rest is the text. The ids that come out
 * are decoded back, keeping and skipping special tokens. */

static gna_tokenizer *tokenizers[8];
static int n_tokenizers;

static int fuzz_tokenize(const uint8_t *data, size_t size) {
    static const char *const files[] = {"test/fixtures/tokenizers/falcon/tokenizer.json", "test/fixtures/tokenizers/neox/tokenizer.json",
                                        "test/bad/good_tokenizer/tokenizer.json", "test/.cache/llama2/tokenizer.json",
                                        "test/.cache/llama3_1/tokenizer.json"};
    fuzz_setup();
    for (int i = 0; !n_tokenizers && i < (int)(sizeof files / sizeof *files); i++)
        if (access(REPO(files[i]), F_OK) == 0 && gna_tokenizer_load(REPO(files[i]), &tokenizers[n_tokenizers]) == GNA_OK)
            n_tokenizers++;
    if (size < 1 || !n_tokenizers) return 0;
    const gna_tokenizer *t = tokenizers[(data[0] >> 1) % n_tokenizers];
    int *ids, n;
    if (gna_tokenize(t, (const char *)data + 1, size - 1, data[0] & 1, &ids, &n) != GNA_OK) return 0;
    for (int skip = 0; skip < 2; skip++) {
        char *text;
        size_t length;
        if (gna_detokenize(t, ids, n, skip, &text, &length) == GNA_OK) free(text);
    }
    free(ids);
    return 0;
}
