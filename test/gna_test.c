/* gna_test.c - gna's C tests. Includes gna.c itself, so the tests reach its internals.
 *
 *   gna_test unit TMPDIR              unit tests: JSON, number formats, RoPE, safetensors, .npy, tokenizer
 *   gna_test compare REF.npy OUT.npy  OUT within the fidelity tolerance of REF (float32 or float64 .npy)
 *   gna_test compare REF.npy OUT.npy --bf16 DIR   the same for a --bf16 run of the model in DIR
 *   gna_test chunks DIR               one chunk = several chunks = token by token, with Part II's kernels and
 *                                     with Part I's (--reference); any thread count, the same bits
 *   gna_test pair DIR DIR             two models loaded at once run as they do alone
 *   gna_test properties DIR LAYER     ablating all heads = no mixer output; a last-row mask changes the
 *                                     last row only; SSM rows from the materialised form = the scan
 *   gna_test tokenizer JSON EXPECTED  the tokenizer's ids and texts equal Hugging Face tokenizers' (EXPECTED:
 *                                     a .jsonl made by weights_tools/fixtures/make_tokenizer_fixtures.py)
 *   gna_test harness EXPECTED LOG     a harness log line by line against the reference's (prompts, scores)
 *   gna_test results EXPECTED GOT     results JSON against the reference's lm-eval aggregation
 *   gna_test heads EXPECTED GOT       gna heads --json against the reference's scores and ablations
 *   gna_test reuse TMPDIR ARGS...     gna ARGS with and without --no-reuse: the same log, as `harness` compares
 *   gna_test tasks FILTERS RANDOM     gsm8k's filters and exact match, and Python's random.sample, as Python has them
 *   gna_test api DIR TMPDIR           gna.h's argument checks: NULLs, negative counts, a cache of another run,
 *                                     a busy run, a model freed before its runs, a log two threads share
 *
 * Each check prints "ok <name>" or "FAIL <name>: <detail>"; test/run_tests.sh counts them. Exit
 * status: 0 when every check passed.
 */
#define GNA_NO_MAIN
#include "../gna.c"

static int n_failed = 0;

static void check(int ok, const char *name, const char *format, ...) {
    if (ok) {
        printf("ok   %s\n", name);
        return;
    }
    n_failed++;
    char detail[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    printf("FAIL %s: %s\n", name, detail);
}

/* ---- .npy reading (gna only writes them; the tests read both float32 and float64) */
typedef struct {
    int ndim;
    int64_t shape[4];
    size_t count;
    double *values;
} Array;

static int read_npy(const char *path, Array *a) {
    char *text;
    size_t size;
    memset(a, 0, sizeof *a);
    if (read_file(path, &text, &size) != GNA_OK) return 0;
    const unsigned char *b = (const unsigned char *)text;
    if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0 || b[6] != 1) { free(text); return 0; }
    size_t header_length = (size_t)b[8] | (size_t)b[9] << 8;
    if (10 + header_length > size) { free(text); return 0; }
    char header[512];
    if (header_length >= sizeof header) { free(text); return 0; }
    memcpy(header, text + 10, header_length);
    header[header_length] = 0;
    int is_f8 = strstr(header, "'descr': '<f8'") != NULL, is_f4 = strstr(header, "'descr': '<f4'") != NULL;
    const char *shape = strstr(header, "'shape': (");
    if ((!is_f8 && !is_f4) || !strstr(header, "'fortran_order': False") || !shape) { free(text); return 0; }
    shape += strlen("'shape': (");
    a->count = 1;
    while (*shape && *shape != ')') {
        char *end;
        long long d = strtoll(shape, &end, 10);
        if (end == shape) break;
        a->shape[a->ndim++] = d;
        a->count *= (size_t)d;
        shape = end;
        while (*shape == ',' || *shape == ' ') shape++;
    }
    size_t element = is_f8 ? 8 : 4;
    if (10 + header_length + a->count * element != size) { free(text); return 0; }
    a->values = checked_malloc(sizeof(double) * (a->count ? a->count : 1));
    const char *data = text + 10 + header_length;
    for (size_t i = 0; i < a->count; i++) { /* little-endian ('<'), whatever the host's byte order */
        const unsigned char *e = (const unsigned char *)data + element * i;
        uint64_t bits = 0;
        for (size_t j = element; j-- > 0;) bits = bits << 8 | e[j];
        if (is_f8) memcpy(&a->values[i], &bits, 8);
        else {
            uint32_t bits32 = (uint32_t)bits;
            float f;
            memcpy(&f, &bits32, 4);
            a->values[i] = f;
        }
    }
    free(text);
    return 1;
}

/* The fidelity rule (DEVELOPERS.md): max |out - ref| <= 1e-4 * max(1, max |ref|), and the same argmax
 * in every row unless the reference's two best are closer than that tolerance (a true near-tie). */
static double relative_tolerance = 1e-4; /* the fidelity rule's; bf16_relative_tolerance() for --bf16 runs */

static int compare_logits(const double *ref, const double *out, int rows, int cols, char *detail, size_t detail_size) {
    double max_ref = 0, max_diff = 0;
    size_t worst = 0;
    for (size_t i = 0; i < (size_t)rows * (size_t)cols; i++) {
        max_ref = fmax(max_ref, fabs(ref[i]));
        double d = fabs(ref[i] - out[i]);
        if (!(d <= max_diff)) { max_diff = d; worst = i; } /* NaN counts as worst */
    }
    double tolerance = relative_tolerance * fmax(1.0, max_ref);
    int argmax_mismatch = -1;
    for (int r = 0; r < rows && argmax_mismatch < 0; r++) {
        const double *a = ref + (size_t)r * (size_t)cols, *b = out + (size_t)r * (size_t)cols;
        int best_ref = 0, best_out = 0;
        for (int c = 1; c < cols; c++) {
            if (a[c] > a[best_ref]) best_ref = c;
            if (b[c] > b[best_out]) best_out = c;
        }
        if (best_ref != best_out && a[best_ref] - a[best_out] > tolerance) argmax_mismatch = r;
    }
    int ok = max_diff <= tolerance && argmax_mismatch < 0;
    snprintf(detail, detail_size, "max |diff| %.3g (tolerance %.3g, at row %zu col %zu: ref %.6f got %.6f)%s",
             max_diff, tolerance, worst / (size_t)cols, worst % (size_t)cols, ref[worst], out[worst],
             argmax_mismatch >= 0 ? ", argmax differs" : "");
    return ok;
}

/* The tolerance of a --bf16 run against the float64 reference, relative to max(1, max |logit|):
 *
 *     2 u M,    u = 2^-8, M = the number of matmuls in the model
 *
 * Why: bfloat16 keeps 8 significant bits, so rounding to nearest changes a number by a relative
 * u = 2^-8 at most. A matmul in --bf16 mode rounds both of its inputs, so each product x_k w_k is
 * off by at most 2u of itself (the products and float32 sums add nothing comparable: 2^-24). To
 * first order, and with each block's gain taken as 1 (every mixer and MLP reads an RMS-normalised
 * input), the relative errors of M matmuls add up to at most 2uM. M counts every matmul, since
 * parallel ones (q, k, v; gate, up) each add their own error: 7 per Llama layer (q, k, v, o, gate,
 * up, down), 4 per Mamba-1 layer (in, x, dt, out), 2 per Mamba-2 layer (in, out), 5 per Llamba
 * layer (in, out, gate, up, down), and the lm_head. The Zamba2 fixtures are not compared: their
 * random weights amplify rounding 20 to 80 times more than the others (transformers' own float32 run
 * is 2.6e-5 to 1.0e-4 from float64 there, under 1.3e-6 elsewhere), so in bfloat16 their logits move
 * by a large part of their range, in the scalar definitions as in the SIMD kernels - noise, not a
 * measure of gna.
 * The fixtures (2 or 3 layers) get 2uM = 0.039 (Mamba-2) to 0.17 (3-layer Llama). Measured with
 * the AVX2 kernels, as a fraction of it: Llama 0.02-0.07, Llamba 0.05-0.13, Mamba-1 0.05-0.35,
 * Mamba-2 0.08-0.47 - the SSM paths pass dt through softplus and exp, whose gains exceed 1, so they
 * use more of it. The usual argmax rule applies with this tolerance. */
static double bf16_relative_tolerance(const char *dir) {
    Model *m;
    if (gna_load(dir, &m) != GNA_OK) return 0;
    const Config *c = &m->config;
    int per_layer = c->family == FAMILY_LLAMA ? 7 : c->family == FAMILY_MAMBA2 ? 2 : c->family == FAMILY_LLAMBA ? 5 : 4;
    double M = (double)c->n_layers * per_layer + 1;
    gna_free(m);
    return 2 * 0x1p-8 * M;
}

static int command_compare(const char *ref_path, const char *out_path) {
    Array ref, out;
    if (!read_npy(ref_path, &ref)) { check(0, out_path, "cannot read %s", ref_path); return 1; }
    if (!read_npy(out_path, &out)) { check(0, out_path, "cannot read it as .npy"); free(ref.values); return 1; }
    /* [..., cols] is compared as rows of cols: logits [T, V], attention maps [heads, rows, T] */
    int same_shape = ref.ndim == out.ndim && ref.ndim >= 2;
    for (int d = 0; same_shape && d < ref.ndim; d++) same_shape = ref.shape[d] == out.shape[d];
    char detail[512] = "shapes differ";
    int cols = same_shape ? (int)ref.shape[ref.ndim - 1] : 1;
    int ok = same_shape && compare_logits(ref.values, out.values, (int)(ref.count / (size_t)cols), cols, detail, sizeof detail);
    printf("     %s\n", detail);
    free(ref.values);
    free(out.values);
    return ok ? 0 : 1;
}

/* ---- one chunk = several chunks = token by token, for every thread count, in both modes */
static gna_run *new_test_run(const Model *m, int reference, int threads, const char *mask) {
    char thread_text[16];
    snprintf(thread_text, sizeof thread_text, "%d", threads);
    const char *options[6] = {"--threads", thread_text};
    int n = 2;
    if (reference) options[n++] = "--reference";
    if (mask) {
        options[n++] = "--mask";
        options[n++] = mask;
    }
    gna_run *run;
    return gna_run_new(m, n, options, &run) == GNA_OK ? run : NULL;
}

static float *run_in_chunks(const Model *m, const int *tokens, int T, const int *chunk_sizes, int threads, int reference) {
    size_t V = m->config.vocab_size;
    gna_run *run = new_test_run(m, reference, threads, NULL);
    gna_cache *cache;
    if (!run || gna_cache_new(run, T, &cache) != GNA_OK) {
        gna_run_free(run);
        return NULL;
    }
    float *logits = checked_malloc(sizeof(float) * (size_t)T * V);
    int done = 0;
    for (int i = 0; done < T; i++) {
        int n = chunk_sizes ? chunk_sizes[i] : 1;
        if (n > T - done) n = T - done;
        if (gna_forward(run, cache, tokens + done, n, logits + (size_t)done * V) != GNA_OK) break;
        done += n;
    }
    gna_cache_free(cache);
    gna_run_free(run);
    if (done != T) { free(logits); return NULL; }
    return logits;
}

/* The fixture's tokens.txt */
static int fixture_tokens(const char *dir, int **tokens, int *T) {
    char *tokens_path = path_join(dir, "tokens.txt"), *text;
    size_t size;
    int ok = read_file(tokens_path, &text, &size) == GNA_OK && parse_tokens(text, tokens, T) == GNA_OK;
    if (ok) free(text);
    free(tokens_path);
    return ok;
}

static int command_chunks(const char *dir) {
    char name[512];
    Model *m;
    int *tokens, T;
    if (gna_load(dir, &m) != GNA_OK || !fixture_tokens(dir, &tokens, &T)) { check(0, dir, "load: %s", gna_error()); return 1; }
    size_t V = m->config.vocab_size, n = (size_t)T * V;
    int whole[] = {T}, pieces[] = {5, 1, 7, 2, 1000000};
    /* where the fixture has them, transformers' float64 logits; zamba2's default follows the CUDA path
     * (logits.npy), and that is what both modes run here */
    char *reference_path = path_join(dir, "logits.npy");
    Array reference;
    int have_reference = read_npy(reference_path, &reference) && reference.count == n;
    free(reference_path);
    double *b = checked_malloc(sizeof(double) * n);
    char detail[512];
    for (int reference_mode = 0; reference_mode < 2; reference_mode++) {
        const char *mode = reference_mode ? "--reference" : "Part II's kernels";
        float *one = run_in_chunks(m, tokens, T, whole, 1, reference_mode);
        float *several = run_in_chunks(m, tokens, T, pieces, 1, reference_mode);
        float *single = run_in_chunks(m, tokens, T, NULL, 1, reference_mode);
        float *threaded = run_in_chunks(m, tokens, T, whole, 3, reference_mode);
        float *threaded_single = run_in_chunks(m, tokens, T, NULL, 2, reference_mode);
        if (!one || !several || !single || !threaded || !threaded_single) {
            check(0, dir, "%s: forward failed: %s", mode, gna_error());
        } else {
            /* Chunks of other lengths run other kernels (a few tokens: the row kernels; many: the tiles),
             * which sum in other orders; two float32 paths that each meet the tolerance may be up to twice
             * it apart on an ill-conditioned fixture (zamba2's), so each is held to transformers' float64
             * logits, not to the other. */
            const float *ways[3] = {one, several, single};
            const char *way_names[3] = {"one chunk", "chunks 5,1,7,2,rest", "token by token"};
            for (int w = 0; w < 3; w++) {
                for (size_t i = 0; i < n; i++) b[i] = ways[w][i];
                snprintf(name, sizeof name, "%s: %s, %s = transformers' float64 logits", dir, mode, way_names[w]);
                check(have_reference && compare_logits(reference.values, b, T, (int)V, detail, sizeof detail), name, "%s",
                      have_reference ? detail : "no logits.npy of the right shape");
            }
            snprintf(name, sizeof name, "%s: %s, 3 threads = 1 thread, bit for bit", dir, mode);
            check(memcmp(one, threaded, n * sizeof(float)) == 0, name, "logits differ");
            snprintf(name, sizeof name, "%s: %s, token by token, 2 threads = 1 thread, bit for bit", dir, mode);
            check(memcmp(single, threaded_single, n * sizeof(float)) == 0, name, "logits differ");
        }
        free(one); free(several); free(single); free(threaded); free(threaded_single);
    }
    if (have_reference) free(reference.values);
    free(b);
    free(tokens);
    gna_free(m);
    return n_failed ? 1 : 0;
}

