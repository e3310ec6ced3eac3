/* gna_bench.c - measurements behind `make bench`. Includes gna.c, so that it times gna's own kernels
 * and thread pool, and measures the machine with the same SIMD vocabulary.
 *
 *   gna_bench peak THREADS                          FMA peak, GFLOP/s
 *   gna_bench tile THREADS                          the matmul's tile kernel alone on cache-resident data
 *   gna_bench bandwidth THREADS                     memory read bandwidth, GB/s (STREAM-like)
 *   gna_bench matmul T ROWS COLS THREADS [bf16|bf16-vector|--bf16]  gna's matmul, GFLOP/s: F32 weights,
 *                                                   BF16 weights (AMX where the CPU has it), BF16 weights
 *                                                   on the vector tiles, or BF16 weights in --bf16 mode
 *   gna_bench paired T ROWS COLS THREADS ROUNDS    the matmul, as gna runs it and on the vector tiles,
 *                                                   against the FMA peak and the tile kernel timed
 *                                                   just before it, in rounds
 *   gna_bench model DIR T N_DECODE THREADS [--bf16] prefill of T tokens and N_DECODE decode steps
 *
 * Each prints one line of `key value` pairs; nothing here checks a speed.
 */
#define GNA_NO_MAIN
#include "../gna.c"

/* the best of `repeats` runs, in seconds */
#define BEST_OF(repeats, seconds, statement)                                                       \
    do {                                                                                           \
        seconds = 1e30;                                                                            \
        for (int repeat_ = 0; repeat_ < (repeats); repeat_++) {                                    \
            double start_ = seconds_now();                                                         \
            statement;                                                                             \
            double elapsed_ = seconds_now() - start_;                                              \
            if (elapsed_ < seconds) seconds = elapsed_;                                            \
        }                                                                                          \
    } while (0)

/* -- FMA peak: per thread, independent chains of vector FMAs, more of them than the FMA units
 * need to hide their latency (2 units x 5 cycles on current x86, fewer elsewhere) */
enum { PEAK_CHAINS = 12, PEAK_STEPS = 20 * 1000 * 1000 };
static volatile float peak_sink;

static void peak_fma(void *context, int begin, int end) {
    (void)context;
    for (int job = begin; job < end; job++) {
#if GNA_VECTORS
        Vec acc[PEAK_CHAINS], a = vec_set1(0.999999f), b = vec_set1(1e-7f);
        UNROLL for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = vec_set1((float)c);
        for (int s = 0; s < PEAK_STEPS; s++)
            UNROLL for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = vec_fma(acc[c], a, b);
        float sum = 0;
        for (int c = 0; c < PEAK_CHAINS; c++) sum += vec_sum(acc[c]);
#else
        float acc[PEAK_CHAINS], sum = 0;
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = (float)c;
        for (int s = 0; s < PEAK_STEPS; s++)
            for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = acc[c] * 0.999999f + 1e-7f;
        for (int c = 0; c < PEAK_CHAINS; c++) sum += acc[c];
#endif
        peak_sink = sum;
    }
}

/* the multiply-adds (x 2) of one parallel_for(threads, peak_fma, NULL) */
static double peak_fma_flops(int threads) {
#if GNA_VECTORS
    int lanes = VEC;
#else
    int lanes = 1;
#endif
    return 2.0 * PEAK_CHAINS * (double)PEAK_STEPS * lanes * threads;
}

static int command_peak(int threads) {
    gna_set_threads(threads);
    double seconds;
    BEST_OF(3, seconds, parallel_for(threads, peak_fma, NULL));
    printf("peak_gflops %.1f threads %d simd %s\n", peak_fma_flops(threads) / seconds / 1e9, threads, GNA_SIMD);
    return 0;
}

/* -- The matmul's own tile kernel, alone: each thread runs matmul_tile over one block of PANELS panels
 * (DEPTH x TILE_ROWS) and TILE_TOKENS input rows, as the matmul lays them out, kept in L1/L2 by reuse.
 * What the kernel reaches when its data is near; the full matmul's gap to this is the memory
 * hierarchy's (and, on a shared machine, the neighbours'), its gap from this to the FMA peak the kernel's. */
#if GNA_VECTORS
enum { TILE_SWEEPS = 2000 };

