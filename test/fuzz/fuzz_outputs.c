/* Output paths (II.9, check_outputs, open_output, close_output; issue 32): the input picks what already
 * stands at an output's name in a scratch folder - nothing, a regular file, a folder, a link to a
 * regular file, a link to a folder, a link to nothing - which option writes there (-o, --svg, --json,
 * --log, merge's --json), and whether the output is also the log or an input. After gna_main, whatever
 * it said: what stood there is still of its kind, a regular file is either untouched or replaced whole,
 * the inputs are untouched, and no temporary is left behind. */
static void fuzz_outputs_sample(const char *path, char kind, const char *text) {
    if (kind == 'f') fuzz_write(path, text, strlen(text));
    else if (kind == 'd') fuzz_mkdir(path);
    else if (kind == 'l' || kind == 'L' || kind == 'n') {
        if (kind == 'l') fuzz_write(TMP("target"), text, strlen(text));
        if (kind == 'L') fuzz_mkdir(TMP("target"));
        if (symlink(TMP(kind == 'n' ? "nothing" : "target"), path) != 0) abort();
    }
}

static int fuzz_outputs(const uint8_t *data, size_t size) {
    static const char kinds[] = "-fdlLn", *const options[] = {"-o", "--svg", "--json", "--log", "--json"};
    static int home = -1;
    fuzz_setup();
    if (home < 0) {
        home = open(".", O_RDONLY | O_DIRECTORY);
        dup2(open("/dev/null", O_WRONLY), 1);
    }
    Reader r = {data, size, 0};
    char kind = kinds[next(&r) % 6];
    int option = (int)(next(&r) % 5), same = (int)(next(&r) % 3); /* same 1: the output is the log; 2: the model's config */
    if (chdir(fuzz_tmp) != 0) abort();
    fuzz_empty(".", 1);
    fuzz_mkdir("m");
    for (int i = 0; i < 3; i++) {
        const char *name = (const char *[]){"config.json", "model.safetensors", "tokenizer.json"}[i];
        fuzz_copy(REPO(fuzz_path("test/bad/good_llama_tokenizer", name)), fuzz_path("m", name));
    }
    char *config_before, *config_after;
    size_t config_size, after_size;
    read_file("m/config.json", &config_before, &config_size);
    const char *out = same == 2 ? "m/config.json" : "out";
    if (same != 2) fuzz_outputs_sample("out", kind, "what was there\n");
    char *argv[16] = {"gna", "kv", "-q", "-m", "m", "--keys", "keys", "--pairs", "2", "--samples", "1"};
    int argc = 11;
    fuzz_write("keys", "hello\nhi\nhe\nho\n", 15);
    if (option == 0) argv[1] = "logits", argv[5] = "--tokens", argv[6] = "1,2", argc = 7;
    if (option == 4) { /* merge A --json A, or --json over something else */
        fuzz_write("a.jsonl", "x\n", 2);
        argv[1] = "merge", argv[2] = "a.jsonl", argc = 3, out = same == 1 ? "a.jsonl" : out;
    }
    argv[argc++] = (char *)options[option];
    argv[argc++] = (char *)out;
    if (same == 1 && option != 3 && option != 4) argv[argc++] = "--log", argv[argc++] = (char *)out;
    argv[argc] = NULL;
    struct stat before, after;
    int existed = lstat(out, &before) == 0;
    gna_main(argc, argv);
    fflush(stdout);
    int exists = lstat(out, &after) == 0;
    if (existed && (!exists || (before.st_mode & S_IFMT) != (after.st_mode & S_IFMT))) abort(); /* a link stays a link */
    if (kind == 'L' && same != 2 && (stat("target", &after) != 0 || !S_ISDIR(after.st_mode))) abort();
    read_file("m/config.json", &config_after, &after_size);
    if (after_size != config_size || memcmp(config_before, config_after, config_size) != 0) abort(); /* an input written over */
    free(config_before), free(config_after);
    DIR *dir = opendir(".");
    for (struct dirent *e; (e = readdir(dir));)
        if (strstr(e->d_name, ".gna-")) abort(); /* a temporary left behind */
    closedir(dir);
    if (fchdir(home) != 0) abort();
    return 0;
}