/* ---- two models alive at once (a Llama layer is to be placed into a Llamba: both must load side by
 * side) give each the logits it gives alone */
static int command_pair(const char *dir_a, const char *dir_b) {
    const char *dirs[2] = {dir_a, dir_b};
    Model *models[2];
    float *alone[2] = {NULL, NULL}, *together[2] = {NULL, NULL};
    int tokens[6] = {3, 1, 4, 1, 5, 9};
    for (int i = 0; i < 2; i++) { /* alone: load, run, free */
        if (gna_load(dirs[i], &models[i]) != GNA_OK) { check(0, dirs[i], "load: %s", gna_error()); return 1; }
        alone[i] = run_in_chunks(models[i], tokens, 6, NULL, 1, 0);
        gna_free(models[i]);
    }
    for (int i = 0; i < 2; i++) gna_load(dirs[i], &models[i]);
    for (int i = 0; i < 2; i++) together[i] = run_in_chunks(models[i], tokens, 6, NULL, 1, 0);
    int same = 1;
    for (int i = 0; i < 2; i++)
        same &= alone[i] && together[i] && memcmp(alone[i], together[i], sizeof(float) * 6 * models[i]->config.vocab_size) == 0;
    char name[512];
    snprintf(name, sizeof name, "%s and %s loaded side by side run as they do alone", dir_a, dir_b);
    check(same, name, "logits differ");
    for (int i = 0; i < 2; i++) {
        free(alone[i]);
        free(together[i]);
        gna_free(models[i]);
    }
    return n_failed ? 1 : 0;
}

/* ---- properties of the interventions: on a fixture with T tokens in `tokens.txt`, in both modes */
static float *run_masked(const Model *m, const int *tokens, int T, const char *spec, int reference) {
    gna_run *run = new_test_run(m, reference, 2, spec);
    gna_cache *cache;
    if (!run || gna_cache_new(run, T, &cache) != GNA_OK) {
        gna_run_free(run);
        return NULL;
    }
    float *logits = checked_malloc(sizeof(float) * (size_t)T * m->config.vocab_size);
    int status = gna_forward(run, cache, tokens, T, logits);
    gna_cache_free(cache);
    gna_run_free(run);
    if (status != GNA_OK) { free(logits); return NULL; }
    return logits;
}

static int command_properties(const char *dir, int layer) {
    char name[512], spec[64];
    Model *m;
    int *tokens, T;
    if (gna_load(dir, &m) != GNA_OK || !fixture_tokens(dir, &tokens, &T)) { check(0, dir, "load: %s", gna_error()); return 1; }
    size_t V = m->config.vocab_size, n = (size_t)T * V;
    Layer *target = &m->layers[layer];
    Weight *projection = target->kind == MIXER_ATTENTION ? &target->attention.o_proj
                         : target->kind == MIXER_MAMBA1  ? &target->mamba1.out_proj
                                                         : &target->ssd.out_proj;
    for (int reference = 0; reference < 2; reference++) {
        const char *mode = reference ? "--reference" : "Part II's kernels";
        float *plain = run_masked(m, tokens, T, NULL, reference);
        /* ablating every head of a layer = removing the mixer's output (its output projection set to 0) */
        Weight saved = *projection;
        void *zeros = checked_calloc(saved.rows * saved.cols, 4);
        *projection = (Weight){zeros, DTYPE_F32, saved.rows, saved.cols};
        float *removed = run_masked(m, tokens, T, NULL, reference);
        *projection = saved;
        free(zeros);
        snprintf(spec, sizeof spec, "L%dH*", layer);
        float *all_heads = run_masked(m, tokens, T, spec, reference);
        snprintf(name, sizeof name, "%s: %s, %s = the layer's mixer output removed, bit for bit", dir, mode, spec);
        check(plain && removed && all_heads && memcmp(removed, all_heads, n * sizeof(float)) == 0, name, "logits differ");
        /* a mask on the last query row leaves every other row bit-identical, and changes the last */
        const char *last_row_specs[2] = {"L%dH0@-1", "L%dH1@-1:0-3"};
        for (int k = 0; k < 2; k++) {
            snprintf(spec, sizeof spec, last_row_specs[k], layer);
            float *masked = run_masked(m, tokens, T, spec, reference);
            int same_before = plain && masked && memcmp(masked, plain, (n - V) * sizeof(float)) == 0;
            int last_differs = plain && masked && memcmp(masked + n - V, plain + n - V, V * sizeof(float)) != 0;
            snprintf(name, sizeof name, "%s: %s, %s changes the last row only", dir, mode, spec);
            check(same_before && last_differs, name, same_before ? "the last row did not change" : "an earlier row changed");
            free(masked);
        }
        free(plain); free(removed); free(all_heads);
    }
    free(tokens);
    gna_free(m);
    return n_failed ? 1 : 0;
}

/* ---- unit tests */
static int json_fails(const char *text, const char *expected) {
    JsonDocument doc;
    int status = parse_json(&doc, text, strlen(text), "t.json");
    if (status == GNA_OK) { free_json(&doc); return 0; }
    return status == GNA_BAD_INPUT && strstr(gna_error(), expected) != NULL && strstr(gna_error(), "t.json: ") == gna_error();
}

static void test_json(void) {
    const char *text = "{\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\n\\u00e9\\ud83d\\ude00\\\"\","
                       " \"inf\": [Infinity, -Infinity, NaN], \"o\": {\"__float__\": \"Infinity\"}, \"e\": {}}";
    JsonDocument doc;
    int status = parse_json(&doc, text, strlen(text), "t.json");
    check(status == GNA_OK, "json: parses a document with every kind of value", "%s", gna_error());
    if (status != GNA_OK) return;
    const JsonValue *a = json_get(doc.root, "a");
    check(a && a->type == JSON_ARRAY && a->length == 5 && a->first->number == 1 && a->first->next->number == -2500 &&
              a->first->next->next->type == JSON_TRUE && a->first->next->next->next->next->type == JSON_NULL,
          "json: arrays, numbers, literals", "wrong values");
    const JsonValue *s = json_get(doc.root, "s");
    check(s && s->length == 9 && memcmp(s->string, "x\n\xc3\xa9\xf0\x9f\x98\x80\"", 9) == 0,
          "json: escapes, \\u, surrogate pairs to UTF-8", "got %zu bytes", s ? s->length : 0);
    const JsonValue *inf = json_get(doc.root, "inf");
    check(inf && isinf(inf->first->number) && inf->first->number > 0 && inf->first->next->number < 0 &&
              isinf(inf->first->next->number) && isnan(inf->first->next->next->number),
          "json: Python's Infinity, -Infinity, NaN", "wrong values");
    double v = 0;
    check(json_to_double(json_get(doc.root, "o"), &v) && isinf(v), "json: transformers 5.x {\"__float__\": \"Infinity\"}", "not read");
    check(json_get(doc.root, "e")->length == 0 && !json_get(doc.root, "missing"), "json: empty object, absent key", "");
    free_json(&doc);

    check(json_fails("{\"a\": 1,}", "at byte 8"), "json: trailing comma is an error at its byte", "%s", gna_error());
    check(json_fails("{\"a\" 1}", "expected ':'"), "json: missing colon", "%s", gna_error());
    check(json_fails("{\"a\": \"abc", "unterminated string"), "json: unterminated string", "%s", gna_error());
    check(json_fails("[\"\\x\"]", "unknown escape"), "json: unknown escape", "%s", gna_error());
    check(json_fails("[\"a\tb\"]", "control character"), "json: raw control character in a string", "%s", gna_error());
    check(json_fails("[\"\\ud800\"]", "unpaired surrogate"), "json: lone surrogate", "%s", gna_error());
    check(json_fails("[1] x", "after the document"), "json: text after the document", "%s", gna_error());
    check(json_fails("[01]", "expected ',' or ']'"), "json: leading zero", "%s", gna_error());
    check(json_fails("[1.]", "digit expected"), "json: bare decimal point", "%s", gna_error());
    check(json_fails("", "unexpected end"), "json: empty input", "%s", gna_error());
    check(json_fails("[tru]", "expected a value"), "json: misspelt literal", "%s", gna_error());
    char deep[400];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    deep[399] = 0;
    check(json_fails(deep, "nested too deeply"), "json: depth limit", "%s", gna_error());
}

static void test_number_formats(void) {
    check(f16_to_f32(0x3C00) == 1.0f && f16_to_f32(0xC000) == -2.0f && f16_to_f32(0x7BFF) == 65504.0f &&
              f16_to_f32(0x0001) == 5.9604644775390625e-8f && f16_to_f32(0x03FF) == (float)6.09755516052246094e-5f &&
              f16_to_f32(0x8000) == 0.0f && signbit(f16_to_f32(0x8000)) && isinf(f16_to_f32(0x7C00)) &&
              f16_to_f32(0xFC00) < 0 && isnan(f16_to_f32(0x7E00)) && f16_to_f32(0x3555) == 0.333251953125f,
          "f16: normal, subnormal, zero, inf, nan widen exactly", "");
    check(bf16_to_f32(0x3F80) == 1.0f && bf16_to_f32(0xC0A0) == -5.0f && bf16_to_f32(0x0001) > 0 &&
              isinf(bf16_to_f32(0x7F80)) && isnan(bf16_to_f32(0x7FC0)),
          "bf16: widen exactly", "");
}

/* Llama-3.1-8B's 64 inverse frequencies as transformers 5.17 computes them (architectures.md,
 * appendix A): theta 500000, head_dim 128, llama3 scaling factor 8, 1, 4, 8192. */
static void test_rope(void) {
    static const double hf[64] = {
        1.0, 0.8146172166, 0.6636012793, 0.5405809879, 0.4403666258, 0.3587302268, 0.2922278345, 0.2380538136,
        0.1939227581, 0.1579728127, 0.1286873817, 0.1048309505, 0.08539710194, 0.06956595182, 0.05666961893,
        0.0461640507, 0.0376060307, 0.03063452058, 0.02495540865, 0.02032910474, 0.01656044088, 0.01349041983,
        0.01098952908, 0.008952259086, 0.007292665076, 0.005940730684, 0.00483942125, 0.003942275885,
        0.003211446106, 0.00216657063, 0.001371893683, 0.0008567514597, 0.000524846022, 0.0003126936499,
        0.0001785077911, 9.556212171e-05, 7.784655463e-05, 6.341514381e-05, 5.165906987e-05, 4.208236714e-05,
        3.428102355e-05, 2.792590931e-05, 2.274892904e-05, 1.853166941e-05, 1.509621779e-05, 1.229763893e-05,
        1.001786859e-05, 8.160727702e-06, 6.647869668e-06, 5.415469332e-06, 4.411534519e-06, 3.593711881e-06,
        2.927499736e-06, 2.384791742e-06, 1.942692506e-06, 1.582550794e-06, 1.289173156e-06, 1.050182618e-06,
        8.554969213e-07, 6.969025321e-07, 5.677088097e-07, 4.624653798e-07, 3.767322596e-07, 3.068925878e-07};
    Config c = {.head_dim = 128, .rope_theta = 500000.0f, .rope_llama3 = 1, .rope_factor = 8.0f,
                .rope_low_freq_factor = 1.0f, .rope_high_freq_factor = 4.0f, .rope_original_max_positions = 8192};
    float *inv_freq = build_rope_inv_freq(&c);
    double worst = 0;
    int at = 0;
    for (int i = 0; i < 64; i++) {
        double e = fabs(inv_freq[i] - hf[i]) / hf[i];
        if (e > worst) { worst = e; at = i; }
    }
    check(worst < 1e-6, "rope: llama3 inv_freq of Llama-3.1-8B equals transformers' (all 3 bands)",
          "relative error %.3g at i = %d", worst, at);
    free(inv_freq);
    /* rope_rows: the angle of pair i at position p is inv_freq[i] p; position 0 changes nothing; the pairs are
     * i and i + hd/2 (rotate_half), not neighbours; every head of the position turns alike */
    float q[3 * 8], k[3 * 8], f[4] = {1, 0.1f, 0.01f, 0.001f};
    for (int i = 0; i < 24; i++) q[i] = k[i] = (float)(i % 8 + 1);
    RopeTask task = {f, q, k, 1, 1, 8, 2}; /* positions 2, 3, 4 */
    rope_rows(&task, 0, 3);
    /* in float variables: with FLT_EVAL_METHOD 1 or 2 (s390x and i686 under -std=c11) an expression may
     * keep double or x87 precision, and rope_rows stores float */
    float q1 = 2 * cosf(0.1f * 2) - 6 * sinf(0.1f * 2), q13 = 6 * cosf(0.1f * 3) + 2 * sinf(0.1f * 3);
    check(q[1] == q1 && q[8 + 5] == q13 &&
              memcmp(q, k, sizeof q) == 0,
          "rope: pair i at position p turns by inv_freq[i] p, pairs i and i + d/2 (rotate_half); q and k alike", "q1 %g q13 %g", q[1], q[13]);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    memcpy(y, x, sizeof x);
    RopeTask at_zero = {f, y, y, 1, 0, 8, 0};
    rope_rows(&at_zero, 0, 1);
    check(memcmp(x, y, sizeof x) == 0, "rope: position 0 is the identity", "");
}

static void put_u64(FILE *f, uint64_t v) {
    for (int i = 0; i < 8; i++) fputc((int)(v >> (8 * i)) & 0xFF, f);
}

