/* The sharded index (II.6, build_checkpoint): the input is model.safetensors.index.json in a scratch
 * folder that holds test/bad/good_sharded's config.json and its two shards model-1.safetensors and
 * model-2.safetensors; the folder is loaded and, when it loads, two tokens run through the model. */

static int fuzz_index(const uint8_t *data, size_t size) {
    fuzz_setup();
    static int ready;
    if (!ready++)
        for (int i = 0; i < 3; i++) {
            const char *name = (const char *[]){"config.json", "model-1.safetensors", "model-2.safetensors"}[i];
            fuzz_copy(REPO(fuzz_path("test/bad/good_sharded", name)), TMP(name));
        }
    fuzz_write(TMP("model.safetensors.index.json"), data, size);
    fuzz_forward(fuzz_tmp);
    return 0;
}
