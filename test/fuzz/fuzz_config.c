/* config.json (II.7, read_config) with fixed weights: the input is config.json, written into one of
 * several scratch folders that hold a real checkpoint's model.safetensors, picked by the model_type
 * the text names (zamba2, falcon_mamba, mamba2, llamba, mamba, else llama: test/bad/good_llama); the
 * folder is loaded and, when it loads, two tokens run through the model. */

static const char *const families[][2] = { /* the first word found in the text picks the weights */
    {"zamba2", "test/fixtures/zamba2_f32_one_block"}, {"falcon_mamba", "test/fixtures/falcon_mamba_bf16_k3"},
    {"mamba2", "test/fixtures/mamba2_f32"}, {"llamba", "test/fixtures/llamba_bf16_shared_bc"},
    {"mamba", "test/bad/good_mamba"}, {"", "test/bad/good_llama"}};
enum { N_FAMILIES = sizeof families / sizeof *families };

static int fuzz_config(const uint8_t *data, size_t size) {
    fuzz_setup();
    static int ready;
    char dir[64], from[256];
    for (int f = 0; !ready && f < N_FAMILIES; f++) {
        snprintf(dir, sizeof dir, "%d", f);
        fuzz_mkdir(TMP(dir));
        snprintf(from, sizeof from, "%s/model.safetensors", families[f][1]);
        snprintf(dir, sizeof dir, "%d/model.safetensors", f);
        fuzz_copy(REPO(from), TMP(dir));
    }
    ready = 1;
    int f = 0;
    char *text = checked_strndup((const char *)data, size); /* (memmem is not C11) */
    while (f < N_FAMILIES - 1 && !strstr(text, families[f][0])) f++;
    free(text);
    snprintf(dir, sizeof dir, "%d/config.json", f);
    fuzz_write(TMP(dir), data, size);
    snprintf(dir, sizeof dir, "%d", f);
    fuzz_forward(TMP(dir));
    return 0;
}