/* a file with tensors a (F32 [2]) and b (BF16 [2]), the header padded with `pad` spaces */
static void write_unit_safetensors(const char *path, int pad) {
    char header[512];
    int n = snprintf(header, sizeof header,
                     "{\"__metadata__\":{\"format\":\"pt\"},\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                     "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
    for (int i = 0; i < pad; i++) header[n++] = ' ';
    FILE *f = fopen(path, "wb");
    put_u64(f, (uint64_t)n);
    fwrite(header, 1, (size_t)n, f);
    float a[2] = {1.5f, -2.0f};
    uint16_t b[2] = {0x3F80, 0xC000};
    for (int i = 0; i < 2; i++) { /* little-endian, as safetensors stores them */
        uint32_t bits;
        memcpy(&bits, &a[i], 4);
        for (int j = 0; j < 4; j++) fputc((int)(bits >> (8 * j)) & 0xFF, f);
    }
    for (int i = 0; i < 2; i++) fputc(b[i] & 0xFF, f), fputc(b[i] >> 8, f);
    fclose(f);
}

static void test_safetensors(const char *tmp) {
    char path[512];
    snprintf(path, sizeof path, "%s/unit.safetensors", tmp);
    int length = (int)strlen("{\"__metadata__\":{\"format\":\"pt\"},\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                             "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
    int pad = (8 - length % 8) % 8; /* safetensors writers pad the header to a multiple of 8 */
    for (int misaligned = 0; misaligned < 2; misaligned++) {
        write_unit_safetensors(path, pad + misaligned);
        Checkpoint ck;
        memset(&ck, 0, sizeof ck);
        ck.files = checked_calloc(1, sizeof(SafetensorsFile));
        int status = open_safetensors(&ck, path);
        if (misaligned) {
            check(status == GNA_BAD_INPUT && strstr(gna_error(), "not aligned"), "safetensors: misaligned F32 data is refused",
                  "%s", gna_error());
        } else {
            check(status == GNA_OK && ck.n_tensors == 2, "safetensors: reads a header with metadata and padding", "%s", gna_error());
            qsort(ck.tensors, (size_t)ck.n_tensors, sizeof(Tensor), compare_tensor_names);
            const Tensor *ta = find_tensor(&ck, "a"), *tb = find_tensor(&ck, "b");
            int ok = ta && tb;
            if (ok) {
                Weight wa = {ta->data, ta->dtype, 1, 2}, wb = {tb->data, tb->dtype, 1, 2};
                ok = weight_at(wa, 1) == -2.0f && weight_at(wb, 0) == 1.0f && weight_at(wb, 1) == -2.0f &&
                     (const char *)ta->data == (const char *)ck.files[0].map + 8 + length + pad;
            }
            check(ok, "safetensors: F32 and BF16 tensors read in place from the mapping", "");
        }
        free_checkpoint(&ck);
    }
}

static void test_npy(const char *tmp) {
    char path[512];
    snprintf(path, sizeof path, "%s/unit.npy", tmp);
    float values[6] = {1, -2, 3.5f, 1e-30f, 0, 7};
    int64_t shape[2] = {2, 3};
    OutputFile out;
    int status = open_output(&out, path);
    if (status == GNA_OK) {
        write_npy(out.file, values, 2, shape);
        status = close_output(&out, 1);
    }
    Array a;
    int ok = status == GNA_OK && read_npy(path, &a) && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3;
    for (int i = 0; ok && i < 6; i++) ok = a.values[i] == values[i];
    check(ok, "npy: written float32 [2, 3] reads back", "%s", gna_error());
    if (ok) free(a.values);
    char text[256];
    FILE *f = fopen(path, "rb");
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    check(n >= 128 && text[127] == '\n' && memcmp(text + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 59) == 0,
          "npy: header as numpy writes it, data at byte 128", "");
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", tmp);
    check(open_output(&out, path) == GNA_BAD_INPUT, "npy: unwritable path is an error", "");
}

static void test_tokens(void) {
    int *t, n;
    check(parse_tokens("1,2, 3 4", &t, &n) == GNA_OK && n == 4 && t[3] == 4, "tokens: commas and spaces", "");
    if (n == 4) free(t);
    check(parse_tokens("1,,2", &t, &n) == GNA_BAD_INPUT && strstr(gna_error(), "--tokens: "), "tokens: empty entry", "");
    check(parse_tokens("-1", &t, &n) == GNA_BAD_INPUT, "tokens: negative id", "");
    check(parse_tokens("99999999999", &t, &n) == GNA_BAD_INPUT, "tokens: id past int range", "");
    check(parse_tokens(" ", &t, &n) == GNA_BAD_INPUT, "tokens: nothing", "");
}

/* ---- tokenizers */

/* a tokenizer from JSON text, through a file as gna reads them */
static Tokenizer *tokenizer_from(const char *tmp, const char *json) {
    char path[512];
    snprintf(path, sizeof path, "%s/unit_tokenizer.json", tmp);
    FILE *f = fopen(path, "wb");
    fputs(json, f);
    fclose(f);
    Tokenizer *t = NULL;
    if (gna_tokenizer_load(path, &t) != GNA_OK) return NULL;
    return t;
}

/* "1 2 3" of the ids, for messages */
static const char *ids_text(const int *ids, int n) {
    static char buffer[4][400];
    static int which = 0;
    char *b = buffer[which++ % 4];
    int used = 0;
    b[0] = 0;
    for (int i = 0; i < n && used < 360; i++) used += snprintf(b + used, 400 - (size_t)used, "%s%d", i ? " " : "", ids[i]);
    if (used >= 360) snprintf(b + used, 400 - (size_t)used, " ...");
    return b;
}

static int encodes_to(const Tokenizer *t, const char *text, int add_special, const char *expected) {
    int *ids, n;
    if (gna_tokenize(t, text, strlen(text), add_special, &ids, &n) != GNA_OK) return 0;
    int ok = strcmp(ids_text(ids, n), expected) == 0;
    if (!ok) printf("     %s: got %s, expected %s\n", text, ids_text(ids, n), expected);
    free(ids);
    return ok;
}

/* Added tokens are cut leftmost-longest (a byte trie since issue 25: the cost of a place no longer grows
 * with the number of tokens sharing its first byte): 81 tokens all starting with '<', against a naive
 * search of every token at every place */
static void test_added_token_matching(const char *tmp) {
    enum { N_ADDED = 81, TEXT = 3000 };
    char contents[N_ADDED][48];
    Bytes json = {0};
    bytes_add_text(&json, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"<unk>\": 0, \"x\": 1}, \"merges\": []}, \"added_tokens\": [");
    for (int i = 0; i < N_ADDED; i++) { /* "<", "<a", "<ab", "<aa", "<aab", ... "a", "b": every place matches one */
        int k = i / 2;
        memset(contents[i], 0, sizeof contents[i]);
        if (i == N_ADDED - 1) strcpy(contents[i], "a");
        else {
            contents[i][0] = '<';
            memset(contents[i] + 1, 'a', (size_t)k);
            if (i % 2) contents[i][1 + k] = 'b';
        }
        bytes_printf(&json, "%s{\"id\": %d, \"content\": \"%s\", \"special\": true}", i ? ", " : "", 2 + i, contents[i]);
    }
    bytes_add_text(&json, ", {\"id\": 83, \"content\": \"b\", \"special\": true}]}");
    Tokenizer *t = tokenizer_from(tmp, json.data);
    free(json.data);
    check(t != NULL, "tokenizer: 82 added tokens sharing a first byte load", "%s", gna_error());
    if (!t) return;
    uint64_t state = 11;
    char text[TEXT + 1];
    for (int i = 0; i < TEXT; i++) text[i] = "<<aaaaab"[random_next(&state) % 8];
    text[TEXT] = 0;
    int *ids, n, expected[TEXT], n_expected = 0;
    for (size_t at = 0; at < TEXT;) { /* naive leftmost-longest */
        int best = -1;
        size_t best_length = 0;
        for (int i = 0; i < N_ADDED; i++) {
            size_t length = strlen(contents[i]);
            if (length > best_length && at + length <= TEXT && memcmp(text + at, contents[i], length) == 0) best = i, best_length = length;
        }
        if (best < 0) { best = N_ADDED; best_length = 1; } /* "b" */
        expected[n_expected++] = 2 + best;
        at += best_length;
    }
    int status = gna_tokenize(t, text, TEXT, 0, &ids, &n);
    int ok = status == GNA_OK && n == n_expected && memcmp(ids, expected, sizeof(int) * (size_t)n) == 0;
    check(ok, "tokenizer: added tokens cut leftmost-longest, as a search of every token at every place", "status %d (%s), %d ids, expected %d: %s",
          status, status == GNA_OK ? "" : gna_error(), status == GNA_OK ? n : -1, n_expected, status == GNA_OK ? ids_text(ids, n < 20 ? n : 20) : "");
    if (status == GNA_OK) free(ids);
    gna_tokenizer_free(t);
}

static void test_unicode(void) {
    check(is_letter('A') && is_letter('z') && !is_letter('@') && !is_letter('[') && is_letter(0xE9) && is_letter(0xAA) &&
              is_letter(0x4E00) && is_letter(0x1F2) && is_letter(0x2C6) && !is_letter(0x301) && !is_letter(0x2167),
          "unicode: \\p{L} (Lu Ll Lt Lm Lo, not marks or Nl)", "");
    check(is_number('0') && is_number('9') && !is_number('a') && is_number(0x663) && is_number(0xBD) && is_number(0xB9) &&
              is_number(0x2167) && is_number(0x2460) && !is_number(0x4E00),
          "unicode: \\p{N} (Nd, Nl, No: Arabic-Indic 3, one half, superscript one, Roman eight, circled one)", "");
    check(is_white_space(' ') && is_white_space('\t') && is_white_space('\r') && is_white_space(0x0B) && is_white_space(0x85) &&
              is_white_space(0xA0) && is_white_space(0x3000) && is_white_space(0x2029) && !is_white_space(0x200B) &&
              !is_white_space(0x180E) && !is_white_space(0x1C) && !is_white_space(0xFEFF),
          "unicode: \\s is White_Space (not U+200B, U+180E, U+001C, U+FEFF)", "");
    check(is_punctuation('!') && is_punctuation('$') && is_punctuation('~') && is_punctuation(0xBF) && is_punctuation(0x2014) &&
              is_punctuation(0x3002) && is_punctuation(0x166D) && !is_punctuation(0x2E45) && !is_punctuation('a') &&
              !is_punctuation(0x20AC),
          "unicode: punctuation as HF's Punctuation has it (ASCII symbols yes; U+2E45 of Unicode 10 no; U+166D yes)", "");
    const char *bad[] = {"\x80", "a\xC0\xAF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF0\x9F\x98", "ok\xFF"};
    size_t at[] = {0, 1, 0, 0, 0, 0, 2};
    int ok = utf8_valid_prefix("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 10) == 10;
    for (int i = 0; i < 7; i++) ok &= utf8_valid_prefix(bad[i], strlen(bad[i])) == at[i];
    check(ok, "utf-8: well-formed text passes; overlong, surrogate, past U+10FFFF, truncated, stray bytes are found", "");
    Bytes b = {0};
    bytes_add_lossy(&b, "a\xF0\x9F\x98" "b\xE0\x80\xED\xA0\x80\xC3", 11);
    check(b.length == 2 + 7 * 3 && memcmp(b.data, "a\xEF\xBF\xBD" "b", 5) == 0,
          "utf-8: lossy decoding replaces each maximal ill-formed part (Rust's from_utf8_lossy)", "got %zu bytes", b.length);
    free(b.data);
}

/* NFC of a UTF-8 text compared with an expected UTF-8 text */
static int nfc_is(const char *text, const char *expected) {
    Bytes b = {0};
    nfc_text(text, strlen(text), &b);
    int ok = b.length == strlen(expected) && memcmp(b.data ? b.data : "", expected, b.length) == 0;
    free(b.data);
    return ok;
}

/* hex digits at *s into out (NUL-terminated), up to a space or the line's end; 0 if malformed */
static int read_hex_text(const char **s, char *out, size_t room) {
    size_t n = 0;
    while (**s && **s != ' ' && **s != '\n') {
        int high = hex_value((*s)[0]), low = (*s)[1] ? hex_value((*s)[1]) : -1;
        if (high < 0 || low < 0 || n + 1 >= room) return 0;
        out[n++] = (char)(high * 16 + low);
        *s += 2;
    }
    out[n] = 0;
    return n > 0;
}

static void test_nfc(void) {
    /* known answers, from Python's unicodedata.normalize("NFC", ...) */
    check(nfc_is("e\xCC\x81", "\xC3\xA9") && nfc_is("A\xCC\x8A\xCC\x81", "\xC7\xBA"),
          "nfc: e + U+0301 is U+00E9; A + ring + acute composes twice to U+01FA", "");
    check(nfc_is("\xE1\xB8\x8B\xCC\xA3", "\xE1\xB8\x8D\xCC\x87"),
          "nfc: U+1E0B U+0323 is U+1E0D U+0307 (decomposed, reordered, composed with the other mark)", "");
    check(nfc_is("a\xCC\x81\xCC\xA3\xCC\x80\xCC\x96", "\xE1\xBA\xA1\xCC\x96\xCC\x81\xCC\x80"),
          "nfc: marks reordered by class, stably (a 0301 0323 0300 0316 = U+1EA1 0316 0301 0300)", "");
    check(nfc_is("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81") &&
              nfc_is("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA7", "\xEA\xB0\x80\xE1\x86\xA7") &&
              nfc_is("\xEA\xB0\x80\xE1\x86\xA8", "\xEA\xB0\x81"),
          "nfc: Hangul L V T is U+AC01; U+11A7 is no trailing consonant; LV + T composes", "");
    check(nfc_is("\xE0\xA5\x98", "\xE0\xA4\x95\xE0\xA4\xBC") && nfc_is("\xE0\xA4\x95\xE0\xA4\xBC", "\xE0\xA4\x95\xE0\xA4\xBC") &&
              nfc_is("\xCD\x84", "\xCC\x88\xCC\x81"),
          "nfc: composition exclusions stay decomposed (U+0958; U+0344, a non-starter decomposition)", "");
    check(nfc_is("\xE2\x84\xAB", "\xC3\x85") && nfc_is("\xE2\x84\xA6", "\xCE\xA9"),
          "nfc: singletons go (U+212B ANGSTROM SIGN is U+00C5, U+2126 OHM SIGN is U+03A9)", "");
    check(nfc_is("\xE0\xAD\x87\xE0\xAC\xBE", "\xE0\xAD\x8B") && nfc_is("\xCC\x81" "a", "\xCC\x81" "a") && nfc_is("", ""),
          "nfc: two starters compose (U+0B47 U+0B3E); a leading mark stays; empty stays empty", "");
    check(nfc_is("a\xE1\xAA\xBF\xCC\x81", "a\xE1\xAA\xBF\xCC\x81") &&
              nfc_is("\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0", "\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0"),
          "nfc: Unicode 9.0 data as HF's crate has it: U+1ABF (class 220 since 13.0) is a starter, U+11938 "
          "(13.0) is not composed (Python 3.11 gives U+00E1 U+1ABF and U+11938)", "");
    const char *plain = "caf\xC3\xA9 \xEC\x95\x88\xEB\x85\x95 \xE1\xB8\x8D\xCC\x87 plain ASCII \xF0\x9F\x98\x80";
    check(nfc_is(plain, plain), "nfc: text already in NFC comes back byte for byte", "");
    /* the cases make_unicode_tables.py wrote from Python's unicodedata */
    FILE *f = fopen("test/fixtures/nfc_vectors.txt", "r");
    int n = 0, wrong = 0;
    char line[512], text[128], expected[128], first_wrong[512] = "";
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        const char *s = line;
        int ok = read_hex_text(&s, text, sizeof text) && *s++ == ' ' && read_hex_text(&s, expected, sizeof expected);
        if (!ok || !nfc_is(text, expected)) {
            if (!wrong++) snprintf(first_wrong, sizeof first_wrong, "%s", line);
        }
        n++;
    }
    if (f) fclose(f);
    check(f && n > 1000 && wrong == 0, "nfc: every case of test/fixtures/nfc_vectors.txt (unicodedata's NFC)",
          "%d of %d wrong, the first: %s", wrong, n, first_wrong);
}

static void test_tokenizer(const char *tmp) {
    /* BPE core: ranks decide, leftmost first among equals; a queued merge whose pair has changed is dropped */
    Tokenizer *t = tokenizer_from(tmp, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, "
                                       "\"ab\": 3, \"bc\": 4, \"abc\": 5, \"aa\": 6, \"aaa\": 7, \"<unk>\": 8},"
                                       " \"merges\": [\"b c\", \"a b\", \"a bc\", [\"a\", \"a\"], \"aa a\"], \"unk_token\": \"<unk>\","
                                       " \"fuse_unk\": true}}");
    check(t != NULL, "tokenizer: a minimal BPE tokenizer.json loads", "%s", gna_error());
    if (t) {
        check(encodes_to(t, "abc", 1, "5") && encodes_to(t, "ab", 1, "3") && encodes_to(t, "aaaa", 1, "6 6") &&
                  encodes_to(t, "aaaaa", 1, "6 7") && encodes_to(t, "cab", 1, "2 3") && encodes_to(t, "", 1, ""),
              "tokenizer: BPE merges by rank, leftmost first (aaaaa = aa aaa)", "");
        check(encodes_to(t, "axyzb", 1, "0 8 1") && encodes_to(t, "x", 1, "8"), "tokenizer: unknown characters fuse into one unk", "");
        gna_tokenizer_free(t);
    }
    /* NFC inside a Sequence, before a Replace: e + U+0301 and U+00E9 are one token; NFKC is refused */
    t = tokenizer_from(tmp, "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}, "
                            "{\"type\": \"Replace\", \"pattern\": {\"String\": \"\u00c5\"}, \"content\": \"A\"}]}, "
                            "\"model\": {\"type\": \"BPE\", \"vocab\": {\"\u00e9\": 0, \"e\": 1, \"\u0301\": 2, \"A\": 3, "
                            "\"<unk>\": 4}, \"merges\": [], \"unk_token\": \"<unk>\"}}");
    check(t != NULL, "tokenizer: a Sequence with NFC loads", "%s", gna_error());
    if (t) {
        check(encodes_to(t, "e\xCC\x81", 1, "0") && encodes_to(t, "\xC3\xA9", 1, "0") && encodes_to(t, "\xE2\x84\xAB", 1, "3") &&
                  encodes_to(t, "\xCC\x81" "e", 1, "2 1"),
              "tokenizer: NFC runs first in its Sequence (e U+0301 = U+00E9; U+212B = U+00C5, then replaced)", "");
        gna_tokenizer_free(t);
    }
    t = tokenizer_from(tmp, "{\"normalizer\": {\"type\": \"NFKC\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}");
    check(t == NULL && strstr(gna_error(), "NFKC"), "tokenizer: an NFKC normalizer is refused by name", "%s", gna_error());
    /* byte fallback, Metaspace-style normalizer, BOS from TemplateProcessing, special tokens in text */
    t = tokenizer_from(tmp, "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", "
                            "\"prepend\": \"\u2581\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, "
                            "\"content\": \"\u2581\"}]}, \"added_tokens\": [{\"id\": 1, \"content\": \"<s>\", "
                            "\"special\": true, \"normalized\": false}], \"post_processor\": {\"type\": \"TemplateProcessing\", "
                            "\"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", "
                            "\"type_id\": 0}}], \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1]}}}, "
                            "\"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": "
                            "{\"String\": \"\u2581\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, "
                            "{\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]}, "
                            "\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, "
                            "\"<0xC3>\": 2, \"<0xA9>\": 3, \"\u2581\": 4, \"h\": 5, \"i\": 6, \"\u2581h\": 7, \"\u2581hi\": 8}, "
                            "\"merges\": [\"\u2581 h\", \"\u2581h i\"]}}");
    check(t != NULL, "tokenizer: a SentencePiece-style tokenizer.json loads", "%s", gna_error());
    if (t) {
        check(encodes_to(t, "hi", 1, "1 8") && encodes_to(t, "hi", 0, "8") && encodes_to(t, "hi \xC3\xA9", 1, "1 8 4 2 3") &&
                  encodes_to(t, "<s>hi", 0, "1 8") && encodes_to(t, "", 1, "1"),
              "tokenizer: prepended and replaced spaces, byte fallback, BOS, <s> in the text (the text after it gets its own prefix)", "");
        int ids[] = {1, 8, 4, 2, 3, 8, 2, 3, 2};
        char *text;
        size_t n;
        int ok = gna_detokenize(t, ids, 6, 0, &text, &n) == GNA_OK && strcmp(text, "<s> hi \xC3\xA9 hi") == 0;
        if (ok) free(text);
        ok = ok && gna_detokenize(t, ids + 1, 8, 0, &text, &n) == GNA_OK &&
             strcmp(text, "hi \xC3\xA9 hi\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") == 0;
        if (ok) free(text);
        check(ok, "tokenizer: decoding joins byte tokens, a run that is not UTF-8 gives U+FFFD per byte, strips one space", "");
        ok = gna_detokenize(t, ids, 2, 1, &text, &n) == GNA_OK && strcmp(text, "hi") == 0;
        if (ok) free(text);
        check(ok, "tokenizer: skip_special leaves <s> out", "");
        int bad_id = 9;
        check(gna_detokenize(t, &bad_id, 1, 0, &text, &n) == GNA_BAD_INPUT && strstr(gna_error(), "token id 9 is not in the tokenizer"),
              "tokenizer: an id the tokenizer lacks is an error", "%s", gna_error());
        int *out, n_out;
        check(gna_tokenize(t, "a\xFF" "b", 3, 1, &out, &n_out) == GNA_BAD_INPUT && strstr(gna_error(), "not valid UTF-8 at byte 1"),
              "tokenizer: invalid UTF-8 is refused with its offset", "%s", gna_error());
        gna_tokenizer_free(t);
    }
    check(tokenizer_from(tmp, "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}") == NULL &&
              strstr(gna_error(), "model type \"WordPiece\" is not supported"),
          "tokenizer: a WordPiece model is refused by name", "%s", gna_error());
    check(tokenizer_from(tmp, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a a\"]}}") == NULL &&
              strstr(gna_error(), "merge 1 makes or uses \"aa\", which is not in the vocab"),
          "tokenizer: a merge whose token is missing is refused", "%s", gna_error());
}

/* every text of an expected_<name>.jsonl: ids with and without special tokens, and both decodings */
static int command_tokenizer(const char *tokenizer_path, const char *expected_path) {
    const char *name = strrchr(expected_path, '/') ? strrchr(expected_path, '/') + 1 : expected_path;
    char label[4][600], detail[4][1200] = {"", "", "", ""};
    int bad[4] = {0, 0, 0, 0}, texts = 0;
    Tokenizer *t;
    char *file;
    size_t size;
    if (read_file(expected_path, &file, &size) != GNA_OK) {
        check(0, name, "%s (made by weights_tools/fixtures/make_tokenizer_fixtures.py)", gna_error());
        return 1;
    }
    if (gna_tokenizer_load(tokenizer_path, &t) != GNA_OK) {
        check(0, name, "%s", gna_error());
        free(file);
        return 1;
    }
    const char *version = "?";
    JsonDocument meta = {0};
    for (char *line = file, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        JsonDocument doc;
        int last = *end == 0;
        *end = 0;
        if (end > line && parse_json(&doc, line, (size_t)(end - line), expected_path) == GNA_OK) {
            const JsonValue *text = json_get(doc.root, "text");
            if (!text) {
                free_json(&meta);
                meta = doc;
                const JsonValue *v = json_get(doc.root, "tokenizers_version");
                if (v && v->type == JSON_STRING) version = v->string;
                if (last) break;
                continue;
            }
            texts++;
            const char *keys[4] = {"ids", "ids_no_special", "decoded", "decoded_skip_special"};
            for (int k = 0; k < 4; k++) {
                const JsonValue *want = json_get(doc.root, keys[k]);
                int ok = 0;
                char got[400] = "", expected[400] = "";
                if (k < 2) {
                    int *ids, n, *wanted = checked_malloc(sizeof(int) * (want ? want->length + 1 : 1)), m = 0;
                    for (const JsonValue *v = want ? want->first : NULL; v; v = v->next) wanted[m++] = (int)v->number;
                    if (gna_tokenize(t, text->string, text->length, k == 0, &ids, &n) == GNA_OK) {
                        ok = n == m && memcmp(ids, wanted, sizeof(int) * (size_t)n) == 0;
                        snprintf(got, sizeof got, "%s", ids_text(ids, n));
                        free(ids);
                    } else {
                        snprintf(got, sizeof got, "%.300s", gna_error());
                    }
                    snprintf(expected, sizeof expected, "%s", ids_text(wanted, m));
                    free(wanted);
                } else {
                    const JsonValue *ids_value = json_get(doc.root, "ids");
                    int *ids = checked_malloc(sizeof(int) * (ids_value->length + 1)), n = 0;
                    for (const JsonValue *v = ids_value->first; v; v = v->next) ids[n++] = (int)v->number;
                    char *decoded;
                    size_t length;
                    if (gna_detokenize(t, ids, n, k == 3, &decoded, &length) == GNA_OK) {
                        ok = want && want->length == length && memcmp(want->string, decoded, length) == 0;
                        snprintf(got, sizeof got, "%.300s", decoded);
                        free(decoded);
                    } else {
                        snprintf(got, sizeof got, "%.300s", gna_error());
                    }
                    snprintf(expected, sizeof expected, "%.300s", want ? want->string : "?");
                    free(ids);
                }
                if (!ok && bad[k]++ == 0)
                    snprintf(detail[k], sizeof detail[k], "first on text %d \"%.80s\": expected %s, got %s", texts, text->string,
                             expected, got);
            }
            free_json(&doc);
        } else if (end > line) {
            check(0, name, "line is not JSON: %s", gna_error());
        }
        if (last) break;
    }
    const char *what[4] = {"ids equal HF tokenizers' (add_special_tokens=True)", "ids equal HF tokenizers' (add_special_tokens=False)",
                           "decode(ids) equals HF's", "decode(ids, skip_special_tokens=True) equals HF's"};
    for (int k = 0; k < 4; k++) {
        snprintf(label[k], sizeof label[k], "%s: %s on %d texts (tokenizers %s)", name, what[k], texts, version);
        check(texts > 0 && bad[k] == 0, label[k], "%d differ, %s", bad[k], texts ? detail[k] : "no texts");
    }
    free_json(&meta);
    free(file);
    gna_tokenizer_free(t);
    return n_failed ? 1 : 0;
}

/* ---- kernels: every SIMD kernel against its scalar definition, and thread counts against each other */
static float random_float(uint64_t *state) { /* uniform in [-1, 1) */
    return (float)((int64_t)(random_next(state) >> 40) - (1 << 23)) / (float)(1 << 23);
}

/* a random [rows, cols] weight in dtype, and its values as float */
static void *random_weight(Dtype dtype, int rows, int cols, uint64_t *state, float *values) {
    size_t n = (size_t)rows * (size_t)cols;
    void *data = checked_malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        float v = random_float(state);
        if (dtype == DTYPE_F32) {
            ((float *)data)[i] = v;
        } else {
            uint32_t bits;
            float r = round_to_bf16(v);
            memcpy(&bits, &r, 4);
            uint16_t h = (uint16_t)(bits >> 16);
            if (dtype == DTYPE_F16) h = (uint16_t)(0x3000 + (random_next(state) % 0x1800) + (v < 0 ? 0x8000 : 0)); /* +-[2^-3, 2) */
            ((uint16_t *)data)[i] = h;
        }
        values[i] = weight_at((Weight){data, dtype, rows, cols}, i);
    }
    return data;
}

/* out of the matmul of a run's table: Part I's (reference) or Part II's, on `threads` threads */
static float *run_matmul(const float *in, size_t in_stride, size_t T, Weight w, Weight bias, int reference, int bf16, int threads) {
    Pool pool;
    build_pool(&pool, threads);
    Compute cx = build_compute(reference, bf16, 0, &pool);
    float *out = checked_malloc(sizeof(float) * T * w.rows);
    linear(&cx, out, in, in_stride, T, w, bias);
    free_pool(&pool);
    return out;
}

/* Each output against the float32 bound of a dot product of n terms, in any order, with or
 * without fused multiply-adds: |error| <= n 2^-24 sum_k |in_k w_k| (Higham, Accuracy and Stability of
 * Numerical Algorithms, eq. 3.5, with gamma_n ~ n u); checked with twice that. */
static void test_matmul(void) {
    static const Dtype dtypes[] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};
    static const char *const names[] = {"F32", "BF16", "F16"};
    static const size_t shapes[][3] = {{1, 37, 300}, {3, 20, 64}, {6, 16, 256}, {7, 33, 257}, {13, 50, 520}, {50, 130, 96},
                                       {64, 17, 9}, {33, 45, 70}, {33, 20, 1500}, {32, 9, 4200}};
    for (int bf16 = 0; bf16 < 2; bf16++) {
        uint64_t state = 42;
        for (int d = 0; d < 3; d++) {
            int all_close = 1, all_same_bits = 1;
            char detail[256] = "";
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                size_t T = shapes[s][0], rows = shapes[s][1], cols = shapes[s][2], in_stride = cols + 3;
                float *values = checked_malloc(sizeof(float) * rows * cols), bias_values[130];
                void *data = random_weight(dtypes[d], (int)rows, (int)cols, &state, values);
                float *bias_data = checked_malloc(sizeof(float) * rows);
                for (size_t r = 0; r < rows; r++) bias_data[r] = random_float(&state);
                memcpy(bias_values, bias_data, sizeof(float) * (rows < 130 ? rows : 130));
                float *in = checked_malloc(sizeof(float) * T * in_stride);
                for (size_t i = 0; i < T * in_stride; i++) in[i] = random_float(&state);
                Weight w = {data, dtypes[d], rows, cols}, bias = {bias_data, DTYPE_F32, 1, rows};
                float *definition = run_matmul(in, in_stride, T, w, bias, 1, bf16, 1);
                float *fast = run_matmul(in, in_stride, T, w, bias, 0, bf16, 1);
                for (int threads = 2; threads <= 5; threads++)
                    for (int reference = 0; reference < 2; reference++) {
                        float *other = run_matmul(in, in_stride, T, w, bias, reference, bf16, threads);
                        if (memcmp(other, reference ? definition : fast, sizeof(float) * T * rows) != 0) all_same_bits = 0;
                        free(other);
                    }
                for (size_t t = 0; t < T; t++)
                    for (size_t r = 0; r < rows; r++) {
                        double magnitude = 0;
                        for (size_t k = 0; k < cols; k++) magnitude += fabs((double)in[t * in_stride + k] * values[r * cols + k]);
                        double bound = 2.0 * (double)cols * 0x1p-24 * magnitude + 0x1p-24 * fabs(bias_values[r < 130 ? r : 0]);
                        double diff = fabs((double)fast[t * rows + r] - definition[t * rows + r]);
                        if (!(diff <= bound) && all_close) {
                            all_close = 0;
                            snprintf(detail, sizeof detail, "T %zu rows %zu cols %zu: out[%zu, %zu] %.9g vs %.9g (bound %.3g)", T, rows,
                                     cols, t, r, fast[t * rows + r], definition[t * rows + r], bound);
                        }
                    }
                free(definition); free(fast); free(in); free(data); free(values); free(bias_data);
            }
            char name[160];
            snprintf(name, sizeof name, "matmul%s, %s weights: the %s kernels = Part I's definition, within float32 rounding",
                     bf16 ? " --bf16" : "", names[d], GNA_SIMD);
            check(all_close, name, "%s", detail);
            snprintf(name, sizeof name, "matmul%s, %s weights: 1 to 5 threads give the same bits, in both modes", bf16 ? " --bf16" : "", names[d]);
            check(all_same_bits, name, "outputs differ");
        }
    }
}

