/* tokenizer.json loading (II.8, build_tokenizer): the input is a tokenizer.json, written to a scratch
 * file and read by gna_tokenizer_load; a tokenizer that loads then encodes a fixed text (with and
 * without special tokens), and decodes the ids (with and without them) and the ids 0..31. */

static void decode_ids(const gna_tokenizer *t, const int *ids, int n) {
    for (int skip = 0; skip < 2; skip++) {
        char *text;
        size_t length;
        if (gna_detokenize(t, ids, n, skip, &text, &length) == GNA_OK) free(text);
    }
}

static int fuzz_tokenizer_json(const uint8_t *data, size_t size) {
    static const char text[] = "Hello  world!\n\t<s> it's 2024: caf\xC3\xA9 \xE2\x96\x81na\xC3\xAFve \xF0\x9F\x98\x80 ABC123 <|end|>";
    fuzz_setup();
    fuzz_write(TMP("tokenizer.json"), data, size);
    gna_tokenizer *t;
    if (gna_tokenizer_load(TMP("tokenizer.json"), &t) != GNA_OK) return 0;
    for (int special = 0; special < 2; special++) {
        int *ids, n;
        if (gna_tokenize(t, text, sizeof text - 1, special, &ids, &n) != GNA_OK) continue;
        decode_ids(t, ids, n);
        free(ids);
    }
    int range[32];
    for (int i = 0; i < 32; i++) range[i] = i;
    decode_ids(t, range, 32);
    gna_tokenizer_free(t);
    return 0;
}
