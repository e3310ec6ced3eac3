/* gna.h's argument checks (issue 32): the input is a sequence of calls, each with NULLs, negative or
 * huge counts, a cache of another run or a run already busy; every call returns a status, none crashes,
 * and a well-formed call afterwards still works. */
static int fuzz_api(const uint8_t *data, size_t size) {
    static gna_model *m;
    static gna_tokenizer *t;
    fuzz_setup();
    if (!m && (gna_load(REPO("test/bad/good_llama_tokenizer"), &m) != GNA_OK ||
               gna_tokenizer_load(REPO("test/bad/good_llama_tokenizer/tokenizer.json"), &t) != GNA_OK))
        abort();
    Reader r = {data, size, 0};
    gna_run *runs[2] = {NULL, NULL};
    gna_cache *caches[2] = {NULL, NULL};
    const char *options[] = {"--mask", "L0H1", "--drop", "0"};
    gna_run_new(m, 0, NULL, &runs[0]);
    gna_run_new(m, 2 * (int)(next(&r) % 3), options, &runs[1]);
    int ids[8] = {1, 2, 3, 15, 0, 7, 9, 4}, n, width, *got;
    float values[1024];
    char *text;
    size_t length;
    while (r.at < r.size) {
        unsigned call = next(&r), a = next(&r), b = next(&r);
        gna_run *run = a & 1 ? NULL : runs[a >> 1 & 1];
        gna_cache *cache = b & 1 ? NULL : caches[b >> 1 & 1];
        int count = (int)(next(&r) % 17) - 8; /* -8 .. 8: the buffers below hold 8 */
        switch (call % 10) {
        case 0: if (run && !caches[a >> 1 & 1]) gna_cache_new(run, count, &caches[a >> 1 & 1]); else gna_cache_new(run, count, NULL); break;
        case 1: gna_forward(run, cache, b & 2 ? ids : NULL, count, NULL); break;
        case 2: gna_run_record(run, a & 4 ? "L0H*" : NULL, b & 4 ? ids : NULL, count, 8, b & 8 ? values : NULL); break;
        case 3: gna_run_tap(run, count & 1, b & 2 ? "L0H0" : NULL, b & 4 ? ids : NULL, count, values); break;
        case 4: gna_unembed(run, values, count, b & 2 ? values : NULL); break;
        case 5: gna_site_width(run, b & 2 ? "L0" : NULL, &width); break;
        case 6: gna_cache_state(cache, count, (int)b, values, b & 4 ? &n : NULL); break;
        case 7: if (gna_tokenize(a & 1 ? NULL : t, b & 2 ? "hello" : NULL, (size_t)(count & 7) % 6, a & 2, &got, &n) == GNA_OK) free(got); break;
        case 8: if (gna_detokenize(a & 1 ? NULL : t, b & 2 ? ids : NULL, count, a & 2, &text, &length) == GNA_OK) free(text); break;
        default: gna_count_heads(run, b & 2 ? "L0H*" : NULL, &n); break;
        }
    }
    gna_run_record(runs[0], NULL, NULL, 0, 0, NULL);
    gna_run_tap(runs[0], GNA_CAPTURE, NULL, NULL, 0, NULL);
    gna_cache *cache;
    if (gna_cache_new(runs[0], 8, &cache) != GNA_OK || gna_forward(runs[0], cache, ids, 4, NULL) != GNA_OK) abort();
    gna_cache_free(cache);
    for (int i = 0; i < 2; i++) gna_cache_free(caches[i]), gna_run_free(runs[i]);
    return 0;
}