/* A bfloat16 identity weight returns a float32 input bit for bit, in float32 mode, with either table:
 * the product with 1 is exact and every other term is 0. An infinity and a NaN then propagate as in
 * the definition (0 x inf is NaN). */
static void test_matmul_identity(void) {
    enum { T = 40, N = 48 };
    uint16_t identity[N * N] = {0};
    for (int r = 0; r < N; r++) identity[r * N + r] = 0x3F80; /* 1.0 */
    Weight w = {identity, DTYPE_BF16, N, N};
    static float in[T * N];
    uint64_t state = 7;
    for (int i = 0; i < T * N; i++) {
        uint32_t bits = (uint32_t)(random_next(&state) >> 32);
        bits = (bits & 0x807FFFFFu) | (uint32_t)(127 - 40 + (int)(bits >> 23 & 63) + 8) << 23; /* 2^-32 .. 2^31 */
        memcpy(&in[i], &bits, 4);
    }
    float *out = run_matmul(in, N, T, w, no_weight, 0, 0, 2);
    check(memcmp(out, in, sizeof in) == 0, "matmul by a bfloat16 identity: the float32 input, bit for bit", "outputs differ");
    free(out);
    float special[T * N];
    memcpy(special, in, sizeof in);
    special[3 * N + 5] = INFINITY;
    uint32_t nan_bits = 0x7F800001u; /* a NaN whose payload is all in the low 16 bits */
    memcpy(&special[7 * N + 9], &nan_bits, 4);
    float *definition = run_matmul(special, N, T, w, no_weight, 1, 0, 1);
    out = run_matmul(special, N, T, w, no_weight, 0, 0, 2);
    int same = 1;
    for (int i = 0; i < T * N; i++) same &= isnan(out[i]) ? isnan(definition[i]) != 0 : out[i] == definition[i];
    check(same && isinf(out[3 * N + 5]) && isnan(out[7 * N + 9]), "matmul: an infinite or NaN input gives what the definition gives",
          "inf -> %g, NaN -> %g", out[3 * N + 5], out[7 * N + 9]);
    free(out);
    free(definition);
}

