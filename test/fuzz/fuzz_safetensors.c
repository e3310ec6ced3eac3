/* Safetensors header and data (II.6) through the model loader (II.7): the input is model.safetensors
 * in a scratch folder beside the fixed config.json of the tiny llama test/bad/good_llama; gna_load
 * reads it and, when it loads, two tokens run through the model. */

static int fuzz_safetensors(const uint8_t *data, size_t size) {
    fuzz_setup();
    static int ready;
    if (!ready++) fuzz_copy(REPO("test/bad/good_llama/config.json"), TMP("config.json"));
    fuzz_write(TMP("model.safetensors"), data, size);
    fuzz_forward(fuzz_tmp);
    return 0;
}
