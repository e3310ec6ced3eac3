/* gna_bench.c - the timing behind `make bench`, through gna.h alone:
 *
 *   gna_bench DIR T N_DECODE THREADS [RUN OPTIONS...]
 *   gna_bench bandwidth THREADS
 *
 * A prefill of T random tokens in one chunk, with logits at every position (the best of 3; the first
 * also pages the weights in), then N_DECODE one-token steps from its cache (the best of 2). RUN
 * OPTIONS are gna's own (--bf16, --reference, ...). `bandwidth`: the machine's read bandwidth, THREADS
 * threads summing their slices of 2 GiB (far beyond any cache), the best of 5: what a decode step,
 * which reads every weight once, cannot beat. Prints one line of `key value` pairs; nothing here
 * checks a speed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __unix__
#include <pthread.h>
#endif

#include "../gna.h"

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    const uint64_t *data;
    size_t n;
    uint64_t sum;
} Slice;

/* integer sums: the compiler may vectorise them (a float sum it must keep in order), so the loads, not
 * the adds, are the limit */
static void *sum_slice(void *arg) {
    Slice *s = arg;
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n; i++) sum += s->data[i];
    s->sum = sum;
    return NULL;
}

static int bandwidth(int threads) {
    size_t n = (size_t)1 << 28; /* 2 GiB */
    uint64_t *data = malloc(n * sizeof(uint64_t)), sum = 0;
    double best = 1e30;
    if (!data || threads < 1 || threads > 1024) return 1;
    for (size_t i = 0; i < n; i++) data[i] = i & 7;
    for (int repeat = 0; repeat < 5; repeat++) {
        Slice slices[1024];
        double start = seconds_now();
        for (int k = 0; k < threads; k++) slices[k] = (Slice){data + n / (size_t)threads * (size_t)k, n / (size_t)threads, 0};
#ifdef __unix__
        pthread_t ids[1024];
        for (int k = 1; k < threads; k++) pthread_create(&ids[k], NULL, sum_slice, &slices[k]);
        sum_slice(&slices[0]);
        for (int k = 1; k < threads; k++) pthread_join(ids[k], NULL);
#else
        for (int k = 0; k < threads; k++) sum_slice(&slices[k]);
#endif
        if (seconds_now() - start < best) best = seconds_now() - start;
        for (int k = 0; k < threads; k++) sum += slices[k].sum;
    }
    printf("read_gbps %.1f threads %d checksum %llu\n", (double)(n * sizeof(uint64_t)) / best / 1e9, threads, (unsigned long long)sum);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "bandwidth") == 0) return bandwidth(atoi(argv[2]));
    if (argc < 5) {
        fprintf(stderr, "usage: gna_bench DIR T N_DECODE THREADS [RUN OPTIONS...] | gna_bench bandwidth THREADS\n");
        return 2;
    }
    int T = atoi(argv[2]), n_decode = atoi(argv[3]);
    const char *options[16] = {"--threads", argv[4]};
    int n_options = 2;
    for (int i = 5; i < argc && n_options < 16; i++) options[n_options++] = argv[i];
    gna_model *m;
    gna_run *run;
    if (T < 1 || n_decode < 1 || gna_load(argv[1], &m) != GNA_OK || gna_run_new(m, n_options, options, &run) != GNA_OK) {
        fprintf(stderr, "gna_bench: %s\n", gna_error());
        return 1;
    }
    int V = gna_vocab_size(m), *tokens = malloc(sizeof(int) * (size_t)T);
    float *logits = malloc(sizeof(float) * (size_t)T * (size_t)V);
    uint64_t state = 7;
    for (int t = 0; t < T; t++) tokens[t] = (int)((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33) % V;
    gna_cache *cache = NULL;
    double prefill = 1e30, decode = 1e30;
    for (int repeat = 0; repeat < 3; repeat++) {
        gna_cache_free(cache);
        if (gna_cache_new(run, T + 2 * n_decode, &cache) != GNA_OK) return 1;
        double start = seconds_now();
        if (gna_forward(run, cache, tokens, T, logits) != GNA_OK) return 1;
        if (seconds_now() - start < prefill) prefill = seconds_now() - start;
    }
    for (int repeat = 0; repeat < 2; repeat++) {
        double start = seconds_now();
        for (int i = 0; i < n_decode; i++)
            if (gna_forward(run, cache, &tokens[i % T], 1, logits) != GNA_OK) return 1;
        if ((seconds_now() - start) / n_decode < decode) decode = (seconds_now() - start) / n_decode;
    }
    printf("prefill_tps %.2f decode_tps %.3f T %d threads %s\n", T / prefill, 1 / decode, T, argv[4]);
    gna_cache_free(cache);
    gna_run_free(run);
    gna_free(m);
    free(logits);
    free(tokens);
    return 0;
}