static void test_bf16_rounding(void) {
    float nan_all_ones; /* a NaN whose carry from rounding would reach the sign bit */
    memcpy(&nan_all_ones, &(uint32_t){0x7FFFFFFFu}, 4);
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1); just above it rounds up */
    check(round_to_bf16(1.0f + 0x1p-8f) == 1.0f && round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f &&
              round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f && round_to_bf16(-2.5f) == -2.5f &&
              isnan(round_to_bf16(NAN)) && isnan(round_to_bf16(nan_all_ones)) && isinf(round_to_bf16(INFINITY)) &&
              round_to_bf16(3.4028235e38f) == INFINITY,
          "bf16: rounding to nearest, ties to even, as torch", "");
#if GNA_VECTORS
    uint64_t state = 3;
    int same = 1;
    for (int i = 0; i < 100000 && same; i += VEC) {
        float x[VEC], y[VEC];
        for (int j = 0; j < VEC; j++) {
            static const uint32_t special[] = {0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F800001u, 0xFF800000u, 0x7F7FFFFFu, 0x7FC00000u};
            uint32_t bits = i == 0 && j < 4 ? special[j] : i == VEC && j < 2 ? special[4 + j] : (uint32_t)random_next(&state);
            memcpy(&x[j], &bits, 4);
        }
        vec_store(y, vec_round_bf16(vec_load(x)));
        for (int j = 0; j < VEC; j++) same &= memcmp(&y[j], &(float){round_to_bf16(x[j])}, 4) == 0;
    }
    check(same, "bf16: vector rounding = round_to_bf16, bit for bit (100000 random floats, NaNs of every payload among them)", "");
#endif
}

#if GNA_VECTORS
/* the largest distance, in units in the last place of the definition's result, over many x */
static double worst_ulps(Vec (*vector_f)(Vec), float (*f)(float), double from, double to, double step, double *at) {
    double worst = 0;
    for (double x = from; x < to; x += step) {
        float in[VEC], out[VEC];
        for (int j = 0; j < VEC; j++) in[j] = (float)(x + j * step / VEC);
        vec_store(out, vector_f(vec_load(in)));
        for (int j = 0; j < VEC; j++) {
            float want = f(in[j]);
            double ulp = fabsf(want) >= 0x1p-126f ? fabs((double)nextafterf(want, INFINITY) - want) : 0x1p-149;
            double e = fabs((double)out[j] - want) / ulp;
            if (e > worst) { worst = e; *at = in[j]; }
        }
    }
    return worst;
}

static Vec vec_log_of_exp(Vec x) { return vec_log(vec_exp(x)); } /* log over every binade: x = log(y) */
static float log_of_exp(float x) { return logf(vec_sum(vec_exp(vec_set1(x))) / VEC); }
static float exp_float(float x) { return expf(x); }
#endif

/* The leaves of Part II against Part I's: exp, log, silu, softplus in ulps; the scan steps, dot, axpy
 * and softmax within float32 rounding, on lengths with and without a vector tail */
static void test_leaves(void) {
#if GNA_VECTORS
    double at = 0, worst = worst_ulps(vec_exp, exp_float, -104.0, 88.72, 0.000937, &at);
    float big[VEC], out[VEC];
    for (int j = 0; j < VEC; j++) big[j] = j % 2 ? 89.0f : -105.0f;
    vec_store(out, vec_exp(vec_load(big)));
    check(worst <= 2 && isinf(out[1]) && out[0] == 0, "exp: vector within 2 ulp of expf on [-104, 88.7]; inf and 0 beyond",
          "%.2f ulp at x = %.9g", worst, at);
    worst = worst_ulps(vec_log_of_exp, log_of_exp, -87.0, 88.0, 0.0011, &at);
    check(worst <= 2, "log: vector within 2 ulp of logf over all normal floats", "%.2f ulp at log x = %.9g", worst, at);
    worst = worst_ulps(vec_silu, silu, -90.0, 90.0, 0.0013, &at);
    check(worst <= 4, "silu: vector within 4 ulp of the definition on [-90, 90]", "%.2f ulp at x = %.9g", worst, at);
    worst = worst_ulps(vec_softplus, softplus, -100.0, 100.0, 0.0013, &at);
    check(worst <= 4, "softplus: vector within 4 ulp of the definition on [-100, 100]", "%.2f ulp at x = %.9g", worst, at);
#endif
    Pool pool;
    build_pool(&pool, 1);
    Compute part1 = build_compute(1, 0, 0, &pool), part2 = build_compute(0, 0, 0, &pool);
    uint64_t state = 9;
    int steps_ok = 1, dot_ok = 1, activate_ok = 1;
    for (size_t N = 1; N <= 130; N += 13) {
        float A[130], B[130], C[130], S1[130], S2[130], x[130], y1[130], y2[130];
        for (size_t n = 0; n < N; n++) {
            A[n] = -expf(random_float(&state));
            B[n] = random_float(&state);
            C[n] = random_float(&state);
            S1[n] = S2[n] = random_float(&state);
            x[n] = 8 * random_float(&state);
        }
        for (int step = 0; step < 20; step++) {
            float dt = 0.5f * fabsf(random_float(&state)), u = random_float(&state), a, b;
            double scale = 0;
            for (size_t n = 0; n < N; n++) scale += fabs(S1[n] * C[n]);
            a = part1.ssd_step(S1, expf(-dt), dt * u, B, C, N);
            b = part2.ssd_step(S2, expf(-dt), dt * u, B, C, N);
            steps_ok &= fabs(a - b) <= 1e-5 * (scale + 1);
            a = part1.mamba1_step(S1, A, dt, u, B, C, N);
            b = part2.mamba1_step(S2, A, dt, u, B, C, N);
            steps_ok &= fabs(a - b) <= 1e-5 * (scale + 1);
        }
        /* attention's leaves over 7 keys (or values) of width N, rows 130 floats apart */
        float rows[7 * 130], s1[130], s2[130];
        for (size_t i = 0; i < 7 * 130; i++) rows[i] = random_float(&state);
        part1.scores(s1, C, rows, 130, 7, N);
        part2.scores(s2, C, rows, 130, 7, N);
        for (size_t j = 0; j < 7; j++) {
            double magnitude = 0;
            for (size_t n = 0; n < N; n++) magnitude += fabs(C[n] * rows[j * 130 + n]);
            dot_ok &= fabs(s1[j] - s2[j]) <= 2.0 * (double)N * 0x1p-24 * magnitude;
        }
        part1.weighted_sum(y1, B, rows, 130, 7, N);
        part2.weighted_sum(y2, B, rows, 130, 7, N);
        for (size_t n = 0; n < N; n++) {
            double magnitude = 0;
            for (size_t j = 0; j < 7; j++) magnitude += fabs(B[j] * rows[j * 130 + n]);
            dot_ok &= fabs(y1[n] - y2[n]) <= 2.0 * 7 * 0x1p-24 * magnitude;
        }
        for (int f = ACT_SILU; f <= ACT_GELU; f++) {
            part1.activate(y1, x, N, (Activation)f, C);
            part2.activate(y2, x, N, (Activation)f, C);
            for (size_t n = 0; n < N; n++) activate_ok &= fabsf(y1[n] - y2[n]) <= 1e-6f * (fabsf(y1[n]) + 1e-30f) * 8;
        }
    }
    check(steps_ok, "scan steps: Mamba-1 and Mamba-2, Part II's = Part I's within 1e-5 (N = 1 .. 118, 20 steps)", "");
    check(dot_ok, "attention's scores and weighted sums: Part II's = Part I's within float32 rounding (width 1 .. 118)", "");
    check(activate_ok, "activate (silu, softplus, gelu, times a second input): Part II's = Part I's within 8 ulp", "");
    /* softmax within 1e-6, scores spread wide enough that most exponentials underflow */
    int ok = 1;
    float worst_softmax = 0;
    for (size_t n = 1; n <= 131072; n += n < 40 ? 1 : n < 2100 ? 97 : 128000) { /* ..., 2077, then 130077 */
        float *p1 = checked_malloc(sizeof(float) * n), *p2 = checked_malloc(sizeof(float) * n);
        float spread = n % 2 ? 4.0f : 60.0f;
        for (size_t i = 0; i < n; i++) p1[i] = p2[i] = spread * random_float(&state);
        part1.softmax(p1, n);
        part2.softmax(p2, n);
        for (size_t i = 0; i < n; i++) {
            float e = fabsf(p1[i] - p2[i]);
            worst_softmax = e > worst_softmax ? e : worst_softmax;
            ok &= e <= 1e-6f;
        }
        free(p1);
        free(p2);
    }
    check(ok, "softmax: Part II's = Part I's within 1e-6 (n = 1 .. 2077 and 130077)", "worst %g", worst_softmax);
    free_pool(&pool);
}

/* The SSD scan in the chunked form of SSD (Dao & Gu 2024, section 6; mamba_ssm's ssd_minimal_discrete),
 * which transformers and mamba_ssm run in prefill: the oracle Part I's sequential scan is held to.
 * Within a chunk of Q tokens, with L[t] = sum_{r <= t in the chunk} dt_r A:
 *   y[t]  = sum_{s <= t} (C[t] . B[s]) exp(L[t] - L[s]) dt_s x[s]       (quadratic, inside the chunk)
 *         + exp(L[t]) C[t] . S                                          (the state the chunk began with)
 *         + D x[t]
 *   S    <- exp(L[Q-1]) S + sum_s exp(L[Q-1] - L[s]) dt_s x[s] B[s]^T    (carried to the next chunk)
 * (without the dt_s factors for llamba). One head, P channels, N states; in double. */
