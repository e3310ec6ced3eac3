/* kv's --keys file (II.11, read_keys): the input is the keys file; when it reads, Part I's
 * kv_question makes two samples of min(keys, 12) pairs (if any keys) from it (build_kv), with and without the mask. */

static int fuzz_keys(const uint8_t *data, size_t size) {
    fuzz_setup();
    fuzz_write(TMP("keys.txt"), data, size);
    char *text;
    const char **keys;
    size_t n_keys;
    if (read_keys(TMP("keys.txt"), &text, &keys, &n_keys) != GNA_OK) return 0;
    size_t pairs = n_keys < 12 ? n_keys : 12; /* gna kv asks for 1 to n_keys pairs */
    Harness h = {0};
    if (pairs > 0) build_kv(&h, keys, n_keys, &pairs, 1, 2, size, 1);
    free_harness(&h);
    free(keys);
    free(text);
    return 0;
}
