/* fuzz.h - what the libFuzzer harnesses share: paths into the repository (found from __FILE__, so a
 * harness runs from any folder when run.sh compiles it by its absolute path), a scratch folder under
 * /tmp made by mkdtemp and removed at exit, small file helpers, a reader of the input's bytes for the
 * generators, and a forward pass of two tokens on a loaded model folder. fuzz.c includes gna.c, this
 * file and every harness, so that one compile of gna.c serves them all. */
#include <dirent.h>

typedef struct { const uint8_t *data; size_t size, at; } Reader;
static unsigned next(Reader *r) { return r->at < r->size ? r->data[r->at++] : 0; }

static char fuzz_repo[4096]; /* the repository root */
static char fuzz_tmp[256];   /* this process's scratch folder */

/* remove a folder's files and subfolders (its own too unless keep_self), not following links */
static void fuzz_empty(const char *path, int keep_self) {
    DIR *dir = opendir(path);
    struct stat st;
    char child[4096];
    for (struct dirent *e; dir && (e = readdir(dir));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) fuzz_empty(child, 0);
        else unlink(child);
    }
    if (dir) closedir(dir);
    if (!keep_self) rmdir(path);
}
static void fuzz_cleanup(void) { if (fuzz_tmp[0]) fuzz_empty(fuzz_tmp, 0); }

/* sets fuzz_repo and makes fuzz_tmp, once */
static void fuzz_setup(void) {
    if (fuzz_tmp[0]) return;
    snprintf(fuzz_repo, sizeof fuzz_repo, "%s", __FILE__); /* <root>/test/fuzz/fuzz.h */
    for (int i = 0; i < 3; i++) {
        char *slash = strrchr(fuzz_repo, '/');
        if (slash) *slash = 0;
        else strcpy(fuzz_repo, ".");
    }
    if (getenv("GNA_FUZZ_REPO")) snprintf(fuzz_repo, sizeof fuzz_repo, "%s", getenv("GNA_FUZZ_REPO")); /* a binary moved elsewhere */
    /* under $GNA_FUZZ_TMP when run.sh gives one (it removes it, with what killed processes left) */
    const char *parent = getenv("GNA_FUZZ_TMP");
    if (!parent || (strncmp(parent, "/tmp/", 5) != 0 && strncmp(parent, "/dev/shm/", 9) != 0) || strlen(parent) > 200) parent = "/tmp";
    snprintf(fuzz_tmp, sizeof fuzz_tmp, "%s/gna-fuzz-XXXXXX", parent);
    if (!mkdtemp(fuzz_tmp)) { perror("mkdtemp"); abort(); }
    atexit(fuzz_cleanup);
}

/* a path under the repository or the scratch folder, in one of a few rotating static buffers */
static const char *fuzz_path(const char *base, const char *name) {
    static char buffers[8][4096];
    static int next;
    char *b = buffers[next++ % 8];
    snprintf(b, 4096, "%s/%s", base, name);
    return b;
}
#define REPO(name) fuzz_path(fuzz_repo, name)
#define TMP(name) fuzz_path(fuzz_tmp, name)

static void fuzz_write(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) { perror(path); abort(); }
}

static void fuzz_copy(const char *from, const char *to) {
    char *text;
    size_t size;
    if (read_file(from, &text, &size) != GNA_OK) { fprintf(stderr, "%s\n", gna_error()); abort(); }
    fuzz_write(to, text, size);
    free(text);
}

static void fuzz_mkdir(const char *path) { if (mkdir(path, 0700) != 0 && errno != EEXIST) { perror(path); abort(); } }

/* load a model folder and, if it loads, run tokens 0 and V-1 through it on one thread */
static void fuzz_forward(const char *dir) {
    gna_model *m;
    gna_run *run;
    gna_cache *cache;
    const char *options[] = {"--threads", "1"};
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL; /* say why a model did not load, or that it ran */
    if (gna_load(dir, &m) != GNA_OK) {
        if (verbose) fprintf(stderr, "not loaded: %s\n", gna_error());
        return;
    }
    if (verbose) fprintf(stderr, "loaded: %s\n", dir);
    if (gna_run_new(m, 2, options, &run) == GNA_OK) {
        if (gna_cache_new(run, 2, &cache) == GNA_OK) {
            int V = gna_vocab_size(m), tokens[2] = {0, V - 1};
            float *logits = malloc(sizeof(float) * 2 * (size_t)V);
            gna_forward(run, cache, tokens, 2, logits);
            free(logits);
            gna_cache_free(cache);
        }
        gna_run_free(run);
    }
    gna_free(m);
}