static void tile_alone(void *context, int begin, int end) {
    (void)context;
    for (int job = begin; job < end; job++) {
        size_t panel_floats = (size_t)DEPTH * TILE_ROWS, in_stride = 2048;
        float *panels = checked_aligned_malloc(sizeof(float) * PANELS * panel_floats);
        float *in = checked_aligned_malloc(sizeof(float) * TILE_TOKENS * in_stride);
        float *c = checked_aligned_malloc(sizeof(float) * TILE_TOKENS * TILE_ROWS);
        for (size_t i = 0; i < PANELS * panel_floats; i++) panels[i] = 1e-3f * (float)(i % 7);
        for (size_t i = 0; i < TILE_TOKENS * in_stride; i++) in[i] = 1e-3f * (float)(i % 5);
        const float *in_rows[TILE_TOKENS];
        for (int i = 0; i < TILE_TOKENS; i++) in_rows[i] = in + (size_t)i * in_stride;
        for (int sweep = 0; sweep < TILE_SWEEPS; sweep++)
            for (int p = 0; p < PANELS; p++) matmul_tile(in_rows, panels + (size_t)p * panel_floats, DEPTH, c, TILE_ROWS, sweep == 0);
        peak_sink = c[0];
        free(c);
        free(in);
        free(panels);
    }
}

/* the multiply-adds (x 2) of one parallel_for(threads, tile_alone, NULL) */
static double tile_alone_flops(int threads) { return 2.0 * TILE_SWEEPS * PANELS * (double)DEPTH * TILE_TOKENS * TILE_ROWS * threads; }
#endif

static int command_tile(int threads) {
#if GNA_VECTORS
    gna_set_threads(threads);
    double seconds;
    BEST_OF(3, seconds, parallel_for(threads, tile_alone, NULL));
    printf("tile_gflops %.1f threads %d simd %s\n", tile_alone_flops(threads) / seconds / 1e9, threads, GNA_SIMD);
    return 0;
#else
    (void)threads;
    fprintf(stderr, "gna_bench: tile: a SIMD build only (the scalar matmul has no tiles)\n");
    return 2;
#endif
}

/* -- Read bandwidth: sum a buffer far larger than the caches, each thread its own part, read as
 * READ_STREAMS sequential streams at once (one stream per core reached about 0.8 of what decode's
 * matrix-vector product, which reads several weight rows at once, streams here: the prefetchers keep
 * more lines in flight for more streams) */
enum { READ_STREAMS = 8 };
typedef struct {
    const float *data;
    size_t n;
    float sums[64];
    int threads;
} ReadTask;

static void read_parts(void *context, int begin, int end) {
    ReadTask *r = context;
    for (int part = begin; part < end; part++) {
        size_t from = r->n * (size_t)part / (size_t)r->threads, to = r->n * (size_t)(part + 1) / (size_t)r->threads;
#if GNA_VECTORS
        Vec sums[READ_STREAMS];
        for (int j = 0; j < READ_STREAMS; j++) sums[j] = vec_set1(0);
        size_t stream_n = (to - from) / READ_STREAMS / VEC * VEC; /* floats per stream */
        const float *part_data = r->data + from;
        for (size_t i = 0; i < stream_n; i += VEC)
            UNROLL for (int j = 0; j < READ_STREAMS; j++) sums[j] = vec_add(sums[j], vec_load(part_data + (size_t)j * stream_n + i));
        for (int j = 1; j < READ_STREAMS; j++) sums[0] = vec_add(sums[0], sums[j]);
        float sum = vec_sum(sums[0]);
        for (size_t i = from + READ_STREAMS * stream_n; i < to; i++) sum += r->data[i];
#else
        float sum = dot(r->data + from, r->data + from, (int)(to - from));
#endif
        r->sums[part] = sum;
    }
}

static int command_bandwidth(int threads) {
    size_t bytes = (size_t)1 << 30; /* 1 GiB: far past any cache */
    float *data = checked_malloc(bytes);
    for (size_t i = 0; i < bytes / 4; i++) data[i] = (float)(i & 1023);
    gna_set_threads(threads);
    ReadTask task = {data, bytes / 4, {0}, threads};
    double seconds;
    BEST_OF(5, seconds, parallel_for(threads, read_parts, &task));
    printf("read_gbps %.1f threads %d\n", (double)bytes / seconds / 1e9, threads);
    free(data);
    return 0;
}

/* -- gna's matmul on a random weight of the given shape */
typedef struct {
    void *weights; /* [rows][cols], bf16 or f32 */
    float *in;     /* [T][cols] */
    float *out;    /* [T][rows] */
    Weight weight;
} MatmulBench;