static void chunked_ssd(size_t T, size_t P, size_t N, size_t Q, const float *x, const float *B, const float *C, const float *dt,
                        float A, float D, int times_dt, double *S, double *y) {
    for (size_t c0 = 0; c0 < T; c0 += Q) {
        size_t n = T - c0 < Q ? T - c0 : Q;
        double L[64], running = 0;
        for (size_t t = 0; t < n; t++) L[t] = running += (double)dt[c0 + t] * A;
        for (size_t t = 0; t < n; t++)
            for (size_t p = 0; p < P; p++) {
                double sum = 0, carried = 0;
                for (size_t s = 0; s <= t; s++) {
                    double cb = 0;
                    for (size_t k = 0; k < N; k++) cb += (double)C[(c0 + t) * N + k] * B[(c0 + s) * N + k];
                    sum += cb * exp(L[t] - L[s]) * (times_dt ? dt[c0 + s] : 1.0) * x[(c0 + s) * P + p];
                }
                for (size_t k = 0; k < N; k++) carried += (double)C[(c0 + t) * N + k] * S[p * N + k];
                y[(c0 + t) * P + p] = sum + exp(L[t]) * carried + (double)D * x[(c0 + t) * P + p];
            }
        for (size_t p = 0; p < P; p++)
            for (size_t k = 0; k < N; k++) {
                double s_new = exp(L[n - 1]) * S[p * N + k];
                for (size_t s = 0; s < n; s++)
                    s_new += exp(L[n - 1] - L[s]) * (times_dt ? dt[c0 + s] : 1.0) * x[(c0 + s) * P + p] * B[(c0 + s) * N + k];
                S[p * N + k] = s_new;
            }
    }
}

/* Part I's scans against their oracles, on random inputs: the SSD scan (Mamba-2, and Llamba without dt
 * on the input) against the chunked form above, across chunk boundaries and carried states; and each
 * SSM head's implicit attention rows (ssd_implicit_row, mamba1_implicit_row: what entry masks and probes
 * use) against the scan they materialise, y[t] = sum_s M[t, s] v[s] + D v[t]. */
static void test_scans(void) {
    enum { T = 37, P = 3, N = 5, Q = 8, H = 2, G = 1 };
    Config c = {.family = FAMILY_MAMBA2, .ssm_inner = H * P, .ssm_state = N, .ssm_heads = H, .ssm_head_dim = P, .n_groups = G};
    size_t conv_dim = H * P + 2 * G * N;
    uint64_t state = 17;
    float xBC[T * (H * P + 2 * G * N)], dt[T * H], A[H] = {-0.7f, -1.0f};
    for (size_t i = 0; i < T * conv_dim; i++) xBC[i] = random_float(&state);
    for (size_t i = 0; i < T * H; i++) dt[i] = 0.05f + 0.5f * fabsf(random_float(&state));
    float D_values[H] = {0.8f, 1.3f};
    Weight D = {D_values, DTYPE_F32, 1, H};
    for (int times_dt = 1; times_dt >= 0; times_dt--) {
        float ssm_state[H * P * N] = {0}, y[T * H * P];
        SsdScan scan = {&reference_kernels, &c, A, D, times_dt, ssm_state, xBC, dt, T, y};
        ssd_scan_heads(&scan, 0, H);
        double worst = 0, worst_implicit = 0, scale = 1;
        for (size_t h = 0; h < H; h++) {
            float x[T * P], B[T * N], C[T * N], dt_h[T];
            for (size_t t = 0; t < T; t++) {
                for (size_t p = 0; p < P; p++) x[t * P + p] = xBC[t * conv_dim + h * P + p];
                for (size_t k = 0; k < N; k++) {
                    B[t * N + k] = xBC[t * conv_dim + H * P + k];
                    C[t * N + k] = xBC[t * conv_dim + H * P + G * N + k];
                }
                dt_h[t] = dt[t * H + h];
            }
            double S[P * N] = {0}, oracle[T * P];
            chunked_ssd(T, P, N, Q, x, B, C, dt_h, A[h], D_values[h], times_dt, S, oracle);
            for (size_t i = 0; i < T * P; i++) scale = fmax(scale, fabs(oracle[i]));
            for (size_t t = 0; t < T; t++)
                for (size_t p = 0; p < P; p++) worst = fmax(worst, fabs(y[t * H * P + h * P + p] - oracle[t * P + p]));
            for (size_t i = 0; i < P * N; i++) worst = fmax(worst, fabs(ssm_state[h * P * N + i] - S[i]));
            float row[T];
            for (size_t t = 0; t < T; t++) {
                ssd_implicit_row(&scan, h, t, row);
                for (size_t p = 0; p < P; p++) {
                    double sum = (double)D_values[h] * x[t * P + p];
                    for (size_t s = 0; s <= t; s++) sum += (double)row[s] * x[s * P + p];
                    worst_implicit = fmax(worst_implicit, fabs(sum - y[t * H * P + h * P + p]));
                }
            }
        }
        char name[200];
        snprintf(name, sizeof name, "ssd scan%s: Part I's sequential scan = the chunked SSD form (T %d, chunk %d), outputs and state",
                 times_dt ? "" : " (llamba: no dt on the input)", T, Q);
        check(worst <= 1e-5 * scale, name, "worst |diff| %.3g (scale %.3g)", worst, scale);
        snprintf(name, sizeof name, "ssd implicit attention%s: sum_s M[t, s] x[s] + D x[t] = the scan, every row",
                 times_dt ? "" : " (llamba)");
        check(worst_implicit <= 1e-5 * scale, name, "worst |diff| %.3g (scale %.3g)", worst_implicit, scale);
    }
    /* Mamba-1: each channel's implicit attention rows against the scan */
    enum { DI = 6, R = 2, N1 = 4 };
    float A_log[DI * N1], A1[DI * N1], D1[DI], u[T * DI], dt1[T * DI], dt_B_C[T * (R + 2 * N1)], state1[DI * N1] = {0}, y1[T * DI];
    for (size_t i = 0; i < DI * N1; i++) {
        A_log[i] = random_float(&state);
        A1[i] = -expf(A_log[i]); /* as mamba1_mixer gives the scan */
    }
    for (size_t i = 0; i < DI; i++) D1[i] = 1 + random_float(&state);
    for (size_t i = 0; i < T * DI; i++) {
        u[i] = random_float(&state);
        dt1[i] = 0.05f + 0.5f * fabsf(random_float(&state));
    }
    for (size_t i = 0; i < T * (R + 2 * N1); i++) dt_B_C[i] = random_float(&state);
    Config c1 = {.family = FAMILY_MAMBA, .ssm_inner = DI, .ssm_state = N1, .dt_rank = R};
    Mamba1 w = {.A_log = {A_log, DTYPE_F32, DI, N1}, .D = {D1, DTYPE_F32, 1, DI}};
    Mamba1Scan scan1 = {&reference_kernels, &c1, &w, A1, state1, u, dt1, dt_B_C, T, y1};
    mamba1_scan_channels(&scan1, 0, DI);
    double worst = 0, scale = 1;
    float row[T];
    for (size_t d = 0; d < DI; d++)
        for (size_t t = 0; t < T; t++) {
            mamba1_implicit_row(&scan1, d, t, row);
            double sum = (double)D1[d] * u[t * DI + d];
            for (size_t s = 0; s <= t; s++) sum += (double)row[s] * u[s * DI + d];
            worst = fmax(worst, fabs(sum - y1[t * DI + d]));
            scale = fmax(scale, fabs(y1[t * DI + d]));
        }
    check(worst <= 1e-5 * scale, "mamba-1 implicit attention: sum_s M[t, s] u[s] + D u[t] = the scan, every channel and row",
          "worst |diff| %.3g (scale %.3g)", worst, scale);
}

/* ---- harnesses: gna's log against a reference log (weights_tools/fixtures/make_harness_fixtures.py), line by line */
typedef struct {
    char *text;
    int n;
    JsonDocument *docs;      /* [n] one per line */
} JsonLines;

static int read_json_lines(const char *path, JsonLines *out, int skip_first) {
    size_t size;
    memset(out, 0, sizeof *out);
    if (read_file(path, &out->text, &size) != GNA_OK) return 0;
    out->docs = checked_calloc(size / 2 + 1, sizeof(JsonDocument));
    int line = 0;
    for (char *p = out->text; p < out->text + size; line++) {
        char *end = strchr(p, '\n');
        if (!end) end = out->text + size;
        if (line >= skip_first) {
            if (parse_json(&out->docs[out->n], p, (size_t)(end - p), path) != GNA_OK) return 0;
            out->n++;
        }
        p = end + 1;
    }
    return 1;
}

static void free_json_lines(JsonLines *j) {
    for (int i = 0; i < j->n; i++) free_json(&j->docs[i]);
    free(j->docs);
    free(j->text);
}

static const JsonValue *json_at(const JsonValue *array, int i) {
    const JsonValue *e = array && array->type == JSON_ARRAY ? array->first : NULL;
    while (e && i-- > 0) e = e->next;
    return e;
}

static int same_string(const JsonValue *a, const JsonValue *b) {
    return a && b && a->type == JSON_STRING && b->type == JSON_STRING && a->length == b->length &&
           memcmp(a->string, b->string, a->length) == 0;
}

/* A choice's log-likelihood and is-greedy flag, from a reference line (lls, is_greedy) or from a
 * line of gna's log (filtered_resps: [[ll, is_greedy], ...]) */
static double line_ll(const JsonValue *line, int c) {
    const JsonValue *lls = json_get(line, "lls");
    return lls ? json_at(lls, c)->number : json_at(json_at(json_get(line, "filtered_resps"), c), 0)->number;
}

static int line_greedy(const JsonValue *line, int c) {
    const JsonValue *greedy = json_get(line, "is_greedy");
    return (greedy ? json_at(greedy, c) : json_at(json_at(json_get(line, "filtered_resps"), c), 1))->type == JSON_TRUE;
}

/* two JSON values equal: the same type, numbers, strings and members in order */
static int json_equal(const JsonValue *a, const JsonValue *b) {
    if (!a || !b || a->type != b->type) return a == b;
    if (a->type == JSON_NUMBER) return a->number == b->number;
    if (a->type == JSON_STRING) return same_string(a, b);
    if (a->type != JSON_ARRAY && a->type != JSON_OBJECT) return 1;
    if (a->length != b->length) return 0;
    for (const JsonValue *x = a->first, *y = b->first; x && y; x = x->next, y = y->next)
        if ((a->type == JSON_OBJECT && strcmp(x->key, y->key) != 0) || !json_equal(x, y)) return 0;
    return 1;
}

/* generate_until logs (gsm8k): the same contexts and targets; the same response, filters and exact
 * matches, unless the reference's greedy choice was a near tie somewhere (its min_gap, the smallest gap
 * between the top two logits of a step, within float32's reach of the logits) */
static int command_generation_log(const JsonLines *expected, const JsonLines *got) {
    int prompts_ok = expected->n == got->n, answers_ok = prompts_ok, near_ties = 0;
    char where[256] = "";
    if (!prompts_ok) snprintf(where, sizeof where, "%d reference lines, %d in the log", expected->n, got->n);
    for (int i = 0; i < expected->n && i < got->n; i++) {
        const JsonValue *e = expected->docs[i].root, *g = got->docs[i].root;
        if (!same_string(json_get(e, "task"), json_get(g, "task")) || !same_string(json_get(e, "target"), json_get(g, "target")) ||
            !same_string(json_at(json_at(json_get(e, "arguments"), 0), 0), json_at(json_at(json_get(g, "arguments"), 0), 0))) {
            if (prompts_ok) snprintf(where, sizeof where, "line %d: the task, target or context differs", i + 1);
            prompts_ok = 0;
            continue;
        }
        const JsonValue *gap = json_get(e, "min_gap");
        if (gap && gap->number < 1e-3) { /* a near tie: float32 may take the other token */
            near_ties++;
            continue;
        }
        int same = same_string(json_at(json_at(json_get(e, "resps"), 0), 0), json_at(json_at(json_get(g, "resps"), 0), 0));
        for (int f = 0; f < 2 && same; f++) {
            const char *filter = f ? "flexible-extract" : "strict-match";
            char key[64];
            snprintf(key, sizeof key, "exact_match,%s", filter);
            same = same_string(json_get(json_get(e, "filtered_resps"), filter), json_get(json_get(g, "filtered_resps"), filter)) &&
                   json_get(e, key) && json_get(g, key) && json_get(e, key)->number == json_get(g, key)->number;
        }
        if (!same && answers_ok) snprintf(where, sizeof where, "line %d: the response, an answer or an exact match differs", i + 1);
        answers_ok &= same;
    }
    check(prompts_ok, "contexts and targets byte-identical to the reference's", "%s", where);
    check(prompts_ok && answers_ok, "greedy responses, filtered answers and exact matches equal the reference's", "%s", where);
    printf("     %d questions; %d near ties left uncompared\n", expected->n, near_ties);
    return n_failed ? 1 : 0;
}

/* EXPECTED: the reference's lines {task, doc_id, arguments, lls, is_greedy, target, acc[, acc_norm]},
 * or another gna log; GOT: gna's --log (a gna log's first line, the settings, is skipped). Prompts must be byte-identical, log-likelihoods
 * within the fidelity tolerance, and acc, acc_norm and is_greedy equal wherever the reference's
 * margin is wider than that tolerance (a near-tie may fall either way). */
