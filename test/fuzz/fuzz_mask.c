/* Head specs and run options (II.4, gna_run_new's parse_mask, --layers, --drop, --replace): the
 * input's first byte picks a model (test/bad/good_llama, good_mamba, and the mamba2, zamba2 and llamba
 * fixtures); the rest, split at NUL bytes, is the --mask spec, a spec of heads to record
 * (gna_run_record) and more run options as separate strings. A run that builds runs three tokens. */

enum { N_MODELS = 5, MAX_FIELDS = 16 };

static int fuzz_mask(const uint8_t *data, size_t size) {
    static const char *const dirs[N_MODELS] = {"test/bad/good_llama", "test/bad/good_mamba", "test/fixtures/mamba2_f32",
                                               "test/fixtures/zamba2_f32_one_block", "test/fixtures/llamba_f32"};
    static gna_model *models[N_MODELS];
    static int loaded;
    fuzz_setup();
    for (int i = 0; !loaded && i < N_MODELS; i++, loaded = i == N_MODELS)
        if (gna_load(REPO(dirs[i]), &models[i]) != GNA_OK) { fprintf(stderr, "%s\n", gna_error()); abort(); }
    if (size < 1) return 0;
    gna_model *m = models[data[0] % N_MODELS];
    char *text = checked_strndup((const char *)data + 1, size - 1), *fields[MAX_FIELDS];
    int n = 0;
    for (char *at = text; n < MAX_FIELDS && at <= text + size - 1; at += strlen(at) + 1) fields[n++] = at;
    const char *options[MAX_FIELDS + 4] = {"--threads", "1", "--mask", fields[0]};
    for (int i = 2; i < n; i++) options[i + 2] = fields[i];
    gna_run *run;
    if (gna_run_new(m, n < 2 ? 4 : n + 2, options, &run) == GNA_OK) {
        int heads = 0, V = gna_vocab_size(m), tokens[3] = {0, 1 % V, V - 1};
        float *maps = NULL, *logits = malloc(sizeof(float) * 3 * (size_t)V);
        if (n > 1 && gna_count_heads(run, fields[1], &heads) == GNA_OK && heads > 0 && heads < 100000) {
            maps = malloc(sizeof(float) * 9 * (size_t)heads);
            if (gna_run_record(run, fields[1], NULL, 0, 3, maps) != GNA_OK) heads = 0;
        }
        gna_cache *cache;
        if (gna_cache_new(run, 3, &cache) == GNA_OK) {
            gna_forward(run, cache, tokens, 3, logits);
            gna_cache_free(cache);
        }
        gna_run_free(run);
        free(maps);
        free(logits);
    }
    free(text);
    return 0;
}