static MatmulBench build_matmul_bench(int T, int rows, int cols, int bf16_weights) {
    MatmulBench b;
    size_t n = (size_t)rows * (size_t)cols;
    b.weights = checked_malloc(n * (bf16_weights ? 2 : 4));
    uint64_t state = 1;
    for (size_t i = 0; i < n; i++) {
        float v = (float)((int)(random_next(&state) >> 40) - (1 << 23)) / (float)(1 << 23) * 0.05f;
        if (bf16_weights) {
            float rounded = round_to_bf16(v);
            uint32_t bits;
            memcpy(&bits, &rounded, 4);
            ((uint16_t *)b.weights)[i] = (uint16_t)(bits >> 16);
        } else {
            ((float *)b.weights)[i] = v;
        }
    }
    b.in = checked_malloc(sizeof(float) * (size_t)T * (size_t)cols);
    b.out = checked_malloc(sizeof(float) * (size_t)T * (size_t)rows);
    for (size_t i = 0; i < (size_t)T * (size_t)cols; i++) b.in[i] = (float)((int)(random_next(&state) >> 40) - (1 << 23)) / (float)(1 << 23);
    b.weight = (Weight){b.weights, bf16_weights ? DTYPE_BF16 : DTYPE_F32, rows, cols};
    return b;
}

static void free_matmul_bench(MatmulBench *b) {
    free(b->weights);
    free(b->in);
    free(b->out);
}

static int command_matmul(int T, int rows, int cols, int threads, int bf16_weights) {
    MatmulBench b = build_matmul_bench(T, rows, cols, bf16_weights);
    gna_set_threads(threads);
    double seconds;
    BEST_OF(5, seconds, matmul(b.out, b.in, T, b.weight, no_weight));
    printf("matmul_gflops %.1f T %d rows %d cols %d threads %d weights %s bf16_compute %d seconds %.5f\n",
           2.0 * T * rows * (double)cols / seconds / 1e9, T, rows, cols, threads, bf16_weights ? "bf16" : "f32", bf16_compute, seconds);
    free_matmul_bench(&b);
    return 0;
}

/* -- The matmul (bf16 weights, float32 compute) against the FMA peak and its tile kernel alone, in
 * ROUNDS rounds run back to back in one process. The machine's speed moves within seconds, so each
 * round times the peak loop, then the tile kernel, then the matmul on the vector tiles, then the
 * matmul as gna runs it (AMX where the CPU has it), and compares each matmul with the ceilings timed
 * a moment before it. The medians of the rounds' ratios are nearly free of the machine's drift: of
 * the peak, what the matmul reaches; of the tile kernel, what the vector tiles lose around their
 * kernel (packing, edge tiles, data from farther caches). */
#if GNA_VECTORS
static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `name`_median, _q1 and _q3 of n ratios, sorted in place */
static void print_quartiles(const char *name, double *ratios, int n) {
    qsort(ratios, (size_t)n, sizeof(double), compare_doubles);
    printf("%s_median %.3f %s_q1 %.3f %s_q3 %.3f ", name, ratios[n / 2], name, ratios[n / 4], name, ratios[3 * n / 4]);
}
#endif

static int command_paired(int T, int rows, int cols, int threads, int rounds) {
#if GNA_VECTORS
    MatmulBench b = build_matmul_bench(T, rows, cols, 1);
    gna_set_threads(threads);
    matmul(b.out, b.in, T, b.weight, no_weight); /* the first run pages everything in */
    double flops = 2.0 * T * rows * (double)cols;
    double *ratios = checked_malloc(sizeof(double) * 3 * (size_t)rounds); /* [3][rounds]: see the names below */
    for (int i = 0; i < rounds; i++) {
        double at[5]; /* seconds_now() before and after each of the four */
        at[0] = seconds_now();
        parallel_for(threads, peak_fma, NULL);
        at[1] = seconds_now();
        parallel_for(threads, tile_alone, NULL);
        at[2] = seconds_now();
#if GNA_AMX
        amx_enabled = 0; /* the vector tiles */
#endif
        matmul(b.out, b.in, T, b.weight, no_weight);
        at[3] = seconds_now();
#if GNA_AMX
        amx_enabled = 1; /* as gna runs it */
#endif
        matmul(b.out, b.in, T, b.weight, no_weight);
        at[4] = seconds_now();
        double peak = peak_fma_flops(threads) / (at[1] - at[0]), tile = tile_alone_flops(threads) / (at[2] - at[1]);
        double vector_tiles = flops / (at[3] - at[2]), as_run = flops / (at[4] - at[3]);
        ratios[i] = as_run / peak;
        ratios[rounds + i] = vector_tiles / peak;
        ratios[2 * rounds + i] = vector_tiles / tile;
    }
    print_quartiles("run_of_peak", ratios, rounds);
    print_quartiles("vector_of_peak", ratios + rounds, rounds);
    print_quartiles("vector_of_tile", ratios + 2 * rounds, rounds);
    printf("rounds %d T %d rows %d cols %d threads %d\n", rounds, T, rows, cols, threads);
    free(ratios);
    free_matmul_bench(&b);
    return 0;
#else
    (void)T, (void)rows, (void)cols, (void)threads, (void)rounds;
    fprintf(stderr, "gna_bench: paired: a SIMD build only (the scalar matmul has no tiles)\n");
    return 2;
#endif
}