static int command_harness_log(const char *expected_path, const char *got_path) {
    JsonLines expected, got;
    char *first = NULL;
    size_t first_size = 0;
    int expected_is_log = read_file(expected_path, &first, &first_size) == GNA_OK && strncmp(first, "{\"gna\": ", 8) == 0;
    free(first);
    if (!read_json_lines(expected_path, &expected, expected_is_log) || !read_json_lines(got_path, &got, 1)) {
        check(0, got_path, "cannot read %s or %s: %s", expected_path, got_path, gna_error());
        return 1;
    }
    if (expected.n > 0 && json_get(expected.docs[0].root, "target") && json_get(expected.docs[0].root, "target")->type == JSON_STRING) {
        int status = command_generation_log(&expected, &got);
        free_json_lines(&expected);
        free_json_lines(&got);
        return status;
    }
    int prompts_ok = expected.n == got.n, lls_ok = prompts_ok, choices_ok = prompts_ok, near_ties = 0, compared = 0;
    double worst = 0, worst_tolerance = 0;
    char where[256] = "";
    if (!prompts_ok) snprintf(where, sizeof where, "%d reference lines, %d in the log", expected.n, got.n);
    for (int i = 0; i < expected.n && i < got.n; i++) {
        const JsonValue *e = expected.docs[i].root, *g = got.docs[i].root;
        const JsonValue *e_args = json_get(e, "arguments"), *g_args = json_get(g, "arguments");
        int n = e_args ? (int)e_args->length : 0, same = same_string(json_get(e, "task"), json_get(g, "task")) &&
            json_get(g, "doc_id") && json_get(e, "doc_id")->number == json_get(g, "doc_id")->number && g_args &&
            (int)g_args->length == n && json_get(e, "target")->number == json_get(g, "target")->number;
        for (int c = 0; same && c < n; c++)
            same = same_string(json_at(json_at(e_args, c), 0), json_at(json_at(g_args, c), 0)) &&
                   same_string(json_at(json_at(e_args, c), 1), json_at(json_at(g_args, c), 1));
        if (!same) {
            if (prompts_ok) snprintf(where, sizeof where, "line %d (%s %g): the task, document or prompts differ", i + 1,
                                     json_get(e, "task")->string, json_get(e, "doc_id")->number);
            prompts_ok = 0;
            continue;
        }
        /* the reference's margin between its best two choices, plain and length-normalised */
        double best = -INFINITY, second = -INFINITY;
        for (int c = 0; c < n; c++) {
            double ll = line_ll(e, c), ll_got = line_ll(g, c);
            double tolerance = relative_tolerance * fmax(1.0, fabs(ll)), diff = fabs(ll - ll_got);
            if (!(diff <= tolerance)) lls_ok = 0;
            if (!(diff / tolerance <= worst / fmax(worst_tolerance, 1e-300)) || c + i == 0) { worst = diff; worst_tolerance = tolerance; }
            compared++;
            if (ll > best) { second = best; best = ll; } else if (ll > second) second = ll;
            if (line_greedy(e, c) != line_greedy(g, c)) near_ties++; /* a row's argmax; acc checks the choice */
        }
        const JsonValue *e_positions = json_get(e, "mask_positions");
        if (e_positions && !json_equal(e_positions, json_get(g, "mask_positions"))) {
            if (prompts_ok) snprintf(where, sizeof where, "line %d: the positions the mask named differ", i + 1);
            prompts_ok = 0;
        }
        int tie = n > 1 && best - second <= 2 * relative_tolerance * fmax(1.0, fabs(best));
        if (tie) near_ties++;
        if (!tie && json_get(e, "acc")->number != json_get(g, "acc")->number) {
            if (choices_ok) snprintf(where, sizeof where, "line %d: acc %g, the reference's %g", i + 1, json_get(g, "acc")->number,
                                     json_get(e, "acc")->number);
            choices_ok = 0;
        }
        const JsonValue *e_norm = json_get(e, "acc_norm"), *g_norm = json_get(g, "acc_norm");
        if (e_norm && (!g_norm || (!tie && e_norm->number != g_norm->number))) {
            /* acc_norm's own margin is not recorded; a length-normalised near-tie would need it */
            if (choices_ok) snprintf(where, sizeof where, "line %d: acc_norm differs", i + 1);
            choices_ok = 0;
        }
    }
    check(prompts_ok, "prompts, continuations (and named mask positions) identical to the reference's", "%s", where);
    check(lls_ok && prompts_ok, "log-likelihoods within the fidelity tolerance", "worst |diff| %.3g (tolerance %.3g)", worst, worst_tolerance);
    check(choices_ok && prompts_ok, "acc and acc_norm equal the reference's", "%s", where);
    printf("     %d questions, %d log-likelihoods, worst |diff| %.3g against a tolerance of %.3g; %d near-ties or greedy flips\n",
           expected.n, compared, worst, worst_tolerance, near_ties);
    free_json_lines(&expected);
    free_json_lines(&got);
    return n_failed ? 1 : 0;
}

/* EXPECTED.json and GOT.json: every task and group of the reference's "results", same acc (and
 * acc_norm) and stderr, to 1e-9 ("N/A" where the reference has it) */
static int command_results(const char *expected_path, const char *got_path) {
    JsonDocument e, g;
    if (load_json(&e, expected_path) != GNA_OK || load_json(&g, got_path) != GNA_OK) {
        check(0, got_path, "%s", gna_error());
        return 1;
    }
    const JsonValue *er = json_get(e.root, "results"), *gr = json_get(g.root, "results");
    int ok = er && gr && er->length == gr->length, n = 0;
    char where[256] = "";
    if (!ok) snprintf(where, sizeof where, "%zu reference entries, %zu in gna's", er ? er->length : 0, gr ? gr->length : 0);
    for (const JsonValue *task = er ? er->first : NULL; task && ok; task = task->next)
        for (const JsonValue *metric = task->first; metric && ok; metric = metric->next, n++) {
            const JsonValue *mine = json_get(json_get(gr, task->key), metric->key);
            if (metric->type == JSON_STRING) ok = same_string(metric, mine);
            else ok = mine && mine->type == JSON_NUMBER && fabs(mine->number - metric->number) <= 1e-9;
            if (!ok) snprintf(where, sizeof where, "%s %s: reference %s%g, gna %s%g", task->key, metric->key,
                              metric->type == JSON_STRING ? metric->string : "", metric->number,
                              mine && mine->type == JSON_STRING ? mine->string : "", mine ? mine->number : 0.0);
        }
    check(ok, "results (acc, stderr per task and group) equal the reference's lm-eval aggregation", "%s", where);
    printf("     %d values compared\n", n);
    free_json(&e);
    free_json(&g);
    return ok ? 0 : 1;
}

/* gna ARGS... --log, run twice through gna_main: with the caches reused (a subject's few-shot prefix
 * once, each choice from its context) and with every request run whole from position 0. The logs
 * must agree as a reference would: the same prompts, log-likelihoods within the fidelity tolerance
 * (a chunk of other length rounds differently in the matmul tiles), the same choices. */
static int command_reuse(int argc, char **argv, const char *tmp) {
    char log_a[512], log_b[512];
    snprintf(log_a, sizeof log_a, "%s/reuse_a.jsonl", tmp);
    snprintf(log_b, sizeof log_b, "%s/reuse_b.jsonl", tmp);
    char **args = checked_calloc((size_t)argc + 6, sizeof(char *));
    args[0] = "gna";
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    args[argc + 1] = "--log";
    args[argc + 3] = "-q";
    int status = 0;
    for (int pass = 0; pass < 2; pass++) {
        remove(pass ? log_b : log_a);
        args[argc + 2] = pass ? log_b : log_a;
        args[argc + 4] = "--no-reuse";
        status |= gna_main(argc + 4 + pass, args); /* its results table goes to stdout, among the checks */
    }
    free(args);
    check(status == 0, "the runs with and without cache reuse", "status %d: %s", status, gna_error());
    printf("     reusing the caches (few-shot prefix, each choice from its context) against running every request whole:\n");
    return status ? 1 : command_harness_log(log_b, log_a);
}

/* EXPECTED.json and GOT.json of `gna heads`: every head's aggregate, gold mass and gather score
 * within 1e-4 of the reference's (sums of attention probabilities, so absolute), the same accuracy,
 * the same ablated accuracies, and the same pairs with the same accuracies */
static int command_heads_json(const char *expected_path, const char *got_path) {
    JsonDocument e, g;
    if (load_json(&e, expected_path) != GNA_OK || load_json(&g, got_path) != GNA_OK) {
        check(0, got_path, "%s", gna_error());
        return 1;
    }
    const JsonValue *eh = json_get(e.root, "heads"), *gh = json_get(g.root, "heads");
    int scores_ok = eh && gh && eh->length == gh->length, ablations_ok = scores_ok, n = 0;
    double worst = 0;
    char where[256] = "";
    for (const JsonValue *x = eh ? eh->first : NULL; x && scores_ok; x = x->next, n++) {
        const JsonValue *y = NULL;
        for (const JsonValue *c = gh->first; c && !y; c = c->next)
            if (same_string(json_get(c, "head"), json_get(x, "head"))) y = c;
        if (!y) { scores_ok = 0; snprintf(where, sizeof where, "%s is not in gna's list", json_get(x, "head")->string); break; }
        static const char *const keys[] = {"aggregate", "gold_mass", "gather"};
        for (int k = 0; k < 3; k++) {
            double d = fabs(json_get(x, keys[k])->number - json_get(y, keys[k])->number);
            if (!(d <= worst)) worst = d;
            if (!(d <= 1e-4)) { scores_ok = 0; snprintf(where, sizeof where, "%s %s differs by %.3g", json_get(x, "head")->string, keys[k], d); }
        }
        const JsonValue *a = json_get(x, "ablated_accuracy"), *b = json_get(y, "ablated_accuracy");
        if ((a->type == JSON_NULL) != (b->type == JSON_NULL) || (a->type == JSON_NUMBER && fabs(a->number - b->number) > 1e-12)) {
            if (ablations_ok) snprintf(where, sizeof where, "%s: ablated accuracy differs", json_get(x, "head")->string);
            ablations_ok = 0;
        }
    }
    const JsonValue *ep = json_get(e.root, "pairs"), *gp = json_get(g.root, "pairs");
    int pairs_ok = ep && gp && ep->length == gp->length;
    for (const JsonValue *x = ep ? ep->first : NULL, *y = gp ? gp->first : NULL; x && y && pairs_ok; x = x->next, y = y->next)
        pairs_ok = same_string(json_get(x, "gather"), json_get(y, "gather")) && same_string(json_get(x, "aggregate"), json_get(y, "aggregate")) &&
                   fabs(json_get(x, "ablated_accuracy")->number - json_get(y, "ablated_accuracy")->number) <= 1e-12;
    int accuracy_ok = fabs(json_get(e.root, "accuracy")->number - json_get(g.root, "accuracy")->number) <= 1e-12;
    check(scores_ok, "every head's aggregate, gold mass and gather score within 1e-4 of the reference's", "%s", where);
    check(ablations_ok && accuracy_ok, "accuracy and each candidate's ablated accuracy equal the reference's", "%s", where);
    check(pairs_ok, "the gather -> aggregate pairs and their ablated accuracies equal the reference's", "%zu pairs, gna %zu",
          ep ? ep->length : 0, gp ? gp->length : 0);
    printf("     %d heads, worst score |diff| %.3g\n", n, worst);
    free_json(&e);
    free_json(&g);
    return n_failed ? 1 : 0;
}

/* gna_run_record through gna.h: rows of softmax probabilities; a failed call leaves the heads as they
 * were (it once freed their rows: a use after free in the next forward); heads NULL records nothing */
static void test_record(void) {
    gna_model *m;
    gna_run *run;
    gna_cache *cache;
    int tokens[] = {1, 2, 3, 4}, rows[] = {0, 3};
    float maps[2 * 4] = {0}, again[2 * 4]; /* row 0 has one entry: the rest stays as it was */
    if (gna_load("test/fixtures/llama_gqa_llama3", &m) != GNA_OK || gna_run_new(m, 0, NULL, &run) != GNA_OK) {
        check(0, "record: load", "%s", gna_error());
        return;
    }
    int status = gna_run_record(run, "L0H0", rows, 2, 4, maps);
    if (status == GNA_OK && (status = gna_cache_new(run, 4, &cache)) == GNA_OK) {
        status = gna_forward(run, cache, tokens, 4, NULL);
        gna_cache_free(cache);
    }
    double sum3 = maps[4] + maps[5] + maps[6] + maps[7];
    check(status == GNA_OK && maps[0] == 1 && maps[1] == 0 && fabs(sum3 - 1) < 1e-6, "record: L0H0's rows 0 and 3 are probabilities",
          "status %d, row 0 = %g %g, row 3 sums to %g", status, maps[0], maps[1], sum3);
    memcpy(again, maps, sizeof maps);
    int refused = gna_run_record(run, "L9H0", rows, 2, 4, maps);
    memset(maps, 0, sizeof maps);
    status = gna_cache_new(run, 4, &cache);
    if (status == GNA_OK) status = gna_forward(run, cache, tokens, 4, NULL), gna_cache_free(cache);
    check(refused == GNA_BAD_INPUT && status == GNA_OK && memcmp(maps, again, sizeof maps) == 0,
          "record: a refused spec leaves the heads recording as before", "refused %d, status %d", refused, status);
    gna_run_record(run, NULL, NULL, 0, 0, NULL);
    memset(maps, 0, sizeof maps);
    status = gna_cache_new(run, 4, &cache);
    if (status == GNA_OK) status = gna_forward(run, cache, tokens, 4, NULL), gna_cache_free(cache);
    int untouched = 1;
    for (int i = 0; i < 8; i++) untouched &= maps[i] == 0;
    check(status == GNA_OK && untouched, "record: heads NULL records nothing", "status %d", status);
    gna_run_free(run);
    gna_free(m);
}

/* Out of memory is the caller's to handle (issue 25). Run under `ulimit -v`: a cache too large for the
 * limit makes gna_cache_new return GNA_FAILURE with one line, the process goes on, and so does the
 * library (what the failed call had allocated is not given back, so this runs without LeakSanitizer). */
