/* The command line (II.11, gna_main): the input's first byte picks the command (logits, attn, info,
 * tokenize, detokenize); the rest, split at NUL bytes, are its arguments, after "-q -m m", where m is
 * a copy of test/bad/good_llama_tokenizer (the tiny llama with a tokenizer.json) in a scratch folder
 * that gna_main runs in. Inputs with an argument holding '/' are skipped, so that every file gna
 * writes (-o, --svg) lands in the scratch folder, which is emptied after each run (m stays). stdout
 * goes to /dev/null. */

enum { MAX_ARGS = 32 };

static int fuzz_cli(const uint8_t *data, size_t size) {
    static const char *const commands[] = {"logits", "attn", "info", "tokenize", "detokenize"};
    static int home = -1;
    fuzz_setup();
    if (home < 0) {
        home = open(".", O_RDONLY | O_DIRECTORY);
        fuzz_mkdir(TMP("m"));
        for (int i = 0; i < 3; i++) {
            const char *name = (const char *[]){"config.json", "model.safetensors", "tokenizer.json"}[i];
            fuzz_copy(REPO(fuzz_path("test/bad/good_llama_tokenizer", name)), TMP(fuzz_path("m", name)));
        }
        dup2(open("/dev/null", O_WRONLY), 1);
    }
    if (size < 1 || memchr(data, '/', size)) return 0;
    char *text = checked_strndup((const char *)data + 1, size - 1);
    char *argv[MAX_ARGS + 6] = {"gna", (char *)commands[data[0] % 5], "-q", "-m", "m"};
    int argc = 5;
    for (char *at = text; argc < MAX_ARGS && at < text + size - 1; at += strlen(at) + 1) argv[argc++] = at;
    argv[argc] = NULL;
    if (chdir(fuzz_tmp) != 0) abort();
    gna_main(argc, argv);
    fflush(stdout);
    DIR *dir = opendir(".");
    for (struct dirent *e; (e = readdir(dir));)
        if (strcmp(e->d_name, "m") && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(e->d_name);
    closedir(dir);
    if (fchdir(home) != 0) abort();
    free(text);
    return 0;
}