/* -- A model: prefill T tokens (one chunk, logits at every position, as `gna logits` runs), then
 * N_DECODE one-token steps; decode streams every weight once per token. */
static int command_model(const char *dir, int T, int n_decode, int threads) {
    Model *m;
    if (gna_load(dir, &m) != GNA_OK) {
        fprintf(stderr, "gna_bench: %s\n", gna_error());
        return 1;
    }
    gna_set_threads(threads);
    int V = m->config.vocab_size;
    int *tokens = checked_malloc(sizeof(int) * (size_t)T);
    uint64_t state = 7;
    for (int t = 0; t < T; t++) tokens[t] = (int)(random_next(&state) % (uint64_t)V);
    float *logits = checked_malloc(sizeof(float) * (size_t)T * (size_t)V);
    Cache *cache = NULL;
    double prefill = 1e30, decode = 1e30;
    for (int repeat = 0; repeat < 3; repeat++) { /* the first run also pages the weights in */
        gna_cache_free(cache);
        if (gna_cache_new(m, T + n_decode, &cache) != GNA_OK) return 1;
        double start = seconds_now();
        if (gna_forward(m, cache, tokens, T, logits) != GNA_OK) return 1;
        double elapsed = seconds_now() - start;
        if (elapsed < prefill) prefill = elapsed;
    }
    for (int repeat = 0; repeat < 2; repeat++) {
        double start = seconds_now();
        for (int i = 0; i < n_decode; i++) {
            int next = tokens[i % T];
            if (gna_forward(m, cache, &next, 1, logits) != GNA_OK) return 1;
        }
        double elapsed = (seconds_now() - start) / n_decode;
        if (elapsed < decode) decode = elapsed;
        cache->n_tokens -= n_decode; /* decode the same positions again */
    }
    /* bytes a decode step reads: every weight once (a tied lm_head is the embedding matrix) */
    double bytes = 0;
    for (int i = 0; i < m->checkpoint.n_tensors; i++) bytes += (double)(m->checkpoint.tensors[i].offset_end - m->checkpoint.tensors[i].offset_begin);
    if (!m->config.tie_embeddings) bytes -= (double)m->embeddings.rows * m->embeddings.cols * (m->embeddings.dtype == DTYPE_F32 ? 4 : 2);
    printf("prefill_tps %.2f decode_tps %.3f decode_gbps %.2f T %d threads %d bf16 %d simd %s\n", T / prefill, 1 / decode,
           bytes / decode / 1e9, T, threads, bf16_compute, GNA_SIMD);
    gna_cache_free(cache);
    free(logits);
    free(tokens);
    gna_free(m);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "peak") == 0) return command_peak(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "bandwidth") == 0) return command_bandwidth(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "tile") == 0) return command_tile(atoi(argv[2]));
    const char *weights = argc == 7 ? argv[6] : "f32";
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "matmul") == 0 &&
        (!strcmp(weights, "f32") || !strcmp(weights, "bf16") || !strcmp(weights, "bf16-vector") || !strcmp(weights, "--bf16"))) {
        gna_set_bf16(strcmp(weights, "--bf16") == 0);
#if GNA_AMX
        amx_enabled = strcmp(weights, "bf16-vector") != 0;
#endif
        return command_matmul(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), strcmp(weights, "f32") != 0);
    }
    if (argc == 7 && strcmp(argv[1], "paired") == 0 && atoi(argv[6]) > 0)
        return command_paired(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "model") == 0) {
        if (argc == 7) gna_set_bf16(strcmp(argv[6], "--bf16") == 0);
        return command_model(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    }
    fprintf(stderr, "usage: gna_bench peak THREADS | tile THREADS | bandwidth THREADS | matmul T ROWS COLS THREADS [bf16|bf16-vector|--bf16] |\n"
                    "                 paired T ROWS COLS THREADS ROUNDS | model DIR T N_DECODE THREADS [--bf16]\n");
    return 2;
}