static int command_out_of_memory(const char *dir) {
    gna_model *m;
    gna_run *run;
    gna_cache *huge = NULL, *small = NULL;
    if (gna_load(dir, &m) != GNA_OK || gna_run_new(m, 0, NULL, &run) != GNA_OK) {
        check(0, dir, "load: %s", gna_error());
        return 1;
    }
    int status = gna_cache_new(run, INT_MAX, &huge);
    check(status == GNA_FAILURE && !huge && strncmp(gna_error(), "out of memory: asked for ", 25) == 0,
          "out of memory: gna_cache_new returns GNA_FAILURE with one line, and the process goes on", "status %d: %s", status,
          gna_error());
    int tokens[] = {1, 2};
    status = gna_cache_new(run, 2, &small);
    if (status == GNA_OK) status = gna_forward(run, small, tokens, 2, NULL);
    check(status == GNA_OK && gna_cache_length(small) == 2, "out of memory: the library then runs a sequence as before",
          "status %d: %s", status, gna_error());
    gna_cache_free(small);
    gna_run_free(run);
    gna_free(m);
    return n_failed ? 1 : 0;
}

/* ---- gsm8k's definitions (Part I) against Python's own: its filters and exact match on hand-made
 * responses (test/fixtures/harness/gsm8k_filters.jsonl, Python's re), and random.Random(seed).sample
 * (python_random.jsonl: six calls in a row on one generator) */
static int command_tasks(const char *filters_path, const char *random_path) {
    JsonLines filters, draws;
    if (!read_json_lines(filters_path, &filters, 0) || !read_json_lines(random_path, &draws, 0)) {
        check(0, "tasks: the fixtures", "%s", gna_error());
        return 1;
    }
    int ok = 1, n = 0;
    char where[512] = "";
    for (int i = 0; i < filters.n; i++, n++) {
        const JsonValue *v = filters.docs[i].root;
        const char *response = json_get(v, "response")->string, *target = json_get(v, "target")->string;
        Bytes got[2] = {{0}, {0}};
        gsm8k_strict_match(response, &got[0]);
        gsm8k_flexible_extract(response, &got[1]);
        for (int f = 0; f < 2; f++) {
            const char *name = f ? "flexible-extract" : "strict-match";
            char key[64];
            snprintf(key, sizeof key, "exact_match,%s", name);
            double match = gsm8k_exact_match(got[f].data, target);
            if (ok && (strcmp(got[f].data, json_get(v, name)->string) != 0 || match != json_get(v, key)->number)) {
                ok = 0;
                snprintf(where, sizeof where, "line %d: %s \"%s\" (Python: \"%s\"), exact_match %g", i + 1, name, got[f].data,
                         json_get(v, name)->string, match);
            }
            free(got[f].data);
        }
    }
    check(ok, "gsm8k's strict-match, flexible-extract and exact_match equal Python's re on every response", "%s", where);
    printf("     %d responses\n", n);
    ok = 1, n = 0;
    for (int i = 0; i < draws.n; i++) {
        const JsonValue *v = draws.docs[i].root;
        PythonRandom rnd;
        python_seed(&rnd, (uint32_t)json_get(v, "seed")->number);
        size_t population = (size_t)json_get(v, "population")->number, k = (size_t)json_get(v, "k")->number, got[64];
        for (const JsonValue *call = json_get(v, "draws")->first; call && ok; call = call->next, n++) {
            python_sample(&rnd, population, k, got);
            size_t j = 0;
            for (const JsonValue *e = call->first; e; e = e->next, j++) ok &= e->number == (double)got[j];
            if (!ok) snprintf(where, sizeof where, "line %d: seed %g, sample(range(%zu), %zu) differs", i + 1, json_get(v, "seed")->number,
                              population, k);
        }
    }
    check(ok, "Python's random.Random(seed).sample, six calls in a row: the same indices", "%s", where);
    printf("     %d samples\n", n);
    free_json_lines(&filters);
    free_json_lines(&draws);
    return n_failed ? 1 : 0;
}

/* ---- gna.h's arguments (issue 32): a NULL, a negative count, a cache of another run, a run that
 * another thread is running, a model freed before its runs: GNA_BAD_INPUT or a working call, never a
 * crash; and a log held by one thread is refused to another of the same process */
static void *forward_in_thread(void *arg) {
    void **a = arg;
    *(int *)a[3] = gna_forward(a[0], a[1], a[2], 4, NULL);
    return NULL;
}

static int command_api(const char *dir, const char *tmp) {
    gna_model *m = NULL, *other = NULL;
    gna_run *run = NULL, *run2 = NULL;
    gna_cache *cache = NULL, *cache2 = NULL;
    gna_tokenizer *t = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (gna_load(dir, &m) || gna_load(dir, &other) || gna_run_new(m, 0, NULL, &run) || gna_run_new(other, 0, NULL, &run2) ||
        gna_cache_new(run, 16, &cache) || gna_cache_new(run2, 16, &cache2) || gna_tokenizer_load(path, &t)) {
        check(0, "api: the model loads", "%s", gna_error());
        return 1;
    }
    int ids[4] = {1, 2, 3, 4}, n = 0, *out_ids = NULL, width = 0, heads = 0;
    char *text = NULL;
    size_t length = 0;
    float values[64];
    gna_model *no_model;
    gna_run *no_run;
    gna_cache *no_cache;
    gna_tokenizer *no_tokenizer;
    struct { const char *what; int status; } nulls[] = {
        {"gna_load(NULL dir)", gna_load(NULL, &no_model)},
        {"gna_load(NULL out)", gna_load(dir, NULL)},
        {"gna_run_new(NULL model)", gna_run_new(NULL, 0, NULL, &no_run)},
        {"gna_run_new(NULL option)", gna_run_new(m, 1, (const char *const[]){NULL}, &no_run)},
        {"gna_count_heads(NULL spec)", gna_count_heads(run, NULL, &heads)},
        {"gna_run_record(no matrices)", gna_run_record(run, "L0H0", NULL, 0, 4, NULL)},
        {"gna_run_record(negative rows)", gna_run_record(run, "L0H0", ids, -3, 4, values)},
        {"gna_site_width(NULL site)", gna_site_width(run, NULL, &width)},
        {"gna_run_tap(NULL run)", gna_run_tap(NULL, GNA_CAPTURE, "L0", ids, 1, values)},
        {"gna_unembed(negative rows)", gna_unembed(run, values, -1, values)},
        {"gna_unembed(NULL hidden)", gna_unembed(run, NULL, 1, values)},
        {"gna_cache_new(NULL run)", gna_cache_new(NULL, 4, &no_cache)},
        {"gna_cache_state(NULL cache)", gna_cache_state(NULL, 0, GNA_CAPTURE, NULL, &n)},
        {"gna_forward(NULL tokens)", gna_forward(run, cache, NULL, 4, NULL)},
        {"gna_forward(NULL cache)", gna_forward(run, NULL, ids, 4, NULL)},
        {"gna_tokenizer_load(NULL path)", gna_tokenizer_load(NULL, &no_tokenizer)},
        {"gna_tokenize(NULL text)", gna_tokenize(t, NULL, 3, 0, &out_ids, &n)},
        {"gna_detokenize(negative count)", gna_detokenize(t, ids, -5, 0, &text, &length)},
        {"gna_detokenize(NULL ids)", gna_detokenize(t, NULL, 2, 0, &text, &length)},
        {"gna_main(NULL argv)", gna_main(2, NULL)},
        {"gna_task(NULL model)", gna_task(NULL, "kv", 0, NULL)},
        {"gna_task(NULL option)", gna_task(m, "kv", 1, (const char *const[]){NULL})},
        {"gna_task(logits)", gna_task(m, "logits", 0, NULL)},
        {"gna_task(-m)", gna_task(m, "kv", 2, (const char *const[]){"-m", dir})},
    };
    int all = 1;
    char which[256] = "";
    for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
        if (nulls[i].status != GNA_BAD_INPUT && all) all = 0, snprintf(which, sizeof which, "%s gave %d", nulls[i].what, nulls[i].status);
    check(all, "api: NULLs, negative counts, a command that is not a task and -m for gna_task: 24 calls of 15 functions, each GNA_BAD_INPUT", "%s", which);
    check(gna_vocab_size(NULL) == -1 && gna_cache_length(NULL) == -1, "api: gna_vocab_size and gna_cache_length of NULL are -1", "-");
    { /* run options that would hide a mistake; a head replaced by a donor's is no tap site; a count may be 0 */
        char replace[1100];
        snprintf(replace, sizeof replace, "L1H0=%s", dir);
        gna_run *r = NULL;
        int twice = gna_run_new(m, 4, (const char *const[]){"--mask", "L0H0", "--mask", "L0H1"}, &no_run);
        int threads = gna_run_new(m, 4, (const char *const[]){"--threads", "1", "--threads", "2"}, &no_run);
        int none = gna_run_new(m, 2, (const char *const[]){"--mask", "L*S*"}, &no_run);
        int ssm_heads = -1, counted = gna_count_heads(run, "L*S*", &ssm_heads);
        int made = gna_run_new(m, 2, (const char *const[]){"--replace", replace}, &r);
        int site = made == GNA_OK ? gna_site_width(r, "L1H0", &width) : made, other = made == GNA_OK ? gna_site_width(r, "L1H1", &width) : made;
        check(twice == GNA_BAD_INPUT && threads == GNA_BAD_INPUT && none == GNA_BAD_INPUT && counted == GNA_OK && ssm_heads == 0 &&
                  site == GNA_BAD_INPUT && other == GNA_OK,
              "api: --mask or --threads twice and a mask naming no heads refused; L*S* of a Llama counts 0; a replaced head is no site",
              "twice %d, threads %d, none %d, count %d (%d), site %d, other %d: %s", twice, threads, none, counted, ssm_heads, site, other,
              gna_error());
        gna_run_free(r);
    }
    int status = gna_forward(run, cache2, ids, 4, NULL);
    check(status == GNA_BAD_INPUT && strstr(gna_error(), "another run"), "api: a cache made for another run (another model's) is refused",
          "status %d: %s", status, gna_error());
    gna_cache *cache3;
    gna_run *run3;
    gna_run_new(m, 2, (const char *const[]){"--drop", "0"}, &run3);
    gna_cache_new(run3, 16, &cache3);
    status = gna_forward(run, cache3, ids, 4, NULL);
    check(status == GNA_BAD_INPUT, "api: a cache made for another run of the same model (--drop 0) is refused", "status %d", status);
    gna_cache_free(cache3);
    gna_run_free(run3);
    /* a run that another thread runs: claimed by hand here (deterministic), then a real second thread */
    run->busy = 1;
    status = gna_forward(run, cache, ids, 4, NULL);
    run->busy = 0;
    check(status == GNA_BAD_INPUT && strstr(gna_error(), "another thread"), "api: a run another thread is running is refused, no deadlock",
          "status %d: %s", status, gna_error());
#if GNA_THREADS
    int results[2] = {-1, -1};
    gna_cache *caches[2] = {cache, NULL};
    gna_cache_new(run, 16, &caches[1]);
    pthread_t threads[2];
    void *args[2][4] = {{run, caches[0], ids, &results[0]}, {run, caches[1], ids, &results[1]}};
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, forward_in_thread, args[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    check((results[0] == GNA_OK || results[0] == GNA_BAD_INPUT) && (results[1] == GNA_OK || results[1] == GNA_BAD_INPUT) &&
              (results[0] == GNA_OK || results[1] == GNA_OK),
          "api: two threads on one run: each call runs or is refused, none hangs", "%d %d", results[0], results[1]);
    gna_cache_free(caches[1]);
#endif
    /* the model freed before its run: the run goes on, and the model goes with the run */
    gna_cache_free(cache);
    gna_free(m);
    gna_cache_new(run, 16, &cache);
    float *logits = malloc(sizeof(float) * 4 * (size_t)gna_vocab_size(other));
    status = gna_forward(run, cache, ids, 4, logits);
    check(status == GNA_OK, "api: a run works after gna_free of its model (the model goes with its last run)", "%s", gna_error());
    free(logits);
    /* a log held by one thread of this process is refused to another (the record lock is per process) */
    char log_path[1024];
    snprintf(log_path, sizeof log_path, "%s/api_log.jsonl", tmp);
    remove(log_path);
    FILE *first = NULL, *second = NULL;
    int a = open_log(log_path, &first), b = open_log(log_path, &second);
    check(a == GNA_OK && b == GNA_BAD_INPUT && !second, "api: a log this process holds is refused to its other threads", "%d %d", a, b);
    if (first) close_log(first);
    check(open_log(log_path, &first) == GNA_OK, "api: the log is free again once closed", "%s", gna_error());
    if (first) close_log(first);
    gna_cache_free(cache);
    gna_cache_free(cache2);
    gna_run_free(run);
    gna_run_free(run2);
    gna_free(other);
    gna_tokenizer_free(t);
    return n_failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "unit") == 0) {
        test_json();
        test_number_formats();
        test_rope();
        test_safetensors(argv[2]);
        test_npy(argv[2]);
        test_tokens();
        test_unicode();
        test_nfc();
        test_tokenizer(argv[2]);
        test_added_token_matching(argv[2]);
        test_record();
        test_bf16_rounding();
        test_matmul();
        test_matmul_identity();
        test_leaves();
        test_scans();
        return n_failed ? 1 : 0;
    }
    if (argc == 4 && strcmp(argv[1], "tokenizer") == 0) return command_tokenizer(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "compare") == 0) return command_compare(argv[2], argv[3]);
    if (argc == 6 && strcmp(argv[1], "compare") == 0 && strcmp(argv[4], "--bf16") == 0) {
        relative_tolerance = bf16_relative_tolerance(argv[5]);
        return command_compare(argv[2], argv[3]);
    }
    if (argc == 3 && strcmp(argv[1], "chunks") == 0) return command_chunks(argv[2]);
    if (argc == 4 && strcmp(argv[1], "pair") == 0) return command_pair(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "properties") == 0) return command_properties(argv[2], atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "harness") == 0) return command_harness_log(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "results") == 0) return command_results(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "heads") == 0) return command_heads_json(argv[2], argv[3]);
    if (argc > 4 && strcmp(argv[1], "reuse") == 0) return command_reuse(argc - 3, argv + 3, argv[2]);
    if (argc == 3 && strcmp(argv[1], "oom") == 0) return command_out_of_memory(argv[2]);
    if (argc == 4 && strcmp(argv[1], "api") == 0) return command_api(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "tasks") == 0) return command_tasks(argv[2], argv[3]);
    fprintf(stderr, "usage: gna_test unit TMPDIR | compare REF.npy OUT.npy [--bf16 DIR] | chunks DIR | pair DIR DIR | properties DIR LAYER"
                    " | tokenizer JSON EXPECTED.jsonl\n");
    return 2;
}
