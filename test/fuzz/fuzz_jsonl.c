/* The JSONL question files (II.10, read_jsonl): the input is read as MMLU's .jsonl (build_mmlu, one
 * shot: read_mmlu_json_line) and as a multiple-choice .jsonl (build_mc, mc_reader) into questions. */

static int fuzz_jsonl(const uint8_t *data, size_t size) {
    fuzz_setup();
    fuzz_write(TMP("questions.jsonl"), data, size);
    Harness h = {0};
    build_mmlu(&h, TMP("questions.jsonl"), 1, 0);
    free_harness(&h);
    build_mc(&h, TMP("questions.jsonl"), 0);
    free_harness(&h);
    return 0;
}
