/* gna merge (II.11, command_merge): the input, split at NUL bytes, is up to four shard logs, written
 * to scratch files and merged, with the results also written as JSON into the scratch folder. stdout
 * (the results table) goes to /dev/null. */

static int fuzz_merge(const uint8_t *data, size_t size) {
    static int quiet;
    fuzz_setup();
    if (!quiet++) dup2(open("/dev/null", O_WRONLY), 1);
    char *logs[4], name[32];
    int n = 0;
    for (size_t at = 0; n < 4 && (at < size || n == 0); n++) {
        const uint8_t *nul = memchr(data + at, 0, size - at);
        size_t length = nul ? (size_t)(nul - (data + at)) : size - at;
        snprintf(name, sizeof name, "shard%d.jsonl", n);
        logs[n] = checked_strdup(TMP(name));
        fuzz_write(logs[n], data + at, length);
        at += length + 1;
    }
    command_merge(n, logs, TMP("results.json"));
    fflush(stdout);
    for (int i = 0; i < n; i++) free(logs[i]);
    return 0;
}
