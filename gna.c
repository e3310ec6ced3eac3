/* gna.c - audit the Gather-and-Aggregate mechanism of language models on a plain CPU.
 *
 * One file loads Hugging Face checkpoints (Llama, Mamba, Falcon-Mamba, Mamba-2, Zamba2, Llamba) and
 * their tokenizers straight from their folders, runs them faithfully to transformers, ablates heads,
 * masks attention entries, records real and implicit attention, and runs the KV-retrieval and MMLU
 * harnesses of Bick, Xing, Gu, "Understanding the Skill Gap in Recurrent Language Models: The Role of
 * the Gather-and-Aggregate Mechanism" (ICML 2025, arXiv 2504.18574): "the paper" below, and "the
 * authors' code" its release, github.com/goombalab/Gather-and-Aggregate.
 *
 * Two parts and an appendix:
 *   PART I, the model: what gna computes, in plain loops - no #if, no intrinsics, no threads.
 *     Every number gna gives comes from these equations; `--reference` runs them and nothing else.
 *   PART II, machinery: faster kernels that Part I may run instead of its own (vector instructions,
 *     threads; the tests hold each to Part I's), the scorer's cache reuse, the file formats (JSON,
 *     safetensors, tokenizer.json, CSV, .npy, SVG), harness logs and the command line. Nothing in
 *     Part II changes a number beyond the fidelity tolerance.
 *   APPENDIX: generated Unicode tables and word lists.
 *
 * AUDIT MAP: what the paper's results rest on, and the function that computes it.
 *   head removal: zero the head's slice of the out-projection input (the paper's ablation, the authors'
 *     utils.remove_heads); --mask L17H24, L17H24@-1             ablate_heads, called by every mixer
 *                                                              just before its out-projection
 *   attention entries zeroed after the softmax, not renormalised; --mask L17H24@-1:5-9
 *                                                              mask_and_record_row, from attention_heads
 *   Zamba2's final-row mask, the paper's hybrid experiment; --mask 'L*A*@-1:0--1'
 *                                                              the same, on every head of every visit
 *                                                              of a shared attention block
 *   implicit attention of SSM heads, recorded (gna attn) or entry-masked
 *                                                              mamba1_implicit_row (Mamba-1, Falcon-Mamba:
 *                                                              a channel), ssd_implicit_row (Mamba-2,
 *                                                              Zamba2, Llamba), ssm_rows_through_hook
 *   capture and patch (activation patching) of a head's output or the residual stream after a layer;
 *     an SSM layer's state between two chunks; the logit lens; gna.h's gna_run_tap, gna_cache_state,
 *     gna_unembed, and gna lens                                tap_sites (from ablate_heads and
 *                                                              forward), tap_state, unembed
 *   the minimal model (--layers 0-17), a layer left out (--drop), a layer from another model
 *     (--replace 17=DIR, the paper's Llama layer in Llamba)    keep_layers, drop_layer, replace_layer
 *   the KV-retrieval prompt and its choices                    kv_question
 *   lm-eval 0.4.x's MMLU prompt (0-shot as the paper ran it)   mmlu_questions
 *   a request's tokens and log-likelihood, as lm-eval's HFLM   encode_context, encode_continuation,
 *                                                              score_request
 *   positions named by content (:letters, @value, :text=S)     named_positions, span_tokens
 *   one head from another model (--replace L17H24=DIR, the rebuttal's aggregate-head replacement)
 *                                                              replace_head, donor_heads
 *   the knowledge control: lm-eval's winogrande, openbookqa, piqa, hellaswag, arc_challenge, arc_easy
 *     and the authors' average                                 arc_question ... winogrande_question,
 *                                                              knowledge_average
 *   gsm8k as lm-eval runs it: shots by Python's random, the strict-match and flexible-extract filters,
 *     exact_match                                              gsm8k_questions (python_sample),
 *                                                              gsm8k_strict_match, gsm8k_flexible_extract,
 *                                                              gsm8k_exact_match
 *   a question's metrics and lm-eval's aggregation             question_metrics, task_score, group_score
 *   the G&A head scores of `gna heads`                         head_scores
 *   a map's statistics of `gna attn --json` (make run's tables)  map_statistics
 *   Zamba2's dt: by default as the code that made the paper's numbers (transformers 4.49 on CUDA: the
 *     mamba_ssm kernels clamp dt only to a time_step_limit that config.json gives, and Zyphra's give
 *     none); --dt-min-clamp clamps at time_step_min, as that version's CPU path and every path of
 *     transformers 5.17 do                                     ssd_dt
 *   Mamba-2's gated norm per group of channels, as mamba_ssm trained the checkpoints   ssd_mixer
 * To check a number against the definitions alone, add --reference: Part I's kernels run, the faster
 * ones of Part II do not.
 *
 * Shapes in comments are row-major, [rows, cols]. T is the number of tokens in a chunk, D the model
 * width (hidden_size), V the vocabulary size. Build: make, or cc -std=c11 -O2 -march=native -pthread
 * gna.c -lm -o gna. MIT license.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath (II.9) */
#define _FILE_OFFSET_BITS 64 /* 32-bit hosts: stat and mmap of files over 2 GB (II.6 checks they fit) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#ifndef __wasi__ /* WASI has no setjmp (wasm cannot unwind the stack): out of memory aborts there (II.1) */
#include <setjmp.h>
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gna.h"

/* ===== PART I: the model ===================================================================== */

/* -- What Part I takes from Part II: the error line (every fallible function returns GNA_OK,
 * GNA_FAILURE or GNA_BAD_INPUT and leaves "<file or option>: <what is wrong>" for gna_error()),
 * allocation that never returns NULL, a growing text, and the tokenizer of gna.h. */
static int report(int status, const char *where, const char *format, ...);
#define bad_input(where, ...) report(GNA_BAD_INPUT, where, __VA_ARGS__)
#define failure(where, ...) report(GNA_FAILURE, where, __VA_ARGS__)
#define TRY(call)                                                                                  \
    do {                                                                                           \
        int status_ = (call);                                                                      \
        if (status_ != GNA_OK) return status_;                                                     \
    } while (0)
static size_t size_product(size_t a, size_t b);
static float *float_array(size_t rows, size_t cols);
static void *checked_malloc(size_t bytes), *checked_calloc(size_t count, size_t size);
static char *checked_strdup(const char *text), *checked_strndup(const char *text, size_t n);
static void *grow_array(void *items, size_t n, size_t *capacity, size_t size); /* room for items[n] */

typedef struct { /* a growing NUL-terminated text */
    char *data;
    size_t length, capacity;
} Bytes;
static void bytes_add(Bytes *b, const void *data, size_t n);
static void bytes_add_text(Bytes *b, const char *text);
static void bytes_printf(Bytes *b, const char *format, ...);
static void json_add_text(Bytes *b, const char *text); /* a JSON string, as Python's json.dumps writes it */
static uint32_t utf8_next(const char *text, size_t *at);       /* the code point at text[*at] of UTF-8 */
static int is_white_space(uint32_t c);                         /* Unicode White_Space */
static int interrupted(void);  /* gna_interrupt() was called during this call: forward stops between layers */

/* ---------------------------------------------------------------------------------------------
 * I.1 Numbers. Weights are read in place, in their stored dtype, and widened exactly to float32 as
 * they are used; arithmetic is float32.
 */
typedef enum { DTYPE_F32, DTYPE_BF16, DTYPE_F16, DTYPE_UNSUPPORTED } Dtype;

/* A stored weight: [rows, cols] (a vector: rows = 1) in its dtype. data == NULL: absent (a bias). */
typedef struct {
    const void *data;
    Dtype dtype;
    size_t rows, cols;
} Weight;

static const Weight no_weight = {NULL, DTYPE_F32, 0, 0};

/* bfloat16 is the top half of a float32 */
static float bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* IEEE half: sign, 5 exponent bits (bias 15), 10 mantissa bits; every value is exact in float32 */
static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF, bits;
    if (exponent == 0x1F) bits = sign | 0x7F800000u | (mantissa << 13);            /* inf, nan */
    else if (exponent == 0 && mantissa == 0) bits = sign;
    else if (exponent == 0) return (sign ? -1.0f : 1.0f) * (float)mantissa * 0x1p-24f; /* subnormal */
    else bits = sign | ((exponent + 112) << 23) | (mantissa << 13);                 /* rebias 15 -> 127 */
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float weight_at(Weight w, size_t i) {
    if (w.dtype == DTYPE_F32) return ((const float *)w.data)[i];
    if (w.dtype == DTYPE_BF16) return bf16_to_f32(((const uint16_t *)w.data)[i]);
    return f16_to_f32(((const uint16_t *)w.data)[i]); /* the loader admits no other dtype */
}

/* elements [begin, begin + n) of a weight, widened into out[n] */
static void widen(Weight w, size_t begin, size_t n, float *out) {
    for (size_t i = 0; i < n; i++) out[i] = weight_at(w, begin + i);
}

/* elements [begin, begin + n) of a weight as a vector of its own */
static Weight weight_slice(Weight w, size_t begin, size_t n) {
    w.data = (const char *)w.data + begin * (w.dtype == DTYPE_F32 ? 4 : 2);
    w.rows = 1;
    w.cols = n;
    return w;
}

/* A float32 rounded to bfloat16, to nearest with ties to even, as torch's .to(torch.bfloat16); a NaN
 * is quieted rather than rounded, so that it stays a NaN. */
static float round_to_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) bits |= 0x00400000u;
    else bits += 0x7FFFu + ((bits >> 16) & 1u);
    bits &= 0xFFFF0000u;
    memcpy(&x, &bits, 4);
    return x;
}

/* e^x, log, log(1+x), erf, sin, cos and x^y of gna's own (I.8): the same bits from every C library */
static double gna_exp(double x), gna_log(double x), gna_log1p(double x), gna_erf(double x), gna_sin(double x),
    gna_cos(double x), gna_pow(double x, double y);
static float exp_f(float x) { return (float)gna_exp(x); }

/* the activations of the paper's models, as torch defines them */
static float silu(float x) { return x / (1.0f + exp_f(-x)); }
static float gelu(float x) { return 0.5f * x * (1.0f + (float)gna_erf(x * 0.70710678118654752f)); } /* the erf form */
static float softplus(float x) { return x > 20.0f ? x : (float)gna_log1p(exp_f(x)); } /* F.softplus, threshold 20 */

/* ---------------------------------------------------------------------------------------------
 * I.2 The models: config.json as Config, the weights as one struct per module. Field comments give
 * each tensor's shape; Part II's loader reads exactly these, by these names, and checks each shape.
 */
typedef enum { FAMILY_LLAMA, FAMILY_MAMBA, FAMILY_FALCON_MAMBA, FAMILY_MAMBA2, FAMILY_ZAMBA2, FAMILY_LLAMBA } Family;
static const char *const family_names[] = {"llama", "mamba", "falcon_mamba", "mamba2", "zamba2", "llamba"};

typedef struct {
    Family family;
    size_t vocab_size;        /* V (llamba: padded to pad_vocab_size_multiple, as LlambaLMHeadModel) */
    size_t hidden_size;       /* D */
    size_t n_layers;
    float norm_eps;           /* the blocks' RMSNorms (llamba: 1e-5, fixed in cartesia's Block) */
    float final_norm_eps;     /* the final RMSNorm (differs only in llamba: norm_epsilon) */
    int tie_embeddings;       /* lm_head is the embedding matrix */
    int lm_head_bias;         /* llamba: lm_head has a bias */
    size_t n_eos;
    int eos_token_ids[8];
    /* attention and MLP: llama, zamba2's shared blocks, llamba's MLP */
    size_t n_heads;           /* H query heads */
    size_t n_kv_heads;        /* KV heads; query head h reads kv head h / (H / KV) (repeat_kv) */
    size_t head_dim;          /* hd; zamba2: 2D / H, its attention reading concat(h, embeddings) */
    float attention_scale;    /* of q . k: hd^-0.5 (LlamaAttention.scaling); zamba2 (hd/2)^-0.5 */
    int use_rope;             /* llama; zamba2 with use_mem_rope */
    float rope_theta;
    int rope_llama3;          /* rope_type "llama3", with the four numbers below; otherwise "default" */
    float rope_factor, rope_low_freq_factor, rope_high_freq_factor;
    size_t rope_original_max_positions;
    size_t intermediate_size; /* I, the MLP width */
    int attention_bias, mlp_bias;
    int mlp_gelu;             /* zamba2: GELU-gated MLP; otherwise SiLU (SwiGLU) */
    /* state-space mixers */
    size_t ssm_inner;         /* di: mamba-1 intermediate_size (which wins over expand, as in transformers);
                                 mamba-2 int(expand * D) = heads x head_dim */
    size_t ssm_state;         /* N: state_size */
    size_t conv_kernel;       /* K */
    int ssm_bias;             /* in_proj and out_proj biases (use_bias, add_bias_linear, ssm_cfg.bias) */
    int conv_bias;
    int conv_silu;            /* silu after the conv: every family but llamba's default "identity" */
    size_t dt_rank;           /* mamba-1: time_step_rank R ("auto": ceil(D / 16)) */
    float mixer_rms_eps;      /* falcon_mamba: eps of the weightless RMS of dt, B and C */
    size_t ssm_heads;         /* mamba-2: H_ssm (num_heads, n_mamba_heads, n_v_heads) */
    size_t ssm_head_dim;      /* mamba-2: P */
    size_t n_groups;          /* mamba-2: G groups of B and C; head h uses group h / (H_ssm / G) */
    float dt_limit_min, dt_limit_max; /* time_step_limit, the clamp of dt; [0, inf) when absent */
    float time_step_min;      /* zamba2: the clamp of transformers' CPU path (--dt-min-clamp) */
    float gated_norm_eps;     /* mamba-2: eps of the gated RMSNorm (zamba2: 1e-5, fixed in transformers) */
    /* zamba2's shared transformer blocks */
    size_t n_shared_blocks;   /* num_mem_blocks: visit v runs block v % n_shared_blocks */
    size_t adapter_rank;      /* rank of each visit's adapters */
    int attention_adapters;   /* use_shared_attention_adapter: q, k, v adapters per visit */
    long *shared_visit;       /* [n_layers]: a hybrid layer's visit index, -1 for the others */
} Config;

/* LlamaAttention, and Zamba2Attention (whose input is 2D wide) */
typedef struct {
    Weight q_proj, k_proj, v_proj;   /* [H*hd, in], [KV*hd, in], [KV*hd, in] */
    Weight o_proj;                   /* [D, H*hd] */
    Weight q_bias, k_bias, v_bias, o_bias; /* attention_bias */
    Weight q_adapter[2], k_adapter[2], v_adapter[2]; /* zamba2 visits: down [r, 2D], up [., r] */
} Attention;

/* MambaMixer, FalconMambaMixer */
typedef struct {
    Weight in_proj, in_bias;         /* [2 di, D], [2 di] */
    Weight conv_weight, conv_bias;   /* [di, 1, K] as [di, K], [di] */
    Weight x_proj;                   /* [R + 2N, di] */
    Weight dt_proj, dt_bias;         /* [di, R], [di] */
    Weight A_log;                    /* [di, N] */
    float *A;                        /* [di, N]: -exp(A_log), a constant of the layer (mamba1_A, at load) */
    Weight D;                        /* [di] */
    Weight out_proj, out_bias;       /* [D, di], [D] */
} Mamba1;

/* Mamba2Mixer and Zamba2MambaMixer; and Llamba's DiscreteMamba2, whose in_proj is ordered
 * [xBC | z | a] rather than [z | xBC | dt] and which has no dt_bias, A_log or norm */
typedef struct {
    Weight in_proj, in_bias;         /* [di + conv_dim + H_ssm, D], conv_dim = di + 2 G N */
    Weight conv_weight, conv_bias;   /* [conv_dim, 1, K] as [conv_dim, K], [conv_dim] */
    Weight dt_bias, A_log, D;        /* [H_ssm] each (llamba: D only) */
    Weight gated_norm;               /* [di] (mamba-2) */
    Weight z_bias;                   /* [di] (llamba, when it has no in/out biases) */
    Weight out_proj, out_bias;       /* [D, di], [D] */
} Ssd;

/* LlamaMLP: down(silu(gate(x)) * up(x)); Zamba2MLP: down(gelu(gate) * up), with [gate | up] fused */
typedef struct {
    Weight gate_proj, up_proj;       /* [I, D] each; zamba2: gate_proj is the fused gate_up_proj [2I, D] */
    Weight down_proj;                /* [D, I] */
    Weight gate_bias, up_bias, down_bias;
    Weight adapter[2];               /* zamba2: the visit's gate_up adapter, down [r, D], up [2I, r] */
} Mlp;

/* Zamba2's shared transformer block, stored once and run by every hybrid layer that visits it */
typedef struct {
    Weight input_norm;               /* [2D]: the RMSNorm of concat(h, embeddings) */
    Attention attention;             /* q, k, v [H*hd, 2D]; o [D, H*hd] */
    Weight pre_mlp_norm;             /* [D] */
    Mlp mlp;                         /* gate_up [2I, D], down [D, I] */
} SharedBlock;

/* One visit: the block with the visit's own adapters (and biases), and its own output projection */
typedef struct {
    const SharedBlock *block;
    Attention attention;
    Mlp mlp;
    Weight linear;                   /* [D, D]: model.layers.L.linear */
} SharedVisit;

typedef enum { MIXER_ATTENTION, MIXER_MAMBA1, MIXER_MAMBA2, MIXER_DISCRETE_MAMBA2 } MixerKind;

/* A layer: a mixer (what moves information between positions) with an optional MLP after it */
typedef struct {
    Weight norm;                     /* [D]: input_layernorm, or a Mamba block's norm */
    MixerKind kind;
    Attention attention;             /* MIXER_ATTENTION */
    Mamba1 mamba1;                   /* MIXER_MAMBA1 */
    Ssd ssd;                         /* MIXER_MAMBA2, MIXER_DISCRETE_MAMBA2 */
    Weight mlp_norm;                 /* [D]: post_attention_layernorm; absent without an MLP */
    Mlp mlp;
    int has_shared_visit;            /* a zamba2 hybrid layer: runs `shared` before its mixer */
    SharedVisit shared;
} Layer;

typedef struct Checkpoint Checkpoint; /* the safetensors files (Part II) */

struct gna_model {
    char *dir;
    Config config;
    Checkpoint *checkpoint;
    Weight embeddings;               /* [V, D] */
    Layer *layers;                   /* [n_layers] */
    Weight final_norm;               /* [D] */
    Weight lm_head, lm_head_bias;    /* [V, D] (the embeddings when tied); [V] (llamba with lm_head_bias) */
    float *rope_inv_freq;            /* [hd / 2]; NULL without RoPE */
    SharedBlock *shared_blocks;      /* [n_shared_blocks] (zamba2) */
    int n_runs, freed;               /* gna.h: runs made of it; gna_free called (it goes with its last run) */
};
typedef struct gna_model Model;

/* RoPE's inverse frequencies, as transformers computes them, in float32:
 *   default  inv_freq[i] = 1 / theta^(2i / hd)    (modeling_rope_utils._compute_default_rope_parameters)
 *   llama3   with wavelength w = 2 pi / inv_freq[i]: w < original / high_freq_factor keeps inv_freq,
 *            w > original / low_freq_factor divides it by factor, and between the two it is blended,
 *            s = (original / w - low) / (high - low):  (1 - s) inv_freq / factor + s inv_freq
 *            (_compute_llama3_parameters; the Llama 3.1 paper's "RoPE scaling") */
static float *build_rope_inv_freq(const Config *c) {
    size_t half = c->head_dim / 2;
    float *inv_freq = checked_malloc(sizeof(float) * (half ? half : 1));
    for (size_t i = 0; i < half; i++) {
        inv_freq[i] = 1.0f / (float)gna_pow(c->rope_theta, (float)(2 * i) / (float)c->head_dim);
        if (!c->rope_llama3) continue;
        float original = (float)c->rope_original_max_positions;
        float low_freq_wavelength = (float)((double)c->rope_original_max_positions / c->rope_low_freq_factor);
        float high_freq_wavelength = (float)((double)c->rope_original_max_positions / c->rope_high_freq_factor);
        float wavelength = (float)(2.0 * 3.14159265358979323846) / inv_freq[i];
        float scaled = wavelength > low_freq_wavelength ? inv_freq[i] / c->rope_factor : inv_freq[i];
        if (!(wavelength < high_freq_wavelength) && !(wavelength > low_freq_wavelength)) {
            float smooth = (original / wavelength - c->rope_low_freq_factor) / (float)((double)c->rope_high_freq_factor - c->rope_low_freq_factor);
            scaled = (1.0f - smooth) * scaled / c->rope_factor + smooth * scaled;
        }
        inv_freq[i] = scaled;
    }
    return inv_freq;
}

/* ---------------------------------------------------------------------------------------------
 * I.3 The kernels. Part I runs its heavy loops through one table, Compute. Part I's own entries are
 * the definitions below; Part II may install a faster matmul and faster leaves (attention's scores
 * and weighted sums, softmax, activate, the two scan steps), which the tests hold to these within
 * float32 rounding. The loops around the leaves - over heads, queries, channels, time - are Part I's
 * in both cases, and so is every intervention.
 *
 * `run` cuts [0, n) into ranges of independent outputs - weight rows, heads, channels, token rows -
 * and calls fn on each: Part I's own calls fn once, on [0, n); Part II's calls it on its threads.
 * No range ever shares a sum with another, so every split gives the same bits.
 */
typedef void (*RangeFn)(const void *task, size_t begin, size_t end);
typedef enum { ACT_SILU, ACT_SOFTPLUS, ACT_GELU } Activation;
typedef struct Compute Compute;

/* out[t, r] = sum_k in[t, k] W[r, k] + bias[r]     (nn.Linear: W is stored [out, in])
 * t < T, r < W.rows, k < W.cols; `in` rows in_stride floats apart, so that a column block of a wider
 * matrix can be the input; out rows W.rows floats apart. With bf16, in and W are rounded to bfloat16
 * first (the products are then exact in float32) and summed in float32: how the checkpoints run in
 * bfloat16 on a GPU. */
typedef struct {
    float *out;
    const float *in;
    size_t in_stride, T;
    Weight w, bias;
    int bf16;
} Matmul;

struct Compute {
    int bf16;         /* --bf16: matmul inputs rounded to bfloat16 (see Matmul); 0: float32 */
    int dt_min_clamp; /* --dt-min-clamp: Zamba2's dt as transformers' CPU path clamps it (ssd_dt) */
    void (*run)(const Compute *cx, RangeFn fn, const void *task, size_t n);
    void (*matmul)(const Compute *cx, const Matmul *m);
    void (*scores)(float *out, const float *q, const float *keys, size_t stride, size_t n, size_t hd);
    void (*weighted_sum)(float *out, const float *p, const float *values, size_t stride, size_t n, size_t hd);
    void (*softmax)(float *x, size_t n);
    void (*activate)(float *out, const float *x, size_t n, Activation f, const float *times);
    float (*mamba1_step)(float *S, const float *A, float dt, float u, const float *B, const float *C, size_t N);
    float (*ssd_step)(float *S, float decay, float input, const float *B, const float *C, size_t N);
    void *machinery;  /* Part II's thread pool for its `run`; NULL for Part I's */
};

static void run_at_once(const Compute *cx, RangeFn fn, const void *task, size_t n) {
    (void)cx;
    if (n > 0) fn(task, 0, n);
}

/* sum_i a[i] b[i], in a fixed order: eight partial sums of every eighth product, added pairwise, then
 * the tail. Its rounding error grows with n / 8 rather than n, which the fixtures that amplify
 * rounding most (zamba2's) need to stay within the tolerance. */
static float dot(const float *a, const float *b, size_t n) {
    float lanes[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++) lanes[j] += a[i + j] * b[i + j];
    float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

/* The matmul's definition, weight rows [begin, end): each row widened (and rounded, with bf16) once,
 * then one dot product per token */
static void matmul_rows(const void *task, size_t begin, size_t end) {
    const Matmul *m = task;
    size_t K = m->w.cols;
    float *row = checked_malloc(sizeof(float) * (K ? K : 1)), *x_rounded = checked_malloc(sizeof(float) * (K ? K : 1));
    for (size_t r = begin; r < end; r++) {
        widen(m->w, r * K, K, row);
        for (size_t k = 0; m->bf16 && k < K; k++) row[k] = round_to_bf16(row[k]);
        float bias = m->bias.data ? weight_at(m->bias, r) : 0.0f;
        for (size_t t = 0; t < m->T; t++) {
            const float *x = m->in + t * m->in_stride;
            if (m->bf16)
                for (size_t k = 0; k < K; k++) x_rounded[k] = round_to_bf16(x[k]);
            m->out[t * m->w.rows + r] = dot(m->bf16 ? x_rounded : x, row, K) + bias;
        }
    }
    free(x_rounded), free(row);
}

static void matmul(const Compute *cx, const Matmul *m) { cx->run(cx, matmul_rows, m, m->w.rows); }

/* out[j] = q . k_j for the n keys k_j = keys + j stride (attention's scores before the scale) */
static void scores(float *out, const float *q, const float *keys, size_t stride, size_t n, size_t hd) {
    for (size_t j = 0; j < n; j++) out[j] = dot(q, keys + j * stride, hd);
}

/* out = sum_j p[j] v_j, in j order, for the n values v_j = values + j stride (attention's output) */
static void weighted_sum(float *out, const float *p, const float *values, size_t stride, size_t n, size_t hd) {
    for (size_t d = 0; d < hd; d++) out[d] = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t d = 0; d < hd; d++) out[d] += p[j] * values[j * stride + d];
}

/* x = softmax(x), in place: float32 exponentials after the maximum is taken out, their sum in double */
static void softmax(float *x, size_t n) {
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += x[i] = exp_f(x[i] - max);
    for (size_t i = 0; i < n; i++) x[i] = (float)(x[i] / sum);
}

/* out[i] = f(x[i]), times times[i] where given (out may be x or times) */
static void activate(float *out, const float *x, size_t n, Activation f, const float *times) {
    for (size_t i = 0; i < n; i++) {
        float y = f == ACT_SILU ? silu(x[i]) : f == ACT_SOFTPLUS ? softplus(x[i]) : gelu(x[i]);
        out[i] = times ? y * times[i] : y;
    }
}

/* One step of the Mamba-1 selective scan for one channel, over its N states (selective_scan_ref in
 * state-spaces/mamba; transformers MambaMixer.slow_forward):
 *   S[n] <- exp(dt A[n]) S[n] + (dt B[n]) u;   returns sum_n S[n] C[n] */
static float mamba1_step(float *S, const float *A, float dt, float u, const float *B, const float *C, size_t N) {
    float y = 0;
    for (size_t n = 0; n < N; n++) {
        S[n] = exp_f(dt * A[n]) * S[n] + (dt * B[n]) * u;
        y += S[n] * C[n];
    }
    return y;
}

/* One step of the Mamba-2 (SSD) scan for one row of a head's state (decay = exp(dt A) and the input
 * are the same for the whole row; mamba_ssm's ssd_minimal_discrete, sequentially):
 *   S[n] <- decay S[n] + input B[n];   returns sum_n S[n] C[n] */
static float ssd_step(float *S, float decay, float input, const float *B, const float *C, size_t N) {
    float y = 0;
    for (size_t n = 0; n < N; n++) {
        S[n] = decay * S[n] + input * B[n];
        y += S[n] * C[n];
    }
    return y;
}

/* The definitions, as one table: what --reference runs (Part II supplies `run` for threads) */
static const Compute reference_kernels = {0, 0, run_at_once, matmul, scores, weighted_sum, softmax, activate, mamba1_step, ssd_step, NULL};

/* -- Helpers over the table: the forward pass below calls these. */

/* out[T, W.rows] = in W^T + bias */
static void linear(const Compute *cx, float *out, const float *in, size_t in_stride, size_t T, Weight w, Weight bias) {
    Matmul m = {out, in, in_stride, T, w, bias, cx->bf16};
    cx->matmul(cx, &m);
}

/* out[T, up.rows] += (in down^T) up^T: a rank-r adapter (LoRA's form, down [r, in], up [out, r]), as a
 * Zamba2 visit adds to its shared projections. Nothing when absent. */
static void add_adapter(const Compute *cx, float *out, const float *in, size_t T, const Weight adapter[2]) {
    if (!adapter[0].data) return;
    size_t rank = adapter[0].rows, width = adapter[1].rows;
    float *low = float_array(T, rank), *added = float_array(T, width);
    linear(cx, low, in, adapter[0].cols, T, adapter[0], no_weight);
    linear(cx, added, low, rank, T, adapter[1], no_weight);
    for (size_t i = 0; i < T * width; i++) out[i] += added[i];
    free(added), free(low);
}

/* out[t, i] = f(x[t, i]) (* times[t, i]), i < width, over T rows each with its own stride */
typedef struct {
    const Compute *cx;
    float *out;
    const float *x, *times;
    size_t out_stride, x_stride, times_stride, width;
    Activation f;
} ActivateTask;

static void activate_rows(const void *task, size_t begin, size_t end) {
    const ActivateTask *a = task;
    for (size_t t = begin; t < end; t++)
        a->cx->activate(a->out + t * a->out_stride, a->x + t * a->x_stride, a->width, a->f, a->times ? a->times + t * a->times_stride : NULL);
}

static void activate_matrix(const Compute *cx, float *out, size_t out_stride, const float *x, size_t x_stride, size_t T,
                            size_t width, Activation f, const float *times, size_t times_stride) {
    ActivateTask task = {cx, out, x, times, out_stride, x_stride, times_stride, width, f};
    cx->run(cx, activate_rows, &task, T);
}

/* y = w * x / sqrt(mean(x^2) + eps), one row of n (LlamaRMSNorm, the same in every family here). A
 * weightless RMS (Falcon-Mamba's dt, B, C) passes no_weight. The mean of squares is summed in double:
 * n additions per row cost nothing and take the summation order out of the result. */
static void rmsnorm(float *out, const float *x, size_t n, Weight w, float eps) {
    double sum_squares = 0;
    for (size_t i = 0; i < n; i++) sum_squares += (double)x[i] * (double)x[i];
    float scale = 1.0f / sqrtf((float)(sum_squares / (double)n) + eps);
    for (size_t i = 0; i < n; i++) out[i] = w.data ? weight_at(w, i) * (x[i] * scale) : x[i] * scale;
}

typedef struct {
    float *out;
    const float *x;
    size_t n;
    Weight w;
    float eps;
} RmsnormTask;

static void rmsnorm_range(const void *task, size_t begin, size_t end) {
    const RmsnormTask *r = task;
    for (size_t t = begin; t < end; t++) rmsnorm(r->out + t * r->n, r->x + t * r->n, r->n, r->w, r->eps);
}

/* rmsnorm of T rows of n (out may be x) */
static void rmsnorm_rows(const Compute *cx, float *out, const float *x, size_t T, size_t n, Weight w, float eps) {
    RmsnormTask task = {out, x, n, w, eps};
    cx->run(cx, rmsnorm_range, &task, T);
}

/* Rotary position embedding in Hugging Face's layout (rotate_half, not interleaved pairs):
 *   x'[i]        = x[i] cos a_i - x[i + hd/2] sin a_i
 *   x'[i + hd/2] = x[i + hd/2] cos a_i + x[i] sin a_i,        a_i = inv_freq[i] * position
 * (modeling_llama.py: rotate_half, apply_rotary_pos_emb; HF permuted the q and k rows at conversion
 * so that this equals Meta's interleaved rotation). a_i is a float32 product, as HF computes it; its
 * cos and sin serve every head of the position. Token rows [begin, end) of q [T, H*hd] and k [T, KV*hd]. */
typedef struct {
    const float *inv_freq;   /* [hd / 2] */
    float *q, *k;
    size_t n_heads, n_kv_heads, head_dim, p0;
} RopeTask;

static void rope(float *x, size_t head_dim, const float *cos_a, const float *sin_a) {
    size_t half = head_dim / 2;
    for (size_t i = 0; i < half; i++) {
        float a = x[i], b = x[i + half];
        x[i] = a * cos_a[i] - b * sin_a[i];
        x[i + half] = b * cos_a[i] + a * sin_a[i];
    }
}

static void rope_rows(const void *task, size_t begin, size_t end) {
    const RopeTask *r = task;
    size_t hd = r->head_dim, half = hd / 2;
    float *cos_a = checked_malloc(sizeof(float) * (half ? half : 1)), *sin_a = checked_malloc(sizeof(float) * (half ? half : 1));
    for (size_t t = begin; t < end; t++) {
        for (size_t i = 0; i < half; i++) {
            float angle = r->inv_freq[i] * (float)(r->p0 + t);
            cos_a[i] = (float)gna_cos(angle);
            sin_a[i] = (float)gna_sin(angle);
        }
        for (size_t h = 0; h < r->n_heads; h++) rope(r->q + (t * r->n_heads + h) * hd, hd, cos_a, sin_a);
        for (size_t h = 0; h < r->n_kv_heads; h++) rope(r->k + (t * r->n_kv_heads + h) * hd, hd, cos_a, sin_a);
    }
    free(sin_a), free(cos_a);
}

/* Causal depthwise convolution (nn.Conv1d(C, C, K, groups=C, padding=K-1), its first T outputs):
 *   out[t, c] = bias[c] + sum_{k<K} W[c, k] in[t - (K-1) + k, c]
 * Inputs before the chunk come from state [K-1, C] (zeros at the start of a sequence), which then
 * takes the last K-1 inputs. `in` rows are in_stride floats apart; channels [begin, end). */
typedef struct {
    float *out;
    const float *in;
    size_t in_stride, T, C;
    Weight w, bias;
    const float *state;
} ConvTask;

static void conv1d_channels(const void *task, size_t begin, size_t end) {
    const ConvTask *v = task;
    size_t K = v->w.cols;
    for (size_t c = begin; c < end; c++) {
        float bias = v->bias.data ? weight_at(v->bias, c) : 0.0f;
        for (size_t t = 0; t < v->T; t++) {
            float sum = bias;
            for (size_t k = 0; k < K; k++) {
                size_t back = K - 1 - k; /* the input `back` positions before t: in the state if t < back */
                float x = t >= back ? v->in[(t - back) * v->in_stride + c] : v->state[(K - 1 - (back - t)) * v->C + c];
                sum += weight_at(v->w, c * K + k) * x;
            }
            v->out[t * v->C + c] = sum;
        }
    }
}

static void causal_conv1d(const Compute *cx, float *out, const float *in, size_t in_stride, size_t T, size_t C, Weight w,
                          Weight bias, float *state) {
    size_t K = w.cols;
    ConvTask task = {out, in, in_stride, T, C, w, bias, state};
    cx->run(cx, conv1d_channels, &task, C);
    for (size_t r = 0; r + 1 < K; r++) /* the new state: the last K-1 rows of [state; in] */
        for (size_t c = 0; c < C; c++)
            state[r * C + c] = r + T >= K - 1 ? in[(r + T - (K - 1)) * in_stride + c] : state[(r + T) * C + c];
}

/* ---------------------------------------------------------------------------------------------
 * I.4 Interventions: what a run does to the model (design of the spec in Part II's parse_mask):
 *   ablation      the head's slice of the out-projection input is zeroed, at every position or at
 *                 some query positions (L17H24, L17H24@-1)
 *   entry mask    the head's attention probabilities (after the softmax, not renormalised), or the
 *                 entries of an SSM head's implicit attention matrix, from those queries to those keys
 *                 are zeroed (L17H24@-1:5-9)
 *   probe         a head's attention rows are recorded (gna attn, gna heads)
 *   tap           a site's vectors at chosen positions are copied out (capture) or overwritten by the
 *                 caller's (patch; activation patching): a head's output, where ablation zeroes it, or
 *                 the residual stream after a layer (gna.h: gna_run_tap; the logit lens reads these)
 *   layer plan    which layers run, and whose (--layers, --drop, --replace)
 * A "head" is an attention head, an SSM head (Mamba-2, Zamba2, Llamba), or a channel (Mamba-1,
 * Falcon-Mamba: each channel has its own implicit attention matrix, Ali et al. 2024). Positions are
 * written as given: negative ones count from the end of the sequence so far (-1 is the last token).
 */
typedef enum { HEAD_ATTENTION, HEAD_SSM } HeadKind;

typedef struct {
    size_t layer;
    HeadKind kind;
    size_t head;
    int has_queries;           /* ablate, or mask, only at these query positions */
    long query_first, query_last;
    int has_keys;              /* an entry mask: these keys of those queries */
    long key_first, key_last;
    int query_name, key_name;  /* -1: the positions above; else named (I.7: a MarkKind, or text=named_text) */
    char named_text[32];
    int resolved;              /* named positions resolved for one request, into the lists: */
    const size_t *query_list, *key_list;     /* [n_query_list], [n_key_list] */
    size_t n_query_list, n_key_list;
    char text[96];             /* the item as written, for messages */
} MaskItem;

typedef struct {
    size_t layer;
    HeadKind kind;
    size_t head;
    size_t n_rows;
    const size_t *rows;        /* [n_rows] query positions recorded */
    size_t length;             /* the sequence's length, the matrix's columns */
    float *matrix;             /* [n_rows, length]: the caller's */
} Probe;

typedef struct {
    size_t layer;
    int residual;              /* 1: the residual stream after the layer, [D]; 0: head `head` of `kind`'s output */
    HeadKind kind;
    size_t head;
    int patch;                 /* 0: capture (copy the site into values); 1: patch (copy values over the site) */
    size_t n_positions;
    const size_t *positions;   /* [n_positions] sequence positions */
    float *values;             /* [n_positions, the site's width]: the caller's */
} Tap;

typedef struct {
    const Layer *layer;        /* NULL: the layer is left out */
    const Model *owner;        /* whose config and RoPE it runs with: the model's own, or a donor's */
    const Model *head_donor;   /* --replace L17H24=DIR: the model whose attention layer computes some heads */
    size_t n_donor_heads;
    size_t donor_heads[16];    /* [n_donor_heads] the heads it computes (replace_head) */
} LayerPlan;

typedef struct {
    size_t n_items;
    const MaskItem *items;
    size_t n_probes;
    const Probe *probes;
    size_t n_taps;
    const Tap *taps;
    const LayerPlan *plan;     /* [n_layers]; NULL: every layer of the model, as it is */
} Intervention;

/* A position as written, resolved in a sequence of `length` tokens; -1 when outside it */
static long resolve_position(long position, size_t length) {
    long resolved = position < 0 ? (long)length + position : position;
    return resolved >= 0 && resolved < (long)length ? resolved : -1;
}

static int in_positions(size_t t, long first, long last, size_t length) {
    return (long)t >= resolve_position(first, length) && (long)t <= resolve_position(last, length);
}

static int in_list(size_t t, const size_t *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == t) return 1;
    return 0;
}

/* Does a mask item cover query t, key j (in a sequence of `length` tokens so far)? */
static int item_has_query(const MaskItem *m, size_t t, size_t length) {
    if (!m->has_queries) return 1;
    return m->query_name >= 0 ? in_list(t, m->query_list, m->n_query_list) : in_positions(t, m->query_first, m->query_last, length);
}

static int item_has_key(const MaskItem *m, size_t j, size_t length) {
    return m->key_name >= 0 ? in_list(j, m->key_list, m->n_key_list) : in_positions(j, m->key_first, m->key_last, length);
}

/* How many heads of `kind` layer l has (0: none of that kind) */
static size_t heads_of(const Layer *layer, const Config *c, HeadKind kind) {
    if (kind == HEAD_ATTENTION) return layer->kind == MIXER_ATTENTION || layer->has_shared_visit ? c->n_heads : 0;
    if (layer->kind == MIXER_MAMBA1) return c->ssm_inner;
    return layer->kind == MIXER_ATTENTION ? 0 : c->ssm_heads;
}

/* The floats of one head's output, the slice of the out-projection input that ablate_heads zeroes:
 * head_dim (attention), 1 (a Mamba-1 channel) or P (an SSD head) */
static size_t head_size(const Layer *layer, const Config *c, HeadKind kind) {
    return kind == HEAD_ATTENTION ? c->head_dim : layer->kind == MIXER_MAMBA1 ? 1 : c->ssm_head_dim;
}

/* Layer surgery on a plan (the paper's §3: the "minimal model" keeps layers 0..k; the hybrid experiment
 * runs Llama's layer 17 in Llamba-8B-untied-unaligned with Llama's RoPE, the authors' last notebook cell) */
static int keep_layers(LayerPlan *plan, size_t n_layers, size_t first, size_t last) {
    if (first > last || last >= n_layers)
        return bad_input("--layers", "%zu-%zu is not a range of the model's layers 0-%zu", first, last, n_layers - 1);
    for (size_t l = 0; l < n_layers; l++)
        if (l < first || l > last) plan[l].layer = NULL;
    return GNA_OK;
}

static int drop_layer(LayerPlan *plan, size_t n_layers, size_t l) {
    if (l >= n_layers) return bad_input("--drop", "layer %zu is out of range (the model has layers 0-%zu)", l, n_layers - 1);
    plan[l].layer = NULL;
    return GNA_OK;
}

/* layer l of the donor, run with the donor's config and RoPE; the donor must have the model's width */
static int replace_layer(LayerPlan *plan, const Model *m, size_t l, const Model *donor) {
    if (l >= m->config.n_layers || l >= donor->config.n_layers)
        return bad_input("--replace", "layer %zu is not in both models (%zu and %zu layers)", l, m->config.n_layers, donor->config.n_layers);
    if (donor->config.hidden_size != m->config.hidden_size)
        return bad_input("--replace", "%s: hidden_size %zu differs from the model's %zu", donor->dir, donor->config.hidden_size,
                         m->config.hidden_size);
    if (donor->layers[l].has_shared_visit && !m->shared_blocks) /* its visit reads the input embeddings, which forward keeps for zamba2 */
        return bad_input("--replace", "%s: layer %zu is a hybrid layer, which only a zamba2 model can run", donor->dir, l);
    plan[l] = (LayerPlan){.layer = &donor->layers[l], .owner = donor};
    return GNA_OK;
}

/* One head of a donor's attention layer in place of the same-numbered head of layer l (the rebuttal:
 * "we replaced only the Aggregate head, leaving the rest of the layer unchanged", Llamba-8B's layer 17
 * from Llama-3.1-8B). The donor's head reads this model's residual stream h through the donor layer's
 * own input norm, attends with the donor's projections, RoPE and cache, and writes through its slice
 * of the donor's output projection; the layer's own head h is removed (ablate_heads):
 *   out += (attention head h of the donor on RMSNorm_donor(h)) Wo_donor[:, h hd .. (h+1) hd]^T  (+ Wo_donor's bias, if any)
 * Where whole-layer --replace runs the donor's norms, mixer and MLP, this keeps the layer's own norms,
 * its other heads and its MLP. The layer must be of one kind of head (not a zamba2 hybrid layer). */
static int replace_head(LayerPlan *plan, const Model *m, size_t l, size_t head, const Model *donor) {
    if (l >= m->config.n_layers || l >= donor->config.n_layers)
        return bad_input("--replace", "layer %zu is not in both models (%zu and %zu layers)", l, m->config.n_layers, donor->config.n_layers);
    const Layer *own = plan[l].layer, *theirs = &donor->layers[l];
    if (donor->config.hidden_size != m->config.hidden_size)
        return bad_input("--replace", "%s: hidden_size %zu differs from the model's %zu", donor->dir, donor->config.hidden_size,
                         m->config.hidden_size);
    if (theirs->kind != MIXER_ATTENTION || theirs->has_shared_visit)
        return bad_input("--replace", "%s: layer %zu is not an attention layer, so it has no head to give", donor->dir, l);
    if (!own || own->has_shared_visit || plan[l].owner != m)
        return bad_input("--replace", "layer %zu is left out, replaced whole, or a hybrid layer: no head of it can be replaced", l);
    size_t own_heads = heads_of(own, &m->config, own->kind == MIXER_ATTENTION ? HEAD_ATTENTION : HEAD_SSM);
    if (head >= own_heads || head >= donor->config.n_heads)
        return bad_input("--replace", "head %zu is not in both layers %zu (%zu and %zu heads)", head, l, own_heads, donor->config.n_heads);
    if ((plan[l].head_donor && plan[l].head_donor != donor) || plan[l].n_donor_heads == 16)
        return bad_input("--replace", "layer %zu: its heads can come from one donor, at most 16 of them", l);
    plan[l].head_donor = donor;
    plan[l].donor_heads[plan[l].n_donor_heads++] = head;
    return GNA_OK;
}

/* -- The one place of head removal. The paper ablates a head by zeroing its columns of the output
 * projection's weight (§3.3; the authors' utils.remove_heads); gna zeroes the same slice of the
 * projection's input instead, which gives the same output and leaves the weights untouched:
 *   y[t, h size .. (h+1) size) = 0     for every head h ablated at position p0 + t
 * y is [T, width]; size is hd (attention), 1 (a Mamba-1 channel) or P (an SSD head, after its gate and
 * norm). Every mixer calls this right before its out-projection, and nothing else ablates. The same
 * slice is where taps read and write a head's output (TransformerLens' hook_z): captures first, so
 * that they see the ablation, then patches. */
typedef struct {
    const Compute *cx;
    const Intervention *iv;    /* NULL: none */
    const Config *config;      /* the layer's: the donor's for a replaced layer */
    const float *rope_inv_freq;/* the layer's RoPE (the donor's for a replaced layer); NULL without */
    size_t layer;              /* index in model.layers */
    size_t p0, T;              /* the chunk: positions p0 .. p0 + T - 1 */
    struct Scratch *scratch;   /* the activations' buffers (I.5) */
    const Layer *own_layer;    /* the layer this step runs (a donor's head runs with its donor's) */
} Step;

/* the taps of layer s at its heads of `kind` (residual 0) or at its residual stream (residual 1, y [T, D]):
 *   capture:  values[r] = y[t, head size .. (head+1) size)      patch:  the reverse
 * for each of the tap's positions p0 + t in this chunk */
static void tap_sites(const Step *s, int residual, HeadKind kind, size_t size, size_t width, float *y) {
    for (int patch = 0; patch <= 1; patch++)
        for (size_t i = 0; s->iv && i < s->iv->n_taps; i++) {
            const Tap *tap = &s->iv->taps[i];
            if (tap->layer != s->layer || tap->residual != residual || (!residual && tap->kind != kind) || tap->patch != patch) continue;
            for (size_t r = 0; r < tap->n_positions; r++) {
                if (tap->positions[r] < s->p0 || tap->positions[r] >= s->p0 + s->T) continue;
                float *site = y + (tap->positions[r] - s->p0) * width + tap->head * size, *values = tap->values + r * size;
                memcpy(patch ? site : values, patch ? values : site, sizeof(float) * size);
            }
        }
}

static void ablate_heads(const Step *s, HeadKind kind, size_t size, size_t width, float *y) {
    const LayerPlan *plan = s->iv && s->iv->plan ? &s->iv->plan[s->layer] : NULL;
    for (size_t i = 0; plan && plan->layer == s->own_layer && i < plan->n_donor_heads; i++) /* replaced by a donor's head */
        for (size_t t = 0; t < s->T; t++) memset(y + t * width + plan->donor_heads[i] * size, 0, sizeof(float) * size);
    for (size_t i = 0; s->iv && i < s->iv->n_items; i++) {
        const MaskItem *item = &s->iv->items[i];
        if (item->layer != s->layer || item->kind != kind || item->has_keys) continue;
        for (size_t t = 0; t < s->T; t++)
            if (item_has_query(item, s->p0 + t, s->p0 + s->T)) memset(y + t * width + item->head * size, 0, sizeof(float) * size);
    }
    tap_sites(s, 0, kind, size, width, y);
}

/* -- The one hook for entry masks and probes. Every attention row a head computes - softmax
 * probabilities, or an SSM head's implicit-attention row - passes through mask_and_record_row when
 * the intervention touches that layer's heads of that kind: the masked entries are zeroed, then the
 * row is recorded if a probe asks for it. Returns 1 if it zeroed anything. */
typedef struct {
    const Intervention *iv;
    size_t layer;
    HeadKind kind;
    size_t length;             /* the sequence so far, p0 + T: negative positions count from its end */
} Hook;

/* The hook of layer `s` for heads of `kind`, or NULL when nothing there needs it */
static const Hook *layer_hook(const Step *s, HeadKind kind, Hook *hook) {
    int touched = 0;
    for (size_t i = 0; s->iv && i < s->iv->n_items; i++)
        touched |= s->iv->items[i].layer == s->layer && s->iv->items[i].kind == kind && s->iv->items[i].has_keys;
    for (size_t i = 0; s->iv && i < s->iv->n_probes; i++) touched |= s->iv->probes[i].layer == s->layer && s->iv->probes[i].kind == kind;
    *hook = (Hook){s->iv, s->layer, kind, s->p0 + s->T};
    return touched ? hook : NULL;
}

/* Does the hook want row t of `head`: a probe records it, or an entry mask covers it? */
static int hook_wants_row(const Hook *k, size_t head, size_t t) {
    for (size_t i = 0; i < k->iv->n_items; i++) {
        const MaskItem *m = &k->iv->items[i];
        if (m->layer == k->layer && m->kind == k->kind && m->head == head && m->has_keys && item_has_query(m, t, k->length)) return 1;
    }
    for (size_t i = 0; i < k->iv->n_probes; i++) {
        const Probe *p = &k->iv->probes[i];
        if (p->layer == k->layer && p->kind == k->kind && p->head == head)
            for (size_t r = 0; r < p->n_rows; r++)
                if (p->rows[r] == t) return 1;
    }
    return 0;
}

/* row[0..n): head's attention row at query t */
static int mask_and_record_row(const Hook *k, size_t head, size_t t, float *row, size_t n) {
    int masked = 0;
    for (size_t i = 0; i < k->iv->n_items; i++) {
        const MaskItem *m = &k->iv->items[i];
        if (m->layer != k->layer || m->kind != k->kind || m->head != head || !m->has_keys || !item_has_query(m, t, k->length)) continue;
        for (size_t j = 0; j < n; j++)
            if (item_has_key(m, j, k->length) && row[j] != 0) {
                row[j] = 0;
                masked = 1;
            }
    }
    for (size_t i = 0; i < k->iv->n_probes; i++) {
        const Probe *p = &k->iv->probes[i];
        if (p->layer != k->layer || p->kind != k->kind || p->head != head) continue;
        for (size_t r = 0; r < p->n_rows; r++)
            if (p->rows[r] == t) memcpy(p->matrix + r * p->length, row, sizeof(float) * n);
    }
    return masked;
}

/* ---------------------------------------------------------------------------------------------
 * I.5 The cache: what a sequence leaves behind for its next chunk, per layer
 *   attention:          keys and values of every position so far     [max_tokens, KV*hd] each
 *   mamba-1:            the last K-1 conv inputs [K-1, di]; the SSM state [di, N]
 *   mamba-2, llamba:    the last K-1 conv inputs [K-1, conv_dim]; the SSM state [H_ssm, P, N]
 *   zamba2 hybrid:      both: its Mamba-2 state, and its visit's keys and values
 */
typedef struct {
    float *keys, *values;
    float *conv_state, *ssm_state;
    size_t kv_width, conv_floats, ssm_floats;
    float *donor_keys, *donor_values; /* a donor's heads in this layer (replace_head): its keys and values */
    size_t donor_kv_width;
} LayerCache;

/* Activations, in buffers kept from one layer and one pass to the next: slot i is one buffer, grown to
 * the largest size asked of it. Allocating each layer's activations afresh and freeing them after made
 * glibc give the memory back to the system and fault it in again: 450,000 page faults per llama-1b
 * pass at T 512, a quarter of its time on 2 cores and more on 16, where the faults contend. A mixer's
 * slots are free again when it returns; shared_visit holds its own around the mixer and MLP it calls. */
enum {
    SLOT_H, SLOT_NORMED, SLOT_MIXED, SLOT_EMBEDDED,          /* forward's */
    SLOT_VISIT_U, SLOT_VISIT_A, SLOT_VISIT_MLP,               /* shared_visit's */
    SLOT_1, SLOT_2, SLOT_3, SLOT_4, SLOT_5, SLOT_6, N_SLOTS   /* a mixer's, or an MLP's */
};
typedef struct Scratch {
    float *data[N_SLOTS];
    size_t floats[N_SLOTS];
} Scratch;

/* slot's buffer, room for [rows, cols] floats */
static float *scratch(Scratch *s, int slot, size_t rows, size_t cols) {
    size_t floats = size_product(rows, cols);
    if (s->floats[slot] < floats) {
        free(s->data[slot]);
        s->data[slot] = float_array(rows, cols);
        s->floats[slot] = floats;
    }
    return s->data[slot];
}

struct gna_cache {
    size_t max_tokens;         /* positions the attention caches hold */
    int bounded;               /* the run has attention layers, so max_tokens bounds the sequence */
    size_t n_tokens;           /* positions consumed so far: the next token's position */
    size_t n_layers;
    LayerCache *layers;        /* [n_layers] */
    Scratch scratch;           /* forward's buffers, not part of the sequence's state */
    unsigned long run_serial;  /* gna.h: the run it was made for (Part II) */
};
typedef struct gna_cache Cache;

/* The layer l as a plan runs it: the layer, and the model whose config it has */
static LayerPlan planned_layer(const Model *m, const Intervention *iv, size_t l) {
    return iv && iv->plan ? iv->plan[l] : (LayerPlan){.layer = &m->layers[l], .owner = m};
}

static Cache *cache_new(const Model *m, const LayerPlan *plan, size_t max_tokens) {
    Cache *cache = checked_calloc(1, sizeof(Cache));
    Intervention iv = {.plan = plan};
    cache->max_tokens = max_tokens;
    cache->n_layers = m->config.n_layers;
    cache->layers = checked_calloc(cache->n_layers, sizeof(LayerCache));
    for (size_t l = 0; l < cache->n_layers; l++) {
        LayerPlan p = planned_layer(m, &iv, l);
        if (!p.layer) continue;
        const Config *c = &p.owner->config;
        LayerCache *lc = &cache->layers[l];
        size_t K1 = c->conv_kernel > 0 ? c->conv_kernel - 1 : 0;
        lc->kv_width = p.layer->kind == MIXER_ATTENTION || p.layer->has_shared_visit ? c->n_kv_heads * c->head_dim : 0;
        lc->conv_floats = p.layer->kind == MIXER_MAMBA1   ? K1 * c->ssm_inner
                          : p.layer->kind != MIXER_ATTENTION ? K1 * (c->ssm_inner + 2 * c->n_groups * c->ssm_state) : 0;
        lc->ssm_floats = p.layer->kind != MIXER_ATTENTION ? c->ssm_inner * c->ssm_state : 0;
        if (lc->kv_width) {
            lc->keys = checked_calloc(size_product(max_tokens, lc->kv_width), sizeof(float));
            lc->values = checked_calloc(size_product(max_tokens, lc->kv_width), sizeof(float));
            cache->bounded = 1;
        }
        if (lc->conv_floats) lc->conv_state = checked_calloc(lc->conv_floats, sizeof(float));
        if (lc->ssm_floats) lc->ssm_state = checked_calloc(lc->ssm_floats, sizeof(float));
        if (p.head_donor) {
            lc->donor_kv_width = p.head_donor->config.n_kv_heads * p.head_donor->config.head_dim;
            lc->donor_keys = checked_calloc(size_product(max_tokens, lc->donor_kv_width), sizeof(float));
            lc->donor_values = checked_calloc(size_product(max_tokens, lc->donor_kv_width), sizeof(float));
            cache->bounded = 1;
        }
    }
    return cache;
}

static void cache_free(Cache *cache) {
    for (size_t l = 0; cache && l < cache->n_layers; l++) {
        LayerCache *lc = &cache->layers[l];
        free(lc->keys), free(lc->values), free(lc->conv_state), free(lc->ssm_state), free(lc->donor_keys), free(lc->donor_values);
    }
    for (int i = 0; cache && i < N_SLOTS; i++) free(cache->scratch.data[i]);
    if (cache) free(cache->layers);
    free(cache);
}

/* back to an empty sequence */
static void cache_reset(Cache *cache) {
    cache->n_tokens = 0;
    for (size_t l = 0; l < cache->n_layers; l++) {
        LayerCache *lc = &cache->layers[l];
        if (lc->conv_floats) memset(lc->conv_state, 0, sizeof(float) * lc->conv_floats);
        if (lc->ssm_floats) memset(lc->ssm_state, 0, sizeof(float) * lc->ssm_floats);
    }
}

/* The SSM state of layer l after the tokens consumed so far (its [H_ssm, P, N], Mamba-1's [di, N]):
 * copied out (capture), or overwritten (patch), between two chunks of a sequence - the recurrent
 * counterpart of patching a head (MambaLens' state hooks); the conv state is left as it is */
static void tap_state(Cache *cache, size_t l, int patch, float *values) {
    LayerCache *lc = &cache->layers[l];
    memcpy(patch ? lc->ssm_state : values, patch ? values : lc->ssm_state, sizeof(float) * lc->ssm_floats);
}

/* ---------------------------------------------------------------------------------------------
 * I.6 The forward pass. Activations are float32 [T, D] for a chunk of T tokens; each mixer reads the
 * normed input and writes its output, which its layer adds to the residual stream.
 */

/* Causal softmax attention of one chunk (transformers' eager_attention_forward, with repeat_kv):
 *   for query head h, its kv head g = h / (H / KV), and the chunk's query i at position p = p0 + i:
 *     p_ij = softmax_j(scale q_i . k_j),   j = 0 .. p     (the keys of every position so far)
 *     o_i  = sum_j p_ij v_j                               (in j order)
 * Heads [begin, end); every row through the hook when the intervention touches these heads. */
typedef struct {
    const Compute *cx;
    const float *q;              /* [T, H*hd], rotated */
    const float *keys, *values;  /* [p0 + T, KV*hd]: the cache, this chunk's rows included */
    float *out;                  /* [T, H*hd]: o_i of head h in columns h hd .. (h+1) hd */
    float *rows;                 /* [H, p0 + T]: room for one row p_i. of each head */
    size_t T, p0, n_heads, n_kv_heads, head_dim;
    float scale;
    const Hook *hook;
} AttentionTask;

static void attention_heads(const void *task, size_t begin, size_t end) {
    const AttentionTask *a = task;
    const Compute *cx = a->cx;
    size_t hd = a->head_dim, q_width = a->n_heads * hd, kv_width = a->n_kv_heads * hd, group = a->n_heads / a->n_kv_heads;
    for (size_t h = begin; h < end; h++) {
        const float *keys = a->keys + h / group * hd, *values = a->values + h / group * hd;
        float *p = a->rows + h * (a->p0 + a->T);
        for (size_t i = 0; i < a->T; i++) {
            size_t n = a->p0 + i + 1;
            cx->scores(p, a->q + i * q_width + h * hd, keys, kv_width, n, hd);
            for (size_t j = 0; j < n; j++) p[j] *= a->scale;
            cx->softmax(p, n);
            if (a->hook) mask_and_record_row(a->hook, h, a->p0 + i, p, n);
            cx->weighted_sum(a->out + i * q_width + h * hd, p, values, kv_width, n, hd);
        }
    }
}

/* LlamaAttention over the chunk (modeling_llama.py: LlamaAttention.forward):
 *   q = x Wq^T, k = x Wk^T, v = x Wv^T (+ biases); q and k rotated at their positions
 *   o = attention (above);   out = o Wo^T
 * Zamba2Attention (modeling_zamba2.py) is the same with scale (hd/2)^-0.5, its visit's adapters added to
 * q, k and v, and RoPE only with use_mem_rope. This chunk's keys and values go straight into the cache. */
static void attention_mixer(const Step *s, const Attention *a, LayerCache *lc, const float *x, float *out) {
    const Config *c = s->config;
    const Compute *cx = s->cx;
    size_t T = s->T, hd = c->head_dim, q_width = c->n_heads * hd, kv_width = c->n_kv_heads * hd, in = a->q_proj.cols;
    float *q = scratch(s->scratch, SLOT_1, T, q_width), *heads_out = scratch(s->scratch, SLOT_2, T, q_width);
    float *keys = lc->keys + s->p0 * kv_width, *values = lc->values + s->p0 * kv_width;
    linear(cx, q, x, in, T, a->q_proj, a->q_bias);
    linear(cx, keys, x, in, T, a->k_proj, a->k_bias);
    linear(cx, values, x, in, T, a->v_proj, a->v_bias);
    add_adapter(cx, q, x, T, a->q_adapter);
    add_adapter(cx, keys, x, T, a->k_adapter);
    add_adapter(cx, values, x, T, a->v_adapter);
    if (s->rope_inv_freq) {
        RopeTask rope_task = {s->rope_inv_freq, q, keys, c->n_heads, c->n_kv_heads, hd, s->p0};
        cx->run(cx, rope_rows, &rope_task, T);
    }
    Hook hook;
    AttentionTask task = {cx, q, lc->keys, lc->values, heads_out, scratch(s->scratch, SLOT_3, c->n_heads, s->p0 + T),
                          T, s->p0, c->n_heads, c->n_kv_heads, hd, c->attention_scale, layer_hook(s, HEAD_ATTENTION, &hook)};
    cx->run(cx, attention_heads, &task, c->n_heads);
    ablate_heads(s, HEAD_ATTENTION, hd, q_width, heads_out);
    linear(cx, out, heads_out, q_width, T, a->o_proj, a->o_bias);
}

/* LlamaMLP:   out = (silu(x Wgate^T) * (x Wup^T)) Wdown^T            (with biases where mlp_bias)
 * Zamba2MLP:  [gate | up] = x Wgate_up^T + adapter(x);  out = (gelu(gate) * up) Wdown^T */
static void mlp(const Step *s, const Mlp *w, const float *x, float *out) {
    const Config *c = s->config;
    size_t T = s->T, I = c->intermediate_size, D = w->down_proj.rows;
    float *gate = scratch(s->scratch, SLOT_1, T, I);
    if (c->mlp_gelu) {
        float *gate_up = scratch(s->scratch, SLOT_2, T, 2 * I);
        linear(s->cx, gate_up, x, D, T, w->gate_proj, w->gate_bias);
        add_adapter(s->cx, gate_up, x, T, w->adapter);
        activate_matrix(s->cx, gate, I, gate_up, 2 * I, T, I, ACT_GELU, gate_up + I, 2 * I);
    } else {
        float *up = scratch(s->scratch, SLOT_2, T, I);
        linear(s->cx, gate, x, D, T, w->gate_proj, w->gate_bias);
        linear(s->cx, up, x, D, T, w->up_proj, w->up_bias);
        activate_matrix(s->cx, gate, I, gate, I, T, I, ACT_SILU, up, I);
    }
    linear(s->cx, out, gate, I, T, w->down_proj, w->down_bias);
}

/* -- SSM heads through the hook. For each head h that a probe records or an entry mask touches, and
 * each query t they name, the head's implicit-attention row M[t, 0..t] goes through the hook; a row
 * the hook masked is recomputed from it, in the quadratic form of the scan,
 *   y[t, h size + p] = sum_s M[t, s] v[s, h size + p] + D[h] v[t, h size + p]      (summed in double)
 * before the gate; every other row keeps the scan's result. v is the scan's input (Mamba-1: u; SSD: x).
 * M needs the whole sequence: forward() allows these only in a chunk that starts it (p0 = 0). */
typedef void (*ImplicitRow)(const void *mixer, size_t head, size_t t, float *row);

static void ssm_rows_through_hook(const Step *s, ImplicitRow implicit_row, const void *mixer, size_t n_heads, size_t size,
                                  const float *v, size_t v_stride, Weight D, float *y, size_t y_stride) {
    Hook hook_storage;
    const Hook *hook = layer_hook(s, HEAD_SSM, &hook_storage);
    if (!hook) return;
    float *row = checked_malloc(sizeof(float) * s->T);
    for (size_t h = 0; h < n_heads; h++)
        for (size_t t = 0; t < s->T; t++) {
            if (!hook_wants_row(hook, h, t)) continue;
            implicit_row(mixer, h, t, row);
            if (!mask_and_record_row(hook, h, t, row, t + 1)) continue;
            for (size_t p = 0; p < size; p++) {
                size_t column = h * size + p;
                double sum = (double)weight_at(D, h) * v[t * v_stride + column];
                for (size_t j = 0; j <= t; j++) sum += (double)row[j] * v[j * v_stride + column];
                y[t * y_stride + column] = (float)sum;
            }
        }
    free(row);
}

/* -- Mamba-1: MambaMixer, FalconMambaMixer (modeling_mamba.py slow_forward, modeling_falcon_mamba.py):
 *   [u | z] = x Win^T                          (di each)
 *   u = silu(causal_conv1d(u))
 *   [dt | B | C] = u Wx^T                      (R, N, N)
 *   falcon_mamba only: dt, B and C each divided by its RMS (no weight, eps mixer_rms_eps), before dt_proj
 *   dt = softplus(dt Wdt^T + b_dt)             (the bias inside the softplus)
 *   per channel d, A = -exp(A_log[d]):  S[d] <- exp(dt[d] A) S[d] + dt[d] B u[d];  y[d] = S[d] . C + D[d] u[d]
 *   y = y * silu(z)                            (the D skip before the gate, as selective_scan_ref)
 *   out = y Wout^T */
typedef struct {
    const Compute *cx;
    const Config *config;
    const Mamba1 *w;
    const float *A;         /* [di, N]: -exp(A_log) */
    float *state;           /* [di, N] */
    const float *u;         /* [T, di] */
    const float *dt;        /* [T, di] */
    const float *dt_B_C;    /* [T, R + 2N]: B at column R, C at R + N */
    size_t T;
    float *y;               /* [T, di], before the gate */
} Mamba1Scan;

static void mamba1_scan_channels(const void *task, size_t begin, size_t end) {
    const Mamba1Scan *s = task;
    size_t di = s->config->ssm_inner, N = s->config->ssm_state, R = s->config->dt_rank, row = R + 2 * N;
    for (size_t d = begin; d < end; d++) {
        const float *A = s->A + d * N;
        float D = weight_at(s->w->D, d), *S = s->state + d * N;
        for (size_t t = 0; t < s->T; t++) {
            const float *B = s->dt_B_C + t * row + R, *C = B + N;
            float u = s->u[t * di + d];
            s->y[t * di + d] = s->cx->mamba1_step(S, A, s->dt[t * di + d], u, B, C, N) + u * D;
        }
    }
}

/* Mamba-1 channel d's implicit attention, row t (Ali, Zimerman, Wolf 2024, "The Hidden Attention of Mamba
 * Models", eq. 11; the conv and the gate left out, D apart):
 *   M[t, s] = sum_n C_t[n] exp(A[d, n] sum_{r=s+1..t} dt_r[d]) dt_s[d] B_s[n],   s <= t
 * from the chunk's own dt, B and C, in double */
static void mamba1_implicit_row(const void *mixer, size_t d, size_t t, float *row) {
    const Mamba1Scan *s = mixer;
    size_t di = s->config->ssm_inner, N = s->config->ssm_state, R = s->config->dt_rank, width = R + 2 * N;
    const float *C = s->dt_B_C + t * width + R + N;
    double decay_sum = 0; /* sum_{r=j+1..t} dt_r[d] */
    for (size_t j = t + 1; j-- > 0;) {
        const float *B = s->dt_B_C + j * width + R;
        double delta = s->dt[j * di + d], sum = 0;
        for (size_t n = 0; n < N; n++)
            sum += (double)C[n] * gna_exp(-gna_exp((double)weight_at(s->w->A_log, d * N + n)) * decay_sum) * delta * (double)B[n];
        row[j] = (float)sum;
        decay_sum += delta;
    }
}

/* A = -exp(A_log) [di, N] (the mixers' A = -torch.exp(self.A_log.float())): a constant of the layer,
 * computed once when it loads rather than at every token, as the RoPE frequencies are */
static float *mamba1_A(Weight A_log) {
    float *A = float_array(A_log.rows, A_log.cols);
    for (size_t i = 0; i < A_log.rows * A_log.cols; i++) A[i] = -exp_f(weight_at(A_log, i));
    return A;
}

static void mamba1_mixer(const Step *s, const Mamba1 *w, LayerCache *lc, const float *x, float *out) {
    const Config *c = s->config;
    const Compute *cx = s->cx;
    size_t T = s->T, di = c->ssm_inner, N = c->ssm_state, R = c->dt_rank, row = R + 2 * N;
    float *u_z = scratch(s->scratch, SLOT_1, T, 2 * di), *u = scratch(s->scratch, SLOT_2, T, di);
    float *dt_B_C = scratch(s->scratch, SLOT_3, T, row), *dt = scratch(s->scratch, SLOT_4, T, di);
    float *y = scratch(s->scratch, SLOT_5, T, di);
    linear(cx, u_z, x, c->hidden_size, T, w->in_proj, w->in_bias);
    causal_conv1d(cx, u, u_z, 2 * di, T, di, w->conv_weight, w->conv_bias, lc->conv_state);
    activate_matrix(cx, u, di, u, di, T, di, ACT_SILU, NULL, 0);
    linear(cx, dt_B_C, u, di, T, w->x_proj, no_weight);
    if (c->family == FAMILY_FALCON_MAMBA)
        for (size_t t = 0; t < T; t++) {
            float *r = dt_B_C + t * row;
            rmsnorm(r, r, R, no_weight, c->mixer_rms_eps);
            rmsnorm(r + R, r + R, N, no_weight, c->mixer_rms_eps);
            rmsnorm(r + R + N, r + R + N, N, no_weight, c->mixer_rms_eps);
        }
    linear(cx, dt, dt_B_C, row, T, w->dt_proj, w->dt_bias);
    activate_matrix(cx, dt, di, dt, di, T, di, ACT_SOFTPLUS, NULL, 0);
    Mamba1Scan scan = {cx, c, w, w->A, lc->ssm_state, u, dt, dt_B_C, T, y};
    cx->run(cx, mamba1_scan_channels, &scan, di);
    ssm_rows_through_hook(s, mamba1_implicit_row, &scan, di, 1, u, di, w->D, y, di);
    activate_matrix(cx, y, di, u_z + di, 2 * di, T, di, ACT_SILU, y, di); /* y = silu(z) * y */
    ablate_heads(s, HEAD_SSM, 1, di, y);
    linear(cx, out, y, di, T, w->out_proj, w->out_bias);
}

/* -- The SSD scan (Dao & Gu 2024, "Transformers are SSMs", the selective SSM with a scalar A per
 * head; the sequential form of mamba_ssm's ssd_minimal_discrete and transformers' torch_forward).
 * Head h has P channels and reads the N states of its group g = h / (H_ssm / G) (consecutive heads
 * share a group: repeat_interleave):
 *   S[p, n] <- exp(dt A) S[p, n] + dt x[p] B[g, n];    y[p] = S[p] . C[g] + D[h] x[p]
 * Llamba's DiscreteMamba2 is the same scan with A = -1 and no dt on the input: cartesia hands
 * mamba_chunk_scan_combined x / dt, which the kernel multiplies by dt again; gna adds x B directly
 * (the two differ by one rounding). */
typedef struct {
    const Compute *cx;
    const Config *config;
    const float *A;          /* [H_ssm]: -exp(A_log), or -1 (llamba) */
    Weight D;                /* [H_ssm] */
    int input_times_dt;      /* 1: the input is dt x (mamba-2); 0: x (llamba) */
    float *state;            /* [H_ssm, P, N] */
    const float *xBC;        /* [T, conv_dim]: x (di) | B (G N) | C (G N), after the conv */
    const float *dt;         /* [T, H_ssm] */
    size_t T;
    float *y;                /* [T, di], before the gate */
} SsdScan;

static void ssd_scan_heads(const void *task, size_t begin, size_t end) {
    const SsdScan *s = task;
    const Config *c = s->config;
    size_t P = c->ssm_head_dim, N = c->ssm_state, H = c->ssm_heads, G = c->n_groups, di = c->ssm_inner, conv_dim = di + 2 * G * N;
    for (size_t h = begin; h < end; h++) {
        size_t g = h / (H / G);
        float A = s->A[h], D = weight_at(s->D, h), *S = s->state + h * P * N;
        for (size_t t = 0; t < s->T; t++) {
            const float *x = s->xBC + t * conv_dim + h * P, *B = s->xBC + t * conv_dim + di + g * N, *C = B + G * N;
            float delta = s->dt[t * H + h], decay = exp_f(delta * A);
            for (size_t p = 0; p < P; p++)
                s->y[t * di + h * P + p] = s->cx->ssd_step(S + p * N, decay, s->input_times_dt ? delta * x[p] : x[p], B, C, N) + D * x[p];
        }
    }
}

/* SSD head h's implicit attention, row t, from the chunk's own x, B, C and dt, in double:
 *   mamba-2:  M[t, s] = (C_t . B_s) exp(A sum_{r=s+1..t} dt_r) dt_s          (Dao & Gu 2024, eq. 6)
 *   llamba:   the same with A = -1 and without dt_s                          (phi-mamba materialize_mixer) */
static void ssd_implicit_row(const void *mixer, size_t h, size_t t, float *row) {
    const SsdScan *s = mixer;
    const Config *c = s->config;
    size_t N = c->ssm_state, H = c->ssm_heads, G = c->n_groups, di = c->ssm_inner, conv_dim = di + 2 * G * N, g = h / (H / G);
    const float *C = s->xBC + t * conv_dim + di + (G + g) * N;
    double log_decay = 0; /* A sum_{r=j+1..t} dt_r */
    for (size_t j = t + 1; j-- > 0;) {
        const float *B = s->xBC + j * conv_dim + di + g * N;
        double delta = s->dt[j * H + h], cb = 0;
        for (size_t n = 0; n < N; n++) cb += (double)C[n] * (double)B[n];
        row[j] = (float)(cb * gna_exp(log_decay) * (s->input_times_dt ? delta : 1.0));
        log_decay += (double)s->A[h] * delta;
    }
}

/* dt of Mamba-2 and Zamba2: softplus(dt + dt_bias), clamped to time_step_limit ([0, inf) when config.json
 * has none). That is transformers' Mamba2Mixer, and Zamba2 as the paper ran it: transformers 4.49's
 * cuda_kernels_forward (the authors' copy of modeling_zamba2.py) hands the mamba_ssm kernels dt_limit
 * only where config.json sets time_step_limit, and Zyphra's configs do not. The CPU path of that version
 * (torch_forward), and every path of transformers 5.17, clamp Zamba2's dt at time_step_min instead;
 * --dt-min-clamp does that. */
static float ssd_dt(const Compute *cx, const Config *c, float dt, float dt_bias) {
    float v = softplus(dt + dt_bias);
    if (c->family == FAMILY_ZAMBA2 && cx->dt_min_clamp) return fmaxf(v, c->time_step_min);
    return fminf(fmaxf(v, c->dt_limit_min), c->dt_limit_max);
}

/* Mamba2Mixer and Zamba2MambaMixer (modeling_mamba2.py and modeling_zamba2.py, torch_forward):
 *   [z | xBC | dt] = x Win^T                (di, conv_dim = di + 2 G N, H_ssm)
 *   xBC = silu(causal_conv1d(xBC));  [x | B | C] = xBC
 *   dt = ssd_dt(dt);  A = -exp(A_log)
 *   y = the SSD scan (above)
 *   y = RMSNorm(y * silu(z)) per group of di / G channels, times its weight
 *   out = y Wout^T
 * The gated norm: mamba_ssm, which trained the checkpoints, normalises each group on its own
 * (RMSNormGated(d_ssm, group_size=d_ssm // ngroups), mamba_ssm/modules/mamba2.py), and so does
 * Zamba2; transformers' Mamba2 normalises the full width. The two agree at n_groups = 1 (every
 * state-spaces/mamba2-* checkpoint); gna follows the training code.
 *
 * DiscreteMamba2 (Llamba; cartesia-ai/edge mixers/discrete_mamba2.py):
 *   [xBC | z | a] = x Win^T                 (conv_dim, di, H_ssm; G is n_qk_heads)
 *   xBC = causal_conv1d(xBC), no activation by default ("identity");  [x | B | C] = xBC
 *   dt = softplus(a), A = -1, the input x (not dt x)
 *   out = (y * silu(z + z_bias)) Wout^T     no norm */
static void ssd_mixer(const Step *s, const Layer *layer, LayerCache *lc, const float *x, float *out) {
    const Config *c = s->config;
    const Compute *cx = s->cx;
    const Ssd *w = &layer->ssd;
    int llamba = layer->kind == MIXER_DISCRETE_MAMBA2;
    size_t T = s->T, di = c->ssm_inner, H = c->ssm_heads, G = c->n_groups, conv_dim = di + 2 * G * c->ssm_state;
    size_t width = di + conv_dim + H, xBC_at = llamba ? 0 : di, z_at = llamba ? conv_dim : 0, dt_at = di + conv_dim;
    float *projected = scratch(s->scratch, SLOT_1, T, width), *xBC = scratch(s->scratch, SLOT_2, T, conv_dim);
    float *dt = scratch(s->scratch, SLOT_3, T, H), *A = scratch(s->scratch, SLOT_4, 1, H);
    float *y = scratch(s->scratch, SLOT_5, T, di), *gate = scratch(s->scratch, SLOT_6, T, di);
    linear(cx, projected, x, c->hidden_size, T, w->in_proj, w->in_bias);
    causal_conv1d(cx, xBC, projected + xBC_at, width, T, conv_dim, w->conv_weight, w->conv_bias, lc->conv_state);
    if (c->conv_silu) activate_matrix(cx, xBC, conv_dim, xBC, conv_dim, T, conv_dim, ACT_SILU, NULL, 0);
    for (size_t t = 0; t < T; t++)
        for (size_t h = 0; h < H; h++) {
            float a = projected[t * width + dt_at + h];
            dt[t * H + h] = llamba ? softplus(a) : ssd_dt(cx, c, a, weight_at(w->dt_bias, h));
        }
    for (size_t h = 0; h < H; h++) A[h] = llamba ? -1.0f : -exp_f(weight_at(w->A_log, h));
    SsdScan scan = {cx, c, A, w->D, !llamba, lc->ssm_state, xBC, dt, T, y};
    cx->run(cx, ssd_scan_heads, &scan, H);
    ssm_rows_through_hook(s, ssd_implicit_row, &scan, H, c->ssm_head_dim, xBC, conv_dim, w->D, y, di);
    for (size_t t = 0; t < T; t++) /* the gate's argument: z, or z + z_bias */
        for (size_t i = 0; i < di; i++)
            gate[t * di + i] = projected[t * width + z_at + i] + (w->z_bias.data ? weight_at(w->z_bias, i) : 0.0f);
    activate_matrix(cx, y, di, gate, di, T, di, ACT_SILU, y, di); /* y = silu(z) * y */
    if (!llamba)
        for (size_t t = 0; t < T; t++)
            for (size_t g = 0; g < G; g++) {
                float *group = y + t * di + g * (di / G);
                rmsnorm(group, group, di / G, weight_slice(w->gated_norm, g * (di / G), di / G), c->gated_norm_eps);
            }
    ablate_heads(s, HEAD_SSM, c->ssm_head_dim, di, y);
    linear(cx, out, y, di, T, w->out_proj, w->out_bias);
}

/* A Zamba2 hybrid layer's visit of its shared block (modeling_zamba2.py: Zamba2AttentionDecoderLayer,
 * Zamba2HybridLayer; Glorioso et al. 2024, "The Zamba2 Suite", fig. 2):
 *   u = RMSNorm(concat(h, embeddings))       the block reads the residual stream and the input
 *   a = attention(u)                         no residual inside the block
 *   t = mlp(RMSNorm(a)) Wlinear^T            the visit's own output projection
 * t is added to the Mamba layer's norm input only, not to the residual stream (Zamba2MambaDecoderLayer) */
static void shared_visit(const Step *s, const SharedVisit *v, LayerCache *lc, const float *h, const float *embedded, float *t_out) {
    const Config *c = s->config;
    size_t T = s->T, D = c->hidden_size;
    float *u = scratch(s->scratch, SLOT_VISIT_U, T, 2 * D), *a = scratch(s->scratch, SLOT_VISIT_A, T, D);
    float *mlp_out = scratch(s->scratch, SLOT_VISIT_MLP, T, D);
    for (size_t t = 0; t < T; t++) {
        memcpy(u + t * 2 * D, h + t * D, sizeof(float) * D);
        memcpy(u + t * 2 * D + D, embedded + t * D, sizeof(float) * D);
    }
    rmsnorm_rows(s->cx, u, u, T, 2 * D, v->block->input_norm, c->norm_eps);
    attention_mixer(s, &v->attention, lc, u, a);
    rmsnorm_rows(s->cx, a, a, T, D, v->block->pre_mlp_norm, c->norm_eps);
    mlp(s, &v->mlp, a, mlp_out);
    linear(s->cx, t_out, mlp_out, D, T, v->linear, no_weight);
}

/* replace_head's computation (above): the donor layer's attention with every head but the replaced ones
 * ablated, on the residual stream h normed by the donor layer's norm, added to the layer's output. A
 * replaced head is the donor's: the masks and probes that name it (SSM heads in a Llamba layer) apply here. */
static void donor_heads(const Step *s, const LayerPlan *plan, LayerCache *lc, const float *h, float *out) {
    const Model *donor = plan->head_donor;
    const Layer *layer = &donor->layers[s->layer];
    const Intervention *iv = s->iv;
    size_t D = donor->config.hidden_size, n_heads = donor->config.n_heads, n_items = 0, n_probes = 0;
    MaskItem *items = checked_calloc(n_heads + iv->n_items, sizeof(MaskItem));
    Probe *probes = checked_calloc(iv->n_probes + 1, sizeof(Probe));
    for (size_t head = 0; head < n_heads; head++) {
        int replaced = 0;
        for (size_t i = 0; i < plan->n_donor_heads; i++) replaced |= plan->donor_heads[i] == head;
        if (!replaced) items[n_items++] = (MaskItem){.layer = s->layer, .kind = HEAD_ATTENTION, .head = head, .query_name = -1, .key_name = -1};
        for (size_t i = 0; replaced && i < iv->n_items; i++) /* the layer has one kind of heads (replace_head) */
            if (iv->items[i].layer == s->layer && iv->items[i].head == head) items[n_items] = iv->items[i], items[n_items++].kind = HEAD_ATTENTION;
        for (size_t i = 0; replaced && i < iv->n_probes; i++)
            if (iv->probes[i].layer == s->layer && iv->probes[i].head == head)
                probes[n_probes] = iv->probes[i], probes[n_probes++].kind = HEAD_ATTENTION;
    }
    Intervention keep = {.n_items = n_items, .items = items, .n_probes = n_probes, .probes = probes};
    Step d = {s->cx, &keep, &donor->config, donor->rope_inv_freq, s->layer, s->p0, s->T, s->scratch, layer};
    LayerCache cache = {.keys = lc->donor_keys, .values = lc->donor_values, .kv_width = lc->donor_kv_width};
    float *x = scratch(s->scratch, SLOT_VISIT_U, s->T, D), *y = scratch(s->scratch, SLOT_VISIT_A, s->T, D);
    rmsnorm_rows(s->cx, x, h, s->T, D, layer->norm, donor->config.norm_eps);
    attention_mixer(&d, &layer->attention, &cache, x, y);
    for (size_t i = 0; i < s->T * D; i++) out[i] += y[i];
    free(items);
    free(probes);
}

/* The final norm and the LM head: logits = RMSNorm(h) Wlm^T (+ b), for `rows` rows of h [rows, D];
 * normed is room for [rows, D]. On a residual captured after layer l, this is the logit lens
 * (nostalgebraist 2020; TransformerLens' accumulated_resid with apply_ln): what the model would
 * predict if the layers after l were left out. */
static void unembed(const Model *m, const Compute *cx, const float *h, size_t rows, float *normed, float *logits) {
    rmsnorm_rows(cx, normed, h, rows, m->config.hidden_size, m->final_norm, m->config.final_norm_eps);
    linear(cx, logits, normed, m->config.hidden_size, rows, m->lm_head, m->lm_head_bias);
}

/* The first value of x[rows, width] that is not finite, as its row; -1 when all are. A NaN or Inf weight
 * makes every later value NaN, and an argmax over NaNs still picks an answer: forward refuses instead,
 * saying where the values stopped being finite. */
static long first_infinite_row(const float *x, size_t rows, size_t width) {
    for (size_t i = 0; i < rows * width; i++)
        if (!isfinite(x[i])) return (long)(i / width);
    return -1;
}

/* The whole model over a chunk of T tokens that continues the sequence in `cache`:
 *   h = E[tokens]
 *   per layer:   h = h + mixer(RMSNorm(h + t));   with an MLP also  h = h + mlp(RMSNorm(h))
 *                (t: a zamba2 hybrid layer's shared-block output, otherwise 0)
 *   logits = unembed(h)                      for rows first_logit_row .. T-1 only
 * (LlamaDecoderLayer, MambaBlock, Mamba2Block, Zamba2HybridLayer, Llamba's Block: pre-norm residual
 * blocks, the residual stream kept in float32.) After each layer, h passes its residual taps. */
static int forward(const Model *m, const Compute *cx, const Intervention *iv, Cache *cache, const int *tokens, size_t T,
                   float *logits, size_t first_logit_row) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, p0 = cache->n_tokens;
    if (T < 1) return bad_input("tokens", "nothing to run: no tokens");
    for (size_t t = 0; t < T; t++)
        if (tokens[t] < 0 || (size_t)tokens[t] >= c->vocab_size)
            return bad_input("tokens", "token id %d is out of range for vocab_size %zu", tokens[t], c->vocab_size);
    if (cache->bounded && p0 + T > cache->max_tokens)
        return bad_input("tokens", "%zu tokens overflow the cache of %zu positions", p0 + T, cache->max_tokens);
    for (size_t i = 0; iv && i < iv->n_items; i++) { /* positions must lie in the sequence */
        const MaskItem *item = &iv->items[i];
        long ends[4] = {item->query_first, item->query_last, item->key_first, item->key_last};
        if ((item->query_name >= 0 || item->key_name >= 0) && !item->resolved)
            return bad_input("--mask", "\"%s\": positions by name are a request's (gna mmlu, kv, knowledge, gsm8k; text= also "
                                       "in logits, attn and lens)", item->text);
        for (int e = 0; e < (item->has_keys ? 4 : item->has_queries ? 2 : 0); e++)
            if ((e < 2 ? item->query_name : item->key_name) < 0 && resolve_position(ends[e], p0 + T) < 0)
                return bad_input("--mask", "\"%s\": position %ld is outside the %zu tokens", item->text, ends[e], p0 + T);
        for (int keys = 0; keys <= item->has_keys; keys++)
            if ((keys ? item->key_name : item->query_name) < 0 &&
                resolve_position(ends[2 * keys], p0 + T) > resolve_position(ends[2 * keys + 1], p0 + T))
                return bad_input("--mask", "\"%s\": the %s range runs backwards", item->text, keys ? "key" : "query");
        if (p0 > 0 && item->kind == HEAD_SSM && item->has_keys) /* implicit attention reads the whole sequence */
            return bad_input("--mask", "\"%s\": SSM entry masks need the whole sequence in one chunk", item->text);
    }
    for (size_t i = 0; iv && i < iv->n_probes; i++)
        if (p0 > 0 || iv->probes[i].length != T)
            return bad_input("probes", "recording attention needs the whole sequence of %zu tokens in one chunk", iv->probes[i].length);
    Scratch *sc = &cache->scratch;
    float *h = scratch(sc, SLOT_H, T, D), *normed = scratch(sc, SLOT_NORMED, T, D), *mixed = scratch(sc, SLOT_MIXED, T, D);
    float *embedded = m->shared_blocks ? scratch(sc, SLOT_EMBEDDED, T, D) : NULL;
    for (size_t t = 0; t < T; t++) widen(m->embeddings, (size_t)tokens[t] * D, D, h + t * D);
    long bad = first_infinite_row(h, T, D);
    if (bad >= 0) return bad_input("the embeddings", "token %d's row is not finite (NaN or Inf)", tokens[bad]);
    if (embedded) memcpy(embedded, h, sizeof(float) * T * D); /* zamba2's "original_hidden_states" */
    for (size_t l = 0; l < c->n_layers; l++) {
        LayerPlan plan = planned_layer(m, iv, l);
        if (!plan.layer) continue;
        if (interrupted()) return failure("gna", "interrupted");
        const Layer *layer = plan.layer;
        const Config *lc_config = &plan.owner->config;
        Step s = {cx, iv, lc_config, plan.owner->rope_inv_freq, l, p0, T, sc, layer};
        LayerCache *lc = &cache->layers[l];
        if (layer->has_shared_visit) {
            shared_visit(&s, &layer->shared, lc, h, embedded, mixed);
            for (size_t i = 0; i < T * D; i++) mixed[i] += h[i];
            rmsnorm_rows(cx, normed, mixed, T, D, layer->norm, lc_config->norm_eps);
        } else {
            rmsnorm_rows(cx, normed, h, T, D, layer->norm, lc_config->norm_eps);
        }
        if (layer->kind == MIXER_ATTENTION) attention_mixer(&s, &layer->attention, lc, normed, mixed);
        else if (layer->kind == MIXER_MAMBA1) mamba1_mixer(&s, &layer->mamba1, lc, normed, mixed);
        else ssd_mixer(&s, layer, lc, normed, mixed);
        if (plan.head_donor) donor_heads(&s, &plan, lc, h, mixed);
        for (size_t i = 0; i < T * D; i++) h[i] += mixed[i];
        if (layer->mlp_norm.data) {
            rmsnorm_rows(cx, normed, h, T, D, layer->mlp_norm, lc_config->norm_eps);
            mlp(&s, &layer->mlp, normed, mixed);
            for (size_t i = 0; i < T * D; i++) h[i] += mixed[i];
        }
        tap_sites(&s, 1, HEAD_ATTENTION, D, D, h);
        if ((bad = first_infinite_row(h, T, D)) >= 0)
            return bad_input("model.layers", "layer %zu's output at position %zu is not finite (NaN or Inf): a weight of it is, or "
                                             "a value passed float32's range", l, p0 + (size_t)bad);
    }
    if (logits) unembed(m, cx, h + first_logit_row * D, T - first_logit_row, normed, logits);
    if (logits && (bad = first_infinite_row(logits, T - first_logit_row, c->vocab_size)) >= 0)
        return bad_input("the final norm or LM head", "the logits at position %zu are not finite (NaN or Inf)", p0 + first_logit_row + (size_t)bad);
    cache->n_tokens += T;
    return GNA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * I.7 The tasks, as lm-evaluation-harness 0.4.x defines them (lm_eval/api/task.py): a task turns each
 * document into a Question - its requests, each a context and a continuation scored by log-likelihood
 * (multiple choice), or one context to continue by greedy generation (generate_until) - the scorer
 * scores the requests (score_request, and Part II's scorer, which shares runs), and the metrics turn
 * the scores into numbers (question_metrics, task_score, group_score).
 */
/* Named parts of a context, which mask specs can select by name (:letters, @value): bytes [start, end) */
typedef enum { MARK_LETTER, MARK_OPTION, MARK_PAIR, MARK_ASKED, MARK_VALUE, N_MARK_KINDS } MarkKind;
static const char *const mark_names[N_MARK_KINDS] = {"letters", "options", "pairs", "asked", "value"};

typedef struct {
    MarkKind kind;
    size_t start, end;
} Mark;

typedef struct {
    char *task;              /* "mmlu_virology", "arc_easy", "kv_pairs_10", "kv_pairs_10_masked", "gsm8k" */
    int doc_id;              /* the document's index within its task */
    char *doc;               /* the document as JSON, for the log */
    char *context;           /* the context of every request; NULL when each has its own (contexts) */
    char **contexts;         /* [n_choices] each request's own context (winogrande), or NULL */
    size_t n_choices;
    char **continuations;    /* [n_choices] scored after the context: " A", " " + choice, "42" */
    size_t *choice_lengths;  /* [n_choices] len(choice) in code points, for acc_norm; NULL: no acc_norm */
    size_t gold;
    char *target;            /* generate_until (gsm8k): the reference answer, n_choices 0; else NULL */
    long prefix;             /* the few-shot prefix (of Harness.prefixes) the context starts with, or -1 */
    int masked;              /* scored under --mask (kv scores each sample with and without it) */
    size_t n_marks, marks_capacity;
    Mark *marks;             /* [n_marks] mmlu: the option letters and lines; kv: its lines, the asked one
                                and its value */
} Question;

typedef struct {
    size_t n_questions, capacity;
    Question *questions;     /* in the order of the results */
    size_t n_prefixes;
    char **prefixes;         /* few-shot prefixes, one per mmlu subject */
} Harness;

static const char *request_context(const Question *q, size_t c) { return q->contexts ? q->contexts[c] : q->context; }

static Question *add_question(Harness *h, const char *task, int doc_id, size_t n_choices) {
    h->questions = grow_array(h->questions, h->n_questions, &h->capacity, sizeof(Question));
    Question *q = &h->questions[h->n_questions++];
    memset(q, 0, sizeof *q);
    q->task = checked_strdup(task);
    q->doc_id = doc_id;
    q->n_choices = n_choices;
    q->continuations = checked_calloc(n_choices, sizeof(char *));
    q->prefix = -1;
    return q;
}

static void add_mark(Question *q, MarkKind kind, size_t start, size_t end) {
    q->marks = grow_array(q->marks, q->n_marks, &q->marks_capacity, sizeof(Mark));
    q->marks[q->n_marks++] = (Mark){kind, start, end};
}

static void free_harness(Harness *h) {
    for (size_t i = 0; i < h->n_questions; i++) {
        Question *q = &h->questions[i];
        for (size_t c = 0; c < q->n_choices; c++) {
            free(q->continuations[c]);
            if (q->contexts) free(q->contexts[c]);
        }
        free(q->continuations), free(q->contexts), free(q->choice_lengths), free(q->marks);
        free(q->task), free(q->doc), free(q->context), free(q->target);
    }
    for (size_t p = 0; p < h->n_prefixes; p++) free(h->prefixes[p]);
    free(h->prefixes), free(h->questions);
    memset(h, 0, sizeof *h);
}

/* -- Text as Python sees it. lm-eval is Python: where it strips, measures, lowers or capitalizes a
 * string, gna does the same on code points. str.isspace() is Unicode White_Space plus U+001C..U+001F;
 * str.lower() and str.capitalize() follow CPython's unicodeobject.c (full case mappings and the
 * final-sigma rule), with the tables of the appendix. */
static int python_is_space(uint32_t c) { return is_white_space(c) || (c >= 0x1C && c <= 0x1F); }

/* bytes of trailing white space at the end of text[0..n) (what str.rstrip() removes) */
static size_t trailing_space_bytes(const char *text, size_t n) {
    size_t kept = 0; /* the end of the last character that is not white space */
    for (size_t at = 0; at < n;) {
        uint32_t c = utf8_next(text, &at);
        if (!python_is_space(c)) kept = at;
    }
    return n - kept;
}

/* str.strip() and str.lstrip(): the span of text[0..n) without white space at the ends */
static void python_strip(const char *text, size_t n, int right_too, size_t *begin, size_t *end) {
    size_t b = 0;
    for (size_t at = 0; at < n && python_is_space(utf8_next(text, &at));) b = at;
    *begin = b;
    *end = right_too ? n - trailing_space_bytes(text + b, n - b) : n;
}

static size_t code_points(const char *text) {
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) n += (*s & 0xC0) != 0x80;
    return n;
}

static void python_lower(Bytes *out, const char *text, size_t n);      /* str.lower() (the appendix's tables) */
static void python_capitalize(Bytes *out, const char *text, size_t n); /* str.capitalize() */

/* text with every `from` replaced by `to`, left to right without overlaps (str.replace) */
static char *python_replace(const char *text, const char *from, const char *to) {
    Bytes b = {0};
    bytes_add(&b, "", 0);
    for (const char *p = text, *hit; *p; p = hit + strlen(from)) {
        if (!(hit = strstr(p, from))) {
            bytes_add_text(&b, p);
            break;
        }
        bytes_add(&b, p, (size_t)(hit - p));
        bytes_add_text(&b, to);
    }
    return b.data;
}

/* -- Multiple choice (lm-eval's output_type multiple_choice, target_delimiter " "): request c is
 * (context, " " + choices[c]); acc_norm divides each log-likelihood by len(choices[c]) in code points
 * (process_results' completion_len). */
static Question *mc_question(Harness *h, const char *task, int doc_id, const char *context, const char *const *choices,
                             size_t n_choices, size_t gold) {
    Question *q = add_question(h, task, doc_id, n_choices);
    q->context = checked_strdup(context);
    q->gold = gold;
    q->choice_lengths = checked_calloc(n_choices, sizeof(size_t));
    for (size_t c = 0; c < n_choices; c++) {
        Bytes b = {0};
        bytes_add_text(&b, " ");
        bytes_add_text(&b, choices[c]);
        q->continuations[c] = b.data;
        q->choice_lengths[c] = code_points(choices[c]);
    }
    return q;
}

/* -- The knowledge control: the paper's "knowledge tasks" (the authors' eval_knowledge: the mean acc of
 * lm-eval's winogrande, openbookqa, piqa, hellaswag, arc_challenge and arc_easy, 0-shot). Each as its
 * lm-eval 0.4.x yaml defines it (lm_eval/tasks/<task>/), on its Hugging Face dataset's rows:
 *   arc_easy, arc_challenge (allenai/ai2_arc, test)   "Question: <question>\nAnswer:", the choices'
 *       texts, gold = choices.label.index(answerKey) (labels "A"-"E" or "1"-"5")
 *   openbookqa (openbookqa main, test)                <question_stem>, gold = label.index(answerKey.lstrip())
 *   piqa (piqa, validation)                           "Question: <goal>\nAnswer:", [sol1, sol2], gold = label
 *   hellaswag (hellaswag, validation)                 process_docs (hellaswag/utils.py): query =
 *       preprocess(activity_label + ": " + ctx_a + " " + ctx_b.capitalize()), choices =
 *       preprocess(ending) each, gold = int(label)
 *   winogrande (winogrande_xl, validation)            partial evaluation (preprocess_winogrande.py): with i
 *       the index of the first "_" in sentence, request c is (sentence[:i] + option_c, " " +
 *       sentence[i+1:].strip()): two contexts, one continuation; gold = {"1": 0, "2": 1}[answer];
 *       acc only
 * A label that is not among the choices is refused (lm-eval would stop with a ValueError). */
enum { N_KNOWLEDGE_TASKS = 6 };
static const char *const knowledge_tasks[N_KNOWLEDGE_TASKS] = {"arc_challenge", "arc_easy", "hellaswag", "openbookqa", "piqa", "winogrande"};

static Question *labelled_question(Harness *h, const char *task, int doc_id, const char *context, const char *const *texts,
                                   const char *const *labels, size_t n, const char *answer_key) {
    for (size_t c = 0; c < n; c++)
        if (strcmp(labels[c], answer_key) == 0) return mc_question(h, task, doc_id, context, texts, n, c);
    return NULL;
}

static Question *arc_question(Harness *h, const char *task, int doc_id, const char *question, const char *const *texts,
                              const char *const *labels, size_t n, const char *answer_key) {
    Bytes context = {0};
    bytes_printf(&context, "Question: %s\nAnswer:", question);
    Question *q = labelled_question(h, task, doc_id, context.data, texts, labels, n, answer_key);
    free(context.data);
    return q;
}

static Question *openbookqa_question(Harness *h, int doc_id, const char *question_stem, const char *const *texts,
                                     const char *const *labels, size_t n, const char *answer_key) {
    size_t begin, end;
    python_strip(answer_key, strlen(answer_key), 0, &begin, &end);
    return labelled_question(h, "openbookqa", doc_id, question_stem, texts, labels, n, answer_key + begin);
}

static Question *piqa_question(Harness *h, int doc_id, const char *goal, const char *sol1, const char *sol2, size_t label) {
    Bytes context = {0};
    bytes_printf(&context, "Question: %s\nAnswer:", goal);
    const char *choices[2] = {sol1, sol2};
    Question *q = mc_question(h, "piqa", doc_id, context.data, choices, 2, label);
    free(context.data);
    return q;
}

/* hellaswag/utils.py preprocess: strip; " [title]" -> ". "; re.sub("\\[.*?\\]", ""), that is each "["
 * with the nearest "]" after it on the same line (. matches no "\n"), left to right; "  " -> " " */
static char *hellaswag_preprocess(const char *text) {
    size_t begin, end;
    python_strip(text, strlen(text), 1, &begin, &end);
    char *stripped = checked_strndup(text + begin, end - begin), *titled = python_replace(stripped, " [title]", ". ");
    Bytes b = {0};
    bytes_add(&b, "", 0);
    for (const char *p = titled; *p;) {
        const char *close = *p == '[' ? p + 1 + strcspn(p + 1, "]\n") : NULL;
        if (close && *close == ']') p = close + 1;
        else bytes_add(&b, p++, 1);
    }
    char *result = python_replace(b.data, "  ", " ");
    free(stripped), free(titled), free(b.data);
    return result;
}

static Question *hellaswag_question(Harness *h, int doc_id, const char *activity_label, const char *ctx_a, const char *ctx_b,
                                    const char *const endings[4], size_t label) {
    Bytes ctx = {0};
    bytes_printf(&ctx, "%s: %s ", activity_label, ctx_a);
    python_capitalize(&ctx, ctx_b, strlen(ctx_b));
    char *query = hellaswag_preprocess(ctx.data), *choices[4];
    for (int c = 0; c < 4; c++) choices[c] = hellaswag_preprocess(endings[c]);
    Question *q = mc_question(h, "hellaswag", doc_id, query, (const char *const *)choices, 4, label);
    for (int c = 0; c < 4; c++) free(choices[c]);
    free(query), free(ctx.data);
    return q;
}

static Question *winogrande_question(Harness *h, int doc_id, const char *sentence, const char *option1, const char *option2, size_t answer) {
    const char *blank = strchr(sentence, '_'), *options[2] = {option1, option2};
    if (!blank) return NULL;
    size_t begin, end, i = (size_t)(blank - sentence);
    python_strip(blank + 1, strlen(blank + 1), 1, &begin, &end);
    Question *q = add_question(h, "winogrande", doc_id, 2);
    q->contexts = checked_calloc(2, sizeof(char *));
    q->gold = answer;
    for (int c = 0; c < 2; c++) {
        Bytes context = {0}, continuation = {0};
        bytes_add(&context, sentence, i);
        bytes_add_text(&context, options[c]);
        bytes_add_text(&continuation, " ");
        bytes_add(&continuation, blank + 1 + begin, end - begin);
        q->contexts[c] = context.data;
        q->continuations[c] = continuation.data;
    }
    return q;
}

/* -- gsm8k, the rebuttal's check beyond multiple choice ("gsm8k and ifeval confirm the same G&A head
 * dependency"), as lm-eval 0.4.x's gsm8k.yaml runs it (generate_until, 5-shot):
 *   context      5 shots, each "Question: <question>\nAnswer:" + " " + <answer> + "\n\n" (an empty answer
 *                adds neither), then "Question: <question>\nAnswer:"
 *   shots        from the train split, drawn for each evaluated document in order by one
 *                random.Random(1234) (simple_evaluate's fewshot_random_seed): rnd.sample(train, 5)
 *                (ContextSampler.get_context), a drawn document equal to the evaluated one left out
 *   generation   greedy, until "Question:", "</s>", "<|im_end|>" or the EOS token's text, at most 256
 *                tokens (HFLM.generate_until: the text is cut at the first of them)
 *   strict-match       the first match of "#### (\-?[0-9\.\,]+)", its group, stripped
 *   flexible-extract   the last match of "(-?[$0-9.,]{2,})|(-?[0-9]+)", its non-empty group, stripped
 *                      (each "[invalid]" when nothing matches: RegexFilter)
 *   exact_match  of each filter's answer and the reference <answer>, both with the regexes ",", "\$",
 *                "(?s).*#### " and "\.$" removed in that order, then lower()ed (exact_match_hf_evaluate)
 * Python's random: MT19937 seeded by init_by_array (random_seed for an int), getrandbits(k) =
 * genrand_uint32() >> (32 - k), _randbelow(n) = getrandbits(bit_length(n)) until below n, and sample()'s
 * two methods (Lib/random.py, Modules/_randommodule.c). */
static const char *const gsm8k_stops[3] = {"Question:", "</s>", "<|im_end|>"};

typedef struct {
    uint32_t mt[624];
    size_t index;
} PythonRandom;

static void python_seed(PythonRandom *r, uint32_t seed) { /* init_genrand(19650218), then init_by_array([seed]) */
    r->mt[0] = 19650218u;
    for (uint32_t i = 1; i < 624; i++) r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + i;
    uint32_t i = 1;
    for (int k = 0; k < 624; k++) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + seed;
        if (++i >= 624) r->mt[0] = r->mt[623], i = 1;
    }
    for (int k = 0; k < 623; k++) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - i;
        if (++i >= 624) r->mt[0] = r->mt[623], i = 1;
    }
    r->mt[0] = 0x80000000u;
    r->index = 624;
}

static uint32_t python_random32(PythonRandom *r) { /* genrand_uint32 */
    if (r->index >= 624) {
        for (size_t k = 0; k < 624; k++) {
            uint32_t y = (r->mt[k] & 0x80000000u) | (r->mt[(k + 1) % 624] & 0x7FFFFFFFu);
            r->mt[k] = r->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908B0DFu : 0);
        }
        r->index = 0;
    }
    uint32_t y = r->mt[r->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
}

static size_t python_randbelow(PythonRandom *r, size_t n) { /* 1 <= n < 2^32 */
    int bits = 0;
    while (bits < 32 && (n >> bits)) bits++;
    size_t x;
    do x = python_random32(r) >> (32 - bits);
    while (x >= n);
    return x;
}

/* random.sample(range(n), k) into out[k] (k <= n < 2^31) */
static void python_sample(PythonRandom *r, size_t n, size_t k, size_t *out) {
    size_t set_size = 21, power = 1; /* 21, plus 4 ** ceil(log(3k, 4)) when k > 5 */
    if (k > 5) {
        while (power < 3 * k) power *= 4;
        set_size += power;
    }
    if (n <= set_size) { /* the pool method */
        size_t *pool = checked_malloc(sizeof(size_t) * (n + 1));
        for (size_t i = 0; i < n; i++) pool[i] = i;
        for (size_t i = 0; i < k; i++) {
            size_t j = python_randbelow(r, n - i);
            out[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
        free(pool);
        return;
    }
    for (size_t i = 0; i < k; i++) { /* the set method: draw again what was drawn */
        for (int again = 1; again;) {
            out[i] = python_randbelow(r, n);
            again = 0;
            for (size_t j = 0; j < i; j++) again |= out[j] == out[i];
        }
    }
}

typedef struct {
    const char *question, *answer;
} Gsm8kDoc;

/* The questions of the first `limit` test documents (limit 0: all) */
static int gsm8k_questions(Harness *h, const char *where, const Gsm8kDoc *test, size_t n_test, const Gsm8kDoc *train,
                           size_t n_train, size_t shots, size_t limit, char **docs_json) {
    if (shots > n_train) return bad_input(where, "--shots %zu: the train split has only %zu documents", shots, n_train);
    PythonRandom rnd;
    python_seed(&rnd, 1234);
    size_t *drawn = checked_malloc(sizeof(size_t) * (shots + 1));
    for (size_t i = 0; i < n_test && (limit == 0 || i < limit); i++) {
        Bytes context = {0};
        bytes_add(&context, "", 0);
        python_sample(&rnd, n_train, shots, drawn);
        for (size_t s = 0; s < shots; s++) {
            const Gsm8kDoc *shot = &train[drawn[s]];
            if (strcmp(shot->question, test[i].question) == 0 && strcmp(shot->answer, test[i].answer) == 0) continue;
            bytes_printf(&context, "Question: %s\nAnswer:", shot->question);
            if (*shot->answer) bytes_printf(&context, " %s\n\n", shot->answer);
        }
        bytes_printf(&context, "Question: %s\nAnswer:", test[i].question);
        Question *q = add_question(h, "gsm8k", (int)i, 0);
        q->context = context.data;
        q->target = checked_strdup(test[i].answer);
        q->doc = checked_strdup(docs_json[i]);
    }
    free(drawn);
    return GNA_OK;
}

/* transformers' clean_up_tokenization (PreTrainedTokenizerBase), which decode applies where a folder's
 * tokenizer_config.json sets clean_up_tokenization_spaces (Llama-3.1's does): lm-eval's responses are
 * decoded that way */
static char *clean_up_tokenization(const char *text) {
    static const char *const pairs[][2] = {{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
                                           {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    char *out = checked_strdup(text);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        char *next = python_replace(out, pairs[i][0], pairs[i][1]);
        free(out);
        out = next;
    }
    return out;
}

static int is_gsm8k_digit(char c, int dollar) { return (c >= '0' && c <= '9') || c == '.' || c == ',' || (dollar && c == '$'); }

/* strict-match into out: the first "#### " followed by an optional "-" and one or more of [0-9.,] */
static void gsm8k_strict_match(const char *response, Bytes *out) {
    for (const char *p = response; (p = strstr(p, "#### ")); p++) {
        const char *q = p + 5, *e = q + (*q == '-' && is_gsm8k_digit(q[1], 0));
        if (!is_gsm8k_digit(*e, 0)) continue;
        while (is_gsm8k_digit(*e, 0)) e++;
        bytes_add(out, q, (size_t)(e - q));
        return;
    }
    bytes_add_text(out, "[invalid]");
}

/* flexible-extract into out: the last match of (-?[$0-9.,]{2,})|(-?[0-9]+), scanning as re.findall does */
static void gsm8k_flexible_extract(const char *response, Bytes *out) {
    const char *last = NULL;
    size_t last_length = 0;
    for (const char *p = response; *p;) {
        size_t n = 0, sign = *p == '-';
        while (is_gsm8k_digit(p[sign + n], 1)) n++;
        if (n < 2) { /* the second alternative: -?[0-9]+ */
            n = 0;
            while (p[sign + n] >= '0' && p[sign + n] <= '9') n++;
        }
        if (n == 0) {
            p++;
            continue;
        }
        last = p, last_length = sign + n;
        p += last_length;
    }
    if (last) bytes_add(out, last, last_length);
    else bytes_add_text(out, "[invalid]");
}

/* exact_match's normalisation: re.sub of ",", "\$", "(?s).*#### " and "\.$" (a "." at the end, or before
 * a final "\n"), then lower() */
static char *gsm8k_normalise(const char *text) {
    Bytes kept = {0}, lowered = {0};
    bytes_add(&kept, "", 0);
    bytes_add(&lowered, "", 0);
    for (const char *p = text; *p; p++)
        if (*p != ',' && *p != '$') bytes_add(&kept, p, 1);
    char *after = kept.data;
    for (char *p = kept.data; (p = strstr(p, "#### ")); p++) after = p + 5;
    size_t n = strlen(after);
    for (size_t at = n >= 2 ? n - 2 : 0; at < n; at++)
        if (after[at] == '.' && (at + 1 == n || (at + 2 == n && after[n - 1] == '\n'))) {
            memmove(after + at, after + at + 1, n - at); /* (its NUL too) */
            n--;
            break;
        }
    python_lower(&lowered, after, n);
    free(kept.data);
    return lowered.data;
}

static double gsm8k_exact_match(const char *prediction, const char *reference) {
    char *p = gsm8k_normalise(prediction), *r = gsm8k_normalise(reference);
    double match = strcmp(p, r) == 0;
    free(p), free(r);
    return match;
}

/* -- The metrics of one question (lm-eval's process_results), into value[0] and value[1]:
 *   multiple choice  acc = [argmax_c ll_c = gold] and acc_norm = [argmax_c ll_c / len(choice_c) = gold]
 *                    (np.argmax: the first largest; acc_norm NAN where the task reports none)
 *   generate_until   exact_match of the strict-match and of the flexible-extract answer, filtered[0..1] */
static size_t argmax_double(const double *x, size_t n) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static void question_metrics(const Question *q, const double *lls, const char *const *filtered, double value[2]) {
    if (q->target) {
        for (int f = 0; f < 2; f++) value[f] = gsm8k_exact_match(filtered[f], q->target);
        return;
    }
    value[0] = argmax_double(lls, q->n_choices) == q->gold;
    value[1] = NAN;
    if (q->choice_lengths) {
        double *normalised = checked_malloc(sizeof(double) * q->n_choices);
        for (size_t c = 0; c < q->n_choices; c++) normalised[c] = lls[c] / (double)q->choice_lengths[c];
        value[1] = argmax_double(normalised, q->n_choices) == q->gold;
        free(normalised);
    }
}

/* -- Aggregation, as lm-eval 0.4.x aggregates (lm_eval/api/metrics.py):
 *   a task's metric    the mean over its questions (mean)
 *   its stderr         sample standard deviation / sqrt(n) (mean_stderr); NAN ("N/A") when n <= 1
 *   a group's metric   the mean of its members' metric weighted by their sizes (weight_by_size), which is
 *                      the mean over all its questions
 *   a group's stderr   pooled_sample_stderr: sqrt(sum_i (n_i - 1) se_i^2 n_i / (N - k) / N) over its k
 *                      members of sizes n_i, N = sum n_i; N/A if a member's is
 *   the knowledge average   the plain mean of the six tasks' acc, as the authors average them (no stderr) */
typedef struct {
    char *task;
    int doc_id;
    double value[2];         /* question_metrics' numbers; NAN: not reported */
} Outcome;

typedef struct {
    const char *name;        /* a task (its outcomes' name: they outlive the scores) or a group */
    int n;
    double value[2], stderr_value[2];   /* NAN: not reported; a stderr NAN: "N/A" */
    int level;               /* 0: top group, 1: category, 2: a subject or a task */
} Score;

static void task_score(Score *s, const Outcome *const *members, int n) {
    s->n = n;
    for (int k = 0; k < 2; k++) {
        double sum = 0, squares = 0;
        for (int i = 0; i < n; i++) sum += members[i]->value[k];
        s->value[k] = sum / n;
        for (int i = 0; i < n; i++) squares += (members[i]->value[k] - s->value[k]) * (members[i]->value[k] - s->value[k]);
        s->stderr_value[k] = n > 1 ? sqrt(squares / (n - 1)) / sqrt((double)n) : NAN;
    }
}

static void group_score(Score *g, const Score *members, int n) {
    double weighted = 0, pooled = 0;
    int total = 0, any_na = 0;
    for (int i = 0; i < n; i++) {
        weighted += members[i].value[0] * members[i].n;
        total += members[i].n;
        pooled += (members[i].n - 1) * members[i].stderr_value[0] * members[i].stderr_value[0] * members[i].n;
        any_na |= isnan(members[i].stderr_value[0]);
    }
    g->n = total;
    g->value[0] = weighted / total;
    g->stderr_value[0] = any_na || total == n ? NAN : sqrt(pooled / (total - n) / total);
    g->value[1] = g->stderr_value[1] = NAN;
}

static void knowledge_average(Score *k, const Score *tasks, int n) {
    double sum = 0;
    k->n = 0;
    for (int i = 0; i < n; i++) sum += tasks[i].value[0], k->n += tasks[i].n;
    k->value[0] = sum / n;
    k->stderr_value[0] = k->value[1] = k->stderr_value[1] = NAN;
}

static uint64_t random_next(uint64_t *state) { /* next() below: splitmix64 (Steele, Lea, Flood 2014) */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* -- KV retrieval, the paper's task (§3.4, fig. 4; the authors' kv_retrieval.py, MemorizationDataset):
 *   "Memorize the following dictionary:\n" + "<key>:<value>\n" per pair + "The value of the key '<key>' is"
 * with distinct keys and distinct values 0..99. The choices are the dictionary's values, each scored
 * by the log-likelihood of its tokens appended with no space ("...is42"), the prompt encoded with the
 * tokenizer's special tokens (the authors' tokenizer call adds BOS). Sample s of the setting with n
 * pairs is drawn by splitmix64 from the state (seed << 32) | (n << 20) | s, so that any sample can be
 * made alone (for shards and resumed runs):
 *   keys    a partial Fisher-Yates shuffle of the key list: for i < n, swap i with i + next() % (K - i)
 *   values  the same over 0..99: for i < n, swap i with i + next() % (100 - i)
 *   query   next() % n
 * (next() % m is biased by at most m / 2^64: nothing a sample count can show.) The authors drew keys
 * from the wonderwords package; a fixed list (the appendix's, or --keys) keeps runs reproducible. */
static void kv_question(Harness *h, const char *const *keys, size_t n_keys, size_t n, uint64_t seed, int sample, int masked) {
    size_t *key_order = checked_malloc(sizeof(size_t) * n_keys), values[100];
    uint64_t rng = seed << 32 | (uint64_t)n << 20 | (uint64_t)sample;
    for (size_t i = 0; i < n_keys; i++) key_order[i] = i;
    for (size_t i = 0; i < 100; i++) values[i] = i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + (size_t)(random_next(&rng) % (uint64_t)(n_keys - i)), swap = key_order[i];
        key_order[i] = key_order[j];
        key_order[j] = swap;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = i + (size_t)(random_next(&rng) % (uint64_t)(100 - i)), swap = values[i];
        values[i] = values[j];
        values[j] = swap;
    }
    size_t query = (size_t)(random_next(&rng) % (uint64_t)n);
    char task[64];
    snprintf(task, sizeof task, "kv_pairs_%zu%s", n, masked ? "_masked" : "");
    Question *q = add_question(h, task, sample, n);
    Bytes text = {0}, doc = {0};
    bytes_add_text(&text, "Memorize the following dictionary:\n");
    bytes_add_text(&doc, "{\"keys\": [");
    for (size_t i = 0; i < n; i++) { /* marks: every line, the asked one, and its value */
        size_t start = text.length;
        bytes_printf(&text, "%s:%zu\n", keys[key_order[i]], values[i]);
        add_mark(q, MARK_PAIR, start, text.length);
        if (i == query) {
            add_mark(q, MARK_ASKED, start, text.length);
            add_mark(q, MARK_VALUE, start + strlen(keys[key_order[i]]) + 1, text.length - 1);
        }
        bytes_add_text(&doc, i ? ", " : "");
        json_add_text(&doc, keys[key_order[i]]);
    }
    bytes_printf(&text, "The value of the key '%s' is", keys[key_order[query]]);
    bytes_add_text(&doc, "], \"values\": [");
    for (size_t i = 0; i < n; i++) bytes_printf(&doc, i ? ", %zu" : "%zu", values[i]);
    bytes_printf(&doc, "], \"query\": %zu}", query);
    q->context = text.data;
    q->doc = doc.data;
    q->gold = query;
    q->masked = masked;
    for (size_t i = 0; i < n; i++) {
        char value[8];
        snprintf(value, sizeof value, "%zu", values[i]);
        q->continuations[i] = checked_strdup(value);
    }
    free(key_order);
}

/* -- MMLU, as lm-evaluation-harness 0.4.x's task `mmlu` builds it (lm_eval/tasks/mmlu/default; the
 * paper ran it 0-shot through lm-eval 0.4.7):
 *   description  "The following are multiple choice questions (with answers) about <subject>.\n\n"
 *                (the subject's underscores written as spaces)
 *   doc_to_text  "<question.strip()>\nA. <A>\nB. <B>\nC. <C>\nD. <D>\nAnswer:"
 *   shots        the first K rows of the subject's dev split, each doc_to_text + " " + letter + "\n\n"
 *                (sampler first_n, fewshot_delimiter "\n\n", target_delimiter " ")
 *   context      description + shots + doc_to_text(question)
 *   choices      " A", " B", " C", " D", scored by log-likelihood after the context
 * The questions: subjects in name order, each subject's test rows in file order. */
typedef struct {
    char *subject, *question, *choices[4];
    size_t answer;           /* 0..3 */
} MmluDoc;

typedef struct {
    size_t n, capacity;
    MmluDoc *docs;
} MmluSplit;

static void mmlu_doc_text(Bytes *b, const MmluDoc *d) {
    size_t begin, end;
    python_strip(d->question, strlen(d->question), 1, &begin, &end);
    bytes_add(b, d->question + begin, end - begin);
    for (int c = 0; c < 4; c++) {
        bytes_printf(b, "\n%c. ", 'A' + c);
        bytes_add_text(b, d->choices[c]);
    }
    bytes_add_text(b, "\nAnswer:");
}

static char *mmlu_doc_json(const MmluDoc *d); /* the document as lm-eval's hails/mmlu_no_train rows (Part II) */

/* test rows `order` (sorted by subject, stable), the first `limit` of each subject when limit > 0 */
static int mmlu_questions(Harness *h, const char *where, const MmluSplit *dev, const MmluSplit *test, const size_t *order,
                          size_t shots, size_t limit) {
    Bytes text = {0};
    int doc_id = 0;
    for (size_t i = 0; i < test->n; i++, doc_id++) {
        const MmluDoc *d = &test->docs[order[i]];
        if (i == 0 || strcmp(d->subject, test->docs[order[i - 1]].subject) != 0) { /* a new subject: its prefix */
            doc_id = 0;
            text.length = 0;
            bytes_add_text(&text, "The following are multiple choice questions (with answers) about ");
            for (const char *c = d->subject; *c; c++) bytes_add(&text, *c == '_' ? " " : c, 1);
            bytes_add_text(&text, ".\n\n");
            size_t found = 0;
            for (size_t k = 0; k < dev->n && found < shots; k++)
                if (strcmp(dev->docs[k].subject, d->subject) == 0) {
                    mmlu_doc_text(&text, &dev->docs[k]);
                    bytes_printf(&text, " %c\n\n", 'A' + (int)dev->docs[k].answer);
                    found++;
                }
            if (found < shots) {
                free(text.data);
                return bad_input(where, "subject %s has %zu dev questions, fewer than --shots %zu", d->subject, found, shots);
            }
            char **prefixes = checked_malloc(sizeof(char *) * (h->n_prefixes + 1));
            if (h->n_prefixes) memcpy(prefixes, h->prefixes, sizeof(char *) * h->n_prefixes);
            free(h->prefixes);
            h->prefixes = prefixes;
            h->prefixes[h->n_prefixes++] = checked_strdup(text.data);
        }
        if (limit > 0 && (size_t)doc_id >= limit) continue;
        Bytes task = {0};
        bytes_printf(&task, "mmlu_%s", d->subject);
        Question *q = add_question(h, task.data, doc_id, 4);
        free(task.data);
        q->prefix = (long)h->n_prefixes - 1;
        text.length = 0;
        bytes_add_text(&text, h->prefixes[q->prefix]);
        mmlu_doc_text(&text, d);
        q->context = checked_strdup(text.data);
        size_t start = text.length - strlen("Answer:"); /* the option lines "X. " + choice + "\n", and X */
        for (int c = 0; c < 4; c++) start -= strlen(d->choices[c]) + 4;
        for (int c = 0; c < 4; c++) {
            add_mark(q, MARK_OPTION, start, start + strlen(d->choices[c]) + 4);
            add_mark(q, MARK_LETTER, start, start + 1);
            start += strlen(d->choices[c]) + 4;
        }
        q->doc = mmlu_doc_json(d);
        q->gold = d->answer;
        for (int c = 0; c < 4; c++) {
            char letter[3] = {' ', (char)('A' + c), 0};
            q->continuations[c] = checked_strdup(letter);
        }
    }
    free(text.data);
    return GNA_OK;
}

/* -- A request, as lm-eval's HFLM builds and scores it (lm_eval/models/huggingface.py):
 *   _encode_pair: white space at the end of the context moves to the front of the continuation;
 *     whole = encode(context + continuation), context_tokens = encode(context),
 *     continuation_tokens = whole[len(context_tokens):]
 *   loglikelihood: the model reads (context_tokens + continuation_tokens)[:-1] from position 0, and
 *     ll = sum_i log_softmax(the logits before continuation token i)[token i]; is_greedy says whether
 *     every continuation token is its row's argmax
 * Encoding adds no special tokens (lm-eval 0.4.x's default for causal models) unless add_special
 * (--bos; and kv, whose authors' tokenizer call adds BOS). */
typedef struct {
    int *ids;
    size_t n;
} Tokens;

static int encode_text(const gna_tokenizer *t, const char *text, size_t n, int add_special, Tokens *out) {
    int *ids, n_ids;
    TRY(gna_tokenize(t, text, n, add_special, &ids, &n_ids));
    *out = (Tokens){ids, (size_t)n_ids};
    return GNA_OK;
}

/* request c's context tokens: its context without its trailing white space */
static int encode_context(const gna_tokenizer *t, int add_special, const Question *q, size_t c, Tokens *context) {
    const char *text = request_context(q, c);
    size_t length = strlen(text), kept = length - trailing_space_bytes(text, length);
    if (kept == 0) return bad_input(q->task, "document %d: the context is empty", q->doc_id);
    return encode_text(t, text, kept, add_special, context);
}

/* request c's continuation tokens: encode(context + continuation) after the context's tokens */
static int encode_continuation(const gna_tokenizer *t, int add_special, const Question *q, size_t c, const Tokens *context, Tokens *continuation) {
    Bytes whole = {0};
    bytes_add_text(&whole, request_context(q, c)); /* its trailing white space now leads the continuation */
    bytes_add_text(&whole, q->continuations[c]);
    Tokens all;
    int status = encode_text(t, whole.data, whole.length, add_special, &all);
    free(whole.data);
    TRY(status);
    if (all.n <= context->n) status = bad_input(q->task, "document %d: choice %zu adds no tokens to the context", q->doc_id, c);
    continuation->n = status == GNA_OK ? all.n - context->n : 0;
    continuation->ids = checked_malloc(sizeof(int) * (continuation->n + 1));
    memcpy(continuation->ids, all.ids + (all.n - continuation->n), sizeof(int) * continuation->n);
    free(all.ids);
    return status;
}

/* -- Positions by what is there (mask specs' :letters, @value, :text=Answer; the rebuttal's refined
 * Zamba2 mask, "':' attending to choices A-D"). A named part [start, end) of a request's context (its
 * marks: the option letters and lines of an mmlu question, a kv prompt's lines, the asked one and its
 * value) is the tokens that hold a byte of it: with P(k) the tokens of context[:k] and C the context's,
 *   first = the length of the common prefix of P(start) and C
 *   last  = the length of the common prefix of P(end) and C, plus one when P(end) is not a prefix of C
 * (a token across either edge belongs to the part). text=S is every token of the request's input whose
 * text, white space stripped, is S. A prompt without such a part selects nothing there. */
static size_t common_prefix(const Tokens *a, const Tokens *b) {
    size_t n = 0;
    while (n < a->n && n < b->n && a->ids[n] == b->ids[n]) n++;
    return n;
}

static int span_tokens(const gna_tokenizer *t, int add_special, const char *context, const Tokens *tokens, size_t start,
                       size_t end, size_t *first, size_t *last) {
    Tokens before, through;
    TRY(encode_text(t, context, start, add_special, &before));
    int status = encode_text(t, context, end, add_special, &through);
    if (status == GNA_OK) {
        *first = common_prefix(&before, tokens);
        *last = common_prefix(&through, tokens);
        if (*last < through.n && *last < tokens->n) ++*last;
        free(through.ids);
    }
    free(before.ids);
    return status;
}

/* positions[*n]: those of `input` (the request's context tokens come first) that `name` selects: a
 * MarkKind, or N_MARK_KINDS for text == `text` */
static int named_positions(const gna_tokenizer *t, int add_special, const Question *q, size_t c, const Tokens *context,
                           const Tokens *input, int name, const char *text, size_t *positions, size_t *n) {
    *n = 0;
    if (name == N_MARK_KINDS) {
        for (size_t i = 0; i < input->n; i++) {
            char *token_text;
            size_t length, begin, end;
            TRY(gna_detokenize(t, &input->ids[i], 1, 0, &token_text, &length));
            python_strip(token_text, length, 1, &begin, &end);
            if (end - begin == strlen(text) && memcmp(token_text + begin, text, end - begin) == 0) positions[(*n)++] = i;
            free(token_text);
        }
        return GNA_OK;
    }
    for (size_t m = 0; m < q->n_marks; m++) {
        size_t first, last;
        if ((int)q->marks[m].kind != name) continue;
        TRY(span_tokens(t, add_special, request_context(q, c), context, q->marks[m].start, q->marks[m].end, &first, &last));
        for (size_t p = first; p < last; p++)
            if (*n == 0 || positions[*n - 1] < p) positions[(*n)++] = p;
    }
    return GNA_OK;
}

/* log softmax(row)[token], in double, and whether token is the row's (first) largest entry */
static double log_probability(const float *row, size_t V, int token, int *is_argmax) {
    size_t best = 0;
    for (size_t v = 1; v < V; v++)
        if (row[v] > row[best]) best = v;
    double sum = 0;
    for (size_t v = 0; v < V; v++) sum += gna_exp((double)row[v] - (double)row[best]);
    *is_argmax = (size_t)token == best;
    return (double)row[token] - (double)row[best] - gna_log(sum);
}

/* add the log-probabilities of tokens[0..n) from logit rows [n, V]: row i predicts token i */
static void add_log_probabilities(const float *logits, size_t V, const int *tokens, size_t n, double *ll, int *greedy) {
    for (size_t i = 0; i < n; i++) {
        int is_argmax;
        *ll += log_probability(logits + i * V, V, tokens[i], &is_argmax);
        *greedy &= is_argmax;
    }
}

/* The definition of a request's score: (context + continuation)[:-1] run whole, from position 0.
 * cache holds at least context->n + continuation->n - 1 positions; logits [continuation->n, V]. */
static int score_request(const Model *m, const Compute *cx, const Intervention *iv, Cache *cache, const Tokens *context,
                         const Tokens *continuation, float *logits, double *ll, int *greedy) {
    size_t n = context->n + continuation->n - 1;
    int *input = checked_malloc(sizeof(int) * n);
    memcpy(input, context->ids, sizeof(int) * context->n);
    memcpy(input + context->n, continuation->ids, sizeof(int) * (continuation->n - 1));
    cache_reset(cache);
    *ll = 0;
    *greedy = 1;
    int status = forward(m, cx, iv, cache, input, n, logits, context->n - 1);
    if (status == GNA_OK) add_log_probabilities(logits, m->config.vocab_size, continuation->ids, continuation->n, ll, greedy);
    free(input);
    return status;
}

/* sum_{from <= k < to} |row[k]| / sum_k |row[k]|: a row's share on some keys, the row as a distribution */
static double row_share(const float *row, size_t T, size_t from, size_t to) {
    double part = 0, sum = 0;
    for (size_t k = 0; k < T; k++) sum += fabs(row[k]), part += k >= from && k < to ? fabs(row[k]) : 0;
    return sum > 0 ? part / sum : 0;
}

/* -- The G&A scores of `gna heads`: the paper identifies Gather and Aggregate heads by their
 * attention patterns (§4: a Gather head's segment-final token attends to its own segment; an
 * Aggregate head's final position attends to the summary token of the correct segment, argmax-like);
 * gna measures those patterns. A context is cut into segments (kv's "key:value\n" lines, mmlu's option
 * lines "A. <choice>\n") whose last token, the "\n", is the segment's summary token s_j. With r_t a
 * head's attention row at query t (softmax probabilities; for an SSM head |M[t, .]| / sum |M[t, .]|,
 * its implicit attention made a distribution), and R_j = sum_{k in segment j} r_final[k]:
 *   aggregate = R_gold - max_{j != gold} R_j          the final position picks the gold segment
 *   gold mass = R_gold
 *   gather    = mean_j sum_{k in segment j, k < s_j} r_{s_j}[k]      each summary token reads its segment
 * The aggregate reads the whole segment, not only its summary token: a model may gather into another
 * token of the line (the bundled demo Llama's aggregate heads read the value token itself).
 * probe: rows s_0 .. s_{m-1}, then the final position; segments [starts[j], ends[j]) in tokens, each at
 * least one token long; gold < n_segments. */
static void head_scores(const Probe *probe, const size_t *starts, const size_t *ends, size_t n_segments, size_t gold,
                        double *aggregate, double *gold_mass, double *gather) {
    size_t T = probe->length;
    const float *final = probe->matrix + n_segments * T;
    double best_other = 0, gathered = 0;
    for (size_t j = 0; j < n_segments; j++) {
        double mass = row_share(final, T, starts[j], ends[j]);
        if (j != gold && mass > best_other) best_other = mass;
        gathered += row_share(probe->matrix + j * T, T, starts[j], ends[j] - 1);
    }
    *gold_mass = row_share(final, T, starts[gold], ends[gold]);
    *aggregate = *gold_mass - best_other;
    *gather = gathered / (double)n_segments;
}

/* -- What `gna attn --json` reads off a head's map M [T, T] on a text of lines (make run's page, on its
 * short dictionary). share(t, K) = sum_{k in K} r_t[k], with r_t as above; the newline tokens
 * n_0 < ... < n_{m-1} cut the text into lines L_0..L_m (L_j: after n_{j-1}, through n_j; L_m: the rest).
 *   previous = mean_{1 <= t < T} r_t[t - 1]                      the signature of a previous-token head
 *   own_line = mean_{1 <= j < m} share(n_j - 1, n_{j-1} < k < n_j - 1): each line's last token before its
 *              newline (a dictionary's value) on the rest of its line (its key and colon); NaN if m < 2
 *   lines[j] = share(T - 1, L_j), j = 0..m                       the final position on each line
 *   largest  = the first k with the largest |M[T - 1, k]|, and r_{T-1}[largest] */
typedef struct {
    double previous, own_line, largest_share;
    size_t largest;
    double *lines; /* [m + 1]: the caller's */
} MapStatistics;

static void map_statistics(const float *M, size_t T, const size_t *newlines, size_t m, MapStatistics *s) {
    const float *final = M + (T - 1) * T;
    s->previous = s->own_line = s->largest = 0;
    for (size_t t = 1; t < T; t++) s->previous += row_share(M + t * T, T, t - 1, t);
    s->previous /= T > 1 ? (double)(T - 1) : 1;
    for (size_t j = 1; j < m; j++) s->own_line += row_share(M + (newlines[j] - 1) * T, T, newlines[j - 1] + 1, newlines[j] - 1);
    s->own_line = m > 1 ? s->own_line / (double)(m - 1) : NAN;
    for (size_t j = 0; j <= m; j++) s->lines[j] = row_share(final, T, j ? newlines[j - 1] + 1 : 0, j < m ? newlines[j] + 1 : T);
    for (size_t k = 1; k < T; k++)
        if (fabs(final[k]) > fabs(final[s->largest])) s->largest = k;
    s->largest_share = row_share(final, T, s->largest, s->largest + 1);
}

/* ---------------------------------------------------------------------------------------------
 * I.8 Elementary functions of gna's own, called above instead of the C library's, which round them
 * differently (glibc, musl, newlib, Debian's i386 libm): with them and float arithmetic in float
 * (-ffp-contract=off, -fexcess-precision=fast), --reference gives the same bits on every target (README,
 * Porting). Only binary64 + - * /, comparisons and the exact floor, ldexp, frexp, fabs; fixed loop counts.
 * Within 2.5 ulp of double; rounded to float, the correctly rounded float on 10^6 inputs per function. */

/* Exact product a*b = *hi + *lo without FMA: Veltkamp splitting and Dekker's product
 * (T. J. Dekker, "A floating-point technique for extending the available precision",
 * Numer. Math. 18, 1971).  Valid while |a|, |b| < 2^995. */
static void gna_two_prod(double a, double b, double *hi, double *lo) {
    double c = 134217729.0 * a, ah = c - (c - a), al = a - ah;   /* 2^27 + 1 */
    double d = 134217729.0 * b, bh = d - (d - b), bl = b - bh;
    *hi = a * b;
    *lo = ((ah * bh - *hi) + ah * bl + al * bh) + al * bl;
}

/* e^(hi+lo) with |lo| <~ ulp(hi).  Cody & Waite (1980) reduction hi = k ln2 + r, |r| <= ln2/2,
 * with ln2 split into a 32-bit head (k*LN2_HI is exact) and a tail (fdlibm's constants);
 * e^r by its Taylor series (coefficients 1/n!, n <= 13, truncation error < 1e-17) in
 * Horner form; the result is scaled by ldexp(., k), which rounds correctly into subnormals. */
static double gna_exp_dd(double hi, double lo) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    if (hi != hi) return hi;
    if (hi > 709.782712893384) return INFINITY;
    if (hi < -746.0) return 0.0;
    double k = floor(hi * 1.4426950408889634 + 0.5);             /* round(hi / ln2) */
    double r = ((hi - k * LN2_HI) - k * LN2_LO) + lo;
    double p = 1.0/479001600 + r * (1.0/6227020800);
    p = 1.0/39916800 + r * p;  p = 1.0/3628800 + r * p;  p = 1.0/362880 + r * p;
    p = 1.0/40320 + r * p;     p = 1.0/5040 + r * p;     p = 1.0/720 + r * p;
    p = 1.0/120 + r * p;       p = 1.0/24 + r * p;       p = 1.0/6 + r * p;
    p = 0.5 + r * p;
    p = 1.0 + (r + r * (r * p));                          /* e^r = 1 + r + r^2 (1/2 + r/6 + ...) */
    return ldexp(p, (int)k);
}

/* e^x: see gna_exp_dd.  Overflow -> +inf, underflow -> 0 (via subnormals), NaN -> NaN. */
static double gna_exp(double x) { return gna_exp_dd(x, 0.0); }

/* *s + *e = a + b exactly (Knuth's TwoSum, TAOCP vol. 2, 4.2.2). */
static void gna_two_sum(double a, double b, double *s, double *e) {
    double bb = (*s = a + b) - a;
    *e = (a - (*s - bb)) + (b - bb);
}

/* log(x) = return value + *lo (double-double, error ~2^-70 relative) for finite x > 0.
 * x = 2^e m, m in [sqrt(1/2), sqrt(2)); f = m - 1 (exact); s = f/(2+f) is computed as
 * s + sl (Dekker product for the remainder f - s(2+f));
 * log(m) = 2 atanh(s) = 2s + (2/3)s^3 + 2s^5 (1/5 + s^2/7 + ... + s^16/21) (error < 1e-18),
 * with 2s and (2/3)s^3 kept in double-double; log(x) = e ln2 + log(m), ln2 in two parts
 * (fdlibm's; e*LN2_HI is exact).  Used for gna_log and, for its extra precision, gna_pow. */
static double gna_log_dd(double x, double *lo) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    const double TWO3_HI = 0x1.5555555555555p-1, TWO3_LO = 0x1.5555555555555p-55;  /* 2/3 */
    int e;
    double m = frexp(x, &e), f, u, ul, s, sl, ph, pl, z, zl, c, cl, t, h, l, h2, l2;
    if (m < 0.70710678118654752440) { m = 2.0 * m; e = e - 1; }
    f = m - 1.0;
    u = 2.0 + f;  ul = f - (u - 2.0);                     /* u + ul = 2 + f exactly */
    s = f / u;
    gna_two_prod(s, u, &ph, &pl);
    sl = (((f - ph) - pl) - s * ul) / u;                  /* s + sl = f / (2 + f) */
    gna_two_prod(s, s, &z, &zl);
    gna_two_prod(z, s, &c, &cl);  cl = cl + zl * s;       /* s^3 = c + cl */
    gna_two_prod(c, TWO3_HI, &ph, &pl);
    pl = pl + (c * TWO3_LO + cl * TWO3_HI);               /* (2/3) s^3 = ph + pl */
    t = 1.0/19 + z * (1.0/21);
    t = 1.0/17 + z * t;  t = 1.0/15 + z * t;  t = 1.0/13 + z * t;  t = 1.0/11 + z * t;
    t = 1.0/9 + z * t;   t = 1.0/7 + z * t;   t = 1.0/5 + z * t;
    t = 2.0 * s * (z * z) * t;                            /* 2s^5/5 + 2s^7/7 + ... */
    gna_two_sum(e * LN2_HI, 2.0 * s, &h, &l);
    gna_two_sum(h, ph, &h2, &l2);
    l = (l + l2) + (((e * LN2_LO + 2.0 * sl) + 2.0 * z * sl) + (pl + t));
    h = h2 + l;  *lo = l - (h - h2);
    return h;
}

/* Natural logarithm via gna_log_dd.  x < 0 -> NaN, +-0 -> -inf, +inf -> +inf. */
static double gna_log(double x) {
    double lo;
    if (x != x || x == INFINITY) return x;
    if (!(x > 0.0)) return x < 0.0 ? NAN : -INFINITY;
    return gna_log_dd(x, &lo);
}

/* log(1+x).  Goldberg's trick (D. Goldberg, "What every computer scientist should know
 * about floating-point arithmetic", 1991, Thm. 4): with u = fl(1+x), log(u) * (x/(u-1))
 * cancels the rounding error of 1+x.  x < -1 -> NaN, -1 -> -inf, +-0 -> +-0. */
static double gna_log1p(double x) {
    double u = 1.0 + x;
    if (x != x || x == INFINITY) return x;
    if (x < -1.0) return NAN;
    if (u == 1.0) return x;
    return gna_log(u) * (x / (u - 1.0));
}

/* erf(x), odd.  |x| < 2.5: Taylor series erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1))
 * (Abramowitz & Stegun 7.1.5), 40 terms nested backward as 1 - (q/1)(1/3 - (q/2)(1/5 - ...)),
 * q = x^2 (its cancellation leaves ~1e-14: every float result correctly rounded).  2.5 <= |x| < 6:
 * erf = 1 - erfc with Laplace's continued fraction erfc(x) = e^(-x^2)/sqrt(pi) / (x + (1/2)/(x +
 * (2/2)/(x + (3/2)/(x + ...)))) (A&S 7.1.14), 50 levels evaluated backward.  |x| >= 6: +-1. */
static double gna_erf(double x) {
    double ax = fabs(x), q = ax * ax, s, r;
    if (x != x || x == 0.0) return x;                     /* NaN, +-0 */
    if (ax >= 6.0) {
        r = 1.0;
    } else if (ax < 2.5) {
        s = 1.0 / 81;
        for (int n = 40; n >= 1; n--) s = 1.0 / (2 * n - 1) - (q / n) * s;
        r = 1.1283791670955126 * ax * s;                  /* 2/sqrt(pi) */
    } else {
        s = ax;
        for (int n = 50; n >= 1; n--) s = ax + (0.5 * n) / s;
        r = 1.0 - 0.5641895835477563 * gna_exp(-q) / s;   /* 1/sqrt(pi) */
    }
    return x < 0.0 ? -r : r;
}

/* Cody & Waite (1980) reduction of ax >= 0: ax = n pi/2 + r, |r| <~ pi/4, quadrant n mod 4 in *q.
 * pi/2 = P1 + P2 + P3 + P4, P1..P3 with 24 significant bits, so n*Pi is exact for n < 2^29
 * (gna_sin/gna_cos use it only for |x| < 2^29). */
static double gna_reduce_pio2(double ax, int *q) {
    const double P1 = 0x1.921fb6p+0, P2 = -0x1.777a5cp-25, P3 = -0x1.ee59dap-50,
                 P4 = 0x1.98a2e03707345p-77;              /* P1+P2+P3+P4 - pi/2 = -5e-40 */
    double n = floor(ax * 0.6366197723675814 + 0.5);      /* round(ax * 2/pi) */
    *q = (int)(n - 4.0 * floor(0.25 * n));
    return (((ax - n * P1) - n * P2) - n * P3) - n * P4;
}

/* sin(r), |r| <= pi/4 (+ tiny): Taylor series to r^19 (truncation < 1e-19). */
static double gna_sin_kernel(double r) {
    double z = r * r, p = 1.0/362880 + z * (-1.0/39916800 + z * (1.0/6227020800
               + z * (-1.0/1307674368000 + z * (1.0/355687428096000 + z * (-1.0/121645100408832000)))));
    p = -1.0/6 + z * (1.0/120 + z * (-1.0/5040 + z * p));
    return r + r * (z * p);
}

/* cos(r), |r| <= pi/4 (+ tiny): Taylor series to r^18 (truncation < 1e-20); 1 - r^2/2 is
 * summed with its rounding error recovered (as in fdlibm's __kernel_cos). */
static double gna_cos_kernel(double r) {
    double z = r * r, hz = 0.5 * z, w = 1.0 - hz;
    double p = 1.0/40320 + z * (-1.0/3628800 + z * (1.0/479001600 + z * (-1.0/87178291200
               + z * (1.0/20922789888000 + z * (-1.0/6402373705728000)))));
    p = 1.0/24 + z * (-1.0/720 + z * p);
    return w + (((1.0 - w) - hz) + (z * z) * p);
}

/* sin(x) = sign(x) sin(|x|) via gna_reduce_pio2 and the quadrant.  Domain |x| < 2^29
 * (5.4e8); +-inf and larger |x| -> NaN (exact reduction there needs Payne-Hanek). */
static double gna_sin(double x) {
    int q;
    if (x != x || x == 0.0) return x;                     /* NaN, +-0 */
    if (!(fabs(x) < 0x1p29)) return NAN;                  /* inf; outside supported domain */
    double r = gna_reduce_pio2(fabs(x), &q), v = (q & 1) ? gna_cos_kernel(r) : gna_sin_kernel(r);
    if (q & 2) v = -v;
    return x < 0.0 ? -v : v;
}

/* cos(x) = cos(|x|) via gna_reduce_pio2 and the quadrant.  Domain as gna_sin. */
static double gna_cos(double x) {
    int q;
    if (x != x) return x;
    if (!(fabs(x) < 0x1p29)) return NAN;                  /* inf; outside supported domain */
    double r = gna_reduce_pio2(fabs(x), &q), v = (q & 1) ? gna_sin_kernel(r) : gna_cos_kernel(r);
    return (q == 1 || q == 2) ? -v : v;
}

/* x^y for x > 0 (x <= 0 only for the trivial cases: 0^y; x < 0 -> NaN).
 * log(x) as double-double (gna_log_dd), y*log(x) as double-double (Dekker product),
 * then e^(zh+zl) (gna_exp_dd), so the error stays ~1 ulp even for |y log x| ~ 700. */
static double gna_pow(double x, double y) {
    double h, l, zh, zl;
    if (y == 0.0 || x == 1.0) return 1.0;
    if (x != x || y != y) return x + y;                   /* NaN */
    if (x < 0.0) return NAN;
    if (x == 0.0) return y > 0.0 ? 0.0 : INFINITY;
    if (x == INFINITY) return y > 0.0 ? INFINITY : 0.0;
    h = gna_log_dd(x, &l);
    if (fabs(y * h) > 800.0) return y * h > 0.0 ? INFINITY : 0.0;
    gna_two_prod(y, h, &zh, &zl);
    return gna_exp_dd(zh, zl + y * l);
}

/* ===== PART II: machinery ==================================================================== */
/* Build switches:
 *   GNA_THREADS   1 (default): Compute.run splits work over POSIX threads; 0 builds without pthreads.
 *   GNA_NO_MAIN   leave out main(), to use gna.c as a library (gna.h) or from the tests.
 *   SIMD          from the compiler's own macros, i.e. from -march: AVX-512 (__AVX512F__), AVX2
 *                 (__AVX2__ with __FMA__ and __F16C__), NEON (aarch64); with none of them, or with
 *                 GNA_NO_SIMD, Part I's kernels alone.
 *   GNA_NO_MMAP   read the safetensors files into memory with stdio instead of mapping them.
 *   GNA_NO_SIGNALS  no SIGINT/SIGTERM cleanup of unfinished output files.
 * Where POSIX is not to be had (WASI, bare metal: no __unix__ nor __APPLE__) those two and GNA_THREADS 0
 * are the defaults, and harness logs are not locked (II.10). On a big-endian host the tensors are
 * byte-swapped once, as they are loaded (II.6), and .npy files are written little-endian (II.9), so
 * Part I reads native numbers and the files are the same everywhere. */
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__wasi__)
#define GNA_POSIX 1
#else
#define GNA_POSIX 0
#ifndef GNA_NO_MMAP
#define GNA_NO_MMAP 1
#endif
#ifndef GNA_NO_SIGNALS
#define GNA_NO_SIGNALS 1
#endif
#ifndef GNA_THREADS
#define GNA_THREADS 0
#endif
#endif
#ifndef GNA_THREADS
#define GNA_THREADS 1
#endif
#if defined(__unix__) || defined(__APPLE__) || defined(__wasi__)
#define GNA_STAT_MODES 1 /* stat tells a folder from a file (semihosting's stat opens the path as a file) */
#else
#define GNA_STAT_MODES 0
#endif
#if GNA_POSIX
#include <fcntl.h>
#endif
#ifndef GNA_NO_MMAP
#include <sys/mman.h>
#endif
#ifndef GNA_NO_SIGNALS
#include <signal.h>
#endif
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if GNA_THREADS
#include <pthread.h>
#endif
#if defined(GNA_NO_SIMD)
#define GNA_SIMD "none"
#elif defined(__AVX512F__)
#define GNA_AVX512 1
#define GNA_SIMD "avx512"
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define GNA_AVX2 1
#define GNA_SIMD "avx2"
#include <immintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define GNA_NEON 1
#define GNA_SIMD "neon"
#include <arm_neon.h>
#else
#define GNA_SIMD "none"
#endif
#if defined(GNA_AVX512) || defined(GNA_AVX2) || defined(GNA_NEON)
#define GNA_VECTORS 1
#endif

/* ---------------------------------------------------------------------------------------------
 * II.1 Errors, allocation, small utilities. Every function that can fail returns GNA_OK,
 * GNA_FAILURE or GNA_BAD_INPUT and leaves one line, per thread of the caller, for gna_error(). Structs
 * are built by build_* functions that may fail half-way; their free_* partners accept such halves.
 */
#if GNA_THREADS || GNA_POSIX
#define THREAD_LOCAL _Thread_local
#else /* bare metal: one thread, and no thread-local storage to be had */
#define THREAD_LOCAL
#endif
static THREAD_LOCAL char error_message[1024];

const char *gna_error(void) { return error_message; }

/* ATOMIC: a C11 atomic where threads share it (this counter, the pool's job counts of II.2), volatile
 * where there are no threads or no atomics.
 * gna_interrupt: a generation count; a call notes it when it starts (gna_main, gna_forward) and stops
 * when it has moved on. An atomic counter, so that another thread (or a signal handler) may bump it. */
#if defined(__STDC_NO_ATOMICS__) || !GNA_THREADS
#define ATOMIC volatile
#else
#define ATOMIC _Atomic
#endif
static ATOMIC unsigned interrupt_generation;
static THREAD_LOCAL unsigned call_generation;

void gna_interrupt(void) { interrupt_generation++; }
static void start_call(void) { call_generation = interrupt_generation; }
static int interrupted(void) { return call_generation != interrupt_generation; }

static int report(int status, const char *where, const char *format, ...) {
    char what[768];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    snprintf(error_message, sizeof error_message, "%s: %s", where, what);
    for (char *c = error_message; *c; c++) /* names from inside files must not break the one line */
        if ((unsigned char)*c < 0x20) *c = '?';
    return status;
}

/* Out of memory ends the public call that asked (a function of gna.h), which returns GNA_FAILURE with
 * the line "out of memory: asked for N bytes"; what that call had allocated is not given back. Every
 * allocation goes through unless_out_of_memory, so a result is never NULL; each entry point catches
 * the jump with CATCH_OUT_OF_MEMORY (a worker's range catches its own, and the caller jumps after it:
 * II.2). Sizes that come from files are checked before they get here (bad input, not want of memory).
 * WASI has no setjmp: there, out of memory prints the line and aborts. */
#ifdef __wasi__
static void *unless_out_of_memory(void *p, size_t bytes) {
    if (p) return p;
    fprintf(stderr, "gna: error: out of memory: asked for %zu bytes\n", bytes);
    abort();
}
#define CATCH_OUT_OF_MEMORY(call) return (call)
#define CATCH_STATUS(status, call) ((status) = (call))
#else
static THREAD_LOCAL jmp_buf *out_of_memory_exit;
static THREAD_LOCAL size_t out_of_memory_wanted;

static void *unless_out_of_memory(void *p, size_t bytes) {
    if (p) return p;
    out_of_memory_wanted = bytes;
    report(GNA_FAILURE, "out of memory", "asked for %zu bytes", bytes);
    if (out_of_memory_exit) longjmp(*out_of_memory_exit, 1);
    abort(); /* an allocation outside every entry point: a bug of gna's own */
}
#define CATCH_OUT_OF_MEMORY(call)                                                                  \
    do {                                                                                           \
        jmp_buf here, *outer = out_of_memory_exit;                                                 \
        if (setjmp(here)) {                                                                        \
            out_of_memory_exit = outer;                                                            \
            return GNA_FAILURE;                                                                    \
        }                                                                                          \
        out_of_memory_exit = &here;                                                                \
        int status_ = (call);                                                                      \
        out_of_memory_exit = outer;                                                                \
        return status_;                                                                            \
    } while (0)
/* the same, into status rather than returned, so that the caller can tidy up after it */
#define CATCH_STATUS(status, call)                                                                 \
    do {                                                                                           \
        jmp_buf here, *outer = out_of_memory_exit;                                                 \
        if (setjmp(here)) {                                                                        \
            out_of_memory_exit = outer;                                                            \
            (status) = GNA_FAILURE;                                                                \
            break;                                                                                 \
        }                                                                                          \
        out_of_memory_exit = &here;                                                                \
        (status) = (call);                                                                         \
        out_of_memory_exit = outer;                                                                \
    } while (0)
#endif
/* a x b for a size that comes from a file, an option or a text: SIZE_MAX when it does not fit in
 * size_t (a 32-bit host, or a file that lies), a size every allocation and every check refuses. Sizes
 * of more than one dimension are computed here, never by a bare product that could wrap. */
static size_t size_product(size_t a, size_t b) { return a && b > SIZE_MAX / a ? SIZE_MAX : a * b; }

/* (no object may be larger than PTRDIFF_MAX bytes, so a larger size is not even asked for) */
static void *checked_malloc(size_t bytes) { return unless_out_of_memory(bytes <= PTRDIFF_MAX ? malloc(bytes ? bytes : 1) : NULL, bytes); }
static void *checked_realloc(void *p, size_t bytes) {
    return unless_out_of_memory(bytes <= PTRDIFF_MAX ? realloc(p, bytes ? bytes : 1) : NULL, bytes);
}
static void *checked_calloc(size_t count, size_t size) {
    size_t bytes = size_product(count, size);
    return unless_out_of_memory(bytes <= PTRDIFF_MAX ? calloc(count ? count : 1, size ? size : 1) : NULL, bytes);
}
static float *float_array(size_t rows, size_t cols) { return checked_malloc(size_product(size_product(rows, cols), sizeof(float))); }
static char *checked_strdup(const char *text) {
    size_t n = strlen(text) + 1;
    return memcpy(checked_malloc(n), text, n);
}
static char *checked_strndup(const char *text, size_t n) {
    char *copy = checked_malloc(n + 1);
    memcpy(copy, text, n);
    copy[n] = 0;
    return copy;
}

/* room for one more element at items[n] of a growable array */
static void *grow_array(void *items, size_t n, size_t *capacity, size_t size) {
    if (n < *capacity) return items;
    *capacity = *capacity ? 2 * *capacity : 16;
    return checked_realloc(items, *capacity * size);
}

static double seconds_now(void) {
#ifdef CLOCK_MONOTONIC
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#else /* newlib on bare metal: processor time, which is all the time there is */
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* dir + "/" + name */
static char *path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *path = checked_malloc(a + b + 2);
    memcpy(path, dir, a);
    path[a] = '/';
    memcpy(path + a + 1, name, b + 1);
    return path;
}

/* Files gna reads whole (config.json, tokenizer.json, data, logs) are regular files of at most
 * MAX_TEXT_BYTES: a FIFO would wait for a writer forever, /dev/zero never ends. They are opened without
 * blocking and refused by name unless regular; a file that grows past the cap while read is refused. */
enum { MAX_TEXT_BYTES = 1 << 30 };

static int open_regular(const char *path, int for_log, FILE **file) { /* for_log: read and append, created if absent */
#if GNA_POSIX
    struct stat st; /* a log must be regular before it is opened for writing: opening a device for writing can act on it */
    int special = for_log && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    int fd = special ? -1 : open(path, (for_log ? O_RDWR | O_CREAT : O_RDONLY) | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0 && !special) return bad_input(path, "cannot open (%s)", strerror(errno));
    if (special || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        return bad_input(path, "not a regular file (a FIFO, a device or a folder): gna reads only regular files");
    }
    if ((uintmax_t)st.st_size > MAX_TEXT_BYTES) {
        close(fd);
        return bad_input(path, "%jd bytes: more than gna reads from such a file (%d)", (intmax_t)st.st_size, MAX_TEXT_BYTES);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!(*file = fdopen(fd, for_log ? "a+b" : "rb"))) {
        close(fd);
        return failure(path, "cannot open (%s)", strerror(errno));
    }
#else
    if (!(*file = fopen(path, for_log ? "a+b" : "rb"))) return bad_input(path, "cannot open (%s)", strerror(errno));
#endif
    return GNA_OK;
}

/* The rest of an open file f (named path) into memory, NUL-terminated */
static int read_stream(FILE *f, const char *path, char **text, size_t *size) {
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    for (;;) {
        if (capacity - used < 65536) {
            capacity = capacity ? 2 * capacity : 65536;
            buffer = checked_realloc(buffer, capacity + 1);
        }
        size_t n = fread(buffer + used, 1, capacity - used, f);
        used += n;
        if (n == 0 || used > MAX_TEXT_BYTES) break;
    }
    if (ferror(f) || used > MAX_TEXT_BYTES) {
        free(buffer);
        return bad_input(path, used > MAX_TEXT_BYTES ? "grew past %d bytes while gna read it" : "read error", MAX_TEXT_BYTES);
    }
    buffer[used] = 0;
    *text = buffer;
    *size = used;
    return GNA_OK;
}

/* the whole of a (small) regular file */
static int read_file(const char *path, char **text, size_t *size) {
    FILE *f;
    TRY(open_regular(path, 0, &f));
    int status = read_stream(f, path, text, size);
    fclose(f);
    return status;
}

static void bytes_add(Bytes *b, const void *data, size_t n) {
    if (b->capacity - b->length < n + 1) {
        size_t capacity = b->capacity ? b->capacity : 64;
        while (capacity - b->length < n + 1) capacity *= 2;
        b->data = checked_realloc(b->data, capacity);
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, data, n);
    b->length += n;
    b->data[b->length] = 0;
}

static void bytes_add_text(Bytes *b, const char *text) { bytes_add(b, text, strlen(text)); }

static void bytes_printf(Bytes *b, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    char *buffer = checked_malloc((size_t)n + 1);
    va_start(args, format);
    vsnprintf(buffer, (size_t)n + 1, format, args);
    va_end(args);
    bytes_add(b, buffer, (size_t)n);
    free(buffer);
}

/* ---------------------------------------------------------------------------------------------
 * II.2 Threads. A run's pool of workers, started on first use and kept for the run's life: a forward
 * pass calls `run` a few hundred times, and starting threads for each costs more than a small range
 * does. Worker i runs range i of each job; the caller runs range 0, then waits for the others. Every
 * range is a contiguous cut of [0, n), so the cut depends only on n and the thread count, and no
 * range shares a sum with another: the bits never depend on it. A range that runs out of memory ends
 * there; the caller waits for the others, then takes the jump of II.1 on its own thread.
 * Between jobs a worker reads the job count SPIN times (some microseconds) before it sleeps on the
 * condition variable, and the caller reads the running count so before it waits: a decode step posts
 * hundreds of jobs of a few microseconds each, and waking sleeping threads may cost more than the
 * jobs. Bounded, and no sched_yield: beside busy processes a yield can lose a whole time slice
 * (measured on 2 loaded cores: decode 1.3-2x slower).
 */
enum { MAX_THREADS = 64, SPIN = 1 << 14 };

typedef struct {
    int n_threads;                        /* wanted (1: no workers) */
#if GNA_THREADS
    pthread_mutex_t lock;
    pthread_cond_t job_posted, job_finished;
    RangeFn fn;                           /* the current job: fn(task, .) over [0, n) in `threads` ranges */
    const void *task;
    size_t n;
    int threads;
    ATOMIC unsigned long jobs_posted;     /* a worker runs each job it has not seen, if it has a range in it */
    ATOMIC int n_running;                 /* workers still on the current job */
    size_t out_of_memory;                 /* bytes a worker's range of it wanted and did not get, or 0 */
    int n_workers, quit;
    pthread_t workers[MAX_THREADS];
    unsigned long jobs_before[MAX_THREADS]; /* jobs_posted when worker i started: those are not its own */
#endif
} Pool;

#if GNA_THREADS
/* the i-th of `threads` contiguous ranges that cut [0, n); the bytes it wanted and did not get, or 0 */
static size_t run_range(RangeFn fn, const void *task, size_t n, int threads, int i) {
    size_t begin = n * (size_t)i / (size_t)threads, end = n * (size_t)(i + 1) / (size_t)threads, wanted = 0;
    jmp_buf here, *outer = out_of_memory_exit;
    out_of_memory_exit = &here;
    if (setjmp(here) == 0) {
        if (begin < end) fn(task, begin, end);
    } else {
        wanted = out_of_memory_wanted;
    }
    out_of_memory_exit = outer;
    return wanted;
}

typedef struct {
    Pool *pool;
    int index;
} Worker;

static void *pool_worker(void *arg) {
    Worker w = *(Worker *)arg;
    free(arg);
    Pool *pool = w.pool;
    pthread_mutex_lock(&pool->lock);
    unsigned long seen = pool->jobs_before[w.index];
    for (;;) {
        pthread_mutex_unlock(&pool->lock);
        for (int i = 0; i < SPIN && pool->jobs_posted == seen; i++) continue;
        pthread_mutex_lock(&pool->lock);
        while (pool->jobs_posted == seen && !pool->quit) pthread_cond_wait(&pool->job_posted, &pool->lock);
        if (pool->quit) break;
        seen = pool->jobs_posted;
        if (w.index >= pool->threads) continue; /* a job for fewer threads */
        RangeFn fn = pool->fn;
        const void *task = pool->task;
        size_t n = pool->n;
        int threads = pool->threads;
        pthread_mutex_unlock(&pool->lock);
        size_t wanted = run_range(fn, task, n, threads, w.index);
        pthread_mutex_lock(&pool->lock);
        if (wanted) pool->out_of_memory = wanted;
        if (--pool->n_running == 0) pthread_cond_signal(&pool->job_finished);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}
#endif

static void build_pool(Pool *pool, int n_threads) {
    memset(pool, 0, sizeof *pool);
#if GNA_THREADS
    if (n_threads <= 0) { /* all cores */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = cores > 0 ? (int)(cores < MAX_THREADS ? cores : MAX_THREADS) : 1;
    }
#endif
    pool->n_threads = GNA_THREADS ? n_threads : 1;
#if GNA_THREADS
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->job_posted, NULL);
    pthread_cond_init(&pool->job_finished, NULL);
#endif
}

static void free_pool(Pool *pool) {
#if GNA_THREADS
    pthread_mutex_lock(&pool->lock);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->job_posted);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 1; i <= pool->n_workers; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->job_finished);
    pthread_cond_destroy(&pool->job_posted);
    pthread_mutex_destroy(&pool->lock);
#endif
    memset(pool, 0, sizeof *pool);
}

/* Compute.run of Part II: fn over [0, n) in one range per thread */
static void run_on_pool(const Compute *cx, RangeFn fn, const void *task, size_t n) {
    Pool *pool = cx->machinery;
    int threads = pool->n_threads;
    if ((size_t)threads > n) threads = (int)n;
#if GNA_THREADS
    if (threads > 1) {
        pthread_mutex_lock(&pool->lock);
        while (pool->n_workers < threads - 1) {
            int index = pool->n_workers + 1;
            Worker *w = malloc(sizeof *w); /* not checked_malloc: no jump out of the lock held here */
            if (!w) break;
            *w = (Worker){pool, index};
            pool->jobs_before[index] = pool->jobs_posted;
            if (pthread_create(&pool->workers[index], NULL, pool_worker, w) != 0) {
                free(w);
                break;
            }
            pool->n_workers++;
        }
        if (threads > pool->n_workers + 1) threads = pool->n_workers + 1; /* could start no more: larger ranges, same bits */
        pool->fn = fn;
        pool->task = task;
        pool->n = n;
        pool->threads = threads;
        pool->n_running = threads - 1;
        pool->jobs_posted++;
        pthread_cond_broadcast(&pool->job_posted);
        pthread_mutex_unlock(&pool->lock);
        size_t wanted = run_range(fn, task, n, threads, 0);
        for (int i = 0; i < SPIN && pool->n_running > 0; i++) continue;
        pthread_mutex_lock(&pool->lock);
        while (pool->n_running > 0) pthread_cond_wait(&pool->job_finished, &pool->lock);
        if (pool->out_of_memory) wanted = pool->out_of_memory;
        pool->out_of_memory = 0;
        pthread_mutex_unlock(&pool->lock);
        if (wanted) unless_out_of_memory(NULL, wanted);
        return;
    }
#endif
    if (n > 0) fn(task, 0, n);
}

/* ---------------------------------------------------------------------------------------------
 * II.3 Vector kernels: faster versions of Part I's matmul and leaves, written once in a small
 * vocabulary - Vec holds VEC floats - that each instruction set defines in a few lines. They equal
 * Part I's to rounding (fused multiply-adds, their own order of sums, a vector exp and log within 2
 * ulp of libm's), and the tests check each against it, kernel by kernel and on every fixture.
 */
#if defined(__GNUC__) /* gcc and clang: unroll the loop that follows completely; inline a function always */
#define UNROLL _Pragma("GCC unroll 16")
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define UNROLL
#define ALWAYS_INLINE inline
#endif

#if GNA_AVX512
typedef __m512 Vec;
enum { VEC = 16 };
static inline Vec vec_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vec_store(float *p, Vec v) { _mm512_storeu_ps(p, v); }
static inline Vec vec_set1(float x) { return _mm512_set1_ps(x); }
static inline Vec vec_add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
static inline Vec vec_mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
static inline Vec vec_div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
static inline Vec vec_fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); } /* a b + c, rounded once */
static inline Vec vec_min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
static inline Vec vec_max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
static inline Vec vec_round(Vec a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline float vec_sum(Vec v) { return _mm512_reduce_add_ps(v); }
/* 2^n for whole numbers n in [-126, 127]: n + 127 in the exponent field */
static inline Vec vec_pow2(Vec n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
static inline Vec vec_load_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
static inline Vec vec_load_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
static inline Vec vec_select_greater(Vec x, Vec limit, Vec if_greater, Vec otherwise) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, limit, _CMP_GT_OQ), otherwise, if_greater);
}
/* x = m 2^e with m in [0.5, 1), for positive normal x: m returned, e stored */
static inline Vec vec_frexp(Vec x, Vec *e) {
    __m512i bits = _mm512_castps_si512(x);
    *e = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126)));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007FFFFF)), _mm512_set1_epi32(0x3F000000)));
}
/* round_to_bf16, lane by lane */
static inline Vec vec_round_bf16(Vec v) {
    __m512i bits = _mm512_castps_si512(v);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF)));
    bits = _mm512_mask_or_epi32(rounded, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), bits, _mm512_set1_epi32(0x00400000));
    return _mm512_castsi512_ps(_mm512_and_si512(bits, _mm512_set1_epi32((int)0xFFFF0000u)));
}
#elif GNA_AVX2
typedef __m256 Vec;
enum { VEC = 8 };
static inline Vec vec_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vec_store(float *p, Vec v) { _mm256_storeu_ps(p, v); }
static inline Vec vec_set1(float x) { return _mm256_set1_ps(x); }
static inline Vec vec_add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
static inline Vec vec_mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
static inline Vec vec_div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
static inline Vec vec_fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline Vec vec_min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
static inline Vec vec_max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
static inline Vec vec_round(Vec a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline float vec_sum(Vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static inline Vec vec_pow2(Vec n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
static inline Vec vec_load_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
static inline Vec vec_load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline Vec vec_select_greater(Vec x, Vec limit, Vec if_greater, Vec otherwise) {
    return _mm256_blendv_ps(otherwise, if_greater, _mm256_cmp_ps(x, limit, _CMP_GT_OQ));
}
static inline Vec vec_frexp(Vec x, Vec *e) {
    __m256i bits = _mm256_castps_si256(x);
    *e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
    return _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F000000)));
}
static inline Vec vec_round_bf16(Vec v) {
    __m256i bits = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7FFF)));
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    bits = _mm256_blendv_epi8(rounded, _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000)), nan);
    return _mm256_castsi256_ps(_mm256_and_si256(bits, _mm256_set1_epi32((int)0xFFFF0000u)));
}
#elif GNA_NEON
typedef float32x4_t Vec;
enum { VEC = 4 };
static inline Vec vec_load(const float *p) { return vld1q_f32(p); }
static inline void vec_store(float *p, Vec v) { vst1q_f32(p, v); }
static inline Vec vec_set1(float x) { return vdupq_n_f32(x); }
static inline Vec vec_add(Vec a, Vec b) { return vaddq_f32(a, b); }
static inline Vec vec_mul(Vec a, Vec b) { return vmulq_f32(a, b); }
static inline Vec vec_div(Vec a, Vec b) { return vdivq_f32(a, b); }
static inline Vec vec_fma(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }
static inline Vec vec_min(Vec a, Vec b) { return vminq_f32(a, b); }
static inline Vec vec_max(Vec a, Vec b) { return vmaxq_f32(a, b); }
static inline Vec vec_round(Vec a) { return vrndnq_f32(a); }
static inline float vec_sum(Vec v) { return vaddvq_f32(v); }
static inline Vec vec_pow2(Vec n) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
}
static inline Vec vec_load_bf16(const uint16_t *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
static inline Vec vec_load_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
static inline Vec vec_select_greater(Vec x, Vec limit, Vec if_greater, Vec otherwise) {
    return vbslq_f32(vcgtq_f32(x, limit), if_greater, otherwise);
}
static inline Vec vec_frexp(Vec x, Vec *e) {
    uint32x4_t bits = vreinterpretq_u32_f32(x);
    *e = vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(bits, 23)), vdupq_n_s32(126)));
    return vreinterpretq_f32_u32(vorrq_u32(vandq_u32(bits, vdupq_n_u32(0x007FFFFF)), vdupq_n_u32(0x3F000000)));
}
static inline Vec vec_round_bf16(Vec v) {
    uint32x4_t bits = vreinterpretq_u32_f32(v);
    uint32x4_t odd = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
    uint32x4_t rounded = vaddq_u32(bits, vaddq_u32(odd, vdupq_n_u32(0x7FFF)));
    bits = vbslq_u32(vceqq_f32(v, v), rounded, vorrq_u32(bits, vdupq_n_u32(0x00400000))); /* NaN: v != v */
    return vreinterpretq_f32_u32(vandq_u32(bits, vdupq_n_u32(0xFFFF0000u)));
}
#endif

#if GNA_VECTORS
/* exp (Cephes' expf, S. Moshier):
 *   exp(x) = 2^n exp(r),  n = round(x / ln 2),  r = x - n ln 2 in [-ln2/2, ln2/2]
 *   exp(r) ~ 1 + r + r^2 (1/2 + r (1/6 + r (1/24 + ...)))  (degree 7; within 2 ulp of expf, checked by
 * the tests). x is clamped to [-104, 88.8] (expf is 0 and inf outside, up to a subnormal); 2^n is
 * applied in two halves so that subnormal results come out right. */
static inline Vec vec_exp(Vec x) {
    x = vec_max(vec_min(x, vec_set1(88.8f)), vec_set1(-104.0f));
    Vec n = vec_round(vec_mul(x, vec_set1(1.44269504088896341f)));
    Vec r = vec_fma(n, vec_set1(-0.693359375f), x); /* ln 2 in two parts: n * 0.693359375 is exact */
    r = vec_fma(n, vec_set1(2.12194440e-4f), r);
    Vec p = vec_set1(1.9875691500e-4f);
    p = vec_fma(p, r, vec_set1(1.3981999507e-3f));
    p = vec_fma(p, r, vec_set1(8.3334519073e-3f));
    p = vec_fma(p, r, vec_set1(4.1665795894e-2f));
    p = vec_fma(p, r, vec_set1(1.6666665459e-1f));
    p = vec_fma(p, r, vec_set1(5.0000001201e-1f));
    p = vec_fma(p, vec_mul(r, r), vec_add(r, vec_set1(1.0f)));
    Vec half = vec_round(vec_mul(n, vec_set1(0.5f))); /* n = half + (n - half), each in [-75, 64] */
    return vec_mul(vec_mul(p, vec_pow2(half)), vec_pow2(vec_add(n, vec_mul(half, vec_set1(-1.0f)))));
}

/* log for positive normal x (Cephes' logf):
 *   x = m 2^e, m in [sqrt(1/2), sqrt(2)),  log x = e ln 2 + log(1 + f),  f = m - 1
 *   log(1 + f) ~ f - f^2/2 + f^3 P(f)       (degree 8; within 2 ulp of logf, checked by the tests) */
static inline Vec vec_log(Vec x) {
    Vec e, m = vec_frexp(x, &e);                                                  /* m in [0.5, 1) */
    Vec small = vec_select_greater(vec_set1(0.707106781186547524f), m, vec_set1(1.0f), vec_set1(0.0f));
    e = vec_add(e, vec_mul(small, vec_set1(-1.0f)));                              /* m < sqrt(1/2): m 2, e - 1 */
    Vec f = vec_add(vec_add(m, vec_mul(small, m)), vec_set1(-1.0f));
    Vec p = vec_set1(7.0376836292e-2f);
    p = vec_fma(p, f, vec_set1(-1.1514610310e-1f));
    p = vec_fma(p, f, vec_set1(1.1676998740e-1f));
    p = vec_fma(p, f, vec_set1(-1.2420140846e-1f));
    p = vec_fma(p, f, vec_set1(1.4249322787e-1f));
    p = vec_fma(p, f, vec_set1(-1.6668057665e-1f));
    p = vec_fma(p, f, vec_set1(2.0000714765e-1f));
    p = vec_fma(p, f, vec_set1(-2.4999993993e-1f));
    p = vec_fma(p, f, vec_set1(3.3333331174e-1f));
    Vec f2 = vec_mul(f, f);
    Vec y = vec_fma(vec_mul(p, f), f2, vec_mul(e, vec_set1(-2.12194440e-4f))); /* ln 2 in two parts, as in vec_exp */
    y = vec_fma(f2, vec_set1(-0.5f), y);
    return vec_fma(e, vec_set1(0.693359375f), vec_add(f, y));
}

static inline Vec vec_silu(Vec x) { return vec_div(x, vec_add(vec_set1(1.0f), vec_exp(vec_mul(x, vec_set1(-1.0f))))); }

/* softplus(x), x above 20 as it is. With u = 1 + exp(x) rounded, log1p(e) = log(u) - ((u - 1) - e) / u
 * restores what the rounding of u lost (Goldberg 1991, theorem 4's idea), and gives e when u rounds to 1. */
static inline Vec vec_softplus(Vec x) {
    Vec e = vec_exp(x), u = vec_add(vec_set1(1.0f), e);
    Vec log1p_e = vec_add(vec_log(u), vec_mul(vec_div(vec_add(vec_add(u, vec_set1(-1.0f)), vec_mul(e, vec_set1(-1.0f))), u), vec_set1(-1.0f)));
    return vec_select_greater(x, vec_set1(20.0f), x, log1p_e);
}

/* -- The leaves. */
/* the q . k_j four keys at a time, each a sum over hd in vectors (kept in registers: four chains) */
static void scores_simd(float *out, const float *q, const float *keys, size_t stride, size_t n, size_t hd) {
    size_t j = 0, vectors = hd / VEC * VEC;
    for (; j + 4 <= n; j += 4) {
        const float *k = keys + j * stride;
        Vec acc[4] = {vec_set1(0), vec_set1(0), vec_set1(0), vec_set1(0)};
        for (size_t d = 0; d < vectors; d += VEC) {
            Vec q_v = vec_load(q + d);
            UNROLL for (size_t r = 0; r < 4; r++) acc[r] = vec_fma(q_v, vec_load(k + r * stride + d), acc[r]);
        }
        for (size_t r = 0; r < 4; r++) {
            out[j + r] = vec_sum(acc[r]);
            for (size_t d = vectors; d < hd; d++) out[j + r] += q[d] * k[r * stride + d];
        }
    }
    for (; j < n; j++) out[j] = dot(q, keys + j * stride, hd);
}

/* out = sum_j p_j v_j with out's vectors held in registers across the keys (up to 8 at a time) */
static void weighted_sum_simd(float *out, const float *p, const float *values, size_t stride, size_t n, size_t hd) {
    size_t vectors = hd / VEC * VEC;
    for (size_t d0 = 0; d0 < vectors; d0 += 8 * VEC) {
        size_t width = vectors - d0 < 8 * VEC ? (vectors - d0) / VEC : 8;
        Vec acc[8];
        for (size_t v = 0; v < width; v++) acc[v] = vec_set1(0);
        for (size_t j = 0; j < n; j++) {
            Vec p_v = vec_set1(p[j]);
            const float *row = values + j * stride + d0;
            for (size_t v = 0; v < width; v++) acc[v] = vec_fma(p_v, vec_load(row + v * VEC), acc[v]);
        }
        for (size_t v = 0; v < width; v++) vec_store(out + d0 + v * VEC, acc[v]);
    }
    for (size_t d = vectors; d < hd; d++) {
        out[d] = 0;
        for (size_t j = 0; j < n; j++) out[d] += p[j] * values[j * stride + d];
    }
}

/* each vector's exponentials summed in float32, those sums in double, so that the sum's error does
 * not grow with the context */
static void softmax_simd(float *x, size_t n) {
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    Vec minus_max = vec_set1(-max);
    double sum = 0;
    size_t i = 0;
    for (; i + VEC <= n; i += VEC) {
        Vec e = vec_exp(vec_add(vec_load(x + i), minus_max));
        vec_store(x + i, e);
        sum += vec_sum(e);
    }
    for (; i < n; i++) sum += x[i] = expf(x[i] - max);
    Vec total = vec_set1((float)sum);
    for (i = 0; i + VEC <= n; i += VEC) vec_store(x + i, vec_div(vec_load(x + i), total));
    for (; i < n; i++) x[i] = (float)(x[i] / sum);
}

static void activate_simd(float *out, const float *x, size_t n, Activation f, const float *times) {
    size_t i = 0;
    for (; f != ACT_GELU && i + VEC <= n; i += VEC) {
        Vec y = f == ACT_SILU ? vec_silu(vec_load(x + i)) : vec_softplus(vec_load(x + i));
        vec_store(out + i, times ? vec_mul(y, vec_load(times + i)) : y);
    }
    activate(out + i, x + i, n - i, f, times ? times + i : NULL);
}

static float mamba1_step_simd(float *S, const float *A, float dt, float u, const float *B, const float *C, size_t N) {
    Vec dt_v = vec_set1(dt), u_v = vec_set1(u), y_v = vec_set1(0);
    size_t n = 0;
    for (; n + VEC <= N; n += VEC) {
        Vec s = vec_fma(vec_exp(vec_mul(dt_v, vec_load(A + n))), vec_load(S + n), vec_mul(vec_mul(dt_v, vec_load(B + n)), u_v));
        vec_store(S + n, s);
        y_v = vec_fma(s, vec_load(C + n), y_v);
    }
    return vec_sum(y_v) + mamba1_step(S + n, A + n, dt, u, B + n, C + n, N - n);
}

static float ssd_step_simd(float *S, float decay, float input, const float *B, const float *C, size_t N) {
    Vec decay_v = vec_set1(decay), input_v = vec_set1(input), y0 = vec_set1(0), y1 = vec_set1(0);
    size_t n = 0;
    for (; n + 2 * VEC <= N; n += 2 * VEC) { /* two sums in flight: N is 64 or 128 in practice */
        Vec s0 = vec_fma(decay_v, vec_load(S + n), vec_mul(input_v, vec_load(B + n)));
        Vec s1 = vec_fma(decay_v, vec_load(S + n + VEC), vec_mul(input_v, vec_load(B + n + VEC)));
        vec_store(S + n, s0);
        vec_store(S + n + VEC, s1);
        y0 = vec_fma(s0, vec_load(C + n), y0);
        y1 = vec_fma(s1, vec_load(C + n + VEC), y1);
    }
    return vec_sum(vec_add(y0, y1)) + ssd_step(S + n, decay, input, B + n, C + n, N - n);
}

/* -- The matmul. VEC elements of a weight from element i, widened (and, --bf16, rounded) in registers */
static ALWAYS_INLINE Vec vec_load_weight(Weight w, size_t i, int bf16) {
    Vec v = w.dtype == DTYPE_BF16  ? vec_load_bf16((const uint16_t *)w.data + i)
            : w.dtype == DTYPE_F16 ? vec_load_f16((const uint16_t *)w.data + i)
                                   : vec_load((const float *)w.data + i);
    return bf16 ? vec_round_bf16(v) : v;
}

static float weight_at_rounded(Weight w, size_t i, int bf16) { return bf16 ? round_to_bf16(weight_at(w, i)) : weight_at(w, i); }

/* For a few tokens (decode: T = 1), where the time is the weights' trip from memory: four weight rows at
 * a time, widened in registers as they stream in; four streams keep more reads in flight than one.
 * Inlined once per (dtype, bf16), so that the loop carries no test of either. */
static ALWAYS_INLINE void matmul_rows_of(const Matmul *m, size_t begin, size_t end, Dtype dtype, int bf16) {
    Weight w = m->w;
    w.dtype = dtype;
    size_t K = w.cols;
    for (size_t r0 = begin; r0 < end; r0 += 4) {
        size_t n_rows = end - r0 < 4 ? end - r0 : 4;
        for (size_t t = 0; t < m->T; t++) {
            const float *x = m->in + t * m->in_stride;
            Vec acc[4] = {vec_set1(0), vec_set1(0), vec_set1(0), vec_set1(0)};
            size_t k = 0;
            for (; k + VEC <= K; k += VEC) {
                Vec x_v = vec_load(x + k);
                for (size_t j = 0; j < n_rows; j++) acc[j] = vec_fma(x_v, vec_load_weight(w, (r0 + j) * K + k, bf16), acc[j]);
            }
            for (size_t j = 0; j < n_rows; j++) {
                float sum = vec_sum(acc[j]);
                for (size_t i = k; i < K; i++) sum += x[i] * weight_at_rounded(w, (r0 + j) * K + i, bf16);
                m->out[t * w.rows + r0 + j] = sum + (m->bias.data ? weight_at(m->bias, r0 + j) : 0.0f);
            }
        }
    }
}

static void matmul_rows_simd(const void *task, size_t begin, size_t end) {
    const Matmul *m = task;
    switch (m->w.dtype) {
    case DTYPE_BF16: m->bf16 ? matmul_rows_of(m, begin, end, DTYPE_BF16, 1) : matmul_rows_of(m, begin, end, DTYPE_BF16, 0); break;
    case DTYPE_F16: m->bf16 ? matmul_rows_of(m, begin, end, DTYPE_F16, 1) : matmul_rows_of(m, begin, end, DTYPE_F16, 0); break;
    default: m->bf16 ? matmul_rows_of(m, begin, end, DTYPE_F32, 1) : matmul_rows_of(m, begin, end, DTYPE_F32, 0); break;
    }
}

/* For many tokens (prefill): register tiles, in the manner of BLIS (Van Zee & van de Geijn 2015) and
 * llamafile's tinyBLAS. The output is cut into tiles of TILE_TOKENS tokens x TILE_ROWS weight rows, held
 * in TILE_TOKENS x TILE_VECS vector registers while the sum runs along k:
 *
 *   acc[i][rows j..j+VEC) += in[t0 + i, k] * panel[k][j..j+VEC)      (one broadcast, one FMA)
 *
 * A panel is TILE_ROWS weight rows x DEPTH columns, widened once and transposed so that the rows of
 * one k lie side by side; PANELS of them (a block) are widened together and serve every token tile
 * of the chunk. Each output is one float32 sum in k order, whatever the tiling: the sum is carried
 * between depth blocks in `out` itself, so tiles at the edges, depth blocks and thread ranges change
 * no bits. */
#if GNA_AVX512
enum { TILE_TOKENS = 8, TILE_VECS = 3 }; /* 24 accumulators of the 32 registers; 8 x 3 against 6 x 4: prefill 0.99-1.20x on 2-core Zen 5, 0.81-1.12x on a 16-core Xeon (test/BENCH.md) */
#else
enum { TILE_TOKENS = 6, TILE_VECS = 16 / VEC }; /* AVX2: 12 of 16 registers; NEON: 24 of 32 */
#endif
enum { TILE_ROWS = TILE_VECS * VEC, DEPTH = 384, PANELS = 8 }; /* AVX2: a 24 KB panel in L1, a 192 KB block in L2 */

#if GNA_AVX512
/* r[c][j] = r[j][c] for 16 x 16 32-bit words: pairs of rows interleaved, then pairs of pairs, then the
 * 128-bit lanes gathered. Inlined, its loops and its callers' unrolled, so that the rows stay in
 * registers (called, they went through the stack, and packing took 1.4-2x as long). */
static ALWAYS_INLINE void transpose_16x16(__m512i r[16]) {
    __m512i t[16], u[16];
    UNROLL for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    UNROLL for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    UNROLL for (int m = 0; m < 4; m++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0x44), v1 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0xEE);
        __m512i v2 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0x44), v3 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0xEE);
        r[m] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        r[4 + m] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
        r[8 + m] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        r[12 + m] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
    }
}
#endif

/* panel[k][j] = W[r0 + j, k0 + k] for k < depth, j < TILE_ROWS (zero past the last row). With
 * AVX-512, 16 rows x 16 k at a time, widened and transposed in registers; the rest a row at a time. */
static void pack_panel(Weight w, size_t r0, size_t k0, size_t depth, int bf16, float *panel) {
    size_t k_done = 0;
#if GNA_AVX512
    k_done = depth / 16 * 16;
    for (size_t j0 = 0; j0 < TILE_ROWS; j0 += 16)
        for (size_t k = 0; k < k_done; k += 16) {
            __m512i r[16];
            UNROLL for (size_t j = 0; j < 16; j++)
                r[j] = r0 + j0 + j < w.rows ? _mm512_castps_si512(vec_load_weight(w, (r0 + j0 + j) * w.cols + k0 + k, bf16))
                                            : _mm512_setzero_si512();
            transpose_16x16(r);
            UNROLL for (size_t q = 0; q < 16; q++) _mm512_storeu_si512(panel + (k + q) * TILE_ROWS + j0, r[q]);
        }
#endif
    for (size_t j = 0; j < TILE_ROWS && k_done < depth; j++)
        for (size_t k = k_done; k < depth; k++)
            panel[k * TILE_ROWS + j] = r0 + j < w.rows ? weight_at_rounded(w, (r0 + j) * w.cols + k0 + k, bf16) : 0.0f;
}

/* c[i][j] (+)= sum_{k < depth} in_rows[i][k] panel[k][j], i < TILE_TOKENS, j < TILE_ROWS; c rows
 * c_stride floats apart; `first`: the sum starts here, otherwise it continues what c holds */
static void matmul_tile(const float *const in_rows[TILE_TOKENS], const float *panel, size_t depth, float *c, size_t c_stride,
                        int first) {
    Vec acc[TILE_TOKENS][TILE_VECS]; /* the loops over i and v unrolled, so that acc lives in registers */
    UNROLL for (int i = 0; i < TILE_TOKENS; i++)
        UNROLL for (int v = 0; v < TILE_VECS; v++) acc[i][v] = first ? vec_set1(0) : vec_load(c + (size_t)i * c_stride + v * VEC);
    for (size_t k = 0; k < depth; k++) {
        Vec w[TILE_VECS];
        UNROLL for (int v = 0; v < TILE_VECS; v++) w[v] = vec_load(panel + k * TILE_ROWS + v * VEC);
        UNROLL for (int i = 0; i < TILE_TOKENS; i++) {
            Vec x = vec_set1(in_rows[i][k]);
            UNROLL for (int v = 0; v < TILE_VECS; v++) acc[i][v] = vec_fma(x, w[v], acc[i][v]);
        }
    }
    UNROLL for (int i = 0; i < TILE_TOKENS; i++)
        UNROLL for (int v = 0; v < TILE_VECS; v++) vec_store(c + (size_t)i * c_stride + v * VEC, acc[i][v]);
}

/* 64-byte aligned (a cache line, an AVX-512 vector): large blocks from malloc start 16 bytes into a
 * page, so that every 64-byte load from them would straddle two cache lines */
static void *checked_aligned_malloc(size_t bytes) { return unless_out_of_memory(aligned_alloc(64, (bytes + 63) / 64 * 64), bytes); }

/* panels [begin, end) of TILE_ROWS weight rows each, PANELS at a time */
static void matmul_tiles(const void *task, size_t begin, size_t end) {
    const Matmul *m = task;
    size_t T = m->T, rows = m->w.rows, K = m->w.cols;
    float *panels = checked_aligned_malloc(sizeof(float) * PANELS * DEPTH * TILE_ROWS);
    float edge[TILE_TOKENS * TILE_ROWS]; /* a tile that sticks out past the last token or row */
    for (size_t p0 = begin; p0 < end; p0 += PANELS) {
        size_t n_panels = end - p0 < PANELS ? end - p0 : PANELS;
        for (size_t k0 = 0; k0 < K; k0 += DEPTH) {
            size_t depth = K - k0 < DEPTH ? K - k0 : DEPTH;
            for (size_t p = 0; p < n_panels; p++) pack_panel(m->w, (p0 + p) * TILE_ROWS, k0, depth, m->bf16, panels + p * DEPTH * TILE_ROWS);
            for (size_t t0 = 0; t0 < T; t0 += TILE_TOKENS) {
                const float *in_rows[TILE_TOKENS]; /* past the last token: the last again, its results unused */
                size_t n_tokens = T - t0 < TILE_TOKENS ? T - t0 : TILE_TOKENS;
                for (size_t i = 0; i < TILE_TOKENS; i++) in_rows[i] = m->in + (t0 + (i < n_tokens ? i : n_tokens - 1)) * m->in_stride + k0;
                for (size_t p = 0; p < n_panels; p++) {
                    size_t r0 = (p0 + p) * TILE_ROWS, n_rows = rows - r0 < TILE_ROWS ? rows - r0 : TILE_ROWS;
                    float *c = m->out + t0 * rows + r0;
                    int inside = n_tokens == TILE_TOKENS && n_rows == TILE_ROWS;
                    if (!inside) {
                        memset(edge, 0, sizeof edge);
                        for (size_t i = 0; i < n_tokens; i++) memcpy(edge + i * TILE_ROWS, c + i * rows, sizeof(float) * n_rows);
                    }
                    matmul_tile(in_rows, panels + p * DEPTH * TILE_ROWS, depth, inside ? c : edge, inside ? rows : TILE_ROWS, k0 == 0);
                    if (inside) continue;
                    for (size_t i = 0; i < n_tokens; i++) memcpy(c + i * rows, edge + i * TILE_ROWS, sizeof(float) * n_rows);
                }
            }
        }
        size_t r_end = (p0 + n_panels) * TILE_ROWS < rows ? (p0 + n_panels) * TILE_ROWS : rows;
        if (m->bias.data) /* added after the sum, as in the definition */
            for (size_t t = 0; t < T; t++)
                for (size_t r = p0 * TILE_ROWS; r < r_end; r++) m->out[t * rows + r] += weight_at(m->bias, r);
    }
    free(panels);
}

/* --bf16: the input rounded to bfloat16 once, here, for every weight row (the weights are rounded as
 * they are widened) */
static void matmul_simd(const Compute *cx, const Matmul *m) {
    Matmul task = *m;
    float *rounded = NULL;
    if (m->bf16) {
        size_t K = m->w.cols;
        rounded = float_array(m->T, K);
        for (size_t t = 0; t < m->T; t++)
            for (size_t k = 0; k < K; k++) rounded[t * K + k] = round_to_bf16(m->in[t * m->in_stride + k]);
        task.in = rounded;
        task.in_stride = K;
        task.bf16 = 1;
    }
    if (m->T >= TILE_TOKENS) cx->run(cx, matmul_tiles, &task, (m->w.rows + TILE_ROWS - 1) / TILE_ROWS);
    else cx->run(cx, matmul_rows_simd, &task, m->w.rows);
    free(rounded);
}
#endif

/* The table a run uses: Part I's definitions (--reference, or a build without vector instructions),
 * or the vector kernels; either way on the run's threads. */
static Compute build_compute(int reference, int bf16, int dt_min_clamp, Pool *pool) {
    Compute cx = reference_kernels;
#if GNA_VECTORS
    if (!reference) {
        cx.matmul = matmul_simd;
        cx.scores = scores_simd;
        cx.weighted_sum = weighted_sum_simd;
        cx.softmax = softmax_simd;
        cx.activate = activate_simd;
        cx.mamba1_step = mamba1_step_simd;
        cx.ssd_step = ssd_step_simd;
    }
#else
    (void)reference;
#endif
    cx.bf16 = bf16;
    cx.dt_min_clamp = dt_min_clamp;
    cx.run = run_on_pool;
    cx.machinery = pool;
    return cx;
}

/* ---------------------------------------------------------------------------------------------
 * II.4 Runs: gna.h's gna_run, built from the command line's own options, holds a Compute (the kernels
 * and the threads) and an Intervention (masks, probes, the layer plan and the donors it needs).
 *
 * A mask spec is a comma list of items L<layers><kind><heads>[@<queries>[:<keys>]] (Part I, I.4):
 *   layers, heads   N, N-M or *; zero-based, as in model.layers.N
 *   kind            H: the layer's one kind of head; A: attention head (zamba2 hybrid layers);
 *                   S: SSM head (mamba-2, zamba2, llamba) or channel (mamba-1, falcon-mamba)
 *   queries, keys   positions N or N-M; negative ones count from the end (-1 is the last token)
 * Without ":" an item ablates; with it, it masks entries. Examples: L17H24 (Llama-3.1-8B's Aggregate
 * head), L17H24@-1, L17H24@-1:5-9, L*A*@-1:0--1 (the paper's Zamba2 experiment).
 */
enum { MAX_SURGERY = 16 };

struct gna_run {
    const Model *model;
    Pool pool;
    Compute cx;
    Intervention iv;           /* points into the fields below */
    MaskItem *items;
    size_t n_items;
    Probe *probes;
    size_t n_probes;
    size_t *probe_rows;        /* the probes' query positions */
    Tap *taps;                 /* each with its own malloc'd positions */
    size_t n_taps, taps_capacity;
    LayerPlan *plan;           /* [n_layers] */
    Model *donors[MAX_SURGERY];/* --replace's models, loaded for the run's life */
    unsigned long serial;      /* its caches carry it: a cache is used with the run it was made for */
    int busy;                  /* a call is running it: a run is one thread's at a time */
};

/* "N", "N-M" or "*" into [first, last]; "*" gives [0, count - 1] */
static const char *parse_range(const char *p, size_t count, size_t *first, size_t *last) {
    if (*p == '*') {
        *first = 0;
        *last = count - 1;
        return p + 1;
    }
    if (*p < '0' || *p > '9') return NULL;
    char *end;
    errno = 0;
    unsigned long long a = strtoull(p, &end, 10), b = a;
    if (*end == '-' && end[1] >= '0' && end[1] <= '9') b = strtoull(end + 1, &end, 10);
    if (errno || a > INT_MAX || b > INT_MAX) return NULL;
    *first = (size_t)a;
    *last = (size_t)b;
    return end;
}

/* a position or a range of positions, each possibly negative: "5", "-1", "3-7", "0--2" */
static const char *parse_positions(const char *p, long *first, long *last) {
    char *end;
    if (!((*p >= '0' && *p <= '9') || (*p == '-' && p[1] >= '1' && p[1] <= '9'))) return NULL; /* -1 is the last; -0 is none */
    errno = 0;
    long a = strtol(p, &end, 10), b = a;
    if (*end == '-' && ((end[1] >= '0' && end[1] <= '9') || (end[1] == '-' && end[2] >= '1' && end[2] <= '9')))
        b = strtol(end + 1, &end, 10);
    if (errno || a > INT_MAX || a < -INT_MAX || b > INT_MAX || b < -INT_MAX) return NULL;
    *first = a;
    *last = b;
    return end;
}

/* positions after @ or :, or a name of I.7's named positions: letters, options, pairs, asked, value, or
 * text=S (S up to the next "," or ":") */
static const char *parse_positions_or_name(const char *p, long *first, long *last, int *name, char *named_text) {
    *name = -1;
    if (strncmp(p, "text=", 5) == 0) {
        size_t n = strcspn(p + 5, ",:");
        if (n == 0 || n >= 32) return NULL;
        memcpy(named_text, p + 5, n);
        named_text[n] = 0;
        *name = N_MARK_KINDS;
        return p + 5 + n;
    }
    for (int k = 0; k < N_MARK_KINDS; k++)
        if (strncmp(p, mark_names[k], strlen(mark_names[k])) == 0) {
            *name = k;
            return p + strlen(mark_names[k]);
        }
    return parse_positions(p, first, last);
}

/* A spec's items for the model as the plan runs it; `option` names the spec in messages */
static int parse_mask_items(const Model *m, const LayerPlan *plan, const char *option, const char *spec, MaskItem **items,
                            size_t *n_items) {
    const Config *c = &m->config;
    size_t capacity = 0;
    *items = NULL;
    *n_items = 0;
    for (const char *p = spec; *p;) {
        const char *start = p;
        char text[96], named_text[32] = "";
        size_t n = strcspn(p, ",");
        snprintf(text, sizeof text, "%.*s", (int)(n < 95 ? n : 95), p);
        size_t l0, l1, h0 = 0, h1 = 0;
        long q0 = 0, q1 = 0, k0 = 0, k1 = 0;
        int has_q = 0, has_k = 0, q_name = -1, k_name = -1;
        if (*p++ != 'L' || !(p = parse_range(p, c->n_layers, &l0, &l1)))
            return bad_input(option, "\"%s\": expected L<layer>H<head>, e.g. L17H24, L16-17H*, L*A*@-1", text);
        char kind_letter = *p++;
        if (kind_letter != 'H' && kind_letter != 'A' && kind_letter != 'S')
            return bad_input(option, "\"%s\": expected H, A or S after the layer", text);
        int all_heads = *p == '*';
        if (all_heads) p++;
        else if (!(p = parse_range(p, 0, &h0, &h1)))
            return bad_input(option, "\"%s\": expected a head number, range or * after %c", text, kind_letter);
        if (*p == '@') {
            has_q = 1;
            if (!(p = parse_positions_or_name(p + 1, &q0, &q1, &q_name, named_text)))
                return bad_input(option, "\"%s\": expected query positions or a name (letters, options, pairs, asked, value, "
                                         "text=S) after @", text);
            if (*p == ':') {
                has_k = 1;
                if (!(p = parse_positions_or_name(p + 1, &k0, &k1, &k_name, named_text)))
                    return bad_input(option, "\"%s\": expected key positions or a name (letters, options, pairs, asked, value, "
                                             "text=S) after :", text);
            }
            if (q_name == N_MARK_KINDS && k_name == N_MARK_KINDS)
                return bad_input(option, "\"%s\": one text= per item", text);
        }
        if (*p && *p != ',') return bad_input(option, "\"%s\": unexpected \"%c\"", text, *p);
        if (l0 > l1 || l1 >= c->n_layers)
            return bad_input(option, "\"%s\": layer %zu is out of range (the model has %zu layers, 0-%zu)", text,
                             l1 >= c->n_layers ? l1 : l0, c->n_layers, c->n_layers - 1);
        for (size_t l = l0; l <= l1; l++) {
            const Layer *layer = plan[l].layer;
            size_t count = 0;
            HeadKind kind = kind_letter == 'A' ? HEAD_ATTENTION : HEAD_SSM;
            if (layer && kind_letter == 'H') {
                if (layer->has_shared_visit)
                    return bad_input(option, "\"%s\": layer %zu has attention and SSM heads: write L%zuA.. or L%zuS..", text, l, l, l);
                kind = layer->kind == MIXER_ATTENTION ? HEAD_ATTENTION : HEAD_SSM;
            }
            if (layer) count = heads_of(layer, &plan[l].owner->config, kind);
            if (count == 0) {
                if (start[1] == '*') continue; /* L*A*: the layers that have attention heads */
                return bad_input(option, "\"%s\": layer %zu has no %s heads%s", text, l, kind == HEAD_ATTENTION ? "attention" : "SSM",
                                 layer ? "" : " (it is left out)");
            }
            size_t first = h0, last = all_heads ? count - 1 : h1;
            if (first > last || last >= count)
                return bad_input(option, "\"%s\": head %zu is out of range (layer %zu has %zu %s, 0-%zu)", text, last >= count ? last : first,
                                 l, count, kind == HEAD_ATTENTION ? "attention heads" : layer->kind == MIXER_MAMBA1 ? "SSM channels" : "SSM heads",
                                 count - 1);
            for (size_t h = first; h <= last; h++) {
                *items = grow_array(*items, *n_items, &capacity, sizeof(MaskItem));
                MaskItem *item = &(*items)[(*n_items)++];
                *item = (MaskItem){.layer = l, .kind = kind, .head = h, .has_queries = has_q, .query_first = q0, .query_last = q1,
                                   .has_keys = has_k, .key_first = k0, .key_last = k1, .query_name = q_name, .key_name = k_name};
                snprintf(item->named_text, sizeof item->named_text, "%s", named_text);
                snprintf(item->text, sizeof item->text, "%s", text);
            }
        }
        if (*p == ',' && !*++p) return bad_input(option, "\"%s\": nothing after the last comma", spec);
    }
    return GNA_OK;
}

/* the items of a spec, at least one; on a failure, none (those parsed before it are freed) */
static int parse_mask(const Model *m, const LayerPlan *plan, const char *option, const char *spec, MaskItem **items, size_t *n_items) {
    int status = parse_mask_items(m, plan, option, spec, items, n_items);
    if (status == GNA_OK && *n_items == 0) status = bad_input(option, "\"%s\" names no heads of this model", spec);
    if (status != GNA_OK) {
        free(*items);
        *items = NULL;
        *n_items = 0;
    }
    return status;
}

/* Does the mask name query positions (@...)? They count from the end of each request. */
static int mask_names_positions(const Intervention *iv) {
    for (size_t i = 0; iv && i < iv->n_items; i++)
        if (iv->items[i].has_queries) return 1;
    return 0;
}

static int parse_whole_number(const char *option, const char *text, long long min, long long max, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max || (v == 0 && strchr(text, '-')))
        return bad_input(option, "expected a whole number from %lld to %lld, got \"%s\"", min, max, text);
    *out = v;
    return GNA_OK;
}

/* the options that make a run: the options table's rows marked `run` (II.11) */
static int is_run_option(const char *a, int *takes_value);

static void free_taps(gna_run *r) {
    for (size_t i = 0; i < r->n_taps; i++) free((void *)r->taps[i].positions);
    free(r->taps);
    r->taps = NULL;
    r->n_taps = r->taps_capacity = r->iv.n_taps = 0;
    r->iv.taps = NULL;
}

static void free_run(gna_run *r) {
    free_taps(r);
    free_pool(&r->pool);
    free(r->items);
    free(r->probes);
    free(r->probe_rows);
    free(r->plan);
    for (int i = 0; i < MAX_SURGERY; i++) gna_free(r->donors[i]);
}

static int build_run(gna_run *r, const Model *m, int n_options, const char *const *options) {
    const Config *c = &m->config;
    const char *mask = NULL;
    int reference = 0, bf16 = 0, dt_min_clamp = 0, n_donors = 0, layers = 0, kept = 0;
    long long threads = 0, number;
    memset(r, 0, sizeof *r);
    r->model = m;
    r->plan = checked_calloc(c->n_layers, sizeof(LayerPlan));
    for (size_t l = 0; l < c->n_layers; l++) r->plan[l] = (LayerPlan){.layer = &m->layers[l], .owner = m};
    build_pool(&r->pool, 1);
    for (int i = 0; i < n_options; i++) { /* in order, so that --replace after --layers brings a layer back */
        const char *a = options[i], *value = i + 1 < n_options ? options[i + 1] : NULL;
        int takes_value;
        if (!is_run_option(a, &takes_value)) return bad_input(a, "not an option of a run (gna logits --help lists them)");
        if (takes_value && !value) return bad_input(a, "needs a value");
        if ((strcmp(a, "--mask") == 0 && mask) || (strcmp(a, "--threads") == 0 && threads) || (strcmp(a, "--layers") == 0 && layers))
            return bad_input(a, "given twice: one would hide the other"); /* one --mask lists every item, comma separated */
        if (strcmp(a, "--mask") == 0) mask = value;
        else if (strcmp(a, "--threads") == 0) TRY(parse_whole_number(a, value, 1, MAX_THREADS, &threads));
        else if (strcmp(a, "--bf16") == 0) bf16 = 1;
        else if (strcmp(a, "--reference") == 0) reference = 1;
        else if (strcmp(a, "--dt-min-clamp") == 0) dt_min_clamp = 1;
        else if (strcmp(a, "--layers") == 0) {
            long first, last;
            const char *end = parse_positions(value, &first, &last);
            if (!end || *end || first < 0 || last < 0) return bad_input("--layers", "expected a range A-B, got \"%s\"", value);
            TRY(keep_layers(r->plan, c->n_layers, (size_t)first, (size_t)last));
            layers = 1;
        } else if (strcmp(a, "--drop") == 0) {
            TRY(parse_whole_number(a, value, 0, INT_MAX, &number));
            TRY(drop_layer(r->plan, c->n_layers, (size_t)number));
        } else { /* --replace L=DIR (a layer), or --replace L<l>H<h>[-<h>]=DIR (heads, with the donor's) */
            const char *equals = strchr(value, '=');
            if (!equals || !equals[1] || equals == value) return bad_input(a, "expected L=DIR or L<layer>H<heads>=DIR, got \"%s\"", value);
            char *target = checked_strndup(value, (size_t)(equals - value));
            size_t l = 0, h0 = 0, h1 = 0;
            const char *end = target[0] == 'L' ? parse_range(target + 1, 0, &l, &l) : NULL;
            int heads = end && *end == 'H' && (end = parse_range(end + 1, 0, &h0, &h1)) && !*end && h0 <= h1, status = GNA_OK;
            if (!heads) status = parse_whole_number(a, target, 0, INT_MAX, &number);
            free(target);
            if (status != GNA_OK) return bad_input(a, "expected L=DIR or L<layer>H<heads>=DIR, got \"%s\"", value);
            if (n_donors == MAX_SURGERY) return bad_input(a, "given more than %d times", MAX_SURGERY);
            TRY(gna_load(equals + 1, &r->donors[n_donors]));
            const Model *donor = r->donors[n_donors++];
            if (!heads) TRY(replace_layer(r->plan, m, (size_t)number, donor));
            for (size_t h = h0; heads && h <= h1; h++) TRY(replace_head(r->plan, m, l, h, donor));
        }
        if (takes_value) i++;
    }
    for (size_t l = 0; l < c->n_layers; l++) kept += r->plan[l].layer != NULL;
    if (!kept) return bad_input("--layers, --drop", "no layer is left to run");
    if (mask) TRY(parse_mask(m, r->plan, "--mask", mask, &r->items, &r->n_items));
    free_pool(&r->pool);
    build_pool(&r->pool, (int)threads);
    r->cx = build_compute(reference, bf16, dt_min_clamp, &r->pool);
    r->iv = (Intervention){.n_items = r->n_items, .items = r->items, .plan = r->plan};
    return GNA_OK;
}

static int new_run(const gna_model *model, int n_options, const char *const *options, gna_run **run) {
    gna_run *r = checked_calloc(1, sizeof *r);
    int status = build_run(r, model, n_options, options);
    if (status != GNA_OK) {
        free_run(r);
        free(r);
        r = NULL;
    }
    *run = r;
    return status;
}

/* -- gna.h's arguments are checked before anything is done with them: a NULL where an object or a
 * buffer is needed, a negative count, a cache made for another run, or a run that another thread is
 * running (a run is one thread's at a time: two would share its pool) is GNA_BAD_INPUT in one line,
 * never a crash or a deadlock. A model lives until gna_free and its last run's gna_run_free. */
#define NEEDS(condition, what)                                                                     \
    do {                                                                                           \
        if (!(condition)) return bad_input("gna.h", "%s", what);                                   \
    } while (0)
#if GNA_THREADS
static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK_OBJECTS() pthread_mutex_lock(&objects_lock)
#define UNLOCK_OBJECTS() pthread_mutex_unlock(&objects_lock)
#else
#define LOCK_OBJECTS()
#define UNLOCK_OBJECTS()
#endif
static unsigned long last_run_serial;
static void free_model(Model *m);

/* claim the run for this call (take 1) or give it back (take 0) */
static int claim_run(gna_run *run, int take) {
    LOCK_OBJECTS();
    int was = run->busy;
    if (take && !was) run->busy = 1;
    if (!take) run->busy = 0;
    UNLOCK_OBJECTS();
    return take && was ? bad_input("gna.h", "the run is being run by another thread (a run is one thread's at a time)") : GNA_OK;
}

static void release_model(gna_model *model, int runs, int freed) { /* one run less, or gna_free */
    LOCK_OBJECTS();
    model->n_runs += runs;
    model->freed |= freed;
    int gone = model->freed && model->n_runs == 0;
    UNLOCK_OBJECTS();
    if (gone) free_model(model), free(model);
}

int gna_run_new(const gna_model *model, int n_options, const char *const *options, gna_run **run) {
    NEEDS(run, "gna_run_new: run is NULL");
    *run = NULL;
    NEEDS(model, "gna_run_new: model is NULL");
    NEEDS(n_options >= 0 && (n_options == 0 || options), "gna_run_new: options must be n_options strings");
    for (int i = 0; i < n_options; i++) NEEDS(options[i], "gna_run_new: an option is NULL");
    int status;
    CATCH_STATUS(status, new_run(model, n_options, options, run));
    if (status == GNA_OK) {
        LOCK_OBJECTS();
        ((gna_model *)model)->n_runs++;
        (*run)->serial = ++last_run_serial;
        UNLOCK_OBJECTS();
    }
    return status;
}

void gna_run_free(gna_run *run) {
    if (!run) return;
    gna_model *model = (gna_model *)run->model;
    free_run(run);
    free(run);
    release_model(model, -1, 0);
}

/* Probes in place of the run's: the heads of `spec` (no positions), each recording `rows` (the run
 * takes them) of a sequence of `length` tokens into matrices + i n_rows length */
static int set_probes(gna_run *r, const char *option, const char *spec, size_t *rows, size_t n_rows, size_t length, float *matrices) {
    MaskItem *heads;
    size_t n;
    int parsed = parse_mask(r->model, r->plan, option, spec, &heads, &n);
    if (parsed != GNA_OK) {
        free(rows); /* a failed call leaves the run's probes as they were */
        return parsed;
    }
    int status = GNA_OK;
    for (size_t i = 0; i < n && status == GNA_OK; i++)
        if (heads[i].has_queries) status = bad_input(option, "\"%s\": %s takes heads only (no @ or :); masks go in --mask", heads[i].text, option);
    if (status != GNA_OK) free(rows);
    if (status == GNA_OK) {
        free(r->probe_rows);
        r->probe_rows = rows;
        free(r->probes);
        r->probes = checked_calloc(n, sizeof(Probe));
        for (size_t i = 0; i < n; i++)
            r->probes[i] = (Probe){heads[i].layer, heads[i].kind, heads[i].head, n_rows, rows, length, matrices + i * n_rows * length};
        r->n_probes = n;
        r->iv.probes = r->probes;
        r->iv.n_probes = n;
    }
    free(heads);
    return status;
}

static int count_heads(const gna_run *run, const char *heads, int *n_heads) {
    MaskItem *items;
    size_t n;
    int status = parse_mask_items(run->model, run->plan, "heads", heads, &items, &n); /* 0 is an answer here */
    free(items);
    TRY(status);
    *n_heads = (int)n;
    return GNA_OK;
}

int gna_count_heads(const gna_run *run, const char *heads, int *n_heads) {
    NEEDS(run && heads && n_heads, "gna_count_heads: run, heads and n_heads must not be NULL");
    CATCH_OUT_OF_MEMORY(count_heads(run, heads, n_heads));
}

static int run_record(gna_run *run, const char *heads, const int *rows, int n_rows, int n_tokens, float *matrices) {
    if (!heads) { /* record nothing from now on */
        free(run->probes);
        free(run->probe_rows);
        run->probes = NULL;
        run->probe_rows = NULL;
        run->n_probes = run->iv.n_probes = 0;
        run->iv.probes = NULL;
        return GNA_OK;
    }
    if (n_tokens < 1) return bad_input("n_tokens", "must be at least 1");
    size_t *positions = checked_malloc(sizeof(size_t) * (size_t)(rows ? n_rows : n_tokens));
    for (int i = 0; i < (rows ? n_rows : n_tokens); i++) {
        if (rows && (rows[i] < 0 || rows[i] >= n_tokens)) {
            free(positions);
            return bad_input("rows", "row %d is outside the %d tokens", rows[i], n_tokens);
        }
        positions[i] = (size_t)(rows ? rows[i] : i);
    }
    return set_probes(run, "heads", heads, positions, (size_t)(rows ? n_rows : n_tokens), (size_t)n_tokens, matrices);
}

int gna_run_record(gna_run *run, const char *heads, const int *rows, int n_rows, int n_tokens, float *matrices) {
    NEEDS(run, "gna_run_record: run is NULL");
    NEEDS(!heads || matrices, "gna_run_record: matrices is NULL");
    NEEDS(!heads || !rows || n_rows >= 1, "gna_run_record: n_rows must be at least 1 when rows are given");
    TRY(claim_run(run, 1));
    int status;
    CATCH_STATUS(status, run_record(run, heads, rows, n_rows, n_tokens, matrices));
    claim_run(run, 0);
    return status;
}

/* A tap's site: "L3", the residual stream after layer 3, or one head as --mask names it without
 * positions ("L3H2", "L3A1", "L3S0"); *width: the floats of one position */
static int parse_site(const gna_run *r, const char *site, Tap *tap, size_t *width) {
    const Config *c = &r->model->config;
    size_t n = strlen(site);
    if (n > 1 && site[0] == 'L' && strspn(site + 1, "0123456789") == n - 1) {
        long long l;
        TRY(parse_whole_number("site", site + 1, 0, (long long)c->n_layers - 1, &l));
        if (!r->plan[l].layer) return bad_input("site", "\"%s\": layer %lld is left out of this run", site, l);
        *tap = (Tap){.layer = (size_t)l, .residual = 1};
        *width = c->hidden_size;
        return GNA_OK;
    }
    MaskItem *items;
    size_t n_items;
    TRY(parse_mask(r->model, r->plan, "site", site, &items, &n_items));
    int status = n_items == 1 && !items[0].has_queries
                     ? GNA_OK
                     : bad_input("site", "\"%s\": expected L<layer> (the residual stream) or one head, L<layer>H<head>", site);
    for (size_t i = 0; status == GNA_OK && i < r->plan[items[0].layer].n_donor_heads; i++) /* its output is the donor layer's */
        if (r->plan[items[0].layer].donor_heads[i] == items[0].head)
            status = bad_input("site", "\"%s\": a head replaced by a donor's (--replace) is not a site", site);
    if (status == GNA_OK) {
        const LayerPlan *plan = &r->plan[items[0].layer];
        *tap = (Tap){.layer = items[0].layer, .kind = items[0].kind, .head = items[0].head};
        *width = head_size(plan->layer, &plan->owner->config, items[0].kind);
    }
    free(items);
    return status;
}

static int site_width(const gna_run *run, const char *site, int *width) {
    Tap tap;
    size_t n;
    TRY(parse_site(run, site, &tap, &n));
    *width = (int)n;
    return GNA_OK;
}

int gna_site_width(const gna_run *run, const char *site, int *width) {
    NEEDS(run && site && width, "gna_site_width: run, site and width must not be NULL");
    CATCH_OUT_OF_MEMORY(site_width(run, site, width));
}

static int run_tap(gna_run *run, int mode, const char *site, const int *positions, int n_positions, float *values) {
    if (!site) {
        free_taps(run);
        return GNA_OK;
    }
    Tap tap;
    size_t width;
    if (mode != GNA_CAPTURE && mode != GNA_PATCH) return bad_input("mode", "expected GNA_CAPTURE or GNA_PATCH, got %d", mode);
    TRY(parse_site(run, site, &tap, &width));
    if (n_positions < 1 || !positions || !values) return bad_input("positions", "a tap needs at least one position, and its values");
    for (int i = 0; i < n_positions; i++)
        if (positions[i] < 0) return bad_input("positions", "position %d: positions count from 0, the first token", positions[i]);
    size_t *kept = checked_malloc(sizeof(size_t) * (size_t)n_positions);
    for (int i = 0; i < n_positions; i++) kept[i] = (size_t)positions[i];
    tap.patch = mode == GNA_PATCH;
    tap.n_positions = (size_t)n_positions;
    tap.positions = kept;
    tap.values = values;
    run->taps = grow_array(run->taps, run->n_taps, &run->taps_capacity, sizeof(Tap));
    run->taps[run->n_taps++] = tap;
    run->iv.taps = run->taps;
    run->iv.n_taps = run->n_taps;
    return GNA_OK;
}

int gna_run_tap(gna_run *run, int mode, const char *site, const int *positions, int n_positions, float *values) {
    NEEDS(run, "gna_run_tap: run is NULL");
    TRY(claim_run(run, 1));
    int status;
    CATCH_STATUS(status, run_tap(run, mode, site, positions, n_positions, values));
    claim_run(run, 0);
    return status;
}

static int run_unembed(gna_run *run, const float *hidden, int n_rows, float *logits) {
    if (n_rows < 1) return bad_input("n_rows", "must be at least 1");
    float *normed = float_array((size_t)n_rows, run->model->config.hidden_size);
    unembed(run->model, &run->cx, hidden, (size_t)n_rows, normed, logits);
    free(normed);
    return GNA_OK;
}

int gna_unembed(gna_run *run, const float *hidden, int n_rows, float *logits) {
    NEEDS(run && hidden && logits, "gna_unembed: run, hidden and logits must not be NULL");
    NEEDS(n_rows >= 1, "gna_unembed: n_rows must be at least 1");
    TRY(claim_run(run, 1));
    int status;
    CATCH_STATUS(status, run_unembed(run, hidden, n_rows, logits));
    claim_run(run, 0);
    return status;
}

int gna_cache_state(gna_cache *cache, int layer, int mode, float *state, int *n_floats) {
    NEEDS(cache && n_floats, "gna_cache_state: cache and n_floats must not be NULL");
    if (layer < 0 || (size_t)layer >= cache->n_layers)
        return bad_input("layer", "%d is out of range (the model has layers 0-%zu)", layer, cache->n_layers - 1);
    if (!cache->layers[layer].ssm_floats) return bad_input("layer", "layer %d has no SSM state in this run", layer);
    if (mode != GNA_CAPTURE && mode != GNA_PATCH) return bad_input("mode", "expected GNA_CAPTURE or GNA_PATCH, got %d", mode);
    *n_floats = (int)cache->layers[layer].ssm_floats;
    if (state) tap_state(cache, (size_t)layer, mode == GNA_PATCH, state);
    return GNA_OK;
}

static int cache_new_checked(const gna_run *run, int max_tokens, gna_cache **cache) {
    if (max_tokens < 1) return bad_input("cache", "max_tokens must be at least 1");
    *cache = cache_new(run->model, run->plan, (size_t)max_tokens);
    (*cache)->run_serial = run->serial;
    return GNA_OK;
}

int gna_cache_new(const gna_run *run, int max_tokens, gna_cache **cache) {
    NEEDS(cache, "gna_cache_new: cache is NULL");
    *cache = NULL;
    NEEDS(run, "gna_cache_new: run is NULL");
    CATCH_OUT_OF_MEMORY(cache_new_checked(run, max_tokens, cache));
}

void gna_cache_free(gna_cache *cache) { cache_free(cache); }

int gna_cache_length(const gna_cache *cache) { return cache ? (int)cache->n_tokens : -1; }

int gna_forward(gna_run *run, gna_cache *cache, const int *tokens, int n_tokens, float *logits) {
    NEEDS(run && cache && tokens, "gna_forward: run, cache and tokens must not be NULL");
    NEEDS(cache->run_serial == run->serial, "gna_forward: the cache was made for another run (gna_cache_new with this run)");
    if (n_tokens < 1) return bad_input("tokens", "nothing to run: no tokens");
    TRY(claim_run(run, 1));
    start_call();
    int status;
    CATCH_STATUS(status, forward(run->model, &run->cx, &run->iv, cache, tokens, (size_t)n_tokens, logits, 0));
    claim_run(run, 0);
    return status;
}

/* ---------------------------------------------------------------------------------------------
 * II.5 JSON (RFC 8259), strict, for config.json, safetensors headers and index files.
 *
 * A document is parsed into a tree of JsonValue nodes held in one arena. Beyond RFC 8259 it accepts
 * the tokens Infinity, -Infinity and NaN, which Python's json module writes for float('inf') (Mamba-2's
 * time_step_limit in configs written by transformers 4.x). Errors name the byte offset.
 */
typedef enum { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonType type;
    double number;        /* JSON_NUMBER */
    const char *string;   /* JSON_STRING: decoded UTF-8, NUL-terminated */
    size_t length;        /* string bytes, or number of children */
    const char *key;      /* this value's key, when it is an object member */
    JsonValue *first;     /* first child (array element or object member) */
    JsonValue *next;      /* next sibling */
};

typedef struct ArenaBlock ArenaBlock;
struct ArenaBlock {
    ArenaBlock *previous;
    size_t used, capacity;
    max_align_t data[];
};

typedef struct {
    JsonValue *root;
    ArenaBlock *arena;
} JsonDocument;

typedef struct {
    const char *text, *where;
    size_t size, at;
    int depth;
    JsonDocument *doc;
} JsonParser;

enum { JSON_MAX_DEPTH = 128 };

static void *arena_alloc(JsonDocument *doc, size_t bytes) {
    bytes = (bytes + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    ArenaBlock *b = doc->arena;
    if (!b || b->capacity - b->used < bytes) { /* blocks from 4 KiB, doubling up to 1 MiB: small documents stay small */
        size_t grown = b ? (b->capacity < (1u << 19) ? 2 * b->capacity : (1u << 20)) : 4096;
        size_t capacity = bytes > grown ? bytes : grown;
        b = checked_malloc(sizeof(ArenaBlock) + capacity);
        b->previous = doc->arena;
        b->used = 0;
        b->capacity = capacity;
        doc->arena = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += bytes;
    return p;
}

static void free_json(JsonDocument *doc) {
    for (ArenaBlock *b = doc->arena; b;) {
        ArenaBlock *previous = b->previous;
        free(b);
        b = previous;
    }
    doc->arena = NULL;
    doc->root = NULL;
}

static int json_error(JsonParser *p, const char *what) {
    return bad_input(p->where, "malformed JSON at byte %zu: %s", p->at, what);
}

static void json_skip_space(JsonParser *p) {
    while (p->at < p->size) {
        char c = p->text[p->at];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->at++;
    }
}

static int json_literal(JsonParser *p, const char *word) {
    size_t n = strlen(word);
    if (p->size - p->at < n || memcmp(p->text + p->at, word, n) != 0) return 0;
    p->at += n;
    return 1;
}

static int json_hex4(JsonParser *p, unsigned *out) {
    if (p->size - p->at < 4) return json_error(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->text[p->at++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return json_error(p, "bad hex digit in \\u escape");
    }
    *out = v;
    return GNA_OK;
}

static size_t utf8_encode(unsigned code, char *out) {
    if (code < 0x80) { out[0] = (char)code; return 1; }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* A string, opening quote at p->at; decoded into the arena. Escapes shrink text, so the raw length
 * bounds the decoded one. */
static int json_string(JsonParser *p, const char **out, size_t *out_length) {
    p->at++; /* opening quote */
    size_t start = p->at;
    while (p->at < p->size && p->text[p->at] != '"') p->at += p->text[p->at] == '\\' ? 2 : 1;
    if (p->at >= p->size) { p->at = start - 1; return json_error(p, "unterminated string"); }
    size_t raw_end = p->at;
    char *decoded = arena_alloc(p->doc, raw_end - start + 1);
    size_t n = 0;
    p->at = start;
    while (p->at < raw_end) {
        unsigned char c = (unsigned char)p->text[p->at];
        if (c < 0x20) return json_error(p, "control character inside a string");
        if (c != '\\') { decoded[n++] = (char)c; p->at++; continue; }
        p->at++;
        char e = p->text[p->at++];
        switch (e) {
        case '"': decoded[n++] = '"'; break;
        case '\\': decoded[n++] = '\\'; break;
        case '/': decoded[n++] = '/'; break;
        case 'b': decoded[n++] = '\b'; break;
        case 'f': decoded[n++] = '\f'; break;
        case 'n': decoded[n++] = '\n'; break;
        case 'r': decoded[n++] = '\r'; break;
        case 't': decoded[n++] = '\t'; break;
        case 'u': {
            unsigned code;
            TRY(json_hex4(p, &code));
            if (code >= 0xD800 && code < 0xDC00) { /* high surrogate: a low one must follow */
                unsigned low;
                if (p->at + 2 > raw_end || p->text[p->at] != '\\' || p->text[p->at + 1] != 'u')
                    return json_error(p, "unpaired surrogate in \\u escape");
                p->at += 2;
                TRY(json_hex4(p, &low));
                if (low < 0xDC00 || low >= 0xE000) return json_error(p, "unpaired surrogate in \\u escape");
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else if (code >= 0xDC00 && code < 0xE000) {
                return json_error(p, "unpaired surrogate in \\u escape");
            }
            n += utf8_encode(code, decoded + n);
            break;
        }
        default: p->at -= 2; return json_error(p, "unknown escape in string");
        }
    }
    decoded[n] = 0;
    p->at = raw_end + 1;
    *out = decoded;
    *out_length = n;
    return GNA_OK;
}

/* number = [-] int [frac] [exp], checked against the grammar, then converted by strtod */
static int json_number(JsonParser *p, double *out) {
    size_t start = p->at;
    const char *t = p->text;
    if (p->at < p->size && t[p->at] == '-') p->at++;
    if (json_literal(p, "Infinity")) { *out = t[start] == '-' ? -INFINITY : INFINITY; return GNA_OK; }
    if (p->at >= p->size || t[p->at] < '0' || t[p->at] > '9') return json_error(p, "expected a value");
    if (t[p->at] == '0') p->at++;
    else while (p->at < p->size && t[p->at] >= '0' && t[p->at] <= '9') p->at++;
    if (p->at < p->size && t[p->at] == '.') {
        p->at++;
        if (p->at >= p->size || t[p->at] < '0' || t[p->at] > '9') return json_error(p, "digit expected after '.'");
        while (p->at < p->size && t[p->at] >= '0' && t[p->at] <= '9') p->at++;
    }
    if (p->at < p->size && (t[p->at] == 'e' || t[p->at] == 'E')) {
        p->at++;
        if (p->at < p->size && (t[p->at] == '+' || t[p->at] == '-')) p->at++;
        if (p->at >= p->size || t[p->at] < '0' || t[p->at] > '9') return json_error(p, "digit expected in exponent");
        while (p->at < p->size && t[p->at] >= '0' && t[p->at] <= '9') p->at++;
    }
    char buffer[64];
    size_t n = p->at - start;
    if (n >= sizeof buffer) { p->at = start; return json_error(p, "number too long"); }
    memcpy(buffer, t + start, n);
    buffer[n] = 0;
    *out = strtod(buffer, NULL);
    return GNA_OK;
}

static int json_value(JsonParser *p, JsonValue **out);

static int compare_keys(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* An object's keys must differ: Python's json keeps a key's last value, gna would read its first, so a
 * key given twice (a config with num_hidden_layers twice) is refused by name rather than read one way */
static int json_keys_differ(JsonParser *p, const JsonValue *object) {
    if (object->length < 2) return GNA_OK;
    const char **keys = checked_malloc(sizeof(char *) * object->length);
    size_t n = 0;
    for (const JsonValue *m = object->first; m; m = m->next) keys[n++] = m->key;
    qsort(keys, n, sizeof *keys, compare_keys);
    int status = GNA_OK;
    for (size_t i = 1; i < n && status == GNA_OK; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            status = bad_input(p->where, "key \"%.100s\" is given twice in one object (which of its values is meant?)", keys[i]);
    free(keys);
    return status;
}

static int json_container(JsonParser *p, JsonValue *v, char close) {
    if (++p->depth > JSON_MAX_DEPTH) return json_error(p, "nested too deeply");
    p->at++; /* '[' or '{' */
    JsonValue **tail = &v->first;
    json_skip_space(p);
    if (p->at < p->size && p->text[p->at] == close) { p->at++; p->depth--; return GNA_OK; }
    for (;;) {
        const char *key = NULL;
        size_t key_length;
        json_skip_space(p);
        if (close == '}') {
            if (p->at >= p->size || p->text[p->at] != '"') return json_error(p, "expected a string key");
            TRY(json_string(p, &key, &key_length));
            json_skip_space(p);
            if (p->at >= p->size || p->text[p->at] != ':') return json_error(p, "expected ':'");
            p->at++;
        }
        JsonValue *child;
        TRY(json_value(p, &child));
        child->key = key;
        *tail = child;
        tail = &child->next;
        v->length++;
        json_skip_space(p);
        if (p->at < p->size && p->text[p->at] == ',') { p->at++; continue; }
        if (p->at < p->size && p->text[p->at] == close) { p->at++; break; }
        return json_error(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    p->depth--;
    return close == '}' ? json_keys_differ(p, v) : GNA_OK;
}

static int json_value(JsonParser *p, JsonValue **out) {
    json_skip_space(p);
    JsonValue *v = arena_alloc(p->doc, sizeof(JsonValue));
    memset(v, 0, sizeof *v);
    *out = v;
    if (p->at >= p->size) return json_error(p, "unexpected end of input");
    char c = p->text[p->at];
    if (c == '{') { v->type = JSON_OBJECT; return json_container(p, v, '}'); }
    if (c == '[') { v->type = JSON_ARRAY; return json_container(p, v, ']'); }
    if (c == '"') { v->type = JSON_STRING; return json_string(p, &v->string, &v->length); }
    if (json_literal(p, "null")) { v->type = JSON_NULL; return GNA_OK; }
    if (json_literal(p, "true")) { v->type = JSON_TRUE; return GNA_OK; }
    if (json_literal(p, "false")) { v->type = JSON_FALSE; return GNA_OK; }
    v->type = JSON_NUMBER;
    if (json_literal(p, "NaN")) { v->number = NAN; return GNA_OK; }
    return json_number(p, &v->number);
}

/* Parse text[0..size) as one JSON document; `where` names it in errors. */
static size_t utf8_valid_prefix(const char *text, size_t n); /* II.8 */

static int parse_json(JsonDocument *doc, const char *text, size_t size, const char *where) {
    JsonParser p = {text, where, size, 0, 0, doc};
    doc->root = NULL;
    doc->arena = NULL;
    size_t valid = utf8_valid_prefix(text, size); /* JSON text is UTF-8 (RFC 8259, 8.1): no string may hold other bytes */
    if (valid < size) return bad_input(where, "not valid UTF-8 at byte %zu (0x%02X); JSON text is UTF-8", valid, (unsigned char)text[valid]);
    int status = json_value(&p, &doc->root);
    if (status == GNA_OK) {
        json_skip_space(&p);
        if (p.at != size) status = json_error(&p, "unexpected text after the document");
    }
    if (status != GNA_OK) free_json(doc);
    return status;
}

static int load_json(JsonDocument *doc, const char *path) {
    char *text = NULL;
    size_t size = 0;
    TRY(read_file(path, &text, &size));
    int status = parse_json(doc, text, size, path);
    free(text);
    return status;
}

/* the member `key` of an object, or NULL */
static const JsonValue *json_get(const JsonValue *object, const char *key) {
    if (!object || object->type != JSON_OBJECT) return NULL;
    for (const JsonValue *m = object->first; m; m = m->next)
        if (strcmp(m->key, key) == 0) return m;
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * II.6 Checkpoints: safetensors files, mmapped read-only
 *
 * File layout: u64 little-endian N | N bytes of JSON header | data. The header maps each tensor name
 * to {"dtype", "shape", "data_offsets": [begin, end]}, offsets relative to the start of the data.
 * A sharded checkpoint adds model.safetensors.index.json, whose "weight_map" names the file of each
 * tensor; it is the authority. Weights stay in the mapping in their stored dtype, never copied (a
 * big-endian host swaps them in place in its private mapping; GNA_NO_MMAP reads the file into memory).
 */
typedef struct {
    const char *name;       /* as in the header */
    const char *file;       /* path of the file that holds it, for messages */
    Dtype dtype;
    const char *dtype_name; /* as in the header, e.g. "BF16" */
    int ndim;
    int64_t shape[8];       /* [ndim] */
    const void *data;       /* into the mapping */
    int64_t offset_begin, offset_end; /* within the file's data section */
} Tensor;

typedef struct {
    char *path;
    void *map;        /* the whole file: mapped (PROT_READ; PROT_WRITE too, private, on a big-endian
                         host), or read into memory under GNA_NO_MMAP */
    size_t size;
    JsonDocument header;
} SafetensorsFile;

struct Checkpoint {
    int n_files;
    SafetensorsFile *files; /* [n_files] */
    int n_tensors;
    Tensor *tensors;        /* [n_tensors], sorted by name */
};

enum { SAFETENSORS_MAX_HEADER = 100 * 1000 * 1000 }; /* the format's own limit */

static const struct { const char *name; Dtype dtype; int bytes; } safetensors_dtypes[] = {
    {"F32", DTYPE_F32, 4}, {"BF16", DTYPE_BF16, 2}, {"F16", DTYPE_F16, 2},
    /* valid safetensors dtypes gna does not compute with: fine in a file, an error if a model uses one */
    {"F64", DTYPE_UNSUPPORTED, 8}, {"I64", DTYPE_UNSUPPORTED, 8}, {"U64", DTYPE_UNSUPPORTED, 8},
    {"I32", DTYPE_UNSUPPORTED, 4}, {"U32", DTYPE_UNSUPPORTED, 4}, {"I16", DTYPE_UNSUPPORTED, 2},
    {"U16", DTYPE_UNSUPPORTED, 2}, {"I8", DTYPE_UNSUPPORTED, 1}, {"U8", DTYPE_UNSUPPORTED, 1},
    {"BOOL", DTYPE_UNSUPPORTED, 1}, {"F8_E4M3", DTYPE_UNSUPPORTED, 1}, {"F8_E5M2", DTYPE_UNSUPPORTED, 1},
};

static int compare_tensor_names(const void *a, const void *b) {
    return strcmp(((const Tensor *)a)->name, ((const Tensor *)b)->name);
}
static int compare_tensor_offsets(const void *a, const void *b) {
    const Tensor *x = *(const Tensor *const *)a, *y = *(const Tensor *const *)b;
    return x->offset_begin < y->offset_begin ? -1 : x->offset_begin > y->offset_begin;
}

/* safetensors stores little-endian numbers; a big-endian host swaps each tensor's elements in place */
static int host_is_big_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 0;
}
static void swap_elements(void *data, size_t count, int element_bytes) {
    unsigned char *b = data;
    for (size_t i = 0; i < count; i++, b += element_bytes)
        for (int j = 0; j < element_bytes / 2; j++) {
            unsigned char t = b[j];
            b[j] = b[element_bytes - 1 - j];
            b[element_bytes - 1 - j] = t;
        }
}

#ifndef GNA_NO_MMAP
/* The files mapped now, for the program's SIGBUS handler (II.9): a file truncated by another program
 * while gna reads it raises SIGBUS at the first page past its new end; the handler names the file. */
static struct { const char *start; size_t size; char path[256]; } mappings[64];

static void note_mapping(const void *start, size_t size, const char *path) {
    for (int i = 0; i < 64; i++)
        if (!mappings[i].start) {
            mappings[i].size = size;
            snprintf(mappings[i].path, sizeof mappings[i].path, "%s", path);
            mappings[i].start = start;
            return;
        }
}

static void forget_mapping(const void *start) {
    for (int i = 0; i < 64; i++)
        if (mappings[i].start == start) mappings[i].start = NULL;
}
#endif

/* The whole file into f->map and f->size: mapped, or (GNA_NO_MMAP) read with stdio */
static int load_safetensors_bytes(SafetensorsFile *f, const char *path) {
#ifndef GNA_NO_MMAP
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
    if (fd < 0) return bad_input(path, "cannot open (%s)", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { close(fd); return bad_input(path, "not a regular file (a FIFO, a device or a folder)"); }
    if ((uintmax_t)st.st_size > SIZE_MAX) {
        close(fd);
        return bad_input(path, "%jd bytes: more than this build's address space", (intmax_t)st.st_size);
    }
    f->size = (size_t)st.st_size;
    if (f->size < 8) { close(fd); return bad_input(path, "truncated: %zu bytes, not even a header length", f->size); }
    /* private and writable on a big-endian host: the pages it swaps become its own copy */
    f->map = mmap(NULL, f->size, host_is_big_endian() ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->map != MAP_FAILED) note_mapping(f->map, f->size, path);
    if (f->map == MAP_FAILED) { /* ENOMEM: the file does not fit in what is left of the address space (32-bit hosts) */
        f->map = NULL;
        if (errno == ENOMEM) return bad_input(path, "%zu bytes: too large to map in this host's address space", f->size);
        return failure(path, "mmap failed (%s)", strerror(errno));
    }
    return GNA_OK;
#else
    FILE *file = NULL;
#if GNA_POSIX /* a FIFO must not block the open, nor a device be read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { close(fd); return bad_input(path, "not a regular file (a FIFO, a device or a folder)"); }
    if (fd >= 0 && !(file = fdopen(fd, "rb"))) close(fd);
#else
    file = fopen(path, "rb");
#endif
    if (!file) return bad_input(path, "cannot open (%s)", strerror(errno));
    long length = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    if (length < 0 || fseek(file, 0, SEEK_SET) != 0) { fclose(file); return bad_input(path, "not a regular file"); }
    if ((unsigned long)length > SIZE_MAX) { fclose(file); return bad_input(path, "%ld bytes: more than this build's address space", length); }
    f->size = (size_t)length;
    if (f->size < 8) { fclose(file); return bad_input(path, "truncated: %zu bytes, not even a header length", f->size); }
    f->map = checked_malloc(f->size);
    size_t got = fread(f->map, 1, f->size, file);
    fclose(file);
    if (got != f->size) return bad_input(path, "read %zu of its %zu bytes (not a regular file?)", got, f->size);
    return GNA_OK;
#endif
}

/* Map one file, parse and check its header, append its tensors to ck->tensors. */
/* one entry of the header, {"dtype", "shape", "data_offsets"}: the tensor it describes in the data
 * section (data_size bytes at data), every number checked against the others and the file */
static int read_tensor_entry(const char *path, const JsonValue *m, unsigned char *data, int64_t data_size, Tensor *t) {
    const JsonValue *dtype = json_get(m, "dtype"), *shape = json_get(m, "shape"),
                    *offsets = json_get(m, "data_offsets");
    if (!dtype || dtype->type != JSON_STRING || !shape || shape->type != JSON_ARRAY || !offsets ||
        offsets->type != JSON_ARRAY || offsets->length != 2)
        return bad_input(path, "tensor %s: header entry needs dtype, shape and data_offsets [begin, end]", t->name);
    int element_bytes = 0;
    for (size_t i = 0; i < sizeof safetensors_dtypes / sizeof *safetensors_dtypes; i++)
        if (strcmp(dtype->string, safetensors_dtypes[i].name) == 0) {
            t->dtype = safetensors_dtypes[i].dtype;
            t->dtype_name = safetensors_dtypes[i].name;
            element_bytes = safetensors_dtypes[i].bytes;
        }
    if (!element_bytes) return bad_input(path, "tensor %s has unknown dtype \"%s\"", t->name, dtype->string);
    if (shape->length > 8) return bad_input(path, "tensor %s has %zu dimensions (at most 8)", t->name, shape->length);
    double product = 1; /* in double, exact up to 2^53: the shape's numbers are JSON's */
    for (const JsonValue *d = shape->first; d; d = d->next) {
        if (d->type != JSON_NUMBER || d->number < 0 || d->number > 1e15 || d->number != floor(d->number))
            return bad_input(path, "tensor %s: shape must hold non-negative integers", t->name);
        t->shape[t->ndim++] = (int64_t)d->number;
        product *= d->number;
    }
    if (product > 0x1p50 || product * element_bytes > (double)SIZE_MAX)
        return bad_input(path, "tensor %s: shape is impossibly large%s", t->name, product > 0x1p50 ? "" : " for this 32-bit host");
    int64_t elements = (int64_t)product;
    const JsonValue *b = offsets->first, *e = b->next;
    if (b->type != JSON_NUMBER || e->type != JSON_NUMBER || b->number < 0 || e->number < b->number ||
        b->number != floor(b->number) || e->number != floor(e->number) || e->number > 1e18)
        return bad_input(path, "tensor %s: data_offsets must be integers with 0 <= begin <= end", t->name);
    t->offset_begin = (int64_t)b->number;
    t->offset_end = (int64_t)e->number;
    if (t->offset_end > data_size)
        return bad_input(path, "tensor %s: data_offsets [%lld, %lld] run past the end of the data (%lld bytes; truncated file?)",
                         t->name, (long long)t->offset_begin, (long long)t->offset_end, (long long)data_size);
    if (t->offset_end - t->offset_begin != elements * element_bytes)
        return bad_input(path, "tensor %s: data_offsets span %lld bytes but shape and dtype need %lld", t->name,
                         (long long)(t->offset_end - t->offset_begin), (long long)(elements * element_bytes));
    t->data = data + t->offset_begin;
    if ((uintptr_t)t->data % (uintptr_t)element_bytes != 0)
        return bad_input(path, "tensor %s: data is not aligned to its %d-byte elements", t->name, element_bytes);
    return GNA_OK;
}

static int open_safetensors(Checkpoint *ck, const char *path) {
    SafetensorsFile *f = &ck->files[ck->n_files++];
    memset(f, 0, sizeof *f);
    f->path = checked_malloc(strlen(path) + 1);
    strcpy(f->path, path);
    TRY(load_safetensors_bytes(f, path));

    const unsigned char *bytes = f->map;
    uint64_t header_length = 0;
    for (int i = 7; i >= 0; i--) header_length = header_length << 8 | bytes[i];
    if (header_length > SAFETENSORS_MAX_HEADER)
        return bad_input(path, "header length %llu is over the format's limit of 100 MB", (unsigned long long)header_length);
    if (header_length > f->size - 8)
        return bad_input(path, "header length %llu runs past the end of the file (%zu bytes)",
                         (unsigned long long)header_length, f->size);
    TRY(parse_json(&f->header, (const char *)bytes + 8, (size_t)header_length, path));
    if (f->header.root->type != JSON_OBJECT) return bad_input(path, "header is not a JSON object");
    unsigned char *data = (unsigned char *)f->map + 8 + header_length;
    int64_t data_size = (int64_t)(f->size - 8 - header_length);

    int first = ck->n_tensors;
    ck->tensors = checked_realloc(ck->tensors, sizeof(Tensor) * (size_t)(ck->n_tensors + (int)f->header.root->length));
    for (const JsonValue *m = f->header.root->first; m; m = m->next) {
        if (strcmp(m->key, "__metadata__") == 0) continue;
        Tensor *t = &ck->tensors[ck->n_tensors];
        memset(t, 0, sizeof *t);
        t->name = m->key;
        t->file = f->path;
        TRY(read_tensor_entry(path, m, data, data_size, t));
        ck->n_tensors++;
    }
    /* no two tensors may share bytes */
    int n = ck->n_tensors - first;
    const Tensor **by_offset = checked_malloc(sizeof(Tensor *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) by_offset[i] = &ck->tensors[first + i];
    qsort(by_offset, (size_t)n, sizeof *by_offset, compare_tensor_offsets);
    for (int i = 1; i < n; i++)
        if (by_offset[i]->offset_begin < by_offset[i - 1]->offset_end) {
            int status = bad_input(path, "tensors %s and %s overlap in the data section", by_offset[i - 1]->name,
                                   by_offset[i]->name);
            free(by_offset);
            return status;
        }
    free(by_offset);
    if (host_is_big_endian())
        for (int i = first; i < ck->n_tensors; i++) {
            Tensor *t = &ck->tensors[i];
            int element_bytes = 1;
            for (size_t j = 0; j < sizeof safetensors_dtypes / sizeof *safetensors_dtypes; j++)
                if (strcmp(t->dtype_name, safetensors_dtypes[j].name) == 0) element_bytes = safetensors_dtypes[j].bytes;
            swap_elements(data + t->offset_begin, (size_t)(t->offset_end - t->offset_begin) / (size_t)element_bytes, element_bytes);
        }
    return GNA_OK;
}

static void free_checkpoint(Checkpoint *ck) {
    for (int i = 0; i < ck->n_files; i++) {
        SafetensorsFile *f = &ck->files[i];
#ifndef GNA_NO_MMAP
        if (f->map) forget_mapping(f->map), munmap(f->map, f->size);
#else
        free(f->map);
#endif
        free_json(&f->header);
        free(f->path);
    }
    free(ck->files);
    free(ck->tensors);
    memset(ck, 0, sizeof *ck);
}

/* dir/model.safetensors, or the shards named by dir/model.safetensors.index.json */
static int build_checkpoint(Checkpoint *ck, const char *dir) {
    memset(ck, 0, sizeof *ck);
    ck->tensors = checked_malloc(sizeof(Tensor)); /* never NULL, even with no tensors: qsort and bsearch take no NULL */
    char *index_path = path_join(dir, "model.safetensors.index.json");
    if (access(index_path, F_OK) != 0) {
        free(index_path);
        char *path = path_join(dir, "model.safetensors");
        ck->files = checked_calloc(1, sizeof(SafetensorsFile));
        int status = open_safetensors(ck, path);
        free(path);
        TRY(status);
    } else {
        JsonDocument index;
        int status = load_json(&index, index_path);
        if (status) { free(index_path); return status; }
        const JsonValue *map = json_get(index.root, "weight_map");
        if (!map || map->type != JSON_OBJECT || map->length == 0) {
            free_json(&index);
            status = bad_input(index_path, "no \"weight_map\" object (or an empty one)");
            free(index_path);
            return status;
        }
        ck->files = checked_calloc(map->length, sizeof(SafetensorsFile));
        /* open each distinct shard once, in order of first mention */
        for (const JsonValue *m = map->first; m && status == GNA_OK; m = m->next) {
            if (m->type != JSON_STRING || strchr(m->string, '/') || m->string[0] == 0) {
                status = bad_input(index_path, "weight_map entry %s must name a file in the folder", m->key);
                break;
            }
            int seen = 0;
            for (int i = 0; i < ck->n_files; i++) {
                const char *name = strrchr(ck->files[i].path, '/') + 1;
                if (strcmp(name, m->string) == 0) seen = 1;
            }
            if (seen) continue;
            char *path = path_join(dir, m->string);
            status = open_safetensors(ck, path);
            free(path);
        }
        qsort(ck->tensors, (size_t)ck->n_tensors, sizeof(Tensor), compare_tensor_names);
        /* a tensor stored twice first: which of the two bsearch finds below depends on the C library's qsort */
        for (int i = 1; i < ck->n_tensors && status == GNA_OK; i++)
            if (strcmp(ck->tensors[i].name, ck->tensors[i - 1].name) == 0)
                status = bad_input(ck->tensors[i].file, "tensor %s is stored twice (also in %s)", ck->tensors[i].name,
                                   ck->tensors[i - 1].file);
        /* the index is the authority: each tensor it names must be in the file it names */
        for (const JsonValue *m = map->first; m && status == GNA_OK; m = m->next) {
            Tensor key = {.name = m->key};
            const Tensor *t = bsearch(&key, ck->tensors, (size_t)ck->n_tensors, sizeof(Tensor), compare_tensor_names);
            const char *file = t ? strrchr(t->file, '/') + 1 : NULL;
            if (!t || strcmp(file, m->string) != 0)
                status = bad_input(index_path, "weight_map puts %s in %s, which does not hold it", m->key, m->string);
        }
        free_json(&index);
        free(index_path);
        TRY(status);
    }
    qsort(ck->tensors, (size_t)ck->n_tensors, sizeof(Tensor), compare_tensor_names);
    for (int i = 1; i < ck->n_tensors; i++)
        if (strcmp(ck->tensors[i].name, ck->tensors[i - 1].name) == 0)
            return bad_input(ck->tensors[i].file, "tensor %s is stored twice (also in %s)", ck->tensors[i].name,
                             ck->tensors[i - 1].file);
    return GNA_OK;
}

static const Tensor *find_tensor(const Checkpoint *ck, const char *name) {
    Tensor key = {.name = name};
    return bsearch(&key, ck->tensors, (size_t)ck->n_tensors, sizeof(Tensor), compare_tensor_names);
}

/* ---------------------------------------------------------------------------------------------
 * II.7 Models: config.json into Config, the safetensors' tensors into the structs of Part I (I.2)
 */
/* config.json values, each checked, with errors that name the file and the key */
typedef struct {
    const char *path;
    const JsonValue *root;
} ConfigFile;

/* a JSON number, or transformers 5.x's spelling of a non-finite float: {"__float__": "Infinity"} */
static int json_to_double(const JsonValue *v, double *out) {
    if (v->type == JSON_NUMBER) { *out = v->number; return 1; }
    const JsonValue *f = json_get(v, "__float__");
    if (f && f->type == JSON_STRING) {
        if (strcmp(f->string, "Infinity") == 0) { *out = INFINITY; return 1; }
        if (strcmp(f->string, "-Infinity") == 0) { *out = -INFINITY; return 1; }
        if (strcmp(f->string, "NaN") == 0) { *out = NAN; return 1; }
    }
    return 0;
}

/* object member `key` as a number; absent or null gives `fallback` (NAN: the key is required) */
static int config_number(const ConfigFile *c, const JsonValue *object, const char *key, double fallback, double *out) {
    const JsonValue *v = json_get(object, key);
    if (!v || v->type == JSON_NULL) {
        if (isnan(fallback)) return bad_input(c->path, "\"%s\" is missing", key);
        *out = fallback;
        return GNA_OK;
    }
    if (!json_to_double(v, out)) return bad_input(c->path, "\"%s\" must be a number", key);
    return GNA_OK;
}

/* Sizes in config.json are at most CONFIG_LIMIT, and so are the widths made of them (config_widths),
 * 64 times what the largest models have (a vocab of 256K, MLP width 53K): with it no product of a few
 * sizes wraps, on 32-bit hosts either. */
#define CONFIG_LIMIT ((size_t)1 << 24)

/* a positive integer, at most CONFIG_LIMIT; fallback 0 means required */
static int config_int(const ConfigFile *c, const JsonValue *object, const char *key, size_t fallback, size_t *out) {
    double v;
    TRY(config_number(c, object, key, fallback > 0 ? (double)fallback : NAN, &v));
    if (!(v >= 1 && v <= (double)CONFIG_LIMIT && v == floor(v)))
        return bad_input(c->path, "\"%s\" must be a positive integer up to %zu", key, CONFIG_LIMIT);
    *out = (size_t)v;
    return GNA_OK;
}

static int config_bool(const ConfigFile *c, const JsonValue *object, const char *key, int fallback, int *out) {
    const JsonValue *v = json_get(object, key);
    if (!v || v->type == JSON_NULL) { *out = fallback; return GNA_OK; }
    if (v->type != JSON_TRUE && v->type != JSON_FALSE) return bad_input(c->path, "\"%s\" must be true or false", key);
    *out = v->type == JSON_TRUE;
    return GNA_OK;
}

static int config_string_is(const ConfigFile *c, const char *key, const char *expected) {
    const JsonValue *v = json_get(c->root, key);
    if (v && v->type != JSON_NULL && (v->type != JSON_STRING || strcmp(v->string, expected) != 0))
        return bad_input(c->path, "\"%s\" must be \"%s\" for this model type", key, expected);
    return GNA_OK;
}

/* rope_theta and rope_scaling, in either layout:
 *   transformers 5.x: "rope_parameters": {"rope_type", "rope_theta", "factor", ...}
 *   transformers 4.x: top-level "rope_theta", "rope_scaling": null or {"rope_type" or "type", ...} */
static int read_rope_config(const ConfigFile *c, Config *cfg) {
    const JsonValue *params = json_get(c->root, "rope_parameters");
    if (params && params->type == JSON_NULL) params = NULL;
    const JsonValue *scaling = params ? params : json_get(c->root, "rope_scaling");
    if (scaling && scaling->type != JSON_NULL && scaling->type != JSON_OBJECT)
        return bad_input(c->path, "\"%s\" must be an object or null", params ? "rope_parameters" : "rope_scaling");
    if (scaling && scaling->type == JSON_NULL) scaling = NULL;
    double theta;
    TRY(config_number(c, c->root, "rope_theta", 10000.0, &theta));
    if (params) TRY(config_number(c, params, "rope_theta", theta, &theta));
    if (!(theta > 1)) return bad_input(c->path, "\"rope_theta\" must be greater than 1");
    cfg->rope_theta = (float)theta;
    const JsonValue *type = json_get(scaling, "rope_type");
    if (!type) type = json_get(scaling, "type");
    const char *kind = type && type->type == JSON_STRING ? type->string : "default";
    if (type && type->type != JSON_STRING) return bad_input(c->path, "rope type must be a string");
    if (strcmp(kind, "llama3") == 0) {
        double factor, low, high;
        TRY(config_number(c, scaling, "factor", NAN, &factor));
        TRY(config_number(c, scaling, "low_freq_factor", NAN, &low));
        TRY(config_number(c, scaling, "high_freq_factor", NAN, &high));
        TRY(config_int(c, scaling, "original_max_position_embeddings", 0, &cfg->rope_original_max_positions));
        if (!(factor > 0) || !(low > 0) || !(high > low))
            return bad_input(c->path, "llama3 rope needs factor > 0 and high_freq_factor > low_freq_factor > 0");
        cfg->rope_llama3 = 1;
        cfg->rope_factor = (float)factor;
        cfg->rope_low_freq_factor = (float)low;
        cfg->rope_high_freq_factor = (float)high;
    } else if (strcmp(kind, "default") != 0) {
        return bad_input(c->path, "rope type \"%s\" is not supported (gna reads \"default\" and \"llama3\")", kind);
    }
    double partial = 1.0;
    if (params) TRY(config_number(c, params, "partial_rotary_factor", 1.0, &partial));
    if (partial != 1.0) return bad_input(c->path, "partial_rotary_factor %g is not supported", partial);
    return GNA_OK;
}

/* the inner width expand x D of an SSM: a positive number whose product with D is a width */
static int config_expand(const ConfigFile *c, const char *key, double expand, size_t hidden_size) {
    if (!(expand > 0 && expand * (double)hidden_size >= 1 && expand * (double)hidden_size <= (double)CONFIG_LIMIT))
        return bad_input(c->path, "\"%s\" x hidden_size must be a width from 1 to %zu", key, CONFIG_LIMIT);
    return GNA_OK;
}

/* the widths the forward pass makes of the sizes, each at most CONFIG_LIMIT */
static int config_widths(const ConfigFile *c, const Config *cfg) {
    const struct { const char *what; size_t width; } widths[] = {
        {"attention heads x head_dim", size_product(cfg->n_heads, cfg->head_dim)},
        {"key-value heads x head_dim", size_product(cfg->n_kv_heads, cfg->head_dim)},
        {"2 x intermediate_size", size_product(2, cfg->intermediate_size)},
        {"SSM heads x head_dim", size_product(cfg->ssm_heads, cfg->ssm_head_dim)},
        {"2 x the SSM's inner width + 2 x groups x state", size_product(2, cfg->ssm_inner) + size_product(size_product(2, cfg->n_groups), cfg->ssm_state)},
        {"the SSM's state (inner width x state)", size_product(cfg->ssm_inner, cfg->ssm_state)},
    };
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
        if (widths[i].width > CONFIG_LIMIT)
            return bad_input(c->path, "%s is past %zu: no model is this wide", widths[i].what, CONFIG_LIMIT);
    return GNA_OK;
}

/* time_step_limit [min, max], the clamp of dt; [0, inf) when absent (the kernels' default dt_limit) */
static int read_time_step_limit(const ConfigFile *c, Config *cfg) {
    double low = 0, high = INFINITY;
    const JsonValue *limit = json_get(c->root, "time_step_limit");
    if (limit && limit->type != JSON_NULL &&
        (limit->type != JSON_ARRAY || limit->length != 2 || !json_to_double(limit->first, &low) ||
         !json_to_double(limit->first->next, &high) || !(low <= high)))
        return bad_input(c->path, "\"time_step_limit\" must be [min, max] with min <= max");
    cfg->dt_limit_min = (float)low;
    cfg->dt_limit_max = (float)high;
    return GNA_OK;
}

/* transformers LlamaConfig */
static int read_llama_config(const ConfigFile *c, Config *cfg, double *eps) {
    TRY(config_number(c, c->root, "rms_norm_eps", 1e-6, eps));
    TRY(config_int(c, c->root, "intermediate_size", 0, &cfg->intermediate_size));
    TRY(config_int(c, c->root, "num_attention_heads", 0, &cfg->n_heads));
    TRY(config_int(c, c->root, "num_key_value_heads", cfg->n_heads, &cfg->n_kv_heads));
    if (cfg->hidden_size % cfg->n_heads != 0 && !json_get(c->root, "head_dim"))
        return bad_input(c->path, "hidden_size %zu is not a multiple of num_attention_heads %zu and head_dim is absent",
                         cfg->hidden_size, cfg->n_heads);
    TRY(config_int(c, c->root, "head_dim", cfg->hidden_size / cfg->n_heads, &cfg->head_dim));
    if (cfg->head_dim % 2) return bad_input(c->path, "head_dim %zu must be even for rotary embeddings", cfg->head_dim);
    if (cfg->n_heads % cfg->n_kv_heads)
        return bad_input(c->path, "num_attention_heads %zu is not a multiple of num_key_value_heads %zu", cfg->n_heads,
                         cfg->n_kv_heads);
    TRY(config_bool(c, c->root, "tie_word_embeddings", 0, &cfg->tie_embeddings));
    TRY(config_bool(c, c->root, "attention_bias", 0, &cfg->attention_bias));
    TRY(config_bool(c, c->root, "mlp_bias", 0, &cfg->mlp_bias));
    TRY(read_rope_config(c, cfg));
    cfg->use_rope = 1;
    cfg->attention_scale = (float)pow((double)cfg->head_dim, -0.5); /* LlamaAttention.scaling = head_dim**-0.5 */
    return GNA_OK;
}

/* transformers MambaConfig / FalconMambaConfig. intermediate_size wins over expand: Falcon-Mamba-7B's
 * config says expand 16 beside intermediate_size 8192 = 2 x 4096, and transformers uses the latter. */
static int read_mamba1_config(const ConfigFile *c, Config *cfg, double *eps) {
    double expand;
    TRY(config_number(c, c->root, "layer_norm_epsilon", 1e-5, eps));
    TRY(config_int(c, c->root, "state_size", 16, &cfg->ssm_state));
    TRY(config_int(c, c->root, "conv_kernel", 4, &cfg->conv_kernel));
    TRY(config_number(c, c->root, "expand", 2, &expand));
    TRY(config_expand(c, "expand", expand, cfg->hidden_size));
    TRY(config_int(c, c->root, "intermediate_size", (size_t)(expand * (double)cfg->hidden_size), &cfg->ssm_inner));
    const JsonValue *rank = json_get(c->root, "time_step_rank");
    if (rank && rank->type == JSON_STRING && strcmp(rank->string, "auto") == 0)
        cfg->dt_rank = (cfg->hidden_size + 15) / 16; /* "auto": ceil(hidden_size / 16) */
    else
        TRY(config_int(c, c->root, "time_step_rank", (cfg->hidden_size + 15) / 16, &cfg->dt_rank));
    TRY(config_bool(c, c->root, "use_bias", 0, &cfg->ssm_bias));
    TRY(config_bool(c, c->root, "use_conv_bias", 1, &cfg->conv_bias));
    TRY(config_bool(c, c->root, "tie_word_embeddings", 1, &cfg->tie_embeddings));
    double mixer_eps;
    TRY(config_number(c, c->root, "mixer_rms_eps", 1e-6, &mixer_eps));
    cfg->mixer_rms_eps = (float)mixer_eps;
    return GNA_OK;
}

/* transformers Mamba2Config */
static int read_mamba2_config(const ConfigFile *c, Config *cfg, double *eps) {
    double expand;
    int rms_norm;
    TRY(config_number(c, c->root, "layer_norm_epsilon", 1e-5, eps));
    TRY(config_int(c, c->root, "num_heads", 0, &cfg->ssm_heads));
    TRY(config_int(c, c->root, "head_dim", 64, &cfg->ssm_head_dim));
    TRY(config_int(c, c->root, "state_size", 128, &cfg->ssm_state));
    TRY(config_int(c, c->root, "n_groups", 1, &cfg->n_groups));
    TRY(config_int(c, c->root, "conv_kernel", 4, &cfg->conv_kernel));
    TRY(config_number(c, c->root, "expand", 2, &expand));
    TRY(config_expand(c, "expand", expand, cfg->hidden_size));
    TRY(config_bool(c, c->root, "use_bias", 0, &cfg->ssm_bias));
    TRY(config_bool(c, c->root, "use_conv_bias", 1, &cfg->conv_bias));
    TRY(config_bool(c, c->root, "tie_word_embeddings", 0, &cfg->tie_embeddings));
    TRY(config_bool(c, c->root, "rms_norm", 1, &rms_norm));
    if (!rms_norm) return bad_input(c->path, "\"rms_norm\": false is not supported (no checkpoint uses it)");
    cfg->ssm_inner = (size_t)(expand * (double)cfg->hidden_size); /* HF: int(config.expand * hidden_size) */
    if (cfg->ssm_inner != size_product(cfg->ssm_heads, cfg->ssm_head_dim))
        return bad_input(c->path, "expand x hidden_size = %zu but num_heads x head_dim = %zu", cfg->ssm_inner,
                         size_product(cfg->ssm_heads, cfg->ssm_head_dim));
    if (cfg->ssm_heads % cfg->n_groups)
        return bad_input(c->path, "num_heads %zu is not a multiple of n_groups %zu", cfg->ssm_heads, cfg->n_groups);
    TRY(read_time_step_limit(c, cfg));
    cfg->gated_norm_eps = (float)*eps;
    return GNA_OK;
}

/* transformers Zamba2Config: Mamba-2 layers; "hybrid" layers also run a shared transformer block */
static int read_zamba2_config(const ConfigFile *c, Config *cfg, double *eps) {
    double expand;
    double time_step_min;
    TRY(config_number(c, c->root, "rms_norm_eps", 1e-5, eps));
    TRY(config_int(c, c->root, "mamba_d_state", 64, &cfg->ssm_state));
    TRY(config_int(c, c->root, "mamba_d_conv", 4, &cfg->conv_kernel));
    TRY(config_number(c, c->root, "mamba_expand", 2, &expand));
    TRY(config_expand(c, "mamba_expand", expand, cfg->hidden_size));
    TRY(config_int(c, c->root, "mamba_ngroups", 1, &cfg->n_groups));
    TRY(config_int(c, c->root, "n_mamba_heads", 8, &cfg->ssm_heads));
    TRY(config_number(c, c->root, "time_step_min", 0.001, &time_step_min));
    TRY(read_time_step_limit(c, cfg));
    TRY(config_bool(c, c->root, "add_bias_linear", 0, &cfg->ssm_bias));
    TRY(config_bool(c, c->root, "tie_word_embeddings", 1, &cfg->tie_embeddings));
    TRY(config_int(c, c->root, "intermediate_size", 4 * cfg->hidden_size, &cfg->intermediate_size));
    TRY(config_int(c, c->root, "num_attention_heads", 32, &cfg->n_heads));
    TRY(config_int(c, c->root, "num_key_value_heads", cfg->n_heads, &cfg->n_kv_heads));
    TRY(config_int(c, c->root, "num_mem_blocks", 1, &cfg->n_shared_blocks));
    TRY(config_int(c, c->root, "adapter_rank", 128, &cfg->adapter_rank));
    TRY(config_bool(c, c->root, "use_shared_attention_adapter", 0, &cfg->attention_adapters));
    TRY(config_bool(c, c->root, "use_mem_rope", 0, &cfg->use_rope));
    TRY(read_rope_config(c, cfg));
    if (cfg->rope_llama3) return bad_input(c->path, "zamba2 with llama3 rope scaling is not supported");
    cfg->ssm_inner = (size_t)(expand * (double)cfg->hidden_size);
    cfg->ssm_head_dim = cfg->ssm_inner / cfg->ssm_heads; /* Zamba2Config: mamba_headdim */
    size_t headdim;
    TRY(config_int(c, c->root, "mamba_headdim", cfg->ssm_head_dim, &headdim));
    if (headdim != cfg->ssm_head_dim)
        return bad_input(c->path, "mamba_headdim %zu is not mamba_expand x hidden_size / n_mamba_heads = %zu", headdim, cfg->ssm_head_dim);
    if (cfg->ssm_head_dim * cfg->ssm_heads != cfg->ssm_inner || cfg->ssm_heads % cfg->n_groups)
        return bad_input(c->path, "n_mamba_heads %zu must divide mamba_expand x hidden_size = %zu and be a multiple of mamba_ngroups %zu",
                         cfg->ssm_heads, cfg->ssm_inner, cfg->n_groups);
    /* the attention reads concat(h, embeddings): width 2D, head_dim 2D / heads, scale (head_dim / 2)^-0.5 */
    if ((2 * cfg->hidden_size) % cfg->n_heads || cfg->n_heads % cfg->n_kv_heads)
        return bad_input(c->path, "num_attention_heads %zu must divide 2 x hidden_size and be a multiple of num_key_value_heads %zu",
                         cfg->n_heads, cfg->n_kv_heads);
    cfg->head_dim = 2 * cfg->hidden_size / cfg->n_heads;
    cfg->attention_scale = (float)pow((double)cfg->head_dim / 2.0, -0.5); /* Zamba2Attention.scaling */
    cfg->mlp_gelu = 1;
    cfg->conv_bias = 1;              /* Zamba2MambaMixer: the conv always has a bias */
    cfg->gated_norm_eps = 1e-5f;     /* Zamba2RMSNormGated(..., eps=1e-5) */
    cfg->time_step_min = (float)time_step_min; /* torch_forward's clamp (--dt-min-clamp); see ssd_dt */
    /* which layers are hybrid: layers_block_type, "hybrid" or "mamba" / "linear_attention" (transformers 5 renames) */
    const JsonValue *types = json_get(c->root, "layers_block_type");
    if (!types || types->type != JSON_ARRAY || types->length != cfg->n_layers)
        return bad_input(c->path, "\"layers_block_type\" must list num_hidden_layers = %zu layer types", cfg->n_layers);
    cfg->shared_visit = checked_malloc(sizeof(long) * cfg->n_layers);
    size_t l = 0;
    long visits = 0;
    for (const JsonValue *t = types->first; t; t = t->next, l++) {
        if (t->type != JSON_STRING) return bad_input(c->path, "\"layers_block_type\" must hold strings");
        if (strcmp(t->string, "hybrid") == 0) cfg->shared_visit[l] = visits++;
        else if (strcmp(t->string, "mamba") == 0 || strcmp(t->string, "linear_attention") == 0) cfg->shared_visit[l] = -1;
        else return bad_input(c->path, "layer type \"%s\" is not one gna knows (hybrid, mamba, linear_attention)", t->string);
    }
    return GNA_OK;
}

/* cartesia LlambaConfig: Llama blocks whose attention is a DiscreteMamba2 mixer */
static int read_llamba_config(const ConfigFile *c, Config *cfg, double *eps) {
    size_t multiple, expand_v, n_v;
    double eps_final;
    const JsonValue *ssm = json_get(c->root, "ssm_cfg"), *mlp = json_get(c->root, "mlp_cfg");
    if (!ssm || ssm->type != JSON_OBJECT || !mlp || mlp->type != JSON_OBJECT)
        return bad_input(c->path, "\"ssm_cfg\" and \"mlp_cfg\" must be objects");
    TRY(config_int(c, c->root, "pad_vocab_size_multiple", 8, &multiple));
    cfg->vocab_size = (cfg->vocab_size + multiple - 1) / multiple * multiple; /* LlambaLMHeadModel pads it */
    TRY(config_bool(c, c->root, "tie_embeddings", 0, &cfg->tie_embeddings));
    TRY(config_bool(c, c->root, "lm_head_bias", 0, &cfg->lm_head_bias));
    TRY(config_number(c, c->root, "norm_epsilon", 1e-5, &eps_final));
    *eps = 1e-5; /* Block's input_layernorm and post_attention_layernorm: eps=1e-5 in cartesia's code */
    cfg->final_norm_eps = (float)eps_final;
    TRY(config_int(c, mlp, "intermediate_size", 14336, &cfg->intermediate_size));
    TRY(config_bool(c, mlp, "bias", 0, &cfg->mlp_bias));
    const JsonValue *act = json_get(mlp, "act_fn");
    if (act && (act->type != JSON_STRING || strcmp(act->string, "silu") != 0))
        return bad_input(c->path, "mlp_cfg.act_fn must be \"silu\"");
    TRY(config_int(c, ssm, "d_state", 64, &cfg->ssm_state));
    TRY(config_int(c, ssm, "n_v_heads", 32, &n_v));
    TRY(config_int(c, ssm, "n_qk_heads", 32, &cfg->n_groups));
    TRY(config_int(c, ssm, "expand", 1, &expand_v));
    TRY(config_int(c, ssm, "d_conv", 4, &cfg->conv_kernel));
    TRY(config_bool(c, ssm, "bias", 0, &cfg->ssm_bias));
    TRY(config_bool(c, ssm, "conv_bias", 1, &cfg->conv_bias));
    const JsonValue *activation = json_get(ssm, "activation");
    const char *kind = activation && activation->type == JSON_STRING ? activation->string : "identity";
    if (strcmp(kind, "identity") == 0) cfg->conv_silu = 0;
    else if (strcmp(kind, "silu") != 0 && strcmp(kind, "swish") != 0)
        return bad_input(c->path, "ssm_cfg.activation \"%s\" is not supported (identity, silu)", kind);
    cfg->ssm_heads = n_v;
    TRY(config_expand(c, "ssm_cfg.expand", (double)expand_v, cfg->hidden_size));
    cfg->ssm_inner = expand_v * cfg->hidden_size;
    cfg->ssm_head_dim = cfg->ssm_inner / n_v;
    if (cfg->ssm_head_dim * n_v != cfg->ssm_inner || n_v % cfg->n_groups)
        return bad_input(c->path, "ssm_cfg: n_v_heads %zu must divide expand x d_model = %zu and be a multiple of n_qk_heads %zu",
                         n_v, cfg->ssm_inner, cfg->n_groups);
    return GNA_OK;
}

static int read_config(const char *path, Config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    JsonDocument doc;
    TRY(load_json(&doc, path));
    ConfigFile c = {path, doc.root};
    int status = GNA_OK;
#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((status = (call)) != GNA_OK) goto done;                                                \
    } while (0)
    if (doc.root->type != JSON_OBJECT) CHECK(bad_input(path, "not a JSON object"));
    const JsonValue *type = json_get(doc.root, "model_type");
    if (!type || type->type != JSON_STRING) CHECK(bad_input(path, "\"model_type\" is missing"));
    int known = 0;
    for (int f = 0; f < (int)(sizeof family_names / sizeof *family_names); f++)
        if (strcmp(type->string, family_names[f]) == 0) { cfg->family = (Family)f; known = 1; }
    if (!known)
        CHECK(bad_input(path, "model_type \"%s\" is not supported (gna reads llama, mamba, falcon_mamba, mamba2, zamba2, llamba)",
                        type->string));

    /* Keys that would change the computation and that gna does not implement: refused by name, so that
       a config is read whole or not at all. Zyphra's own layout of Zamba2 (their original code's names) is
       told apart from transformers' Zamba2Config, which gna reads, by its keys. */
    static const struct {
        Family family;
        const char *key, *harmless, *why; /* harmless: the one value that changes nothing (NULL: none) */
    } unread[] = {
        {FAMILY_ZAMBA2, "ffn_hidden_size", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "state_size", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "lora_rank", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "expansion_factor", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "conv_dimension", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "use_shared_block_lora", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "use_shared_attention_lora", NULL, "Zyphra's original layout"},
        {FAMILY_ZAMBA2, "use_long_context", "false", "its long-context RoPE scaling is not implemented"},
    };
    for (size_t i = 0; i < sizeof unread / sizeof *unread; i++) {
        const JsonValue *v = unread[i].family == cfg->family ? json_get(doc.root, unread[i].key) : NULL;
        int harmless = v && unread[i].harmless && ((v->type == JSON_FALSE && strcmp(unread[i].harmless, "false") == 0) ||
                                                   v->type == JSON_NULL);
        if (v && !harmless)
            CHECK(bad_input(path, "\"%s\": %s; gna reads transformers' config.json as the hub has it, and refuses what it does not "
                                  "compute", unread[i].key, unread[i].why));
    }

    int is_llamba = cfg->family == FAMILY_LLAMBA; /* cartesia's LlambaConfig has names of its own */
    CHECK(config_int(&c, doc.root, "vocab_size", 0, &cfg->vocab_size));
    CHECK(config_int(&c, doc.root, is_llamba ? "d_model" : "hidden_size", 0, &cfg->hidden_size));
    CHECK(config_int(&c, doc.root, is_llamba ? "n_layer" : "num_hidden_layers", 0, &cfg->n_layers));
    CHECK(config_string_is(&c, "hidden_act", cfg->family == FAMILY_ZAMBA2 ? "gelu" : "silu"));
    cfg->conv_silu = 1;
    const JsonValue *eos = json_get(doc.root, "eos_token_id");
    for (const JsonValue *e = eos && eos->type == JSON_ARRAY ? eos->first : eos; e && cfg->n_eos < 8;
         e = eos->type == JSON_ARRAY ? e->next : NULL)
        if (e->type == JSON_NUMBER && e->number >= 0 && e->number < 1e9) cfg->eos_token_ids[cfg->n_eos++] = (int)e->number;
    static int (*const read_family[])(const ConfigFile *, Config *, double *) = {
        [FAMILY_LLAMA] = read_llama_config, [FAMILY_MAMBA] = read_mamba1_config, [FAMILY_FALCON_MAMBA] = read_mamba1_config,
        [FAMILY_MAMBA2] = read_mamba2_config, [FAMILY_ZAMBA2] = read_zamba2_config, [FAMILY_LLAMBA] = read_llamba_config};
    double eps = 0; /* every family sets it */
    CHECK(read_family[cfg->family](&c, cfg, &eps));
    CHECK(config_widths(&c, cfg));
    if (!(eps > 0 && eps < 1)) CHECK(bad_input(path, "the RMSNorm epsilon must be in (0, 1)"));
    cfg->norm_eps = (float)eps;
    if (!is_llamba) cfg->final_norm_eps = cfg->norm_eps;
done:
#undef CHECK
    free_json(&doc);
    return status;
}

/* where a missing tensor was looked for: model.safetensors, or the folder of shards */
static const char *weights_source(const Model *m) { return m->checkpoint->n_files == 1 ? m->checkpoint->files[0].path : m->dir; }

/* The tensor named by `format`, which must have the shape [d0] / [d0, d1] / [d0, d1, d2] that the
 * config implies (trailing zero dims are absent). A missing optional tensor leaves *out absent. */
static int load_weight(const Model *m, Weight *out, int optional, size_t d0, size_t d1, size_t d2, const char *format, ...) {
    char name[256];
    va_list args;
    va_start(args, format);
    vsnprintf(name, sizeof name, format, args);
    va_end(args);
    *out = no_weight;
    const Tensor *t = find_tensor(m->checkpoint, name);
    if (!t) {
        if (optional) return GNA_OK;
        return bad_input(weights_source(m), "tensor %s is missing (config.json says model_type %s)", name, family_names[m->config.family]);
    }
    size_t want[3] = {d0, d1, d2};
    int ndim = d2 ? 3 : d1 ? 2 : 1, same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == (int64_t)want[i];
    if (!same) {
        char have[160] = "", need[64] = "";
        for (int i = 0; i < t->ndim && strlen(have) < 120; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        for (int i = 0; i < ndim; i++) snprintf(need + strlen(need), sizeof need - strlen(need), "%s%zu", i ? ", " : "", want[i]);
        return bad_input(t->file, "tensor %s has shape [%s] but config.json implies [%s]", name, have, need);
    }
    if (t->dtype == DTYPE_UNSUPPORTED)
        return bad_input(t->file, "tensor %s has dtype %s; gna computes with F32, BF16 and F16", name, t->dtype_name);
    *out = (Weight){t->data, t->dtype, ndim == 1 ? 1 : d0, ndim == 1 ? d0 : ndim == 2 ? d1 : d2};
    return GNA_OK;
}

/* the first of several names a tensor goes by in different families' checkpoints */
static int load_weight_any(const Model *m, Weight *out, size_t d0, size_t d1, const char *const *names) {
    for (const char *const *n = names; *n; n++)
        if (find_tensor(m->checkpoint, *n)) return load_weight(m, out, 0, d0, d1, 0, "%s", *n);
    return bad_input(weights_source(m), "tensor %s is missing (config.json says model_type %s)", names[0], family_names[m->config.family]);
}

/* Weights are named "<prefix>.<module>.weight"; `prefix` holds the layer, e.g. "model.layers.3". */
static int load_attention(const Model *m, const char *prefix, size_t input_width, Attention *a) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim;
    memset(a, 0, sizeof *a);
    TRY(load_weight(m, &a->q_proj, 0, q, input_width, 0, "%s.self_attn.q_proj.weight", prefix));
    TRY(load_weight(m, &a->k_proj, 0, kv, input_width, 0, "%s.self_attn.k_proj.weight", prefix));
    TRY(load_weight(m, &a->v_proj, 0, kv, input_width, 0, "%s.self_attn.v_proj.weight", prefix));
    TRY(load_weight(m, &a->o_proj, 0, D, q, 0, "%s.self_attn.o_proj.weight", prefix));
    if (c->attention_bias) { /* biases are required exactly when the config says so */
        TRY(load_weight(m, &a->q_bias, 0, q, 0, 0, "%s.self_attn.q_proj.bias", prefix));
        TRY(load_weight(m, &a->k_bias, 0, kv, 0, 0, "%s.self_attn.k_proj.bias", prefix));
        TRY(load_weight(m, &a->v_bias, 0, kv, 0, 0, "%s.self_attn.v_proj.bias", prefix));
        TRY(load_weight(m, &a->o_bias, 0, D, 0, 0, "%s.self_attn.o_proj.bias", prefix));
    }
    return GNA_OK;
}

/* LlamaMLP (llama, llamba): gate_proj, up_proj, down_proj under `prefix`.mlp */
static int load_mlp(const Model *m, const char *prefix, Mlp *mlp) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, I = c->intermediate_size;
    TRY(load_weight(m, &mlp->gate_proj, 0, I, D, 0, "%s.mlp.gate_proj.weight", prefix));
    TRY(load_weight(m, &mlp->up_proj, 0, I, D, 0, "%s.mlp.up_proj.weight", prefix));
    TRY(load_weight(m, &mlp->down_proj, 0, D, I, 0, "%s.mlp.down_proj.weight", prefix));
    if (c->mlp_bias) {
        TRY(load_weight(m, &mlp->gate_bias, 0, I, 0, 0, "%s.mlp.gate_proj.bias", prefix));
        TRY(load_weight(m, &mlp->up_bias, 0, I, 0, 0, "%s.mlp.up_proj.bias", prefix));
        TRY(load_weight(m, &mlp->down_bias, 0, D, 0, 0, "%s.mlp.down_proj.bias", prefix));
    }
    return GNA_OK;
}

static int load_llama_layer(const Model *m, size_t l, Layer *layer) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "model.layers.%zu", l);
    layer->kind = MIXER_ATTENTION;
    TRY(load_weight(m, &layer->norm, 0, m->config.hidden_size, 0, 0, "%s.input_layernorm.weight", prefix));
    TRY(load_attention(m, prefix, m->config.hidden_size, &layer->attention));
    TRY(load_weight(m, &layer->mlp_norm, 0, m->config.hidden_size, 0, 0, "%s.post_attention_layernorm.weight", prefix));
    return load_mlp(m, prefix, &layer->mlp);
}

static int load_mamba1_layer(const Model *m, size_t l, Layer *layer) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, di = c->ssm_inner, N = c->ssm_state, R = c->dt_rank, K = c->conv_kernel;
    Mamba1 *x = &layer->mamba1;
    char p[64];
    snprintf(p, sizeof p, "backbone.layers.%zu", l);
    layer->kind = MIXER_MAMBA1;
    TRY(load_weight(m, &layer->norm, 0, D, 0, 0, "%s.norm.weight", p));
    TRY(load_weight(m, &x->in_proj, 0, 2 * di, D, 0, "%s.mixer.in_proj.weight", p));
    TRY(load_weight(m, &x->conv_weight, 0, di, 1, K, "%s.mixer.conv1d.weight", p));
    TRY(load_weight(m, &x->x_proj, 0, R + 2 * N, di, 0, "%s.mixer.x_proj.weight", p));
    TRY(load_weight(m, &x->dt_proj, 0, di, R, 0, "%s.mixer.dt_proj.weight", p));
    TRY(load_weight(m, &x->dt_bias, 0, di, 0, 0, "%s.mixer.dt_proj.bias", p));
    TRY(load_weight(m, &x->A_log, 0, di, N, 0, "%s.mixer.A_log", p));
    x->A = mamba1_A(x->A_log);
    TRY(load_weight(m, &x->D, 0, di, 0, 0, "%s.mixer.D", p));
    TRY(load_weight(m, &x->out_proj, 0, D, di, 0, "%s.mixer.out_proj.weight", p));
    if (c->conv_bias) TRY(load_weight(m, &x->conv_bias, 0, di, 0, 0, "%s.mixer.conv1d.bias", p));
    if (c->ssm_bias) {
        TRY(load_weight(m, &x->in_bias, 0, 2 * di, 0, 0, "%s.mixer.in_proj.bias", p));
        TRY(load_weight(m, &x->out_bias, 0, D, 0, 0, "%s.mixer.out_proj.bias", p));
    }
    return GNA_OK;
}

/* An SSD mixer under `mixer` ("backbone.layers.3.mixer"; zamba2: "model.layers.3.mamba"): Mamba2Mixer's
 * tensors, or with `llamba` DiscreteMamba2's */
static int load_ssd(const Model *m, const char *mixer, int llamba, Ssd *x) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, di = c->ssm_inner, H = c->ssm_heads, K = c->conv_kernel, conv_dim = di + 2 * c->n_groups * c->ssm_state;
    TRY(load_weight(m, &x->in_proj, 0, di + conv_dim + H, D, 0, "%s.in_proj.weight", mixer));
    TRY(load_weight(m, &x->conv_weight, 0, conv_dim, 1, K, "%s.conv1d.weight", mixer));
    if (!llamba) TRY(load_weight(m, &x->dt_bias, 0, H, 0, 0, "%s.dt_bias", mixer));
    if (!llamba) TRY(load_weight(m, &x->A_log, 0, H, 0, 0, "%s.A_log", mixer));
    TRY(load_weight(m, &x->D, 0, H, 0, 0, "%s.D", mixer));
    if (!llamba) TRY(load_weight(m, &x->gated_norm, 0, di, 0, 0, "%s.norm.weight", mixer));
    TRY(load_weight(m, &x->out_proj, 0, D, di, 0, "%s.out_proj.weight", mixer));
    if (c->conv_bias) TRY(load_weight(m, &x->conv_bias, 0, conv_dim, 0, 0, "%s.conv1d.bias", mixer));
    if (c->ssm_bias) {
        TRY(load_weight(m, &x->in_bias, 0, di + conv_dim + H, 0, 0, "%s.in_proj.bias", mixer));
        TRY(load_weight(m, &x->out_bias, 0, D, 0, 0, "%s.out_proj.bias", mixer));
    } else if (llamba) { /* the mixer has a z_bias exactly when it has no in/out biases */
        TRY(load_weight(m, &x->z_bias, 0, di, 0, 0, "%s.z_bias", mixer));
    }
    return GNA_OK;
}

static int load_mamba2_layer(const Model *m, size_t l, Layer *layer) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "backbone.layers.%zu", l);
    layer->kind = MIXER_MAMBA2;
    TRY(load_weight(m, &layer->norm, 0, m->config.hidden_size, 0, 0, "%s.norm.weight", prefix));
    strcat(prefix, ".mixer");
    return load_ssd(m, prefix, 0, &layer->ssd);
}

/* A rank-r adapter: down [r, in], up [out, r] at "<name>.0.weight" and "<name>.1.weight" */
static int load_adapter(const Model *m, const char *name, size_t in, size_t out, Weight adapter[2]) {
    TRY(load_weight(m, &adapter[0], 0, m->config.adapter_rank, in, 0, "%s.0.weight", name));
    return load_weight(m, &adapter[1], 0, out, m->config.adapter_rank, 0, "%s.1.weight", name);
}

/* Zamba2's shared blocks. transformers stores each block once, under the first hybrid layer that
 * visits it, with every visit's adapters numbered by global visit index; any hybrid layer of the
 * block may hold them, so each is looked in. */
static int zamba2_block_home(const Model *m, size_t block, const char *tensor, size_t *home) {
    const Config *c = &m->config;
    for (size_t l = 0; l < c->n_layers; l++) {
        char name[160];
        snprintf(name, sizeof name, "model.layers.%zu.shared_transformer.%s", l, tensor);
        if (c->shared_visit[l] >= 0 && (size_t)c->shared_visit[l] % c->n_shared_blocks == block && find_tensor(m->checkpoint, name)) {
            *home = l;
            return GNA_OK;
        }
    }
    return bad_input(weights_source(m), "no hybrid layer of shared block %zu holds shared_transformer.%s", block, tensor);
}

static int load_zamba2_blocks(Model *m) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, I = c->intermediate_size;
    m->shared_blocks = checked_calloc(c->n_shared_blocks, sizeof(SharedBlock));
    for (size_t b = 0; b < c->n_shared_blocks; b++) {
        size_t home;
        int visited = 0;
        for (size_t l = 0; l < c->n_layers; l++) visited |= c->shared_visit[l] >= 0 && (size_t)c->shared_visit[l] % c->n_shared_blocks == b;
        if (!visited) continue; /* a block no layer visits is never run */
        TRY(zamba2_block_home(m, b, "input_layernorm.weight", &home));
        char prefix[96];
        snprintf(prefix, sizeof prefix, "model.layers.%zu.shared_transformer", home);
        SharedBlock *block = &m->shared_blocks[b];
        TRY(load_weight(m, &block->input_norm, 0, 2 * D, 0, 0, "%s.input_layernorm.weight", prefix));
        TRY(load_attention(m, prefix, 2 * D, &block->attention));
        TRY(load_weight(m, &block->pre_mlp_norm, 0, D, 0, 0, "%s.pre_ff_layernorm.weight", prefix));
        TRY(load_weight(m, &block->mlp.gate_proj, 0, 2 * I, D, 0, "%s.feed_forward.gate_up_proj.weight", prefix));
        TRY(load_weight(m, &block->mlp.down_proj, 0, D, I, 0, "%s.feed_forward.down_proj.weight", prefix));
    }
    return GNA_OK;
}

static int load_zamba2_layer(const Model *m, size_t l, Layer *layer) {
    const Config *c = &m->config;
    size_t D = c->hidden_size, I = c->intermediate_size, q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim, home;
    long visit = c->shared_visit[l];
    char prefix[96], name[160];
    /* a hybrid layer keeps its Mamba layer under mamba_decoder */
    snprintf(prefix, sizeof prefix, visit >= 0 ? "model.layers.%zu.mamba_decoder" : "model.layers.%zu", l);
    layer->kind = MIXER_MAMBA2;
    TRY(load_weight(m, &layer->norm, 0, D, 0, 0, "%s.input_layernorm.weight", prefix));
    strcat(prefix, ".mamba");
    TRY(load_ssd(m, prefix, 0, &layer->ssd));
    if (visit < 0) return GNA_OK;

    size_t b = (size_t)visit % c->n_shared_blocks;
    SharedVisit *v = &layer->shared;
    layer->has_shared_visit = 1;
    v->block = &m->shared_blocks[b];
    v->attention = v->block->attention;
    v->mlp = v->block->mlp;
    TRY(load_weight(m, &v->linear, 0, D, D, 0, "model.layers.%zu.linear.weight", l));
    if (c->ssm_bias) {
        /* add_bias_linear: transformers ties only the shared block's weights across its visits, so each
         * hybrid layer has MLP biases of its own, stored under its own name */
        TRY(load_weight(m, &v->mlp.gate_bias, 0, 2 * I, 0, 0, "model.layers.%zu.shared_transformer.feed_forward.gate_up_proj.bias", l));
        TRY(load_weight(m, &v->mlp.down_bias, 0, D, 0, 0, "model.layers.%zu.shared_transformer.feed_forward.down_proj.bias", l));
    }
    snprintf(name, sizeof name, "feed_forward.gate_up_proj_adapter_list.%ld.0.weight", visit);
    TRY(zamba2_block_home(m, b, name, &home));
    snprintf(name, sizeof name, "model.layers.%zu.shared_transformer.feed_forward.gate_up_proj_adapter_list.%ld", home, visit);
    TRY(load_adapter(m, name, D, 2 * I, v->mlp.adapter));
    if (c->attention_adapters) {
        static const char *const which[3] = {"q", "k", "v"};
        Weight *adapters[3] = {v->attention.q_adapter, v->attention.k_adapter, v->attention.v_adapter};
        for (int i = 0; i < 3; i++) {
            snprintf(name, sizeof name, "self_attn.linear_%s_adapter_list.%ld.0.weight", which[i], visit);
            TRY(zamba2_block_home(m, b, name, &home));
            snprintf(name, sizeof name, "model.layers.%zu.shared_transformer.self_attn.linear_%s_adapter_list.%ld", home, which[i], visit);
            TRY(load_adapter(m, name, 2 * D, i == 0 ? q : kv, adapters[i]));
        }
    }
    return GNA_OK;
}

static int load_llamba_layer(const Model *m, size_t l, Layer *layer) {
    char prefix[64], mixer[80];
    snprintf(prefix, sizeof prefix, "backbone.layers.%zu", l);
    snprintf(mixer, sizeof mixer, "%s.mixer", prefix);
    layer->kind = MIXER_DISCRETE_MAMBA2;
    TRY(load_weight(m, &layer->norm, 0, m->config.hidden_size, 0, 0, "%s.input_layernorm.weight", prefix));
    TRY(load_ssd(m, mixer, 1, &layer->ssd));
    TRY(load_weight(m, &layer->mlp_norm, 0, m->config.hidden_size, 0, 0, "%s.post_attention_layernorm.weight", prefix));
    return load_mlp(m, prefix, &layer->mlp);
}

static int build_model(Model *m, const char *dir) {
    memset(m, 0, sizeof *m);
    m->dir = checked_strdup(dir);
    struct stat st;
    if (stat(dir, &st) != 0) return bad_input(dir, "no such folder");
    if (GNA_STAT_MODES && !S_ISDIR(st.st_mode)) return bad_input(dir, "not a folder");
    char *config_path = path_join(dir, "config.json");
    int status = read_config(config_path, &m->config);
    free(config_path);
    TRY(status);
    m->checkpoint = checked_calloc(1, sizeof(Checkpoint));
    TRY(build_checkpoint(m->checkpoint, dir));
    const Config *c = &m->config;
    size_t V = c->vocab_size, D = c->hidden_size;

    /* the same tensors go by different names across families */
    static const char *const embedding_names[] = {"model.embed_tokens.weight", "backbone.embeddings.weight",
                                                  "backbone.embedding.weight", NULL};
    static const char *const final_norm_names[] = {"model.norm.weight", "backbone.norm_f.weight",
                                                   "model.final_layernorm.weight", "backbone.final_layernorm.weight", NULL};
    static const char *const lm_head_names[] = {"lm_head.weight", "backbone.lm_head.weight", NULL};
    static const char *const lm_head_bias_names[] = {"lm_head.bias", "backbone.lm_head.bias", NULL};
    TRY(load_weight_any(m, &m->embeddings, V, D, embedding_names));
    TRY(load_weight_any(m, &m->final_norm, D, 0, final_norm_names));
    if (c->tie_embeddings) m->lm_head = m->embeddings;
    else TRY(load_weight_any(m, &m->lm_head, V, D, lm_head_names));
    if (c->lm_head_bias) TRY(load_weight_any(m, &m->lm_head_bias, V, 0, lm_head_bias_names));

    /* every layer and shared block has tensors of its own: a count past the tensors is a config.json that lies
     * (refused before it is allocated) */
    if (c->n_layers + c->n_shared_blocks > (size_t)m->checkpoint->n_tensors)
        return bad_input(dir, "config.json gives %zu layers (\"%s\")%s, but the checkpoint holds only %d tensors", c->n_layers,
                         c->family == FAMILY_LLAMBA ? "n_layer" : "num_hidden_layers", c->n_shared_blocks ? " and shared blocks" : "",
                         m->checkpoint->n_tensors);
    if (c->family == FAMILY_ZAMBA2) TRY(load_zamba2_blocks(m));
    m->layers = checked_calloc(c->n_layers, sizeof(Layer));
    for (size_t l = 0; l < c->n_layers; l++) {
        Layer *layer = &m->layers[l];
        switch (c->family) {
        case FAMILY_LLAMA: TRY(load_llama_layer(m, l, layer)); break;
        case FAMILY_MAMBA:
        case FAMILY_FALCON_MAMBA: TRY(load_mamba1_layer(m, l, layer)); break;
        case FAMILY_MAMBA2: TRY(load_mamba2_layer(m, l, layer)); break;
        case FAMILY_ZAMBA2: TRY(load_zamba2_layer(m, l, layer)); break;
        case FAMILY_LLAMBA: TRY(load_llamba_layer(m, l, layer)); break;
        }
    }
    if (c->use_rope) m->rope_inv_freq = build_rope_inv_freq(c);
    return GNA_OK;
}

static void free_model(Model *m) {
    for (size_t l = 0; m->layers && l < m->config.n_layers; l++) free(m->layers[l].mamba1.A);
    if (m->checkpoint) free_checkpoint(m->checkpoint);
    free(m->checkpoint);
    free(m->layers);
    free(m->shared_blocks);
    free(m->config.shared_visit);
    free(m->rope_inv_freq);
    free(m->dir);
    memset(m, 0, sizeof *m);
}

static int load_model(const char *dir, gna_model **model) {
    Model *m = checked_calloc(1, sizeof(Model));
    int status = build_model(m, dir);
    if (status != GNA_OK) {
        free_model(m);
        free(m);
        m = NULL;
    }
    *model = m;
    return status;
}

int gna_load(const char *dir, gna_model **model) {
    NEEDS(model, "gna_load: model is NULL");
    *model = NULL;
    NEEDS(dir, "gna_load: dir is NULL");
    CATCH_OUT_OF_MEMORY(load_model(dir, model));
}

void gna_free(gna_model *model) {
    if (model) release_model(model, 0, 1);
}

int gna_vocab_size(const gna_model *model) { return model ? (int)model->config.vocab_size : -1; }

/* ----------------------------------------------------------------------------------------------
 * II.8 Tokenizer: tokenizer.json -> Tokenizer; text -> token ids -> text, as Hugging Face tokenizers
 *
 * The ids are those of Hugging Face `tokenizers` (the Rust library behind transformers' fast
 * tokenizers); each step below names the function of tokenizers/src it follows. Encoding
 * (TokenizerImpl::encode in tokenizer/mod.rs) runs:
 *   1. added tokens cut out of the raw text (AddedVocabulary::extract_and_normalize): at the
 *      leftmost place where one of the added tokens with "normalized": false matches, the longest
 *      one; then the normalizer runs on each piece left, and the "normalized" added tokens are cut
 *      out of that the same way;
 *   2. the pre-tokenizer splits each piece further (regex splits, ByteLevel's byte-to-character
 *      map, Metaspace, Punctuation, Digits);
 *   3. the model, BPE, turns each piece into ids;
 *   4. the post-processor adds its special tokens (the BOS of TemplateProcessing) unless the
 *      caller asked for none (add_special_tokens=False; added tokens in the text are still cut
 *      out and kept, as in HF).
 * Decoding maps ids to token texts (added tokens first, then the model's vocabulary) and runs the
 * decoder chain over them (TokenizerImpl::decode).
 * Pieces whose text is empty are dropped at every step, as PreTokenizedString::split does.
 *
 * What gna reads is what the paper's models use: BPE models (byte-level as Llama-3, GPT-2/NeoX and
 * Falcon have them; SentencePiece-style with byte fallback as Llama-2 and Mistral have them).
 * Anything else in a tokenizer.json (another model, normalizer, pre-tokenizer, regex, decoder,
 * post-processor) is refused by name rather than approximated.
 *
 * Text must be valid UTF-8 (RFC 3629). HF tokenizers takes Python strings, which cannot hold
 * anything else, so gna has no behaviour of HF's to copy for invalid bytes: it refuses the text,
 * naming the offset of the first bad byte, rather than guess.
 */


/* Unicode properties, from the appendix's tables: \p{L}, \p{N}, \s (White_Space), and the
 * Punctuation pre-tokenizer's is_punc */
static int is_letter(uint32_t c);
static int is_number(uint32_t c);
static int is_white_space(uint32_t c);
static int is_punctuation(uint32_t c);

/* ---- UTF-8 */

/* The offset of the first byte of s[0..n) that does not belong to well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or n when all of it is well-formed. */
static size_t utf8_valid_prefix(const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t more;
        unsigned char low = 0x80, high = 0xBF; /* the range of the second byte */
        if (b < 0x80) { i++; continue; }
        else if (b >= 0xC2 && b <= 0xDF) more = 1;
        else if (b >= 0xE0 && b <= 0xEF) { more = 2; if (b == 0xE0) low = 0xA0; if (b == 0xED) high = 0x9F; }
        else if (b >= 0xF0 && b <= 0xF4) { more = 3; if (b == 0xF0) low = 0x90; if (b == 0xF4) high = 0x8F; }
        else return i;
        if (n - i <= more || s[i + 1] < low || s[i + 1] > high) return i;
        for (size_t k = 2; k <= more; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
        i += more + 1;
    }
    return n;
}

/* the code point at text[*at] of well-formed UTF-8, moving *at past it */
static uint32_t utf8_next(const char *text, size_t *at) {
    const unsigned char *s = (const unsigned char *)text + *at;
    if (s[0] < 0x80) { *at += 1; return s[0]; }
    if (s[0] < 0xE0) { *at += 2; return (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F); }
    if (s[0] < 0xF0) { *at += 3; return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F); }
    *at += 4;
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

static void bytes_add_char(Bytes *b, uint32_t code) {
    char utf8[4];
    bytes_add(b, utf8, utf8_encode(code, utf8));
}

/* Bytes into well-formed UTF-8, each maximal ill-formed subsequence replaced by one U+FFFD: Rust's
 * String::from_utf8_lossy (what tokenizers' ByteLevel decoder calls), which is also Python's
 * bytes.decode("utf-8", "replace"). */
static void bytes_add_lossy(Bytes *out, const char *text, size_t n) {
    while (n > 0) {
        size_t good = utf8_valid_prefix(text, n);
        bytes_add(out, text, good);
        text += good;
        n -= good;
        if (n == 0) break;
        /* the ill-formed part: the lead byte and as many continuation bytes as could still follow it */
        const unsigned char *s = (const unsigned char *)text;
        size_t bad = 1, more = 0;
        unsigned char low = 0x80, high = 0xBF;
        if (s[0] >= 0xC2 && s[0] <= 0xDF) more = 1;
        else if (s[0] >= 0xE0 && s[0] <= 0xEF) { more = 2; if (s[0] == 0xE0) low = 0xA0; if (s[0] == 0xED) high = 0x9F; }
        else if (s[0] >= 0xF0 && s[0] <= 0xF4) { more = 3; if (s[0] == 0xF0) low = 0x90; if (s[0] == 0xF4) high = 0x8F; }
        if (more && bad < n && s[1] >= low && s[1] <= high) {
            bad++;
            while (bad <= more && bad < n && s[bad] >= 0x80 && s[bad] <= 0xBF) bad++;
        }
        bytes_add_char(out, 0xFFFD);
        text += bad;
        n -= bad;
    }
}

/* ---- hash maps: token text -> id, and a pair of ids -> merge */

static uint64_t hash_text(const char *s, size_t n) { /* FNV-1a */
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
    return h;
}

typedef struct {
    const char *key; /* NULL: empty slot; the text lives elsewhere (the tokenizer's string store) */
    uint32_t length;
    int value;
} TextSlot;

typedef struct {
    size_t capacity; /* a power of two, at least twice the entries */
    TextSlot *slots; /* [capacity] */
} TextMap;

static void text_map_init(TextMap *m, size_t entries) {
    m->capacity = 16;
    while (m->capacity < 2 * entries) m->capacity *= 2;
    m->slots = checked_calloc(m->capacity, sizeof(TextSlot));
}

static TextSlot *text_map_slot(const TextMap *m, const char *key, size_t n) {
    size_t i = (size_t)hash_text(key, n) & (m->capacity - 1);
    while (m->slots[i].key && (m->slots[i].length != n || memcmp(m->slots[i].key, key, n) != 0))
        i = (i + 1) & (m->capacity - 1);
    return &m->slots[i];
}

/* the value of key, or -1 */
static int text_map_get(const TextMap *m, const char *key, size_t n) {
    if (!m->slots) return -1;
    const TextSlot *s = text_map_slot(m, key, n);
    return s->key ? s->value : -1;
}

/* set key's value (the map was sized for all its keys); returns the value it had, or -1 */
static int text_map_put(TextMap *m, const char *key, size_t n, int value) {
    TextSlot *s = text_map_slot(m, key, n);
    int old = s->key ? s->value : -1;
    *s = (TextSlot){key, (uint32_t)n, value};
    return old;
}

typedef struct {
    uint64_t key; /* left id << 32 | right id; EMPTY_PAIR in an empty slot */
    int rank, merged; /* the merge's place in the list, and the id of the token it makes */
} PairSlot;
#define EMPTY_PAIR UINT64_MAX

typedef struct {
    size_t capacity;
    PairSlot *slots;
} PairMap;

static PairSlot *pair_map_slot(const PairMap *m, int left, int right) {
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (m->capacity - 1);
    while (m->slots[i].key != EMPTY_PAIR && m->slots[i].key != key) i = (i + 1) & (m->capacity - 1);
    return &m->slots[i];
}

/* ---- the tokenizer, as read from tokenizer.json */

/* Memory that lives as long as a tokenizer, or one call: the JSON parser's arena, reused. */
typedef JsonDocument Arena;

static char *arena_text(Arena *a, const char *text, size_t n) {
    char *copy = arena_alloc(a, n + 1);
    memcpy(copy, text, n);
    copy[n] = 0;
    return copy;
}

/* How a split treats what it found (SplitDelimiterBehavior, tokenizer/normalizer.rs), for "a-b--c" split
 * at '-': Removed a b c; Isolated a - b - - c; MergedWithPrevious a- b- - c; MergedWithNext a -b - -c;
 * Contiguous a - b -- c. */
typedef enum { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_MERGED_WITH_PREVIOUS, SPLIT_MERGED_WITH_NEXT, SPLIT_CONTIGUOUS } SplitBehavior;
static const char *const split_behavior_names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};

/* What a split looks for. gna has no regex engine: the regexes that tokenizer.json files of its models
 * hold are written out by hand below, and any other is refused. */
typedef enum {
    FIND_TEXT,         /* a literal string (pattern {"String": ...}) */
    FIND_CHARACTER,    /* each occurrence of one character (Metaspace) */
    FIND_PUNCTUATION,  /* each punctuation character (Punctuation) */
    FIND_NUMBER,       /* each numeric character (Digits) */
    FIND_LLAMA3,       /* the Llama-3 split regex */
    FIND_GPT2,         /* the GPT-2 regex, ByteLevel's own */
    FIND_THREE_DIGITS, /* [0-9][0-9][0-9] (Falcon) */
} FindKind;

static const char llama3_regex[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
                                   " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char gpt2_regex[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char three_digits_regex[] = "[0-9][0-9][0-9]";

typedef struct {
    FindKind kind;
    const char *text; /* FIND_TEXT */
    size_t length;
    uint32_t character; /* FIND_CHARACTER */
} Finder;

typedef enum { NORMALIZE_PREPEND, NORMALIZE_REPLACE, NORMALIZE_NFC } NormalizerKind;
typedef struct {
    NormalizerKind kind;
    const char *text; /* PREPEND: what is put in front; REPLACE: what is replaced */
    size_t length;
    const char *content; /* REPLACE: what replaces it */
    size_t content_length;
} NormalizerStep;

typedef enum { PRE_SPLIT, PRE_BYTE_LEVEL, PRE_METASPACE } PreTokenizerKind;
typedef enum { PREPEND_NEVER, PREPEND_FIRST, PREPEND_ALWAYS } PrependScheme;
typedef struct {
    PreTokenizerKind kind;
    Finder find; /* SPLIT (Split, Punctuation, Digits) */
    SplitBehavior behavior;
    int invert;
    int add_prefix_space, use_regex; /* BYTE_LEVEL */
    uint32_t replacement;            /* METASPACE */
    PrependScheme prepend;
    int split;
} PreTokenizerStep;

typedef enum { DECODE_BYTE_LEVEL, DECODE_REPLACE, DECODE_BYTE_FALLBACK, DECODE_FUSE, DECODE_STRIP, DECODE_METASPACE } DecoderKind;
typedef struct {
    DecoderKind kind;
    const char *text, *content; /* REPLACE: what is replaced, and by what */
    size_t length, content_length;
    uint32_t character; /* STRIP: the character stripped; METASPACE: the replacement */
    int start, stop;    /* STRIP: how many to strip at most at each end; METASPACE: start = prepend scheme is not "never" */
} DecoderStep;

typedef struct {
    int id;
    const char *content; /* as matched: for "normalized" tokens, the content normalized */
    size_t length;
    int special, normalized, lstrip, rstrip;
} AddedToken;

/* The added tokens of one kind ("normalized" false or true) in a byte trie, for leftmost-longest
 * matching: one walk down from a place in the text finds the longest token that starts there, in at
 * most the longest token's length of steps, however many tokens share its first bytes. */
typedef struct {
    unsigned char byte;
    int child, sibling; /* the first child and the next sibling: node indices, 0 for none (0 is the root) */
    int token;          /* the index into Tokenizer.added of the token that ends here, or -1 */
} TrieNode;

typedef struct {
    TrieNode *nodes; /* [n_nodes], the root first */
    size_t n_nodes, capacity;
} AddedMatcher;

struct gna_tokenizer {
    const char *path; /* for messages */
    Arena store;      /* every text the tokenizer holds */
    /* the model: BPE (models/bpe/model.rs) */
    int vocab_size;   /* entries of model.vocab (BPE::get_vocab_size, where added tokens are numbered from) */
    TextMap vocab;    /* token text -> id */
    PairMap merges;   /* (left id, right id) -> rank, merged id */
    int unk_id;       /* -1: no unk_token */
    int fuse_unk, byte_fallback, ignore_merges;
    int byte_ids[256]; /* byte fallback: the ids of <0x00> .. <0xFF>, -1 where absent */
    /* added tokens */
    int n_added;
    AddedToken *added;               /* [n_added] */
    AddedMatcher raw_added, normalized_added;
    TextMap special_contents;        /* contents of the special added tokens (skip_special_tokens) */
    /* ids -> texts, for decoding */
    int n_ids;                       /* one past the largest id */
    const char **id_text;            /* [n_ids], NULL where no token has the id */
    uint32_t *id_length;             /* [n_ids] */
    /* the pipeline */
    int n_normalizers;
    size_t normalizers_capacity;
    NormalizerStep *normalizers;
    int n_pre_tokenizers;
    size_t pre_tokenizers_capacity;
    PreTokenizerStep *pre_tokenizers;
    int n_prefix, n_suffix;
    size_t prefix_capacity, suffix_capacity;
    int *prefix, *suffix;            /* the post-processor's ids before and after the text's */
    int has_decoder, n_decoders;
    size_t decoders_capacity;
    DecoderStep *decoders;
    uint32_t byte_char[256];         /* ByteLevel's map of bytes to characters, and back */
    int16_t char_byte[0x144];
};
typedef struct gna_tokenizer Tokenizer;

/* ByteLevel's map (bytes_char, pre_tokenizers/byte_level.rs, from GPT-2's bytes_to_unicode): printable
 * bytes ! .. ~, ¡ .. ¬, ® .. ÿ stand for themselves, the other 68 for U+0100 onwards in byte order. */
static void make_byte_map(Tokenizer *t) {
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        t->byte_char[b] = printable ? (uint32_t)b : 0x100 + (uint32_t)n++;
    }
    for (int c = 0; c < 0x144; c++) t->char_byte[c] = -1;
    for (int b = 0; b < 256; b++) t->char_byte[t->byte_char[b]] = (int16_t)b;
}

/* ---- reading tokenizer.json */

static const char *json_type_name(const JsonValue *v) {
    const JsonValue *type = json_get(v, "type");
    return type && type->type == JSON_STRING ? type->string : NULL;
}

/* object[key] as a boolean; fallback when absent or null, or -1 if it is required */
static int tj_bool(const Tokenizer *t, const JsonValue *object, const char *what, const char *key, int fallback, int *out) {
    const JsonValue *v = json_get(object, key);
    if (!v || v->type == JSON_NULL) {
        if (fallback < 0) return bad_input(t->path, "%s: \"%s\" is missing", what, key);
        *out = fallback;
        return GNA_OK;
    }
    if (v->type != JSON_TRUE && v->type != JSON_FALSE) return bad_input(t->path, "%s: \"%s\" must be true or false", what, key);
    *out = v->type == JSON_TRUE;
    return GNA_OK;
}

/* object[key] as a string; NULL when absent or null unless required */
static int tj_string(const Tokenizer *t, const JsonValue *object, const char *what, const char *key, int required,
                     const JsonValue **out) {
    const JsonValue *v = json_get(object, key);
    *out = NULL;
    if (!v || v->type == JSON_NULL) return required ? bad_input(t->path, "%s: \"%s\" is missing", what, key) : GNA_OK;
    if (v->type != JSON_STRING) return bad_input(t->path, "%s: \"%s\" must be a string", what, key);
    *out = v;
    return GNA_OK;
}

/* a string that must be exactly one character (Metaspace's replacement, Strip's content) */
static int tj_character(const Tokenizer *t, const JsonValue *object, const char *what, const char *key, uint32_t *out) {
    const JsonValue *v;
    TRY(tj_string(t, object, what, key, 1, &v));
    size_t at = 0;
    if (v->length == 0 || utf8_valid_prefix(v->string, v->length) != v->length || (utf8_next(v->string, &at), at != v->length))
        return bad_input(t->path, "%s: \"%s\" must be one character", what, key);
    at = 0;
    *out = utf8_next(v->string, &at);
    return GNA_OK;
}

/* {"String": s} as a literal to find; {"Regex": r} only where r is one gna knows (regex_ok) */
static int tj_pattern(Tokenizer *t, const JsonValue *object, const char *what, int regex_ok, Finder *out) {
    const JsonValue *pattern = json_get(object, "pattern");
    const JsonValue *string = json_get(pattern, "String"), *regex = json_get(pattern, "Regex");
    memset(out, 0, sizeof *out);
    if (string && string->type == JSON_STRING) {
        if (string->length == 0) return bad_input(t->path, "%s: the pattern is empty", what);
        out->kind = FIND_TEXT;
        out->text = arena_text(&t->store, string->string, string->length);
        out->length = string->length;
        return GNA_OK;
    }
    if (!regex || regex->type != JSON_STRING)
        return bad_input(t->path, "%s: \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}", what);
    if (regex_ok && strcmp(regex->string, llama3_regex) == 0) out->kind = FIND_LLAMA3;
    else if (regex_ok && strcmp(regex->string, gpt2_regex) == 0) out->kind = FIND_GPT2;
    else if (regex_ok && strcmp(regex->string, three_digits_regex) == 0) out->kind = FIND_THREE_DIGITS;
    else
        return bad_input(t->path, "%s: the regex \"%.120s\" is not one gna knows (it has no regex engine; it knows "
                                  "the Llama-3 and GPT-2 split regexes and Falcon's [0-9][0-9][0-9])", what, regex->string);
    return GNA_OK;
}

static int tj_behavior(const Tokenizer *t, const JsonValue *object, const char *what, int required, SplitBehavior *out) {
    const JsonValue *v;
    TRY(tj_string(t, object, what, "behavior", required, &v));
    if (!v) return GNA_OK; /* *out keeps its default */
    for (int i = 0; i < 5; i++)
        if (strcmp(v->string, split_behavior_names[i]) == 0) {
            *out = (SplitBehavior)i;
            return GNA_OK;
        }
    return bad_input(t->path, "%s: unknown behavior \"%s\"", what, v->string);
}

/* model.vocab: token -> id, and the ids' texts */
static int read_bpe_vocab(Tokenizer *t, const JsonValue *vocab, size_t n_added_listed) {
    text_map_init(&t->vocab, vocab->length);
    int largest = -1;
    /* ids number the tokens: gna refuses ids past twice the count of the vocab's and the added tokens
     * (and 1024 more), so that memory follows what the file holds, never a number written in it */
    double id_limit = 2 * ((double)vocab->length + (double)n_added_listed) + 1024;
    for (const JsonValue *m = vocab->first; m; m = m->next) {
        if (m->type != JSON_NUMBER || m->number < 0 || m->number > INT_MAX - 1 || m->number != floor(m->number))
            return bad_input(t->path, "model.vocab: the id of \"%.80s\" must be a whole number from 0", m->key);
        if (m->number >= id_limit)
            return bad_input(t->path, "model.vocab: the id of \"%.80s\", %.0f, is over %.0f, the largest for the tokens the file holds",
                             m->key, m->number, id_limit - 1);
        int id = (int)m->number;
        const char *key = arena_text(&t->store, m->key, strlen(m->key));
        if (text_map_put(&t->vocab, key, strlen(key), id) < 0) t->vocab_size++;
        if (id > largest) largest = id;
    }
    /* ids -> texts; an id given twice would make decoding ambiguous */
    t->n_ids = largest + 1;
    t->id_text = checked_calloc((size_t)t->n_ids + 1, sizeof(char *));
    t->id_length = checked_calloc((size_t)t->n_ids + 1, sizeof(uint32_t));
    for (size_t i = 0; i < t->vocab.capacity; i++) {
        const TextSlot *s = &t->vocab.slots[i];
        if (!s->key) continue;
        if (t->id_text[s->value])
            return bad_input(t->path, "model.vocab gives id %d to both \"%.60s\" and \"%.60s\"", s->value, t->id_text[s->value], s->key);
        t->id_text[s->value] = s->key;
        t->id_length[s->value] = s->length;
    }
    return GNA_OK;
}

/* model.merges: each pair of tokens -> (its rank, the merged token) */
static int read_bpe_merges(Tokenizer *t, const JsonValue *merges) {
    t->merges.capacity = 16;
    while (t->merges.capacity < 2 * merges->length) t->merges.capacity *= 2;
    t->merges.slots = checked_malloc(t->merges.capacity * sizeof(PairSlot));
    for (size_t i = 0; i < t->merges.capacity; i++) t->merges.slots[i].key = EMPTY_PAIR;
    Bytes joined = {0};
    int rank = 0, status = GNA_OK;
    for (const JsonValue *m = merges->first; m && status == GNA_OK; m = m->next) {
        const char *a, *b;
        size_t a_length, b_length;
        if (m->type == JSON_STRING) { /* "a b", split at its one space (convert_merges_to_hashmap) */
            if (strncmp(m->string, "#version", 8) == 0) continue;
            const char *space = memchr(m->string, ' ', m->length);
            if (!space || memchr(space + 1, ' ', m->length - (size_t)(space + 1 - m->string))) {
                status = bad_input(t->path, "model.merges: merge %d, \"%.80s\", is not two tokens separated by one space", rank + 1, m->string);
                break;
            }
            a = m->string;
            a_length = (size_t)(space - a);
            b = space + 1;
            b_length = m->length - a_length - 1;
        } else if (m->type == JSON_ARRAY && m->length == 2 && m->first->type == JSON_STRING && m->first->next->type == JSON_STRING) {
            a = m->first->string;
            a_length = m->first->length;
            b = m->first->next->string;
            b_length = m->first->next->length;
        } else {
            status = bad_input(t->path, "model.merges: merge %d must be \"a b\" or [\"a\", \"b\"]", rank + 1);
            break;
        }
        int left = text_map_get(&t->vocab, a, a_length), right = text_map_get(&t->vocab, b, b_length);
        joined.length = 0;
        bytes_add(&joined, a, a_length);
        bytes_add(&joined, b, b_length);
        int merged = text_map_get(&t->vocab, joined.data, joined.length);
        if (left < 0 || right < 0 || merged < 0) {
            status = bad_input(t->path, "model.merges: merge %d makes or uses \"%.80s\", which is not in the vocab", rank + 1,
                               left < 0 ? a : right < 0 ? b : joined.data);
            break;
        }
        PairSlot *slot = pair_map_slot(&t->merges, left, right);
        *slot = (PairSlot){(uint64_t)(uint32_t)left << 32 | (uint32_t)right, rank, merged};
        rank++;
    }
    free(joined.data);
    return status;
}

/* The model: {"type": "BPE", "vocab": {text: id}, "merges": ["a b", ...] or [["a", "b"], ...], ...}, as
 * BPEVisitor (models/bpe/serialization.rs) and BpeBuilder::build read it. A merge's rank is its place
 * in the list; when a pair is listed twice the later rank stands (the list is collected into a map). */
static int read_bpe(Tokenizer *t, const JsonValue *model, size_t n_added_listed) {
    const char *what = "model";
    const char *type = json_type_name(model);
    if (!model || model->type != JSON_OBJECT) return bad_input(t->path, "\"model\" must be an object");
    if (!type) return bad_input(t->path, "model: \"type\" is missing");
    if (strcmp(type, "BPE") != 0)
        return bad_input(t->path, "model type \"%s\" is not supported: gna reads BPE models", type);
    const JsonValue *v;
    if ((v = json_get(model, "dropout")) && v->type != JSON_NULL) {
        if (v->type != JSON_NUMBER || !(v->number >= 0 && v->number <= 1))
            return bad_input(t->path, "model: \"dropout\" must be a number from 0 to 1");
        if (v->number > 0) return bad_input(t->path, "model: \"dropout\" %g makes BPE random; gna tokenizes without dropout", v->number);
    }
    const JsonValue *prefix, *suffix, *unk;
    TRY(tj_string(t, model, what, "continuing_subword_prefix", 0, &prefix));
    TRY(tj_string(t, model, what, "end_of_word_suffix", 0, &suffix));
    if (prefix || suffix)
        return bad_input(t->path, "model: continuing_subword_prefix and end_of_word_suffix are not supported");
    TRY(tj_string(t, model, what, "unk_token", 0, &unk));
    TRY(tj_bool(t, model, what, "fuse_unk", 0, &t->fuse_unk));
    TRY(tj_bool(t, model, what, "byte_fallback", 0, &t->byte_fallback));
    TRY(tj_bool(t, model, what, "ignore_merges", 0, &t->ignore_merges));

    const JsonValue *vocab = json_get(model, "vocab"), *merges = json_get(model, "merges");
    if (!vocab || vocab->type != JSON_OBJECT) return bad_input(t->path, "model: \"vocab\" must be an object of token: id");
    if (!merges || merges->type != JSON_ARRAY) return bad_input(t->path, "model: \"merges\" must be an array");
    TRY(read_bpe_vocab(t, vocab, n_added_listed));
    t->unk_id = -1;
    if (unk && (t->unk_id = text_map_get(&t->vocab, unk->string, unk->length)) < 0)
        return bad_input(t->path, "model: unk_token \"%.80s\" is not in the vocab", unk->string);
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_ids[b] = text_map_get(&t->vocab, name, 6);
    }

    return read_bpe_merges(t, merges);
}

/* {"type": "Sequence", "normalizers": [...]} is flattened into the steps it holds. */
static int read_normalizer(Tokenizer *t, const JsonValue *n) {
    const char *type = json_type_name(n);
    if (!type) return bad_input(t->path, "normalizer: \"type\" is missing");
    if (strcmp(type, "Sequence") == 0) {
        const JsonValue *list = json_get(n, "normalizers");
        if (!list || list->type != JSON_ARRAY) return bad_input(t->path, "normalizer Sequence: \"normalizers\" must be an array");
        for (const JsonValue *m = list->first; m; m = m->next) TRY(read_normalizer(t, m));
        return GNA_OK;
    }
    NormalizerStep step = {0};
    const JsonValue *v;
    if (strcmp(type, "Prepend") == 0) {
        TRY(tj_string(t, n, "normalizer Prepend", "prepend", 1, &v));
        step = (NormalizerStep){NORMALIZE_PREPEND, arena_text(&t->store, v->string, v->length), v->length, NULL, 0};
    } else if (strcmp(type, "Replace") == 0) {
        Finder find;
        TRY(tj_pattern(t, n, "normalizer Replace", 0, &find));
        TRY(tj_string(t, n, "normalizer Replace", "content", 1, &v));
        step = (NormalizerStep){NORMALIZE_REPLACE, find.text, find.length, arena_text(&t->store, v->string, v->length), v->length};
    } else if (strcmp(type, "NFC") == 0) { /* GPT-NeoX's, the -hf Mamba models' */
        step = (NormalizerStep){NORMALIZE_NFC, NULL, 0, NULL, 0};
    } else if (strcmp(type, "NFKC") == 0 || strcmp(type, "NFD") == 0 || strcmp(type, "NFKD") == 0) {
        /* these need the compatibility mappings too (NFKC, NFKD), or stop before composing (NFD); none
         * of the paper's models uses them */
        return bad_input(t->path, "normalizer %s (Unicode normalization) is not supported (gna knows NFC)", type);
    } else {
        return bad_input(t->path, "normalizer type \"%s\" is not supported (gna knows Sequence, Prepend, Replace, NFC)", type);
    }
    t->normalizers = grow_array(t->normalizers, t->n_normalizers, &t->normalizers_capacity, sizeof *t->normalizers);
    t->normalizers[t->n_normalizers++] = step;
    return GNA_OK;
}

/* Metaspace's prepend_scheme, and the older add_prefix_space that stands for "never" when false
 * (pre_tokenizers/metaspace.rs, MetaspaceHelper) */
static int read_prepend_scheme(const Tokenizer *t, const JsonValue *m, const char *what, PrependScheme *out) {
    const JsonValue *scheme;
    int add_prefix_space;
    TRY(tj_string(t, m, what, "prepend_scheme", 0, &scheme));
    TRY(tj_bool(t, m, what, "add_prefix_space", 1, &add_prefix_space));
    *out = PREPEND_ALWAYS;
    if (scheme && strcmp(scheme->string, "first") == 0) *out = PREPEND_FIRST;
    else if (scheme && strcmp(scheme->string, "never") == 0) *out = PREPEND_NEVER;
    else if (scheme && strcmp(scheme->string, "always") != 0)
        return bad_input(t->path, "%s: unknown prepend_scheme \"%s\"", what, scheme->string);
    if (!add_prefix_space) {
        if (*out != PREPEND_NEVER) return bad_input(t->path, "%s: add_prefix_space does not match declared prepend_scheme", what);
        *out = PREPEND_NEVER;
    }
    return GNA_OK;
}

static int read_pre_tokenizer(Tokenizer *t, const JsonValue *p) {
    const char *type = json_type_name(p);
    if (!type) return bad_input(t->path, "pre_tokenizer: \"type\" is missing");
    if (strcmp(type, "Sequence") == 0) {
        const JsonValue *list = json_get(p, "pretokenizers");
        if (!list || list->type != JSON_ARRAY) return bad_input(t->path, "pre_tokenizer Sequence: \"pretokenizers\" must be an array");
        for (const JsonValue *m = list->first; m; m = m->next) TRY(read_pre_tokenizer(t, m));
        return GNA_OK;
    }
    PreTokenizerStep step;
    memset(&step, 0, sizeof step);
    step.behavior = SPLIT_ISOLATED;
    if (strcmp(type, "Split") == 0) {
        step.kind = PRE_SPLIT;
        TRY(tj_pattern(t, p, "pre_tokenizer Split", 1, &step.find));
        TRY(tj_behavior(t, p, "pre_tokenizer Split", 1, &step.behavior));
        TRY(tj_bool(t, p, "pre_tokenizer Split", "invert", -1, &step.invert));
    } else if (strcmp(type, "ByteLevel") == 0) {
        int trim_offsets;
        step.kind = PRE_BYTE_LEVEL;
        TRY(tj_bool(t, p, "pre_tokenizer ByteLevel", "add_prefix_space", -1, &step.add_prefix_space));
        TRY(tj_bool(t, p, "pre_tokenizer ByteLevel", "trim_offsets", -1, &trim_offsets)); /* offsets only */
        TRY(tj_bool(t, p, "pre_tokenizer ByteLevel", "use_regex", 1, &step.use_regex));
    } else if (strcmp(type, "Metaspace") == 0) {
        step.kind = PRE_METASPACE;
        TRY(tj_character(t, p, "pre_tokenizer Metaspace", "replacement", &step.replacement));
        TRY(read_prepend_scheme(t, p, "pre_tokenizer Metaspace", &step.prepend));
        TRY(tj_bool(t, p, "pre_tokenizer Metaspace", "split", 1, &step.split));
    } else if (strcmp(type, "Punctuation") == 0) {
        step.kind = PRE_SPLIT;
        step.find.kind = FIND_PUNCTUATION;
        TRY(tj_behavior(t, p, "pre_tokenizer Punctuation", 0, &step.behavior));
    } else if (strcmp(type, "Digits") == 0) {
        int individual;
        step.kind = PRE_SPLIT;
        step.find.kind = FIND_NUMBER;
        TRY(tj_bool(t, p, "pre_tokenizer Digits", "individual_digits", -1, &individual));
        step.behavior = individual ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS;
    } else {
        return bad_input(t->path, "pre_tokenizer type \"%s\" is not supported (gna knows Sequence, Split, ByteLevel, "
                                  "Metaspace, Punctuation, Digits)", type);
    }
    t->pre_tokenizers = grow_array(t->pre_tokenizers, t->n_pre_tokenizers, &t->pre_tokenizers_capacity, sizeof *t->pre_tokenizers);
    t->pre_tokenizers[t->n_pre_tokenizers++] = step;
    return GNA_OK;
}

static void add_ids(int **ids, int *n, size_t *capacity, const int *more, int n_more) {
    for (int i = 0; i < n_more; i++) {
        *ids = grow_array(*ids, *n, capacity, sizeof **ids);
        (*ids)[(*n)++] = more[i];
    }
}

/* TemplateProcessing's "single" template (processors/template.rs): the special tokens before $A go in
 * front of the text's ids, those after it behind. In a Sequence each template wraps what the ones before
 * it made. ByteLevel as a post-processor only trims offsets: no ids. */
static int read_post_processor(Tokenizer *t, const JsonValue *p) {
    const char *type = json_type_name(p);
    if (!type) return bad_input(t->path, "post_processor: \"type\" is missing");
    if (strcmp(type, "Sequence") == 0) {
        const JsonValue *list = json_get(p, "processors");
        if (!list || list->type != JSON_ARRAY) return bad_input(t->path, "post_processor Sequence: \"processors\" must be an array");
        for (const JsonValue *m = list->first; m; m = m->next) TRY(read_post_processor(t, m));
        return GNA_OK;
    }
    if (strcmp(type, "ByteLevel") == 0) return GNA_OK;
    if (strcmp(type, "TemplateProcessing") != 0)
        return bad_input(t->path, "post_processor type \"%s\" is not supported (gna knows TemplateProcessing, ByteLevel, Sequence)", type);
    const char *what = "post_processor TemplateProcessing";
    const JsonValue *single = json_get(p, "single"), *specials = json_get(p, "special_tokens");
    if (!single || single->type != JSON_ARRAY) return bad_input(t->path, "%s: \"single\" must be an array", what);
    if (!specials || specials->type != JSON_OBJECT) return bad_input(t->path, "%s: \"special_tokens\" must be an object", what);
    int *before = NULL, *after = NULL, n_before = 0, n_after = 0, seen_a = 0;
    size_t before_capacity = 0, after_capacity = 0;
    int status = GNA_OK;
    for (const JsonValue *piece = single->first; piece && status == GNA_OK; piece = piece->next) {
        const JsonValue *sequence = json_get(piece, "Sequence"), *special = json_get(piece, "SpecialToken");
        const JsonValue *id = json_get(sequence ? sequence : special, "id");
        if ((!sequence && !special) || !id || id->type != JSON_STRING) {
            status = bad_input(t->path, "%s: each piece of \"single\" must be {\"Sequence\": {\"id\": ...}} or {\"SpecialToken\": {\"id\": ...}}", what);
        } else if (sequence) {
            if (strcmp(id->string, "A") != 0 || seen_a)
                status = bad_input(t->path, "%s: \"single\" must hold the sequence A once, and no other", what);
            seen_a = 1;
        } else {
            const JsonValue *token = json_get(specials, id->string), *ids = json_get(token, "ids");
            if (!ids || ids->type != JSON_ARRAY) {
                status = bad_input(t->path, "%s: special token \"%.80s\" is not in \"special_tokens\" with its \"ids\"", what, id->string);
                break;
            }
            for (const JsonValue *i = ids->first; i; i = i->next) {
                if (i->type != JSON_NUMBER || i->number < 0 || i->number > INT_MAX || i->number != floor(i->number)) {
                    status = bad_input(t->path, "%s: the ids of \"%.80s\" must be whole numbers from 0", what, id->string);
                    break;
                }
                int value = (int)i->number;
                if (seen_a) add_ids(&after, &n_after, &after_capacity, &value, 1);
                else add_ids(&before, &n_before, &before_capacity, &value, 1);
            }
        }
    }
    if (status == GNA_OK && !seen_a) status = bad_input(t->path, "%s: \"single\" has no sequence A", what);
    if (status == GNA_OK) { /* prefix = before + prefix, suffix = suffix + after */
        add_ids(&before, &n_before, &before_capacity, t->prefix, t->n_prefix);
        free(t->prefix);
        t->prefix = before;
        t->n_prefix = n_before;
        t->prefix_capacity = before_capacity;
        before = NULL;
        add_ids(&t->suffix, &t->n_suffix, &t->suffix_capacity, after, n_after);
    }
    free(before);
    free(after);
    return status;
}

static int read_decoder(Tokenizer *t, const JsonValue *d) {
    const char *type = json_type_name(d);
    if (!type) return bad_input(t->path, "decoder: \"type\" is missing");
    if (strcmp(type, "Sequence") == 0) {
        const JsonValue *list = json_get(d, "decoders");
        if (!list || list->type != JSON_ARRAY) return bad_input(t->path, "decoder Sequence: \"decoders\" must be an array");
        for (const JsonValue *m = list->first; m; m = m->next) TRY(read_decoder(t, m));
        return GNA_OK;
    }
    DecoderStep step;
    memset(&step, 0, sizeof step);
    if (strcmp(type, "ByteLevel") == 0) {
        step.kind = DECODE_BYTE_LEVEL;
    } else if (strcmp(type, "Replace") == 0) {
        Finder find;
        const JsonValue *v;
        TRY(tj_pattern(t, d, "decoder Replace", 0, &find));
        TRY(tj_string(t, d, "decoder Replace", "content", 1, &v));
        step = (DecoderStep){DECODE_REPLACE, find.text, arena_text(&t->store, v->string, v->length), find.length, v->length, 0, 0, 0};
    } else if (strcmp(type, "ByteFallback") == 0) {
        step.kind = DECODE_BYTE_FALLBACK;
    } else if (strcmp(type, "Fuse") == 0) {
        step.kind = DECODE_FUSE;
    } else if (strcmp(type, "Strip") == 0) {
        step.kind = DECODE_STRIP;
        TRY(tj_character(t, d, "decoder Strip", "content", &step.character));
        const JsonValue *start = json_get(d, "start"), *stop = json_get(d, "stop");
        if (!start || !stop || start->type != JSON_NUMBER || stop->type != JSON_NUMBER || start->number < 0 ||
            stop->number < 0 || start->number > 1e6 || stop->number > 1e6 || start->number != floor(start->number) ||
            stop->number != floor(stop->number))
            return bad_input(t->path, "decoder Strip: \"start\" and \"stop\" must be whole numbers from 0");
        step.start = (int)start->number;
        step.stop = (int)stop->number;
    } else if (strcmp(type, "Metaspace") == 0) {
        PrependScheme scheme;
        step.kind = DECODE_METASPACE;
        TRY(tj_character(t, d, "decoder Metaspace", "replacement", &step.character));
        TRY(read_prepend_scheme(t, d, "decoder Metaspace", &scheme));
        step.start = scheme != PREPEND_NEVER;
    } else {
        return bad_input(t->path, "decoder type \"%s\" is not supported (gna knows ByteLevel, Replace, ByteFallback, "
                                  "Fuse, Strip, Metaspace, Sequence)", type);
    }
    t->decoders = grow_array(t->decoders, t->n_decoders, &t->decoders_capacity, sizeof *t->decoders);
    t->decoders[t->n_decoders++] = step;
    return GNA_OK;
}

static void normalize_text(const Tokenizer *t, const char *text, size_t n, Bytes *out);

static int trie_child(const AddedMatcher *m, int node, unsigned char byte) {
    for (int c = m->nodes[node].child; c; c = m->nodes[c].sibling)
        if (m->nodes[c].byte == byte) return c;
    return 0;
}

static void build_added_matcher(const Tokenizer *t, AddedMatcher *m, int normalized) {
    m->nodes = checked_malloc(sizeof(TrieNode));
    m->nodes[0] = (TrieNode){0, 0, 0, -1};
    m->n_nodes = m->capacity = 1;
    for (int i = 0; i < t->n_added; i++) {
        const AddedToken *a = &t->added[i];
        if (a->normalized != normalized) continue;
        int node = 0;
        for (size_t k = 0; k < a->length; k++) {
            unsigned char byte = (unsigned char)a->content[k];
            int next = trie_child(m, node, byte);
            if (!next) {
                m->nodes = grow_array(m->nodes, m->n_nodes, &m->capacity, sizeof(TrieNode));
                next = (int)m->n_nodes++;
                m->nodes[next] = (TrieNode){byte, 0, m->nodes[node].child, -1};
                m->nodes[node].child = next;
            }
            node = next;
        }
        if (node && m->nodes[node].token < 0) m->nodes[node].token = i; /* the same text twice: the first */
    }
}

/* "added_tokens": [{"id", "content", "special", "normalized", "lstrip", "rstrip", "single_word"}], added as
 * AddedVocabulary::add_tokens does (tokenizer/added_vocabulary.rs): the id is the one the content already
 * has (an added token before it, or the model's vocab), else the next one after the model's vocab, in
 * the list's order. (HF only warns when that differs from the file's "id"; so does gna, by silence.)
 * "normalized" tokens are matched in the normalized text, in their normalized form. */
static int read_added_tokens(Tokenizer *t, const JsonValue *list) {
    if (!list || list->type == JSON_NULL) return GNA_OK;
    if (list->type != JSON_ARRAY) return bad_input(t->path, "\"added_tokens\" must be an array");
    const char *what = "added_tokens";
    size_t id_limit = (size_t)(t->n_ids > t->vocab_size ? t->n_ids : t->vocab_size) + list->length + 1;
    int *entry_of_id = checked_malloc(sizeof(int) * id_limit);
    for (size_t i = 0; i < id_limit; i++) entry_of_id[i] = -1;
    TextMap content_ids;
    text_map_init(&content_ids, list->length);
    text_map_init(&t->special_contents, list->length);
    t->added = checked_calloc(list->length + 1, sizeof(AddedToken));
    int next_id = t->vocab_size, status = GNA_OK;
    Bytes normalized = {0};
    for (const JsonValue *a = list->first; a && status == GNA_OK; a = a->next) {
        const JsonValue *content;
        int special, is_normalized, lstrip, rstrip, single_word;
        if ((status = tj_string(t, a, what, "content", 1, &content)) || (status = tj_bool(t, a, what, "special", 0, &special)) ||
            (status = tj_bool(t, a, what, "normalized", !special, &is_normalized)) ||
            (status = tj_bool(t, a, what, "lstrip", 0, &lstrip)) || (status = tj_bool(t, a, what, "rstrip", 0, &rstrip)) ||
            (status = tj_bool(t, a, what, "single_word", 0, &single_word)))
            break;
        if (single_word) {
            status = bad_input(t->path, "added token \"%.80s\": single_word is not supported", content->string);
            break;
        }
        if (content->length == 0) continue;
        int id = text_map_get(&content_ids, content->string, content->length);
        if (id >= 0) {
            const AddedToken *old = &t->added[entry_of_id[id]];
            if (old->special == special && old->normalized == is_normalized && old->lstrip == lstrip && old->rstrip == rstrip)
                continue; /* the same token again */
        }
        if (id < 0) id = text_map_get(&t->vocab, content->string, content->length);
        if (id < 0) id = next_id++;
        const char *raw = arena_text(&t->store, content->string, content->length);
        AddedToken token = {id, raw, content->length, special, is_normalized, lstrip, rstrip};
        if (is_normalized && t->n_normalizers > 0) {
            normalized.length = 0;
            normalize_text(t, raw, content->length, &normalized);
            token.content = arena_text(&t->store, normalized.data ? normalized.data : "", normalized.length);
            token.length = normalized.length;
        }
        text_map_put(&content_ids, raw, content->length, id);
        if (special) text_map_put(&t->special_contents, raw, content->length, id);
        if (entry_of_id[id] < 0) entry_of_id[id] = t->n_added++;
        t->added[entry_of_id[id]] = token;
    }
    free(normalized.data);
    free(entry_of_id);
    free(content_ids.slots);
    TRY(status);
    /* the added tokens' texts take their ids over for decoding (simple_id_to_token before the model's) */
    int largest = t->n_ids - 1;
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id > largest) largest = t->added[i].id;
    if (largest + 1 > t->n_ids) {
        t->id_text = checked_realloc(t->id_text, sizeof(char *) * (size_t)(largest + 1));
        t->id_length = checked_realloc(t->id_length, sizeof(uint32_t) * (size_t)(largest + 1));
        for (int id = t->n_ids; id <= largest; id++) {
            t->id_text[id] = NULL;
            t->id_length[id] = 0;
        }
        t->n_ids = largest + 1;
    }
    for (int i = 0; i < t->n_added; i++) {
        t->id_text[t->added[i].id] = t->added[i].content;
        t->id_length[t->added[i].id] = (uint32_t)t->added[i].length;
    }
    return GNA_OK;
}

static void free_tokenizer(Tokenizer *t) {
    free_json(&t->store);
    free(t->vocab.slots);
    free(t->merges.slots);
    free(t->added);
    free(t->raw_added.nodes);
    free(t->normalized_added.nodes);
    free(t->special_contents.slots);
    free(t->id_text);
    free(t->id_length);
    free(t->normalizers);
    free(t->pre_tokenizers);
    free(t->prefix);
    free(t->suffix);
    free(t->decoders);
    memset(t, 0, sizeof *t);
}

static int read_tokenizer(Tokenizer *t, const JsonValue *root) {
    if (root->type != JSON_OBJECT) return bad_input(t->path, "not a tokenizer.json: the document is not an object");
    const JsonValue *v = json_get(root, "version");
    if (v && (v->type != JSON_STRING || strcmp(v->string, "1.0") != 0))
        return bad_input(t->path, "unknown tokenizer version (gna reads version \"1.0\")");
    if ((v = json_get(root, "truncation")) && v->type != JSON_NULL)
        return bad_input(t->path, "\"truncation\" is set; gna does not truncate (set it to null)");
    if ((v = json_get(root, "padding")) && v->type != JSON_NULL)
        return bad_input(t->path, "\"padding\" is set; gna does not pad (set it to null)");
    if (!json_get(root, "model")) return bad_input(t->path, "not a tokenizer.json: \"model\" is missing");
    const JsonValue *added = json_get(root, "added_tokens");
    TRY(read_bpe(t, json_get(root, "model"), added && added->type == JSON_ARRAY ? added->length : 0));
    if ((v = json_get(root, "normalizer")) && v->type != JSON_NULL) TRY(read_normalizer(t, v));
    TRY(read_added_tokens(t, added));
    if ((v = json_get(root, "pre_tokenizer")) && v->type != JSON_NULL) TRY(read_pre_tokenizer(t, v));
    if ((v = json_get(root, "post_processor")) && v->type != JSON_NULL) TRY(read_post_processor(t, v));
    if ((v = json_get(root, "decoder")) && v->type != JSON_NULL) {
        t->has_decoder = 1;
        TRY(read_decoder(t, v));
    }
    build_added_matcher(t, &t->raw_added, 0);
    build_added_matcher(t, &t->normalized_added, 1);
    return GNA_OK;
}

/* Read a tokenizer.json. On failure the half-built tokenizer still needs free_tokenizer. */
static int build_tokenizer(Tokenizer *t, const char *path) {
    memset(t, 0, sizeof *t);
    t->path = arena_text(&t->store, path, strlen(path));
    make_byte_map(t);
    JsonDocument doc;
    TRY(load_json(&doc, path));
    int status = read_tokenizer(t, doc.root);
    free_json(&doc);
    return status;
}

/* ---- encoding */

typedef struct {
    const char *text;
    size_t length;
    int id;       /* >= 0: an added token, cut out already; -1: text still to tokenize */
    int at_start; /* begins at the first byte of the caller's text (Metaspace's prepend_scheme "first") */
} Piece;

typedef struct {
    Piece *items;
    int n;
    size_t capacity;
} Pieces;

static void pieces_add(Pieces *p, const char *text, size_t length, int id, int at_start) {
    if (length == 0) return;
    p->items = grow_array(p->items, p->n, &p->capacity, sizeof *p->items);
    p->items[p->n++] = (Piece){text, length, id, at_start};
}

typedef struct {
    size_t start, end;
    int match;
} Span;

typedef struct {
    int id, previous, next; /* a token of a word during BPE; previous, next: neighbours' indices, -1 at the ends */
    size_t length;          /* bytes; 0 once merged into its left neighbour */
} Symbol;

typedef struct {
    int rank, position, merged; /* merge the symbol at `position` with its right neighbour into `merged` */
} MergeCandidate;

/* Everything one encode or decode call works in, reused from piece to piece. */
typedef struct {
    Arena scratch; /* texts made along the way */
    Bytes text;
    uint32_t *chars; /* a piece as code points, their classes and byte offsets (offsets[n] = length) */
    unsigned char *classes;
    size_t *offsets, chars_capacity;
    Span *spans;
    int n_spans;
    size_t spans_capacity;
    Symbol *symbols;
    int n_symbols;
    size_t symbols_capacity;
    MergeCandidate *heap;
    int n_heap;
    size_t heap_capacity;
    int *ids;
    int n_ids;
    size_t ids_capacity;
} Work;

static void free_work(Work *w) {
    free_json(&w->scratch);
    free(w->text.data);
    free(w->chars);
    free(w->classes);
    free(w->offsets);
    free(w->spans);
    free(w->symbols);
    free(w->heap);
    free(w->ids);
}

static void add_span(Work *w, size_t start, size_t end, int match) {
    if (start == end) return;
    w->spans = grow_array(w->spans, w->n_spans, &w->spans_capacity, sizeof *w->spans);
    w->spans[w->n_spans++] = (Span){start, end, match};
}

/* the run of characters that is_space accepts and that ends at text[end] starts here (well-formed
 * UTF-8; with is_white_space, regex \s*$) */
static size_t space_run_before(const char *text, size_t end, int (*is_space)(uint32_t)) {
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && ((unsigned char)text[start] & 0xC0) == 0x80) start--;
        size_t at = start;
        if (!is_space(utf8_next(text, &at))) break;
        end = start;
    }
    return end;
}

/* the whitespace run that starts at text[start] ends here (regex ^\s*) */
static size_t white_space_after(const char *text, size_t start, size_t n) {
    while (start < n) {
        size_t at = start;
        if (!is_white_space(utf8_next(text, &at))) break;
        start = at;
    }
    return start;
}

/* Cut the added tokens of m out of a piece (AddedVocabulary::find_matches): at the leftmost place where
 * one matches, the longest one (daachorse's LeftmostLongest); lstrip and rstrip widen the cut over the
 * white space beside the token. The search goes on from the end of the token itself. */
static void cut_added(const Tokenizer *t, const AddedMatcher *m, const Piece *piece, Pieces *out) {
    const char *s = piece->text;
    size_t n = piece->length, done = 0;
    if (m->nodes[0].child == 0) {
        pieces_add(out, s, n, -1, piece->at_start);
        return;
    }
    for (size_t at = 0; at < n;) {
        const AddedToken *found = NULL; /* the last token ending on the walk down: the longest */
        size_t k = at;
        for (int node = trie_child(m, 0, (unsigned char)s[k]); node; node = ++k < n ? trie_child(m, node, (unsigned char)s[k]) : 0)
            if (m->nodes[node].token >= 0) found = &t->added[m->nodes[node].token];
        if (!found) {
            at++;
            continue;
        }
        size_t start = at, stop = at + found->length;
        if (found->lstrip) {
            start = space_run_before(s, start, is_white_space);
            if (start < done) start = done;
        }
        if (found->rstrip) stop = white_space_after(s, stop, n);
        if (done < start) pieces_add(out, s + done, start - done, -1, piece->at_start && done == 0);
        pieces_add(out, s + start, stop - start, found->id, 0);
        done = stop;
        at += found->length;
    }
    if (done < n) pieces_add(out, s + done, n - done, -1, piece->at_start && done == 0);
}

/* every place `find` occurs in text[0..n), left to right, never overlapping */
static void add_text_spans(Work *w, const char *text, size_t n, const char *find, size_t length) {
    size_t done = 0;
    for (size_t at = 0; length <= n && at <= n - length;) {
        if (memcmp(text + at, find, length) == 0) {
            add_span(w, done, at, 0);
            add_span(w, at, at + length, 1);
            at += length;
            done = at;
        } else {
            at++;
        }
    }
    add_span(w, done, n, 0);
}

/* ---- NFC, the canonical composition normalizer (normalizers/unicode.rs: NormalizedString::nfc)
 *
 * HF tokenizers runs `nfc()` of the crate unicode-normalization-alignments 0.1.12 (a fork of
 * unicode-normalization 0.1.11 that also keeps offsets, which gna does not need): the algorithm of
 * UAX #15, Unicode Normalization Forms, on the crate's Unicode 9.0 tables, which is why the tables
 * above are cut back to 9.0 (a mark assigned later has class 0 and no mapping there):
 *   1. canonical decomposition (UAX #15 section 3, Unicode ch. 3.7 D68): each code point replaced
 *      by its decomposition mapping, recursively; Hangul syllables by the algorithm of Unicode
 *      ch. 3.12 (Conjoining Jamo Behavior);
 *   2. canonical ordering (ch. 3.11 D109): each run of code points of non-zero combining class
 *      sorted by class, stably;
 *   3. canonical composition (ch. 3.11 D117): each code point C after the last starter S is joined
 *      to it when C is not blocked from S (nothing between them, or the last code point between
 *      them has a non-zero class below C's) and S C has a primary composite; L V and LV T Hangul
 *      jamo are joined by the algorithm (only T from U+11A8: U+11A7 is no trailing consonant).
 * The crate's Recompositions iterator is this step as a stream; the result is the same. */
enum { HANGUL_S = 0xAC00, HANGUL_L = 0x1100, HANGUL_V = 0x1161, HANGUL_T = 0x11A7, HANGUL_L_COUNT = 19,
       HANGUL_V_COUNT = 21, HANGUL_T_COUNT = 28, HANGUL_N_COUNT = HANGUL_V_COUNT * HANGUL_T_COUNT,
       HANGUL_S_COUNT = HANGUL_L_COUNT * HANGUL_N_COUNT };

/* from the appendix's tables */
static int combining_class(uint32_t c);
static const uint32_t *canonical_decomposition(uint32_t c); /* the row {c, first, second} of its mapping, or NULL */
static uint32_t primary_composite(uint32_t first, uint32_t second); /* 0: none */

typedef struct {
    uint32_t *items;
    int n;
    size_t capacity;
} CodePoints;

static void canonical_decompose(uint32_t c, CodePoints *out) {
    const uint32_t *mapping;
    if (c - HANGUL_S < HANGUL_S_COUNT) {
        uint32_t s = c - HANGUL_S, t = s % HANGUL_T_COUNT;
        canonical_decompose(HANGUL_L + s / HANGUL_N_COUNT, out);
        canonical_decompose(HANGUL_V + s % HANGUL_N_COUNT / HANGUL_T_COUNT, out);
        if (t > 0) canonical_decompose(HANGUL_T + t, out);
    } else if ((mapping = canonical_decomposition(c)) != NULL) {
        canonical_decompose(mapping[1], out);
        if (mapping[2]) canonical_decompose(mapping[2], out);
    } else {
        out->items = grow_array(out->items, out->n, &out->capacity, sizeof *out->items);
        out->items[out->n++] = c;
    }
}

/* NFC of well-formed UTF-8 text[0..n), appended to out */
static void nfc_text(const char *text, size_t n, Bytes *out) {
    size_t at = 0;
    while (at < n && (unsigned char)text[at] < 0x80) at++;
    if (at == n) { /* ASCII is its own NFC */
        bytes_add(out, text, n);
        return;
    }
    CodePoints c = {0};
    for (at = 0; at < n;) canonical_decompose(utf8_next(text, &at), &c);
    /* canonical ordering: insertion sort of each run of non-starters, which is stable */
    for (int i = 1; i < c.n; i++) {
        uint32_t x = c.items[i];
        int x_class = combining_class(x), j = i;
        if (x_class == 0) continue;
        while (j > 0 && combining_class(c.items[j - 1]) > x_class) {
            c.items[j] = c.items[j - 1];
            j--;
        }
        c.items[j] = x;
    }
    /* canonical composition, in place: c.items[0..kept) is the result so far */
    int kept = 0, starter = -1, last_class = 0;
    for (int i = 0; i < c.n; i++) {
        uint32_t x = c.items[i], composite;
        int x_class = combining_class(x);
        int blocked = starter >= 0 && kept > starter + 1 && last_class >= x_class;
        if (starter >= 0 && !blocked && (composite = primary_composite(c.items[starter], x)) != 0) {
            c.items[starter] = composite;
            continue;
        }
        if (x_class == 0) starter = kept;
        last_class = x_class;
        c.items[kept++] = x;
    }
    for (int i = 0; i < kept; i++) bytes_add_char(out, c.items[i]);
    free(c.items);
}

/* The normalizer on one piece (Prepend: normalizers/prepend.rs, only to a non-empty text; Replace:
 * normalizers/replace.rs, a literal pattern, leftmost occurrences; NFC: normalizers/unicode.rs). */
static void normalize_text(const Tokenizer *t, const char *text, size_t n, Bytes *out) {
    Bytes a = {0}, b = {0};
    bytes_add(&a, text, n);
    for (int i = 0; i < t->n_normalizers; i++) {
        const NormalizerStep *step = &t->normalizers[i];
        b.length = 0;
        if (step->kind == NORMALIZE_PREPEND) {
            if (a.length > 0) bytes_add(&b, step->text, step->length);
            bytes_add(&b, a.data, a.length);
        } else if (step->kind == NORMALIZE_NFC) {
            nfc_text(a.data ? a.data : "", a.length, &b);
        } else {
            size_t done = 0;
            for (size_t at = 0; step->length <= a.length && at <= a.length - step->length;) {
                if (memcmp(a.data + at, step->text, step->length) == 0) {
                    bytes_add(&b, a.data + done, at - done);
                    bytes_add(&b, step->content, step->content_length);
                    at += step->length;
                    done = at;
                } else {
                    at++;
                }
            }
            bytes_add(&b, a.data + done, a.length - done);
        }
        Bytes swap = a;
        a = b;
        b = swap;
    }
    bytes_add(out, a.data, a.length);
    free(a.data);
    free(b.data);
}

/* ---- the split regexes, by hand
 *
 * Each matcher says how many characters its regex matches at chars[i] (0: none), trying the
 * alternatives in order as a backtracking engine (Oniguruma, which HF tokenizers uses) does. \s, \p{L}
 * and \p{N} are the Unicode properties; ' ' is only U+0020. find_iter moves one character on where
 * nothing matches, so no character is ever left out of a match for these patterns. */
enum { CHAR_LETTER = 1, CHAR_NUMBER = 2, CHAR_SPACE = 4, CHAR_NEWLINE = 8 };

/* end of the run of characters with one of `classes` from i */
static size_t run_of(const unsigned char *classes, size_t n, size_t i, unsigned char wanted) {
    while (i < n && (classes[i] & wanted)) i++;
    return i;
}
/* end of the run of characters with none of `classes` from i */
static size_t run_without(const unsigned char *classes, size_t n, size_t i, unsigned char unwanted) {
    while (i < n && !(classes[i] & unwanted)) i++;
    return i;
}

/* 's|'t|'re|'ve|'m|'ll|'d, or with (?i:...) in ASCII case only: HF's Oniguruma does not fold U+017F
 * (long s) to s here, as checked against tokenizers 0.23 ("x'ſ" gives x ' ſ). */
static size_t match_contraction(const uint32_t *c, size_t n, size_t i, int ignore_case) {
    if (c[i] != '\'' || i + 1 >= n) return 0;
    uint32_t a = c[i + 1], b = i + 2 < n ? c[i + 2] : 0;
    if (ignore_case) {
        if (a >= 'A' && a <= 'Z') a += 32;
        if (b >= 'A' && b <= 'Z') b += 32;
    }
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (((a == 'r' || a == 'v') && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

/* \s+(?!\S)|\s+ at a run of white space [i, end): the run, less its last character when a non-space
 * follows it and the run is longer than one */
static size_t match_white_space(size_t n, size_t i, size_t end) {
    if (end == n || end - i == 1) return end - i;
    return end - 1 - i;
}

/* Llama-3 (the Split of its tokenizer.json):
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} | ` ?[^\s\p{L}\p{N}]+[\r\n]*`
 *   | \s*[\r\n]+ | \s+(?!\S) | \s+ */
static size_t match_llama3(const uint32_t *c, const unsigned char *k, size_t n, size_t i) {
    size_t m = match_contraction(c, n, i, 1);
    if (m) return m;
    if (k[i] & CHAR_LETTER) return run_of(k, n, i, CHAR_LETTER) - i;
    if (!(k[i] & (CHAR_NEWLINE | CHAR_LETTER | CHAR_NUMBER)) && i + 1 < n && (k[i + 1] & CHAR_LETTER))
        return run_of(k, n, i + 1, CHAR_LETTER) - i;
    if (k[i] & CHAR_NUMBER) {
        size_t end = i;
        while (end < n && end - i < 3 && (k[end] & CHAR_NUMBER)) end++;
        return end - i;
    }
    size_t j = c[i] == ' ' ? i + 1 : i;
    if (j < n && !(k[j] & (CHAR_SPACE | CHAR_LETTER | CHAR_NUMBER))) {
        size_t end = run_without(k, n, j, CHAR_SPACE | CHAR_LETTER | CHAR_NUMBER);
        return run_of(k, n, end, CHAR_NEWLINE) - i;
    }
    if (k[i] & CHAR_SPACE) {
        /* \s*[\r\n]+: the white space up to and with its last \r or \n */
        size_t end = run_of(k, n, i, CHAR_SPACE), last = end;
        while (last > i && !(k[last - 1] & CHAR_NEWLINE)) last--;
        if (last > i) return last - i;
        return match_white_space(n, i, end);
    }
    return 0;
}

/* GPT-2 (ByteLevel with use_regex, pre_tokenizers/byte_level.rs):
 *   's|'t|'re|'ve|'m|'ll|'d | ` ?\p{L}+` | ` ?\p{N}+` | ` ?[^\s\p{L}\p{N}]+` | \s+(?!\S) | \s+ */
static size_t match_gpt2(const uint32_t *c, const unsigned char *k, size_t n, size_t i) {
    size_t m = match_contraction(c, n, i, 0);
    if (m) return m;
    size_t j = c[i] == ' ' ? i + 1 : i;
    if (j < n && (k[j] & CHAR_LETTER)) return run_of(k, n, j, CHAR_LETTER) - i;
    if (j < n && (k[j] & CHAR_NUMBER)) return run_of(k, n, j, CHAR_NUMBER) - i;
    if (j < n && !(k[j] & (CHAR_SPACE | CHAR_LETTER | CHAR_NUMBER)))
        return run_without(k, n, j, CHAR_SPACE | CHAR_LETTER | CHAR_NUMBER) - i;
    if (k[i] & CHAR_SPACE) return match_white_space(n, i, run_of(k, n, i, CHAR_SPACE));
    return 0;
}

/* [0-9][0-9][0-9]: ASCII digits only */
static size_t match_three_digits(const uint32_t *c, size_t n, size_t i) {
    for (size_t d = 0; d < 3; d++)
        if (i + d >= n || c[i + d] < '0' || c[i + d] > '9') return 0;
    return 3;
}

/* text[0..n) as spans: what `find` matches (match = 1) and what lies between (Pattern::find_matches,
 * tokenizer/pattern.rs). A character class matches each character on its own. */
static void find_spans(Work *w, const Finder *find, const char *text, size_t n) {
    w->n_spans = 0;
    if (find->kind == FIND_TEXT) {
        add_text_spans(w, text, n, find->text, find->length);
        return;
    }
    if (w->chars_capacity < n + 1) {
        w->chars_capacity = 2 * n + 16;
        free(w->chars);
        free(w->classes);
        free(w->offsets);
        w->chars = checked_malloc(sizeof(uint32_t) * w->chars_capacity);
        w->classes = checked_malloc(w->chars_capacity);
        w->offsets = checked_malloc(sizeof(size_t) * w->chars_capacity);
    }
    size_t count = 0;
    for (size_t at = 0; at < n;) {
        w->offsets[count] = at;
        uint32_t c = utf8_next(text, &at);
        w->chars[count] = c;
        w->classes[count++] = (unsigned char)((is_letter(c) ? CHAR_LETTER : 0) | (is_number(c) ? CHAR_NUMBER : 0) |
                                              (is_white_space(c) ? CHAR_SPACE : 0) | (c == '\r' || c == '\n' ? CHAR_NEWLINE : 0));
    }
    w->offsets[count] = n;
    size_t done = 0; /* in characters */
    for (size_t i = 0; i < count;) {
        size_t m;
        switch (find->kind) {
        case FIND_CHARACTER: m = w->chars[i] == find->character; break;
        case FIND_PUNCTUATION: m = is_punctuation(w->chars[i]); break;
        case FIND_NUMBER: m = (w->classes[i] & CHAR_NUMBER) != 0; break;
        case FIND_LLAMA3: m = match_llama3(w->chars, w->classes, count, i); break;
        case FIND_GPT2: m = match_gpt2(w->chars, w->classes, count, i); break;
        default: m = match_three_digits(w->chars, count, i); break;
        }
        if (m == 0) {
            i++;
            continue;
        }
        add_span(w, w->offsets[done], w->offsets[i], 0);
        add_span(w, w->offsets[i], w->offsets[i + m], 1);
        i += m;
        done = i;
    }
    add_span(w, w->offsets[done], n, 0);
}

/* Split a piece at what `find` finds, treating the finds by `behavior` (NormalizedString::split). */
static void split_piece(Work *w, const Piece *p, const Finder *find, SplitBehavior behavior, int invert, Pieces *out) {
    find_spans(w, find, p->text, p->length);
    Span *s = w->spans;
    int n = w->n_spans, kept = 0;
    if (invert)
        for (int i = 0; i < n; i++) s[i].match = !s[i].match;
    /* fold the spans into the pieces, in place: s[0..kept) */
    if (behavior == SPLIT_MERGED_WITH_NEXT) {
        /* from the right: a find joins the piece after it, if that is not a find itself */
        int previous_match = 0, first = n;
        for (int i = n - 1; i >= 0; i--) {
            if (s[i].match && !previous_match && first < n) s[first].start = s[i].start;
            else s[--first] = s[i];
            previous_match = s[i].match;
        }
        memmove(s, s + first, sizeof(Span) * (size_t)(n - first));
        kept = n - first;
        for (int i = 0; i < kept; i++) s[i].match = 0;
    } else {
        int previous_match = 0;
        for (int i = 0; i < n; i++) {
            Span span = s[i];
            int join = kept > 0 && ((behavior == SPLIT_CONTIGUOUS && span.match == previous_match) ||
                                    (behavior == SPLIT_MERGED_WITH_PREVIOUS && span.match && !previous_match));
            previous_match = span.match;
            if (join) {
                s[kept - 1].end = span.end;
            } else {
                if (behavior != SPLIT_REMOVED) span.match = 0;
                s[kept++] = span;
            }
        }
    }
    for (int i = 0; i < kept; i++)
        if (!s[i].match) pieces_add(out, p->text + s[i].start, s[i].end - s[i].start, -1, p->at_start && s[i].start == 0);
}

/* One pre-tokenizer step over every piece that is still text. */
static void pre_tokenize(const Tokenizer *t, Work *w, const PreTokenizerStep *step, const Pieces *in, Pieces *out) {
    Finder gpt2 = {FIND_GPT2, NULL, 0, 0}, metaspace = {FIND_CHARACTER, NULL, 0, step->replacement};
    Pieces parts = {0};
    for (int i = 0; i < in->n; i++) {
        const Piece *p = &in->items[i];
        if (p->id >= 0) {
            pieces_add(out, p->text, p->length, p->id, 0);
            continue;
        }
        if (step->kind == PRE_SPLIT) {
            split_piece(w, p, &step->find, step->behavior, step->invert, out);
        } else if (step->kind == PRE_BYTE_LEVEL) {
            /* ByteLevel (pre_tokenizers/byte_level.rs): a space in front if asked and missing, the GPT-2
             * regex if use_regex, then every byte as its character of the byte map */
            Piece q = *p;
            if (step->add_prefix_space && q.text[0] != ' ') {
                char *spaced = arena_alloc(&w->scratch, q.length + 1);
                spaced[0] = ' ';
                memcpy(spaced + 1, q.text, q.length);
                q.text = spaced;
                q.length++;
            }
            parts.n = 0;
            if (step->use_regex) split_piece(w, &q, &gpt2, SPLIT_ISOLATED, 0, &parts);
            else pieces_add(&parts, q.text, q.length, -1, q.at_start);
            for (int k = 0; k < parts.n; k++) {
                const Piece *part = &parts.items[k];
                w->text.length = 0;
                for (size_t b = 0; b < part->length; b++) bytes_add_char(&w->text, t->byte_char[(unsigned char)part->text[b]]);
                pieces_add(out, arena_text(&w->scratch, w->text.data, w->text.length), w->text.length, -1, part->at_start);
            }
        } else {
            /* Metaspace (pre_tokenizers/metaspace.rs): spaces become the replacement, which goes in
             * front too (always, or only in the piece at the start of the text), then a split before each */
            char replacement[4];
            size_t r = utf8_encode(step->replacement, replacement);
            w->text.length = 0;
            size_t at = 0;
            for (size_t start = 0; at < p->length; start = at) {
                uint32_t c = utf8_next(p->text, &at);
                if (c == ' ') bytes_add(&w->text, replacement, r);
                else bytes_add(&w->text, p->text + start, at - start);
            }
            int starts_with = w->text.length >= r && memcmp(w->text.data, replacement, r) == 0;
            Bytes prefixed = {0};
            if (!starts_with && (step->prepend == PREPEND_ALWAYS || (step->prepend == PREPEND_FIRST && p->at_start)))
                bytes_add(&prefixed, replacement, r);
            bytes_add(&prefixed, w->text.data, w->text.length);
            Piece q = {arena_text(&w->scratch, prefixed.data, prefixed.length), prefixed.length, -1, p->at_start};
            free(prefixed.data);
            if (step->split) split_piece(w, &q, &metaspace, SPLIT_MERGED_WITH_NEXT, 0, out);
            else pieces_add(out, q.text, q.length, -1, q.at_start);
        }
    }
    free(parts.items);
}

static void add_id(Work *w, int id) {
    w->ids = grow_array(w->ids, w->n_ids, &w->ids_capacity, sizeof *w->ids);
    w->ids[w->n_ids++] = id;
}

static void add_symbol(Work *w, int id, size_t length) {
    w->symbols = grow_array(w->symbols, w->n_symbols, &w->symbols_capacity, sizeof *w->symbols);
    int i = w->n_symbols++;
    w->symbols[i] = (Symbol){id, i - 1, -1, length};
    if (i > 0) w->symbols[i - 1].next = i;
}

/* a min-heap of merge candidates by (rank, position): the lowest-ranked merge first, the leftmost of
 * equal ones (Merge's Ord, models/bpe/word.rs) */
static int candidate_before(const MergeCandidate *a, const MergeCandidate *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->position < b->position;
}

static void push_candidate(Work *w, const Tokenizer *t, int position) {
    const Symbol *s = &w->symbols[position];
    if (s->next < 0) return;
    const PairSlot *slot = pair_map_slot(&t->merges, s->id, w->symbols[s->next].id);
    if (slot->key == EMPTY_PAIR) return;
    w->heap = grow_array(w->heap, w->n_heap, &w->heap_capacity, sizeof *w->heap);
    int i = w->n_heap++;
    MergeCandidate c = {slot->rank, position, slot->merged};
    while (i > 0 && candidate_before(&c, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = c;
}

static MergeCandidate pop_candidate(Work *w) {
    MergeCandidate top = w->heap[0], last = w->heap[--w->n_heap];
    int i = 0;
    for (;;) {
        int child = 2 * i + 1;
        if (child >= w->n_heap) break;
        if (child + 1 < w->n_heap && candidate_before(&w->heap[child + 1], &w->heap[child])) child++;
        if (!candidate_before(&w->heap[child], &last)) break;
        w->heap[i] = w->heap[child];
        i = child;
    }
    if (w->n_heap > 0) w->heap[i] = last;
    return top;
}

/* BPE on one piece (BPE::tokenize_with_cache, merge_word; Word::merge_all in models/bpe/word.rs).
 * With ignore_merges a piece that is a token itself is that token. Otherwise each character is a
 * symbol: its token, else its bytes as <0xNN> tokens (byte_fallback), else unk (one for a run of unknown
 * characters with fuse_unk), else nothing. Then, repeatedly, the lowest-ranked merge among neighbouring
 * pairs, the leftmost first, joins them. A candidate whose pair has changed since it was queued is
 * dropped, judged as HF judges it: by the merged id the pair would now give. */
static void bpe(const Tokenizer *t, Work *w, const char *text, size_t n) {
    if (t->ignore_merges) {
        int id = text_map_get(&t->vocab, text, n);
        if (id >= 0) {
            add_id(w, id);
            return;
        }
    }
    w->n_symbols = 0;
    int unk_pending = 0;
    size_t unk_length = 0;
    for (size_t at = 0; at < n;) {
        size_t start = at;
        utf8_next(text, &at);
        int id = text_map_get(&t->vocab, text + start, at - start);
        if (id >= 0) {
            if (unk_pending) add_symbol(w, t->unk_id, unk_length);
            unk_pending = 0;
            add_symbol(w, id, at - start);
            continue;
        }
        if (t->byte_fallback) {
            int all = 1;
            for (size_t b = start; b < at; b++) all &= t->byte_ids[(unsigned char)text[b]] >= 0;
            if (all) { /* (a pending unk waits, as in HF) */
                for (size_t b = start; b < at; b++) add_symbol(w, t->byte_ids[(unsigned char)text[b]], 1);
                continue;
            }
        }
        if (t->unk_id >= 0) {
            if (unk_pending && t->fuse_unk) {
                unk_length += at - start;
            } else {
                if (unk_pending) add_symbol(w, t->unk_id, unk_length);
                unk_pending = 1;
                unk_length = at - start;
            }
        }
    }
    if (unk_pending) add_symbol(w, t->unk_id, unk_length);

    Symbol *s = w->symbols;
    w->n_heap = 0;
    for (int i = 0; i + 1 < w->n_symbols; i++) push_candidate(w, t, i);
    while (w->n_heap > 0) {
        MergeCandidate top = pop_candidate(w);
        s = w->symbols;
        Symbol *left = &s[top.position];
        if (left->length == 0 || left->next < 0) continue;
        int right = left->next;
        const PairSlot *slot = pair_map_slot(&t->merges, left->id, s[right].id);
        if (slot->key == EMPTY_PAIR || slot->merged != top.merged) continue;
        left->id = top.merged;
        left->length += s[right].length;
        left->next = s[right].next;
        s[right].length = 0;
        if (left->next >= 0) s[left->next].previous = top.position;
        if (left->previous >= 0) push_candidate(w, t, left->previous);
        push_candidate(w, t, top.position);
    }
    for (int i = 0; i < w->n_symbols; i++)
        if (w->symbols[i].length > 0) add_id(w, w->symbols[i].id);
}

/* text -> ids (TokenizerImpl::encode; the steps are at the top of this section). `where` names the text
 * in messages. The ids land in w->ids. */
static int encode(const Tokenizer *t, Work *w, const char *where, const char *text, size_t n, int add_special) {
    size_t valid = utf8_valid_prefix(text, n);
    if (valid < n)
        return bad_input(where, "not valid UTF-8 at byte %zu (0x%02X); gna tokenizes UTF-8 text only", valid, (unsigned char)text[valid]);
    Pieces a = {0}, b = {0};
    Piece whole = {text, n, -1, 1};
    if (n > 0) cut_added(t, &t->raw_added, &whole, &a);
    for (int i = 0; i < a.n; i++) {
        Piece *p = &a.items[i];
        if (p->id >= 0) {
            pieces_add(&b, p->text, p->length, p->id, 0);
            continue;
        }
        if (t->n_normalizers == 0) {
            cut_added(t, &t->normalized_added, p, &b);
            continue;
        }
        w->text.length = 0;
        normalize_text(t, p->text, p->length, &w->text);
        Piece q = {arena_text(&w->scratch, w->text.data ? w->text.data : "", w->text.length), w->text.length, -1, p->at_start};
        if (q.length > 0) cut_added(t, &t->normalized_added, &q, &b);
    }
    for (int s = 0; s < t->n_pre_tokenizers; s++) {
        Pieces swap = a;
        a = b;
        b = swap;
        b.n = 0;
        pre_tokenize(t, w, &t->pre_tokenizers[s], &a, &b);
    }
    w->n_ids = 0;
    if (add_special)
        for (int i = 0; i < t->n_prefix; i++) add_id(w, t->prefix[i]);
    for (int i = 0; i < b.n; i++) {
        if (b.items[i].id >= 0) add_id(w, b.items[i].id);
        else bpe(t, w, b.items[i].text, b.items[i].length);
    }
    if (add_special)
        for (int i = 0; i < t->n_suffix; i++) add_id(w, t->suffix[i]);
    free(a.items);
    free(b.items);
    return GNA_OK;
}

/* ---- decoding */

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

typedef struct {
    const char *text;
    size_t length;
} Text;

/* The decoders of the chain: each makes the list `made` of the list `tokens` and returns its length. */

/* decoders: ByteLevel (pre_tokenizers/byte_level.rs) */
static int decode_byte_level(const Tokenizer *t, Work *w, Bytes *b, const Text *tokens, int count, Text *made) {
    int n_made = 0;
    /* each token's characters back to bytes (a token with a character outside the map as its
     * UTF-8), all joined, then read as UTF-8 with replacement characters */
    b->length = 0;
    for (int i = 0; i < count; i++) {
        size_t start = b->length, at = 0;
        int mapped = 1;
        while (at < tokens[i].length && mapped) {
            uint32_t c = utf8_next(tokens[i].text, &at);
            mapped = c < 0x144 && t->char_byte[c] >= 0;
            char byte = (char)t->char_byte[mapped ? c : 0];
            if (mapped) bytes_add(b, &byte, 1);
        }
        if (!mapped) {
            b->length = start;
            bytes_add(b, tokens[i].text, tokens[i].length);
        }
    }
    w->text.length = 0;
    bytes_add_lossy(&w->text, b->data ? b->data : "", b->length);
    made[n_made++] = (Text){arena_text(&w->scratch, w->text.data ? w->text.data : "", w->text.length), w->text.length};
    return n_made;
}

/* normalizers/replace.rs, as a decoder: in each token */
static int decode_replace(const DecoderStep *step, Work *w, const Text *tokens, int count, Text *made) {
    int n_made = 0;
    for (int i = 0; i < count; i++) {
        w->text.length = 0;
        const char *s0 = tokens[i].text;
        size_t done = 0, length = tokens[i].length;
        for (size_t at = 0; step->length <= length && at <= length - step->length;) {
            if (memcmp(s0 + at, step->text, step->length) == 0) {
                bytes_add(&w->text, s0 + done, at - done);
                bytes_add(&w->text, step->content, step->content_length);
                at += step->length;
                done = at;
            } else {
                at++;
            }
        }
        bytes_add(&w->text, s0 + done, length - done);
        made[n_made++] = (Text){arena_text(&w->scratch, w->text.data, w->text.length), w->text.length};
    }
    return n_made;
}

/* decoders/byte_fallback.rs: runs of <0xNN> tokens become their bytes as UTF-8, or one U+FFFD per byte
 * when the run is not valid UTF-8 */
static int decode_byte_fallback(Work *w, Bytes *b, const Text *tokens, int count, Text *made) {
    int n_made = 0;
    for (int i = 0; i <= count; i++) {
        int byte = -1;
        if (i < count && tokens[i].length == 6 && memcmp(tokens[i].text, "<0x", 3) == 0 && tokens[i].text[5] == '>') {
            /* u8::from_str_radix(&token[3..5], 16), which takes a '+' before one digit too */
            int high = hex_value(tokens[i].text[3]), low = hex_value(tokens[i].text[4]);
            if (high >= 0 && low >= 0) byte = 16 * high + low;
            else if (tokens[i].text[3] == '+' && low >= 0) byte = low;
        }
        if (byte >= 0) {
            char c = (char)byte;
            bytes_add(b, &c, 1);
            continue;
        }
        if (b->length > 0) {
            if (utf8_valid_prefix(b->data, b->length) == b->length) {
                made[n_made++] = (Text){arena_text(&w->scratch, b->data, b->length), b->length};
            } else {
                for (size_t k = 0; k < b->length; k++) made[n_made++] = (Text){"\xEF\xBF\xBD", 3};
            }
            b->length = 0;
        }
        if (i < count) made[n_made++] = tokens[i];
    }
    return n_made;
}

/* decoders/strip.rs: at most `start` leading and `stop` trailing characters */
static int decode_strip(const DecoderStep *step, const Text *tokens, int count, Text *made) {
    int n_made = 0;
    for (int i = 0; i < count; i++) {
        size_t first = 0, end = tokens[i].length, at = 0;
        for (int k = 0; k < step->start && at < end; k++) {
            if (utf8_next(tokens[i].text, &at) != step->character) break;
            first = at;
        }
        for (int k = 0; k < step->stop && end > first; k++) {
            size_t start = end - 1;
            while (start > 0 && ((unsigned char)tokens[i].text[start] & 0xC0) == 0x80) start--;
            size_t next = start;
            if (utf8_next(tokens[i].text, &next) != step->character) break;
            end = start;
        }
        made[n_made++] = (Text){tokens[i].text + first, end - first};
    }
    return n_made;
}

/* pre_tokenizers/metaspace.rs, as a decoder: the replacement is a space again, except in the first token,
 * where it goes (unless the scheme is "never") */
static int decode_metaspace(const DecoderStep *step, Work *w, const Text *tokens, int count, Text *made) {
    int n_made = 0;
    for (int i = 0; i < count; i++) {
        w->text.length = 0;
        for (size_t at = 0, start = 0; at < tokens[i].length; start = at) {
            uint32_t c = utf8_next(tokens[i].text, &at);
            if (c != step->character) bytes_add(&w->text, tokens[i].text + start, at - start);
            else if (!(i == 0 && step->start)) bytes_add(&w->text, " ", 1);
        }
        made[n_made++] = (Text){arena_text(&w->scratch, w->text.data ? w->text.data : "", w->text.length), w->text.length};
    }
    return n_made;
}

/* ids -> text (TokenizerImpl::decode): each id's token (an added token's text before the model's),
 * the special ones left out if asked, then the decoder chain over the list; with no decoder the tokens
 * joined by spaces. gna refuses ids that have no token, where HF drops them silently. */
static int decode(const Tokenizer *t, Work *w, const char *where, const int *ids, int n, int skip_special, Bytes *out) {
    Text *tokens = checked_malloc(sizeof(Text) * (size_t)(n + 1)), *made = checked_malloc(sizeof(Text) * (size_t)(n + 1));
    int count = 0;
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id < 0 || id >= t->n_ids || !t->id_text[id]) {
            free(tokens);
            free(made);
            return bad_input(where, "token id %d is not in the tokenizer (%s has ids 0 to %d)", id, t->path, t->n_ids - 1);
        }
        if (skip_special && text_map_get(&t->special_contents, t->id_text[id], t->id_length[id]) >= 0) continue;
        tokens[count++] = (Text){t->id_text[id], t->id_length[id]};
    }
    Bytes b = {0};
    for (int s = 0; s < t->n_decoders; s++) {
        const DecoderStep *step = &t->decoders[s];
        int n_made = 0;
        switch (step->kind) {
        case DECODE_BYTE_LEVEL: n_made = decode_byte_level(t, w, &b, tokens, count, made); break;
        case DECODE_REPLACE: n_made = decode_replace(step, w, tokens, count, made); break;
        case DECODE_BYTE_FALLBACK: n_made = decode_byte_fallback(w, &b, tokens, count, made); break;
        case DECODE_FUSE: /* decoders/fuse.rs */
            b.length = 0;
            for (int i = 0; i < count; i++) bytes_add(&b, tokens[i].text, tokens[i].length);
            made[n_made++] = (Text){arena_text(&w->scratch, b.data ? b.data : "", b.length), b.length};
            break;
        case DECODE_STRIP: n_made = decode_strip(step, tokens, count, made); break;
        case DECODE_METASPACE: n_made = decode_metaspace(step, w, tokens, count, made); break;
        }
        Text *swap = tokens;
        tokens = made;
        made = swap;
        count = n_made;
    }
    for (int i = 0; i < count; i++) {
        if (!t->has_decoder && i > 0) bytes_add(out, " ", 1);
        bytes_add(out, tokens[i].text, tokens[i].length);
    }
    if (!out->data) bytes_add(out, "", 0);
    free(b.data);
    free(tokens);
    free(made);
    return GNA_OK;
}

/* ---- the public API */

static int load_tokenizer_file(const char *path, gna_tokenizer **tokenizer) {
    Tokenizer *t = checked_malloc(sizeof *t);
    int status = build_tokenizer(t, path);
    if (status != GNA_OK) {
        free_tokenizer(t);
        free(t);
        return status;
    }
    *tokenizer = t;
    return GNA_OK;
}

int gna_tokenizer_load(const char *path, gna_tokenizer **tokenizer) {
    NEEDS(tokenizer, "gna_tokenizer_load: tokenizer is NULL");
    *tokenizer = NULL;
    NEEDS(path, "gna_tokenizer_load: path is NULL");
    CATCH_OUT_OF_MEMORY(load_tokenizer_file(path, tokenizer));
}

void gna_tokenizer_free(gna_tokenizer *tokenizer) {
    if (!tokenizer) return;
    free_tokenizer(tokenizer);
    free(tokenizer);
}

static int tokenize_text(const gna_tokenizer *tokenizer, const char *text, size_t length, int add_special, int **ids, int *n_ids) {
    Work w;
    memset(&w, 0, sizeof w);
    int status = encode(tokenizer, &w, "text", text, length, add_special);
    if (status == GNA_OK) {
        *ids = w.ids ? w.ids : checked_malloc(sizeof(int));
        *n_ids = w.n_ids;
        w.ids = NULL;
    }
    free_work(&w);
    return status;
}

int gna_tokenize(const gna_tokenizer *tokenizer, const char *text, size_t length, int add_special, int **ids, int *n_ids) {
    NEEDS(tokenizer && (text || length == 0) && ids && n_ids, "gna_tokenize: tokenizer, text, ids and n_ids must not be NULL");
    CATCH_OUT_OF_MEMORY(tokenize_text(tokenizer, text, length, add_special, ids, n_ids));
}

static int detokenize_ids(const gna_tokenizer *tokenizer, const int *ids, int n_ids, int skip_special, char **text, size_t *length) {
    Work w;
    memset(&w, 0, sizeof w);
    Bytes out = {0};
    int status = decode(tokenizer, &w, "ids", ids, n_ids, skip_special, &out);
    free_work(&w);
    if (status != GNA_OK) {
        free(out.data);
        return status;
    }
    *text = out.data;
    *length = out.length;
    return GNA_OK;
}

int gna_detokenize(const gna_tokenizer *tokenizer, const int *ids, int n_ids, int skip_special, char **text, size_t *length) {
    NEEDS(tokenizer && (ids || n_ids == 0) && text && length, "gna_detokenize: tokenizer, ids, text and length must not be NULL");
    NEEDS(n_ids >= 0, "gna_detokenize: n_ids must not be negative");
    CATCH_OUT_OF_MEMORY(detokenize_ids(tokenizer, ids, n_ids, skip_special, text, length));
}

/* ---------------------------------------------------------------------------------------------
 * II.9 Output. Nothing gna writes destroys what was there:
 *   - every output path is checked before any work (check_outputs): a folder, a missing or unwritable
 *     folder, a socket, a link to nothing, a path inside --data's folder, or a path that is also an input
 *     (the model's files, --data, --keys, the log) or another output is refused by name;
 *   - a special file (/dev/null, /dev/stdout, a FIFO, a terminal) is written in place;
 *   - a regular file, or a path where nothing is yet, is written under an unpredictable temporary name
 *     beside it (mkstemp: O_EXCL, so never through a planted link), renamed over it only when complete
 *     and only if what is there is still a regular file (or nothing); a symbolic link is followed to
 *     its target. A failed run removes its temporary, and so does the program when it ends first (an
 *     exit for want of memory, SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ).
 */
typedef struct {
    char *path;                /* where the output goes: the path given, a link resolved */
    char *temporary_path;      /* NULL: written in place (a special file) */
    FILE *file;
} OutputFile;

enum { MAX_OPEN_OUTPUTS = 4 };                       /* at most two are open at once (logits --svg) */
static char *volatile unfinished[MAX_OPEN_OUTPUTS]; /* the temporary paths being written now */
static int program_handles_signals;                  /* set by main(): a library leaves signals alone */
#if GNA_POSIX
static unsigned output_mode = 0644;                  /* a new file's permissions (main() reads the umask) */
#endif

static void remove_unfinished(void) {
    for (int i = 0; i < MAX_OPEN_OUTPUTS; i++)
        if (unfinished[i]) unlink(unfinished[i]); /* unlink, not remove: a signal handler may call it */
}

#ifndef GNA_NO_SIGNALS
static void remove_unfinished_and_die(int signal_number) {
    remove_unfinished();
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

#ifndef GNA_NO_MMAP
/* SIGBUS: a mapped checkpoint shrank under gna (another program truncated it). One line naming the file,
 * the unfinished outputs removed, exit status 2: bad input, not a crash. Async-signal-safe: write and _exit. */
#if defined(__STDC_NO_ATOMICS__)
static volatile int shrank_reported;
#else
static _Atomic int shrank_reported;
#endif
static void checkpoint_shrank(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number, (void)context;
    if (shrank_reported++) /* several threads may fault at once: the first says it, the rest wait for its _exit */
        for (;;) pause();
    const char *at = info ? (const char *)info->si_addr : NULL, *path = "a mapped checkpoint";
    for (int i = 0; i < 64; i++)
        if (mappings[i].start && at >= mappings[i].start && at < mappings[i].start + mappings[i].size) path = mappings[i].path;
    const char *parts[] = {"gna: error: ", path, ": the file shrank while gna read it (truncated by another program?)\n"};
    for (int i = 0; i < 3; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0) break;
    remove_unfinished();
    _exit(GNA_BAD_INPUT);
}
#endif

/* The program's handlers, installed once, before it reads a checkpoint or writes an output: only where
 * the signal is not ignored, since a parent that ignores SIGINT (nohup, a shell's background job) means
 * the program to run on through it; and never by the library, whose host owns its signals. */
static void handle_signals(void) {
    static int installed;
    if (installed || !program_handles_signals) return;
    installed = 1;
#ifndef GNA_NO_MMAP
    struct sigaction bus;
    memset(&bus, 0, sizeof bus);
    bus.sa_sigaction = checkpoint_shrank;
    bus.sa_flags = SA_SIGINFO;
    sigemptyset(&bus.sa_mask);
    sigaction(SIGBUS, &bus, NULL);
#endif
    const int numbers[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ}; /* SIGPIPE: a FIFO's reader quit; SIGXFSZ: ulimit -f */
    for (int i = 0; i < 5; i++) {
        struct sigaction now;
        if (sigaction(numbers[i], NULL, &now) == 0 && now.sa_handler != SIG_IGN) signal(numbers[i], remove_unfinished_and_die);
    }
}
#else
static void handle_signals(void) {}
#endif

/* Do two paths name one file? Both there: the same device and inode; otherwise the same folder
 * (realpath) and name. */
static int same_file(const char *a, const char *b) {
    struct stat x, y;
    if (stat(a, &x) == 0 && stat(b, &y) == 0) return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
    const char *names[2] = {a, b};
    char *full[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        const char *slash = strrchr(names[i], '/');
        char *folder = slash ? checked_strndup(names[i], (size_t)(slash - names[i]) + (slash == names[i])) : checked_strdup(".");
#if GNA_POSIX
        char *resolved = realpath(folder, NULL);
#else
        char *resolved = NULL;
#endif
        Bytes b = {0};
        bytes_printf(&b, "%s/%s", resolved ? resolved : folder, slash ? slash + 1 : names[i]);
        full[i] = b.data;
        free(resolved);
        free(folder);
    }
    int same = strcmp(full[0], full[1]) == 0;
    free(full[0]), free(full[1]);
    return same;
}

/* Is `folder` the folder `root`, or inside it (both resolved)? */
static int folder_within(const char *folder, const char *root) {
#if GNA_POSIX
    char *a = realpath(folder, NULL), *b = realpath(root, NULL);
    size_t n = b ? strlen(b) : 0;
    int within = a && b && strncmp(a, b, n) == 0 && (a[n] == 0 || a[n] == '/' || n == 1);
    free(a), free(b);
    return within;
#else
    return strcmp(folder, root) == 0;
#endif
}

/* Each output of a command, checked before it does any work (see above); NULL entries are skipped.
 * data_folder: a folder the run reads files from (--data), where no output may go; NULL: none */
static int check_outputs(const char *const *outputs, int n_outputs, const char *const *inputs, int n_inputs, const char *data_folder) {
    for (int i = 0; i < n_outputs; i++) {
        if (!outputs[i]) continue;
        struct stat st;
        int exists = stat(outputs[i], &st) == 0, status = GNA_OK;
        if (exists && S_ISDIR(st.st_mode)) return bad_input(outputs[i], "is a folder: give a file name");
#if GNA_POSIX
        if (!exists && lstat(outputs[i], &st) == 0) return bad_input(outputs[i], "is a symbolic link to nothing: name the file itself");
        if (exists && S_ISSOCK(st.st_mode)) return bad_input(outputs[i], "is a socket: gna writes files, devices and FIFOs");
#endif
        if (exists && !S_ISREG(st.st_mode)) continue; /* /dev/null, a FIFO: written in place, destroys nothing */
#if GNA_POSIX
        char *file = exists ? realpath(outputs[i], NULL) : NULL; /* a link is written at its target */
#else
        char *file = NULL;
#endif
        char *folder = checked_strdup(file ? file : outputs[i]), *slash = strrchr(folder, '/');
        if (slash) slash[slash == folder] = 0; /* "/x" -> "/" */
        int named = outputs[i][0] != 0 && outputs[i][strlen(outputs[i]) - 1] != '/';
        if (!named || stat(slash ? folder : ".", &st) != 0 || (GNA_STAT_MODES && !S_ISDIR(st.st_mode)))
            status = bad_input(outputs[i], "cannot be written: its folder does not exist");
#if GNA_POSIX
        else if (access(slash ? folder : ".", W_OK | X_OK) != 0)
            status = bad_input(outputs[i], "cannot be written: its folder is not writable (%s)", strerror(errno));
#endif
        else if (data_folder && folder_within(slash ? folder : ".", data_folder))
            status = bad_input(outputs[i], "is inside --data's folder %s, whose files the run reads: write it elsewhere", data_folder);
        free(folder), free(file);
        TRY(status);
        for (int j = 0; j < n_inputs; j++)
            if (inputs[j] && same_file(outputs[i], inputs[j]))
                return bad_input(outputs[i], "is also an input of this run (%s): writing it would destroy it", inputs[j]);
        for (int j = 0; j < i; j++)
            if (outputs[j] && same_file(outputs[i], outputs[j])) return bad_input(outputs[i], "is given as two outputs of this run");
    }
    return GNA_OK;
}

static int open_output(OutputFile *o, const char *path) {
    static int cleanup_registered = 0;
    if (!cleanup_registered) {
        cleanup_registered = 1;
        atexit(remove_unfinished);
    }
    handle_signals();
    memset(o, 0, sizeof *o);
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return bad_input(path, "is a folder: give a file name");
    if (exists && !S_ISREG(st.st_mode)) { /* a device, a FIFO, a terminal: written in place */
        o->path = checked_strdup(path);
        if (!(o->file = fopen(path, "wb"))) {
            free(o->path);
            return bad_input(path, "cannot write (%s)", strerror(errno));
        }
        return GNA_OK;
    }
#if GNA_POSIX
    char *resolved = exists ? realpath(path, NULL) : NULL;
    o->path = resolved ? checked_strdup(resolved) : checked_strdup(path);
    free(resolved);
    const char *slash = strrchr(o->path, '/');
    size_t folder = slash ? (size_t)(slash - o->path) + 1 : 0;
    o->temporary_path = checked_malloc(strlen(o->path) + 16);
    sprintf(o->temporary_path, "%.*s.%.200s.gna-XXXXXX", (int)folder, o->path, o->path + folder); /* within NAME_MAX */
    int fd = mkstemp(o->temporary_path); /* O_CREAT | O_EXCL, mode 0600, a random name */
    if (fd >= 0) fchmod(fd, exists ? (st.st_mode & 07777) : output_mode);
    if (fd < 0 || !(o->file = fdopen(fd, "wb"))) {
        int status = bad_input(path, "cannot write beside it (%s)", strerror(errno));
        if (fd >= 0) close(fd), unlink(o->temporary_path);
        free(o->temporary_path);
        free(o->path);
        return status;
    }
#else /* no mkstemp (WASI, bare metal): one process at a time there */
    o->path = checked_strdup(path);
    o->temporary_path = checked_malloc(strlen(path) + 16);
    sprintf(o->temporary_path, "%s.gna-partial", path);
    if (!(o->file = fopen(o->temporary_path, "wb"))) {
        int status = bad_input(path, "cannot write (%s)", strerror(errno));
        free(o->temporary_path);
        free(o->path);
        return status;
    }
#endif
    for (int i = 0; i < MAX_OPEN_OUTPUTS; i++)
        if (!unfinished[i]) {
            unfinished[i] = o->temporary_path;
            break;
        }
    return GNA_OK;
}

/* ok: put the file in place (rename the temporary over a regular file or nothing); otherwise, or if
 * writing failed, remove the temporary */
static int close_output(OutputFile *o, int ok) {
    int status = GNA_OK;
    if (ferror(o->file)) status = failure(o->path, "write failed");
    if (fclose(o->file) != 0 && status == GNA_OK) status = failure(o->path, "write failed (%s)", strerror(errno));
    if (o->temporary_path) {
#if GNA_POSIX /* no links elsewhere (WASI, bare metal) */
        struct stat st;
        if (ok && status == GNA_OK && lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode))
            status = failure(o->path, "is no longer a regular file: the finished output is not put in its place");
#endif
        if (ok && status == GNA_OK && rename(o->temporary_path, o->path) != 0)
            status = failure(o->path, "cannot rename the finished file into place (%s)", strerror(errno));
        if (!ok || status != GNA_OK) remove(o->temporary_path);
        for (int i = 0; i < MAX_OPEN_OUTPUTS; i++)
            if (unfinished[i] == o->temporary_path) unfinished[i] = NULL;
        free(o->temporary_path);
    }
    free(o->path);
    return status;
}

/* A whole output of bytes, written as above; frees nothing */
static int write_output(const char *path, const Bytes *b) {
    OutputFile out;
    TRY(open_output(&out, path));
    fwrite(b->data, 1, b->length, out.file);
    return close_output(&out, 1);
}

/* NumPy .npy, format version 1.0: "\x93NUMPY", bytes 1 0, u16 little-endian header length, a Python
 * dict literal padded with spaces and ended by '\n' so that the data starts at a multiple of 64,
 * then the float32 values, little-endian, C order. */
static void write_npy(FILE *file, const float *data, int ndim, const int64_t *shape) {
    char header[256];
    int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        /* Python's tuple syntax, as numpy writes it: (5,) and (2, 3) */
        n += snprintf(header + n, sizeof header - (size_t)n, "%s%lld%s", i ? ", " : "", (long long)shape[i], ndim == 1 ? "," : "");
        count *= (size_t)shape[i];
    }
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    int total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, length; header; '\n' */
    while (10 + n + 1 < total) header[n++] = ' ';
    header[n++] = '\n';
    unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xFF), (unsigned char)(n >> 8)};
    fwrite(preamble, 1, 10, file);
    fwrite(header, 1, (size_t)n, file);
    if (!host_is_big_endian()) {
        fwrite(data, sizeof(float), count, file);
        return;
    }
    for (size_t i = 0; i < count; i++) { /* little-endian on a big-endian host too */
        unsigned char b[4];
        memcpy(b, &data[i], 4);
        unsigned char le[4] = {b[3], b[2], b[1], b[0]};
        fwrite(le, 1, 4, file);
    }
}

/* a token's text as the tokenizer decodes it alone into `text` (the caller frees text->data); 0 when
 * there is no tokenizer, the id is not one of its tokens or it decodes to nothing */
static int token_text(const Tokenizer *t, int id, Bytes *text) {
    Work w = {0};
    int ok = t && id < t->n_ids && t->id_text[id] && decode(t, &w, "ids", &id, 1, 0, text) == GNA_OK && text->length > 0;
    free_work(&w);
    return ok;
}

/* A token's label for the SVG (xml 1) or the terminal: its text (token_text; spaces shown as U+2423,
 * line breaks as U+21B5), XML-escaped for the SVG, or its id when it has none. */
static void token_label(const Tokenizer *t, int id, int xml, char *label, size_t size) {
    Bytes text = {0};
    if (!token_text(t, id, &text)) {
        snprintf(label, size, "%d", id);
    } else {
        size_t n = 0;
        for (size_t i = 0; i < text.length && n + 8 < size; i++) {
            unsigned char c = (unsigned char)text.data[i];
            const char *escape = xml && c == '<' ? "&lt;" : xml && c == '>' ? "&gt;" : xml && c == '&' ? "&amp;"
                                 : xml && c == '"' ? "&quot;" : c == ' ' ? "\xE2\x90\xA3" : c == '\n' ? "\xE2\x86\xB5" : NULL;
            if (escape) n += (size_t)snprintf(label + n, size - n, "%s", escape);
            else if (c >= 0x20 && c != 0x7F) label[n++] = (char)c;
        }
        while (n > 0 && ((unsigned char)label[n - 1] & 0xC0) == 0x80 && size - n < 8) n--; /* never cut a character */
        label[n] = 0;
    }
    free(text.data);
}

/* Attention maps as one SVG: a heatmap per head, query rows down, key positions across, the token
 * at each position written along both axes. A cell's colour is its value over the panel's largest
 * |value|: blue for positive, red for negative (implicit attention can be negative), white for 0. */
static void write_attention_svg(FILE *f, const Probe *probes, const char *const *names, size_t n_probes, const int *tokens,
                                size_t T, const Tokenizer *tokenizer) {
    char label[96];
    size_t n_rows = probes[0].n_rows;
    size_t cell = T <= 24 ? 18 : T <= 64 ? 10 : T <= 160 ? 5 : 3, margin = cell >= 10 ? 64 : 0;
    size_t panel_w = margin + T * cell + 20, panel_h = margin + n_rows * cell + 34;
    size_t columns = n_probes < 3 ? n_probes : 3, rows_of_panels = (n_probes + columns - 1) / columns;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\" viewBox=\"0 0 %zu %zu\" "
               "font-family=\"monospace\" font-size=\"%d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            columns * panel_w, rows_of_panels * panel_h, columns * panel_w, rows_of_panels * panel_h, cell >= 10 ? 8 : 6);
    for (size_t i = 0; i < n_probes; i++) {
        const Probe *p = &probes[i];
        size_t x0 = (i % columns) * panel_w + margin, y0 = (i / columns) * panel_h + 20 + margin;
        float largest = 0;
        for (size_t k = 0; k < n_rows * T; k++) largest = fmaxf(largest, fabsf(p->matrix[k]));
        fprintf(f, "<text x=\"%zu\" y=\"%zu\" font-size=\"12\">%s (max %.3g)</text>\n", x0, y0 - margin - 6, names[i], largest);
        for (size_t r = 0; r < n_rows; r++)
            for (size_t s = 0; s < T; s++) {
                float v = largest > 0 ? p->matrix[r * T + s] / largest : 0;
                int shade = (int)lroundf(255.0f * (1.0f - fminf(1.0f, fabsf(v))));
                if (v == 0) continue;
                fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%zu\" height=\"%zu\" fill=\"rgb(%d,%d,%d)\"><title>q %zu, k %zu: %g</title></rect>\n",
                        x0 + s * cell, y0 + r * cell, cell, cell, v > 0 ? shade : 255, shade, v > 0 ? 255 : shade, p->rows[r], s,
                        p->matrix[r * T + s]);
            }
        fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%zu\" height=\"%zu\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0, T * cell, n_rows * cell);
        for (size_t k = 0; margin && k < T; k++) { /* keys across the top, queries down the left */
            token_label(tokenizer, tokens[k], 1, label, sizeof label);
            fprintf(f, "<text transform=\"translate(%zu,%zu) rotate(-60)\">%s</text>\n", x0 + k * cell + cell - 2, y0 - 3, label);
        }
        for (size_t r = 0; margin && r < n_rows; r++) {
            token_label(tokenizer, tokens[p->rows[r]], 1, label, sizeof label);
            fprintf(f, "<text x=\"%zu\" y=\"%zu\" text-anchor=\"end\">%s</text>\n", x0 - 3, y0 + r * cell + cell - 2, label);
        }
    }
    fprintf(f, "</svg>\n");
}

/* ---------------------------------------------------------------------------------------------
 * II.10 Harness machinery: the files the tasks read (CSV, JSONL), the scorer's cache reuse, logs that
 * resume and shards that merge, lm-eval's aggregation, and `gna heads`' ablations. The tasks' own
 * definitions are Part I's (I.7).
 */
/* -- JSON out: strings as Python's json.dumps(ensure_ascii=False) writes them */
static void json_add_string(Bytes *b, const char *text, size_t n) {
    bytes_add_text(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        char escaped[8];
        const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                      : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (!e && c < 0x20) {
            snprintf(escaped, sizeof escaped, "\\u%04x", c);
            e = escaped;
        }
        if (e) bytes_add(b, e, strlen(e));
        else bytes_add(b, text + i, 1);
    }
    bytes_add_text(b, "\"");
}

static void json_add_text(Bytes *b, const char *text) { json_add_string(b, text, strlen(text)); }

static void json_add_number(Bytes *b, double x) {
    if (!isfinite(x)) bytes_add_text(b, "null");
    else if (x == floor(x) && fabs(x) < 1e15) bytes_printf(b, "%.1f", x); /* 1.0, as Python writes it */
    else bytes_printf(b, "%.17g", x);
}

/* -- CSV (RFC 4180), as the original MMLU files are written (pandas' to_csv): fields separated by
 * commas, records by "\n" or "\r\n"; a field may be quoted with '"', inside which commas, newlines
 * and doubled quotes "" stand for themselves. A UTF-8 byte order mark at the start is skipped. A quote
 * inside an unquoted field, text after a closing quote, or a quote never closed is an error that
 * names the line. */
typedef struct {
    int n_rows;
    int *n_fields;       /* [n_rows] */
    char ***fields;      /* [n_rows][n_fields[row]] NUL-terminated */
    int *lines;          /* [n_rows] the line each row starts on, for messages */
} CsvTable;

static void free_csv(CsvTable *t) {
    for (int r = 0; r < t->n_rows; r++) {
        for (int f = 0; f < t->n_fields[r]; f++) free(t->fields[r][f]);
        free(t->fields[r]);
    }
    free(t->n_fields);
    free(t->fields);
    free(t->lines);
    memset(t, 0, sizeof *t);
}

static int read_csv(const char *path, CsvTable *table) {
    char *text;
    size_t size;
    memset(table, 0, sizeof *table);
    TRY(read_file(path, &text, &size));
    size_t i = size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    int line = 1, status = GNA_OK;
    size_t capacity = 0;
    const char *nul = memchr(text, 0, size);
    if (utf8_valid_prefix(text, size) < size) {
        status = bad_input(path, "not valid UTF-8 at byte %zu", utf8_valid_prefix(text, size));
        i = size;
    } else if (nul) {
        int nul_line = 1;
        for (const char *c = text; c < nul; c++) nul_line += *c == '\n';
        status = bad_input(path, "line %d: a NUL character", nul_line);
        i = size;
    }
    while (i < size && status == GNA_OK) {
        int row_line = line, n = 0;
        size_t field_capacity = 0;
        char **row = NULL;
        for (;;) { /* one field, then a comma (another field follows) or the record's end */
            Bytes field = {0};
            bytes_add_text(&field, "");
            if (text[i] == '"') {
                size_t open_line = (size_t)line;
                for (i++;; i++) {
                    if (i >= size) {
                        status = bad_input(path, "line %zu: a quoted field is never closed", open_line);
                        break;
                    }
                    if (text[i] == '"' && i + 1 < size && text[i + 1] == '"') i++;
                    else if (text[i] == '"') { i++; break; }
                    if (text[i] == '\n') line++;
                    bytes_add(&field, text + i, 1);
                }
                if (status == GNA_OK && i < size && text[i] != ',' && text[i] != '\n' && !(text[i] == '\r' && (i + 1 == size || text[i + 1] == '\n')))
                    status = bad_input(path, "line %d: text after a closing quote (a quote inside a field must be doubled)", line);
            } else {
                while (i < size && text[i] != ',' && text[i] != '\n' && !(text[i] == '\r' && (i + 1 == size || text[i + 1] == '\n'))) {
                    if (text[i] == '"') {
                        status = bad_input(path, "line %d: a quote inside an unquoted field (quote the field and double the quote)", line);
                        break;
                    }
                    bytes_add(&field, text + i++, 1);
                }
            }
            row = grow_array(row, n, &field_capacity, sizeof *row);
            row[n++] = field.data;
            if (status != GNA_OK || i >= size || text[i] != ',') break;
            i++;
        }
        if (i < size && text[i] == '\r') i++;
        if (i < size && text[i] == '\n') { i++; line++; }
        table->n_fields = grow_array(table->n_fields, table->n_rows, &capacity, sizeof(int));
        table->fields = checked_realloc(table->fields, sizeof(char **) * (size_t)capacity);
        table->lines = checked_realloc(table->lines, sizeof(int) * (size_t)capacity);
        table->n_fields[table->n_rows] = n;
        table->fields[table->n_rows] = row;
        table->lines[table->n_rows++] = row_line;
        if (status == GNA_OK && n == 1 && row[0][0] == 0) status = bad_input(path, "line %d: an empty line", row_line);
    }
    free(text);
    if (status != GNA_OK) free_csv(table);
    return status;
}

/* -- KV's built-in keys (the appendix) */
enum { N_KV_KEYS = 216 };
static const char *const kv_default_keys[N_KV_KEYS];

/* -- MMLU's files: the original CSV tree or JSONL. Part I's mmlu_questions builds the prompts. */
enum { N_MMLU_SUBJECTS = 57 };
static const char *const mmlu_groups[] = {"mmlu_stem", "mmlu_humanities", "mmlu_social_sciences", "mmlu_other"};
typedef struct {
    const char *subject;
    int category;            /* index into mmlu_groups */
} MmluSubject;
static const MmluSubject mmlu_subjects[N_MMLU_SUBJECTS]; /* lm-eval's 57 subjects, in name order (the appendix) */

static int mmlu_category(const char *subject) {
    for (size_t i = 0; i < N_MMLU_SUBJECTS; i++)
        if (strcmp(subject, mmlu_subjects[i].subject) == 0) return mmlu_subjects[i].category;
    return 3;
}

static void free_mmlu_split(MmluSplit *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->docs[i].subject);
        free(s->docs[i].question);
        for (int c = 0; c < 4; c++) free(s->docs[i].choices[c]);
    }
    free(s->docs);
    memset(s, 0, sizeof *s);
}

static void add_mmlu_doc(MmluSplit *s, const char *subject, const char *question, const char *const choices[4], size_t answer) {
    s->docs = grow_array(s->docs, s->n, &s->capacity, sizeof *s->docs);
    MmluDoc *d = &s->docs[s->n++];
    d->subject = checked_strdup(subject);
    d->question = checked_strdup(question);
    for (int c = 0; c < 4; c++) d->choices[c] = checked_strdup(choices[c]);
    d->answer = answer;
}

/* rows of one CSV file: question, A, B, C, D, answer letter */
static int read_mmlu_csv(const char *path, const char *subject, MmluSplit *out) {
    CsvTable table;
    TRY(read_csv(path, &table));
    int status = GNA_OK;
    for (int r = 0; r < table.n_rows && status == GNA_OK; r++) {
        char **f = table.fields[r];
        if (table.n_fields[r] != 6)
            status = bad_input(path, "line %d: %d fields, expected 6 (question, A, B, C, D, answer)", table.lines[r], table.n_fields[r]);
        else if (strlen(f[5]) != 1 || f[5][0] < 'A' || f[5][0] > 'D')
            status = bad_input(path, "line %d: the answer is \"%.20s\", expected A, B, C or D", table.lines[r], f[5]);
        else
            add_mmlu_doc(out, subject, f[0], (const char *const *)f + 1, f[5][0] - 'A');
    }
    free_csv(&table);
    return status;
}


/* The subjects of a CSV tree: those of lm-eval's 57 whose <dir>/<subject>_test.csv exists, in name
 * order. lm-eval's mmlu is these 57 tasks, so another file there is no subject of it either (a
 * question set of other subjects goes in a .jsonl file). */
static int list_mmlu_subjects(const char *test_dir, char ***subjects, int *n_subjects) {
    struct stat st;
    if (stat(test_dir, &st) != 0 || (GNA_STAT_MODES && !S_ISDIR(st.st_mode)))
        return bad_input(test_dir, "cannot open the folder (%s)", errno ? strerror(errno) : "not a folder");
    int count = N_MMLU_SUBJECTS, n = 0;
    char **names = checked_calloc((size_t)count, sizeof *names);
    for (int i = 0; i < count; i++) { /* the table is in name order */
        char *file = checked_malloc(strlen(test_dir) + strlen(mmlu_subjects[i].subject) + 16);
        sprintf(file, "%s/%s_test.csv", test_dir, mmlu_subjects[i].subject);
        if (stat(file, &st) == 0) names[n++] = checked_strdup(mmlu_subjects[i].subject);
        free(file);
    }
    if (n == 0) {
        free(names);
        return bad_input(test_dir, "holds none of lm-eval's 57 <subject>_test.csv files (other subjects: give a .jsonl file)");
    }
    *subjects = names;
    *n_subjects = n;
    return GNA_OK;
}

/* A string of a JSONL line that gna uses as text: \u0000 would cut it short in C */
static int text_field(const char *path, int line, const char *key, const JsonValue *v) {
    if (v && v->type == JSON_STRING && strlen(v->string) != v->length)
        return bad_input(path, "line %d: \"%s\" holds a NUL character (\\u0000)", line, key);
    return GNA_OK;
}

/* One JSONL line of MMLU: {"subject", "question", "choices": [4], "answer": 0-3 or "A"-"D", "split"?} */
static int read_mmlu_json_line(const char *path, int line, const JsonValue *v, MmluSplit *dev, MmluSplit *test) {
    const JsonValue *subject = json_get(v, "subject"), *question = json_get(v, "question"), *choices = json_get(v, "choices"),
                    *answer = json_get(v, "answer"), *split = json_get(v, "split");
    if (!subject || subject->type != JSON_STRING || !question || question->type != JSON_STRING)
        return bad_input(path, "line %d: needs \"subject\" and \"question\" strings", line);
    if (!choices || choices->type != JSON_ARRAY || choices->length != 4)
        return bad_input(path, "line %d: \"choices\" must be a list of 4 strings", line);
    const char *texts[4];
    int c = 0;
    for (const JsonValue *e = choices->first; e; e = e->next) {
        if (e->type != JSON_STRING) return bad_input(path, "line %d: \"choices\" must be a list of 4 strings", line);
        texts[c++] = e->string;
    }
    int gold = -1;
    if (answer && answer->type == JSON_NUMBER && answer->number >= 0 && answer->number <= 3 && answer->number == floor(answer->number))
        gold = (int)answer->number;
    if (answer && answer->type == JSON_STRING && answer->length == 1 && answer->string[0] >= 'A' && answer->string[0] <= 'D')
        gold = answer->string[0] - 'A';
    if (gold < 0) return bad_input(path, "line %d: \"answer\" must be 0-3 or \"A\"-\"D\"", line);
    TRY(text_field(path, line, "question", question));
    for (const JsonValue *e = choices->first; e; e = e->next) TRY(text_field(path, line, "choices", e));
    int is_dev = 0;
    if (split) {
        if (split->type != JSON_STRING || (strcmp(split->string, "dev") && strcmp(split->string, "test")))
            return bad_input(path, "line %d: \"split\" must be \"dev\" or \"test\"", line);
        is_dev = split->string[0] == 'd';
    }
    for (const char *s = subject->string; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return bad_input(path, "line %d: subject \"%s\": expected lower-case letters, digits and _", line, subject->string);
    add_mmlu_doc(is_dev ? dev : test, subject->string, question->string, texts, gold);
    return GNA_OK;
}

/* The lines of a JSONL file, each valid UTF-8 and parsed; blank lines are an error except one final
 * newline */
typedef int (*JsonLineReader)(const char *path, int line, const JsonValue *value, const char *text, size_t length, void *context);

static int read_jsonl(const char *path, JsonLineReader reader, void *context) {
    char *text;
    size_t size;
    TRY(read_file(path, &text, &size));
    int status = GNA_OK, line = 0;
    for (size_t at = 0; at < size && status == GNA_OK;) {
        const char *end = memchr(text + at, '\n', size - at);
        size_t length = end ? (size_t)(end - (text + at)) : size - at;
        line++;
        if (length > 0 && text[at + length - 1] == '\r') length--;
        JsonDocument doc;
        char where[64];
        snprintf(where, sizeof where, "line %d", line);
        size_t valid = utf8_valid_prefix(text + at, length);
        if (length == 0) status = bad_input(path, "line %d: an empty line", line);
        else if (valid < length) status = bad_input(path, "line %d: not valid UTF-8 at byte %zu of the line", line, valid);
        else if ((status = parse_json(&doc, text + at, length, where)) != GNA_OK) status = bad_input(path, "%s", error_message);
        else {
            status = doc.root->type == JSON_OBJECT ? reader(path, line, doc.root, text + at, length, context)
                                                   : bad_input(path, "line %d: expected a JSON object", line);
            free_json(&doc);
        }
        at += (end ? (size_t)(end - (text + at)) + 1 : size - at);
    }
    free(text);
    return status;
}

typedef struct {
    MmluSplit *dev, *test;
} MmluSplits;

static int mmlu_jsonl_reader(const char *path, int line, const JsonValue *v, const char *text, size_t length, void *context) {
    (void)text;
    (void)length;
    MmluSplits *s = context;
    return read_mmlu_json_line(path, line, v, s->dev, s->test);
}

/* lm-eval's doc_to_text */
static char *mmlu_doc_json(const MmluDoc *d) {
    Bytes b = {0};
    bytes_add_text(&b, "{\"question\": ");
    json_add_text(&b, d->question);
    bytes_add_text(&b, ", \"subject\": ");
    json_add_text(&b, d->subject);
    bytes_add_text(&b, ", \"choices\": [");
    for (int c = 0; c < 4; c++) {
        if (c) bytes_add_text(&b, ", ");
        json_add_text(&b, d->choices[c]);
    }
    bytes_printf(&b, "], \"answer\": %zu}", d->answer);
    return b.data;
}


/* Read MMLU from `path` (a CSV tree with test/ and dev/, possibly under data/, or a JSONL file) and
 * make its questions (Part I's mmlu_questions) */
static int build_mmlu(Harness *h, const char *path, size_t shots, size_t limit) {
    MmluSplit dev = {0}, test = {0};
    int status = GNA_OK;
    size_t path_length = strlen(path);
    if (path_length > 6 && strcmp(path + path_length - 6, ".jsonl") == 0) {
        MmluSplits splits = {&dev, &test};
        status = read_jsonl(path, mmlu_jsonl_reader, &splits);
    } else {
        char *root = path_join(path, "test"), *data = NULL;
        struct stat st;
        if (stat(root, &st) != 0) { /* the original tarball unpacks to data/{dev,test} */
            free(root);
            data = path_join(path, "data");
            root = path_join(data, "test");
        }
        char **subjects = NULL;
        int n_subjects = 0;
        status = list_mmlu_subjects(root, &subjects, &n_subjects);
        for (int s = 0; s < n_subjects; s++) {
            char *name = checked_malloc(strlen(root) + strlen(data ? data : path) + 2 * strlen(subjects[s]) + 32);
            sprintf(name, "%s/%s_test.csv", root, subjects[s]);
            if (status == GNA_OK) status = read_mmlu_csv(name, subjects[s], &test);
            sprintf(name, "%s/dev/%s_dev.csv", data ? data : path, subjects[s]);
            if (status == GNA_OK && shots > 0) status = read_mmlu_csv(name, subjects[s], &dev);
            free(name);
            free(subjects[s]);
        }
        free(subjects);
        free(root);
        free(data);
    }
    /* subjects in name order; the sort is stable in file order within a subject */
    size_t *order = checked_malloc(sizeof(size_t) * (test.n + 1));
    for (size_t i = 0; i < test.n; i++) order[i] = i;
    for (size_t i = 1; i < test.n; i++) /* insertion sort: stable, and the lists are short */
        for (size_t j = i; j > 0 && strcmp(test.docs[order[j - 1]].subject, test.docs[order[j]].subject) > 0; j--) {
            size_t swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    if (status == GNA_OK && test.n == 0) status = bad_input(path, "holds no test questions");
    if (status == GNA_OK) status = mmlu_questions(h, path, &dev, &test, order, shots, limit);
    free(order);
    free_mmlu_split(&dev);
    free_mmlu_split(&test);
    return status;
}

/* -- Rows of JSON lines: a field by name, of the right type, named when it is missing or wrong. A
 * task's documents are its Hugging Face dataset's rows, with their field names. */
static int row_text(const char *path, int line, const JsonValue *row, const char *key, const char **out) {
    const JsonValue *v = json_get(row, key);
    if (!v || v->type != JSON_STRING) return bad_input(path, "line %d: needs the field \"%s\", a string", line, key);
    TRY(text_field(path, line, key, v));
    *out = v->string;
    return GNA_OK;
}

/* a list of strings (at most `most`) into out[] */
static int row_texts(const char *path, int line, const JsonValue *list, const char *key, const char **out, size_t most, size_t *n) {
    if (!list || list->type != JSON_ARRAY || list->length < 1 || list->length > most)
        return bad_input(path, "line %d: needs \"%s\", a list of 1 to %zu strings", line, key, most);
    *n = 0;
    for (const JsonValue *e = list->first; e; e = e->next) {
        if (e->type != JSON_STRING) return bad_input(path, "line %d: \"%s\" must hold strings", line, key);
        TRY(text_field(path, line, key, e));
        out[(*n)++] = e->string;
    }
    return GNA_OK;
}

/* an index 0..n-1 given as a number or as a string of digits (hellaswag's "label" is "0".."3") */
static int row_index(const char *path, int line, const JsonValue *row, const char *key, size_t n, size_t *out) {
    const JsonValue *v = json_get(row, key);
    double x = -1;
    if (v && v->type == JSON_NUMBER) x = v->number;
    if (v && v->type == JSON_STRING && v->length >= 1 && v->length <= 3 && strspn(v->string, "0123456789") == v->length)
        x = atoi(v->string);
    if (!(x >= 0 && x < (double)n && x == floor(x)))
        return bad_input(path, "line %d: \"%s\" must be the index of a choice, 0-%zu", line, key, n - 1);
    *out = (size_t)x;
    return GNA_OK;
}

/* -- Multiple choice from JSONL, {"context": str, "choices": [str, ...], "gold": int} per line (Part I's
 * mc_question), and the knowledge tasks' rows (Part I's arc_question ... winogrande_question). */
typedef struct {
    Harness *harness;
    const char *task;
    size_t limit;
    int n_docs;
} RowReading;

enum { MAX_CHOICES = 64 };

static int mc_reader(const char *path, int line, const JsonValue *v, const char *text, size_t length, void *context) {
    RowReading *r = context;
    const char *ctx, *choices[MAX_CHOICES];
    size_t n, gold;
    TRY(row_text(path, line, v, "context", &ctx));
    TRY(row_texts(path, line, json_get(v, "choices"), "choices", choices, MAX_CHOICES, &n));
    TRY(row_index(path, line, v, "gold", n, &gold));
    if (trailing_space_bytes(ctx, strlen(ctx)) == strlen(ctx)) /* lm-eval would score after the BOS (or EOS) alone */
        return bad_input(path, "line %d: the context is empty (or only white space)", line);
    int doc_id = r->n_docs++;
    if (r->limit > 0 && (size_t)doc_id >= r->limit) return GNA_OK;
    mc_question(r->harness, r->task, doc_id, ctx, choices, n, gold)->doc = checked_strndup(text, length);
    return GNA_OK;
}

static int knowledge_reader(const char *path, int line, const JsonValue *v, const char *text, size_t length, void *context) {
    RowReading *r = context;
    const char *a, *b, *c, *texts[MAX_CHOICES], *labels[MAX_CHOICES];
    size_t n = 0, n_labels = 0, index;
    Question *q = NULL;
    int doc_id = r->n_docs++, skip = r->limit > 0 && (size_t)doc_id >= r->limit;
    const char *task = r->task;
    if (strncmp(task, "arc_", 4) == 0 || strcmp(task, "openbookqa") == 0) {
        const JsonValue *choices = json_get(v, "choices");
        TRY(row_text(path, line, v, task[0] == 'a' ? "question" : "question_stem", &a));
        TRY(row_text(path, line, v, "answerKey", &b));
        if (!choices || choices->type != JSON_OBJECT) return bad_input(path, "line %d: needs \"choices\": {\"text\", \"label\"}", line);
        TRY(row_texts(path, line, json_get(choices, "text"), "choices.text", texts, MAX_CHOICES, &n));
        TRY(row_texts(path, line, json_get(choices, "label"), "choices.label", labels, MAX_CHOICES, &n_labels));
        if (n != n_labels) return bad_input(path, "line %d: %zu choices.text but %zu choices.label", line, n, n_labels);
        if (skip) return GNA_OK;
        q = task[0] == 'a' ? arc_question(r->harness, task, doc_id, a, texts, labels, n, b)
                           : openbookqa_question(r->harness, doc_id, a, texts, labels, n, b);
        if (!q) return bad_input(path, "line %d: answerKey \"%s\" is not among choices.label", line, b);
    } else if (strcmp(task, "piqa") == 0) {
        TRY(row_text(path, line, v, "goal", &a));
        TRY(row_text(path, line, v, "sol1", &b));
        TRY(row_text(path, line, v, "sol2", &c));
        TRY(row_index(path, line, v, "label", 2, &index));
        if (skip) return GNA_OK;
        q = piqa_question(r->harness, doc_id, a, b, c, index);
    } else if (strcmp(task, "hellaswag") == 0) {
        TRY(row_text(path, line, v, "activity_label", &a));
        TRY(row_text(path, line, v, "ctx_a", &b));
        TRY(row_text(path, line, v, "ctx_b", &c));
        TRY(row_texts(path, line, json_get(v, "endings"), "endings", texts, 4, &n));
        if (n != 4) return bad_input(path, "line %d: \"endings\" must hold 4 strings", line);
        TRY(row_index(path, line, v, "label", 4, &index));
        if (skip) return GNA_OK;
        q = hellaswag_question(r->harness, doc_id, a, b, c, texts, index);
    } else { /* winogrande */
        TRY(row_text(path, line, v, "sentence", &a));
        TRY(row_text(path, line, v, "option1", &b));
        TRY(row_text(path, line, v, "option2", &c));
        const JsonValue *answer = json_get(v, "answer");
        if (!answer || answer->type != JSON_STRING || (strcmp(answer->string, "1") && strcmp(answer->string, "2")))
            return bad_input(path, "line %d: \"answer\" must be \"1\" or \"2\"", line);
        if (!strchr(a, '_')) return bad_input(path, "line %d: the sentence has no blank \"_\"", line);
        if (skip) return GNA_OK;
        q = winogrande_question(r->harness, doc_id, a, b, c, (size_t)(answer->string[0] - '1'));
    }
    q->doc = checked_strndup(text, length);
    return GNA_OK;
}

/* the rows of FILE (mc: the task is named after it) or of FOLDER/<task>.jsonl for each knowledge task */
static int build_rows(Harness *h, const char *path, const char *task, JsonLineReader reader, size_t limit) {
    RowReading r = {h, task, limit, 0};
    size_t before = h->n_questions;
    TRY(read_jsonl(path, reader, &r));
    return h->n_questions > before ? GNA_OK : bad_input(path, "holds no documents");
}

static int build_mc(Harness *h, const char *path, size_t limit) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strlen(base);
    if (n > 6 && strcmp(base + n - 6, ".jsonl") == 0) n -= 6;
    char *task = checked_strndup(base, n);
    int status = build_rows(h, path, task, mc_reader, limit);
    free(task);
    return status;
}

/* --tasks: a comma list of the six, each once (NULL: all six), in the order of knowledge_tasks */
static int build_knowledge(Harness *h, const char *folder, const char *tasks, size_t limit) {
    int chosen[N_KNOWLEDGE_TASKS] = {0}, status = GNA_OK;
    for (const char *p = tasks, *next; p; p = next) { /* names separated by single commas, none empty */
        size_t n = strcspn(p, ","), k = 0;
        next = p[n] ? p + n + 1 : NULL;
        while (k < N_KNOWLEDGE_TASKS && !(strlen(knowledge_tasks[k]) == n && strncmp(p, knowledge_tasks[k], n) == 0)) k++;
        if (k == N_KNOWLEDGE_TASKS || chosen[k]++)
            return bad_input("--tasks", "\"%.*s\": expected each of arc_challenge, arc_easy, hellaswag, openbookqa, piqa, "
                                        "winogrande at most once, comma separated", (int)n, p);
    }
    for (int k = 0; k < N_KNOWLEDGE_TASKS && status == GNA_OK; k++) {
        if (tasks && !chosen[k]) continue;
        Bytes file = {0};
        bytes_printf(&file, "%s/%s.jsonl", folder, knowledge_tasks[k]);
        status = build_rows(h, file.data, knowledge_tasks[k], knowledge_reader, limit);
        free(file.data);
    }
    return status;
}

/* gsm8k: FOLDER/gsm8k.jsonl (the evaluated test split) and FOLDER/gsm8k_train.jsonl (the shots' pool),
 * rows {"question", "answer"} */
typedef struct {
    size_t n, doc_capacity, line_capacity;
    Gsm8kDoc *docs;
    char **lines;            /* [n] each row as given, for the log */
} Gsm8kRows;

static int gsm8k_reader(const char *path, int line, const JsonValue *v, const char *text, size_t length, void *context) {
    Gsm8kRows *rows = context;
    const char *question, *answer;
    TRY(row_text(path, line, v, "question", &question));
    TRY(row_text(path, line, v, "answer", &answer));
    rows->docs = grow_array(rows->docs, rows->n, &rows->doc_capacity, sizeof(Gsm8kDoc));
    rows->lines = grow_array(rows->lines, rows->n, &rows->line_capacity, sizeof(char *));
    rows->docs[rows->n] = (Gsm8kDoc){checked_strdup(question), checked_strdup(answer)};
    rows->lines[rows->n++] = checked_strndup(text, length);
    return GNA_OK;
}

static void free_gsm8k_rows(Gsm8kRows *rows) {
    for (size_t i = 0; i < rows->n; i++) free((char *)rows->docs[i].question), free((char *)rows->docs[i].answer), free(rows->lines[i]);
    free(rows->docs), free(rows->lines);
}

static int build_gsm8k(Harness *h, const char *folder, size_t shots, size_t limit) {
    Gsm8kRows test = {0}, train = {0};
    char *test_path = path_join(folder, "gsm8k.jsonl"), *train_path = path_join(folder, "gsm8k_train.jsonl");
    int status = read_jsonl(test_path, gsm8k_reader, &test);
    if (status == GNA_OK && shots > 0) status = read_jsonl(train_path, gsm8k_reader, &train);
    if (status == GNA_OK && test.n == 0) status = bad_input(test_path, "holds no documents");
    if (status == GNA_OK) status = gsm8k_questions(h, train_path, test.docs, test.n, train.docs, train.n, shots, limit, test.lines);
    free_gsm8k_rows(&test), free_gsm8k_rows(&train);
    free(test_path), free(train_path);
    return status;
}

/* -- KV: Part I's kv_question for each setting of pairs, each sample, and (with --mask) both ways */
static void build_kv(Harness *h, const char *const *keys, size_t n_keys, const size_t *pairs, size_t n_settings, int samples,
                     uint64_t seed, int with_mask) {
    for (size_t p = 0; p < n_settings; p++)
        for (int masked = 0; masked <= with_mask; masked++)
            for (int s = 0; s < samples; s++) kv_question(h, keys, n_keys, pairs[p], seed, s, masked);
}

/* -- The scorer: Part I's score_request for every request of a question, with the work shared where
 * that changes nothing but rounding: a context runs once, and each continuation continues from a
 * copy of its cache; an mmlu subject's few-shot prefix runs once, and each question continues from a
 * copy of that. Masks that name positions (@-1, :letters) count them from the end of each request's
 * own input, or find them in it, so under them - and with --no-reuse - every request runs whole, as
 * Part I defines it (requests of one continuation token and one context share theirs: they are the
 * same tokens). The tests hold the two ways to each other within the fidelity tolerance. */
typedef struct {
    const Model *model;
    const gna_tokenizer *tokenizer;
    const Compute *cx;
    const LayerPlan *plan;              /* the run's layers, for the caches */
    int add_special;
    int reuse;                          /* 0: every request whole (--no-reuse) */
    size_t max_new_tokens;              /* generate_until: --max-gen-toks */
    int clean_up_spaces;                /* its decode cleans up spaces (tokenizer_config.json says so) */
    size_t capacity;                    /* positions the caches hold */
    Cache *prefix_cache, *context_cache, *branch_cache;
    long prefix_index;                  /* the prefix that prefix_cache holds, or -1 */
    const Intervention *prefix_iv;      /* and the intervention it was made under */
    Tokens prefix_tokens;
    float *logits;                      /* [logit_rows, V] */
    size_t logit_rows;
    long long prefix_hits, prefix_misses;
} Scorer;

static void free_scorer(Scorer *s) {
    cache_free(s->prefix_cache);
    cache_free(s->context_cache);
    cache_free(s->branch_cache);
    free(s->prefix_tokens.ids);
    free(s->logits);
    memset(s, 0, sizeof *s);
}

/* caches of at least `positions` positions (the prefix is recomputed when they grow) */
static void ensure_capacity(Scorer *s, size_t positions) {
    if (positions <= s->capacity) return;
    size_t capacity = s->capacity ? 2 * s->capacity : 256;
    while (capacity < positions) capacity *= 2;
    cache_free(s->prefix_cache);
    cache_free(s->context_cache);
    cache_free(s->branch_cache);
    s->prefix_cache = cache_new(s->model, s->plan, capacity);
    s->context_cache = cache_new(s->model, s->plan, capacity);
    s->branch_cache = cache_new(s->model, s->plan, capacity);
    s->capacity = capacity;
    s->prefix_index = -1;
}

static float *logit_rows(Scorer *s, size_t rows) {
    if (rows > s->logit_rows) {
        free(s->logits);
        s->logits = float_array(rows, s->model->config.vocab_size);
        s->logit_rows = rows;
    }
    return s->logits;
}

/* `to` continues where `from` stands: the same positions, keys, values and states */
static void copy_cache(Cache *to, const Cache *from) {
    to->n_tokens = from->n_tokens;
    for (size_t l = 0; l < from->n_layers; l++) {
        const LayerCache *a = &from->layers[l];
        LayerCache *b = &to->layers[l];
        if (a->kv_width) {
            memcpy(b->keys, a->keys, sizeof(float) * a->kv_width * from->n_tokens);
            memcpy(b->values, a->values, sizeof(float) * a->kv_width * from->n_tokens);
        }
        if (a->conv_floats) memcpy(b->conv_state, a->conv_state, sizeof(float) * a->conv_floats);
        if (a->ssm_floats) memcpy(b->ssm_state, a->ssm_state, sizeof(float) * a->ssm_floats);
        if (a->donor_kv_width) {
            memcpy(b->donor_keys, a->donor_keys, sizeof(float) * a->donor_kv_width * from->n_tokens);
            memcpy(b->donor_values, a->donor_values, sizeof(float) * a->donor_kv_width * from->n_tokens);
        }
    }
}

/* run the context into context_cache, leaving the logits of its last position in s->logits */
static int run_context(Scorer *s, const Question *q, const Intervention *iv, const Tokens *context, const char *const *prefixes) {
    size_t start = 0;
    if (q->prefix >= 0) {
        if (s->prefix_index != q->prefix || s->prefix_iv != iv) {
            free(s->prefix_tokens.ids);
            s->prefix_tokens = (Tokens){NULL, 0};
            const char *p = prefixes[q->prefix];
            TRY(encode_text(s->tokenizer, p, strlen(p), s->add_special, &s->prefix_tokens));
            /* the prefix's last token may merge with the question's first characters ("\n\n" + "Which"
             * is "\n" "\n" "Which" for Falcon's tokenizer), so the cache stops one token short */
            if (s->prefix_tokens.n > 0) s->prefix_tokens.n--;
            cache_reset(s->prefix_cache);
            s->prefix_index = -1;
            if (s->prefix_tokens.n > 0 && s->prefix_tokens.n <= s->capacity)
                TRY(forward(s->model, s->cx, iv, s->prefix_cache, s->prefix_tokens.ids, s->prefix_tokens.n, NULL, s->prefix_tokens.n));
            s->prefix_index = q->prefix;
            s->prefix_iv = iv;
        }
        /* the question's tokens must start with the cached ones; otherwise the question runs whole */
        size_t n = s->prefix_tokens.n;
        if (n > 0 && n < context->n && memcmp(context->ids, s->prefix_tokens.ids, sizeof(int) * n) == 0) start = n;
    }
    if (start) {
        copy_cache(s->context_cache, s->prefix_cache);
        s->prefix_hits++;
    } else {
        cache_reset(s->context_cache);
        if (q->prefix >= 0) s->prefix_misses++;
    }
    return forward(s->model, s->cx, iv, s->context_cache, context->ids + start, context->n - start, logit_rows(s, 1),
                   context->n - start - 1);
}

static int names_positions(const Intervention *iv) {
    for (size_t i = 0; iv && i < iv->n_items; i++)
        if (iv->items[i].query_name >= 0 || iv->items[i].key_name >= 0) return 1;
    return 0;
}

/* One request's mask: iv's items, those with named positions (I.7, named_positions) resolved in this
 * request's tokens into `resolved` (the caller frees it and each item's lists). What each item selected
 * goes to `log` as "<item>": [queries, keys]. */
static int resolve_request(const Scorer *s, const Intervention *iv, const Question *q, size_t c, const Tokens *context,
                           const Tokens *input, Intervention *out, Bytes *log) {
    MaskItem *items = checked_calloc(iv->n_items, sizeof(MaskItem));
    *out = *iv;
    out->items = items;
    bytes_add_text(log, "{");
    int status = GNA_OK, first = 1;
    for (size_t i = 0; i < iv->n_items && status == GNA_OK; i++) {
        items[i] = iv->items[i];
        if (items[i].query_name < 0 && items[i].key_name < 0) continue;
        for (int keys = 0; keys < 2 && status == GNA_OK; keys++) {
            int name = keys ? items[i].key_name : items[i].query_name;
            size_t *list = checked_malloc(sizeof(size_t) * (input->n + 1)), n = 0;
            if (name >= 0) status = named_positions(s->tokenizer, s->add_special, q, c, context, input, name, items[i].named_text, list, &n);
            *(keys ? &items[i].key_list : &items[i].query_list) = list;
            *(keys ? &items[i].n_key_list : &items[i].n_query_list) = n;
        }
        items[i].resolved = 1;
        int logged = 0; /* an item as written (L*A*@-1:letters) once, not each head it names */
        for (size_t j = 0; j < i; j++) logged |= strcmp(items[j].text, items[i].text) == 0;
        if (logged) continue;
        bytes_add_text(log, first ? "" : ", ");
        json_add_text(log, items[i].text);
        for (int keys = 0; keys < 2; keys++) {
            bytes_add_text(log, keys ? "], [" : ": [[");
            int name = keys ? items[i].key_name : items[i].query_name;
            long a = keys ? items[i].key_first : items[i].query_first, b = keys ? items[i].key_last : items[i].query_last;
            for (size_t k = 0; name >= 0 && k < (keys ? items[i].n_key_list : items[i].n_query_list); k++)
                bytes_printf(log, k ? ", %zu" : "%zu", (keys ? items[i].key_list : items[i].query_list)[k]);
            for (long p = resolve_position(a, input->n); name < 0 && (keys ? items[i].has_keys : items[i].has_queries) && p >= 0 &&
                                                         p <= resolve_position(b, input->n); p++)
                bytes_printf(log, p > resolve_position(a, input->n) ? ", %ld" : "%ld", p);
        }
        bytes_add_text(log, "]]");
        first = 0;
    }
    bytes_add_text(log, "}");
    return status;
}

static void free_resolved(Intervention *iv) {
    for (size_t i = 0; i < iv->n_items; i++) free((void *)iv->items[i].query_list), free((void *)iv->items[i].key_list);
    free((void *)iv->items);
}

/* lls[c], greedy[c]: each request's log-likelihood and whether it is greedy; under named positions,
 * what each request's mask selected goes to `positions` as a JSON list */
static int score_question(Scorer *s, const Question *q, const Intervention *iv, const char *const *prefixes, double *lls, int *greedy,
                          Bytes *positions) {
    size_t V = s->model->config.vocab_size;
    int named = names_positions(iv), whole = !s->reuse || mask_names_positions(iv) || named, status = GNA_OK;
    int have_last_row = 0; /* last_context_row holds the current context's last logits */
    Tokens context = {NULL, 0}, continuation = {NULL, 0};
    float *last_context_row = checked_malloc(sizeof(float) * V);
    if (named) bytes_add_text(positions, "[");
    for (size_t c = 0; c < q->n_choices && status == GNA_OK; c++) {
        if (c == 0 || strcmp(request_context(q, c), request_context(q, c - 1)) != 0) { /* a new context */
            free(context.ids);
            context = (Tokens){NULL, 0};
            have_last_row = 0;
            if ((status = encode_context(s->tokenizer, s->add_special, q, c, &context)) != GNA_OK) break;
            ensure_capacity(s, context.n + 1);
            if (!whole && (status = run_context(s, q, iv, &context, prefixes)) != GNA_OK) break;
            if (!whole) memcpy(last_context_row, s->logits, sizeof(float) * V);
            have_last_row = !whole;
        }
        free(continuation.ids);
        continuation = (Tokens){NULL, 0};
        if ((status = encode_continuation(s->tokenizer, s->add_special, q, c, &context, &continuation)) != GNA_OK) break;
        ensure_capacity(s, context.n + continuation.n);
        logit_rows(s, continuation.n);
        if (named) { /* this request's own mask, resolved in its own input */
            Intervention resolved;
            Tokens input = {checked_malloc(sizeof(int) * (context.n + continuation.n)), context.n + continuation.n - 1};
            memcpy(input.ids, context.ids, sizeof(int) * context.n);
            memcpy(input.ids + context.n, continuation.ids, sizeof(int) * continuation.n);
            bytes_add_text(positions, c ? ", " : "");
            status = resolve_request(s, iv, q, c, &context, &input, &resolved, positions);
            if (status == GNA_OK)
                status = score_request(s->model, s->cx, &resolved, s->context_cache, &context, &continuation, s->logits, &lls[c], &greedy[c]);
            free_resolved(&resolved);
            free(input.ids);
            continue;
        }
        if (whole && (continuation.n > 1 || !have_last_row)) {
            status = score_request(s->model, s->cx, iv, s->context_cache, &context, &continuation, s->logits, &lls[c], &greedy[c]);
            if (status == GNA_OK && continuation.n == 1) memcpy(last_context_row, s->logits, sizeof(float) * V);
            have_last_row |= status == GNA_OK && continuation.n == 1;
            continue;
        }
        lls[c] = 0;
        greedy[c] = 1;
        add_log_probabilities(last_context_row, V, continuation.ids, 1, &lls[c], &greedy[c]);
        if (continuation.n > 1) { /* the rest of the continuation continues from the context's cache */
            copy_cache(s->branch_cache, s->context_cache);
            status = forward(s->model, s->cx, iv, s->branch_cache, continuation.ids, continuation.n - 1, s->logits, 0);
            if (status == GNA_OK) add_log_probabilities(s->logits, V, continuation.ids + 1, continuation.n - 1, &lls[c], &greedy[c]);
        }
    }
    if (named) bytes_add_text(positions, "]");
    free(last_context_row);
    free(context.ids);
    free(continuation.ids);
    return status;
}

/* gsm8k's request (HFLM.generate_until): greedy generation from the context, encoded as it is, stopped at
 * the model's EOS, at max_new_tokens, or once a stop text appears in the text generated (decoded without
 * special tokens); the response is that text cut at each stop in turn (s.split(term)[0]). Under named
 * positions, they are found in the context and kept while it grows. */
static int generate_until(Scorer *s, const Question *q, const Intervention *iv, Bytes *response, Bytes *positions) {
    const Model *m = s->model;
    size_t V = m->config.vocab_size, made = 0;
    Tokens context;
    TRY(encode_text(s->tokenizer, q->context, strlen(q->context), s->add_special, &context));
    Intervention resolved = *iv;
    int status = GNA_OK, named = names_positions(iv);
    if (named && (status = resolve_request(s, iv, q, 0, &context, &context, &resolved, positions)) != GNA_OK) {
        free_resolved(&resolved);
        free(context.ids);
        return status;
    }
    char *stops[4] = {(char *)gsm8k_stops[0], (char *)gsm8k_stops[1], (char *)gsm8k_stops[2], NULL}, *text = NULL;
    size_t length;
    if (m->config.n_eos && gna_detokenize(s->tokenizer, m->config.eos_token_ids, 1, 0, &stops[3], &length) != GNA_OK) stops[3] = NULL;
    int *made_ids = checked_malloc(sizeof(int) * (s->max_new_tokens + 1));
    Cache *cache = cache_new(m, s->plan, context.n + s->max_new_tokens);
    float *row = logit_rows(s, 1);
    status = forward(m, s->cx, &resolved, cache, context.ids, context.n, row, context.n - 1);
    while (status == GNA_OK && made < s->max_new_tokens) {
        int next = 0, stop = 0;
        for (size_t v = 1; v < V; v++)
            if (row[v] > row[next]) next = (int)v;
        made_ids[made++] = next;
        for (size_t e = 0; e < m->config.n_eos; e++) stop |= next == m->config.eos_token_ids[e];
        free(text);
        text = NULL;
        if ((status = gna_detokenize(s->tokenizer, made_ids, (int)made, 1, &text, &length)) != GNA_OK) break;
        if (s->clean_up_spaces) {
            char *cleaned = clean_up_tokenization(text);
            free(text);
            text = cleaned;
        }
        for (int k = 0; k < 4; k++) stop |= stops[k] && *stops[k] && strstr(text, stops[k]) != NULL;
        if (stop || made == s->max_new_tokens) break;
        status = forward(m, s->cx, &resolved, cache, &next, 1, row, 0);
    }
    if (status == GNA_OK) {
        if (!text) text = checked_strdup("");
        for (int k = 0; k < 4; k++) { /* for term in until: s = s.split(term)[0] */
            char *at = stops[k] && *stops[k] ? strstr(text, stops[k]) : NULL;
            if (at) *at = 0;
        }
        bytes_add_text(response, text);
    }
    if (named) free_resolved(&resolved);
    free(text);
    free(stops[3]);
    free(made_ids);
    cache_free(cache);
    free(context.ids);
    return status;
}

/* -- The log: one JSON line per question, lm-eval's sample fields (doc_id, doc, target, arguments,
 * resps, filtered_resps, and the metrics), plus "task" (and, under named mask positions,
 * "mask_positions": what each request's mask selected). Its first line records the command, the
 * model, its settings, the shard and how many questions it holds, so that a re-run resumes only a log
 * of the same settings and `gna merge` can check shards against each other. Lines are written whole
 * and flushed; a line cut short by a kill is dropped when the run resumes. */
typedef struct {
    size_t n, capacity;
    Outcome *items;
} Outcomes;

/* what a command's two numbers are called: lm-eval's metric and filter names */
typedef struct {
    const char *command, *metric[2], *filter[2];
} MetricNames;

static const MetricNames metric_names[] = {
    {"kv", {"acc", NULL}, {"none", NULL}},
    {"mmlu", {"acc", NULL}, {"none", NULL}},
    {"mc", {"acc", "acc_norm"}, {"none", "none"}},
    {"knowledge", {"acc", "acc_norm"}, {"none", "none"}},
    {"gsm8k", {"exact_match", "exact_match"}, {"strict-match", "flexible-extract"}},
};

static const MetricNames *names_of(const char *command) {
    for (size_t i = 0; i < sizeof metric_names / sizeof *metric_names; i++)
        if (strcmp(command, metric_names[i].command) == 0) return &metric_names[i];
    return NULL;
}

static void add_outcome(Outcomes *o, const char *task, int doc_id, const double value[2]) {
    o->items = grow_array(o->items, o->n, &o->capacity, sizeof *o->items);
    o->items[o->n++] = (Outcome){checked_strdup(task), doc_id, {value[0], value[1]}};
}

static void free_outcomes(Outcomes *o) {
    for (size_t i = 0; i < o->n; i++) free(o->items[i].task);
    free(o->items);
    memset(o, 0, sizeof *o);
}

/* a metric's key in log lines: "acc", "acc_norm", or "exact_match,strict-match" */
static void metric_key(Bytes *b, const MetricNames *names, int k) {
    bytes_add_text(b, names->metric[k]);
    if (strcmp(names->filter[k], "none") != 0) bytes_printf(b, ",%s", names->filter[k]);
}

/* lls, greedy: multiple choice; response, filtered: generate_until */
static void log_line(Bytes *b, const MetricNames *names, const Question *q, const double *lls, const int *greedy,
                     const char *response, const char *const *filtered, const double value[2], const Bytes *positions) {
    b->length = 0;
    bytes_printf(b, "{\"doc_id\": %d, \"task\": ", q->doc_id);
    json_add_text(b, q->task);
    bytes_add_text(b, ", \"doc\": ");
    bytes_add(b, q->doc, strlen(q->doc));
    if (q->target) {
        bytes_add_text(b, ", \"target\": ");
        json_add_text(b, q->target);
        bytes_add_text(b, ", \"arguments\": [[");
        json_add_text(b, q->context);
        bytes_add_text(b, ", {\"until\": [\"Question:\", \"</s>\", \"<|im_end|>\"], \"do_sample\": false, \"temperature\": 0.0}]], "
                          "\"resps\": [[");
        json_add_text(b, response);
        bytes_add_text(b, "]], \"filtered_resps\": {\"strict-match\": ");
        json_add_text(b, filtered[0]);
        bytes_add_text(b, ", \"flexible-extract\": ");
        json_add_text(b, filtered[1]);
        bytes_add_text(b, "}");
    } else {
        bytes_printf(b, ", \"target\": %zu, \"arguments\": [", q->gold);
        for (size_t c = 0; c < q->n_choices; c++) {
            bytes_add_text(b, c ? ", [" : "[");
            json_add_text(b, request_context(q, c));
            bytes_add_text(b, ", ");
            json_add_text(b, q->continuations[c]);
            bytes_add_text(b, "]");
        }
        for (int pass = 0; pass < 2; pass++) {
            bytes_add_text(b, pass ? "], \"filtered_resps\": [" : "], \"resps\": [");
            for (size_t c = 0; c < q->n_choices; c++) {
                bytes_add_text(b, c ? ", " : "");
                bytes_add_text(b, pass ? "[" : "[[");
                json_add_number(b, lls[c]);
                bytes_add_text(b, greedy[c] ? ", true" : ", false");
                bytes_add_text(b, pass ? "]" : "]]");
            }
        }
        bytes_add_text(b, "]");
    }
    for (int k = 0; k < 2; k++) {
        if (isnan(value[k])) continue;
        bytes_add_text(b, ", \"");
        metric_key(b, names, k);
        bytes_add_text(b, "\": ");
        json_add_number(b, value[k]);
    }
    if (positions && positions->length) {
        bytes_add_text(b, ", \"mask_positions\": ");
        bytes_add(b, positions->data, positions->length);
    }
    bytes_add_text(b, "}\n");
}

/* The first line; everything that changes results is in it (not --threads). The model is named by its
 * path and identified by model_id in the settings; a run resumes a log, and merge joins logs, whose
 * first lines agree but for the path (headers_agree). */
static void log_header(Bytes *b, const char *command, const char *settings, int shard, int n_shards, int n_questions) {
    b->length = 0;
    bytes_add_text(b, "{\"gna\": ");
    json_add_text(b, command);
    bytes_printf(b, ", \"shard\": \"%d/%d\", \"questions\": %d, \"settings\": %s}\n", shard, n_shards, n_questions, settings);
}

/* the text of a header without the value of "model" (a JSON string): before it, and after it */
static int split_at_model(const char *text, size_t n, size_t *before, size_t *after) {
    const char *at = strstr(text, ", \"settings\": {\"model\": \"");
    if (!at || (size_t)(at - text) >= n) return 0;
    size_t i = (size_t)(at - text) + strlen(", \"settings\": {\"model\": \"");
    *before = i;
    while (i < n && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    *after = i;
    return i < n;
}

static int headers_agree(const char *a, size_t na, const char *b, size_t nb) {
    size_t a0, a1, b0, b1;
    if (!split_at_model(a, na, &a0, &a1) || !split_at_model(b, nb, &b0, &b1)) return na == nb && memcmp(a, b, na) == 0;
    return a0 == b0 && memcmp(a, b, a0) == 0 && na - a1 == nb - b1 && memcmp(a + a1, b + b1, na - a1) == 0;
}

/* one line of a log, parsed */
static int parse_log_line(const char *path, int line, const char *text, size_t length, JsonDocument *doc) {
    char where[64];
    snprintf(where, sizeof where, "line %d", line);
    if (parse_json(doc, text, length, where) != GNA_OK) return bad_input(path, "%s", error_message);
    if (doc->root->type != JSON_OBJECT) {
        free_json(doc);
        return bad_input(path, "line %d: expected a JSON object", line);
    }
    return GNA_OK;
}

/* A sample line's task, document and metrics, the metrics recomputed from what it logged (its
 * log-likelihoods or filtered answers, its target, its continuations) by Part I's question_metrics; a
 * logged metric that does not follow from them is refused, never trusted. */
static int logged_outcome(const char *path, int line, const JsonValue *v, const MetricNames *names, const char **task,
                          int *doc_id, double value[2]) {
    const JsonValue *t = json_get(v, "task"), *d = json_get(v, "doc_id"), *target = json_get(v, "target");
    const JsonValue *arguments = json_get(v, "arguments"), *filtered = json_get(v, "filtered_resps");
    if (!t || t->type != JSON_STRING || !d || d->type != JSON_NUMBER || d->number < 0 || d->number != floor(d->number) ||
        d->number > INT_MAX || !arguments || arguments->type != JSON_ARRAY || !filtered || !target)
        return bad_input(path, "line %d: not a sample of gna's log (needs task, doc_id, target, arguments, filtered_resps)", line);
    Question q = {0};
    int status = GNA_OK;
    const char *answers[2] = {NULL, NULL};
    double *lls = NULL;
    if (names->filter[0][0] != 'n') { /* generate_until: the two filters' answers */
        const JsonValue *s = json_get(filtered, "strict-match"), *f = json_get(filtered, "flexible-extract");
        if (target->type != JSON_STRING || !s || s->type != JSON_STRING || !f || f->type != JSON_STRING)
            return bad_input(path, "line %d: a generate_until sample needs a target and filtered_resps of strict-match and "
                                   "flexible-extract", line);
        q.target = (char *)target->string;
        answers[0] = s->string, answers[1] = f->string;
    } else {
        q.n_choices = arguments->length;
        if (q.n_choices == 0 || filtered->type != JSON_ARRAY || filtered->length != q.n_choices || target->type != JSON_NUMBER ||
            target->number != floor(target->number) || target->number < 0 || target->number >= (double)q.n_choices)
            return bad_input(path, "line %d: a multiple-choice sample needs one filtered_resps per request and a target "
                                   "among them", line);
        q.gold = (size_t)target->number;
        lls = checked_calloc(q.n_choices, sizeof(double));
        if (json_get(v, "acc_norm")) q.choice_lengths = checked_calloc(q.n_choices, sizeof(size_t));
        size_t c = 0;
        for (const JsonValue *r = filtered->first, *a = arguments->first; r && a; r = r->next, a = a->next, c++) {
            const JsonValue *ll = r->type == JSON_ARRAY ? r->first : NULL, *continuation = a->type == JSON_ARRAY && a->first ? a->first->next : NULL;
            if (!ll || ll->type != JSON_NUMBER || !continuation || continuation->type != JSON_STRING) {
                status = bad_input(path, "line %d: request %zu has no log-likelihood or no continuation", line, c);
                break;
            }
            lls[c] = ll->number;
            if (q.choice_lengths) q.choice_lengths[c] = code_points(continuation->string) - (continuation->string[0] == ' ');
        }
    }
    if (status == GNA_OK) question_metrics(&q, lls, answers, value);
    for (int k = 0; k < 2 && status == GNA_OK && names->metric[k]; k++) {
        Bytes key = {0};
        metric_key(&key, names, k);
        const JsonValue *m = json_get(v, key.data);
        if (!isnan(value[k]) && (!m || m->type != JSON_NUMBER || m->number != value[k]))
            status = bad_input(path, "line %d: its %s is not what its log-likelihoods or answers give (%g): the log was changed",
                               line, key.data, value[k]);
        free(key.data);
    }
    free(lls);
    free(q.choice_lengths);
    *task = t->string;
    *doc_id = (int)d->number;
    return status;
}

/* -- Results, aggregated by Part I's task_score, group_score and knowledge_average:
 * tasks in name order (kv: by pairs, masked after unmasked); mmlu's groups (a category - mmlu_stem,
 * mmlu_humanities, mmlu_social_sciences, mmlu_other - over its subjects, and mmlu over all the subjects:
 * consolidate_group_results gives a group its leaf tasks, not its subgroups' aggregates); the knowledge
 * average after the six tasks, when all six ran. */
typedef struct {
    int n;
    size_t capacity;
    Score *items;
} Scores;

static int compare_outcomes(const void *a, const void *b) {
    const Outcome *x = *(const Outcome *const *)a, *y = *(const Outcome *const *)b;
    int c = strcmp(x->task, y->task);
    return c ? c : (x->doc_id > y->doc_id) - (x->doc_id < y->doc_id);
}

/* the pairs of kv_pairs_N, or -1 (N from 1 to 100, as gna kv makes them) */
static int kv_pairs_of(const char *task) {
    if (strncmp(task, "kv_pairs_", 9) != 0) return -1;
    char *end;
    long n = strtol(task + 9, &end, 10);
    return task[9] >= '1' && task[9] <= '9' && n <= 100 && (*end == 0 || strcmp(end, "_masked") == 0) ? (int)n : -1;
}

static int compare_tasks(const char *a, const char *b) {
    int pa = kv_pairs_of(a), pb = kv_pairs_of(b);
    if (pa >= 0 && pb >= 0 && pa != pb) return pa < pb ? -1 : 1;
    return strcmp(a, b);
}

static int compare_outcome_order(const void *a, const void *b) {
    const Outcome *x = *(const Outcome *const *)a, *y = *(const Outcome *const *)b;
    int c = compare_tasks(x->task, y->task);
    return c ? c : (x->doc_id > y->doc_id) - (x->doc_id < y->doc_id);
}

static void summarise(const Outcomes *o, const char *command, Scores *out) {
    memset(out, 0, sizeof *out);
    const Outcome **sorted = checked_malloc(sizeof(Outcome *) * (size_t)(o->n + 1));
    for (size_t i = 0; i < o->n; i++) sorted[i] = &o->items[i];
    qsort(sorted, o->n, sizeof *sorted, compare_outcome_order);
    int is_mmlu = strcmp(command, "mmlu") == 0;
    Scores tasks = {0};
    for (size_t i = 0; i < o->n;) {
        size_t j = i;
        while (j < o->n && strcmp(sorted[j]->task, sorted[i]->task) == 0) j++;
        tasks.items = grow_array(tasks.items, (size_t)tasks.n, &tasks.capacity, sizeof(Score));
        Score *s = &tasks.items[tasks.n++];
        memset(s, 0, sizeof *s);
        s->name = sorted[i]->task;
        s->level = is_mmlu ? 2 : 1;
        task_score(s, sorted + i, (int)(j - i));
        i = j;
    }
    free(sorted);
    if (strcmp(command, "knowledge") == 0 && tasks.n == N_KNOWLEDGE_TASKS) {
        tasks.items = grow_array(tasks.items, (size_t)tasks.n, &tasks.capacity, sizeof(Score));
        Score *k = &tasks.items[tasks.n];
        memset(k, 0, sizeof *k);
        k->name = "knowledge";
        k->level = 1;
        knowledge_average(k, tasks.items, tasks.n++);
    }
    if (!is_mmlu) {
        *out = tasks;
        return;
    }
    /* mmlu, then each category with its subjects, as lm-eval's table lists them */
    Score categories[4];
    int n_categories = 0, category_of[4];
    for (int k = 0; k < 4; k++) {
        Score *members = checked_malloc(sizeof(Score) * (size_t)(tasks.n + 1));
        int n = 0;
        for (int t = 0; t < tasks.n; t++)
            if (mmlu_category(tasks.items[t].name + strlen("mmlu_")) == k) members[n++] = tasks.items[t];
        if (n > 0) {
            Score *g = &categories[n_categories];
            memset(g, 0, sizeof *g);
            g->name = mmlu_groups[k];
            g->level = 1;
            group_score(g, members, n);
            category_of[n_categories++] = k;
        }
        free(members);
    }
    Score top;
    memset(&top, 0, sizeof top);
    top.name = "mmlu";
    group_score(&top, tasks.items, tasks.n);
    out->items = checked_malloc(sizeof(Score) * (size_t)(1 + n_categories + tasks.n));
    out->items[out->n++] = top;
    for (int g = 0; g < n_categories; g++) {
        out->items[out->n++] = categories[g];
        for (int t = 0; t < tasks.n; t++)
            if (mmlu_category(tasks.items[t].name + strlen("mmlu_")) == category_of[g]) out->items[out->n++] = tasks.items[t];
    }
    free(tasks.items);
}

static void print_scores(const Scores *s, const MetricNames *names) {
    printf("%-44s %7s", "task", "n");
    for (int k = 0; k < 2 && names->metric[k]; k++)
        printf(" %17s %8s", strcmp(names->filter[k], "none") ? names->filter[k] : names->metric[k], "stderr");
    printf("\n");
    for (int i = 0; i < s->n; i++) {
        const Score *x = &s->items[i];
        int indent = x->level == 2 ? 2 : x->level == 1 && s->items[0].level == 0 ? 1 : 0;
        printf("%*s%-*s %7d", indent, "", 44 - indent, x->name, x->n);
        for (int k = 0; k < 2 && names->metric[k]; k++) {
            if (isnan(x->value[k])) printf(" %17s %8s", "", "");
            else if (isnan(x->stderr_value[k])) printf(" %17.4f %8s", x->value[k], "N/A");
            else printf(" %17.4f %8.4f", x->value[k], x->stderr_value[k]);
        }
        printf("\n");
    }
}

/* results JSON with lm-eval's field names */
static void results_json(Bytes *b, const Scores *s, const MetricNames *names, const char *settings) {
    b->length = 0;
    bytes_add_text(b, "{\n  \"results\": {");
    for (int i = 0; i < s->n; i++) {
        const Score *x = &s->items[i];
        bytes_add_text(b, i ? ",\n    " : "\n    ");
        json_add_text(b, x->name);
        Bytes alias = {0};
        const char *shown = x->level >= 1 && strncmp(x->name, "mmlu_", 5) == 0 ? x->name + 5 : x->name;
        bytes_printf(&alias, "%s%s", x->level == 2 ? "  - " : x->level == 1 && s->items[0].level == 0 ? " - " : "", shown);
        bytes_add_text(b, ": {\"alias\": ");
        json_add_text(b, alias.data);
        free(alias.data);
        for (int k = 0; k < 2 && names->metric[k]; k++) {
            if (isnan(x->value[k])) continue;
            bytes_printf(b, ", \"%s,%s\": ", names->metric[k], names->filter[k]);
            json_add_number(b, x->value[k]);
            bytes_printf(b, ", \"%s_stderr,%s\": ", names->metric[k], names->filter[k]);
            if (isnan(x->stderr_value[k])) bytes_add_text(b, "\"N/A\"");
            else json_add_number(b, x->stderr_value[k]);
        }
        bytes_add_text(b, "}");
    }
    bytes_add_text(b, "\n  },\n  \"n-samples\": {");
    int first = 1;
    for (int i = 0; i < s->n; i++) {
        if (s->items[i].level == 0 || (s->items[i].level == 1 && s->items[0].level == 0) || strcmp(s->items[i].name, "knowledge") == 0)
            continue;
        bytes_add_text(b, first ? "\n    " : ",\n    ");
        json_add_text(b, s->items[i].name);
        bytes_printf(b, ": {\"effective\": %d}", s->items[i].n);
        first = 0;
    }
    bytes_printf(b, "\n  },\n  \"config\": %s\n}\n", settings);
}
/* -- Running a harness: the shard's questions, minus those its log already holds, scored in order;
 * each finished question is appended to the log and flushed before the next one starts. */
typedef struct {
    const char *command;      /* "mmlu", "mc", "kv" */
    const char *log_path;     /* --log, or NULL */
    int shard, n_shards;      /* --shard i/n, 1-based; 1/1 without it */
    int quiet;
    const char *settings;     /* the settings as a JSON object */
    const Intervention *plain, *masked; /* of unmasked and of masked questions (kv scores both) */
} HarnessRun;

/* \r-updated progress on stderr, only when it is a terminal */
static void show_progress(const char *command, int done, int total, int resumed, double started, int last) {
    double elapsed = seconds_now() - started, rate = elapsed > 0 ? (done - resumed) / elapsed : 0;
    double left = rate > 0 ? (total - done) / rate : 0;
    fprintf(stderr, "\rgna %s: %d/%d questions, %.2f/s, ETA %d:%02d:%02d  ", command, done, total, rate, (int)(left / 3600),
            (int)fmod(left / 60, 60), (int)fmod(left, 60));
    if (last) fprintf(stderr, "\n");
}

/* Key of a question in the resume map: "task\tdoc_id" */
static char *question_key(const char *task, int doc_id) {
    char *key = checked_malloc(strlen(task) + 16);
    sprintf(key, "%s\t%d", task, doc_id);
    return key;
}

/* Does a logged request (its "arguments" and "target") equal question q? */
static int same_request(const Question *q, const JsonValue *arguments, const JsonValue *target) {
    if (!arguments || arguments->type != JSON_ARRAY || !target) return 0;
    if (q->target) {
        const JsonValue *pair = arguments->length == 1 ? arguments->first : NULL, *context = pair && pair->type == JSON_ARRAY ? pair->first : NULL;
        return context && context->type == JSON_STRING && strcmp(context->string, q->context) == 0 && target->type == JSON_STRING &&
               strcmp(target->string, q->target) == 0;
    }
    if (arguments->length != q->n_choices || target->type != JSON_NUMBER || target->number != (double)q->gold) return 0;
    size_t c = 0;
    for (const JsonValue *pair = arguments->first; pair; pair = pair->next, c++) {
        const JsonValue *context = pair->type == JSON_ARRAY ? pair->first : NULL, *continuation = context ? context->next : NULL;
        if (!continuation || context->type != JSON_STRING || continuation->type != JSON_STRING ||
            strcmp(context->string, request_context(q, c)) != 0 || strcmp(continuation->string, q->continuations[c]) != 0)
            return 0;
    }
    return 1;
}

/* The log, opened to read and to append, and locked: two runs given one --log would interleave their
 * lines. A POSIX record lock, which ends with the process however it ends, keeps other processes out;
 * it does not keep out this process's own threads (two gna.Models in one Python), so the logs open in
 * this process are listed too, by device and inode. The record lock is lost when any descriptor of
 * the file closes, so the log is read through this one stream alone. */
#if GNA_THREADS
static pthread_mutex_t open_logs_lock = PTHREAD_MUTEX_INITIALIZER;
#endif
static struct { dev_t device; ino_t inode; int used; } open_logs[64];

static int list_log(const struct stat *st, int add) { /* add 2: only whether it is listed */
    for (int i = 0; i < 64; i++) {
        int same = open_logs[i].used && open_logs[i].device == st->st_dev && open_logs[i].inode == st->st_ino;
        if (add == 2 && same) return 1;
        if (add == 1 && !open_logs[i].used) {
            open_logs[i].device = st->st_dev, open_logs[i].inode = st->st_ino, open_logs[i].used = 1;
            return 1;
        }
        if (add == 0 && same) open_logs[i].used = 0;
    }
    return 0;
}

static int open_log(const char *path, FILE **log) {
    struct stat st;
    int status = GNA_OK, error = 0;
    *log = NULL;
#if GNA_THREADS
    pthread_mutex_lock(&open_logs_lock);
#endif
    /* listed: this process writes it now; not opened again, as closing a second descriptor would drop
       the record lock */
    if (stat(path, &st) == 0 && list_log(&st, 2)) error = EAGAIN;
    else if ((status = open_regular(path, 1, log)) == GNA_OK) {
#if GNA_POSIX
        struct flock whole_file = {.l_type = F_WRLCK, .l_whence = SEEK_SET}; /* l_start 0, l_len 0: all of it */
        if (fcntl(fileno(*log), F_SETLK, &whole_file) != 0) error = errno;
#endif /* (no record locks on WASI or bare metal: one process at a time there) */
        if (!error && (fstat(fileno(*log), &st) != 0 || !list_log(&st, 1))) error = EMFILE;
        if (error) fclose(*log), *log = NULL;
    }
#if GNA_THREADS
    pthread_mutex_unlock(&open_logs_lock);
#endif
    if (status != GNA_OK || !error) return status;
    if (error == EACCES || error == EAGAIN)
        return bad_input(path, "is the log of another gna run now (it is locked): wait for that run, or give another --log");
    return failure(path, "cannot lock it (%s)", strerror(error));
}

static int close_log(FILE *log) {
    struct stat st;
#if GNA_THREADS
    pthread_mutex_lock(&open_logs_lock);
#endif
    if (fstat(fileno(log), &st) == 0) list_log(&st, 0);
    int status = fclose(log);
#if GNA_THREADS
    pthread_mutex_unlock(&open_logs_lock);
#endif
    return status;
}

/* Read an existing log: check its first line is this run's, take the outcomes of its samples, and
 * cut off a last line that a kill left unfinished. done[i]: question i of `mine` has an outcome. */
static int resume_log(const HarnessRun *r, const Harness *h, FILE *log, const int *mine, int n_mine, const char *header, int *done,
                      Outcomes *outcomes, int *exists) {
    char *text;
    size_t size;
    rewind(log);
    TRY(read_stream(log, r->log_path, &text, &size));
    if (!(*exists = size > 0)) {
        free(text);
        return GNA_OK;
    }
    int status = GNA_OK, line = 0;
    size_t complete = 0; /* bytes of whole lines */
    TextMap map;
    char **keys = checked_calloc((size_t)n_mine + 1, sizeof(char *));
    text_map_init(&map, (size_t)n_mine);
    for (int i = 0; i < n_mine; i++) {
        keys[i] = question_key(h->questions[mine[i]].task, h->questions[mine[i]].doc_id);
        text_map_put(&map, keys[i], strlen(keys[i]), i);
    }
    for (size_t at = 0; at < size && status == GNA_OK;) {
        const char *end = memchr(text + at, '\n', size - at);
        if (!end) break; /* cut short by a kill: dropped below */
        size_t length = (size_t)(end - (text + at));
        line++;
        if (line == 1) {
            if (!headers_agree(text, length, header, strlen(header) - 1))
                status = bad_input(r->log_path, "holds a run with other settings or another shard (its first line differs "
                                                "from this run's): give another --log, or delete it to start again");
        } else {
            JsonDocument doc;
            const char *task;
            int doc_id;
            double value[2];
            if ((status = parse_log_line(r->log_path, line, text + at, length, &doc)) != GNA_OK) break;
            status = logged_outcome(r->log_path, line, doc.root, names_of(r->command), &task, &doc_id, value);
            char *key = status == GNA_OK ? question_key(task, doc_id) : NULL;
            int i = key ? text_map_get(&map, key, strlen(key)) : -1;
            const JsonValue *arguments = json_get(doc.root, "arguments"), *target = json_get(doc.root, "target");
            if (status != GNA_OK) {
            } else if (i < 0) {
                status = bad_input(r->log_path, "line %d: %s document %d is not a question of this run", line, task, doc_id);
            } else if (done[i]) {
                status = bad_input(r->log_path, "line %d: %s document %d is there twice", line, task, doc_id);
            } else if (!same_request(&h->questions[mine[i]], arguments, target)) {
                status = bad_input(r->log_path, "line %d: the prompt, choices or answer of %s document %d differ from this run's "
                                                "(did the data change?)", line, task, doc_id);
            } else {
                done[i] = 1;
                add_outcome(outcomes, task, doc_id, value);
            }
            free(key);
            free_json(&doc);
        }
        at += length + 1;
        complete = at;
    }
    if (status == GNA_OK && complete < size) { /* an unfinished line is cut off only if gna began writing it */
        const char *cut = text + complete, *sample = "{\"doc_id\": ";
        size_t n = size - complete, known = line == 0 ? strlen(header) : strlen(sample);
        if (memcmp(cut, line == 0 ? header : sample, n < known ? n : known) != 0 || (line == 0 && n >= known))
            status = bad_input(r->log_path, "ends in a line that gna did not write (no final newline): not a gna log? give another --log");
        else if (ftruncate(fileno(log), (off_t)complete) != 0)
            status = failure(r->log_path, "cannot cut off its unfinished last line (%s)", strerror(errno));
    }
    if (status == GNA_OK && line == 0) *exists = 0; /* only an unfinished first line: start afresh */
    for (int i = 0; i < n_mine; i++) free(keys[i]);
    free(keys);
    free(map.slots);
    free(text);
    return status;
}

static int run_harness(const HarnessRun *r, const Harness *h, Scorer *s, Outcomes *outcomes) {
    int *mine = checked_malloc(sizeof(int) * (size_t)(h->n_questions + 1)), n_mine = 0;
    for (size_t i = 0; i < h->n_questions; i++)
        if (i % (size_t)r->n_shards == (size_t)r->shard - 1) mine[n_mine++] = (int)i;
    int *done = checked_calloc((size_t)n_mine + 1, sizeof(int)), exists = 0, status = GNA_OK;
    Bytes line = {0}, header = {0};
    log_header(&header, r->command, r->settings, r->shard, r->n_shards, n_mine);
    FILE *log = NULL;
    if (r->log_path) {
        status = open_log(r->log_path, &log);
        if (status == GNA_OK) status = resume_log(r, h, log, mine, n_mine, header.data, done, outcomes, &exists);
        if (status == GNA_OK && fseek(log, 0, SEEK_END) != 0) status = failure(r->log_path, "cannot seek (%s)", strerror(errno));
        if (status == GNA_OK && !exists && ftell(log) > 0 && ftruncate(fileno(log), 0) != 0) /* an unfinished first line */
            status = failure(r->log_path, "cannot empty it (%s)", strerror(errno));
        if (status == GNA_OK && !exists && (fwrite(header.data, 1, header.length, log) != header.length || fflush(log)))
            status = failure(r->log_path, "write failed");
    }
    int resumed = (int)outcomes->n, progress = !r->quiet && isatty(2);
    double started = seconds_now(), *lls = NULL;
    int *greedy = NULL;
    const MetricNames *names = names_of(r->command);
    Bytes response = {0}, filtered[2] = {{0}, {0}}, positions = {0};
    for (int k = 0; k < n_mine && status == GNA_OK; k++) {
        if (done[k]) continue;
        const Question *q = &h->questions[mine[k]];
        double value[2];
        response.length = filtered[0].length = filtered[1].length = positions.length = 0;
        if (q->target) { /* generate_until: the response, and what each filter finds in it */
            bytes_add(&response, "", 0);
            if ((status = generate_until(s, q, q->masked ? r->masked : r->plain, &response, &positions)) != GNA_OK) break;
            gsm8k_strict_match(response.data, &filtered[0]);
            gsm8k_flexible_extract(response.data, &filtered[1]);
        } else {
            lls = checked_realloc(lls, sizeof(double) * (size_t)q->n_choices);
            greedy = checked_realloc(greedy, sizeof(int) * (size_t)q->n_choices);
            if ((status = score_question(s, q, q->masked ? r->masked : r->plain, (const char *const *)h->prefixes, lls, greedy,
                                         &positions)) != GNA_OK)
                break;
        }
        const char *answers[2] = {filtered[0].data, filtered[1].data};
        question_metrics(q, lls, answers, value);
        add_outcome(outcomes, q->task, q->doc_id, value);
        if (log) {
            log_line(&line, names, q, lls, greedy, response.data, answers, value, &positions);
            if (fwrite(line.data, 1, line.length, log) != line.length || fflush(log) != 0)
                status = failure(r->log_path, "write failed (%s)", strerror(errno));
        }
        if (progress) show_progress(r->command, (int)outcomes->n, n_mine, resumed, started, 0);
    }
    if (progress && status == GNA_OK) show_progress(r->command, outcomes->n, n_mine, resumed, started, 1);
    if (log && close_log(log) != 0 && status == GNA_OK) status = failure(r->log_path, "write failed (%s)", strerror(errno));
    free(lls);
    free(greedy);
    free(response.data), free(filtered[0].data), free(filtered[1].data), free(positions.data);
    free(line.data);
    free(header.data);
    free(done);
    free(mine);
    return status;
}

static void print_kv_table(const Scores *s, const char *mask) {
    printf("%6s %8s %8s %8s", "pairs", "samples", "acc", "stderr");
    if (mask) printf("   %8s %8s   (--mask %s)", "masked", "stderr", mask);
    printf("\n");
    for (int i = 0; i < s->n; i++) {
        const Score *x = &s->items[i];
        if (strstr(x->name, "_masked")) continue;
        char stderr_text[2][16];
        for (int k = 0; k < 2 && i + k < s->n; k++) {
            double e = s->items[i + k].stderr_value[0];
            if (isnan(e)) snprintf(stderr_text[k], sizeof stderr_text[k], "%8s", "N/A");
            else snprintf(stderr_text[k], sizeof stderr_text[k], "%8.4f", e);
        }
        printf("%6d %8d %8.4f %s", kv_pairs_of(x->name), x->n, x->value[0], stderr_text[0]);
        if (mask && i + 1 < s->n && strstr(s->items[i + 1].name, "_masked"))
            printf("   %8.4f %s", s->items[i + 1].value[0], stderr_text[1]);
        printf("\n");
    }
}

/* KV accuracy against the number of pairs: the model as it is, and (dashed) under --mask */
static void write_kv_svg(FILE *f, const Scores *s, const char *mask) {
    int min_pairs = INT_MAX, max_pairs = 0;
    for (int i = 0; i < s->n; i++) {
        int p = kv_pairs_of(s->items[i].name);
        if (p < min_pairs) min_pairs = p;
        if (p > max_pairs) max_pairs = p;
    }
    if (max_pairs == min_pairs) max_pairs = min_pairs + 1;
    const double left = 70, top = 40, width = 520, height = 300;
#define KV_X(p) (left + width * ((p) - min_pairs) / (double)(max_pairs - min_pairs))
#define KV_Y(a) (top + height * (1.0 - (a)))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"420\" viewBox=\"0 0 640 420\" font-family=\"sans-serif\" font-size=\"12\">\n");
    fprintf(f, "<rect width=\"640\" height=\"420\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"320\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">KV retrieval: accuracy against pairs</text>\n");
    for (int k = 0; k <= 4; k++) {
        double a = k / 4.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, KV_Y(a), left + width, KV_Y(a));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", left - 6, KV_Y(a) + 4, a);
    }
    for (int i = 0; i < s->n; i++)
        if (!strstr(s->items[i].name, "_masked")) {
            int p = kv_pairs_of(s->items[i].name);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", KV_X(p), top + height + 18, p);
        }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">key-value pairs</text>\n", left + width / 2, top + height + 38);
    fprintf(f, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">accuracy</text>\n",
            top + height / 2, top + height / 2);
    for (int masked = 0; masked <= (mask != NULL); masked++) {
        const char *colour = masked ? "#c0392b" : "#2c6fbb";
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", colour,
                masked ? " stroke-dasharray=\"6 4\"" : "");
        for (int i = 0; i < s->n; i++)
            if ((strstr(s->items[i].name, "_masked") != NULL) == masked)
                fprintf(f, "%.1f,%.1f ", KV_X(kv_pairs_of(s->items[i].name)), KV_Y(s->items[i].value[0]));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < s->n; i++)
            if ((strstr(s->items[i].name, "_masked") != NULL) == masked)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", KV_X(kv_pairs_of(s->items[i].name)),
                        KV_Y(s->items[i].value[0]), colour);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", left + 10,
                top + 12 + 16.0 * masked, left + 40, top + 12 + 16.0 * masked, colour, masked ? " stroke-dasharray=\"6 4\"" : "");
        Bytes label = {0};
        if (masked) {
            bytes_add_text(&label, "--mask ");
            for (const char *c = mask; *c; c++) {
                const char *e = *c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : NULL;
                bytes_add(&label, e ? e : c, e ? strlen(e) : 1);
            }
        } else {
            bytes_add_text(&label, "the model as it is");
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", left + 46, top + 16 + 16.0 * masked, label.data);
        free(label.data);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n</svg>\n", left, top,
            width, height);
#undef KV_X
#undef KV_Y
}

/* print the results, and write --json and --svg (kv) */
static int report_results(const char *command, const Outcomes *outcomes, const char *settings, const char *mask,
                          const char *json_path, const char *svg_path) {
    Scores scores;
    const MetricNames *names = names_of(command);
    summarise(outcomes, command, &scores);
    if (strcmp(command, "kv") == 0) print_kv_table(&scores, mask);
    else print_scores(&scores, names);
    int status = GNA_OK;
    if (json_path) {
        Bytes json = {0};
        results_json(&json, &scores, names, settings);
        status = write_output(json_path, &json);
        free(json.data);
    }
    if (status == GNA_OK && svg_path) {
        OutputFile out;
        if ((status = open_output(&out, svg_path)) == GNA_OK) {
            write_kv_svg(out.file, &scores, mask);
            status = close_output(&out, 1);
        }
    }
    free(scores.items);
    return status;
}

/* -- `gna heads`: Part I's head_scores for every head on every question, then the task's accuracy with
 * each of the top candidates ablated alone, and with each pair of a top gather head and a later top
 * aggregate head ablated together: the paper's test of a G&A pair (§3.3-3.4). */
typedef struct {
    size_t layer;
    HeadKind kind;
    size_t head;
    double aggregate, gold_mass, gather;  /* means over the questions */
    double ablated_accuracy;              /* the task's accuracy with this head ablated; NAN: not measured */
    char name[24];                        /* L16H22, or L47A17 in a hybrid (head_name) */
} HeadScore;

/* A question's segments are its marks of one line each: mmlu's option lines, kv's dictionary lines */
static size_t count_segments(const Question *q) {
    size_t n = 0;
    for (size_t m = 0; m < q->n_marks; m++) n += q->marks[m].kind == MARK_OPTION || q->marks[m].kind == MARK_PAIR;
    return n;
}

/* Token spans of a question's segments: tokens [starts[j], ends[j]) of its context. The tokens of
 * context[0..end) must be the context's first tokens: segments end in "\n", which the tokenizers'
 * pre-tokenizers keep apart from what follows. */
static int segment_tokens(const Scorer *s, const Question *q, const Tokens *context, size_t *starts, size_t *ends) {
    size_t j = 0;
    for (size_t m = 0; m < q->n_marks; m++) {
        if (q->marks[m].kind != MARK_OPTION && q->marks[m].kind != MARK_PAIR) continue;
        for (int side = 0; side < 2; side++) {
            Tokens part;
            TRY(encode_text(s->tokenizer, q->context, side ? q->marks[m].end : q->marks[m].start, s->add_special, &part));
            int ok = part.n <= context->n && memcmp(part.ids, context->ids, sizeof(int) * part.n) == 0;
            (side ? ends : starts)[j] = part.n;
            free(part.ids);
            if (!ok) return bad_input(q->task, "document %d: segment %zu does not end on a token boundary of the context", q->doc_id, j);
        }
        j++;
    }
    return GNA_OK;
}

/* The G&A scores of every head in `heads` over the first n questions (their unmasked contexts) */
static int score_heads(const Scorer *s, const Harness *h, size_t n, const MaskItem *heads, size_t n_heads, HeadScore *scores) {
    int status = GNA_OK;
    size_t counted = 0;
    for (size_t i = 0; i < n_heads; i++) scores[i] = (HeadScore){heads[i].layer, heads[i].kind, heads[i].head, 0, 0, 0, NAN, ""};
    for (size_t qi = 0; qi < n && status == GNA_OK; qi++) {
        const Question *q = &h->questions[qi];
        if (count_segments(q) == 0 || q->masked) continue;
        Tokens context;
        TRY(encode_context(s->tokenizer, s->add_special, q, 0, &context));
        size_t m = count_segments(q), T = context.n;
        size_t *starts = checked_malloc(sizeof(size_t) * m), *ends = checked_malloc(sizeof(size_t) * m);
        size_t *rows = checked_malloc(sizeof(size_t) * (m + 1));
        status = segment_tokens(s, q, &context, starts, ends);
        for (size_t j = 0; j < m; j++) rows[j] = ends[j] - 1; /* the summary tokens, then the final position */
        rows[m] = T - 1;
        Probe *probes = checked_calloc(n_heads, sizeof(Probe));
        float *matrices = checked_calloc(size_product(n_heads * (m + 1), T), sizeof(float));
        for (size_t i = 0; i < n_heads; i++)
            probes[i] = (Probe){heads[i].layer, heads[i].kind, heads[i].head, m + 1, rows, T, matrices + i * (m + 1) * T};
        Intervention iv = {.n_probes = n_heads, .probes = probes, .plan = s->plan};
        Cache *cache = cache_new(s->model, iv.plan, T);
        if (status == GNA_OK) status = forward(s->model, s->cx, &iv, cache, context.ids, T, NULL, T);
        cache_free(cache);
        for (size_t i = 0; i < n_heads && status == GNA_OK; i++) {
            double aggregate, gold_mass, gather;
            head_scores(&probes[i], starts, ends, m, q->gold, &aggregate, &gold_mass, &gather);
            scores[i].aggregate += aggregate;
            scores[i].gold_mass += gold_mass;
            scores[i].gather += gather;
        }
        counted += status == GNA_OK;
        free(matrices);
        free(probes);
        free(rows);
        free(starts);
        free(ends);
        free(context.ids);
    }
    for (size_t i = 0; i < n_heads && counted; i++) {
        scores[i].aggregate /= (double)counted;
        scores[i].gold_mass /= (double)counted;
        scores[i].gather /= (double)counted;
    }
    if (status == GNA_OK && counted == 0) status = bad_input("--task", "no question with segments to score heads on");
    return status;
}

/* the task's accuracy over the first n questions with the heads `ablated` (n_ablated 0: none) */
static int harness_accuracy(Scorer *s, const Harness *h, size_t n, const MaskItem *ablated, size_t n_ablated, double *accuracy) {
    Intervention iv = {.n_items = n_ablated, .items = ablated, .plan = s->plan};
    s->prefix_index = -1; /* a prefix made under another mask is of no use */
    double *lls = NULL;
    int *greedy = NULL, status = GNA_OK;
    size_t correct = 0, counted = 0;
    for (size_t qi = 0; qi < n && status == GNA_OK; qi++) {
        const Question *q = &h->questions[qi];
        if (q->masked) continue;
        lls = checked_realloc(lls, sizeof(double) * q->n_choices);
        greedy = checked_realloc(greedy, sizeof(int) * q->n_choices);
        if ((status = score_question(s, q, &iv, (const char *const *)h->prefixes, lls, greedy, NULL)) != GNA_OK) break;
        correct += argmax_double(lls, q->n_choices) == q->gold;
        counted++;
    }
    s->prefix_index = -1;
    free(lls);
    free(greedy);
    *accuracy = counted ? (double)correct / (double)counted : NAN;
    return status;
}

static void head_name(const Model *m, const HeadScore *x, char *name, size_t size) {
    int hybrid = m->layers[x->layer].has_shared_visit;
    snprintf(name, size, "L%zu%c%zu", x->layer, hybrid ? (x->kind == HEAD_ATTENTION ? 'A' : 'S') : 'H', x->head);
}

/* order[0..n): the heads by score, highest first, ties in list order (an insertion sort: stable) */
enum { BY_AGGREGATE, BY_GATHER, BY_GOLD_MASS, BY_ABLATED_ACCURACY };

static double rank_key(const HeadScore *x, int by) {
    return by == BY_AGGREGATE ? x->aggregate : by == BY_GATHER ? x->gather : by == BY_GOLD_MASS ? x->gold_mass
           : isnan(x->ablated_accuracy) ? -INFINITY : -x->ablated_accuracy; /* the most harmful first; unmeasured last */
}

/* order: the heads by the key, largest first; ties keep the heads' order (an insertion sort) */
static void rank_heads(const HeadScore *scores, size_t n, int by, size_t *order) {
    for (size_t i = 0; i < n; i++) {
        double x = rank_key(&scores[i], by);
        size_t j = i;
        for (; j > 0 && rank_key(&scores[order[j - 1]], by) < x; j--) order[j] = order[j - 1];
        order[j] = i;
    }
}

/* ---------------------------------------------------------------------------------------------
 * II.11 The command line: gna_main(), which main() calls (compiled out with -DGNA_NO_MAIN, so that a
 * program or the tests can include gna.c and call gna_main themselves), and gna_task(), through which
 * the command line and the Python binding run every task. One table of options (options[]) gives
 * both the parsing and every --help.
 */
/* The commands, in the order --help lists them; a command's bit in an option's `commands` is
 * 1 << its index here. */
enum {
    C_INFO = 1 << 0, C_TOKENIZE = 1 << 1, C_DETOKENIZE = 1 << 2, C_LOGITS = 1 << 3, C_LENS = 1 << 4, C_GENERATE = 1 << 5,
    C_ATTN = 1 << 6, C_KV = 1 << 7, C_MMLU = 1 << 8, C_MC = 1 << 9, C_KNOWLEDGE = 1 << 10, C_GSM8K = 1 << 11, C_HEADS = 1 << 12,
    C_MERGE = 1 << 13, C_ALL = (1 << 14) - 1,
    C_TEXT = C_LOGITS | C_LENS | C_GENERATE | C_ATTN,          /* run the model on --tokens or -p */
    C_DATA = C_MMLU | C_MC | C_KNOWLEDGE | C_GSM8K | C_HEADS, /* read questions from --data */
    C_HARNESS = C_KV | C_DATA,
    C_RUNS = C_TEXT | C_HARNESS, /* make a run (gna_run_new): the run options */
    C_LOGGED = C_HARNESS & ~C_HEADS,
};

static const struct {
    const char *name, *summary, *text; /* the command, its line in gna --help, the top of gna <command> --help */
} commands[] = {
    {"info", "what a model folder holds", 
        "usage: gna info -m DIR\n"
        "Prints the family, dimensions, tensor dtypes, parameter count and files of a model folder.\n"},
    {"tokenize", "text to token ids", 
        "usage: gna tokenize (-m DIR | --tokenizer FILE) (-p TEXT | -f FILE) [--no-special]\n"
        "Prints the token ids of a text, space-separated on one line: the ids Hugging Face\n"
        "tokenizers gives (tokenizer.encode(text).ids), BOS included where the tokenizer adds one.\n"
        "The text must be UTF-8: anything else is refused (exit status 2), naming the byte.\n"},
    {"detokenize", "token ids to text", 
        "usage: gna detokenize (-m DIR | --tokenizer FILE) --tokens IDS [--skip-special]\n"
        "Prints the text of token ids (tokenizer.decode(ids)) with no newline added.\n"},
    {"logits", "next-token logits at every position", 
        "usage: gna logits -m DIR (--tokens IDS | -p TEXT) [-o OUT.npy] [--top K]\n"
        "Runs the tokens through the model (one chunk) and gives the logits of the next token at\n"
        "every position.\n"},
    {"lens", "the logit lens: each layer's prediction", 
        "usage: gna lens -m DIR (--tokens IDS | -p TEXT) [--at POS] [--top K] [-o OUT.npy]\n"
        "The logit lens: the residual stream after each layer, at one position, through the final norm\n"
        "and the LM head (gna.h: gna_run_tap, gna_unembed) - what the model would predict if the\n"
        "layers after it were left out. The last layer's row is the model's own prediction.\n"},
    {"generate", "continue a sequence", 
        "usage: gna generate -m DIR (--tokens IDS | -p TEXT) [-n N] [--temp T] [--seed S] [--ignore-eos]\n"
        "Continues the sequence token by token. With --tokens it prints all ids (prompt, then\n"
        "continuation) on one line; with -p it prints the text of them all, as it goes\n"
        "(tokenizer.decode of prompt and continuation, special tokens included).\n"},
    {"attn", "attention maps, or the implicit attention of SSM heads", 
        "usage: gna attn -m DIR (--tokens IDS | -p TEXT) --heads SPEC -o OUT.npy [--svg OUT.svg] [--rows R]\n"
        "Runs the tokens (one chunk) and records, for each head of SPEC, its attention\n"
        "probabilities, or for SSM heads its implicit attention matrix M[t, s] (conv, gate and D\n"
        "excluded): mamba-2 (C_t.B_s) exp(sum_{r=s+1..t} dt_r A) dt_s; llamba (C_t.B_s)\n"
        "exp(-sum softplus(a_r)); mamba-1 channel d sum_n C_t[n] exp(A[d,n] sum dt_r[d]) dt_s[d] B_s[n].\n"},
    {"kv", "the paper's KV-retrieval task", 
        "usage: gna kv -m DIR [--pairs LIST] [--samples N] [--seed S] [--keys FILE] [--mask SPEC] [--svg F]\n"
        "The paper's KV-retrieval task: \"Memorize the following dictionary:\\n\", one \"key:value\\n\"\n"
        "per pair (distinct keys, distinct values 0-99), then \"The value of the key '<key>' is\";\n"
        "multiple choice over the dictionary's values, each scored by the log-likelihood of its tokens\n"
        "appended with no space. With --mask every sample is scored with and without the mask.\n"},
    {"mmlu", "MMLU exactly as lm-evaluation-harness 0.4.x", 
        "usage: gna mmlu -m DIR --data PATH [--shots K] [--limit N] [--bos] [--mask SPEC]\n"
        "lm-evaluation-harness 0.4.x's task mmlu: the description line, the first K dev questions of\n"
        "the subject, the question ending \"Answer:\", and the continuations \" A\"..\" D\" scored by\n"
        "log-likelihood; acc per subject, per category (stem, humanities, social sciences, other) and\n"
        "over all questions (lm-eval's size-weighted mean and pooled stderr).\n"},
    {"mc", "multiple choice / cloze: acc and acc_norm", 
        "usage: gna mc -m DIR --data FILE.jsonl [--limit N] [--bos] [--mask SPEC]\n"
        "Multiple choice or cloze from lines {\"context\": str, \"choices\": [str, ...], \"gold\": int}:\n"
        "each \" \" + choice scored by log-likelihood after the context (lm-eval's multiple_choice);\n"
        "acc, and acc_norm (log-likelihood divided by the choice's length in characters).\n"},
    {"knowledge", "the knowledge control: lm-eval's six 0-shot tasks", 
        "usage: gna knowledge -m DIR --data FOLDER [--tasks LIST] [--limit N] [--mask SPEC]\n"
        "The paper's knowledge control: lm-evaluation-harness 0.4.x's zero-shot arc_challenge, arc_easy,\n"
        "hellaswag, openbookqa, piqa and winogrande, each from FOLDER/<task>.jsonl (the rows of its\n"
        "Hugging Face dataset, as weights_tools/convert/export_tasks.py writes them); acc, acc_norm (not\n"
        "winogrande) and stderr per task, and the knowledge average: the mean acc of the six, as the\n"
        "authors average them.\n"},
    {"gsm8k", "lm-eval's gsm8k: 5-shot, greedy, exact match", 
        "usage: gna gsm8k -m DIR --data FOLDER [--shots K] [--max-gen-toks N] [--limit N] [--mask SPEC]\n"
        "lm-evaluation-harness 0.4.x's gsm8k: K shots (default 5) drawn by Python's random.Random(1234)\n"
        "from FOLDER/gsm8k_train.jsonl, the questions of FOLDER/gsm8k.jsonl, greedy generation until\n"
        "\"Question:\", \"</s>\", \"<|im_end|>\" or the model's EOS, and exact_match of the strict-match\n"
        "(\"#### N\") and flexible-extract (the last number) answers.\n"},
    {"heads", "find the Gather and Aggregate heads", 
        "usage: gna heads -m DIR --task kv|mmlu [--data PATH] [--heads SPEC] [--top K] [--sweep N|all] [--json F] [--svg F]\n"
        "                 [--shard i/n]\n"
        "Finds the G&A heads: the contexts are cut into segments (kv's \"key:value\\n\" lines, mmlu's\n"
        "option lines) whose last token (the \"\\n\") is the segment's summary token. For each head, r_t\n"
        "its attention row at query t (SSM heads: |implicit attention| as a distribution), averaged\n"
        "over the questions:\n"
        "  aggregate  r_final's mass on the gold segment - its largest mass on another segment\n"
        "  gold mass  r_final's mass on the gold segment (its summary token and the tokens before it)\n"
        "  gather     the mean over segments of r_summary's mass on its own segment's other tokens\n"
        "Then the task's accuracy with each of the top K aggregate and gather heads ablated alone, and\n"
        "with each pair of a top gather head and a top aggregate head of a later layer. The sweep\n"
        "ranks heads by the accuracy each costs alone: the scores can miss a critical head (an SSM's\n"
        "smooth maps), the sweep cannot; it costs one pass over the questions per head.\n"},
    {"merge", "the shards of a harness run (or of gna heads) into its results", 
        "usage: gna merge LOG.jsonl... [--json F]    gna merge PART.json... [--json F]\n"
        "The logs of every shard of one harness run (--shard i/n, same settings) into the results\n"
        "that one run gives; or the parts of every shard of one gna heads run into its report.\n"},
};

static const char *const usage_text =
    "gna - audit the Gather-and-Aggregate mechanism of language models on a CPU\n"
    "\n"
    "usage: gna <command> [options]      gna <command> --help for its options\n"
    "\n"
    "commands:\n";

static const char *const usage_more =
    "\n"
    "Head specs (--mask, --heads): a comma list of L<layers><kind><heads>[@<queries>[:<keys>]]\n"
    "  layers, heads   N, N-M or *, zero-based as in model.layers.N\n"
    "  kind            H: the layer's heads; A / S: attention / SSM heads of a zamba2 hybrid layer\n"
    "                  (SSM heads: mamba-2, zamba2, llamba heads; mamba-1 and falcon-mamba channels)\n"
    "  @queries        positions N or N-M, negative from the end (-1 is the last token)\n"
    "  :keys           with --mask: zero the entries from those queries to these keys (after the\n"
    "                  softmax, not renormalised; for SSM heads, in the implicit attention matrix)\n"
    "With --mask, an item without :keys ablates the head: its slice of the output projection's input\n"
    "is zeroed, at every position or at the @queries. Examples: L17H24, L16H22,L17H24@-1,\n"
    "L17H24@-1:5-9, L*A*@-1:0--1 (zamba2: every attention head's whole final row, the paper's experiment).\n"
    "\n"
    "DIR is a Hugging Face model folder (config.json + model.safetensors, or shards with\n"
    "model.safetensors.index.json) of model_type llama, mamba, falcon_mamba, mamba2, zamba2\n"
    "or llamba (cartesia's config layout); -p and the tokenizer commands use its tokenizer.json,\n"
    "which gives the ids Hugging Face tokenizers gives.\n"
    "Exit status: 0 done, 1 failure while running, 2 bad input or usage (one line on stderr).\n";

typedef struct {
    const char *command;
    const char *model_dir;    /* -m */
    const char *mask_spec;    /* --mask */
    const char *layers_text;  /* --layers */
    int n_drops, drops[MAX_SURGERY];                 /* --drop */
    int n_replaces;
    const char *replaces[MAX_SURGERY];               /* --replace L=DIR or L<l>H<h>=DIR, as given */
    const char *heads_spec;   /* --heads (attn) */
    const char *rows_text;    /* --rows (attn) */
    const char *svg;          /* --svg (attn) */
    const char *tokenizer;    /* --tokenizer */
    const char *tokens_text;  /* --tokens */
    const char *prompt;       /* -p */
    const char *prompt_file;  /* -f */
    int no_special;           /* --no-special */
    int skip_special;         /* --skip-special */
    const char *output;       /* -o */
    int top;                  /* --top */
    int at;                   /* --at (lens) */
    long long sweep;          /* --sweep (heads): candidates per score beyond --top's; LLONG_MAX: all */
    int n_new;                /* -n */
    double temperature;       /* --temp */
    unsigned long long seed;  /* --seed */
    int ignore_eos;           /* --ignore-eos */
    const char *data;         /* --data (mmlu, mc) */
    int shots;                /* --shots (mmlu, gsm8k); -1: the task's own (0, 5) */
    const char *tasks;        /* --tasks (knowledge): some of the six */
    int max_gen_toks;         /* --max-gen-toks (gsm8k): lm-eval's 256 */
    int limit;                /* --limit (mmlu, mc): the first N documents of each task */
    int bos;                  /* --bos (mmlu, mc) */
    const char *json;         /* --json (harnesses, merge) */
    const char *log;          /* --log (harnesses) */
    int shard, n_shards;      /* --shard i/n (harnesses), 1-based */
    const char *pairs_text;   /* --pairs (kv) */
    int samples;              /* --samples (kv) */
    const char *keys;         /* --keys (kv) */
    const char *task;         /* --task (heads): kv or mmlu */
    int n_logs;               /* merge: the logs, its arguments */
    char **logs;
    int n_run_options;        /* the options that make the run (gna_run_new), as given */
    const char *run_options[4 * MAX_SURGERY + 16];
    int bf16, reference, dt_min_clamp; /* --bf16, --reference, --dt-min-clamp: for the harnesses' settings */
    int no_reuse;             /* --no-reuse (harnesses) */
    int quiet;                /* -q */
    int help;                 /* -h, --help */
} Options;

typedef enum {
    OPT_TEXT,    /* const char *: the value as given */
    OPT_FLAG,    /* int: 1 */
    OPT_INT,     /* int: a whole number in [min, max] */
    OPT_SEED,    /* unsigned long long: a whole number in [min, max] */
    OPT_NUMBER,  /* double >= min */
    OPT_SWEEP,   /* long long: a whole number in [min, max], or "all" (LLONG_MAX) */
    OPT_TASK,    /* const char *: kv or mmlu */
    OPT_SHARD,   /* int shard, n_shards: i/n */
    OPT_DROP,    /* --drop: one more layer to leave out */
    OPT_REPLACE, /* --replace: one more L=DIR */
    OPT_CHECKED, /* nothing kept here (--threads): checked, and read by the run */
} OptionKind;

/* Every option of every command: parsing and --help both come from this table. An option may
 * have one row per group of commands, each with its own help; a row's value goes to
 * Options.field. Rows marked `run` also go to gna_run_new as given (the options that make a run). */
static const struct {
    const char *name, *argument; /* "--top", "K"; argument NULL for a flag */
    unsigned commands;           /* the commands that take it: C_* bits */
    OptionKind kind;
    size_t field;                /* offsetof(Options, ...) */
    long long min, max;          /* OPT_INT, OPT_SEED, OPT_SWEEP: the range; OPT_NUMBER: min */
    int run;
    const char *help;            /* lines separated by \n */
} options[] = {
#define O(name, argument, commands, kind, field, min, max, help) {name, argument, commands, kind, offsetof(Options, field), min, max, 0, help}
#define RUN(name, argument, kind, field, help) {name, argument, C_RUNS, kind, offsetof(Options, field), 0, 0, 1, help}
    O("-m", "DIR", C_ALL & ~C_MERGE & ~C_TOKENIZE & ~C_DETOKENIZE, OPT_TEXT, model_dir, 0, 0,
      "the model folder (with its tokenizer.json for -p and the harnesses)"),
    O("-m", "DIR", C_TOKENIZE | C_DETOKENIZE, OPT_TEXT, model_dir, 0, 0, "the model folder: its tokenizer.json"),
    O("--tokenizer", "FILE", C_TOKENIZE | C_DETOKENIZE, OPT_TEXT, tokenizer, 0, 0, "a tokenizer.json"),
    O("-p", "TEXT", C_TOKENIZE, OPT_TEXT, prompt, 0, 0, "the text"),
    O("-f", "FILE", C_TOKENIZE, OPT_TEXT, prompt_file, 0, 0, "the text is the file's bytes, exactly (a final newline is text too)"),
    O("--no-special", NULL, C_TOKENIZE, OPT_FLAG, no_special, 0, 0,
      "no special tokens added (add_special_tokens=False); special tokens\n"
      "written in the text, such as <|begin_of_text|>, are still recognised"),
    O("--tokens", "IDS", C_DETOKENIZE, OPT_TEXT, tokens_text, 0, 0,
      "token ids, separated by commas or spaces; an id the tokenizer does not\nhave is an error"),
    O("--skip-special", NULL, C_DETOKENIZE, OPT_FLAG, skip_special, 0, 0, "leave the special tokens out (skip_special_tokens=True)"),
    O("--tokens", "IDS", C_TEXT, OPT_TEXT, tokens_text, 0, 0, "token ids, separated by commas or spaces: 1,2,3"),
    O("-p", "TEXT", C_TEXT, OPT_TEXT, prompt, 0, 0, "a text instead, tokenized by the folder's tokenizer.json (as gna tokenize)"),
    O("--no-special", NULL, C_LOGITS | C_LENS | C_GENERATE, OPT_FLAG, no_special, 0, 0, "with -p: no special tokens added (no BOS)"),
    O("-o", "OUT.npy", C_LOGITS, OPT_TEXT, output, 0, 0, "write float32 [T, V] logits as a NumPy .npy file"),
    O("--top", "K", C_LOGITS, OPT_INT, top, 1, 1000000, "without -o: print the K highest logits at each position (default 5)"),
    O("--at", "POS", C_LENS, OPT_INT, at, -INT_MAX, INT_MAX, "the position, negative from the end (default -1, the last token)"),
    O("--top", "K", C_LENS, OPT_INT, top, 1, 1000000, "the K most probable next tokens of each layer (default 5)"),
    O("-o", "OUT.npy", C_LENS, OPT_TEXT, output, 0, 0, "also write float32 [layers run, V] logits as a NumPy .npy file"),
    O("-n", "N", C_GENERATE, OPT_INT, n_new, 0, 1000000, "tokens to add (default 16)"),
    O("--temp", "T", C_GENERATE, OPT_NUMBER, temperature, 0, 0, "0 (default): greedy argmax; T > 0: sample from softmax(logits / T)"),
    O("--seed", "S", C_GENERATE, OPT_SEED, seed, 0, LLONG_MAX, "random seed for sampling (default 0)"),
    O("--ignore-eos", NULL, C_GENERATE, OPT_FLAG, ignore_eos, 0, 0, "keep going past the model's end-of-sequence token"),
    O("--heads", "SPEC", C_ATTN, OPT_TEXT, heads_spec, 0, 0, "the heads to record, e.g. L16H22,L17H24 or L17H* (no @ or :)"),
    O("-o", "OUT.npy", C_ATTN, OPT_TEXT, output, 0, 0, "float32 [heads, rows, T], heads in the order SPEC lists them"),
    O("--svg", "OUT.svg", C_ATTN, OPT_TEXT, svg, 0, 0,
      "a heatmap per head, the tokens (their text when DIR has a tokenizer.json)\non both axes"),
    O("--json", "F", C_ATTN, OPT_TEXT, json, 0, 0,
      "each head's map statistics (gna.c's map_statistics): its share on the previous\n"
      "token, each line's last token on its line, the final position on each line\n"
      "and its largest entry; lines end at the tokens that hold a newline"),
    O("--rows", "R", C_ATTN, OPT_TEXT, rows_text, 0, 0,
      "keep only these query rows: positions N or N-M, comma separated,\nnegative from the end (default: all)"),
    O("--task", "kv|mmlu", C_HEADS, OPT_TASK, task, 0, 0,
      "the questions: kv samples (--pairs, --samples, --seed) or mmlu questions\n(--data, --shots, --limit, --bos)"),
    O("--pairs", "LIST", C_KV, OPT_TEXT, pairs_text, 0, 0, "numbers of pairs, comma separated (default 10,15,...,50)"),
    O("--pairs", "N", C_HEADS, OPT_TEXT, pairs_text, 0, 0, "kv: pairs in each sample (default 20)"),
    O("--samples", "N", C_KV | C_HEADS, OPT_INT, samples, 1, (1 << 20) - 1, "samples per number of pairs (default 100)"),
    O("--seed", "S", C_KV | C_HEADS, OPT_SEED, seed, 0, UINT32_MAX, "the samples' seed, 0 to 2^32-1 (default 0)"),
    O("--keys", "FILE", C_KV, OPT_TEXT, keys, 0, 0, "keys, one per line (default: gna's built-in list of 216 common nouns)"),
    O("--svg", "F", C_KV, OPT_TEXT, svg, 0, 0, "accuracy against pairs, the model as it is and under --mask"),
    O("--data", "PATH", C_MMLU | C_HEADS, OPT_TEXT, data, 0, 0,
      "the original CSV tree (PATH/dev/*_dev.csv and PATH/test/*_test.csv, or\n"
      "PATH/data/...; lm-eval's 57 subjects), or a .jsonl file (any subject) of\n"
      "{\"subject\", \"question\", \"choices\", \"answer\", \"split\": \"dev\"|\"test\"}"),
    O("--data", "F.jsonl", C_MC, OPT_TEXT, data, 0, 0, "the questions; the task is named after the file"),
    O("--data", "FOLDER", C_KNOWLEDGE, OPT_TEXT, data, 0, 0, "the tasks' .jsonl files"),
    O("--data", "FOLDER", C_GSM8K, OPT_TEXT, data, 0, 0, "gsm8k.jsonl (test) and gsm8k_train.jsonl, rows {\"question\", \"answer\"}"),
    O("--tasks", "LIST", C_KNOWLEDGE, OPT_TEXT, tasks, 0, 0, "some of the six, comma separated (default: all six)"),
    O("--shots", "K", C_MMLU | C_HEADS, OPT_INT, shots, 0, 1000, "few-shot examples (default 0, as the paper ran it)"),
    O("--shots", "K", C_GSM8K, OPT_INT, shots, 0, 1000, "few-shot examples (default 5)"),
    O("--max-gen-toks", "N", C_GSM8K, OPT_INT, max_gen_toks, 1, 100000, "the most tokens generated per question (default 256, as lm-eval)"),
    O("--limit", "N", C_DATA, OPT_INT, limit, 1, INT_MAX, "only the first N questions of each subject or task"),
    O("--bos", NULL, C_DATA, OPT_FLAG, bos, 0, 0, "encode with the tokenizer's special tokens (BOS); lm-eval 0.4.x adds none"),
    O("--heads", "SPEC", C_HEADS, OPT_TEXT, heads_spec, 0, 0, "the heads to score (default: all; mamba-1 channels must be named)"),
    O("--top", "K", C_HEADS, OPT_INT, top, 1, 1000000, "candidates to ablate from each ranking (default 5)"),
    O("--sweep", "N|all", C_HEADS, OPT_SWEEP, sweep, 0, 1000000,
      "ablate alone the N top heads of each score (aggregate, gather, gold mass),\n"
      "or every head, and rank them with those above by the accuracy lost\n"
      "(default 0: the --top candidates only)"),
    O("--json", "F", C_HEADS, OPT_TEXT, json, 0, 0, "every head's scores, the ablations, the pairs and the sweep"),
    O("--svg", "F", C_HEADS, OPT_TEXT, svg, 0, 0, "the top-scored pair's gather and aggregate maps on the first question"),
    O("--shard", "i/n", C_HEADS, OPT_SHARD, shard, 0, 0,
      "every n-th ablation (all shards score all heads): --json F is the shard's\n"
      "part, and gna merge joins the parts into one run's tables and JSON"),
    O("--json", "F", C_MERGE, OPT_TEXT, json, 0, 0, "the results as JSON"),
    O("--json", "F", C_LOGGED, OPT_TEXT, json, 0, 0, "the results as JSON, with lm-eval's field names (\"acc,none\", \"acc_stderr,none\")"),
    O("--log", "F.jsonl", C_LOGGED, OPT_TEXT, log, 0, 0,
      "one line per question: lm-eval's sample fields (doc_id, doc, target, arguments,\n"
      "resps, filtered_resps, the metrics) and task; appended and flushed as each\n"
      "question finishes, so that a re-run with the same settings resumes"),
    O("--shard", "i/n", C_LOGGED, OPT_SHARD, shard, 0, 0, "only questions i-1, i-1+n, i-1+2n, ... (1 <= i <= n); gna merge joins the logs"),
    O("--no-reuse", NULL, C_HARNESS, OPT_FLAG, no_reuse, 0, 0,
      "run every request whole from position 0, as lm-eval does, instead of each\n"
      "context once (and an mmlu subject's few-shot prefix once); slower, and the\n"
      "same results within the fidelity tolerance"),
    {"--mask", "SPEC", C_RUNS & ~C_HEADS, OPT_TEXT, offsetof(Options, mask_spec), 0, 0, 1,
     "ablate heads or mask attention entries (gna --help describes SPEC)"},
    RUN("--layers", "A-B", OPT_TEXT, layers_text, "run only layers A..B; the paper's minimal model of Llama-3.1-8B is 0-17"),
    RUN("--drop", "L", OPT_DROP, drops, "leave layer L out (repeatable)"),
    RUN("--replace", "L=DIR", OPT_REPLACE, replaces,
        "run layer L of the model in DIR (same width) in place of layer L (repeatable);\n"
        "the donor's layer keeps its config and RoPE (a Llama layer in Llamba)"),
    RUN("--reference", NULL, OPT_FLAG, reference,
        "run gna.c's Part I alone: the definitions, without the vector kernels (and a\n"
        "harness's requests each whole, as --no-reuse)"),
    RUN("--bf16", NULL, OPT_FLAG, bf16,
        "bfloat16 compute: matmul inputs rounded to bfloat16, sums in float32 (as a GPU\nruns the checkpoints); default float32"),
    RUN("--dt-min-clamp", NULL, OPT_FLAG, dt_min_clamp,
        "zamba2: clamp dt at time_step_min, as transformers 5.x (and 4.x on the CPU)\n"
        "does; default: as the CUDA path that made the paper's numbers, only to a\n"
        "time_step_limit that config.json gives"),
    {"--threads", "N", C_ALL & ~C_MERGE, OPT_CHECKED, 0, 1, MAX_THREADS, 1,
     "worker threads (default: all cores); results are identical for any N"},
    O("-q", NULL, C_ALL, OPT_FLAG, quiet, 0, 0, "quiet: no timing lines on stderr"),
    O("-h, --help", NULL, C_ALL, OPT_FLAG, help, 0, 0, "this text"),
#undef O
#undef RUN
};

/* whether an option makes a run (gna_run_new takes it), and whether it takes a value */
static int is_run_option(const char *a, int *takes_value) {
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (options[i].run && strcmp(a, options[i].name) == 0) return (*takes_value = options[i].argument != NULL), 1;
    return 0;
}

/* "i/n" with 1 <= i <= n <= limit, as whole numbers in range */
static int parse_shard(const char *where, const char *text, int limit, int *shard, int *n_shards) {
    const char *slash = strchr(text, '/');
    long long i = 0, n = 0;
    char *part = slash ? checked_strndup(text, (size_t)(slash - text)) : NULL;
    int ok = slash && parse_whole_number(where, part, 1, limit, &i) == GNA_OK && parse_whole_number(where, slash + 1, 1, limit, &n) == GNA_OK &&
             i <= n;
    free(part);
    if (!ok) return bad_input(where, "expected i/n with 1 <= i <= n <= %d (shard i of n), got \"%s\"", limit, text);
    *shard = (int)i, *n_shards = (int)n;
    return GNA_OK;
}

static int parse_double(const char *option, const char *text, double min, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min) || !isfinite(v))
        return bad_input(option, "expected a number >= %g, got \"%s\"", min, text);
    *out = v;
    return GNA_OK;
}

/* "1,2,3" or "1 2 3" into a fresh array */
static int parse_tokens(const char *text, int **tokens, int *n_tokens) {
    size_t length = strlen(text);
    int *ids = checked_malloc(sizeof(int) * (length / 2 + 1));
    int n = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        if (*p < '0' || *p > '9') {
            free(ids);
            return bad_input("--tokens", "expected token ids separated by commas or spaces, got \"%s\"", text);
        }
        long long v = 0;
        while (*p >= '0' && *p <= '9' && v <= INT_MAX) v = v * 10 + (*p++ - '0');
        if (v > INT_MAX) {
            free(ids);
            return bad_input("--tokens", "token id out of range in \"%s\"", text);
        }
        ids[n++] = (int)v;
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (*p == ',') {
            p++;
            while (*p == ' ' || *p == '\t') p++;
            if (!*p || *p == ',') {
                free(ids);
                return bad_input("--tokens", "empty entry in \"%s\"", text);
            }
        }
    }
    if (n == 0) {
        free(ids);
        return bad_input("--tokens", "no token ids given");
    }
    *tokens = ids;
    *n_tokens = n;
    return GNA_OK;
}

static int command_index(const char *command) {
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(command, commands[i].name) == 0) return (int)i;
    return -1;
}

static void print_overview(void) {
    printf("%s", usage_text);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) printf("  %-11s %s\n", commands[i].name, commands[i].summary);
    printf("%s", usage_more);
}

/* a command's text, then its rows of the options table, in the table's order */
static void print_help(const char *command) {
    int c = command_index(command);
    printf("%s", commands[c].text);
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        if (!(options[i].commands & 1u << c)) continue;
        char head[40];
        snprintf(head, sizeof head, "%s%s%s", options[i].name, options[i].argument ? " " : "", options[i].argument ? options[i].argument : "");
        for (const char *line = options[i].help, *end;; line = end + 1) {
            end = strchr(line, '\n');
            printf("  %-16s %.*s\n", line == options[i].help ? head : "", end ? (int)(end - line) : (int)strlen(line), line);
            if (!end) break;
        }
    }
}

/* what each command cannot run without, and options that exclude each other */
static int check_required(const Options *o, unsigned bit) {
    if (bit == C_HEADS && !o->task) return bad_input("--task", "missing: give --task kv or --task mmlu");
    if (bit == C_HEADS && strcmp(o->task, "mmlu") == 0 && !o->data) return bad_input("--data", "missing: --task mmlu needs the MMLU data");
    if ((bit & C_DATA & ~C_HEADS) && !o->data)
        return bad_input("--data", bit == C_MMLU ? "missing: give the MMLU folder (data/dev, data/test) or a .jsonl file"
                                   : bit == C_MC ? "missing: give the questions as a .jsonl file"
                                                 : "missing: give the folder of the tasks' .jsonl files (weights_tools/convert/export_tasks.py)");
    if (bit & (C_TOKENIZE | C_DETOKENIZE)) {
        if (!o->model_dir == !o->tokenizer)
            return bad_input(o->tokenizer ? "--tokenizer" : "-m", "give either -m DIR or --tokenizer FILE");
    } else if (!o->model_dir) {
        return bad_input("-m", "missing: give the model folder with -m DIR");
    }
    if (bit == C_TOKENIZE && !o->prompt == !o->prompt_file) return bad_input(o->prompt ? "-f" : "-p", "give either -p TEXT or -f FILE");
    if (bit == C_DETOKENIZE && !o->tokens_text) return bad_input("--tokens", "missing: give token ids with --tokens 1,2,3");
    if ((bit & C_TEXT) && o->tokens_text && o->prompt) return bad_input("-p", "give either --tokens IDS or -p TEXT, not both");
    if ((bit & C_TEXT) && !o->tokens_text && !o->prompt)
        return bad_input("--tokens", "missing: give token ids with --tokens 1,2,3 or a text with -p TEXT");
    if (o->no_special && !o->prompt && !o->prompt_file) return bad_input("--no-special", "only goes with -p or -f");
    if (bit == C_ATTN && !o->heads_spec) return bad_input("--heads", "missing: name the heads to record, e.g. --heads L17H24");
    if (bit == C_ATTN && !o->output) return bad_input("-o", "missing: give the output file with -o OUT.npy");
    return GNA_OK;
}

/* the arguments after the command, by the options table: an option another command takes is an
 * error here rather than silently ignored */
static int parse_options(int argc, char **argv, Options *o) {
    const char *command = o->command;
    unsigned bit = 1u << command_index(command);
    unsigned char given[sizeof options / sizeof *options] = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
            return GNA_OK;
        }
        if (bit == C_MERGE && a[0] != '-') { /* merge's logs or parts */
            o->logs = o->logs ? o->logs : &argv[i];
            if (o->logs + o->n_logs != &argv[i]) return bad_input(a, "the logs must come together, after or before the options");
            o->n_logs++;
            continue;
        }
        size_t r = 0, n_rows = sizeof options / sizeof *options;
        int known = 0;
        for (; r < n_rows && !(strcmp(a, options[r].name) == 0 && (known = 1) && (options[r].commands & bit)); r++) {}
        if (r == n_rows) return bad_input(a, known ? "not an option of 'gna %s' (see gna %s --help)" : "unknown option for 'gna %s' (see gna %s --help)",
                                          command, command);
        if (options[r].argument && !value) return bad_input(a, "needs a value");
        if (given[r]++ && options[r].argument && options[r].kind != OPT_DROP && options[r].kind != OPT_REPLACE)
            return bad_input(a, "given twice: one would hide the other"); /* one --mask lists every item, comma separated */
        void *field = (char *)o + options[r].field;
        long long number, min = options[r].min, max = options[r].max;
        switch (options[r].kind) {
        case OPT_TEXT: *(const char **)field = value; break;
        case OPT_FLAG: *(int *)field = 1; break;
        case OPT_INT: TRY(parse_whole_number(a, value, min, max, &number)); *(int *)field = (int)number; break;
        case OPT_SEED: TRY(parse_whole_number(a, value, min, max, &number)); *(unsigned long long *)field = (unsigned long long)number; break;
        case OPT_NUMBER: TRY(parse_double(a, value, (double)min, field)); break;
        case OPT_SWEEP:
            if (strcmp(value, "all") == 0) *(long long *)field = LLONG_MAX;
            else TRY(parse_whole_number(a, value, min, max, field));
            break;
        case OPT_TASK:
            if (strcmp(value, "kv") && strcmp(value, "mmlu")) return bad_input(a, "expected kv or mmlu, got \"%s\"", value);
            *(const char **)field = value;
            break;
        case OPT_SHARD: TRY(parse_shard(a, value, 100000, &o->shard, &o->n_shards)); break;
        case OPT_DROP:
            if (o->n_drops == MAX_SURGERY) return bad_input(a, "given more than %d times", MAX_SURGERY);
            TRY(parse_whole_number(a, value, 0, INT_MAX, &number));
            o->drops[o->n_drops++] = (int)number;
            break;
        case OPT_REPLACE: /* checked when the run is made */
            if (o->n_replaces == MAX_SURGERY) return bad_input(a, "given more than %d times", MAX_SURGERY);
            o->replaces[o->n_replaces++] = value;
            break;
        case OPT_CHECKED: TRY(parse_whole_number(a, value, min, max, &number)); break;
        }
        if (options[r].run) { /* kept as given for gna_run_new, which reads them again */
            if (o->n_run_options + 2 > (int)(sizeof o->run_options / sizeof *o->run_options))
                return bad_input(a, "too many options that make the run");
            o->run_options[o->n_run_options++] = a;
            if (options[r].argument) o->run_options[o->n_run_options++] = value;
        }
        if (options[r].argument) i++;
    }
    if (bit == C_MERGE) {
        if (o->n_logs == 0) return bad_input("merge", "give the logs to merge: gna merge LOG.jsonl...");
        return GNA_OK;
    }
    o->no_reuse |= o->reference; /* --reference is the definitions alone: every request whole, as score_request runs it */
    for (size_t r = 0; bit == C_HEADS && o->task && r < sizeof options / sizeof *options; r++) { /* the other task's options */
        const char *name = options[r].name, *kv_only = "--pairs --samples --seed", *mmlu_only = "--data --shots --limit --bos";
        if (given[r] && strstr(strcmp(o->task, "kv") == 0 ? mmlu_only : kv_only, name))
            return bad_input(name, "not an option of --task %s (gna heads --help)", o->task);
    }
    return check_required(o, bit);
}

static int command_info(const Model *m) {
    const Config *c = &m->config;
    const Checkpoint *ck = m->checkpoint;
    static const char *const class_names[] = {"LlamaForCausalLM", "MambaForCausalLM", "FalconMambaForCausalLM",
                                              "Mamba2ForCausalLM", "Zamba2ForCausalLM", "cartesia LlambaLMHeadModel"};
    printf("model        %s\n", m->dir);
    printf("family       %s (%s)\n", family_names[c->family], class_names[c->family]);
    printf("layers       %zu\n", c->n_layers);
    printf("hidden_size  %zu\nvocab_size   %zu\n", c->hidden_size, c->vocab_size);
    if (c->family == FAMILY_LLAMA) {
        printf("attention    %zu heads, %zu kv heads, head_dim %zu%s\n", c->n_heads, c->n_kv_heads, c->head_dim,
               c->attention_bias ? ", with biases" : "");
        if (c->rope_llama3)
            printf("rope         llama3, theta %g, factor %g, low_freq_factor %g, high_freq_factor %g, original %zu\n",
                   c->rope_theta, c->rope_factor, c->rope_low_freq_factor, c->rope_high_freq_factor,
                   c->rope_original_max_positions);
        else
            printf("rope         default, theta %g\n", c->rope_theta);
        printf("mlp          %zu%s\n", c->intermediate_size, c->mlp_bias ? ", with biases" : "");
    } else if (c->family == FAMILY_MAMBA2 || c->family == FAMILY_ZAMBA2 || c->family == FAMILY_LLAMBA) {
        printf("ssm          %zu heads x head_dim %zu (inner %zu), state %zu, %s %zu, conv %zu", c->ssm_heads, c->ssm_head_dim,
               c->ssm_inner, c->ssm_state, c->family == FAMILY_LLAMBA ? "B/C heads" : "groups", c->n_groups, c->conv_kernel);
        if (c->family == FAMILY_LLAMBA) printf(", conv activation %s\n", c->conv_silu ? "silu" : "identity");
        else printf(", dt limit [%g, %g]%s\n", c->dt_limit_min, c->dt_limit_max,
                    c->family == FAMILY_ZAMBA2 ? " (--dt-min-clamp: at time_step_min, as transformers 5.x)" : "");
        if (c->family == FAMILY_LLAMBA) printf("mlp          %zu%s\n", c->intermediate_size, c->mlp_bias ? ", with biases" : "");
        if (c->family == FAMILY_ZAMBA2) {
            size_t hybrid = 0;
            printf("hybrid       layers");
            for (size_t l = 0; l < c->n_layers; l++)
                if (c->shared_visit[l] >= 0) { printf(" %zu", l); hybrid++; }
            printf(" (%zu visits of %zu shared blocks, in turn)\n", hybrid, c->n_shared_blocks);
            printf("attention    %zu heads, %zu kv heads, head_dim %zu, on concat(h, embeddings); rope %s%s\n", c->n_heads,
                   c->n_kv_heads, c->head_dim, c->use_rope ? "default" : "none", c->attention_adapters ? "; q/k/v adapters" : "");
            printf("mlp          %zu, GELU, adapters of rank %zu\n", c->intermediate_size, c->adapter_rank);
        }
    } else {
        printf("ssm          inner %zu channels, state %zu, dt_rank %zu, conv %zu%s\n", c->ssm_inner, c->ssm_state,
               c->dt_rank, c->conv_kernel, c->family == FAMILY_FALCON_MAMBA ? ", RMS on B, C, dt" : "");
    }
    printf("norm_eps     %g\n", c->norm_eps);
    printf("lm_head      %s\n", c->tie_embeddings ? "tied to the embeddings" : "its own matrix");
    long long parameters = 0;
    int per_dtype[4] = {0};
    for (int i = 0; i < ck->n_tensors; i++) {
        long long n = 1;
        for (int d = 0; d < ck->tensors[i].ndim; d++) n *= ck->tensors[i].shape[d];
        parameters += n;
        per_dtype[ck->tensors[i].dtype]++;
    }
    printf("parameters   %lld in %d tensors\n", parameters, ck->n_tensors);
    printf("dtypes      ");
    static const char *const dtype_names[] = {"F32", "BF16", "F16", "other"};
    for (int d = 0; d < 4; d++)
        if (per_dtype[d]) printf(" %s x %d", dtype_names[d], per_dtype[d]);
    printf("\n");
    for (int i = 0; i < ck->n_files; i++) printf("file         %s (%zu bytes)\n", ck->files[i].path, ck->files[i].size);
    return GNA_OK;
}

static int check_tokens(const Model *m, const char *where, const int *tokens, int n) {
    for (int i = 0; i < n; i++)
        if ((size_t)tokens[i] >= m->config.vocab_size)
            return bad_input(where, "token id %d is out of range: the model's vocab_size is %zu", tokens[i], m->config.vocab_size);
    return GNA_OK;
}

/* the tokenizer.json of -m DIR, or --tokenizer FILE */
static int load_tokenizer(const Options *o, Tokenizer **t) {
    if (o->tokenizer) return gna_tokenizer_load(o->tokenizer, t);
    char *path = path_join(o->model_dir, "tokenizer.json");
    int status = gna_tokenizer_load(path, t);
    free(path);
    return status;
}

/* the ids of -p TEXT or -f FILE into *tokens (malloc'd) */
static int tokenize_prompt(const Tokenizer *t, const Options *o, int **tokens, int *n_tokens) {
    char *text = NULL;
    size_t n;
    if (o->prompt_file) TRY(read_file(o->prompt_file, &text, &n));
    else n = strlen(o->prompt);
    Work w;
    memset(&w, 0, sizeof w);
    int status = encode(t, &w, o->prompt_file ? o->prompt_file : "-p", text ? text : o->prompt, n, !o->no_special);
    if (status == GNA_OK) {
        *tokens = w.ids ? w.ids : checked_malloc(sizeof(int));
        *n_tokens = w.n_ids;
        w.ids = NULL;
    }
    free_work(&w);
    free(text);
    return status;
}

static int command_tokenize(const Tokenizer *t, const Options *o) {
    int *ids, n;
    TRY(tokenize_prompt(t, o, &ids, &n));
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
    return GNA_OK;
}

static int command_detokenize(const Tokenizer *t, const Options *o, const int *ids, int n) {
    Work w;
    memset(&w, 0, sizeof w);
    Bytes text = {0};
    int status = decode(t, &w, "--tokens", ids, n, o->skip_special, &text);
    if (status == GNA_OK) fwrite(text.data, 1, text.length, stdout);
    free(text.data);
    free_work(&w);
    return status;
}

/* Generation with -p shows text as it comes: the decoded sequence so far, printed from where the
 * last print stopped, held back while it ends in U+FFFD (a character whose bytes have not all come).
 * Ids the tokenizer lacks (the padding rows of an embedding) are dropped, as HF's decode drops them. */
static void show_text(const Tokenizer *t, const int *ids, int n, Bytes *shown, int last) {
    int *known = checked_malloc(sizeof(int) * (size_t)(n + 1)), n_known = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] < t->n_ids && t->id_text[ids[i]]) known[n_known++] = ids[i];
    Work w;
    memset(&w, 0, sizeof w);
    Bytes text = {0};
    if (decode(t, &w, "ids", known, n_known, 0, &text) == GNA_OK && text.length >= shown->length &&
        memcmp(text.data, shown->data ? shown->data : "", shown->length) == 0 &&
        (last || text.length < 3 || memcmp(text.data + text.length - 3, "\xEF\xBF\xBD", 3) != 0)) {
        fwrite(text.data + shown->length, 1, text.length - shown->length, stdout);
        fflush(stdout);
        shown->length = 0;
        bytes_add(shown, text.data, text.length);
    }
    free(text.data);
    free_work(&w);
    free(known);
}

/* the k (at most 64) largest of row[0..V), by repeated selection: k is small, and ties go to the lower
 * id, like argmax */
static size_t top_k(const float *row, size_t V, size_t k, size_t *chosen) {
    k = k < 64 ? k : 64;
    for (size_t i = 0; i < k; i++) {
        size_t best = V;
        for (size_t v = 0; v < V; v++) {
            int taken = 0;
            for (size_t j = 0; j < i; j++) taken |= chosen[j] == v;
            if (!taken && (best == V || row[v] > row[best])) best = v;
        }
        chosen[i] = best;
    }
    return k;
}

static int command_logits(gna_run *run, const Options *o, const int *tokens, size_t T) {
    const Model *m = run->model;
    size_t V = m->config.vocab_size;
    Cache *cache = cache_new(m, run->plan, T);
    OutputFile out = {0};
    if (o->output) { /* opened first: an unwritable path should fail before a long run, not after */
        int status = open_output(&out, o->output);
        if (status != GNA_OK) {
            cache_free(cache);
            return status;
        }
    }
    float *logits = float_array(T, V);
    double start = seconds_now();
    int status = forward(m, &run->cx, &run->iv, cache, tokens, T, logits, 0);
    if (status == GNA_OK && !o->quiet) fprintf(stderr, "gna: %zu tokens in %.3f s\n", T, seconds_now() - start);
    if (o->output) {
        int64_t shape[2] = {(int64_t)T, (int64_t)V};
        if (status == GNA_OK) write_npy(out.file, logits, 2, shape);
        int closed = close_output(&out, status == GNA_OK);
        if (status == GNA_OK) status = closed;
    } else if (status == GNA_OK) {
        size_t top = (size_t)o->top < V ? (size_t)o->top : V;
        for (size_t t = 0; t < T; t++) {
            const float *row = logits + t * V;
            size_t chosen[64], k = top_k(row, V, top, chosen);
            printf("%4zu  token %6d  next:", t, tokens[t]);
            for (size_t i = 0; i < k; i++) printf("  %zu (%.4f)", chosen[i], row[chosen[i]]);
            printf("\n");
        }
    }
    free(logits);
    cache_free(cache);
    return status;
}

/* The logit lens at one position: a residual tap after every layer the run runs, one forward pass, then
 * gna_unembed on the captured rows. Prints each layer's most probable next tokens (softmax over V). */
static int command_lens(gna_run *run, const Options *o, const int *tokens, size_t T, const Tokenizer *t) {
    const Model *m = run->model;
    size_t V = m->config.vocab_size, D = m->config.hidden_size, n = 0, *layers = checked_calloc(m->config.n_layers, sizeof(size_t));
    long at = resolve_position(o->at, T);
    if (at < 0) {
        free(layers);
        return bad_input("--at", "position %d is outside the %zu tokens", o->at, T);
    }
    float *hidden = float_array(m->config.n_layers, D), *logits = float_array(m->config.n_layers, V);
    int position = (int)at, status = GNA_OK;
    for (size_t l = 0; l < m->config.n_layers && status == GNA_OK; l++) {
        char site[24];
        if (!run->plan[l].layer) continue;
        snprintf(site, sizeof site, "L%zu", l);
        status = gna_run_tap(run, GNA_CAPTURE, site, &position, 1, hidden + n * D);
        layers[n++] = l;
    }
    Cache *cache = cache_new(m, run->plan, T);
    OutputFile out = {0};
    if (status == GNA_OK && o->output) status = open_output(&out, o->output);
    if (status == GNA_OK) status = forward(m, &run->cx, &run->iv, cache, tokens, T, NULL, T);
    if (status == GNA_OK) status = gna_unembed(run, hidden, (int)n, logits);
    gna_run_tap(run, GNA_CAPTURE, NULL, NULL, 0, NULL);
    if (o->output) {
        int64_t shape[2] = {(int64_t)n, (int64_t)V};
        if (status == GNA_OK) write_npy(out.file, logits, 2, shape);
        int closed = close_output(&out, status == GNA_OK);
        if (status == GNA_OK) status = closed;
    }
    for (size_t i = 0; i < n && status == GNA_OK; i++) {
        const float *row = logits + i * V;
        size_t chosen[64], k = top_k(row, V, (size_t)o->top, chosen);
        double sum = 0;
        for (size_t v = 0; v < V; v++) sum += exp((double)row[v] - row[chosen[0]]);
        printf("L%-3zu", layers[i]);
        for (size_t j = 0; j < k; j++) {
            char label[96];
            token_label(t, (int)chosen[j], 0, label, sizeof label);
            printf("  %s (%.3f)", label, exp((double)row[chosen[j]] - row[chosen[0]]) / sum);
        }
        printf("\n");
    }
    free(hidden);
    free(logits);
    free(layers);
    cache_free(cache);
    return status;
}

/* greedy: the first index of the largest logit (torch.argmax); else a draw from softmax(logits / temperature) */
static int sample(const float *logits, size_t V, double temperature, uint64_t *rng) {
    size_t best = 0;
    for (size_t v = 1; v < V; v++)
        if (logits[v] > logits[best]) best = v;
    if (temperature == 0) return (int)best;
    double sum = 0, r = (double)(random_next(rng) >> 11) * 0x1.0p-53;
    for (size_t v = 0; v < V; v++) sum += exp((logits[v] - logits[best]) / temperature);
    double target = r * sum, running = 0;
    for (size_t v = 0; v < V; v++) {
        running += exp((logits[v] - logits[best]) / temperature);
        if (running > target) return (int)v;
    }
    return (int)best;
}

/* t: print text (-p), or NULL: print ids */
static int command_generate(gna_run *run, const Options *o, const int *prompt, size_t n_prompt, const Tokenizer *t) {
    const Model *m = run->model;
    const Config *c = &m->config;
    size_t V = c->vocab_size;
    Cache *cache = cache_new(m, run->plan, n_prompt + (size_t)o->n_new);
    float *logits = checked_malloc(sizeof(float) * V);
    int *all = checked_malloc(sizeof(int) * (n_prompt + (size_t)o->n_new + 1));
    size_t n_all = n_prompt;
    memcpy(all, prompt, sizeof(int) * n_prompt);
    Bytes shown = {0};
    uint64_t rng = o->seed;
    if (t) show_text(t, all, (int)n_all, &shown, 0);
    else for (size_t i = 0; i < n_prompt; i++) printf("%s%d", i ? " " : "", prompt[i]);
    fflush(stdout);
    double start = seconds_now();
    int status = forward(m, &run->cx, &run->iv, cache, prompt, n_prompt, logits, n_prompt - 1), made = 0;
    while (status == GNA_OK && made < o->n_new) {
        int next = sample(logits, V, o->temperature, &rng);
        all[n_all++] = next;
        if (t) show_text(t, all, (int)n_all, &shown, 0);
        else printf(" %d", next);
        fflush(stdout);
        made++;
        int is_eos = 0;
        for (size_t e = 0; e < c->n_eos; e++) is_eos |= next == c->eos_token_ids[e];
        if ((is_eos && !o->ignore_eos) || made == o->n_new) break;
        status = forward(m, &run->cx, &run->iv, cache, &next, 1, logits, 0);
    }
    if (t) show_text(t, all, (int)n_all, &shown, 1);
    printf("\n");
    if (status == GNA_OK && !o->quiet)
        fprintf(stderr, "gna: %zu prompt tokens, %d generated in %.3f s\n", n_prompt, made, seconds_now() - start);
    free(shown.data);
    free(all);
    free(logits);
    cache_free(cache);
    return status;
}

/* --rows: positions and ranges, comma separated, negative from the end of T tokens */
static int parse_rows(const char *text, size_t T, size_t **rows, size_t *n_rows) {
    size_t *list = NULL, n = 0, capacity = 0;
    for (const char *p = text; *p;) {
        long first, last;
        const char *end = parse_positions(p, &first, &last);
        first = end ? resolve_position(first, T) : -1;
        last = end ? resolve_position(last, T) : -1;
        if (!end || (*end && (*end != ',' || !end[1])) || first < 0 || last < first) {
            free(list);
            return bad_input("--rows", "\"%s\": expected positions N or N-M inside the %zu tokens, comma separated", text, T);
        }
        for (long r = first; r <= last; r++) {
            list = grow_array(list, n, &capacity, sizeof(size_t));
            list[n++] = (size_t)r;
        }
        p = *end ? end + 1 : end;
    }
    if (n == 0) return bad_input("--rows", "no rows given");
    *rows = list;
    *n_rows = n;
    return GNA_OK;
}

/* gna attn --json: each head's map statistics (I.7's map_statistics), the text's lines cut at the
 * tokens whose text holds a newline (none without a tokenizer) */
static int write_map_statistics(const char *path, const Probe *probes, const char *const *names, size_t n, const int *tokens,
                                size_t T, const Tokenizer *tokenizer) {
    size_t *newlines = checked_malloc(sizeof(size_t) * T), m = 0;
    for (size_t k = 0; k < T; k++) {
        Bytes text = {0};
        if (token_text(tokenizer, tokens[k], &text) && memchr(text.data, '\n', text.length)) newlines[m++] = k;
        free(text.data);
    }
    double *lines = checked_malloc(sizeof(double) * (m + 1));
    Bytes b = {0};
    bytes_add_text(&b, "{\"newlines\": [");
    for (size_t j = 0; j < m; j++) bytes_printf(&b, j ? ", %zu" : "%zu", newlines[j]);
    bytes_add_text(&b, "],\n \"heads\": [");
    for (size_t i = 0; i < n; i++) {
        MapStatistics st = {.lines = lines};
        char label[96];
        map_statistics(probes[i].matrix, T, newlines, m, &st);
        token_label(tokenizer, tokens[st.largest], 0, label, sizeof label);
        bytes_printf(&b, "%s\n  {\"head\": ", i ? "," : "");
        json_add_string(&b, names[i], strcspn(names[i], " "));
        bytes_printf(&b, ", \"map\": \"%s\", \"previous\": ", probes[i].kind == HEAD_ATTENTION ? "attention" : "implicit attention");
        json_add_number(&b, st.previous);
        bytes_add_text(&b, ", \"own_line\": ");
        json_add_number(&b, st.own_line);
        bytes_add_text(&b, ", \"lines\": [");
        for (size_t j = 0; j <= m; j++) {
            bytes_add_text(&b, j ? ", " : "");
            json_add_number(&b, lines[j]);
        }
        bytes_printf(&b, "], \"largest\": {\"position\": %zu, \"token\": ", st.largest);
        json_add_text(&b, label);
        bytes_add_text(&b, ", \"share\": ");
        json_add_number(&b, st.largest_share);
        bytes_add_text(&b, "}}");
    }
    bytes_add_text(&b, "\n]}\n");
    int status = write_output(path, &b);
    free(b.data), free(lines), free(newlines);
    return status;
}

/* tokenizer: for the SVG's token labels; NULL labels tokens by id */
static int command_attn(gna_run *run, const Options *o, const int *tokens, size_t T, const Tokenizer *tokenizer) {
    const Model *m = run->model;
    size_t *rows = NULL, n_rows = T;
    int status = GNA_OK;
    if (o->rows_text && o->json) return bad_input("--json", "reads whole maps: give it without --rows");
    if (o->rows_text) TRY(parse_rows(o->rows_text, T, &rows, &n_rows));
    else {
        rows = checked_malloc(sizeof(size_t) * T);
        for (size_t t = 0; t < T; t++) rows[t] = t;
    }
    MaskItem *heads;
    size_t n_heads;
    if ((status = parse_mask(m, run->plan, "--heads", o->heads_spec, &heads, &n_heads)) != GNA_OK) { /* to size the matrices */
        free(rows);
        return status;
    }
    free(heads);
    float *matrices = checked_calloc(size_product(n_heads * n_rows, T), sizeof(float));
    if ((status = set_probes(run, "--heads", o->heads_spec, rows, n_rows, T, matrices)) != GNA_OK) {
        free(matrices);
        return status;
    }
    size_t n = run->n_probes;
    char (*names)[64] = checked_calloc(n, sizeof *names);
    const char **name_pointers = checked_calloc(n, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        const Probe *p = &run->probes[i];
        int hybrid = m->layers[p->layer].has_shared_visit;
        snprintf(names[i], sizeof names[i], "L%zu%c%zu %s", p->layer, hybrid ? (p->kind == HEAD_ATTENTION ? 'A' : 'S') : 'H', p->head,
                 p->kind == HEAD_ATTENTION ? "attention" : "implicit attention");
        name_pointers[i] = names[i];
    }
    OutputFile npy = {0}, svg = {0};
    status = open_output(&npy, o->output);
    if (status == GNA_OK && o->svg && (status = open_output(&svg, o->svg)) != GNA_OK) close_output(&npy, 0);
    if (status == GNA_OK) {
        Cache *cache = cache_new(m, run->plan, T);
        status = forward(m, &run->cx, &run->iv, cache, tokens, T, NULL, T);
        cache_free(cache);
        int64_t shape[3] = {(int64_t)n, (int64_t)n_rows, (int64_t)T};
        if (status == GNA_OK) write_npy(npy.file, matrices, 3, shape);
        if (status == GNA_OK && o->svg) write_attention_svg(svg.file, run->probes, name_pointers, n, tokens, T, tokenizer);
        if (status == GNA_OK && o->json) status = write_map_statistics(o->json, run->probes, name_pointers, n, tokens, T, tokenizer);
        int svg_status = o->svg ? close_output(&svg, status == GNA_OK) : GNA_OK;
        int npy_status = close_output(&npy, status == GNA_OK && svg_status == GNA_OK);
        if (status == GNA_OK) status = svg_status != GNA_OK ? svg_status : npy_status;
    }
    free(name_pointers);
    free(names);
    free(matrices);
    return status;
}

/* The settings every harness records: what changes its results */
/* A model's identity, whatever its path: FNV-1a over its config.json and, for each safetensors file, its
 * size and header (which names every tensor's dtype, shape and offsets) - what resume and merge check */
static void add_model_identity(Bytes *b, const Model *m) {
    char *config_path = path_join(m->dir, "config.json"), *config = NULL;
    size_t size = 0;
    uint64_t h = 0;
    if (read_file(config_path, &config, &size) == GNA_OK) h = hash_text(config, size);
    for (int f = 0; f < m->checkpoint->n_files; f++) {
        const SafetensorsFile *file = &m->checkpoint->files[f];
        uint64_t header = 0;
        for (int i = 0; i < 8; i++) header |= (uint64_t)((const unsigned char *)file->map)[i] << (8 * i);
        h = (h ^ file->size) * 0x100000001B3ull;
        h = (h ^ hash_text((const char *)file->map + 8, (size_t)header)) * 0x100000001B3ull;
    }
    bytes_printf(b, "\"fnv1a64:%016llx\"", (unsigned long long)h);
    free(config), free(config_path);
}

/* the settings of a harness run, as a JSON object: the model (its path and identity) and everything
 * that changes a result */
static void settings_begin(Bytes *b, const Options *o, const gna_run *run) {
    b->length = 0;
    bytes_add_text(b, "{\"model\": ");
    json_add_text(b, o->model_dir);
    bytes_add_text(b, ", \"model_id\": ");
    add_model_identity(b, run->model);
    for (int i = 0; i < MAX_SURGERY && run->donors[i]; i++) {
        bytes_add_text(b, i ? ", " : ", \"donor_ids\": [");
        add_model_identity(b, run->donors[i]);
        bytes_add_text(b, i + 1 < MAX_SURGERY && run->donors[i + 1] ? "" : "]");
    }
    bytes_add_text(b, ", \"mask\": ");
    if (o->mask_spec) json_add_text(b, o->mask_spec);
    else bytes_add_text(b, "null");
    bytes_add_text(b, ", \"layers\": ");
    if (o->layers_text) json_add_text(b, o->layers_text);
    else bytes_add_text(b, "null");
    bytes_add_text(b, ", \"drop\": [");
    for (int i = 0; i < o->n_drops; i++) bytes_printf(b, i ? ", %d" : "%d", o->drops[i]);
    bytes_add_text(b, "], \"replace\": [");
    for (int i = 0; i < o->n_replaces; i++) { /* "L=DIR", as given */
        bytes_add_text(b, i ? ", " : "");
        json_add_text(b, o->replaces[i]);
    }
    bytes_printf(b, "], \"bf16\": %s, \"reference\": %s, \"dt_min_clamp\": %s", o->bf16 ? "true" : "false",
                 o->reference ? "true" : "false", o->dt_min_clamp ? "true" : "false");
}

/* --keys FILE: one key per line, distinct, not empty, UTF-8 text without ':' or NUL */
static int read_keys(const char *path, char **text, const char ***keys, size_t *n_keys) {
    size_t size, n = 0, capacity = 0;
    TRY(read_file(path, text, &size));
    int line = 0;
    const char **list = NULL;
    const char *problem = NULL;
    TextMap seen;
    text_map_init(&seen, size / 2 + 1);
    for (char *p = *text, *end; p < *text + size && !problem; p = end + 1) {
        line++;
        end = memchr(p, '\n', (size_t)(*text + size - p));
        if (!end) end = *text + size;
        size_t length = (size_t)(end - p);
        if (length > 0 && p[length - 1] == '\r') length--;
        problem = length == 0 ? "an empty key" : memchr(p, ':', length) ? "a key with ':'"
                : memchr(p, 0, length) ? "a NUL character" : utf8_valid_prefix(p, length) < length ? "not valid UTF-8" : NULL;
        if (!problem && text_map_put(&seen, p, length, (int)n) >= 0) problem = "a key given twice";
        p[length] = 0;
        list = grow_array(list, n, &capacity, sizeof *list);
        list[n++] = p;
    }
    free(seen.slots);
    if (problem) {
        free(list);
        free(*text);
        *text = NULL;
        return bad_input(path, "line %d: %s", line, problem);
    }
    *keys = list;
    *n_keys = n;
    return GNA_OK;
}

/* gna kv, mmlu, mc, knowledge, gsm8k: a harness's questions (Part I's tasks), scored by the scorer */
/* gna kv's questions (--pairs, --keys, --samples, --seed) and their settings; *keys and *key_text
 * hold the keys while the harness runs */
static int build_kv_harness(const Options *o, Harness *h, Bytes *settings, char **key_text, const char ***keys) {
    int status = GNA_OK;
    size_t pairs[64], n_settings = 0, n_keys = 0;
    const char *p = o->pairs_text ? o->pairs_text : "10,15,20,25,30,35,40,45,50";
    for (int more = 1; more && status == GNA_OK;) { /* numbers separated by single commas */
        char *end = (char *)p;
        long v = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        for (size_t i = 0; i < n_settings; i++) v = pairs[i] == (size_t)v ? -1 : v; /* each number once: a task per number */
        if (v < 1 || v > 100 || (*end && *end != ',') || n_settings == 64)
            status = bad_input("--pairs", "expected up to 64 numbers of pairs from 1 to 100, each once, comma separated, got \"%s\"", o->pairs_text);
        else pairs[n_settings++] = (size_t)v;
        more = status == GNA_OK && *end == ',';
        if (more) p = end + 1;
    }
    if (status == GNA_OK) {
        if (o->keys) status = read_keys(o->keys, key_text, keys, &n_keys);
        else {
            *keys = checked_malloc(sizeof kv_default_keys);
            memcpy(*keys, kv_default_keys, sizeof kv_default_keys);
            n_keys = N_KV_KEYS;
        }
    }
    for (size_t i = 0; i < n_settings && status == GNA_OK; i++)
        if (pairs[i] > n_keys) status = bad_input("--pairs", "%zu pairs need %zu distinct keys; there are %zu", pairs[i], pairs[i], n_keys);
    if (status == GNA_OK) build_kv(h, *keys, n_keys, pairs, n_settings, o->samples, o->seed, o->mask_spec != NULL);
    bytes_add_text(settings, ", \"keys\": ");
    if (o->keys) json_add_text(settings, o->keys);
    else bytes_add_text(settings, "null");
    bytes_add_text(settings, ", \"pairs\": [");
    for (size_t i = 0; i < n_settings; i++) bytes_printf(settings, i ? ", %zu" : "%zu", pairs[i]);
    bytes_printf(settings, "], \"samples\": %d, \"seed\": %llu}", o->samples, o->seed);
    return status;
}

/* the questions of a harness that reads --data (mmlu, mc, knowledge, gsm8k) and their settings */
static int build_data_harness(const Options *o, Harness *h, Bytes *settings) {
    int status;
    size_t limit = (size_t)o->limit;
    if (strcmp(o->command, "mmlu") == 0) status = build_mmlu(h, o->data, (size_t)o->shots, limit);
    else if (strcmp(o->command, "mc") == 0) status = build_mc(h, o->data, limit);
    else if (strcmp(o->command, "knowledge") == 0) status = build_knowledge(h, o->data, o->tasks, limit);
    else status = build_gsm8k(h, o->data, (size_t)o->shots, limit);
    bytes_add_text(settings, ", \"data\": ");
    json_add_text(settings, o->data);
    if (strcmp(o->command, "mmlu") == 0 || strcmp(o->command, "gsm8k") == 0)
        bytes_printf(settings, ", \"shots\": %d", o->shots);
    if (strcmp(o->command, "gsm8k") == 0) bytes_printf(settings, ", \"max_gen_toks\": %d", o->max_gen_toks);
    if (strcmp(o->command, "knowledge") == 0) {
        bytes_add_text(settings, ", \"tasks\": ");
        if (o->tasks) json_add_text(settings, o->tasks);
        else bytes_add_text(settings, "null");
    }
    if (o->limit > 0) bytes_printf(settings, ", \"limit\": %d", o->limit);
    else bytes_add_text(settings, ", \"limit\": null");
    bytes_printf(settings, ", \"bos\": %s}", o->bos ? "true" : "false");
    return status;
}

static int command_harness(gna_run *run, const Options *o, const Tokenizer *t) {
    Harness h = {0};
    Bytes settings = {0};
    settings_begin(&settings, o, run);
    const char *command = o->command;
    int status = GNA_OK, is_kv = strcmp(command, "kv") == 0;
    char *key_text = NULL;
    const char **keys = NULL;
    if (is_kv) status = build_kv_harness(o, &h, &settings, &key_text, &keys);
    else status = build_data_harness(o, &h, &settings);
    Intervention plain = {.plan = run->plan}; /* kv scores every sample with and without --mask */
    Scorer s = {.model = run->model, .tokenizer = t, .cx = &run->cx, .plan = run->plan, .add_special = is_kv || o->bos,
                .reuse = !o->no_reuse, .max_new_tokens = (size_t)o->max_gen_toks, .prefix_index = -1};
    char *tokenizer_config = path_join(o->model_dir, "tokenizer_config.json");
    JsonDocument config;
    if (status == GNA_OK && access(tokenizer_config, F_OK) == 0 && (status = load_json(&config, tokenizer_config)) == GNA_OK) {
        const JsonValue *clean = json_get(config.root, "clean_up_tokenization_spaces");
        s.clean_up_spaces = clean && clean->type == JSON_TRUE;
        free_json(&config);
    }
    free(tokenizer_config);
    Outcomes outcomes = {0};
    HarnessRun harness_run = {command, o->log, o->shard, o->n_shards, o->quiet, settings.data, is_kv ? &plain : &run->iv, &run->iv};
    double started = seconds_now();
    if (status == GNA_OK) status = run_harness(&harness_run, &h, &s, &outcomes);
    if (status == GNA_OK && !o->quiet) {
        fprintf(stderr, "gna %s: %zu questions in %.1f s", command, outcomes.n, seconds_now() - started);
        if (s.prefix_hits + s.prefix_misses) fprintf(stderr, " (few-shot prefix reused %lld times, recomputed %lld)", s.prefix_hits, s.prefix_misses);
        fprintf(stderr, "\n");
    }
    if (status == GNA_OK) status = report_results(command, &outcomes, settings.data, o->mask_spec, o->json, is_kv ? o->svg : NULL);
    free_outcomes(&outcomes);
    free_scorer(&s);
    free_harness(&h);
    free(keys);
    free(key_text);
    free(settings.data);
    return status;
}

/* gna merge LOG...: the shards of one run into its results. The logs must be one split of one run's
 * questions (the same first line but for the shard and the model's path), each shard once and whole,
 * each question once; every metric is recomputed from what its line logged. */
static int command_merge_heads(int n_parts, char **parts, const char *json_path);

/* the one run a merge's logs come from, as their first lines say */
typedef struct {
    char *command, *settings; /* gna's command and the settings object of the first log */
    const MetricNames *names;
    int n_shards, *seen;      /* seen[i]: shard i/n_shards was given */
} MergedRun;

/* a duplicate among the outcomes from `from` on (sorted by task and document), or NULL */
static const Outcome *duplicate_outcome(const Outcomes *outcomes, size_t from) {
    const Outcome **sorted = checked_malloc(sizeof(Outcome *) * (outcomes->n - from + 1)), *twice = NULL;
    for (size_t i = from; i < outcomes->n; i++) sorted[i - from] = &outcomes->items[i];
    qsort(sorted, outcomes->n - from, sizeof *sorted, compare_outcomes);
    for (size_t i = 1; i < outcomes->n - from && !twice; i++)
        if (compare_outcomes(&sorted[i - 1], &sorted[i]) == 0) twice = sorted[i];
    free(sorted);
    return twice;
}

/* a log's first line (`length` bytes at `text`): gna's own header, of the run of the first log */
static int merge_header(MergedRun *run, const char *log, int f, const char *first_log, const char *text, size_t length,
                        const JsonValue *root, int *expected) {
    const JsonValue *g = json_get(root, "gna"), *sh = json_get(root, "shard"), *q = json_get(root, "questions");
    const char *settings_at = strstr(text, "\"settings\": ");
    int shard = 0, shards = 0, status = GNA_OK;
    if (!g || g->type != JSON_STRING || !names_of(g->string) || !sh || sh->type != JSON_STRING ||
        parse_shard(log, sh->string, 100000, &shard, &shards) != GNA_OK || !q || q->type != JSON_NUMBER || !settings_at ||
        settings_at > text + length || !(q->number >= 0 && q->number <= INT_MAX && q->number == floor(q->number)))
        return bad_input(log, "line 1: not the first line of a gna log");
    size_t n = (size_t)(text + length - (settings_at + 12)) - 1; /* the object, without the line's closing } */
    char *given = checked_strndup(settings_at + 12, n);
    Bytes written = {0}; /* the line must be the one log_header writes for these values */
    log_header(&written, g->string, given, shard, shards, (int)q->number);
    *expected = (int)q->number;
    if (written.length != length + 1 || memcmp(written.data, text, length) != 0) {
        status = bad_input(log, "line 1: not a first line gna wrote");
    } else if (f == 0) {
        run->command = checked_strdup(g->string);
        run->names = names_of(run->command);
        run->settings = checked_strdup(given);
        run->n_shards = shards;
        run->seen = checked_calloc((size_t)shards + 1, sizeof(int));
    } else if (strcmp(run->command, g->string) != 0) {
        status = bad_input(log, "is a log of gna %s, %s of gna %s", g->string, first_log, run->command);
    } else if (shards != run->n_shards) {
        status = bad_input(log, "is shard %s, of another split than %s's %d", sh->string, first_log, run->n_shards);
    } else {
        Bytes mine = {0}, theirs = {0};
        log_header(&mine, run->command, run->settings, 1, shards, 0);
        log_header(&theirs, run->command, given, 1, shards, 0);
        if (!headers_agree(mine.data, mine.length, theirs.data, theirs.length))
            status = bad_input(log, "is a log of other settings (or another model) than %s", first_log);
        free(mine.data), free(theirs.data);
    }
    if (status == GNA_OK && run->seen[shard]++) status = bad_input(log, "is shard %d/%d, which is given twice", shard, shards);
    free(written.data);
    free(given);
    return status;
}

/* one shard's log: its header, then each question's outcome, recomputed from what its line logged */
static int merge_log(MergedRun *run, char **logs, int f, Outcomes *outcomes) {
    char *text;
    size_t size, from = outcomes->n;
    TRY(read_file(logs[f], &text, &size));
    int line = 0, expected = 0, status = GNA_OK;
    for (size_t at = 0; at < size && status == GNA_OK;) {
        const char *end = memchr(text + at, '\n', size - at);
        if (!end) {
            status = bad_input(logs[f], "line %d is unfinished: the run was cut short; re-run it to finish", line + 1);
            break;
        }
        size_t length = (size_t)(end - (text + at));
        JsonDocument doc;
        line++;
        if ((status = parse_log_line(logs[f], line, text + at, length, &doc)) != GNA_OK) break;
        if (line == 1) {
            status = merge_header(run, logs[f], f, logs[0], text, length, doc.root, &expected);
        } else {
            const char *task;
            int doc_id;
            double value[2];
            status = logged_outcome(logs[f], line, doc.root, run->names, &task, &doc_id, value);
            if (status == GNA_OK && strcmp(run->command, "mmlu") == 0 && strncmp(task, "mmlu_", 5) != 0) /* summarise reads the subject after it */
                status = bad_input(logs[f], "line %d: task \"%.80s\" is not an MMLU subject (mmlu_<subject>)", line, task);
            if (status == GNA_OK && strcmp(run->command, "kv") == 0 && kv_pairs_of(task) < 0)
                status = bad_input(logs[f], "line %d: task \"%.80s\" is not one gna kv makes (kv_pairs_N, N 1-100)", line, task);
            if (status == GNA_OK) add_outcome(outcomes, task, doc_id, value);
        }
        free_json(&doc);
        at += length + 1;
    }
    free(text);
    const Outcome *twice = NULL;
    if (status == GNA_OK && line == 0) status = bad_input(logs[f], "is empty");
    if (status == GNA_OK && (twice = duplicate_outcome(outcomes, from))) /* written by two runs at once, or edited */
        status = bad_input(logs[f], "%s document %d is there twice: not one run's log", twice->task, twice->doc_id);
    if (status == GNA_OK && (int)(outcomes->n - from) != expected)
        status = bad_input(logs[f], "holds %d of its %d questions: finish it first (re-run its command)", (int)(outcomes->n - from), expected);
    return status;
}

static int command_merge(int n_logs, char **logs, const char *json_path) {
    char *first;
    size_t first_size;
    TRY(read_file(logs[0], &first, &first_size)); /* gna heads' shard parts, or harness logs */
    int heads = first_size > 15 && memcmp(first, "{\"gna\": \"heads\"", 15) == 0;
    free(first);
    if (heads) return command_merge_heads(n_logs, logs, json_path);
    Outcomes outcomes = {0};
    MergedRun run = {0};
    int status = GNA_OK;
    for (int f = 0; f < n_logs && status == GNA_OK; f++) status = merge_log(&run, logs, f, &outcomes);
    for (int i = 1; status == GNA_OK && i <= run.n_shards; i++)
        if (!run.seen[i]) status = bad_input("merge", "shard %d/%d is missing", i, run.n_shards);
    const Outcome *twice = NULL;
    if (status == GNA_OK && (twice = duplicate_outcome(&outcomes, 0))) /* the shards were not of one split */
        status = bad_input("merge", "%s document %d is in two logs", twice->task, twice->doc_id);
    if (status == GNA_OK) {
        char *mask = NULL;
        JsonDocument doc;
        if (strcmp(run.command, "kv") == 0 && parse_json(&doc, run.settings, strlen(run.settings), "settings") == GNA_OK) {
            const JsonValue *mv = json_get(doc.root, "mask");
            mask = mv && mv->type == JSON_STRING ? checked_strdup(mv->string) : NULL;
            free_json(&doc);
        }
        status = report_results(run.command, &outcomes, run.settings, mask, json_path, NULL);
        free(mask);
    }
    free(run.seen);
    free(run.command);
    free(run.settings);
    free_outcomes(&outcomes);
    return status;
}

/* What gna heads found, in --heads order: from one run, or joined by gna merge from its shards' parts */
typedef struct {
    size_t gather, aggregate;  /* indices of the heads */
    double accuracy;           /* the task's accuracy with both ablated; NAN: not measured (another shard's) */
} HeadPair;

typedef struct {
    const char *task;
    size_t n_questions, top, sweep; /* top: K, candidates from each ranking (<= n_heads); sweep: --sweep's N (<= n_heads) */
    double accuracy;                /* nothing ablated */
    HeadScore *scores;              /* [n_heads] */
    size_t n_heads;
    HeadPair *pairs;                /* [n_pairs]: top gather heads with top aggregate heads of later layers */
    size_t n_pairs;
} HeadsFound;

/* candidate[k]: head k is ablated alone: the top K of the aggregate and gather rankings, and the top
 * `sweep` of those and of the gold mass ranking */
static char *heads_candidates(const HeadsFound *f) {
    size_t *order[3] = {checked_malloc(sizeof(size_t) * (f->n_heads + 1)), checked_malloc(sizeof(size_t) * (f->n_heads + 1)),
                        checked_malloc(sizeof(size_t) * (f->n_heads + 1))};
    int by[3] = {BY_AGGREGATE, BY_GATHER, BY_GOLD_MASS};
    char *candidate = checked_calloc(f->n_heads + 1, 1);
    for (int r = 0; r < 3; r++) {
        rank_heads(f->scores, f->n_heads, by[r], order[r]);
        for (size_t j = 0; j < (r < 2 && f->top > f->sweep ? f->top : f->sweep); j++) candidate[order[r][j]] = 1;
        free(order[r]);
    }
    return candidate;
}

/* One head's entry in gna heads' JSON (a run's and a shard's part alike) */
static void json_add_head(Bytes *b, const HeadScore *x) {
    bytes_printf(b, "{\"head\": \"%s\", \"aggregate\": ", x->name);
    json_add_number(b, x->aggregate);
    bytes_add_text(b, ", \"gold_mass\": ");
    json_add_number(b, x->gold_mass);
    bytes_add_text(b, ", \"gather\": ");
    json_add_number(b, x->gather);
    bytes_add_text(b, ", \"ablated_accuracy\": ");
    json_add_number(b, x->ablated_accuracy);
    bytes_add_text(b, "}");
}

/* The tables on stdout, and with json_path the JSON of every head's scores, the ablations, the pairs
 * and the sweep */
static int report_heads(const HeadsFound *f, double seconds, const char *json_path) {
    size_t n = f->n_heads, K = f->top, n_swept = 0;
    size_t *by_aggregate = checked_malloc(sizeof(size_t) * (n + 1)), *by_gather = checked_malloc(sizeof(size_t) * (n + 1));
    size_t *by_cost = checked_malloc(sizeof(size_t) * (n + 1));
    rank_heads(f->scores, n, BY_AGGREGATE, by_aggregate);
    rank_heads(f->scores, n, BY_GATHER, by_gather);
    rank_heads(f->scores, n, BY_ABLATED_ACCURACY, by_cost);
    for (size_t k = 0; k < n; k++) n_swept += !isnan(f->scores[k].ablated_accuracy);
    long found = f->n_pairs ? 0 : -1, worst = -1; /* found: the best aggregate head with the best gather head before it */
    for (size_t p = 0; p < f->n_pairs; p++)
        if (worst < 0 || f->pairs[p].accuracy < f->pairs[worst].accuracy) worst = (long)p;
    double accuracy = f->accuracy;
    printf("gna heads: task %s, %zu questions, %zu heads scored; accuracy %.4f (%.1f s)\n", f->task, f->n_questions, n, accuracy, seconds);
    printf("\n%-10s %10s %10s %10s %14s %8s\n", "aggregate", "score", "gold mass", "gather", "ablated acc", "drop");
    for (size_t k = 0; k < K; k++) {
        const HeadScore *x = &f->scores[by_aggregate[k]];
        printf("%-10s %10.4f %10.4f %10.4f %14.4f %8.4f\n", x->name, x->aggregate, x->gold_mass, x->gather, x->ablated_accuracy,
               accuracy - x->ablated_accuracy);
    }
    printf("\n%-10s %10s %10s %10s %14s %8s\n", "gather", "score", "aggregate", "gold mass", "ablated acc", "drop");
    for (size_t k = 0; k < K; k++) {
        const HeadScore *x = &f->scores[by_gather[k]];
        printf("%-10s %10.4f %10.4f %10.4f %14.4f %8.4f\n", x->name, x->gather, x->aggregate, x->gold_mass, x->ablated_accuracy,
               accuracy - x->ablated_accuracy);
    }
    if (f->n_pairs) printf("\n%-22s %14s %8s\n", "gather + aggregate", "ablated acc", "drop");
    for (size_t p = 0; p < f->n_pairs; p++) {
        char both[72];
        snprintf(both, sizeof both, "%s + %s", f->scores[f->pairs[p].gather].name, f->scores[f->pairs[p].aggregate].name);
        printf("%-22s %14.4f %8.4f%s%s\n", both, f->pairs[p].accuracy, accuracy - f->pairs[p].accuracy,
               (long)p == found ? "   <- the top-scored pair" : "", (long)p == worst ? "   <- the most harmful pair" : "");
    }
    if (f->n_pairs == 0) printf("\nno top gather head lies in a layer before a top aggregate head: no pair to ablate\n");
    printf("\nthe sweep: %zu heads ablated alone, the most harmful first\n%-10s %14s %8s %10s %10s %10s\n", n_swept, "head",
           "ablated acc", "drop", "aggregate", "gather", "gold mass");
    for (size_t k = 0; k < n_swept && k < (K > 10 ? K : 10); k++) {
        const HeadScore *x = &f->scores[by_cost[k]];
        printf("%-10s %14.4f %8.4f %10.4f %10.4f %10.4f\n", x->name, x->ablated_accuracy, accuracy - x->ablated_accuracy, x->aggregate,
               x->gather, x->gold_mass);
    }
    int status = GNA_OK;
    if (json_path) {
        Bytes b = {0};
        bytes_add_text(&b, "{\n  \"task\": ");
        json_add_text(&b, f->task);
        bytes_printf(&b, ",\n  \"questions\": %zu,\n  \"accuracy\": ", f->n_questions);
        json_add_number(&b, accuracy);
        bytes_add_text(&b, ",\n  \"heads\": [");
        for (size_t k = 0; k < n; k++) {
            bytes_add_text(&b, k ? ",\n    " : "\n    ");
            json_add_head(&b, &f->scores[by_aggregate[k]]);
        }
        bytes_add_text(&b, "\n  ],\n  \"pairs\": [");
        for (size_t p = 0; p < f->n_pairs; p++) {
            bytes_printf(&b, "%s\n    {\"gather\": \"%s\", \"aggregate\": \"%s\", \"ablated_accuracy\": ", p ? "," : "",
                         f->scores[f->pairs[p].gather].name, f->scores[f->pairs[p].aggregate].name);
            json_add_number(&b, f->pairs[p].accuracy);
            bytes_printf(&b, ", \"top_scored\": %s, \"most_harmful\": %s}", (long)p == found ? "true" : "false",
                         (long)p == worst ? "true" : "false");
        }
        bytes_add_text(&b, "\n  ],\n  \"sweep\": {\"baseline\": ");
        json_add_number(&b, accuracy);
        bytes_add_text(&b, ", \"heads\": [");
        for (size_t k = 0; k < n_swept; k++) {
            const HeadScore *x = &f->scores[by_cost[k]];
            bytes_printf(&b, "%s\n    {\"head\": \"%s\", \"acc\": ", k ? "," : "", x->name);
            json_add_number(&b, x->ablated_accuracy);
            bytes_add_text(&b, ", \"cost\": ");
            json_add_number(&b, accuracy - x->ablated_accuracy);
            bytes_add_text(&b, "}");
        }
        bytes_add_text(&b, "\n  ]}\n}\n");
        status = write_output(json_path, &b);
        free(b.data);
    }
    free(by_aggregate), free(by_gather), free(by_cost);
    return status;
}

/* A shard's part (gna heads --shard i/n --json F), for gna merge: everything found, in --heads order,
 * with the ablations this shard measured (the others null) */
static int write_heads_part(const HeadsFound *f, int shard, int n_shards, const char *json_path) {
    Bytes b = {0};
    bytes_printf(&b, "{\"gna\": \"heads\", \"shard\": \"%d/%d\", \"task\": ", shard, n_shards);
    json_add_text(&b, f->task);
    bytes_printf(&b, ", \"questions\": %zu, \"top\": %zu, \"sweep\": %zu, \"accuracy\": ", f->n_questions, f->top, f->sweep);
    json_add_number(&b, f->accuracy);
    bytes_add_text(&b, ",\n \"heads\": [");
    for (size_t k = 0; k < f->n_heads; k++) {
        bytes_add_text(&b, k ? ",\n  " : "\n  ");
        json_add_head(&b, &f->scores[k]);
    }
    bytes_add_text(&b, "],\n \"pairs\": [");
    for (size_t p = 0; p < f->n_pairs; p++) {
        bytes_printf(&b, "%s\n  {\"gather\": \"%s\", \"aggregate\": \"%s\", \"ablated_accuracy\": ", p ? "," : "",
                     f->scores[f->pairs[p].gather].name, f->scores[f->pairs[p].aggregate].name);
        json_add_number(&b, f->pairs[p].accuracy);
        bytes_add_text(&b, "}");
    }
    bytes_add_text(&b, "]}\n");
    int status = write_output(json_path, &b);
    free(b.data);
    return status;
}

/* gna heads: G&A scores of every head, then ablations of the top candidates and of gather ->
 * aggregate pairs among them. With --shard i/n every shard scores all heads on all questions (cheap:
 * one pass a question) and finds the same candidates and pairs; it measures every n-th ablation
 * (candidates in --heads order, then the pairs), and gna merge joins the parts. */
/* the heads to score: every head of every layer (a hybrid's attention and SSM heads) unless --heads names some */
static int heads_to_score(const gna_run *run, const Options *o, MaskItem **heads, size_t *n_heads) {
    const Config *c = &run->model->config;
    size_t total = 0;
    for (size_t l = 0; l < c->n_layers; l++)
        if (run->plan[l].layer)
            total += heads_of(run->plan[l].layer, &run->plan[l].owner->config, HEAD_ATTENTION) +
                     heads_of(run->plan[l].layer, &run->plan[l].owner->config, HEAD_SSM);
    const char *spec = o->heads_spec ? o->heads_spec : c->family == FAMILY_ZAMBA2 ? "L*A*,L*S*" : "L*H*";
    if (!o->heads_spec && total > 4096)
        return bad_input("--heads", "the model has %zu heads or channels: name the layers to scan, e.g. --heads L35-36H*", total);
    TRY(parse_mask(run->model, run->plan, "--heads", spec, heads, n_heads));
    for (size_t i = 0; i < *n_heads; i++)
        if ((*heads)[i].has_queries) return bad_input("--heads", "\"%s\": --heads takes heads only (no @ or :)", (*heads)[i].text);
    return GNA_OK;
}

/* the ablations: each candidate alone, in the heads' order, then each pair; shard `mine` of n_shards
 * measures every n_shards-th of them. *job: how many there are. */
static int heads_ablations(Scorer *s, const Harness *h, HeadsFound *f, const char *candidate, size_t mine, size_t n_shards, size_t *job) {
    int status = GNA_OK;
    *job = 0;
    for (size_t k = 0; k < f->n_heads && status == GNA_OK; k++) {
        HeadScore *x = &f->scores[k];
        if (!candidate[k] || (*job)++ % n_shards != mine) continue;
        MaskItem item = {.layer = x->layer, .kind = x->kind, .head = x->head, .query_name = -1, .key_name = -1};
        status = harness_accuracy(s, h, f->n_questions, &item, 1, &x->ablated_accuracy);
    }
    for (size_t p = 0; p < f->n_pairs && status == GNA_OK; p++) {
        if ((*job)++ % n_shards != mine) continue;
        const HeadScore *ga = &f->scores[f->pairs[p].gather], *ag = &f->scores[f->pairs[p].aggregate];
        MaskItem items[2] = {{.layer = ga->layer, .kind = ga->kind, .head = ga->head, .query_name = -1, .key_name = -1},
                              {.layer = ag->layer, .kind = ag->kind, .head = ag->head, .query_name = -1, .key_name = -1}};
        status = harness_accuracy(s, h, f->n_questions, items, 2, &f->pairs[p].accuracy);
    }
    return status;
}

/* --svg: the paper's figure, the gather and the aggregate head's maps on the first question */
static int heads_svg(gna_run *run, const char *path, const Tokenizer *t, int add_special, const Question *question,
                     const HeadScore *const pick[2]) {
    Tokens context;
    TRY(encode_context(t, add_special, question, 0, &context));
    size_t T = context.n, *rows = checked_malloc(sizeof(size_t) * (T + 1));
    for (size_t r = 0; r < T; r++) rows[r] = r;
    float *matrices = checked_calloc(size_product(2 * T, T), sizeof(float));
    Probe probes[2];
    char names[2][96];
    const char *name_pointers[2] = {names[0], names[1]};
    for (int i = 0; i < 2; i++) {
        const HeadScore *x = pick[i];
        probes[i] = (Probe){x->layer, x->kind, x->head, T, rows, T, matrices + (size_t)i * T * T};
        snprintf(names[i], sizeof names[i], "%s %s %s", i ? "aggregate" : "gather", x->name, x->kind == HEAD_ATTENTION ? "attention" : "implicit attention");
    }
    Intervention iv = {.n_probes = 2, .probes = probes, .plan = run->plan};
    OutputFile out;
    Cache *cache = cache_new(run->model, run->plan, T);
    int status = forward(run->model, &run->cx, &iv, cache, context.ids, T, NULL, T);
    cache_free(cache);
    if (status == GNA_OK && (status = open_output(&out, path)) == GNA_OK) {
        write_attention_svg(out.file, probes, name_pointers, 2, context.ids, T, t);
        status = close_output(&out, 1);
    }
    free(matrices);
    free(rows);
    free(context.ids);
    return status;
}

static int command_heads(gna_run *run, const Options *o, const Tokenizer *t) {
    const Model *m = run->model;
    int is_kv = strcmp(o->task, "kv") == 0, status = GNA_OK;
    if (o->n_shards > 1 && !o->json) return bad_input("--shard", "gna heads writes a shard's part with --json F, for gna merge");
    Harness h = {0};
    if (is_kv) {
        long long pairs_value = 20;
        if (o->pairs_text) TRY(parse_whole_number("--pairs", o->pairs_text, 2, 100, &pairs_value));
        size_t pairs = (size_t)pairs_value;
        build_kv(&h, kv_default_keys, N_KV_KEYS, &pairs, 1, o->samples, o->seed, 0);
    } else {
        status = build_mmlu(&h, o->data, (size_t)o->shots, (size_t)o->limit);
    }
    MaskItem *heads = NULL;
    size_t n_heads = 0;
    if (status == GNA_OK) status = heads_to_score(run, o, &heads, &n_heads);
    Scorer s = {.model = m, .tokenizer = t, .cx = &run->cx, .plan = run->plan, .add_special = is_kv || o->bos, .reuse = !o->no_reuse,
                .prefix_index = -1};
    size_t n = h.n_questions;
    HeadsFound f = {.task = o->task, .n_questions = n, .top = (size_t)o->top < n_heads ? (size_t)o->top : n_heads,
                    .sweep = (unsigned long long)o->sweep < n_heads ? (size_t)o->sweep : n_heads, .accuracy = NAN,
                    .scores = checked_calloc(n_heads + 1, sizeof(HeadScore)), .n_heads = n_heads};
    double started = seconds_now();
    if (status == GNA_OK) status = score_heads(&s, &h, n, heads, n_heads, f.scores);
    if (status == GNA_OK) status = harness_accuracy(&s, &h, n, NULL, 0, &f.accuracy);
    for (size_t k = 0; k < n_heads; k++) head_name(m, &f.scores[k], f.scores[k].name, sizeof f.scores[k].name);
    size_t K = f.top, *by_aggregate = checked_malloc(sizeof(size_t) * (n_heads + 1)), *by_gather = checked_malloc(sizeof(size_t) * (n_heads + 1));
    rank_heads(f.scores, n_heads, BY_AGGREGATE, by_aggregate);
    rank_heads(f.scores, n_heads, BY_GATHER, by_gather);
    f.pairs = checked_calloc(K * K + 1, sizeof(HeadPair));
    for (size_t a = 0; a < K; a++)
        for (size_t g = 0; g < K; g++)
            if (f.scores[by_gather[g]].layer < f.scores[by_aggregate[a]].layer)
                f.pairs[f.n_pairs++] = (HeadPair){by_gather[g], by_aggregate[a], NAN};
    char *candidate = heads_candidates(&f);
    size_t job = 0, mine = (size_t)o->shard - 1, n_shards = (size_t)o->n_shards;
    if (status == GNA_OK) status = heads_ablations(&s, &h, &f, candidate, mine, n_shards, &job);
    if (status == GNA_OK && n_shards > 1) {
        printf("gna heads: shard %d/%zu, %zu of the %zu ablations (%.1f s); gna merge joins the shards' --json parts\n", o->shard,
               n_shards, job / n_shards + (job % n_shards > mine), job, seconds_now() - started);
        status = write_heads_part(&f, o->shard, o->n_shards, o->json);
    } else if (status == GNA_OK) {
        status = report_heads(&f, seconds_now() - started, o->json);
    }
    if (status == GNA_OK && o->svg && n_heads > 0) {
        const HeadScore *pick[2] = {&f.scores[f.n_pairs ? f.pairs[0].gather : by_gather[0]], &f.scores[f.n_pairs ? f.pairs[0].aggregate : by_aggregate[0]]};
        status = heads_svg(run, o->svg, t, s.add_special, &h.questions[0], pick);
    }
    free(f.pairs);
    free(by_aggregate);
    free(by_gather);
    free(candidate);
    free(f.scores);
    free(heads);
    free_scorer(&s);
    free_harness(&h);
    return status;
}

/* a part's heads: name and scores as the first part's; each ablation from the one part that measured it */
static int merge_part_heads(HeadsFound *f, const char *part, const char *first, int first_part, const JsonValue *hs) {
    int status = GNA_OK;
    size_t k = 0;
    for (const JsonValue *x = hs->first; x && status == GNA_OK; x = x->next, k++) {
        const JsonValue *name = json_get(x, "head");
        const char *fields[4] = {"aggregate", "gold_mass", "gather", "ablated_accuracy"};
        double value[4];
        int ok = name && name->type == JSON_STRING && name->length < sizeof f->scores[k].name;
        for (int j = 0; j < 4 && ok; j++) {
            const JsonValue *y = json_get(x, fields[j]);
            ok = y && (y->type == JSON_NUMBER || y->type == JSON_NULL);
            value[j] = ok && y->type == JSON_NUMBER ? y->number : NAN;
        }
        HeadScore *h = &f->scores[k];
        if (!ok) status = bad_input(part, "head %zu: not as gna heads writes it", k + 1);
        else if (first_part) {
            memcpy(h->name, name->string, name->length + 1);
            h->aggregate = value[0], h->gold_mass = value[1], h->gather = value[2], h->ablated_accuracy = value[3];
        } else if (strcmp(h->name, name->string) || memcmp(&h->aggregate, &value[0], sizeof(double)) ||
                   memcmp(&h->gold_mass, &value[1], sizeof(double)) || memcmp(&h->gather, &value[2], sizeof(double))) {
            status = bad_input(part, "head %s: its scores differ from %s's: not one run's shards", name->string, first);
        } else if (!isnan(value[3]) && !isnan(h->ablated_accuracy)) {
            status = bad_input(part, "head %s: its ablation is in two shards' parts", name->string);
        } else if (!isnan(value[3])) {
            h->ablated_accuracy = value[3];
        }
    }
    return status;
}

/* a part's pairs: the first part's, each ablation from the one part that measured it */
static int merge_part_pairs(HeadsFound *f, const char *part, const char *first, int first_part, const JsonValue *ps) {
    int status = GNA_OK;
    size_t k = 0;
    for (const JsonValue *x = ps->first; x && status == GNA_OK; x = x->next, k++) {
        const JsonValue *g = json_get(x, "gather"), *a = json_get(x, "aggregate"), *y = json_get(x, "ablated_accuracy");
        size_t gi = f->n_heads, ai = f->n_heads;
        for (size_t j = 0; g && a && g->type == JSON_STRING && a->type == JSON_STRING && j < f->n_heads; j++) {
            if (strcmp(f->scores[j].name, g->string) == 0) gi = j;
            if (strcmp(f->scores[j].name, a->string) == 0) ai = j;
        }
        double value = y && y->type == JSON_NUMBER ? y->number : NAN;
        if (gi == f->n_heads || ai == f->n_heads || !y || (y->type != JSON_NUMBER && y->type != JSON_NULL))
            status = bad_input(part, "pair %zu: not two of its heads, as gna heads writes it", k + 1);
        else if (first_part)
            f->pairs[k] = (HeadPair){gi, ai, value};
        else if (f->pairs[k].gather != gi || f->pairs[k].aggregate != ai)
            status = bad_input(part, "pair %zu differs from %s's: not one run's shards", k + 1, first);
        else if (!isnan(value) && !isnan(f->pairs[k].accuracy))
            status = bad_input(part, "pair %s + %s: its ablation is in two shards' parts", g->string, a->string);
        else if (!isnan(value))
            f->pairs[k].accuracy = value;
    }
    return status;
}

/* gna merge of gna heads' shard parts: each shard once, all of one run (the same questions, accuracy
 * and scores, bit for bit), each candidate and pair measured by exactly one of them; then the report
 * one run gives */
static int command_merge_heads(int n_parts, char **parts, const char *json_path) {
    HeadsFound f = {0};
    int status = GNA_OK, n_shards = 0, *seen = NULL;
    char *task = NULL;
    for (int i = 0; i < n_parts && status == GNA_OK; i++) {
        char *text;
        size_t size;
        JsonDocument doc = {0};
        if ((status = read_file(parts[i], &text, &size)) != GNA_OK) break;
        status = parse_json(&doc, text, size, parts[i]);
        free(text);
        if (status != GNA_OK) break;
        const JsonValue *r = doc.root, *sh = json_get(r, "shard"), *tk = json_get(r, "task"), *hs = json_get(r, "heads"),
                        *ps = json_get(r, "pairs");
        const char *keys[4] = {"questions", "top", "sweep", "accuracy"};
        double v[4];
        int shard = 0, shards = 0, ok = sh && sh->type == JSON_STRING && tk && tk->type == JSON_STRING && hs && hs->type == JSON_ARRAY &&
                                       ps && ps->type == JSON_ARRAY && parse_shard(parts[i], sh->string, 100000, &shard, &shards) == GNA_OK;
        for (int k = 0; k < 4 && ok; k++) {
            const JsonValue *x = json_get(r, keys[k]);
            ok = x && (x->type == JSON_NUMBER || (k == 3 && x->type == JSON_NULL));
            v[k] = x && x->type == JSON_NUMBER ? x->number : NAN;
            ok = ok && (k == 3 || (v[k] >= 0 && v[k] <= 1e9 && v[k] == floor(v[k])));
        }
        if (!ok || v[1] > (double)hs->length || v[2] > (double)hs->length)
            status = bad_input(parts[i], "not a part gna heads --shard wrote (its shard, task, questions, top, sweep, accuracy, heads, pairs)");
        else if (i == 0) {
            task = checked_strdup(tk->string);
            f = (HeadsFound){task, (size_t)v[0], (size_t)v[1], (size_t)v[2], v[3], checked_calloc(hs->length + 1, sizeof(HeadScore)), hs->length,
                             checked_calloc(ps->length + 1, sizeof(HeadPair)), ps->length};
            n_shards = shards;
            seen = checked_calloc((size_t)shards + 1, sizeof(int));
        } else if (shards != n_shards) {
            status = bad_input(parts[i], "is shard %s, of another split than %s's %d", sh->string, parts[0], n_shards);
        } else if (strcmp(tk->string, task) || (size_t)v[0] != f.n_questions || (size_t)v[1] != f.top || (size_t)v[2] != f.sweep ||
                   !(v[3] == f.accuracy || (isnan(v[3]) && isnan(f.accuracy))) || hs->length != f.n_heads || ps->length != f.n_pairs) {
            status = bad_input(parts[i], "is a part of another run than %s (its task, questions, accuracy or heads differ)", parts[0]);
        }
        if (status == GNA_OK && seen[shard]++) status = bad_input(parts[i], "is shard %d/%d, which is given twice", shard, shards);
        if (status == GNA_OK) status = merge_part_heads(&f, parts[i], parts[0], i == 0, hs);
        if (status == GNA_OK) status = merge_part_pairs(&f, parts[i], parts[0], i == 0, ps);
        free_json(&doc);
    }
    for (int i = 1; status == GNA_OK && i <= n_shards; i++)
        if (!seen[i]) status = bad_input("merge", "shard %d/%d is missing", i, n_shards);
    if (status == GNA_OK) { /* every candidate and every pair measured, nothing else */
        char *candidate = heads_candidates(&f);
        for (size_t k = 0; k < f.n_heads && status == GNA_OK; k++)
            if (candidate[k] == isnan(f.scores[k].ablated_accuracy))
                status = bad_input("merge", "head %s: %s", f.scores[k].name, candidate[k] ? "a candidate no part measured" : "measured, but not a candidate");
        for (size_t p = 0; p < f.n_pairs && status == GNA_OK; p++)
            if (isnan(f.pairs[p].accuracy)) status = bad_input("merge", "pair %zu: no part measured it", p + 1);
        free(candidate);
    }
    if (status == GNA_OK) status = report_heads(&f, 0, json_path);
    free(f.scores), free(f.pairs), free(task), free(seen);
    return status;
}

/* A harness writes its settings into JSON logs and results: they must be UTF-8 text */
static int check_settings_text(const Options *o) {
    const char *texts[] = {o->model_dir, o->data, o->keys, o->mask_spec, o->layers_text};
    const char *options[] = {"-m", "--data", "--keys", "--mask", "--layers"};
    for (int i = 0; i < 5 + o->n_replaces; i++) {
        const char *text = i < 5 ? texts[i] : o->replaces[i - 5], *option = i < 5 ? options[i] : "--replace";
        if (text && utf8_valid_prefix(text, strlen(text)) < strlen(text))
            return bad_input(option, "not valid UTF-8 (the settings are written into the JSON results and log)");
    }
    return GNA_OK;
}

/* The outputs of a command against its inputs, before any work (II.9): the log, the data, the keys,
 * the model folder's config, tokenizer and weights */
static int check_command_outputs(const Options *o, const Model *m) {
    const char *outputs[] = {o->output, o->svg, o->json};
    int n = m ? m->checkpoint->n_files : 0, k = 0;
    const char **inputs = checked_calloc((size_t)n + 9, sizeof(char *));
    char *config = path_join(o->model_dir, "config.json"), *tokenizer = path_join(o->model_dir, "tokenizer.json");
    char *index = path_join(o->model_dir, "model.safetensors.index.json");
    char *tokenizer_config = path_join(o->model_dir, "tokenizer_config.json");
    const char *named[] = {o->log, o->data, o->keys, o->tokenizer, config, tokenizer, index, tokenizer_config};
    for (int i = 0; i < 8; i++) inputs[k++] = named[i];
    for (int i = 0; i < n; i++) inputs[k++] = m->checkpoint->files[i].path;
    struct stat st;
    int data_is_folder = o->data && stat(o->data, &st) == 0 && S_ISDIR(st.st_mode);
    int status = check_outputs(outputs, 3, inputs, k, data_is_folder ? o->data : NULL);
    free(config), free(tokenizer), free(index), free(tokenizer_config), free(inputs);
    return status;
}

/* text= positions in a plain run (logits, attn, lens, generate): found once in the tokens run, and said
 * on stderr; the other names are parts of a harness's prompts */
static int resolve_text_names(gna_run *run, const Options *o, const Tokenizer *t, const int *tokens, int n_tokens,
                              Intervention *resolved) {
    for (size_t i = 0; i < run->iv.n_items; i++)
        if ((run->iv.items[i].query_name >= 0 && run->iv.items[i].query_name < N_MARK_KINDS) ||
            (run->iv.items[i].key_name >= 0 && run->iv.items[i].key_name < N_MARK_KINDS))
            return bad_input("--mask", "\"%s\": letters, options, pairs, asked and value are parts of a harness's prompts (gna mmlu, "
                                       "kv); here name tokens by text= or by position", run->iv.items[i].text);
    Tokenizer *labels = (Tokenizer *)t;
    char *path = path_join(o->model_dir, "tokenizer.json");
    int status = labels ? GNA_OK : gna_tokenizer_load(path, &labels);
    free(path);
    Question none = {.task = "tokens", .n_choices = 1};
    Tokens input = {(int *)tokens, (size_t)n_tokens};
    Scorer s = {.tokenizer = labels};
    Bytes said = {0};
    if (status == GNA_OK) status = resolve_request(&s, &run->iv, &none, 0, &input, &input, resolved, &said);
    if (status == GNA_OK && !o->quiet) fprintf(stderr, "gna: --mask's named positions (query, key): %s\n", said.data);
    if (labels != t) gna_tokenizer_free(labels);
    free(said.data);
    return status;
}

/* the defaults of gna COMMAND's options */
static Options default_options(const char *command) {
    return (Options){.command = command, .top = 5, .at = -1, .n_new = 16, .shard = 1, .n_shards = 1, .samples = 100,
                     .shots = strcmp(command, "gsm8k") == 0 ? 5 : 0, /* lm-eval's: gsm8k 5-shot, mmlu as the paper ran it */
                     .max_gen_toks = 256};
}

/* a harness or gna heads on a loaded model: the one path of gna_task and of the command line */
static int run_task(const Model *m, const Options *o) {
    Tokenizer *t = NULL;
    gna_run *run = NULL;
    int status = load_tokenizer(o, &t);
    if (status == GNA_OK) status = check_command_outputs(o, m);
    if (status == GNA_OK) status = gna_run_new(m, o->n_run_options, o->run_options, &run);
    if (status == GNA_OK) status = strcmp(o->command, "heads") == 0 ? command_heads(run, o, t) : command_harness(run, o, t);
    gna_run_free(run);
    gna_tokenizer_free(t);
    return status;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) return bad_input("command", "missing (gna --help lists the commands)");
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 || strcmp(command, "help") == 0) {
        print_overview();
        return GNA_OK;
    }
    if (command_index(command) < 0) return bad_input(command, "unknown command (gna --help lists them)");
    Options o = default_options(command);
    TRY(parse_options(argc, argv, &o));
    if (o.help) {
        print_help(command);
        return GNA_OK;
    }
    if (strcmp(command, "merge") == 0) {
        TRY(check_outputs((const char *const *)&o.json, 1, (const char *const *)o.logs, o.n_logs, NULL));
        return command_merge(o.n_logs, o.logs, o.json);
    }
    if (names_of(command) || strcmp(command, "heads") == 0) { /* a task: the same path as gna_task's */
        Model *m = NULL;
        int status = check_settings_text(&o);
        if (status == GNA_OK) status = gna_load(o.model_dir, &m);
        if (status == GNA_OK) status = run_task(m, &o);
        gna_free(m);
        return status;
    }
    int *tokens = NULL, n_tokens = 0;
    if (o.tokens_text) TRY(parse_tokens(o.tokens_text, &tokens, &n_tokens));
    Tokenizer *t = NULL;
    int status = GNA_OK;
    int tokenizer_only = strcmp(command, "tokenize") == 0 || strcmp(command, "detokenize") == 0;
    if (tokenizer_only || o.prompt) status = load_tokenizer(&o, &t);
    if (status == GNA_OK && tokenizer_only) {
        if (strcmp(command, "tokenize") == 0) status = command_tokenize(t, &o);
        else status = command_detokenize(t, &o, tokens, n_tokens);
    } else if (status == GNA_OK) {
        if (o.prompt && (status = tokenize_prompt(t, &o, &tokens, &n_tokens)) == GNA_OK && n_tokens == 0)
            status = bad_input("-p", "the text gives no tokens");
        Model *m = NULL;
        gna_run *run = NULL;
        if (status == GNA_OK) status = gna_load(o.model_dir, &m);
        if (status == GNA_OK) status = check_command_outputs(&o, m);
        Intervention named = {0};
        if (status == GNA_OK && strcmp(command, "info") == 0) status = command_info(m);
        else if (status == GNA_OK && (status = gna_run_new(m, o.n_run_options, o.run_options, &run)) == GNA_OK &&
                 (status = check_tokens(m, o.prompt ? "-p" : "--tokens", tokens, n_tokens)) == GNA_OK &&
                 (!names_positions(&run->iv) || (status = resolve_text_names(run, &o, t, tokens, n_tokens, &named)) == GNA_OK)) {
            if (named.items) run->iv.items = named.items; /* this command's own run: its named positions found in its tokens */
            if (strcmp(command, "logits") == 0) status = command_logits(run, &o, tokens, (size_t)n_tokens);
            else if (strcmp(command, "attn") == 0 || strcmp(command, "lens") == 0) {
                /* the SVG and the lens label tokens with their text when the folder has a tokenizer (else with ids) */
                Tokenizer *labels = t;
                int lens = strcmp(command, "lens") == 0;
                char *path = path_join(o.model_dir, "tokenizer.json");
                if (!labels && (o.svg || lens) && access(path, F_OK) == 0 && gna_tokenizer_load(path, &labels) != GNA_OK) labels = NULL;
                status = lens ? command_lens(run, &o, tokens, (size_t)n_tokens, labels) : command_attn(run, &o, tokens, (size_t)n_tokens, labels);
                if (labels != t) gna_tokenizer_free(labels);
                free(path);
            } else status = command_generate(run, &o, tokens, (size_t)n_tokens, t);
        }
        if (named.items) {
            free_resolved(&named);
            run->iv.items = run->items;
        }
        gna_run_free(run);
        gna_free(m);
    }
    gna_tokenizer_free(t);
    free(tokens);
    return status;
}


/* gna_task's options are those of gna COMMAND after it, but -m: its model is the one given */
static int task(const gna_model *model, const char *command, int n_options, const char *const *options) {
    if (!names_of(command) && strcmp(command, "heads") != 0)
        return bad_input(command, "not a task (kv, mmlu, mc, knowledge, gsm8k, heads)");
    const char **argv = checked_malloc(sizeof(char *) * (size_t)(n_options + 3));
    argv[0] = "gna", argv[1] = command;
    for (int i = 0; i < n_options; i++) argv[i + 2] = options[i];
    argv[n_options + 2] = NULL;
    Options o = default_options(command);
    o.model_dir = model->dir;
    int status = parse_options(n_options + 2, (char **)argv, &o);
    if (status == GNA_OK && o.model_dir != model->dir) status = bad_input("-m", "gna_task runs the model it is given");
    if (status == GNA_OK && o.help) print_help(command);
    else if (status == GNA_OK && (status = check_settings_text(&o)) == GNA_OK) status = run_task(model, &o);
    free(argv);
    return status;
}

int gna_task(const gna_model *model, const char *command, int n_options, const char *const *options) {
    NEEDS(model && command, "gna_task: model or command is NULL");
    NEEDS(n_options >= 0 && (n_options == 0 || options), "gna_task: options must be n_options strings");
    for (int i = 0; i < n_options; i++) NEEDS(options[i], "gna_task: an option is NULL");
    start_call();
    CATCH_OUT_OF_MEMORY(task(model, command, n_options, options));
}

static int catch_run_command(int argc, char **argv) { CATCH_OUT_OF_MEMORY(run_command(argc, argv)); }

int gna_main(int argc, char **argv) {
    NEEDS(argc >= 0 && (argc == 0 || argv), "gna_main: argv is NULL");
    for (int i = 0; i < argc; i++) NEEDS(argv[i], "gna_main: an argument is NULL");
    start_call();
    int status = catch_run_command(argc, argv);
    if (status != GNA_OK) fprintf(stderr, "gna: error: %s\n", error_message);
    return status;
}

#ifndef GNA_NO_MAIN
int main(int argc, char **argv) {
    program_handles_signals = 1; /* the program's own: its unfinished outputs go when it is killed (II.9) */
    handle_signals();
#if GNA_POSIX
    mode_t mask = umask(0);     /* a new output file gets 0666 less the umask, as fopen would give it */
    umask(mask);
    output_mode = 0666 & ~(unsigned)mask;
#endif
    return gna_main(argc, argv);
}
#endif
/* ===== APPENDIX: generated tables and word lists ============================================ */

/* BEGIN UNICODE TABLES (weights_tools/fixtures/make_unicode_tables.py writes what is between these lines) */
/* Generated by weights_tools/fixtures/make_unicode_tables.py from Unicode 14.0.0 (Python 3.11.7
 * unicodedata) and unicode_categories 0.1.1; do not edit by hand, run the script. */
/* \p{L}: Lu Ll Lt Lm Lo, Unicode 14.0.0 */
static const uint32_t unicode_letter[][2] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xAA, 0xAA}, {0xB5, 0xB5}, {0xBA, 0xBA}, {0xC0, 0xD6}, {0xD8, 0xF6},
    {0xF8, 0x2C1}, {0x2C6, 0x2D1}, {0x2E0, 0x2E4}, {0x2EC, 0x2EC}, {0x2EE, 0x2EE}, {0x370, 0x374},
    {0x376, 0x377}, {0x37A, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x559, 0x559},
    {0x560, 0x588}, {0x5D0, 0x5EA}, {0x5EF, 0x5F2}, {0x620, 0x64A}, {0x66E, 0x66F}, {0x671, 0x6D3},
    {0x6D5, 0x6D5}, {0x6E5, 0x6E6}, {0x6EE, 0x6EF}, {0x6FA, 0x6FC}, {0x6FF, 0x6FF}, {0x710, 0x710},
    {0x712, 0x72F}, {0x74D, 0x7A5}, {0x7B1, 0x7B1}, {0x7CA, 0x7EA}, {0x7F4, 0x7F5}, {0x7FA, 0x7FA},
    {0x800, 0x815}, {0x81A, 0x81A}, {0x824, 0x824}, {0x828, 0x828}, {0x840, 0x858}, {0x860, 0x86A},
    {0x870, 0x887}, {0x889, 0x88E}, {0x8A0, 0x8C9}, {0x904, 0x939}, {0x93D, 0x93D}, {0x950, 0x950},
    {0x958, 0x961}, {0x971, 0x980}, {0x985, 0x98C}, {0x98F, 0x990}, {0x993, 0x9A8}, {0x9AA, 0x9B0},
    {0x9B2, 0x9B2}, {0x9B6, 0x9B9}, {0x9BD, 0x9BD}, {0x9CE, 0x9CE}, {0x9DC, 0x9DD}, {0x9DF, 0x9E1},
    {0x9F0, 0x9F1}, {0x9FC, 0x9FC}, {0xA05, 0xA0A}, {0xA0F, 0xA10}, {0xA13, 0xA28}, {0xA2A, 0xA30},
    {0xA32, 0xA33}, {0xA35, 0xA36}, {0xA38, 0xA39}, {0xA59, 0xA5C}, {0xA5E, 0xA5E}, {0xA72, 0xA74},
    {0xA85, 0xA8D}, {0xA8F, 0xA91}, {0xA93, 0xAA8}, {0xAAA, 0xAB0}, {0xAB2, 0xAB3}, {0xAB5, 0xAB9},
    {0xABD, 0xABD}, {0xAD0, 0xAD0}, {0xAE0, 0xAE1}, {0xAF9, 0xAF9}, {0xB05, 0xB0C}, {0xB0F, 0xB10},
    {0xB13, 0xB28}, {0xB2A, 0xB30}, {0xB32, 0xB33}, {0xB35, 0xB39}, {0xB3D, 0xB3D}, {0xB5C, 0xB5D},
    {0xB5F, 0xB61}, {0xB71, 0xB71}, {0xB83, 0xB83}, {0xB85, 0xB8A}, {0xB8E, 0xB90}, {0xB92, 0xB95},
    {0xB99, 0xB9A}, {0xB9C, 0xB9C}, {0xB9E, 0xB9F}, {0xBA3, 0xBA4}, {0xBA8, 0xBAA}, {0xBAE, 0xBB9},
    {0xBD0, 0xBD0}, {0xC05, 0xC0C}, {0xC0E, 0xC10}, {0xC12, 0xC28}, {0xC2A, 0xC39}, {0xC3D, 0xC3D},
    {0xC58, 0xC5A}, {0xC5D, 0xC5D}, {0xC60, 0xC61}, {0xC80, 0xC80}, {0xC85, 0xC8C}, {0xC8E, 0xC90},
    {0xC92, 0xCA8}, {0xCAA, 0xCB3}, {0xCB5, 0xCB9}, {0xCBD, 0xCBD}, {0xCDD, 0xCDE}, {0xCE0, 0xCE1},
    {0xCF1, 0xCF2}, {0xD04, 0xD0C}, {0xD0E, 0xD10}, {0xD12, 0xD3A}, {0xD3D, 0xD3D}, {0xD4E, 0xD4E},
    {0xD54, 0xD56}, {0xD5F, 0xD61}, {0xD7A, 0xD7F}, {0xD85, 0xD96}, {0xD9A, 0xDB1}, {0xDB3, 0xDBB},
    {0xDBD, 0xDBD}, {0xDC0, 0xDC6}, {0xE01, 0xE30}, {0xE32, 0xE33}, {0xE40, 0xE46}, {0xE81, 0xE82},
    {0xE84, 0xE84}, {0xE86, 0xE8A}, {0xE8C, 0xEA3}, {0xEA5, 0xEA5}, {0xEA7, 0xEB0}, {0xEB2, 0xEB3},
    {0xEBD, 0xEBD}, {0xEC0, 0xEC4}, {0xEC6, 0xEC6}, {0xEDC, 0xEDF}, {0xF00, 0xF00}, {0xF40, 0xF47},
    {0xF49, 0xF6C}, {0xF88, 0xF8C}, {0x1000, 0x102A}, {0x103F, 0x103F}, {0x1050, 0x1055},
    {0x105A, 0x105D}, {0x1061, 0x1061}, {0x1065, 0x1066}, {0x106E, 0x1070}, {0x1075, 0x1081},
    {0x108E, 0x108E}, {0x10A0, 0x10C5}, {0x10C7, 0x10C7}, {0x10CD, 0x10CD}, {0x10D0, 0x10FA},
    {0x10FC, 0x1248}, {0x124A, 0x124D}, {0x1250, 0x1256}, {0x1258, 0x1258}, {0x125A, 0x125D},
    {0x1260, 0x1288}, {0x128A, 0x128D}, {0x1290, 0x12B0}, {0x12B2, 0x12B5}, {0x12B8, 0x12BE},
    {0x12C0, 0x12C0}, {0x12C2, 0x12C5}, {0x12C8, 0x12D6}, {0x12D8, 0x1310}, {0x1312, 0x1315},
    {0x1318, 0x135A}, {0x1380, 0x138F}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1401, 0x166C},
    {0x166F, 0x167F}, {0x1681, 0x169A}, {0x16A0, 0x16EA}, {0x16F1, 0x16F8}, {0x1700, 0x1711},
    {0x171F, 0x1731}, {0x1740, 0x1751}, {0x1760, 0x176C}, {0x176E, 0x1770}, {0x1780, 0x17B3},
    {0x17D7, 0x17D7}, {0x17DC, 0x17DC}, {0x1820, 0x1878}, {0x1880, 0x1884}, {0x1887, 0x18A8},
    {0x18AA, 0x18AA}, {0x18B0, 0x18F5}, {0x1900, 0x191E}, {0x1950, 0x196D}, {0x1970, 0x1974},
    {0x1980, 0x19AB}, {0x19B0, 0x19C9}, {0x1A00, 0x1A16}, {0x1A20, 0x1A54}, {0x1AA7, 0x1AA7},
    {0x1B05, 0x1B33}, {0x1B45, 0x1B4C}, {0x1B83, 0x1BA0}, {0x1BAE, 0x1BAF}, {0x1BBA, 0x1BE5},
    {0x1C00, 0x1C23}, {0x1C4D, 0x1C4F}, {0x1C5A, 0x1C7D}, {0x1C80, 0x1C88}, {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF}, {0x1CE9, 0x1CEC}, {0x1CEE, 0x1CF3}, {0x1CF5, 0x1CF6}, {0x1CFA, 0x1CFA},
    {0x1D00, 0x1DBF}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D},
    {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D},
    {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC},
    {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC},
    {0x2071, 0x2071}, {0x207F, 0x207F}, {0x2090, 0x209C}, {0x2102, 0x2102}, {0x2107, 0x2107},
    {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
    {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3},
    {0x2D00, 0x2D25}, {0x2D27, 0x2D27}, {0x2D2D, 0x2D2D}, {0x2D30, 0x2D67}, {0x2D6F, 0x2D6F},
    {0x2D80, 0x2D96}, {0x2DA0, 0x2DA6}, {0x2DA8, 0x2DAE}, {0x2DB0, 0x2DB6}, {0x2DB8, 0x2DBE},
    {0x2DC0, 0x2DC6}, {0x2DC8, 0x2DCE}, {0x2DD0, 0x2DD6}, {0x2DD8, 0x2DDE}, {0x2E2F, 0x2E2F},
    {0x3005, 0x3006}, {0x3031, 0x3035}, {0x303B, 0x303C}, {0x3041, 0x3096}, {0x309D, 0x309F},
    {0x30A1, 0x30FA}, {0x30FC, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E}, {0x31A0, 0x31BF},
    {0x31F0, 0x31FF}, {0x3400, 0x4DBF}, {0x4E00, 0xA48C}, {0xA4D0, 0xA4FD}, {0xA500, 0xA60C},
    {0xA610, 0xA61F}, {0xA62A, 0xA62B}, {0xA640, 0xA66E}, {0xA67F, 0xA69D}, {0xA6A0, 0xA6E5},
    {0xA717, 0xA71F}, {0xA722, 0xA788}, {0xA78B, 0xA7CA}, {0xA7D0, 0xA7D1}, {0xA7D3, 0xA7D3},
    {0xA7D5, 0xA7D9}, {0xA7F2, 0xA801}, {0xA803, 0xA805}, {0xA807, 0xA80A}, {0xA80C, 0xA822},
    {0xA840, 0xA873}, {0xA882, 0xA8B3}, {0xA8F2, 0xA8F7}, {0xA8FB, 0xA8FB}, {0xA8FD, 0xA8FE},
    {0xA90A, 0xA925}, {0xA930, 0xA946}, {0xA960, 0xA97C}, {0xA984, 0xA9B2}, {0xA9CF, 0xA9CF},
    {0xA9E0, 0xA9E4}, {0xA9E6, 0xA9EF}, {0xA9FA, 0xA9FE}, {0xAA00, 0xAA28}, {0xAA40, 0xAA42},
    {0xAA44, 0xAA4B}, {0xAA60, 0xAA76}, {0xAA7A, 0xAA7A}, {0xAA7E, 0xAAAF}, {0xAAB1, 0xAAB1},
    {0xAAB5, 0xAAB6}, {0xAAB9, 0xAABD}, {0xAAC0, 0xAAC0}, {0xAAC2, 0xAAC2}, {0xAADB, 0xAADD},
    {0xAAE0, 0xAAEA}, {0xAAF2, 0xAAF4}, {0xAB01, 0xAB06}, {0xAB09, 0xAB0E}, {0xAB11, 0xAB16},
    {0xAB20, 0xAB26}, {0xAB28, 0xAB2E}, {0xAB30, 0xAB5A}, {0xAB5C, 0xAB69}, {0xAB70, 0xABE2},
    {0xAC00, 0xD7A3}, {0xD7B0, 0xD7C6}, {0xD7CB, 0xD7FB}, {0xF900, 0xFA6D}, {0xFA70, 0xFAD9},
    {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFB1D, 0xFB1D}, {0xFB1F, 0xFB28}, {0xFB2A, 0xFB36},
    {0xFB38, 0xFB3C}, {0xFB3E, 0xFB3E}, {0xFB40, 0xFB41}, {0xFB43, 0xFB44}, {0xFB46, 0xFBB1},
    {0xFBD3, 0xFD3D}, {0xFD50, 0xFD8F}, {0xFD92, 0xFDC7}, {0xFDF0, 0xFDFB}, {0xFE70, 0xFE74},
    {0xFE76, 0xFEFC}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0xFF66, 0xFFBE}, {0xFFC2, 0xFFC7},
    {0xFFCA, 0xFFCF}, {0xFFD2, 0xFFD7}, {0xFFDA, 0xFFDC}, {0x10000, 0x1000B}, {0x1000D, 0x10026},
    {0x10028, 0x1003A}, {0x1003C, 0x1003D}, {0x1003F, 0x1004D}, {0x10050, 0x1005D}, {0x10080, 0x100FA},
    {0x10280, 0x1029C}, {0x102A0, 0x102D0}, {0x10300, 0x1031F}, {0x1032D, 0x10340}, {0x10342, 0x10349},
    {0x10350, 0x10375}, {0x10380, 0x1039D}, {0x103A0, 0x103C3}, {0x103C8, 0x103CF}, {0x10400, 0x1049D},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10500, 0x10527}, {0x10530, 0x10563}, {0x10570, 0x1057A},
    {0x1057C, 0x1058A}, {0x1058C, 0x10592}, {0x10594, 0x10595}, {0x10597, 0x105A1}, {0x105A3, 0x105B1},
    {0x105B3, 0x105B9}, {0x105BB, 0x105BC}, {0x10600, 0x10736}, {0x10740, 0x10755}, {0x10760, 0x10767},
    {0x10780, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x10800, 0x10805}, {0x10808, 0x10808},
    {0x1080A, 0x10835}, {0x10837, 0x10838}, {0x1083C, 0x1083C}, {0x1083F, 0x10855}, {0x10860, 0x10876},
    {0x10880, 0x1089E}, {0x108E0, 0x108F2}, {0x108F4, 0x108F5}, {0x10900, 0x10915}, {0x10920, 0x10939},
    {0x10980, 0x109B7}, {0x109BE, 0x109BF}, {0x10A00, 0x10A00}, {0x10A10, 0x10A13}, {0x10A15, 0x10A17},
    {0x10A19, 0x10A35}, {0x10A60, 0x10A7C}, {0x10A80, 0x10A9C}, {0x10AC0, 0x10AC7}, {0x10AC9, 0x10AE4},
    {0x10B00, 0x10B35}, {0x10B40, 0x10B55}, {0x10B60, 0x10B72}, {0x10B80, 0x10B91}, {0x10C00, 0x10C48},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x10D00, 0x10D23}, {0x10E80, 0x10EA9}, {0x10EB0, 0x10EB1},
    {0x10F00, 0x10F1C}, {0x10F27, 0x10F27}, {0x10F30, 0x10F45}, {0x10F70, 0x10F81}, {0x10FB0, 0x10FC4},
    {0x10FE0, 0x10FF6}, {0x11003, 0x11037}, {0x11071, 0x11072}, {0x11075, 0x11075}, {0x11083, 0x110AF},
    {0x110D0, 0x110E8}, {0x11103, 0x11126}, {0x11144, 0x11144}, {0x11147, 0x11147}, {0x11150, 0x11172},
    {0x11176, 0x11176}, {0x11183, 0x111B2}, {0x111C1, 0x111C4}, {0x111DA, 0x111DA}, {0x111DC, 0x111DC},
    {0x11200, 0x11211}, {0x11213, 0x1122B}, {0x11280, 0x11286}, {0x11288, 0x11288}, {0x1128A, 0x1128D},
    {0x1128F, 0x1129D}, {0x1129F, 0x112A8}, {0x112B0, 0x112DE}, {0x11305, 0x1130C}, {0x1130F, 0x11310},
    {0x11313, 0x11328}, {0x1132A, 0x11330}, {0x11332, 0x11333}, {0x11335, 0x11339}, {0x1133D, 0x1133D},
    {0x11350, 0x11350}, {0x1135D, 0x11361}, {0x11400, 0x11434}, {0x11447, 0x1144A}, {0x1145F, 0x11461},
    {0x11480, 0x114AF}, {0x114C4, 0x114C5}, {0x114C7, 0x114C7}, {0x11580, 0x115AE}, {0x115D8, 0x115DB},
    {0x11600, 0x1162F}, {0x11644, 0x11644}, {0x11680, 0x116AA}, {0x116B8, 0x116B8}, {0x11700, 0x1171A},
    {0x11740, 0x11746}, {0x11800, 0x1182B}, {0x118A0, 0x118DF}, {0x118FF, 0x11906}, {0x11909, 0x11909},
    {0x1190C, 0x11913}, {0x11915, 0x11916}, {0x11918, 0x1192F}, {0x1193F, 0x1193F}, {0x11941, 0x11941},
    {0x119A0, 0x119A7}, {0x119AA, 0x119D0}, {0x119E1, 0x119E1}, {0x119E3, 0x119E3}, {0x11A00, 0x11A00},
    {0x11A0B, 0x11A32}, {0x11A3A, 0x11A3A}, {0x11A50, 0x11A50}, {0x11A5C, 0x11A89}, {0x11A9D, 0x11A9D},
    {0x11AB0, 0x11AF8}, {0x11C00, 0x11C08}, {0x11C0A, 0x11C2E}, {0x11C40, 0x11C40}, {0x11C72, 0x11C8F},
    {0x11D00, 0x11D06}, {0x11D08, 0x11D09}, {0x11D0B, 0x11D30}, {0x11D46, 0x11D46}, {0x11D60, 0x11D65},
    {0x11D67, 0x11D68}, {0x11D6A, 0x11D89}, {0x11D98, 0x11D98}, {0x11EE0, 0x11EF2}, {0x11FB0, 0x11FB0},
    {0x12000, 0x12399}, {0x12480, 0x12543}, {0x12F90, 0x12FF0}, {0x13000, 0x1342E}, {0x14400, 0x14646},
    {0x16800, 0x16A38}, {0x16A40, 0x16A5E}, {0x16A70, 0x16ABE}, {0x16AD0, 0x16AED}, {0x16B00, 0x16B2F},
    {0x16B40, 0x16B43}, {0x16B63, 0x16B77}, {0x16B7D, 0x16B8F}, {0x16E40, 0x16E7F}, {0x16F00, 0x16F4A},
    {0x16F50, 0x16F50}, {0x16F93, 0x16F9F}, {0x16FE0, 0x16FE1}, {0x16FE3, 0x16FE3}, {0x17000, 0x187F7},
    {0x18800, 0x18CD5}, {0x18D00, 0x18D08}, {0x1AFF0, 0x1AFF3}, {0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE},
    {0x1B000, 0x1B122}, {0x1B150, 0x1B152}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB}, {0x1BC00, 0x1BC6A},
    {0x1BC70, 0x1BC7C}, {0x1BC80, 0x1BC88}, {0x1BC90, 0x1BC99}, {0x1D400, 0x1D454}, {0x1D456, 0x1D49C},
    {0x1D49E, 0x1D49F}, {0x1D4A2, 0x1D4A2}, {0x1D4A5, 0x1D4A6}, {0x1D4A9, 0x1D4AC}, {0x1D4AE, 0x1D4B9},
    {0x1D4BB, 0x1D4BB}, {0x1D4BD, 0x1D4C3}, {0x1D4C5, 0x1D505}, {0x1D507, 0x1D50A}, {0x1D50D, 0x1D514},
    {0x1D516, 0x1D51C}, {0x1D51E, 0x1D539}, {0x1D53B, 0x1D53E}, {0x1D540, 0x1D544}, {0x1D546, 0x1D546},
    {0x1D54A, 0x1D550}, {0x1D552, 0x1D6A5}, {0x1D6A8, 0x1D6C0}, {0x1D6C2, 0x1D6DA}, {0x1D6DC, 0x1D6FA},
    {0x1D6FC, 0x1D714}, {0x1D716, 0x1D734}, {0x1D736, 0x1D74E}, {0x1D750, 0x1D76E}, {0x1D770, 0x1D788},
    {0x1D78A, 0x1D7A8}, {0x1D7AA, 0x1D7C2}, {0x1D7C4, 0x1D7CB}, {0x1DF00, 0x1DF1E}, {0x1E100, 0x1E12C},
    {0x1E137, 0x1E13D}, {0x1E14E, 0x1E14E}, {0x1E290, 0x1E2AD}, {0x1E2C0, 0x1E2EB}, {0x1E7E0, 0x1E7E6},
    {0x1E7E8, 0x1E7EB}, {0x1E7ED, 0x1E7EE}, {0x1E7F0, 0x1E7FE}, {0x1E800, 0x1E8C4}, {0x1E900, 0x1E943},
    {0x1E94B, 0x1E94B}, {0x1EE00, 0x1EE03}, {0x1EE05, 0x1EE1F}, {0x1EE21, 0x1EE22}, {0x1EE24, 0x1EE24},
    {0x1EE27, 0x1EE27}, {0x1EE29, 0x1EE32}, {0x1EE34, 0x1EE37}, {0x1EE39, 0x1EE39}, {0x1EE3B, 0x1EE3B},
    {0x1EE42, 0x1EE42}, {0x1EE47, 0x1EE47}, {0x1EE49, 0x1EE49}, {0x1EE4B, 0x1EE4B}, {0x1EE4D, 0x1EE4F},
    {0x1EE51, 0x1EE52}, {0x1EE54, 0x1EE54}, {0x1EE57, 0x1EE57}, {0x1EE59, 0x1EE59}, {0x1EE5B, 0x1EE5B},
    {0x1EE5D, 0x1EE5D}, {0x1EE5F, 0x1EE5F}, {0x1EE61, 0x1EE62}, {0x1EE64, 0x1EE64}, {0x1EE67, 0x1EE6A},
    {0x1EE6C, 0x1EE72}, {0x1EE74, 0x1EE77}, {0x1EE79, 0x1EE7C}, {0x1EE7E, 0x1EE7E}, {0x1EE80, 0x1EE89},
    {0x1EE8B, 0x1EE9B}, {0x1EEA1, 0x1EEA3}, {0x1EEA5, 0x1EEA9}, {0x1EEAB, 0x1EEBB}, {0x20000, 0x2A6DF},
    {0x2A700, 0x2B738}, {0x2B740, 0x2B81D}, {0x2B820, 0x2CEA1}, {0x2CEB0, 0x2EBE0}, {0x2F800, 0x2FA1D},
    {0x30000, 0x3134A},
};
/* \p{N}: Nd Nl No, Unicode 14.0.0 */
static const uint32_t unicode_number[][2] = {
    {0x30, 0x39}, {0xB2, 0xB3}, {0xB9, 0xB9}, {0xBC, 0xBE}, {0x660, 0x669}, {0x6F0, 0x6F9},
    {0x7C0, 0x7C9}, {0x966, 0x96F}, {0x9E6, 0x9EF}, {0x9F4, 0x9F9}, {0xA66, 0xA6F}, {0xAE6, 0xAEF},
    {0xB66, 0xB6F}, {0xB72, 0xB77}, {0xBE6, 0xBF2}, {0xC66, 0xC6F}, {0xC78, 0xC7E}, {0xCE6, 0xCEF},
    {0xD58, 0xD5E}, {0xD66, 0xD78}, {0xDE6, 0xDEF}, {0xE50, 0xE59}, {0xED0, 0xED9}, {0xF20, 0xF33},
    {0x1040, 0x1049}, {0x1090, 0x1099}, {0x1369, 0x137C}, {0x16EE, 0x16F0}, {0x17E0, 0x17E9},
    {0x17F0, 0x17F9}, {0x1810, 0x1819}, {0x1946, 0x194F}, {0x19D0, 0x19DA}, {0x1A80, 0x1A89},
    {0x1A90, 0x1A99}, {0x1B50, 0x1B59}, {0x1BB0, 0x1BB9}, {0x1C40, 0x1C49}, {0x1C50, 0x1C59},
    {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2150, 0x2182}, {0x2185, 0x2189},
    {0x2460, 0x249B}, {0x24EA, 0x24FF}, {0x2776, 0x2793}, {0x2CFD, 0x2CFD}, {0x3007, 0x3007},
    {0x3021, 0x3029}, {0x3038, 0x303A}, {0x3192, 0x3195}, {0x3220, 0x3229}, {0x3248, 0x324F},
    {0x3251, 0x325F}, {0x3280, 0x3289}, {0x32B1, 0x32BF}, {0xA620, 0xA629}, {0xA6E6, 0xA6EF},
    {0xA830, 0xA835}, {0xA8D0, 0xA8D9}, {0xA900, 0xA909}, {0xA9D0, 0xA9D9}, {0xA9F0, 0xA9F9},
    {0xAA50, 0xAA59}, {0xABF0, 0xABF9}, {0xFF10, 0xFF19}, {0x10107, 0x10133}, {0x10140, 0x10178},
    {0x1018A, 0x1018B}, {0x102E1, 0x102FB}, {0x10320, 0x10323}, {0x10341, 0x10341}, {0x1034A, 0x1034A},
    {0x103D1, 0x103D5}, {0x104A0, 0x104A9}, {0x10858, 0x1085F}, {0x10879, 0x1087F}, {0x108A7, 0x108AF},
    {0x108FB, 0x108FF}, {0x10916, 0x1091B}, {0x109BC, 0x109BD}, {0x109C0, 0x109CF}, {0x109D2, 0x109FF},
    {0x10A40, 0x10A48}, {0x10A7D, 0x10A7E}, {0x10A9D, 0x10A9F}, {0x10AEB, 0x10AEF}, {0x10B58, 0x10B5F},
    {0x10B78, 0x10B7F}, {0x10BA9, 0x10BAF}, {0x10CFA, 0x10CFF}, {0x10D30, 0x10D39}, {0x10E60, 0x10E7E},
    {0x10F1D, 0x10F26}, {0x10F51, 0x10F54}, {0x10FC5, 0x10FCB}, {0x11052, 0x1106F}, {0x110F0, 0x110F9},
    {0x11136, 0x1113F}, {0x111D0, 0x111D9}, {0x111E1, 0x111F4}, {0x112F0, 0x112F9}, {0x11450, 0x11459},
    {0x114D0, 0x114D9}, {0x11650, 0x11659}, {0x116C0, 0x116C9}, {0x11730, 0x1173B}, {0x118E0, 0x118F2},
    {0x11950, 0x11959}, {0x11C50, 0x11C6C}, {0x11D50, 0x11D59}, {0x11DA0, 0x11DA9}, {0x11FC0, 0x11FD4},
    {0x12400, 0x1246E}, {0x16A60, 0x16A69}, {0x16AC0, 0x16AC9}, {0x16B50, 0x16B59}, {0x16B5B, 0x16B61},
    {0x16E80, 0x16E96}, {0x1D2E0, 0x1D2F3}, {0x1D360, 0x1D378}, {0x1D7CE, 0x1D7FF}, {0x1E140, 0x1E149},
    {0x1E2F0, 0x1E2F9}, {0x1E8C7, 0x1E8CF}, {0x1E950, 0x1E959}, {0x1EC71, 0x1ECAB}, {0x1ECAD, 0x1ECAF},
    {0x1ECB1, 0x1ECB4}, {0x1ED01, 0x1ED2D}, {0x1ED2F, 0x1ED3D}, {0x1F100, 0x1F10C}, {0x1FBF0, 0x1FBF9},
};
/* \s: the White_Space property */
static const uint32_t unicode_white_space[][2] = {
    {0x9, 0xD}, {0x20, 0x20}, {0x85, 0x85}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};
/* Pc Pd Ps Pe Pi Pf Po as the Rust crate unicode_categories 0.1.1 has them (Unicode 8.0) */
static const uint32_t unicode_punctuation[][2] = {
    {0x21, 0x23}, {0x25, 0x2A}, {0x2C, 0x2F}, {0x3A, 0x3B}, {0x3F, 0x40}, {0x5B, 0x5D}, {0x5F, 0x5F},
    {0x7B, 0x7B}, {0x7D, 0x7D}, {0xA1, 0xA1}, {0xA7, 0xA7}, {0xAB, 0xAB}, {0xB6, 0xB7}, {0xBB, 0xBB},
    {0xBF, 0xBF}, {0x37E, 0x37E}, {0x387, 0x387}, {0x55A, 0x55F}, {0x589, 0x58A}, {0x5BE, 0x5BE},
    {0x5C0, 0x5C0}, {0x5C3, 0x5C3}, {0x5C6, 0x5C6}, {0x5F3, 0x5F4}, {0x609, 0x60A}, {0x60C, 0x60D},
    {0x61B, 0x61B}, {0x61E, 0x61F}, {0x66A, 0x66D}, {0x6D4, 0x6D4}, {0x700, 0x70D}, {0x7F7, 0x7F9},
    {0x830, 0x83E}, {0x85E, 0x85E}, {0x964, 0x965}, {0x970, 0x970}, {0xAF0, 0xAF0}, {0xDF4, 0xDF4},
    {0xE4F, 0xE4F}, {0xE5A, 0xE5B}, {0xF04, 0xF12}, {0xF14, 0xF14}, {0xF3A, 0xF3D}, {0xF85, 0xF85},
    {0xFD0, 0xFD4}, {0xFD9, 0xFDA}, {0x104A, 0x104F}, {0x10FB, 0x10FB}, {0x1360, 0x1368},
    {0x1400, 0x1400}, {0x166D, 0x166E}, {0x169B, 0x169C}, {0x16EB, 0x16ED}, {0x1735, 0x1736},
    {0x17D4, 0x17D6}, {0x17D8, 0x17DA}, {0x1800, 0x180A}, {0x1944, 0x1945}, {0x1A1E, 0x1A1F},
    {0x1AA0, 0x1AA6}, {0x1AA8, 0x1AAD}, {0x1B5A, 0x1B60}, {0x1BFC, 0x1BFF}, {0x1C3B, 0x1C3F},
    {0x1C7E, 0x1C7F}, {0x1CC0, 0x1CC7}, {0x1CD3, 0x1CD3}, {0x2010, 0x2027}, {0x2030, 0x2043},
    {0x2045, 0x2051}, {0x2053, 0x205E}, {0x207D, 0x207E}, {0x208D, 0x208E}, {0x2308, 0x230B},
    {0x2329, 0x232A}, {0x2768, 0x2775}, {0x27C5, 0x27C6}, {0x27E6, 0x27EF}, {0x2983, 0x2998},
    {0x29D8, 0x29DB}, {0x29FC, 0x29FD}, {0x2CF9, 0x2CFC}, {0x2CFE, 0x2CFF}, {0x2D70, 0x2D70},
    {0x2E00, 0x2E2E}, {0x2E30, 0x2E42}, {0x3001, 0x3003}, {0x3008, 0x3011}, {0x3014, 0x301F},
    {0x3030, 0x3030}, {0x303D, 0x303D}, {0x30A0, 0x30A0}, {0x30FB, 0x30FB}, {0xA4FE, 0xA4FF},
    {0xA60D, 0xA60F}, {0xA673, 0xA673}, {0xA67E, 0xA67E}, {0xA6F2, 0xA6F7}, {0xA874, 0xA877},
    {0xA8CE, 0xA8CF}, {0xA8F8, 0xA8FA}, {0xA8FC, 0xA8FC}, {0xA92E, 0xA92F}, {0xA95F, 0xA95F},
    {0xA9C1, 0xA9CD}, {0xA9DE, 0xA9DF}, {0xAA5C, 0xAA5F}, {0xAADE, 0xAADF}, {0xAAF0, 0xAAF1},
    {0xABEB, 0xABEB}, {0xFD3E, 0xFD3F}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52}, {0xFE54, 0xFE61},
    {0xFE63, 0xFE63}, {0xFE68, 0xFE68}, {0xFE6A, 0xFE6B}, {0xFF01, 0xFF03}, {0xFF05, 0xFF0A},
    {0xFF0C, 0xFF0F}, {0xFF1A, 0xFF1B}, {0xFF1F, 0xFF20}, {0xFF3B, 0xFF3D}, {0xFF3F, 0xFF3F},
    {0xFF5B, 0xFF5B}, {0xFF5D, 0xFF5D}, {0xFF5F, 0xFF65}, {0x10100, 0x10102}, {0x1039F, 0x1039F},
    {0x103D0, 0x103D0}, {0x1056F, 0x1056F}, {0x10857, 0x10857}, {0x1091F, 0x1091F}, {0x1093F, 0x1093F},
    {0x10A50, 0x10A58}, {0x10A7F, 0x10A7F}, {0x10AF0, 0x10AF6}, {0x10B39, 0x10B3F}, {0x10B99, 0x10B9C},
    {0x11047, 0x1104D}, {0x110BB, 0x110BC}, {0x110BE, 0x110C1}, {0x11140, 0x11143}, {0x11174, 0x11175},
    {0x111C5, 0x111C9}, {0x111CD, 0x111CD}, {0x111DB, 0x111DB}, {0x111DD, 0x111DF}, {0x11238, 0x1123D},
    {0x112A9, 0x112A9}, {0x114C6, 0x114C6}, {0x115C1, 0x115D7}, {0x11641, 0x11643}, {0x1173C, 0x1173E},
    {0x12470, 0x12474}, {0x16A6E, 0x16A6F}, {0x16AF5, 0x16AF5}, {0x16B37, 0x16B3B}, {0x16B44, 0x16B44},
    {0x1BC9F, 0x1BC9F}, {0x1DA87, 0x1DA8B},
};
/* {first, last, ccc}: non-zero Canonical_Combining_Class, Unicode 14.0.0 cut back to 9.0 */
static const uint32_t unicode_combining_class[][3] = {
    {0x300, 0x314, 0xE6}, {0x315, 0x315, 0xE8}, {0x316, 0x319, 0xDC}, {0x31A, 0x31A, 0xE8},
    {0x31B, 0x31B, 0xD8}, {0x31C, 0x320, 0xDC}, {0x321, 0x322, 0xCA}, {0x323, 0x326, 0xDC},
    {0x327, 0x328, 0xCA}, {0x329, 0x333, 0xDC}, {0x334, 0x338, 0x1}, {0x339, 0x33C, 0xDC},
    {0x33D, 0x344, 0xE6}, {0x345, 0x345, 0xF0}, {0x346, 0x346, 0xE6}, {0x347, 0x349, 0xDC},
    {0x34A, 0x34C, 0xE6}, {0x34D, 0x34E, 0xDC}, {0x350, 0x352, 0xE6}, {0x353, 0x356, 0xDC},
    {0x357, 0x357, 0xE6}, {0x358, 0x358, 0xE8}, {0x359, 0x35A, 0xDC}, {0x35B, 0x35B, 0xE6},
    {0x35C, 0x35C, 0xE9}, {0x35D, 0x35E, 0xEA}, {0x35F, 0x35F, 0xE9}, {0x360, 0x361, 0xEA},
    {0x362, 0x362, 0xE9}, {0x363, 0x36F, 0xE6}, {0x483, 0x487, 0xE6}, {0x591, 0x591, 0xDC},
    {0x592, 0x595, 0xE6}, {0x596, 0x596, 0xDC}, {0x597, 0x599, 0xE6}, {0x59A, 0x59A, 0xDE},
    {0x59B, 0x59B, 0xDC}, {0x59C, 0x5A1, 0xE6}, {0x5A2, 0x5A7, 0xDC}, {0x5A8, 0x5A9, 0xE6},
    {0x5AA, 0x5AA, 0xDC}, {0x5AB, 0x5AC, 0xE6}, {0x5AD, 0x5AD, 0xDE}, {0x5AE, 0x5AE, 0xE4},
    {0x5AF, 0x5AF, 0xE6}, {0x5B0, 0x5B0, 0xA}, {0x5B1, 0x5B1, 0xB}, {0x5B2, 0x5B2, 0xC},
    {0x5B3, 0x5B3, 0xD}, {0x5B4, 0x5B4, 0xE}, {0x5B5, 0x5B5, 0xF}, {0x5B6, 0x5B6, 0x10},
    {0x5B7, 0x5B7, 0x11}, {0x5B8, 0x5B8, 0x12}, {0x5B9, 0x5BA, 0x13}, {0x5BB, 0x5BB, 0x14},
    {0x5BC, 0x5BC, 0x15}, {0x5BD, 0x5BD, 0x16}, {0x5BF, 0x5BF, 0x17}, {0x5C1, 0x5C1, 0x18},
    {0x5C2, 0x5C2, 0x19}, {0x5C4, 0x5C4, 0xE6}, {0x5C5, 0x5C5, 0xDC}, {0x5C7, 0x5C7, 0x12},
    {0x610, 0x617, 0xE6}, {0x618, 0x618, 0x1E}, {0x619, 0x619, 0x1F}, {0x61A, 0x61A, 0x20},
    {0x64B, 0x64B, 0x1B}, {0x64C, 0x64C, 0x1C}, {0x64D, 0x64D, 0x1D}, {0x64E, 0x64E, 0x1E},
    {0x64F, 0x64F, 0x1F}, {0x650, 0x650, 0x20}, {0x651, 0x651, 0x21}, {0x652, 0x652, 0x22},
    {0x653, 0x654, 0xE6}, {0x655, 0x656, 0xDC}, {0x657, 0x65B, 0xE6}, {0x65C, 0x65C, 0xDC},
    {0x65D, 0x65E, 0xE6}, {0x65F, 0x65F, 0xDC}, {0x670, 0x670, 0x23}, {0x6D6, 0x6DC, 0xE6},
    {0x6DF, 0x6E2, 0xE6}, {0x6E3, 0x6E3, 0xDC}, {0x6E4, 0x6E4, 0xE6}, {0x6E7, 0x6E8, 0xE6},
    {0x6EA, 0x6EA, 0xDC}, {0x6EB, 0x6EC, 0xE6}, {0x6ED, 0x6ED, 0xDC}, {0x711, 0x711, 0x24},
    {0x730, 0x730, 0xE6}, {0x731, 0x731, 0xDC}, {0x732, 0x733, 0xE6}, {0x734, 0x734, 0xDC},
    {0x735, 0x736, 0xE6}, {0x737, 0x739, 0xDC}, {0x73A, 0x73A, 0xE6}, {0x73B, 0x73C, 0xDC},
    {0x73D, 0x73D, 0xE6}, {0x73E, 0x73E, 0xDC}, {0x73F, 0x741, 0xE6}, {0x742, 0x742, 0xDC},
    {0x743, 0x743, 0xE6}, {0x744, 0x744, 0xDC}, {0x745, 0x745, 0xE6}, {0x746, 0x746, 0xDC},
    {0x747, 0x747, 0xE6}, {0x748, 0x748, 0xDC}, {0x749, 0x74A, 0xE6}, {0x7EB, 0x7F1, 0xE6},
    {0x7F2, 0x7F2, 0xDC}, {0x7F3, 0x7F3, 0xE6}, {0x816, 0x819, 0xE6}, {0x81B, 0x823, 0xE6},
    {0x825, 0x827, 0xE6}, {0x829, 0x82D, 0xE6}, {0x859, 0x85B, 0xDC}, {0x8D4, 0x8E1, 0xE6},
    {0x8E3, 0x8E3, 0xDC}, {0x8E4, 0x8E5, 0xE6}, {0x8E6, 0x8E6, 0xDC}, {0x8E7, 0x8E8, 0xE6},
    {0x8E9, 0x8E9, 0xDC}, {0x8EA, 0x8EC, 0xE6}, {0x8ED, 0x8EF, 0xDC}, {0x8F0, 0x8F0, 0x1B},
    {0x8F1, 0x8F1, 0x1C}, {0x8F2, 0x8F2, 0x1D}, {0x8F3, 0x8F5, 0xE6}, {0x8F6, 0x8F6, 0xDC},
    {0x8F7, 0x8F8, 0xE6}, {0x8F9, 0x8FA, 0xDC}, {0x8FB, 0x8FF, 0xE6}, {0x93C, 0x93C, 0x7},
    {0x94D, 0x94D, 0x9}, {0x951, 0x951, 0xE6}, {0x952, 0x952, 0xDC}, {0x953, 0x954, 0xE6},
    {0x9BC, 0x9BC, 0x7}, {0x9CD, 0x9CD, 0x9}, {0xA3C, 0xA3C, 0x7}, {0xA4D, 0xA4D, 0x9},
    {0xABC, 0xABC, 0x7}, {0xACD, 0xACD, 0x9}, {0xB3C, 0xB3C, 0x7}, {0xB4D, 0xB4D, 0x9},
    {0xBCD, 0xBCD, 0x9}, {0xC4D, 0xC4D, 0x9}, {0xC55, 0xC55, 0x54}, {0xC56, 0xC56, 0x5B},
    {0xCBC, 0xCBC, 0x7}, {0xCCD, 0xCCD, 0x9}, {0xD4D, 0xD4D, 0x9}, {0xDCA, 0xDCA, 0x9},
    {0xE38, 0xE39, 0x67}, {0xE3A, 0xE3A, 0x9}, {0xE48, 0xE4B, 0x6B}, {0xEB8, 0xEB9, 0x76},
    {0xEC8, 0xECB, 0x7A}, {0xF18, 0xF19, 0xDC}, {0xF35, 0xF35, 0xDC}, {0xF37, 0xF37, 0xDC},
    {0xF39, 0xF39, 0xD8}, {0xF71, 0xF71, 0x81}, {0xF72, 0xF72, 0x82}, {0xF74, 0xF74, 0x84},
    {0xF7A, 0xF7D, 0x82}, {0xF80, 0xF80, 0x82}, {0xF82, 0xF83, 0xE6}, {0xF84, 0xF84, 0x9},
    {0xF86, 0xF87, 0xE6}, {0xFC6, 0xFC6, 0xDC}, {0x1037, 0x1037, 0x7}, {0x1039, 0x103A, 0x9},
    {0x108D, 0x108D, 0xDC}, {0x135D, 0x135F, 0xE6}, {0x1714, 0x1714, 0x9}, {0x1734, 0x1734, 0x9},
    {0x17D2, 0x17D2, 0x9}, {0x17DD, 0x17DD, 0xE6}, {0x18A9, 0x18A9, 0xE4}, {0x1939, 0x1939, 0xDE},
    {0x193A, 0x193A, 0xE6}, {0x193B, 0x193B, 0xDC}, {0x1A17, 0x1A17, 0xE6}, {0x1A18, 0x1A18, 0xDC},
    {0x1A60, 0x1A60, 0x9}, {0x1A75, 0x1A7C, 0xE6}, {0x1A7F, 0x1A7F, 0xDC}, {0x1AB0, 0x1AB4, 0xE6},
    {0x1AB5, 0x1ABA, 0xDC}, {0x1ABB, 0x1ABC, 0xE6}, {0x1ABD, 0x1ABD, 0xDC}, {0x1B34, 0x1B34, 0x7},
    {0x1B44, 0x1B44, 0x9}, {0x1B6B, 0x1B6B, 0xE6}, {0x1B6C, 0x1B6C, 0xDC}, {0x1B6D, 0x1B73, 0xE6},
    {0x1BAA, 0x1BAB, 0x9}, {0x1BE6, 0x1BE6, 0x7}, {0x1BF2, 0x1BF3, 0x9}, {0x1C37, 0x1C37, 0x7},
    {0x1CD0, 0x1CD2, 0xE6}, {0x1CD4, 0x1CD4, 0x1}, {0x1CD5, 0x1CD9, 0xDC}, {0x1CDA, 0x1CDB, 0xE6},
    {0x1CDC, 0x1CDF, 0xDC}, {0x1CE0, 0x1CE0, 0xE6}, {0x1CE2, 0x1CE8, 0x1}, {0x1CED, 0x1CED, 0xDC},
    {0x1CF4, 0x1CF4, 0xE6}, {0x1CF8, 0x1CF9, 0xE6}, {0x1DC0, 0x1DC1, 0xE6}, {0x1DC2, 0x1DC2, 0xDC},
    {0x1DC3, 0x1DC9, 0xE6}, {0x1DCA, 0x1DCA, 0xDC}, {0x1DCB, 0x1DCC, 0xE6}, {0x1DCD, 0x1DCD, 0xEA},
    {0x1DCE, 0x1DCE, 0xD6}, {0x1DCF, 0x1DCF, 0xDC}, {0x1DD0, 0x1DD0, 0xCA}, {0x1DD1, 0x1DF5, 0xE6},
    {0x1DFB, 0x1DFB, 0xE6}, {0x1DFC, 0x1DFC, 0xE9}, {0x1DFD, 0x1DFD, 0xDC}, {0x1DFE, 0x1DFE, 0xE6},
    {0x1DFF, 0x1DFF, 0xDC}, {0x20D0, 0x20D1, 0xE6}, {0x20D2, 0x20D3, 0x1}, {0x20D4, 0x20D7, 0xE6},
    {0x20D8, 0x20DA, 0x1}, {0x20DB, 0x20DC, 0xE6}, {0x20E1, 0x20E1, 0xE6}, {0x20E5, 0x20E6, 0x1},
    {0x20E7, 0x20E7, 0xE6}, {0x20E8, 0x20E8, 0xDC}, {0x20E9, 0x20E9, 0xE6}, {0x20EA, 0x20EB, 0x1},
    {0x20EC, 0x20EF, 0xDC}, {0x20F0, 0x20F0, 0xE6}, {0x2CEF, 0x2CF1, 0xE6}, {0x2D7F, 0x2D7F, 0x9},
    {0x2DE0, 0x2DFF, 0xE6}, {0x302A, 0x302A, 0xDA}, {0x302B, 0x302B, 0xE4}, {0x302C, 0x302C, 0xE8},
    {0x302D, 0x302D, 0xDE}, {0x302E, 0x302F, 0xE0}, {0x3099, 0x309A, 0x8}, {0xA66F, 0xA66F, 0xE6},
    {0xA674, 0xA67D, 0xE6}, {0xA69E, 0xA69F, 0xE6}, {0xA6F0, 0xA6F1, 0xE6}, {0xA806, 0xA806, 0x9},
    {0xA8C4, 0xA8C4, 0x9}, {0xA8E0, 0xA8F1, 0xE6}, {0xA92B, 0xA92D, 0xDC}, {0xA953, 0xA953, 0x9},
    {0xA9B3, 0xA9B3, 0x7}, {0xA9C0, 0xA9C0, 0x9}, {0xAAB0, 0xAAB0, 0xE6}, {0xAAB2, 0xAAB3, 0xE6},
    {0xAAB4, 0xAAB4, 0xDC}, {0xAAB7, 0xAAB8, 0xE6}, {0xAABE, 0xAABF, 0xE6}, {0xAAC1, 0xAAC1, 0xE6},
    {0xAAF6, 0xAAF6, 0x9}, {0xABED, 0xABED, 0x9}, {0xFB1E, 0xFB1E, 0x1A}, {0xFE20, 0xFE26, 0xE6},
    {0xFE27, 0xFE2D, 0xDC}, {0xFE2E, 0xFE2F, 0xE6}, {0x101FD, 0x101FD, 0xDC}, {0x102E0, 0x102E0, 0xDC},
    {0x10376, 0x1037A, 0xE6}, {0x10A0D, 0x10A0D, 0xDC}, {0x10A0F, 0x10A0F, 0xE6},
    {0x10A38, 0x10A38, 0xE6}, {0x10A39, 0x10A39, 0x1}, {0x10A3A, 0x10A3A, 0xDC},
    {0x10A3F, 0x10A3F, 0x9}, {0x10AE5, 0x10AE5, 0xE6}, {0x10AE6, 0x10AE6, 0xDC},
    {0x11046, 0x11046, 0x9}, {0x1107F, 0x1107F, 0x9}, {0x110B9, 0x110B9, 0x9}, {0x110BA, 0x110BA, 0x7},
    {0x11100, 0x11102, 0xE6}, {0x11133, 0x11134, 0x9}, {0x11173, 0x11173, 0x7}, {0x111C0, 0x111C0, 0x9},
    {0x111CA, 0x111CA, 0x7}, {0x11235, 0x11235, 0x9}, {0x11236, 0x11236, 0x7}, {0x112E9, 0x112E9, 0x7},
    {0x112EA, 0x112EA, 0x9}, {0x1133C, 0x1133C, 0x7}, {0x1134D, 0x1134D, 0x9}, {0x11366, 0x1136C, 0xE6},
    {0x11370, 0x11374, 0xE6}, {0x11442, 0x11442, 0x9}, {0x11446, 0x11446, 0x7}, {0x114C2, 0x114C2, 0x9},
    {0x114C3, 0x114C3, 0x7}, {0x115BF, 0x115BF, 0x9}, {0x115C0, 0x115C0, 0x7}, {0x1163F, 0x1163F, 0x9},
    {0x116B6, 0x116B6, 0x9}, {0x116B7, 0x116B7, 0x7}, {0x1172B, 0x1172B, 0x9}, {0x11C3F, 0x11C3F, 0x9},
    {0x16AF0, 0x16AF4, 0x1}, {0x16B30, 0x16B36, 0xE6}, {0x1BC9E, 0x1BC9E, 0x1},
    {0x1D165, 0x1D166, 0xD8}, {0x1D167, 0x1D169, 0x1}, {0x1D16D, 0x1D16D, 0xE2},
    {0x1D16E, 0x1D172, 0xD8}, {0x1D17B, 0x1D182, 0xDC}, {0x1D185, 0x1D189, 0xE6},
    {0x1D18A, 0x1D18B, 0xDC}, {0x1D1AA, 0x1D1AD, 0xE6}, {0x1D242, 0x1D244, 0xE6},
    {0x1E000, 0x1E006, 0xE6}, {0x1E008, 0x1E018, 0xE6}, {0x1E01B, 0x1E021, 0xE6},
    {0x1E023, 0x1E024, 0xE6}, {0x1E026, 0x1E02A, 0xE6}, {0x1E8D0, 0x1E8D6, 0xDC},
    {0x1E944, 0x1E949, 0xE6}, {0x1E94A, 0x1E94A, 0x7},
};
/* {c, first, second}: one-step canonical decompositions (second 0: a singleton), Unicode 14.0.0 cut back to 9.0, Hangul syllables left to the algorithm */
static const uint32_t unicode_decomposition[][3] = {
    {0xC0, 0x41, 0x300}, {0xC1, 0x41, 0x301}, {0xC2, 0x41, 0x302}, {0xC3, 0x41, 0x303},
    {0xC4, 0x41, 0x308}, {0xC5, 0x41, 0x30A}, {0xC7, 0x43, 0x327}, {0xC8, 0x45, 0x300},
    {0xC9, 0x45, 0x301}, {0xCA, 0x45, 0x302}, {0xCB, 0x45, 0x308}, {0xCC, 0x49, 0x300},
    {0xCD, 0x49, 0x301}, {0xCE, 0x49, 0x302}, {0xCF, 0x49, 0x308}, {0xD1, 0x4E, 0x303},
    {0xD2, 0x4F, 0x300}, {0xD3, 0x4F, 0x301}, {0xD4, 0x4F, 0x302}, {0xD5, 0x4F, 0x303},
    {0xD6, 0x4F, 0x308}, {0xD9, 0x55, 0x300}, {0xDA, 0x55, 0x301}, {0xDB, 0x55, 0x302},
    {0xDC, 0x55, 0x308}, {0xDD, 0x59, 0x301}, {0xE0, 0x61, 0x300}, {0xE1, 0x61, 0x301},
    {0xE2, 0x61, 0x302}, {0xE3, 0x61, 0x303}, {0xE4, 0x61, 0x308}, {0xE5, 0x61, 0x30A},
    {0xE7, 0x63, 0x327}, {0xE8, 0x65, 0x300}, {0xE9, 0x65, 0x301}, {0xEA, 0x65, 0x302},
    {0xEB, 0x65, 0x308}, {0xEC, 0x69, 0x300}, {0xED, 0x69, 0x301}, {0xEE, 0x69, 0x302},
    {0xEF, 0x69, 0x308}, {0xF1, 0x6E, 0x303}, {0xF2, 0x6F, 0x300}, {0xF3, 0x6F, 0x301},
    {0xF4, 0x6F, 0x302}, {0xF5, 0x6F, 0x303}, {0xF6, 0x6F, 0x308}, {0xF9, 0x75, 0x300},
    {0xFA, 0x75, 0x301}, {0xFB, 0x75, 0x302}, {0xFC, 0x75, 0x308}, {0xFD, 0x79, 0x301},
    {0xFF, 0x79, 0x308}, {0x100, 0x41, 0x304}, {0x101, 0x61, 0x304}, {0x102, 0x41, 0x306},
    {0x103, 0x61, 0x306}, {0x104, 0x41, 0x328}, {0x105, 0x61, 0x328}, {0x106, 0x43, 0x301},
    {0x107, 0x63, 0x301}, {0x108, 0x43, 0x302}, {0x109, 0x63, 0x302}, {0x10A, 0x43, 0x307},
    {0x10B, 0x63, 0x307}, {0x10C, 0x43, 0x30C}, {0x10D, 0x63, 0x30C}, {0x10E, 0x44, 0x30C},
    {0x10F, 0x64, 0x30C}, {0x112, 0x45, 0x304}, {0x113, 0x65, 0x304}, {0x114, 0x45, 0x306},
    {0x115, 0x65, 0x306}, {0x116, 0x45, 0x307}, {0x117, 0x65, 0x307}, {0x118, 0x45, 0x328},
    {0x119, 0x65, 0x328}, {0x11A, 0x45, 0x30C}, {0x11B, 0x65, 0x30C}, {0x11C, 0x47, 0x302},
    {0x11D, 0x67, 0x302}, {0x11E, 0x47, 0x306}, {0x11F, 0x67, 0x306}, {0x120, 0x47, 0x307},
    {0x121, 0x67, 0x307}, {0x122, 0x47, 0x327}, {0x123, 0x67, 0x327}, {0x124, 0x48, 0x302},
    {0x125, 0x68, 0x302}, {0x128, 0x49, 0x303}, {0x129, 0x69, 0x303}, {0x12A, 0x49, 0x304},
    {0x12B, 0x69, 0x304}, {0x12C, 0x49, 0x306}, {0x12D, 0x69, 0x306}, {0x12E, 0x49, 0x328},
    {0x12F, 0x69, 0x328}, {0x130, 0x49, 0x307}, {0x134, 0x4A, 0x302}, {0x135, 0x6A, 0x302},
    {0x136, 0x4B, 0x327}, {0x137, 0x6B, 0x327}, {0x139, 0x4C, 0x301}, {0x13A, 0x6C, 0x301},
    {0x13B, 0x4C, 0x327}, {0x13C, 0x6C, 0x327}, {0x13D, 0x4C, 0x30C}, {0x13E, 0x6C, 0x30C},
    {0x143, 0x4E, 0x301}, {0x144, 0x6E, 0x301}, {0x145, 0x4E, 0x327}, {0x146, 0x6E, 0x327},
    {0x147, 0x4E, 0x30C}, {0x148, 0x6E, 0x30C}, {0x14C, 0x4F, 0x304}, {0x14D, 0x6F, 0x304},
    {0x14E, 0x4F, 0x306}, {0x14F, 0x6F, 0x306}, {0x150, 0x4F, 0x30B}, {0x151, 0x6F, 0x30B},
    {0x154, 0x52, 0x301}, {0x155, 0x72, 0x301}, {0x156, 0x52, 0x327}, {0x157, 0x72, 0x327},
    {0x158, 0x52, 0x30C}, {0x159, 0x72, 0x30C}, {0x15A, 0x53, 0x301}, {0x15B, 0x73, 0x301},
    {0x15C, 0x53, 0x302}, {0x15D, 0x73, 0x302}, {0x15E, 0x53, 0x327}, {0x15F, 0x73, 0x327},
    {0x160, 0x53, 0x30C}, {0x161, 0x73, 0x30C}, {0x162, 0x54, 0x327}, {0x163, 0x74, 0x327},
    {0x164, 0x54, 0x30C}, {0x165, 0x74, 0x30C}, {0x168, 0x55, 0x303}, {0x169, 0x75, 0x303},
    {0x16A, 0x55, 0x304}, {0x16B, 0x75, 0x304}, {0x16C, 0x55, 0x306}, {0x16D, 0x75, 0x306},
    {0x16E, 0x55, 0x30A}, {0x16F, 0x75, 0x30A}, {0x170, 0x55, 0x30B}, {0x171, 0x75, 0x30B},
    {0x172, 0x55, 0x328}, {0x173, 0x75, 0x328}, {0x174, 0x57, 0x302}, {0x175, 0x77, 0x302},
    {0x176, 0x59, 0x302}, {0x177, 0x79, 0x302}, {0x178, 0x59, 0x308}, {0x179, 0x5A, 0x301},
    {0x17A, 0x7A, 0x301}, {0x17B, 0x5A, 0x307}, {0x17C, 0x7A, 0x307}, {0x17D, 0x5A, 0x30C},
    {0x17E, 0x7A, 0x30C}, {0x1A0, 0x4F, 0x31B}, {0x1A1, 0x6F, 0x31B}, {0x1AF, 0x55, 0x31B},
    {0x1B0, 0x75, 0x31B}, {0x1CD, 0x41, 0x30C}, {0x1CE, 0x61, 0x30C}, {0x1CF, 0x49, 0x30C},
    {0x1D0, 0x69, 0x30C}, {0x1D1, 0x4F, 0x30C}, {0x1D2, 0x6F, 0x30C}, {0x1D3, 0x55, 0x30C},
    {0x1D4, 0x75, 0x30C}, {0x1D5, 0xDC, 0x304}, {0x1D6, 0xFC, 0x304}, {0x1D7, 0xDC, 0x301},
    {0x1D8, 0xFC, 0x301}, {0x1D9, 0xDC, 0x30C}, {0x1DA, 0xFC, 0x30C}, {0x1DB, 0xDC, 0x300},
    {0x1DC, 0xFC, 0x300}, {0x1DE, 0xC4, 0x304}, {0x1DF, 0xE4, 0x304}, {0x1E0, 0x226, 0x304},
    {0x1E1, 0x227, 0x304}, {0x1E2, 0xC6, 0x304}, {0x1E3, 0xE6, 0x304}, {0x1E6, 0x47, 0x30C},
    {0x1E7, 0x67, 0x30C}, {0x1E8, 0x4B, 0x30C}, {0x1E9, 0x6B, 0x30C}, {0x1EA, 0x4F, 0x328},
    {0x1EB, 0x6F, 0x328}, {0x1EC, 0x1EA, 0x304}, {0x1ED, 0x1EB, 0x304}, {0x1EE, 0x1B7, 0x30C},
    {0x1EF, 0x292, 0x30C}, {0x1F0, 0x6A, 0x30C}, {0x1F4, 0x47, 0x301}, {0x1F5, 0x67, 0x301},
    {0x1F8, 0x4E, 0x300}, {0x1F9, 0x6E, 0x300}, {0x1FA, 0xC5, 0x301}, {0x1FB, 0xE5, 0x301},
    {0x1FC, 0xC6, 0x301}, {0x1FD, 0xE6, 0x301}, {0x1FE, 0xD8, 0x301}, {0x1FF, 0xF8, 0x301},
    {0x200, 0x41, 0x30F}, {0x201, 0x61, 0x30F}, {0x202, 0x41, 0x311}, {0x203, 0x61, 0x311},
    {0x204, 0x45, 0x30F}, {0x205, 0x65, 0x30F}, {0x206, 0x45, 0x311}, {0x207, 0x65, 0x311},
    {0x208, 0x49, 0x30F}, {0x209, 0x69, 0x30F}, {0x20A, 0x49, 0x311}, {0x20B, 0x69, 0x311},
    {0x20C, 0x4F, 0x30F}, {0x20D, 0x6F, 0x30F}, {0x20E, 0x4F, 0x311}, {0x20F, 0x6F, 0x311},
    {0x210, 0x52, 0x30F}, {0x211, 0x72, 0x30F}, {0x212, 0x52, 0x311}, {0x213, 0x72, 0x311},
    {0x214, 0x55, 0x30F}, {0x215, 0x75, 0x30F}, {0x216, 0x55, 0x311}, {0x217, 0x75, 0x311},
    {0x218, 0x53, 0x326}, {0x219, 0x73, 0x326}, {0x21A, 0x54, 0x326}, {0x21B, 0x74, 0x326},
    {0x21E, 0x48, 0x30C}, {0x21F, 0x68, 0x30C}, {0x226, 0x41, 0x307}, {0x227, 0x61, 0x307},
    {0x228, 0x45, 0x327}, {0x229, 0x65, 0x327}, {0x22A, 0xD6, 0x304}, {0x22B, 0xF6, 0x304},
    {0x22C, 0xD5, 0x304}, {0x22D, 0xF5, 0x304}, {0x22E, 0x4F, 0x307}, {0x22F, 0x6F, 0x307},
    {0x230, 0x22E, 0x304}, {0x231, 0x22F, 0x304}, {0x232, 0x59, 0x304}, {0x233, 0x79, 0x304},
    {0x340, 0x300, 0x0}, {0x341, 0x301, 0x0}, {0x343, 0x313, 0x0}, {0x344, 0x308, 0x301},
    {0x374, 0x2B9, 0x0}, {0x37E, 0x3B, 0x0}, {0x385, 0xA8, 0x301}, {0x386, 0x391, 0x301},
    {0x387, 0xB7, 0x0}, {0x388, 0x395, 0x301}, {0x389, 0x397, 0x301}, {0x38A, 0x399, 0x301},
    {0x38C, 0x39F, 0x301}, {0x38E, 0x3A5, 0x301}, {0x38F, 0x3A9, 0x301}, {0x390, 0x3CA, 0x301},
    {0x3AA, 0x399, 0x308}, {0x3AB, 0x3A5, 0x308}, {0x3AC, 0x3B1, 0x301}, {0x3AD, 0x3B5, 0x301},
    {0x3AE, 0x3B7, 0x301}, {0x3AF, 0x3B9, 0x301}, {0x3B0, 0x3CB, 0x301}, {0x3CA, 0x3B9, 0x308},
    {0x3CB, 0x3C5, 0x308}, {0x3CC, 0x3BF, 0x301}, {0x3CD, 0x3C5, 0x301}, {0x3CE, 0x3C9, 0x301},
    {0x3D3, 0x3D2, 0x301}, {0x3D4, 0x3D2, 0x308}, {0x400, 0x415, 0x300}, {0x401, 0x415, 0x308},
    {0x403, 0x413, 0x301}, {0x407, 0x406, 0x308}, {0x40C, 0x41A, 0x301}, {0x40D, 0x418, 0x300},
    {0x40E, 0x423, 0x306}, {0x419, 0x418, 0x306}, {0x439, 0x438, 0x306}, {0x450, 0x435, 0x300},
    {0x451, 0x435, 0x308}, {0x453, 0x433, 0x301}, {0x457, 0x456, 0x308}, {0x45C, 0x43A, 0x301},
    {0x45D, 0x438, 0x300}, {0x45E, 0x443, 0x306}, {0x476, 0x474, 0x30F}, {0x477, 0x475, 0x30F},
    {0x4C1, 0x416, 0x306}, {0x4C2, 0x436, 0x306}, {0x4D0, 0x410, 0x306}, {0x4D1, 0x430, 0x306},
    {0x4D2, 0x410, 0x308}, {0x4D3, 0x430, 0x308}, {0x4D6, 0x415, 0x306}, {0x4D7, 0x435, 0x306},
    {0x4DA, 0x4D8, 0x308}, {0x4DB, 0x4D9, 0x308}, {0x4DC, 0x416, 0x308}, {0x4DD, 0x436, 0x308},
    {0x4DE, 0x417, 0x308}, {0x4DF, 0x437, 0x308}, {0x4E2, 0x418, 0x304}, {0x4E3, 0x438, 0x304},
    {0x4E4, 0x418, 0x308}, {0x4E5, 0x438, 0x308}, {0x4E6, 0x41E, 0x308}, {0x4E7, 0x43E, 0x308},
    {0x4EA, 0x4E8, 0x308}, {0x4EB, 0x4E9, 0x308}, {0x4EC, 0x42D, 0x308}, {0x4ED, 0x44D, 0x308},
    {0x4EE, 0x423, 0x304}, {0x4EF, 0x443, 0x304}, {0x4F0, 0x423, 0x308}, {0x4F1, 0x443, 0x308},
    {0x4F2, 0x423, 0x30B}, {0x4F3, 0x443, 0x30B}, {0x4F4, 0x427, 0x308}, {0x4F5, 0x447, 0x308},
    {0x4F8, 0x42B, 0x308}, {0x4F9, 0x44B, 0x308}, {0x622, 0x627, 0x653}, {0x623, 0x627, 0x654},
    {0x624, 0x648, 0x654}, {0x625, 0x627, 0x655}, {0x626, 0x64A, 0x654}, {0x6C0, 0x6D5, 0x654},
    {0x6C2, 0x6C1, 0x654}, {0x6D3, 0x6D2, 0x654}, {0x929, 0x928, 0x93C}, {0x931, 0x930, 0x93C},
    {0x934, 0x933, 0x93C}, {0x958, 0x915, 0x93C}, {0x959, 0x916, 0x93C}, {0x95A, 0x917, 0x93C},
    {0x95B, 0x91C, 0x93C}, {0x95C, 0x921, 0x93C}, {0x95D, 0x922, 0x93C}, {0x95E, 0x92B, 0x93C},
    {0x95F, 0x92F, 0x93C}, {0x9CB, 0x9C7, 0x9BE}, {0x9CC, 0x9C7, 0x9D7}, {0x9DC, 0x9A1, 0x9BC},
    {0x9DD, 0x9A2, 0x9BC}, {0x9DF, 0x9AF, 0x9BC}, {0xA33, 0xA32, 0xA3C}, {0xA36, 0xA38, 0xA3C},
    {0xA59, 0xA16, 0xA3C}, {0xA5A, 0xA17, 0xA3C}, {0xA5B, 0xA1C, 0xA3C}, {0xA5E, 0xA2B, 0xA3C},
    {0xB48, 0xB47, 0xB56}, {0xB4B, 0xB47, 0xB3E}, {0xB4C, 0xB47, 0xB57}, {0xB5C, 0xB21, 0xB3C},
    {0xB5D, 0xB22, 0xB3C}, {0xB94, 0xB92, 0xBD7}, {0xBCA, 0xBC6, 0xBBE}, {0xBCB, 0xBC7, 0xBBE},
    {0xBCC, 0xBC6, 0xBD7}, {0xC48, 0xC46, 0xC56}, {0xCC0, 0xCBF, 0xCD5}, {0xCC7, 0xCC6, 0xCD5},
    {0xCC8, 0xCC6, 0xCD6}, {0xCCA, 0xCC6, 0xCC2}, {0xCCB, 0xCCA, 0xCD5}, {0xD4A, 0xD46, 0xD3E},
    {0xD4B, 0xD47, 0xD3E}, {0xD4C, 0xD46, 0xD57}, {0xDDA, 0xDD9, 0xDCA}, {0xDDC, 0xDD9, 0xDCF},
    {0xDDD, 0xDDC, 0xDCA}, {0xDDE, 0xDD9, 0xDDF}, {0xF43, 0xF42, 0xFB7}, {0xF4D, 0xF4C, 0xFB7},
    {0xF52, 0xF51, 0xFB7}, {0xF57, 0xF56, 0xFB7}, {0xF5C, 0xF5B, 0xFB7}, {0xF69, 0xF40, 0xFB5},
    {0xF73, 0xF71, 0xF72}, {0xF75, 0xF71, 0xF74}, {0xF76, 0xFB2, 0xF80}, {0xF78, 0xFB3, 0xF80},
    {0xF81, 0xF71, 0xF80}, {0xF93, 0xF92, 0xFB7}, {0xF9D, 0xF9C, 0xFB7}, {0xFA2, 0xFA1, 0xFB7},
    {0xFA7, 0xFA6, 0xFB7}, {0xFAC, 0xFAB, 0xFB7}, {0xFB9, 0xF90, 0xFB5}, {0x1026, 0x1025, 0x102E},
    {0x1B06, 0x1B05, 0x1B35}, {0x1B08, 0x1B07, 0x1B35}, {0x1B0A, 0x1B09, 0x1B35},
    {0x1B0C, 0x1B0B, 0x1B35}, {0x1B0E, 0x1B0D, 0x1B35}, {0x1B12, 0x1B11, 0x1B35},
    {0x1B3B, 0x1B3A, 0x1B35}, {0x1B3D, 0x1B3C, 0x1B35}, {0x1B40, 0x1B3E, 0x1B35},
    {0x1B41, 0x1B3F, 0x1B35}, {0x1B43, 0x1B42, 0x1B35}, {0x1E00, 0x41, 0x325}, {0x1E01, 0x61, 0x325},
    {0x1E02, 0x42, 0x307}, {0x1E03, 0x62, 0x307}, {0x1E04, 0x42, 0x323}, {0x1E05, 0x62, 0x323},
    {0x1E06, 0x42, 0x331}, {0x1E07, 0x62, 0x331}, {0x1E08, 0xC7, 0x301}, {0x1E09, 0xE7, 0x301},
    {0x1E0A, 0x44, 0x307}, {0x1E0B, 0x64, 0x307}, {0x1E0C, 0x44, 0x323}, {0x1E0D, 0x64, 0x323},
    {0x1E0E, 0x44, 0x331}, {0x1E0F, 0x64, 0x331}, {0x1E10, 0x44, 0x327}, {0x1E11, 0x64, 0x327},
    {0x1E12, 0x44, 0x32D}, {0x1E13, 0x64, 0x32D}, {0x1E14, 0x112, 0x300}, {0x1E15, 0x113, 0x300},
    {0x1E16, 0x112, 0x301}, {0x1E17, 0x113, 0x301}, {0x1E18, 0x45, 0x32D}, {0x1E19, 0x65, 0x32D},
    {0x1E1A, 0x45, 0x330}, {0x1E1B, 0x65, 0x330}, {0x1E1C, 0x228, 0x306}, {0x1E1D, 0x229, 0x306},
    {0x1E1E, 0x46, 0x307}, {0x1E1F, 0x66, 0x307}, {0x1E20, 0x47, 0x304}, {0x1E21, 0x67, 0x304},
    {0x1E22, 0x48, 0x307}, {0x1E23, 0x68, 0x307}, {0x1E24, 0x48, 0x323}, {0x1E25, 0x68, 0x323},
    {0x1E26, 0x48, 0x308}, {0x1E27, 0x68, 0x308}, {0x1E28, 0x48, 0x327}, {0x1E29, 0x68, 0x327},
    {0x1E2A, 0x48, 0x32E}, {0x1E2B, 0x68, 0x32E}, {0x1E2C, 0x49, 0x330}, {0x1E2D, 0x69, 0x330},
    {0x1E2E, 0xCF, 0x301}, {0x1E2F, 0xEF, 0x301}, {0x1E30, 0x4B, 0x301}, {0x1E31, 0x6B, 0x301},
    {0x1E32, 0x4B, 0x323}, {0x1E33, 0x6B, 0x323}, {0x1E34, 0x4B, 0x331}, {0x1E35, 0x6B, 0x331},
    {0x1E36, 0x4C, 0x323}, {0x1E37, 0x6C, 0x323}, {0x1E38, 0x1E36, 0x304}, {0x1E39, 0x1E37, 0x304},
    {0x1E3A, 0x4C, 0x331}, {0x1E3B, 0x6C, 0x331}, {0x1E3C, 0x4C, 0x32D}, {0x1E3D, 0x6C, 0x32D},
    {0x1E3E, 0x4D, 0x301}, {0x1E3F, 0x6D, 0x301}, {0x1E40, 0x4D, 0x307}, {0x1E41, 0x6D, 0x307},
    {0x1E42, 0x4D, 0x323}, {0x1E43, 0x6D, 0x323}, {0x1E44, 0x4E, 0x307}, {0x1E45, 0x6E, 0x307},
    {0x1E46, 0x4E, 0x323}, {0x1E47, 0x6E, 0x323}, {0x1E48, 0x4E, 0x331}, {0x1E49, 0x6E, 0x331},
    {0x1E4A, 0x4E, 0x32D}, {0x1E4B, 0x6E, 0x32D}, {0x1E4C, 0xD5, 0x301}, {0x1E4D, 0xF5, 0x301},
    {0x1E4E, 0xD5, 0x308}, {0x1E4F, 0xF5, 0x308}, {0x1E50, 0x14C, 0x300}, {0x1E51, 0x14D, 0x300},
    {0x1E52, 0x14C, 0x301}, {0x1E53, 0x14D, 0x301}, {0x1E54, 0x50, 0x301}, {0x1E55, 0x70, 0x301},
    {0x1E56, 0x50, 0x307}, {0x1E57, 0x70, 0x307}, {0x1E58, 0x52, 0x307}, {0x1E59, 0x72, 0x307},
    {0x1E5A, 0x52, 0x323}, {0x1E5B, 0x72, 0x323}, {0x1E5C, 0x1E5A, 0x304}, {0x1E5D, 0x1E5B, 0x304},
    {0x1E5E, 0x52, 0x331}, {0x1E5F, 0x72, 0x331}, {0x1E60, 0x53, 0x307}, {0x1E61, 0x73, 0x307},
    {0x1E62, 0x53, 0x323}, {0x1E63, 0x73, 0x323}, {0x1E64, 0x15A, 0x307}, {0x1E65, 0x15B, 0x307},
    {0x1E66, 0x160, 0x307}, {0x1E67, 0x161, 0x307}, {0x1E68, 0x1E62, 0x307}, {0x1E69, 0x1E63, 0x307},
    {0x1E6A, 0x54, 0x307}, {0x1E6B, 0x74, 0x307}, {0x1E6C, 0x54, 0x323}, {0x1E6D, 0x74, 0x323},
    {0x1E6E, 0x54, 0x331}, {0x1E6F, 0x74, 0x331}, {0x1E70, 0x54, 0x32D}, {0x1E71, 0x74, 0x32D},
    {0x1E72, 0x55, 0x324}, {0x1E73, 0x75, 0x324}, {0x1E74, 0x55, 0x330}, {0x1E75, 0x75, 0x330},
    {0x1E76, 0x55, 0x32D}, {0x1E77, 0x75, 0x32D}, {0x1E78, 0x168, 0x301}, {0x1E79, 0x169, 0x301},
    {0x1E7A, 0x16A, 0x308}, {0x1E7B, 0x16B, 0x308}, {0x1E7C, 0x56, 0x303}, {0x1E7D, 0x76, 0x303},
    {0x1E7E, 0x56, 0x323}, {0x1E7F, 0x76, 0x323}, {0x1E80, 0x57, 0x300}, {0x1E81, 0x77, 0x300},
    {0x1E82, 0x57, 0x301}, {0x1E83, 0x77, 0x301}, {0x1E84, 0x57, 0x308}, {0x1E85, 0x77, 0x308},
    {0x1E86, 0x57, 0x307}, {0x1E87, 0x77, 0x307}, {0x1E88, 0x57, 0x323}, {0x1E89, 0x77, 0x323},
    {0x1E8A, 0x58, 0x307}, {0x1E8B, 0x78, 0x307}, {0x1E8C, 0x58, 0x308}, {0x1E8D, 0x78, 0x308},
    {0x1E8E, 0x59, 0x307}, {0x1E8F, 0x79, 0x307}, {0x1E90, 0x5A, 0x302}, {0x1E91, 0x7A, 0x302},
    {0x1E92, 0x5A, 0x323}, {0x1E93, 0x7A, 0x323}, {0x1E94, 0x5A, 0x331}, {0x1E95, 0x7A, 0x331},
    {0x1E96, 0x68, 0x331}, {0x1E97, 0x74, 0x308}, {0x1E98, 0x77, 0x30A}, {0x1E99, 0x79, 0x30A},
    {0x1E9B, 0x17F, 0x307}, {0x1EA0, 0x41, 0x323}, {0x1EA1, 0x61, 0x323}, {0x1EA2, 0x41, 0x309},
    {0x1EA3, 0x61, 0x309}, {0x1EA4, 0xC2, 0x301}, {0x1EA5, 0xE2, 0x301}, {0x1EA6, 0xC2, 0x300},
    {0x1EA7, 0xE2, 0x300}, {0x1EA8, 0xC2, 0x309}, {0x1EA9, 0xE2, 0x309}, {0x1EAA, 0xC2, 0x303},
    {0x1EAB, 0xE2, 0x303}, {0x1EAC, 0x1EA0, 0x302}, {0x1EAD, 0x1EA1, 0x302}, {0x1EAE, 0x102, 0x301},
    {0x1EAF, 0x103, 0x301}, {0x1EB0, 0x102, 0x300}, {0x1EB1, 0x103, 0x300}, {0x1EB2, 0x102, 0x309},
    {0x1EB3, 0x103, 0x309}, {0x1EB4, 0x102, 0x303}, {0x1EB5, 0x103, 0x303}, {0x1EB6, 0x1EA0, 0x306},
    {0x1EB7, 0x1EA1, 0x306}, {0x1EB8, 0x45, 0x323}, {0x1EB9, 0x65, 0x323}, {0x1EBA, 0x45, 0x309},
    {0x1EBB, 0x65, 0x309}, {0x1EBC, 0x45, 0x303}, {0x1EBD, 0x65, 0x303}, {0x1EBE, 0xCA, 0x301},
    {0x1EBF, 0xEA, 0x301}, {0x1EC0, 0xCA, 0x300}, {0x1EC1, 0xEA, 0x300}, {0x1EC2, 0xCA, 0x309},
    {0x1EC3, 0xEA, 0x309}, {0x1EC4, 0xCA, 0x303}, {0x1EC5, 0xEA, 0x303}, {0x1EC6, 0x1EB8, 0x302},
    {0x1EC7, 0x1EB9, 0x302}, {0x1EC8, 0x49, 0x309}, {0x1EC9, 0x69, 0x309}, {0x1ECA, 0x49, 0x323},
    {0x1ECB, 0x69, 0x323}, {0x1ECC, 0x4F, 0x323}, {0x1ECD, 0x6F, 0x323}, {0x1ECE, 0x4F, 0x309},
    {0x1ECF, 0x6F, 0x309}, {0x1ED0, 0xD4, 0x301}, {0x1ED1, 0xF4, 0x301}, {0x1ED2, 0xD4, 0x300},
    {0x1ED3, 0xF4, 0x300}, {0x1ED4, 0xD4, 0x309}, {0x1ED5, 0xF4, 0x309}, {0x1ED6, 0xD4, 0x303},
    {0x1ED7, 0xF4, 0x303}, {0x1ED8, 0x1ECC, 0x302}, {0x1ED9, 0x1ECD, 0x302}, {0x1EDA, 0x1A0, 0x301},
    {0x1EDB, 0x1A1, 0x301}, {0x1EDC, 0x1A0, 0x300}, {0x1EDD, 0x1A1, 0x300}, {0x1EDE, 0x1A0, 0x309},
    {0x1EDF, 0x1A1, 0x309}, {0x1EE0, 0x1A0, 0x303}, {0x1EE1, 0x1A1, 0x303}, {0x1EE2, 0x1A0, 0x323},
    {0x1EE3, 0x1A1, 0x323}, {0x1EE4, 0x55, 0x323}, {0x1EE5, 0x75, 0x323}, {0x1EE6, 0x55, 0x309},
    {0x1EE7, 0x75, 0x309}, {0x1EE8, 0x1AF, 0x301}, {0x1EE9, 0x1B0, 0x301}, {0x1EEA, 0x1AF, 0x300},
    {0x1EEB, 0x1B0, 0x300}, {0x1EEC, 0x1AF, 0x309}, {0x1EED, 0x1B0, 0x309}, {0x1EEE, 0x1AF, 0x303},
    {0x1EEF, 0x1B0, 0x303}, {0x1EF0, 0x1AF, 0x323}, {0x1EF1, 0x1B0, 0x323}, {0x1EF2, 0x59, 0x300},
    {0x1EF3, 0x79, 0x300}, {0x1EF4, 0x59, 0x323}, {0x1EF5, 0x79, 0x323}, {0x1EF6, 0x59, 0x309},
    {0x1EF7, 0x79, 0x309}, {0x1EF8, 0x59, 0x303}, {0x1EF9, 0x79, 0x303}, {0x1F00, 0x3B1, 0x313},
    {0x1F01, 0x3B1, 0x314}, {0x1F02, 0x1F00, 0x300}, {0x1F03, 0x1F01, 0x300}, {0x1F04, 0x1F00, 0x301},
    {0x1F05, 0x1F01, 0x301}, {0x1F06, 0x1F00, 0x342}, {0x1F07, 0x1F01, 0x342}, {0x1F08, 0x391, 0x313},
    {0x1F09, 0x391, 0x314}, {0x1F0A, 0x1F08, 0x300}, {0x1F0B, 0x1F09, 0x300}, {0x1F0C, 0x1F08, 0x301},
    {0x1F0D, 0x1F09, 0x301}, {0x1F0E, 0x1F08, 0x342}, {0x1F0F, 0x1F09, 0x342}, {0x1F10, 0x3B5, 0x313},
    {0x1F11, 0x3B5, 0x314}, {0x1F12, 0x1F10, 0x300}, {0x1F13, 0x1F11, 0x300}, {0x1F14, 0x1F10, 0x301},
    {0x1F15, 0x1F11, 0x301}, {0x1F18, 0x395, 0x313}, {0x1F19, 0x395, 0x314}, {0x1F1A, 0x1F18, 0x300},
    {0x1F1B, 0x1F19, 0x300}, {0x1F1C, 0x1F18, 0x301}, {0x1F1D, 0x1F19, 0x301}, {0x1F20, 0x3B7, 0x313},
    {0x1F21, 0x3B7, 0x314}, {0x1F22, 0x1F20, 0x300}, {0x1F23, 0x1F21, 0x300}, {0x1F24, 0x1F20, 0x301},
    {0x1F25, 0x1F21, 0x301}, {0x1F26, 0x1F20, 0x342}, {0x1F27, 0x1F21, 0x342}, {0x1F28, 0x397, 0x313},
    {0x1F29, 0x397, 0x314}, {0x1F2A, 0x1F28, 0x300}, {0x1F2B, 0x1F29, 0x300}, {0x1F2C, 0x1F28, 0x301},
    {0x1F2D, 0x1F29, 0x301}, {0x1F2E, 0x1F28, 0x342}, {0x1F2F, 0x1F29, 0x342}, {0x1F30, 0x3B9, 0x313},
    {0x1F31, 0x3B9, 0x314}, {0x1F32, 0x1F30, 0x300}, {0x1F33, 0x1F31, 0x300}, {0x1F34, 0x1F30, 0x301},
    {0x1F35, 0x1F31, 0x301}, {0x1F36, 0x1F30, 0x342}, {0x1F37, 0x1F31, 0x342}, {0x1F38, 0x399, 0x313},
    {0x1F39, 0x399, 0x314}, {0x1F3A, 0x1F38, 0x300}, {0x1F3B, 0x1F39, 0x300}, {0x1F3C, 0x1F38, 0x301},
    {0x1F3D, 0x1F39, 0x301}, {0x1F3E, 0x1F38, 0x342}, {0x1F3F, 0x1F39, 0x342}, {0x1F40, 0x3BF, 0x313},
    {0x1F41, 0x3BF, 0x314}, {0x1F42, 0x1F40, 0x300}, {0x1F43, 0x1F41, 0x300}, {0x1F44, 0x1F40, 0x301},
    {0x1F45, 0x1F41, 0x301}, {0x1F48, 0x39F, 0x313}, {0x1F49, 0x39F, 0x314}, {0x1F4A, 0x1F48, 0x300},
    {0x1F4B, 0x1F49, 0x300}, {0x1F4C, 0x1F48, 0x301}, {0x1F4D, 0x1F49, 0x301}, {0x1F50, 0x3C5, 0x313},
    {0x1F51, 0x3C5, 0x314}, {0x1F52, 0x1F50, 0x300}, {0x1F53, 0x1F51, 0x300}, {0x1F54, 0x1F50, 0x301},
    {0x1F55, 0x1F51, 0x301}, {0x1F56, 0x1F50, 0x342}, {0x1F57, 0x1F51, 0x342}, {0x1F59, 0x3A5, 0x314},
    {0x1F5B, 0x1F59, 0x300}, {0x1F5D, 0x1F59, 0x301}, {0x1F5F, 0x1F59, 0x342}, {0x1F60, 0x3C9, 0x313},
    {0x1F61, 0x3C9, 0x314}, {0x1F62, 0x1F60, 0x300}, {0x1F63, 0x1F61, 0x300}, {0x1F64, 0x1F60, 0x301},
    {0x1F65, 0x1F61, 0x301}, {0x1F66, 0x1F60, 0x342}, {0x1F67, 0x1F61, 0x342}, {0x1F68, 0x3A9, 0x313},
    {0x1F69, 0x3A9, 0x314}, {0x1F6A, 0x1F68, 0x300}, {0x1F6B, 0x1F69, 0x300}, {0x1F6C, 0x1F68, 0x301},
    {0x1F6D, 0x1F69, 0x301}, {0x1F6E, 0x1F68, 0x342}, {0x1F6F, 0x1F69, 0x342}, {0x1F70, 0x3B1, 0x300},
    {0x1F71, 0x3AC, 0x0}, {0x1F72, 0x3B5, 0x300}, {0x1F73, 0x3AD, 0x0}, {0x1F74, 0x3B7, 0x300},
    {0x1F75, 0x3AE, 0x0}, {0x1F76, 0x3B9, 0x300}, {0x1F77, 0x3AF, 0x0}, {0x1F78, 0x3BF, 0x300},
    {0x1F79, 0x3CC, 0x0}, {0x1F7A, 0x3C5, 0x300}, {0x1F7B, 0x3CD, 0x0}, {0x1F7C, 0x3C9, 0x300},
    {0x1F7D, 0x3CE, 0x0}, {0x1F80, 0x1F00, 0x345}, {0x1F81, 0x1F01, 0x345}, {0x1F82, 0x1F02, 0x345},
    {0x1F83, 0x1F03, 0x345}, {0x1F84, 0x1F04, 0x345}, {0x1F85, 0x1F05, 0x345}, {0x1F86, 0x1F06, 0x345},
    {0x1F87, 0x1F07, 0x345}, {0x1F88, 0x1F08, 0x345}, {0x1F89, 0x1F09, 0x345}, {0x1F8A, 0x1F0A, 0x345},
    {0x1F8B, 0x1F0B, 0x345}, {0x1F8C, 0x1F0C, 0x345}, {0x1F8D, 0x1F0D, 0x345}, {0x1F8E, 0x1F0E, 0x345},
    {0x1F8F, 0x1F0F, 0x345}, {0x1F90, 0x1F20, 0x345}, {0x1F91, 0x1F21, 0x345}, {0x1F92, 0x1F22, 0x345},
    {0x1F93, 0x1F23, 0x345}, {0x1F94, 0x1F24, 0x345}, {0x1F95, 0x1F25, 0x345}, {0x1F96, 0x1F26, 0x345},
    {0x1F97, 0x1F27, 0x345}, {0x1F98, 0x1F28, 0x345}, {0x1F99, 0x1F29, 0x345}, {0x1F9A, 0x1F2A, 0x345},
    {0x1F9B, 0x1F2B, 0x345}, {0x1F9C, 0x1F2C, 0x345}, {0x1F9D, 0x1F2D, 0x345}, {0x1F9E, 0x1F2E, 0x345},
    {0x1F9F, 0x1F2F, 0x345}, {0x1FA0, 0x1F60, 0x345}, {0x1FA1, 0x1F61, 0x345}, {0x1FA2, 0x1F62, 0x345},
    {0x1FA3, 0x1F63, 0x345}, {0x1FA4, 0x1F64, 0x345}, {0x1FA5, 0x1F65, 0x345}, {0x1FA6, 0x1F66, 0x345},
    {0x1FA7, 0x1F67, 0x345}, {0x1FA8, 0x1F68, 0x345}, {0x1FA9, 0x1F69, 0x345}, {0x1FAA, 0x1F6A, 0x345},
    {0x1FAB, 0x1F6B, 0x345}, {0x1FAC, 0x1F6C, 0x345}, {0x1FAD, 0x1F6D, 0x345}, {0x1FAE, 0x1F6E, 0x345},
    {0x1FAF, 0x1F6F, 0x345}, {0x1FB0, 0x3B1, 0x306}, {0x1FB1, 0x3B1, 0x304}, {0x1FB2, 0x1F70, 0x345},
    {0x1FB3, 0x3B1, 0x345}, {0x1FB4, 0x3AC, 0x345}, {0x1FB6, 0x3B1, 0x342}, {0x1FB7, 0x1FB6, 0x345},
    {0x1FB8, 0x391, 0x306}, {0x1FB9, 0x391, 0x304}, {0x1FBA, 0x391, 0x300}, {0x1FBB, 0x386, 0x0},
    {0x1FBC, 0x391, 0x345}, {0x1FBE, 0x3B9, 0x0}, {0x1FC1, 0xA8, 0x342}, {0x1FC2, 0x1F74, 0x345},
    {0x1FC3, 0x3B7, 0x345}, {0x1FC4, 0x3AE, 0x345}, {0x1FC6, 0x3B7, 0x342}, {0x1FC7, 0x1FC6, 0x345},
    {0x1FC8, 0x395, 0x300}, {0x1FC9, 0x388, 0x0}, {0x1FCA, 0x397, 0x300}, {0x1FCB, 0x389, 0x0},
    {0x1FCC, 0x397, 0x345}, {0x1FCD, 0x1FBF, 0x300}, {0x1FCE, 0x1FBF, 0x301}, {0x1FCF, 0x1FBF, 0x342},
    {0x1FD0, 0x3B9, 0x306}, {0x1FD1, 0x3B9, 0x304}, {0x1FD2, 0x3CA, 0x300}, {0x1FD3, 0x390, 0x0},
    {0x1FD6, 0x3B9, 0x342}, {0x1FD7, 0x3CA, 0x342}, {0x1FD8, 0x399, 0x306}, {0x1FD9, 0x399, 0x304},
    {0x1FDA, 0x399, 0x300}, {0x1FDB, 0x38A, 0x0}, {0x1FDD, 0x1FFE, 0x300}, {0x1FDE, 0x1FFE, 0x301},
    {0x1FDF, 0x1FFE, 0x342}, {0x1FE0, 0x3C5, 0x306}, {0x1FE1, 0x3C5, 0x304}, {0x1FE2, 0x3CB, 0x300},
    {0x1FE3, 0x3B0, 0x0}, {0x1FE4, 0x3C1, 0x313}, {0x1FE5, 0x3C1, 0x314}, {0x1FE6, 0x3C5, 0x342},
    {0x1FE7, 0x3CB, 0x342}, {0x1FE8, 0x3A5, 0x306}, {0x1FE9, 0x3A5, 0x304}, {0x1FEA, 0x3A5, 0x300},
    {0x1FEB, 0x38E, 0x0}, {0x1FEC, 0x3A1, 0x314}, {0x1FED, 0xA8, 0x300}, {0x1FEE, 0x385, 0x0},
    {0x1FEF, 0x60, 0x0}, {0x1FF2, 0x1F7C, 0x345}, {0x1FF3, 0x3C9, 0x345}, {0x1FF4, 0x3CE, 0x345},
    {0x1FF6, 0x3C9, 0x342}, {0x1FF7, 0x1FF6, 0x345}, {0x1FF8, 0x39F, 0x300}, {0x1FF9, 0x38C, 0x0},
    {0x1FFA, 0x3A9, 0x300}, {0x1FFB, 0x38F, 0x0}, {0x1FFC, 0x3A9, 0x345}, {0x1FFD, 0xB4, 0x0},
    {0x2000, 0x2002, 0x0}, {0x2001, 0x2003, 0x0}, {0x2126, 0x3A9, 0x0}, {0x212A, 0x4B, 0x0},
    {0x212B, 0xC5, 0x0}, {0x219A, 0x2190, 0x338}, {0x219B, 0x2192, 0x338}, {0x21AE, 0x2194, 0x338},
    {0x21CD, 0x21D0, 0x338}, {0x21CE, 0x21D4, 0x338}, {0x21CF, 0x21D2, 0x338}, {0x2204, 0x2203, 0x338},
    {0x2209, 0x2208, 0x338}, {0x220C, 0x220B, 0x338}, {0x2224, 0x2223, 0x338}, {0x2226, 0x2225, 0x338},
    {0x2241, 0x223C, 0x338}, {0x2244, 0x2243, 0x338}, {0x2247, 0x2245, 0x338}, {0x2249, 0x2248, 0x338},
    {0x2260, 0x3D, 0x338}, {0x2262, 0x2261, 0x338}, {0x226D, 0x224D, 0x338}, {0x226E, 0x3C, 0x338},
    {0x226F, 0x3E, 0x338}, {0x2270, 0x2264, 0x338}, {0x2271, 0x2265, 0x338}, {0x2274, 0x2272, 0x338},
    {0x2275, 0x2273, 0x338}, {0x2278, 0x2276, 0x338}, {0x2279, 0x2277, 0x338}, {0x2280, 0x227A, 0x338},
    {0x2281, 0x227B, 0x338}, {0x2284, 0x2282, 0x338}, {0x2285, 0x2283, 0x338}, {0x2288, 0x2286, 0x338},
    {0x2289, 0x2287, 0x338}, {0x22AC, 0x22A2, 0x338}, {0x22AD, 0x22A8, 0x338}, {0x22AE, 0x22A9, 0x338},
    {0x22AF, 0x22AB, 0x338}, {0x22E0, 0x227C, 0x338}, {0x22E1, 0x227D, 0x338}, {0x22E2, 0x2291, 0x338},
    {0x22E3, 0x2292, 0x338}, {0x22EA, 0x22B2, 0x338}, {0x22EB, 0x22B3, 0x338}, {0x22EC, 0x22B4, 0x338},
    {0x22ED, 0x22B5, 0x338}, {0x2329, 0x3008, 0x0}, {0x232A, 0x3009, 0x0}, {0x2ADC, 0x2ADD, 0x338},
    {0x304C, 0x304B, 0x3099}, {0x304E, 0x304D, 0x3099}, {0x3050, 0x304F, 0x3099},
    {0x3052, 0x3051, 0x3099}, {0x3054, 0x3053, 0x3099}, {0x3056, 0x3055, 0x3099},
    {0x3058, 0x3057, 0x3099}, {0x305A, 0x3059, 0x3099}, {0x305C, 0x305B, 0x3099},
    {0x305E, 0x305D, 0x3099}, {0x3060, 0x305F, 0x3099}, {0x3062, 0x3061, 0x3099},
    {0x3065, 0x3064, 0x3099}, {0x3067, 0x3066, 0x3099}, {0x3069, 0x3068, 0x3099},
    {0x3070, 0x306F, 0x3099}, {0x3071, 0x306F, 0x309A}, {0x3073, 0x3072, 0x3099},
    {0x3074, 0x3072, 0x309A}, {0x3076, 0x3075, 0x3099}, {0x3077, 0x3075, 0x309A},
    {0x3079, 0x3078, 0x3099}, {0x307A, 0x3078, 0x309A}, {0x307C, 0x307B, 0x3099},
    {0x307D, 0x307B, 0x309A}, {0x3094, 0x3046, 0x3099}, {0x309E, 0x309D, 0x3099},
    {0x30AC, 0x30AB, 0x3099}, {0x30AE, 0x30AD, 0x3099}, {0x30B0, 0x30AF, 0x3099},
    {0x30B2, 0x30B1, 0x3099}, {0x30B4, 0x30B3, 0x3099}, {0x30B6, 0x30B5, 0x3099},
    {0x30B8, 0x30B7, 0x3099}, {0x30BA, 0x30B9, 0x3099}, {0x30BC, 0x30BB, 0x3099},
    {0x30BE, 0x30BD, 0x3099}, {0x30C0, 0x30BF, 0x3099}, {0x30C2, 0x30C1, 0x3099},
    {0x30C5, 0x30C4, 0x3099}, {0x30C7, 0x30C6, 0x3099}, {0x30C9, 0x30C8, 0x3099},
    {0x30D0, 0x30CF, 0x3099}, {0x30D1, 0x30CF, 0x309A}, {0x30D3, 0x30D2, 0x3099},
    {0x30D4, 0x30D2, 0x309A}, {0x30D6, 0x30D5, 0x3099}, {0x30D7, 0x30D5, 0x309A},
    {0x30D9, 0x30D8, 0x3099}, {0x30DA, 0x30D8, 0x309A}, {0x30DC, 0x30DB, 0x3099},
    {0x30DD, 0x30DB, 0x309A}, {0x30F4, 0x30A6, 0x3099}, {0x30F7, 0x30EF, 0x3099},
    {0x30F8, 0x30F0, 0x3099}, {0x30F9, 0x30F1, 0x3099}, {0x30FA, 0x30F2, 0x3099},
    {0x30FE, 0x30FD, 0x3099}, {0xF900, 0x8C48, 0x0}, {0xF901, 0x66F4, 0x0}, {0xF902, 0x8ECA, 0x0},
    {0xF903, 0x8CC8, 0x0}, {0xF904, 0x6ED1, 0x0}, {0xF905, 0x4E32, 0x0}, {0xF906, 0x53E5, 0x0},
    {0xF907, 0x9F9C, 0x0}, {0xF908, 0x9F9C, 0x0}, {0xF909, 0x5951, 0x0}, {0xF90A, 0x91D1, 0x0},
    {0xF90B, 0x5587, 0x0}, {0xF90C, 0x5948, 0x0}, {0xF90D, 0x61F6, 0x0}, {0xF90E, 0x7669, 0x0},
    {0xF90F, 0x7F85, 0x0}, {0xF910, 0x863F, 0x0}, {0xF911, 0x87BA, 0x0}, {0xF912, 0x88F8, 0x0},
    {0xF913, 0x908F, 0x0}, {0xF914, 0x6A02, 0x0}, {0xF915, 0x6D1B, 0x0}, {0xF916, 0x70D9, 0x0},
    {0xF917, 0x73DE, 0x0}, {0xF918, 0x843D, 0x0}, {0xF919, 0x916A, 0x0}, {0xF91A, 0x99F1, 0x0},
    {0xF91B, 0x4E82, 0x0}, {0xF91C, 0x5375, 0x0}, {0xF91D, 0x6B04, 0x0}, {0xF91E, 0x721B, 0x0},
    {0xF91F, 0x862D, 0x0}, {0xF920, 0x9E1E, 0x0}, {0xF921, 0x5D50, 0x0}, {0xF922, 0x6FEB, 0x0},
    {0xF923, 0x85CD, 0x0}, {0xF924, 0x8964, 0x0}, {0xF925, 0x62C9, 0x0}, {0xF926, 0x81D8, 0x0},
    {0xF927, 0x881F, 0x0}, {0xF928, 0x5ECA, 0x0}, {0xF929, 0x6717, 0x0}, {0xF92A, 0x6D6A, 0x0},
    {0xF92B, 0x72FC, 0x0}, {0xF92C, 0x90CE, 0x0}, {0xF92D, 0x4F86, 0x0}, {0xF92E, 0x51B7, 0x0},
    {0xF92F, 0x52DE, 0x0}, {0xF930, 0x64C4, 0x0}, {0xF931, 0x6AD3, 0x0}, {0xF932, 0x7210, 0x0},
    {0xF933, 0x76E7, 0x0}, {0xF934, 0x8001, 0x0}, {0xF935, 0x8606, 0x0}, {0xF936, 0x865C, 0x0},
    {0xF937, 0x8DEF, 0x0}, {0xF938, 0x9732, 0x0}, {0xF939, 0x9B6F, 0x0}, {0xF93A, 0x9DFA, 0x0},
    {0xF93B, 0x788C, 0x0}, {0xF93C, 0x797F, 0x0}, {0xF93D, 0x7DA0, 0x0}, {0xF93E, 0x83C9, 0x0},
    {0xF93F, 0x9304, 0x0}, {0xF940, 0x9E7F, 0x0}, {0xF941, 0x8AD6, 0x0}, {0xF942, 0x58DF, 0x0},
    {0xF943, 0x5F04, 0x0}, {0xF944, 0x7C60, 0x0}, {0xF945, 0x807E, 0x0}, {0xF946, 0x7262, 0x0},
    {0xF947, 0x78CA, 0x0}, {0xF948, 0x8CC2, 0x0}, {0xF949, 0x96F7, 0x0}, {0xF94A, 0x58D8, 0x0},
    {0xF94B, 0x5C62, 0x0}, {0xF94C, 0x6A13, 0x0}, {0xF94D, 0x6DDA, 0x0}, {0xF94E, 0x6F0F, 0x0},
    {0xF94F, 0x7D2F, 0x0}, {0xF950, 0x7E37, 0x0}, {0xF951, 0x964B, 0x0}, {0xF952, 0x52D2, 0x0},
    {0xF953, 0x808B, 0x0}, {0xF954, 0x51DC, 0x0}, {0xF955, 0x51CC, 0x0}, {0xF956, 0x7A1C, 0x0},
    {0xF957, 0x7DBE, 0x0}, {0xF958, 0x83F1, 0x0}, {0xF959, 0x9675, 0x0}, {0xF95A, 0x8B80, 0x0},
    {0xF95B, 0x62CF, 0x0}, {0xF95C, 0x6A02, 0x0}, {0xF95D, 0x8AFE, 0x0}, {0xF95E, 0x4E39, 0x0},
    {0xF95F, 0x5BE7, 0x0}, {0xF960, 0x6012, 0x0}, {0xF961, 0x7387, 0x0}, {0xF962, 0x7570, 0x0},
    {0xF963, 0x5317, 0x0}, {0xF964, 0x78FB, 0x0}, {0xF965, 0x4FBF, 0x0}, {0xF966, 0x5FA9, 0x0},
    {0xF967, 0x4E0D, 0x0}, {0xF968, 0x6CCC, 0x0}, {0xF969, 0x6578, 0x0}, {0xF96A, 0x7D22, 0x0},
    {0xF96B, 0x53C3, 0x0}, {0xF96C, 0x585E, 0x0}, {0xF96D, 0x7701, 0x0}, {0xF96E, 0x8449, 0x0},
    {0xF96F, 0x8AAA, 0x0}, {0xF970, 0x6BBA, 0x0}, {0xF971, 0x8FB0, 0x0}, {0xF972, 0x6C88, 0x0},
    {0xF973, 0x62FE, 0x0}, {0xF974, 0x82E5, 0x0}, {0xF975, 0x63A0, 0x0}, {0xF976, 0x7565, 0x0},
    {0xF977, 0x4EAE, 0x0}, {0xF978, 0x5169, 0x0}, {0xF979, 0x51C9, 0x0}, {0xF97A, 0x6881, 0x0},
    {0xF97B, 0x7CE7, 0x0}, {0xF97C, 0x826F, 0x0}, {0xF97D, 0x8AD2, 0x0}, {0xF97E, 0x91CF, 0x0},
    {0xF97F, 0x52F5, 0x0}, {0xF980, 0x5442, 0x0}, {0xF981, 0x5973, 0x0}, {0xF982, 0x5EEC, 0x0},
    {0xF983, 0x65C5, 0x0}, {0xF984, 0x6FFE, 0x0}, {0xF985, 0x792A, 0x0}, {0xF986, 0x95AD, 0x0},
    {0xF987, 0x9A6A, 0x0}, {0xF988, 0x9E97, 0x0}, {0xF989, 0x9ECE, 0x0}, {0xF98A, 0x529B, 0x0},
    {0xF98B, 0x66C6, 0x0}, {0xF98C, 0x6B77, 0x0}, {0xF98D, 0x8F62, 0x0}, {0xF98E, 0x5E74, 0x0},
    {0xF98F, 0x6190, 0x0}, {0xF990, 0x6200, 0x0}, {0xF991, 0x649A, 0x0}, {0xF992, 0x6F23, 0x0},
    {0xF993, 0x7149, 0x0}, {0xF994, 0x7489, 0x0}, {0xF995, 0x79CA, 0x0}, {0xF996, 0x7DF4, 0x0},
    {0xF997, 0x806F, 0x0}, {0xF998, 0x8F26, 0x0}, {0xF999, 0x84EE, 0x0}, {0xF99A, 0x9023, 0x0},
    {0xF99B, 0x934A, 0x0}, {0xF99C, 0x5217, 0x0}, {0xF99D, 0x52A3, 0x0}, {0xF99E, 0x54BD, 0x0},
    {0xF99F, 0x70C8, 0x0}, {0xF9A0, 0x88C2, 0x0}, {0xF9A1, 0x8AAA, 0x0}, {0xF9A2, 0x5EC9, 0x0},
    {0xF9A3, 0x5FF5, 0x0}, {0xF9A4, 0x637B, 0x0}, {0xF9A5, 0x6BAE, 0x0}, {0xF9A6, 0x7C3E, 0x0},
    {0xF9A7, 0x7375, 0x0}, {0xF9A8, 0x4EE4, 0x0}, {0xF9A9, 0x56F9, 0x0}, {0xF9AA, 0x5BE7, 0x0},
    {0xF9AB, 0x5DBA, 0x0}, {0xF9AC, 0x601C, 0x0}, {0xF9AD, 0x73B2, 0x0}, {0xF9AE, 0x7469, 0x0},
    {0xF9AF, 0x7F9A, 0x0}, {0xF9B0, 0x8046, 0x0}, {0xF9B1, 0x9234, 0x0}, {0xF9B2, 0x96F6, 0x0},
    {0xF9B3, 0x9748, 0x0}, {0xF9B4, 0x9818, 0x0}, {0xF9B5, 0x4F8B, 0x0}, {0xF9B6, 0x79AE, 0x0},
    {0xF9B7, 0x91B4, 0x0}, {0xF9B8, 0x96B8, 0x0}, {0xF9B9, 0x60E1, 0x0}, {0xF9BA, 0x4E86, 0x0},
    {0xF9BB, 0x50DA, 0x0}, {0xF9BC, 0x5BEE, 0x0}, {0xF9BD, 0x5C3F, 0x0}, {0xF9BE, 0x6599, 0x0},
    {0xF9BF, 0x6A02, 0x0}, {0xF9C0, 0x71CE, 0x0}, {0xF9C1, 0x7642, 0x0}, {0xF9C2, 0x84FC, 0x0},
    {0xF9C3, 0x907C, 0x0}, {0xF9C4, 0x9F8D, 0x0}, {0xF9C5, 0x6688, 0x0}, {0xF9C6, 0x962E, 0x0},
    {0xF9C7, 0x5289, 0x0}, {0xF9C8, 0x677B, 0x0}, {0xF9C9, 0x67F3, 0x0}, {0xF9CA, 0x6D41, 0x0},
    {0xF9CB, 0x6E9C, 0x0}, {0xF9CC, 0x7409, 0x0}, {0xF9CD, 0x7559, 0x0}, {0xF9CE, 0x786B, 0x0},
    {0xF9CF, 0x7D10, 0x0}, {0xF9D0, 0x985E, 0x0}, {0xF9D1, 0x516D, 0x0}, {0xF9D2, 0x622E, 0x0},
    {0xF9D3, 0x9678, 0x0}, {0xF9D4, 0x502B, 0x0}, {0xF9D5, 0x5D19, 0x0}, {0xF9D6, 0x6DEA, 0x0},
    {0xF9D7, 0x8F2A, 0x0}, {0xF9D8, 0x5F8B, 0x0}, {0xF9D9, 0x6144, 0x0}, {0xF9DA, 0x6817, 0x0},
    {0xF9DB, 0x7387, 0x0}, {0xF9DC, 0x9686, 0x0}, {0xF9DD, 0x5229, 0x0}, {0xF9DE, 0x540F, 0x0},
    {0xF9DF, 0x5C65, 0x0}, {0xF9E0, 0x6613, 0x0}, {0xF9E1, 0x674E, 0x0}, {0xF9E2, 0x68A8, 0x0},
    {0xF9E3, 0x6CE5, 0x0}, {0xF9E4, 0x7406, 0x0}, {0xF9E5, 0x75E2, 0x0}, {0xF9E6, 0x7F79, 0x0},
    {0xF9E7, 0x88CF, 0x0}, {0xF9E8, 0x88E1, 0x0}, {0xF9E9, 0x91CC, 0x0}, {0xF9EA, 0x96E2, 0x0},
    {0xF9EB, 0x533F, 0x0}, {0xF9EC, 0x6EBA, 0x0}, {0xF9ED, 0x541D, 0x0}, {0xF9EE, 0x71D0, 0x0},
    {0xF9EF, 0x7498, 0x0}, {0xF9F0, 0x85FA, 0x0}, {0xF9F1, 0x96A3, 0x0}, {0xF9F2, 0x9C57, 0x0},
    {0xF9F3, 0x9E9F, 0x0}, {0xF9F4, 0x6797, 0x0}, {0xF9F5, 0x6DCB, 0x0}, {0xF9F6, 0x81E8, 0x0},
    {0xF9F7, 0x7ACB, 0x0}, {0xF9F8, 0x7B20, 0x0}, {0xF9F9, 0x7C92, 0x0}, {0xF9FA, 0x72C0, 0x0},
    {0xF9FB, 0x7099, 0x0}, {0xF9FC, 0x8B58, 0x0}, {0xF9FD, 0x4EC0, 0x0}, {0xF9FE, 0x8336, 0x0},
    {0xF9FF, 0x523A, 0x0}, {0xFA00, 0x5207, 0x0}, {0xFA01, 0x5EA6, 0x0}, {0xFA02, 0x62D3, 0x0},
    {0xFA03, 0x7CD6, 0x0}, {0xFA04, 0x5B85, 0x0}, {0xFA05, 0x6D1E, 0x0}, {0xFA06, 0x66B4, 0x0},
    {0xFA07, 0x8F3B, 0x0}, {0xFA08, 0x884C, 0x0}, {0xFA09, 0x964D, 0x0}, {0xFA0A, 0x898B, 0x0},
    {0xFA0B, 0x5ED3, 0x0}, {0xFA0C, 0x5140, 0x0}, {0xFA0D, 0x55C0, 0x0}, {0xFA10, 0x585A, 0x0},
    {0xFA12, 0x6674, 0x0}, {0xFA15, 0x51DE, 0x0}, {0xFA16, 0x732A, 0x0}, {0xFA17, 0x76CA, 0x0},
    {0xFA18, 0x793C, 0x0}, {0xFA19, 0x795E, 0x0}, {0xFA1A, 0x7965, 0x0}, {0xFA1B, 0x798F, 0x0},
    {0xFA1C, 0x9756, 0x0}, {0xFA1D, 0x7CBE, 0x0}, {0xFA1E, 0x7FBD, 0x0}, {0xFA20, 0x8612, 0x0},
    {0xFA22, 0x8AF8, 0x0}, {0xFA25, 0x9038, 0x0}, {0xFA26, 0x90FD, 0x0}, {0xFA2A, 0x98EF, 0x0},
    {0xFA2B, 0x98FC, 0x0}, {0xFA2C, 0x9928, 0x0}, {0xFA2D, 0x9DB4, 0x0}, {0xFA2E, 0x90DE, 0x0},
    {0xFA2F, 0x96B7, 0x0}, {0xFA30, 0x4FAE, 0x0}, {0xFA31, 0x50E7, 0x0}, {0xFA32, 0x514D, 0x0},
    {0xFA33, 0x52C9, 0x0}, {0xFA34, 0x52E4, 0x0}, {0xFA35, 0x5351, 0x0}, {0xFA36, 0x559D, 0x0},
    {0xFA37, 0x5606, 0x0}, {0xFA38, 0x5668, 0x0}, {0xFA39, 0x5840, 0x0}, {0xFA3A, 0x58A8, 0x0},
    {0xFA3B, 0x5C64, 0x0}, {0xFA3C, 0x5C6E, 0x0}, {0xFA3D, 0x6094, 0x0}, {0xFA3E, 0x6168, 0x0},
    {0xFA3F, 0x618E, 0x0}, {0xFA40, 0x61F2, 0x0}, {0xFA41, 0x654F, 0x0}, {0xFA42, 0x65E2, 0x0},
    {0xFA43, 0x6691, 0x0}, {0xFA44, 0x6885, 0x0}, {0xFA45, 0x6D77, 0x0}, {0xFA46, 0x6E1A, 0x0},
    {0xFA47, 0x6F22, 0x0}, {0xFA48, 0x716E, 0x0}, {0xFA49, 0x722B, 0x0}, {0xFA4A, 0x7422, 0x0},
    {0xFA4B, 0x7891, 0x0}, {0xFA4C, 0x793E, 0x0}, {0xFA4D, 0x7949, 0x0}, {0xFA4E, 0x7948, 0x0},
    {0xFA4F, 0x7950, 0x0}, {0xFA50, 0x7956, 0x0}, {0xFA51, 0x795D, 0x0}, {0xFA52, 0x798D, 0x0},
    {0xFA53, 0x798E, 0x0}, {0xFA54, 0x7A40, 0x0}, {0xFA55, 0x7A81, 0x0}, {0xFA56, 0x7BC0, 0x0},
    {0xFA57, 0x7DF4, 0x0}, {0xFA58, 0x7E09, 0x0}, {0xFA59, 0x7E41, 0x0}, {0xFA5A, 0x7F72, 0x0},
    {0xFA5B, 0x8005, 0x0}, {0xFA5C, 0x81ED, 0x0}, {0xFA5D, 0x8279, 0x0}, {0xFA5E, 0x8279, 0x0},
    {0xFA5F, 0x8457, 0x0}, {0xFA60, 0x8910, 0x0}, {0xFA61, 0x8996, 0x0}, {0xFA62, 0x8B01, 0x0},
    {0xFA63, 0x8B39, 0x0}, {0xFA64, 0x8CD3, 0x0}, {0xFA65, 0x8D08, 0x0}, {0xFA66, 0x8FB6, 0x0},
    {0xFA67, 0x9038, 0x0}, {0xFA68, 0x96E3, 0x0}, {0xFA69, 0x97FF, 0x0}, {0xFA6A, 0x983B, 0x0},
    {0xFA6B, 0x6075, 0x0}, {0xFA6C, 0x242EE, 0x0}, {0xFA6D, 0x8218, 0x0}, {0xFA70, 0x4E26, 0x0},
    {0xFA71, 0x51B5, 0x0}, {0xFA72, 0x5168, 0x0}, {0xFA73, 0x4F80, 0x0}, {0xFA74, 0x5145, 0x0},
    {0xFA75, 0x5180, 0x0}, {0xFA76, 0x52C7, 0x0}, {0xFA77, 0x52FA, 0x0}, {0xFA78, 0x559D, 0x0},
    {0xFA79, 0x5555, 0x0}, {0xFA7A, 0x5599, 0x0}, {0xFA7B, 0x55E2, 0x0}, {0xFA7C, 0x585A, 0x0},
    {0xFA7D, 0x58B3, 0x0}, {0xFA7E, 0x5944, 0x0}, {0xFA7F, 0x5954, 0x0}, {0xFA80, 0x5A62, 0x0},
    {0xFA81, 0x5B28, 0x0}, {0xFA82, 0x5ED2, 0x0}, {0xFA83, 0x5ED9, 0x0}, {0xFA84, 0x5F69, 0x0},
    {0xFA85, 0x5FAD, 0x0}, {0xFA86, 0x60D8, 0x0}, {0xFA87, 0x614E, 0x0}, {0xFA88, 0x6108, 0x0},
    {0xFA89, 0x618E, 0x0}, {0xFA8A, 0x6160, 0x0}, {0xFA8B, 0x61F2, 0x0}, {0xFA8C, 0x6234, 0x0},
    {0xFA8D, 0x63C4, 0x0}, {0xFA8E, 0x641C, 0x0}, {0xFA8F, 0x6452, 0x0}, {0xFA90, 0x6556, 0x0},
    {0xFA91, 0x6674, 0x0}, {0xFA92, 0x6717, 0x0}, {0xFA93, 0x671B, 0x0}, {0xFA94, 0x6756, 0x0},
    {0xFA95, 0x6B79, 0x0}, {0xFA96, 0x6BBA, 0x0}, {0xFA97, 0x6D41, 0x0}, {0xFA98, 0x6EDB, 0x0},
    {0xFA99, 0x6ECB, 0x0}, {0xFA9A, 0x6F22, 0x0}, {0xFA9B, 0x701E, 0x0}, {0xFA9C, 0x716E, 0x0},
    {0xFA9D, 0x77A7, 0x0}, {0xFA9E, 0x7235, 0x0}, {0xFA9F, 0x72AF, 0x0}, {0xFAA0, 0x732A, 0x0},
    {0xFAA1, 0x7471, 0x0}, {0xFAA2, 0x7506, 0x0}, {0xFAA3, 0x753B, 0x0}, {0xFAA4, 0x761D, 0x0},
    {0xFAA5, 0x761F, 0x0}, {0xFAA6, 0x76CA, 0x0}, {0xFAA7, 0x76DB, 0x0}, {0xFAA8, 0x76F4, 0x0},
    {0xFAA9, 0x774A, 0x0}, {0xFAAA, 0x7740, 0x0}, {0xFAAB, 0x78CC, 0x0}, {0xFAAC, 0x7AB1, 0x0},
    {0xFAAD, 0x7BC0, 0x0}, {0xFAAE, 0x7C7B, 0x0}, {0xFAAF, 0x7D5B, 0x0}, {0xFAB0, 0x7DF4, 0x0},
    {0xFAB1, 0x7F3E, 0x0}, {0xFAB2, 0x8005, 0x0}, {0xFAB3, 0x8352, 0x0}, {0xFAB4, 0x83EF, 0x0},
    {0xFAB5, 0x8779, 0x0}, {0xFAB6, 0x8941, 0x0}, {0xFAB7, 0x8986, 0x0}, {0xFAB8, 0x8996, 0x0},
    {0xFAB9, 0x8ABF, 0x0}, {0xFABA, 0x8AF8, 0x0}, {0xFABB, 0x8ACB, 0x0}, {0xFABC, 0x8B01, 0x0},
    {0xFABD, 0x8AFE, 0x0}, {0xFABE, 0x8AED, 0x0}, {0xFABF, 0x8B39, 0x0}, {0xFAC0, 0x8B8A, 0x0},
    {0xFAC1, 0x8D08, 0x0}, {0xFAC2, 0x8F38, 0x0}, {0xFAC3, 0x9072, 0x0}, {0xFAC4, 0x9199, 0x0},
    {0xFAC5, 0x9276, 0x0}, {0xFAC6, 0x967C, 0x0}, {0xFAC7, 0x96E3, 0x0}, {0xFAC8, 0x9756, 0x0},
    {0xFAC9, 0x97DB, 0x0}, {0xFACA, 0x97FF, 0x0}, {0xFACB, 0x980B, 0x0}, {0xFACC, 0x983B, 0x0},
    {0xFACD, 0x9B12, 0x0}, {0xFACE, 0x9F9C, 0x0}, {0xFACF, 0x2284A, 0x0}, {0xFAD0, 0x22844, 0x0},
    {0xFAD1, 0x233D5, 0x0}, {0xFAD2, 0x3B9D, 0x0}, {0xFAD3, 0x4018, 0x0}, {0xFAD4, 0x4039, 0x0},
    {0xFAD5, 0x25249, 0x0}, {0xFAD6, 0x25CD0, 0x0}, {0xFAD7, 0x27ED3, 0x0}, {0xFAD8, 0x9F43, 0x0},
    {0xFAD9, 0x9F8E, 0x0}, {0xFB1D, 0x5D9, 0x5B4}, {0xFB1F, 0x5F2, 0x5B7}, {0xFB2A, 0x5E9, 0x5C1},
    {0xFB2B, 0x5E9, 0x5C2}, {0xFB2C, 0xFB49, 0x5C1}, {0xFB2D, 0xFB49, 0x5C2}, {0xFB2E, 0x5D0, 0x5B7},
    {0xFB2F, 0x5D0, 0x5B8}, {0xFB30, 0x5D0, 0x5BC}, {0xFB31, 0x5D1, 0x5BC}, {0xFB32, 0x5D2, 0x5BC},
    {0xFB33, 0x5D3, 0x5BC}, {0xFB34, 0x5D4, 0x5BC}, {0xFB35, 0x5D5, 0x5BC}, {0xFB36, 0x5D6, 0x5BC},
    {0xFB38, 0x5D8, 0x5BC}, {0xFB39, 0x5D9, 0x5BC}, {0xFB3A, 0x5DA, 0x5BC}, {0xFB3B, 0x5DB, 0x5BC},
    {0xFB3C, 0x5DC, 0x5BC}, {0xFB3E, 0x5DE, 0x5BC}, {0xFB40, 0x5E0, 0x5BC}, {0xFB41, 0x5E1, 0x5BC},
    {0xFB43, 0x5E3, 0x5BC}, {0xFB44, 0x5E4, 0x5BC}, {0xFB46, 0x5E6, 0x5BC}, {0xFB47, 0x5E7, 0x5BC},
    {0xFB48, 0x5E8, 0x5BC}, {0xFB49, 0x5E9, 0x5BC}, {0xFB4A, 0x5EA, 0x5BC}, {0xFB4B, 0x5D5, 0x5B9},
    {0xFB4C, 0x5D1, 0x5BF}, {0xFB4D, 0x5DB, 0x5BF}, {0xFB4E, 0x5E4, 0x5BF}, {0x1109A, 0x11099, 0x110BA},
    {0x1109C, 0x1109B, 0x110BA}, {0x110AB, 0x110A5, 0x110BA}, {0x1112E, 0x11131, 0x11127},
    {0x1112F, 0x11132, 0x11127}, {0x1134B, 0x11347, 0x1133E}, {0x1134C, 0x11347, 0x11357},
    {0x114BB, 0x114B9, 0x114BA}, {0x114BC, 0x114B9, 0x114B0}, {0x114BE, 0x114B9, 0x114BD},
    {0x115BA, 0x115B8, 0x115AF}, {0x115BB, 0x115B9, 0x115AF}, {0x1D15E, 0x1D157, 0x1D165},
    {0x1D15F, 0x1D158, 0x1D165}, {0x1D160, 0x1D15F, 0x1D16E}, {0x1D161, 0x1D15F, 0x1D16F},
    {0x1D162, 0x1D15F, 0x1D170}, {0x1D163, 0x1D15F, 0x1D171}, {0x1D164, 0x1D15F, 0x1D172},
    {0x1D1BB, 0x1D1B9, 0x1D165}, {0x1D1BC, 0x1D1BA, 0x1D165}, {0x1D1BD, 0x1D1BB, 0x1D16E},
    {0x1D1BE, 0x1D1BC, 0x1D16E}, {0x1D1BF, 0x1D1BB, 0x1D16F}, {0x1D1C0, 0x1D1BC, 0x1D16F},
    {0x2F800, 0x4E3D, 0x0}, {0x2F801, 0x4E38, 0x0}, {0x2F802, 0x4E41, 0x0}, {0x2F803, 0x20122, 0x0},
    {0x2F804, 0x4F60, 0x0}, {0x2F805, 0x4FAE, 0x0}, {0x2F806, 0x4FBB, 0x0}, {0x2F807, 0x5002, 0x0},
    {0x2F808, 0x507A, 0x0}, {0x2F809, 0x5099, 0x0}, {0x2F80A, 0x50E7, 0x0}, {0x2F80B, 0x50CF, 0x0},
    {0x2F80C, 0x349E, 0x0}, {0x2F80D, 0x2063A, 0x0}, {0x2F80E, 0x514D, 0x0}, {0x2F80F, 0x5154, 0x0},
    {0x2F810, 0x5164, 0x0}, {0x2F811, 0x5177, 0x0}, {0x2F812, 0x2051C, 0x0}, {0x2F813, 0x34B9, 0x0},
    {0x2F814, 0x5167, 0x0}, {0x2F815, 0x518D, 0x0}, {0x2F816, 0x2054B, 0x0}, {0x2F817, 0x5197, 0x0},
    {0x2F818, 0x51A4, 0x0}, {0x2F819, 0x4ECC, 0x0}, {0x2F81A, 0x51AC, 0x0}, {0x2F81B, 0x51B5, 0x0},
    {0x2F81C, 0x291DF, 0x0}, {0x2F81D, 0x51F5, 0x0}, {0x2F81E, 0x5203, 0x0}, {0x2F81F, 0x34DF, 0x0},
    {0x2F820, 0x523B, 0x0}, {0x2F821, 0x5246, 0x0}, {0x2F822, 0x5272, 0x0}, {0x2F823, 0x5277, 0x0},
    {0x2F824, 0x3515, 0x0}, {0x2F825, 0x52C7, 0x0}, {0x2F826, 0x52C9, 0x0}, {0x2F827, 0x52E4, 0x0},
    {0x2F828, 0x52FA, 0x0}, {0x2F829, 0x5305, 0x0}, {0x2F82A, 0x5306, 0x0}, {0x2F82B, 0x5317, 0x0},
    {0x2F82C, 0x5349, 0x0}, {0x2F82D, 0x5351, 0x0}, {0x2F82E, 0x535A, 0x0}, {0x2F82F, 0x5373, 0x0},
    {0x2F830, 0x537D, 0x0}, {0x2F831, 0x537F, 0x0}, {0x2F832, 0x537F, 0x0}, {0x2F833, 0x537F, 0x0},
    {0x2F834, 0x20A2C, 0x0}, {0x2F835, 0x7070, 0x0}, {0x2F836, 0x53CA, 0x0}, {0x2F837, 0x53DF, 0x0},
    {0x2F838, 0x20B63, 0x0}, {0x2F839, 0x53EB, 0x0}, {0x2F83A, 0x53F1, 0x0}, {0x2F83B, 0x5406, 0x0},
    {0x2F83C, 0x549E, 0x0}, {0x2F83D, 0x5438, 0x0}, {0x2F83E, 0x5448, 0x0}, {0x2F83F, 0x5468, 0x0},
    {0x2F840, 0x54A2, 0x0}, {0x2F841, 0x54F6, 0x0}, {0x2F842, 0x5510, 0x0}, {0x2F843, 0x5553, 0x0},
    {0x2F844, 0x5563, 0x0}, {0x2F845, 0x5584, 0x0}, {0x2F846, 0x5584, 0x0}, {0x2F847, 0x5599, 0x0},
    {0x2F848, 0x55AB, 0x0}, {0x2F849, 0x55B3, 0x0}, {0x2F84A, 0x55C2, 0x0}, {0x2F84B, 0x5716, 0x0},
    {0x2F84C, 0x5606, 0x0}, {0x2F84D, 0x5717, 0x0}, {0x2F84E, 0x5651, 0x0}, {0x2F84F, 0x5674, 0x0},
    {0x2F850, 0x5207, 0x0}, {0x2F851, 0x58EE, 0x0}, {0x2F852, 0x57CE, 0x0}, {0x2F853, 0x57F4, 0x0},
    {0x2F854, 0x580D, 0x0}, {0x2F855, 0x578B, 0x0}, {0x2F856, 0x5832, 0x0}, {0x2F857, 0x5831, 0x0},
    {0x2F858, 0x58AC, 0x0}, {0x2F859, 0x214E4, 0x0}, {0x2F85A, 0x58F2, 0x0}, {0x2F85B, 0x58F7, 0x0},
    {0x2F85C, 0x5906, 0x0}, {0x2F85D, 0x591A, 0x0}, {0x2F85E, 0x5922, 0x0}, {0x2F85F, 0x5962, 0x0},
    {0x2F860, 0x216A8, 0x0}, {0x2F861, 0x216EA, 0x0}, {0x2F862, 0x59EC, 0x0}, {0x2F863, 0x5A1B, 0x0},
    {0x2F864, 0x5A27, 0x0}, {0x2F865, 0x59D8, 0x0}, {0x2F866, 0x5A66, 0x0}, {0x2F867, 0x36EE, 0x0},
    {0x2F868, 0x36FC, 0x0}, {0x2F869, 0x5B08, 0x0}, {0x2F86A, 0x5B3E, 0x0}, {0x2F86B, 0x5B3E, 0x0},
    {0x2F86C, 0x219C8, 0x0}, {0x2F86D, 0x5BC3, 0x0}, {0x2F86E, 0x5BD8, 0x0}, {0x2F86F, 0x5BE7, 0x0},
    {0x2F870, 0x5BF3, 0x0}, {0x2F871, 0x21B18, 0x0}, {0x2F872, 0x5BFF, 0x0}, {0x2F873, 0x5C06, 0x0},
    {0x2F874, 0x5F53, 0x0}, {0x2F875, 0x5C22, 0x0}, {0x2F876, 0x3781, 0x0}, {0x2F877, 0x5C60, 0x0},
    {0x2F878, 0x5C6E, 0x0}, {0x2F879, 0x5CC0, 0x0}, {0x2F87A, 0x5C8D, 0x0}, {0x2F87B, 0x21DE4, 0x0},
    {0x2F87C, 0x5D43, 0x0}, {0x2F87D, 0x21DE6, 0x0}, {0x2F87E, 0x5D6E, 0x0}, {0x2F87F, 0x5D6B, 0x0},
    {0x2F880, 0x5D7C, 0x0}, {0x2F881, 0x5DE1, 0x0}, {0x2F882, 0x5DE2, 0x0}, {0x2F883, 0x382F, 0x0},
    {0x2F884, 0x5DFD, 0x0}, {0x2F885, 0x5E28, 0x0}, {0x2F886, 0x5E3D, 0x0}, {0x2F887, 0x5E69, 0x0},
    {0x2F888, 0x3862, 0x0}, {0x2F889, 0x22183, 0x0}, {0x2F88A, 0x387C, 0x0}, {0x2F88B, 0x5EB0, 0x0},
    {0x2F88C, 0x5EB3, 0x0}, {0x2F88D, 0x5EB6, 0x0}, {0x2F88E, 0x5ECA, 0x0}, {0x2F88F, 0x2A392, 0x0},
    {0x2F890, 0x5EFE, 0x0}, {0x2F891, 0x22331, 0x0}, {0x2F892, 0x22331, 0x0}, {0x2F893, 0x8201, 0x0},
    {0x2F894, 0x5F22, 0x0}, {0x2F895, 0x5F22, 0x0}, {0x2F896, 0x38C7, 0x0}, {0x2F897, 0x232B8, 0x0},
    {0x2F898, 0x261DA, 0x0}, {0x2F899, 0x5F62, 0x0}, {0x2F89A, 0x5F6B, 0x0}, {0x2F89B, 0x38E3, 0x0},
    {0x2F89C, 0x5F9A, 0x0}, {0x2F89D, 0x5FCD, 0x0}, {0x2F89E, 0x5FD7, 0x0}, {0x2F89F, 0x5FF9, 0x0},
    {0x2F8A0, 0x6081, 0x0}, {0x2F8A1, 0x393A, 0x0}, {0x2F8A2, 0x391C, 0x0}, {0x2F8A3, 0x6094, 0x0},
    {0x2F8A4, 0x226D4, 0x0}, {0x2F8A5, 0x60C7, 0x0}, {0x2F8A6, 0x6148, 0x0}, {0x2F8A7, 0x614C, 0x0},
    {0x2F8A8, 0x614E, 0x0}, {0x2F8A9, 0x614C, 0x0}, {0x2F8AA, 0x617A, 0x0}, {0x2F8AB, 0x618E, 0x0},
    {0x2F8AC, 0x61B2, 0x0}, {0x2F8AD, 0x61A4, 0x0}, {0x2F8AE, 0x61AF, 0x0}, {0x2F8AF, 0x61DE, 0x0},
    {0x2F8B0, 0x61F2, 0x0}, {0x2F8B1, 0x61F6, 0x0}, {0x2F8B2, 0x6210, 0x0}, {0x2F8B3, 0x621B, 0x0},
    {0x2F8B4, 0x625D, 0x0}, {0x2F8B5, 0x62B1, 0x0}, {0x2F8B6, 0x62D4, 0x0}, {0x2F8B7, 0x6350, 0x0},
    {0x2F8B8, 0x22B0C, 0x0}, {0x2F8B9, 0x633D, 0x0}, {0x2F8BA, 0x62FC, 0x0}, {0x2F8BB, 0x6368, 0x0},
    {0x2F8BC, 0x6383, 0x0}, {0x2F8BD, 0x63E4, 0x0}, {0x2F8BE, 0x22BF1, 0x0}, {0x2F8BF, 0x6422, 0x0},
    {0x2F8C0, 0x63C5, 0x0}, {0x2F8C1, 0x63A9, 0x0}, {0x2F8C2, 0x3A2E, 0x0}, {0x2F8C3, 0x6469, 0x0},
    {0x2F8C4, 0x647E, 0x0}, {0x2F8C5, 0x649D, 0x0}, {0x2F8C6, 0x6477, 0x0}, {0x2F8C7, 0x3A6C, 0x0},
    {0x2F8C8, 0x654F, 0x0}, {0x2F8C9, 0x656C, 0x0}, {0x2F8CA, 0x2300A, 0x0}, {0x2F8CB, 0x65E3, 0x0},
    {0x2F8CC, 0x66F8, 0x0}, {0x2F8CD, 0x6649, 0x0}, {0x2F8CE, 0x3B19, 0x0}, {0x2F8CF, 0x6691, 0x0},
    {0x2F8D0, 0x3B08, 0x0}, {0x2F8D1, 0x3AE4, 0x0}, {0x2F8D2, 0x5192, 0x0}, {0x2F8D3, 0x5195, 0x0},
    {0x2F8D4, 0x6700, 0x0}, {0x2F8D5, 0x669C, 0x0}, {0x2F8D6, 0x80AD, 0x0}, {0x2F8D7, 0x43D9, 0x0},
    {0x2F8D8, 0x6717, 0x0}, {0x2F8D9, 0x671B, 0x0}, {0x2F8DA, 0x6721, 0x0}, {0x2F8DB, 0x675E, 0x0},
    {0x2F8DC, 0x6753, 0x0}, {0x2F8DD, 0x233C3, 0x0}, {0x2F8DE, 0x3B49, 0x0}, {0x2F8DF, 0x67FA, 0x0},
    {0x2F8E0, 0x6785, 0x0}, {0x2F8E1, 0x6852, 0x0}, {0x2F8E2, 0x6885, 0x0}, {0x2F8E3, 0x2346D, 0x0},
    {0x2F8E4, 0x688E, 0x0}, {0x2F8E5, 0x681F, 0x0}, {0x2F8E6, 0x6914, 0x0}, {0x2F8E7, 0x3B9D, 0x0},
    {0x2F8E8, 0x6942, 0x0}, {0x2F8E9, 0x69A3, 0x0}, {0x2F8EA, 0x69EA, 0x0}, {0x2F8EB, 0x6AA8, 0x0},
    {0x2F8EC, 0x236A3, 0x0}, {0x2F8ED, 0x6ADB, 0x0}, {0x2F8EE, 0x3C18, 0x0}, {0x2F8EF, 0x6B21, 0x0},
    {0x2F8F0, 0x238A7, 0x0}, {0x2F8F1, 0x6B54, 0x0}, {0x2F8F2, 0x3C4E, 0x0}, {0x2F8F3, 0x6B72, 0x0},
    {0x2F8F4, 0x6B9F, 0x0}, {0x2F8F5, 0x6BBA, 0x0}, {0x2F8F6, 0x6BBB, 0x0}, {0x2F8F7, 0x23A8D, 0x0},
    {0x2F8F8, 0x21D0B, 0x0}, {0x2F8F9, 0x23AFA, 0x0}, {0x2F8FA, 0x6C4E, 0x0}, {0x2F8FB, 0x23CBC, 0x0},
    {0x2F8FC, 0x6CBF, 0x0}, {0x2F8FD, 0x6CCD, 0x0}, {0x2F8FE, 0x6C67, 0x0}, {0x2F8FF, 0x6D16, 0x0},
    {0x2F900, 0x6D3E, 0x0}, {0x2F901, 0x6D77, 0x0}, {0x2F902, 0x6D41, 0x0}, {0x2F903, 0x6D69, 0x0},
    {0x2F904, 0x6D78, 0x0}, {0x2F905, 0x6D85, 0x0}, {0x2F906, 0x23D1E, 0x0}, {0x2F907, 0x6D34, 0x0},
    {0x2F908, 0x6E2F, 0x0}, {0x2F909, 0x6E6E, 0x0}, {0x2F90A, 0x3D33, 0x0}, {0x2F90B, 0x6ECB, 0x0},
    {0x2F90C, 0x6EC7, 0x0}, {0x2F90D, 0x23ED1, 0x0}, {0x2F90E, 0x6DF9, 0x0}, {0x2F90F, 0x6F6E, 0x0},
    {0x2F910, 0x23F5E, 0x0}, {0x2F911, 0x23F8E, 0x0}, {0x2F912, 0x6FC6, 0x0}, {0x2F913, 0x7039, 0x0},
    {0x2F914, 0x701E, 0x0}, {0x2F915, 0x701B, 0x0}, {0x2F916, 0x3D96, 0x0}, {0x2F917, 0x704A, 0x0},
    {0x2F918, 0x707D, 0x0}, {0x2F919, 0x7077, 0x0}, {0x2F91A, 0x70AD, 0x0}, {0x2F91B, 0x20525, 0x0},
    {0x2F91C, 0x7145, 0x0}, {0x2F91D, 0x24263, 0x0}, {0x2F91E, 0x719C, 0x0}, {0x2F91F, 0x243AB, 0x0},
    {0x2F920, 0x7228, 0x0}, {0x2F921, 0x7235, 0x0}, {0x2F922, 0x7250, 0x0}, {0x2F923, 0x24608, 0x0},
    {0x2F924, 0x7280, 0x0}, {0x2F925, 0x7295, 0x0}, {0x2F926, 0x24735, 0x0}, {0x2F927, 0x24814, 0x0},
    {0x2F928, 0x737A, 0x0}, {0x2F929, 0x738B, 0x0}, {0x2F92A, 0x3EAC, 0x0}, {0x2F92B, 0x73A5, 0x0},
    {0x2F92C, 0x3EB8, 0x0}, {0x2F92D, 0x3EB8, 0x0}, {0x2F92E, 0x7447, 0x0}, {0x2F92F, 0x745C, 0x0},
    {0x2F930, 0x7471, 0x0}, {0x2F931, 0x7485, 0x0}, {0x2F932, 0x74CA, 0x0}, {0x2F933, 0x3F1B, 0x0},
    {0x2F934, 0x7524, 0x0}, {0x2F935, 0x24C36, 0x0}, {0x2F936, 0x753E, 0x0}, {0x2F937, 0x24C92, 0x0},
    {0x2F938, 0x7570, 0x0}, {0x2F939, 0x2219F, 0x0}, {0x2F93A, 0x7610, 0x0}, {0x2F93B, 0x24FA1, 0x0},
    {0x2F93C, 0x24FB8, 0x0}, {0x2F93D, 0x25044, 0x0}, {0x2F93E, 0x3FFC, 0x0}, {0x2F93F, 0x4008, 0x0},
    {0x2F940, 0x76F4, 0x0}, {0x2F941, 0x250F3, 0x0}, {0x2F942, 0x250F2, 0x0}, {0x2F943, 0x25119, 0x0},
    {0x2F944, 0x25133, 0x0}, {0x2F945, 0x771E, 0x0}, {0x2F946, 0x771F, 0x0}, {0x2F947, 0x771F, 0x0},
    {0x2F948, 0x774A, 0x0}, {0x2F949, 0x4039, 0x0}, {0x2F94A, 0x778B, 0x0}, {0x2F94B, 0x4046, 0x0},
    {0x2F94C, 0x4096, 0x0}, {0x2F94D, 0x2541D, 0x0}, {0x2F94E, 0x784E, 0x0}, {0x2F94F, 0x788C, 0x0},
    {0x2F950, 0x78CC, 0x0}, {0x2F951, 0x40E3, 0x0}, {0x2F952, 0x25626, 0x0}, {0x2F953, 0x7956, 0x0},
    {0x2F954, 0x2569A, 0x0}, {0x2F955, 0x256C5, 0x0}, {0x2F956, 0x798F, 0x0}, {0x2F957, 0x79EB, 0x0},
    {0x2F958, 0x412F, 0x0}, {0x2F959, 0x7A40, 0x0}, {0x2F95A, 0x7A4A, 0x0}, {0x2F95B, 0x7A4F, 0x0},
    {0x2F95C, 0x2597C, 0x0}, {0x2F95D, 0x25AA7, 0x0}, {0x2F95E, 0x25AA7, 0x0}, {0x2F95F, 0x7AEE, 0x0},
    {0x2F960, 0x4202, 0x0}, {0x2F961, 0x25BAB, 0x0}, {0x2F962, 0x7BC6, 0x0}, {0x2F963, 0x7BC9, 0x0},
    {0x2F964, 0x4227, 0x0}, {0x2F965, 0x25C80, 0x0}, {0x2F966, 0x7CD2, 0x0}, {0x2F967, 0x42A0, 0x0},
    {0x2F968, 0x7CE8, 0x0}, {0x2F969, 0x7CE3, 0x0}, {0x2F96A, 0x7D00, 0x0}, {0x2F96B, 0x25F86, 0x0},
    {0x2F96C, 0x7D63, 0x0}, {0x2F96D, 0x4301, 0x0}, {0x2F96E, 0x7DC7, 0x0}, {0x2F96F, 0x7E02, 0x0},
    {0x2F970, 0x7E45, 0x0}, {0x2F971, 0x4334, 0x0}, {0x2F972, 0x26228, 0x0}, {0x2F973, 0x26247, 0x0},
    {0x2F974, 0x4359, 0x0}, {0x2F975, 0x262D9, 0x0}, {0x2F976, 0x7F7A, 0x0}, {0x2F977, 0x2633E, 0x0},
    {0x2F978, 0x7F95, 0x0}, {0x2F979, 0x7FFA, 0x0}, {0x2F97A, 0x8005, 0x0}, {0x2F97B, 0x264DA, 0x0},
    {0x2F97C, 0x26523, 0x0}, {0x2F97D, 0x8060, 0x0}, {0x2F97E, 0x265A8, 0x0}, {0x2F97F, 0x8070, 0x0},
    {0x2F980, 0x2335F, 0x0}, {0x2F981, 0x43D5, 0x0}, {0x2F982, 0x80B2, 0x0}, {0x2F983, 0x8103, 0x0},
    {0x2F984, 0x440B, 0x0}, {0x2F985, 0x813E, 0x0}, {0x2F986, 0x5AB5, 0x0}, {0x2F987, 0x267A7, 0x0},
    {0x2F988, 0x267B5, 0x0}, {0x2F989, 0x23393, 0x0}, {0x2F98A, 0x2339C, 0x0}, {0x2F98B, 0x8201, 0x0},
    {0x2F98C, 0x8204, 0x0}, {0x2F98D, 0x8F9E, 0x0}, {0x2F98E, 0x446B, 0x0}, {0x2F98F, 0x8291, 0x0},
    {0x2F990, 0x828B, 0x0}, {0x2F991, 0x829D, 0x0}, {0x2F992, 0x52B3, 0x0}, {0x2F993, 0x82B1, 0x0},
    {0x2F994, 0x82B3, 0x0}, {0x2F995, 0x82BD, 0x0}, {0x2F996, 0x82E6, 0x0}, {0x2F997, 0x26B3C, 0x0},
    {0x2F998, 0x82E5, 0x0}, {0x2F999, 0x831D, 0x0}, {0x2F99A, 0x8363, 0x0}, {0x2F99B, 0x83AD, 0x0},
    {0x2F99C, 0x8323, 0x0}, {0x2F99D, 0x83BD, 0x0}, {0x2F99E, 0x83E7, 0x0}, {0x2F99F, 0x8457, 0x0},
    {0x2F9A0, 0x8353, 0x0}, {0x2F9A1, 0x83CA, 0x0}, {0x2F9A2, 0x83CC, 0x0}, {0x2F9A3, 0x83DC, 0x0},
    {0x2F9A4, 0x26C36, 0x0}, {0x2F9A5, 0x26D6B, 0x0}, {0x2F9A6, 0x26CD5, 0x0}, {0x2F9A7, 0x452B, 0x0},
    {0x2F9A8, 0x84F1, 0x0}, {0x2F9A9, 0x84F3, 0x0}, {0x2F9AA, 0x8516, 0x0}, {0x2F9AB, 0x273CA, 0x0},
    {0x2F9AC, 0x8564, 0x0}, {0x2F9AD, 0x26F2C, 0x0}, {0x2F9AE, 0x455D, 0x0}, {0x2F9AF, 0x4561, 0x0},
    {0x2F9B0, 0x26FB1, 0x0}, {0x2F9B1, 0x270D2, 0x0}, {0x2F9B2, 0x456B, 0x0}, {0x2F9B3, 0x8650, 0x0},
    {0x2F9B4, 0x865C, 0x0}, {0x2F9B5, 0x8667, 0x0}, {0x2F9B6, 0x8669, 0x0}, {0x2F9B7, 0x86A9, 0x0},
    {0x2F9B8, 0x8688, 0x0}, {0x2F9B9, 0x870E, 0x0}, {0x2F9BA, 0x86E2, 0x0}, {0x2F9BB, 0x8779, 0x0},
    {0x2F9BC, 0x8728, 0x0}, {0x2F9BD, 0x876B, 0x0}, {0x2F9BE, 0x8786, 0x0}, {0x2F9BF, 0x45D7, 0x0},
    {0x2F9C0, 0x87E1, 0x0}, {0x2F9C1, 0x8801, 0x0}, {0x2F9C2, 0x45F9, 0x0}, {0x2F9C3, 0x8860, 0x0},
    {0x2F9C4, 0x8863, 0x0}, {0x2F9C5, 0x27667, 0x0}, {0x2F9C6, 0x88D7, 0x0}, {0x2F9C7, 0x88DE, 0x0},
    {0x2F9C8, 0x4635, 0x0}, {0x2F9C9, 0x88FA, 0x0}, {0x2F9CA, 0x34BB, 0x0}, {0x2F9CB, 0x278AE, 0x0},
    {0x2F9CC, 0x27966, 0x0}, {0x2F9CD, 0x46BE, 0x0}, {0x2F9CE, 0x46C7, 0x0}, {0x2F9CF, 0x8AA0, 0x0},
    {0x2F9D0, 0x8AED, 0x0}, {0x2F9D1, 0x8B8A, 0x0}, {0x2F9D2, 0x8C55, 0x0}, {0x2F9D3, 0x27CA8, 0x0},
    {0x2F9D4, 0x8CAB, 0x0}, {0x2F9D5, 0x8CC1, 0x0}, {0x2F9D6, 0x8D1B, 0x0}, {0x2F9D7, 0x8D77, 0x0},
    {0x2F9D8, 0x27F2F, 0x0}, {0x2F9D9, 0x20804, 0x0}, {0x2F9DA, 0x8DCB, 0x0}, {0x2F9DB, 0x8DBC, 0x0},
    {0x2F9DC, 0x8DF0, 0x0}, {0x2F9DD, 0x208DE, 0x0}, {0x2F9DE, 0x8ED4, 0x0}, {0x2F9DF, 0x8F38, 0x0},
    {0x2F9E0, 0x285D2, 0x0}, {0x2F9E1, 0x285ED, 0x0}, {0x2F9E2, 0x9094, 0x0}, {0x2F9E3, 0x90F1, 0x0},
    {0x2F9E4, 0x9111, 0x0}, {0x2F9E5, 0x2872E, 0x0}, {0x2F9E6, 0x911B, 0x0}, {0x2F9E7, 0x9238, 0x0},
    {0x2F9E8, 0x92D7, 0x0}, {0x2F9E9, 0x92D8, 0x0}, {0x2F9EA, 0x927C, 0x0}, {0x2F9EB, 0x93F9, 0x0},
    {0x2F9EC, 0x9415, 0x0}, {0x2F9ED, 0x28BFA, 0x0}, {0x2F9EE, 0x958B, 0x0}, {0x2F9EF, 0x4995, 0x0},
    {0x2F9F0, 0x95B7, 0x0}, {0x2F9F1, 0x28D77, 0x0}, {0x2F9F2, 0x49E6, 0x0}, {0x2F9F3, 0x96C3, 0x0},
    {0x2F9F4, 0x5DB2, 0x0}, {0x2F9F5, 0x9723, 0x0}, {0x2F9F6, 0x29145, 0x0}, {0x2F9F7, 0x2921A, 0x0},
    {0x2F9F8, 0x4A6E, 0x0}, {0x2F9F9, 0x4A76, 0x0}, {0x2F9FA, 0x97E0, 0x0}, {0x2F9FB, 0x2940A, 0x0},
    {0x2F9FC, 0x4AB2, 0x0}, {0x2F9FD, 0x29496, 0x0}, {0x2F9FE, 0x980B, 0x0}, {0x2F9FF, 0x980B, 0x0},
    {0x2FA00, 0x9829, 0x0}, {0x2FA01, 0x295B6, 0x0}, {0x2FA02, 0x98E2, 0x0}, {0x2FA03, 0x4B33, 0x0},
    {0x2FA04, 0x9929, 0x0}, {0x2FA05, 0x99A7, 0x0}, {0x2FA06, 0x99C2, 0x0}, {0x2FA07, 0x99FE, 0x0},
    {0x2FA08, 0x4BCE, 0x0}, {0x2FA09, 0x29B30, 0x0}, {0x2FA0A, 0x9B12, 0x0}, {0x2FA0B, 0x9C40, 0x0},
    {0x2FA0C, 0x9CFD, 0x0}, {0x2FA0D, 0x4CCE, 0x0}, {0x2FA0E, 0x4CED, 0x0}, {0x2FA0F, 0x9D67, 0x0},
    {0x2FA10, 0x2A0CE, 0x0}, {0x2FA11, 0x4CF8, 0x0}, {0x2FA12, 0x2A105, 0x0}, {0x2FA13, 0x2A20E, 0x0},
    {0x2FA14, 0x2A291, 0x0}, {0x2FA15, 0x9EBB, 0x0}, {0x2FA16, 0x4D56, 0x0}, {0x2FA17, 0x9EF9, 0x0},
    {0x2FA18, 0x9EFE, 0x0}, {0x2FA19, 0x9F05, 0x0}, {0x2FA1A, 0x9F0F, 0x0}, {0x2FA1B, 0x9F16, 0x0},
    {0x2FA1C, 0x9F3B, 0x0}, {0x2FA1D, 0x2A600, 0x0},
};
/* {first, second, composite}: the primary composites, by pair, Unicode 14.0.0 cut back to 9.0 */
static const uint32_t unicode_composition[][3] = {
    {0x3C, 0x338, 0x226E}, {0x3D, 0x338, 0x2260}, {0x3E, 0x338, 0x226F}, {0x41, 0x300, 0xC0},
    {0x41, 0x301, 0xC1}, {0x41, 0x302, 0xC2}, {0x41, 0x303, 0xC3}, {0x41, 0x304, 0x100},
    {0x41, 0x306, 0x102}, {0x41, 0x307, 0x226}, {0x41, 0x308, 0xC4}, {0x41, 0x309, 0x1EA2},
    {0x41, 0x30A, 0xC5}, {0x41, 0x30C, 0x1CD}, {0x41, 0x30F, 0x200}, {0x41, 0x311, 0x202},
    {0x41, 0x323, 0x1EA0}, {0x41, 0x325, 0x1E00}, {0x41, 0x328, 0x104}, {0x42, 0x307, 0x1E02},
    {0x42, 0x323, 0x1E04}, {0x42, 0x331, 0x1E06}, {0x43, 0x301, 0x106}, {0x43, 0x302, 0x108},
    {0x43, 0x307, 0x10A}, {0x43, 0x30C, 0x10C}, {0x43, 0x327, 0xC7}, {0x44, 0x307, 0x1E0A},
    {0x44, 0x30C, 0x10E}, {0x44, 0x323, 0x1E0C}, {0x44, 0x327, 0x1E10}, {0x44, 0x32D, 0x1E12},
    {0x44, 0x331, 0x1E0E}, {0x45, 0x300, 0xC8}, {0x45, 0x301, 0xC9}, {0x45, 0x302, 0xCA},
    {0x45, 0x303, 0x1EBC}, {0x45, 0x304, 0x112}, {0x45, 0x306, 0x114}, {0x45, 0x307, 0x116},
    {0x45, 0x308, 0xCB}, {0x45, 0x309, 0x1EBA}, {0x45, 0x30C, 0x11A}, {0x45, 0x30F, 0x204},
    {0x45, 0x311, 0x206}, {0x45, 0x323, 0x1EB8}, {0x45, 0x327, 0x228}, {0x45, 0x328, 0x118},
    {0x45, 0x32D, 0x1E18}, {0x45, 0x330, 0x1E1A}, {0x46, 0x307, 0x1E1E}, {0x47, 0x301, 0x1F4},
    {0x47, 0x302, 0x11C}, {0x47, 0x304, 0x1E20}, {0x47, 0x306, 0x11E}, {0x47, 0x307, 0x120},
    {0x47, 0x30C, 0x1E6}, {0x47, 0x327, 0x122}, {0x48, 0x302, 0x124}, {0x48, 0x307, 0x1E22},
    {0x48, 0x308, 0x1E26}, {0x48, 0x30C, 0x21E}, {0x48, 0x323, 0x1E24}, {0x48, 0x327, 0x1E28},
    {0x48, 0x32E, 0x1E2A}, {0x49, 0x300, 0xCC}, {0x49, 0x301, 0xCD}, {0x49, 0x302, 0xCE},
    {0x49, 0x303, 0x128}, {0x49, 0x304, 0x12A}, {0x49, 0x306, 0x12C}, {0x49, 0x307, 0x130},
    {0x49, 0x308, 0xCF}, {0x49, 0x309, 0x1EC8}, {0x49, 0x30C, 0x1CF}, {0x49, 0x30F, 0x208},
    {0x49, 0x311, 0x20A}, {0x49, 0x323, 0x1ECA}, {0x49, 0x328, 0x12E}, {0x49, 0x330, 0x1E2C},
    {0x4A, 0x302, 0x134}, {0x4B, 0x301, 0x1E30}, {0x4B, 0x30C, 0x1E8}, {0x4B, 0x323, 0x1E32},
    {0x4B, 0x327, 0x136}, {0x4B, 0x331, 0x1E34}, {0x4C, 0x301, 0x139}, {0x4C, 0x30C, 0x13D},
    {0x4C, 0x323, 0x1E36}, {0x4C, 0x327, 0x13B}, {0x4C, 0x32D, 0x1E3C}, {0x4C, 0x331, 0x1E3A},
    {0x4D, 0x301, 0x1E3E}, {0x4D, 0x307, 0x1E40}, {0x4D, 0x323, 0x1E42}, {0x4E, 0x300, 0x1F8},
    {0x4E, 0x301, 0x143}, {0x4E, 0x303, 0xD1}, {0x4E, 0x307, 0x1E44}, {0x4E, 0x30C, 0x147},
    {0x4E, 0x323, 0x1E46}, {0x4E, 0x327, 0x145}, {0x4E, 0x32D, 0x1E4A}, {0x4E, 0x331, 0x1E48},
    {0x4F, 0x300, 0xD2}, {0x4F, 0x301, 0xD3}, {0x4F, 0x302, 0xD4}, {0x4F, 0x303, 0xD5},
    {0x4F, 0x304, 0x14C}, {0x4F, 0x306, 0x14E}, {0x4F, 0x307, 0x22E}, {0x4F, 0x308, 0xD6},
    {0x4F, 0x309, 0x1ECE}, {0x4F, 0x30B, 0x150}, {0x4F, 0x30C, 0x1D1}, {0x4F, 0x30F, 0x20C},
    {0x4F, 0x311, 0x20E}, {0x4F, 0x31B, 0x1A0}, {0x4F, 0x323, 0x1ECC}, {0x4F, 0x328, 0x1EA},
    {0x50, 0x301, 0x1E54}, {0x50, 0x307, 0x1E56}, {0x52, 0x301, 0x154}, {0x52, 0x307, 0x1E58},
    {0x52, 0x30C, 0x158}, {0x52, 0x30F, 0x210}, {0x52, 0x311, 0x212}, {0x52, 0x323, 0x1E5A},
    {0x52, 0x327, 0x156}, {0x52, 0x331, 0x1E5E}, {0x53, 0x301, 0x15A}, {0x53, 0x302, 0x15C},
    {0x53, 0x307, 0x1E60}, {0x53, 0x30C, 0x160}, {0x53, 0x323, 0x1E62}, {0x53, 0x326, 0x218},
    {0x53, 0x327, 0x15E}, {0x54, 0x307, 0x1E6A}, {0x54, 0x30C, 0x164}, {0x54, 0x323, 0x1E6C},
    {0x54, 0x326, 0x21A}, {0x54, 0x327, 0x162}, {0x54, 0x32D, 0x1E70}, {0x54, 0x331, 0x1E6E},
    {0x55, 0x300, 0xD9}, {0x55, 0x301, 0xDA}, {0x55, 0x302, 0xDB}, {0x55, 0x303, 0x168},
    {0x55, 0x304, 0x16A}, {0x55, 0x306, 0x16C}, {0x55, 0x308, 0xDC}, {0x55, 0x309, 0x1EE6},
    {0x55, 0x30A, 0x16E}, {0x55, 0x30B, 0x170}, {0x55, 0x30C, 0x1D3}, {0x55, 0x30F, 0x214},
    {0x55, 0x311, 0x216}, {0x55, 0x31B, 0x1AF}, {0x55, 0x323, 0x1EE4}, {0x55, 0x324, 0x1E72},
    {0x55, 0x328, 0x172}, {0x55, 0x32D, 0x1E76}, {0x55, 0x330, 0x1E74}, {0x56, 0x303, 0x1E7C},
    {0x56, 0x323, 0x1E7E}, {0x57, 0x300, 0x1E80}, {0x57, 0x301, 0x1E82}, {0x57, 0x302, 0x174},
    {0x57, 0x307, 0x1E86}, {0x57, 0x308, 0x1E84}, {0x57, 0x323, 0x1E88}, {0x58, 0x307, 0x1E8A},
    {0x58, 0x308, 0x1E8C}, {0x59, 0x300, 0x1EF2}, {0x59, 0x301, 0xDD}, {0x59, 0x302, 0x176},
    {0x59, 0x303, 0x1EF8}, {0x59, 0x304, 0x232}, {0x59, 0x307, 0x1E8E}, {0x59, 0x308, 0x178},
    {0x59, 0x309, 0x1EF6}, {0x59, 0x323, 0x1EF4}, {0x5A, 0x301, 0x179}, {0x5A, 0x302, 0x1E90},
    {0x5A, 0x307, 0x17B}, {0x5A, 0x30C, 0x17D}, {0x5A, 0x323, 0x1E92}, {0x5A, 0x331, 0x1E94},
    {0x61, 0x300, 0xE0}, {0x61, 0x301, 0xE1}, {0x61, 0x302, 0xE2}, {0x61, 0x303, 0xE3},
    {0x61, 0x304, 0x101}, {0x61, 0x306, 0x103}, {0x61, 0x307, 0x227}, {0x61, 0x308, 0xE4},
    {0x61, 0x309, 0x1EA3}, {0x61, 0x30A, 0xE5}, {0x61, 0x30C, 0x1CE}, {0x61, 0x30F, 0x201},
    {0x61, 0x311, 0x203}, {0x61, 0x323, 0x1EA1}, {0x61, 0x325, 0x1E01}, {0x61, 0x328, 0x105},
    {0x62, 0x307, 0x1E03}, {0x62, 0x323, 0x1E05}, {0x62, 0x331, 0x1E07}, {0x63, 0x301, 0x107},
    {0x63, 0x302, 0x109}, {0x63, 0x307, 0x10B}, {0x63, 0x30C, 0x10D}, {0x63, 0x327, 0xE7},
    {0x64, 0x307, 0x1E0B}, {0x64, 0x30C, 0x10F}, {0x64, 0x323, 0x1E0D}, {0x64, 0x327, 0x1E11},
    {0x64, 0x32D, 0x1E13}, {0x64, 0x331, 0x1E0F}, {0x65, 0x300, 0xE8}, {0x65, 0x301, 0xE9},
    {0x65, 0x302, 0xEA}, {0x65, 0x303, 0x1EBD}, {0x65, 0x304, 0x113}, {0x65, 0x306, 0x115},
    {0x65, 0x307, 0x117}, {0x65, 0x308, 0xEB}, {0x65, 0x309, 0x1EBB}, {0x65, 0x30C, 0x11B},
    {0x65, 0x30F, 0x205}, {0x65, 0x311, 0x207}, {0x65, 0x323, 0x1EB9}, {0x65, 0x327, 0x229},
    {0x65, 0x328, 0x119}, {0x65, 0x32D, 0x1E19}, {0x65, 0x330, 0x1E1B}, {0x66, 0x307, 0x1E1F},
    {0x67, 0x301, 0x1F5}, {0x67, 0x302, 0x11D}, {0x67, 0x304, 0x1E21}, {0x67, 0x306, 0x11F},
    {0x67, 0x307, 0x121}, {0x67, 0x30C, 0x1E7}, {0x67, 0x327, 0x123}, {0x68, 0x302, 0x125},
    {0x68, 0x307, 0x1E23}, {0x68, 0x308, 0x1E27}, {0x68, 0x30C, 0x21F}, {0x68, 0x323, 0x1E25},
    {0x68, 0x327, 0x1E29}, {0x68, 0x32E, 0x1E2B}, {0x68, 0x331, 0x1E96}, {0x69, 0x300, 0xEC},
    {0x69, 0x301, 0xED}, {0x69, 0x302, 0xEE}, {0x69, 0x303, 0x129}, {0x69, 0x304, 0x12B},
    {0x69, 0x306, 0x12D}, {0x69, 0x308, 0xEF}, {0x69, 0x309, 0x1EC9}, {0x69, 0x30C, 0x1D0},
    {0x69, 0x30F, 0x209}, {0x69, 0x311, 0x20B}, {0x69, 0x323, 0x1ECB}, {0x69, 0x328, 0x12F},
    {0x69, 0x330, 0x1E2D}, {0x6A, 0x302, 0x135}, {0x6A, 0x30C, 0x1F0}, {0x6B, 0x301, 0x1E31},
    {0x6B, 0x30C, 0x1E9}, {0x6B, 0x323, 0x1E33}, {0x6B, 0x327, 0x137}, {0x6B, 0x331, 0x1E35},
    {0x6C, 0x301, 0x13A}, {0x6C, 0x30C, 0x13E}, {0x6C, 0x323, 0x1E37}, {0x6C, 0x327, 0x13C},
    {0x6C, 0x32D, 0x1E3D}, {0x6C, 0x331, 0x1E3B}, {0x6D, 0x301, 0x1E3F}, {0x6D, 0x307, 0x1E41},
    {0x6D, 0x323, 0x1E43}, {0x6E, 0x300, 0x1F9}, {0x6E, 0x301, 0x144}, {0x6E, 0x303, 0xF1},
    {0x6E, 0x307, 0x1E45}, {0x6E, 0x30C, 0x148}, {0x6E, 0x323, 0x1E47}, {0x6E, 0x327, 0x146},
    {0x6E, 0x32D, 0x1E4B}, {0x6E, 0x331, 0x1E49}, {0x6F, 0x300, 0xF2}, {0x6F, 0x301, 0xF3},
    {0x6F, 0x302, 0xF4}, {0x6F, 0x303, 0xF5}, {0x6F, 0x304, 0x14D}, {0x6F, 0x306, 0x14F},
    {0x6F, 0x307, 0x22F}, {0x6F, 0x308, 0xF6}, {0x6F, 0x309, 0x1ECF}, {0x6F, 0x30B, 0x151},
    {0x6F, 0x30C, 0x1D2}, {0x6F, 0x30F, 0x20D}, {0x6F, 0x311, 0x20F}, {0x6F, 0x31B, 0x1A1},
    {0x6F, 0x323, 0x1ECD}, {0x6F, 0x328, 0x1EB}, {0x70, 0x301, 0x1E55}, {0x70, 0x307, 0x1E57},
    {0x72, 0x301, 0x155}, {0x72, 0x307, 0x1E59}, {0x72, 0x30C, 0x159}, {0x72, 0x30F, 0x211},
    {0x72, 0x311, 0x213}, {0x72, 0x323, 0x1E5B}, {0x72, 0x327, 0x157}, {0x72, 0x331, 0x1E5F},
    {0x73, 0x301, 0x15B}, {0x73, 0x302, 0x15D}, {0x73, 0x307, 0x1E61}, {0x73, 0x30C, 0x161},
    {0x73, 0x323, 0x1E63}, {0x73, 0x326, 0x219}, {0x73, 0x327, 0x15F}, {0x74, 0x307, 0x1E6B},
    {0x74, 0x308, 0x1E97}, {0x74, 0x30C, 0x165}, {0x74, 0x323, 0x1E6D}, {0x74, 0x326, 0x21B},
    {0x74, 0x327, 0x163}, {0x74, 0x32D, 0x1E71}, {0x74, 0x331, 0x1E6F}, {0x75, 0x300, 0xF9},
    {0x75, 0x301, 0xFA}, {0x75, 0x302, 0xFB}, {0x75, 0x303, 0x169}, {0x75, 0x304, 0x16B},
    {0x75, 0x306, 0x16D}, {0x75, 0x308, 0xFC}, {0x75, 0x309, 0x1EE7}, {0x75, 0x30A, 0x16F},
    {0x75, 0x30B, 0x171}, {0x75, 0x30C, 0x1D4}, {0x75, 0x30F, 0x215}, {0x75, 0x311, 0x217},
    {0x75, 0x31B, 0x1B0}, {0x75, 0x323, 0x1EE5}, {0x75, 0x324, 0x1E73}, {0x75, 0x328, 0x173},
    {0x75, 0x32D, 0x1E77}, {0x75, 0x330, 0x1E75}, {0x76, 0x303, 0x1E7D}, {0x76, 0x323, 0x1E7F},
    {0x77, 0x300, 0x1E81}, {0x77, 0x301, 0x1E83}, {0x77, 0x302, 0x175}, {0x77, 0x307, 0x1E87},
    {0x77, 0x308, 0x1E85}, {0x77, 0x30A, 0x1E98}, {0x77, 0x323, 0x1E89}, {0x78, 0x307, 0x1E8B},
    {0x78, 0x308, 0x1E8D}, {0x79, 0x300, 0x1EF3}, {0x79, 0x301, 0xFD}, {0x79, 0x302, 0x177},
    {0x79, 0x303, 0x1EF9}, {0x79, 0x304, 0x233}, {0x79, 0x307, 0x1E8F}, {0x79, 0x308, 0xFF},
    {0x79, 0x309, 0x1EF7}, {0x79, 0x30A, 0x1E99}, {0x79, 0x323, 0x1EF5}, {0x7A, 0x301, 0x17A},
    {0x7A, 0x302, 0x1E91}, {0x7A, 0x307, 0x17C}, {0x7A, 0x30C, 0x17E}, {0x7A, 0x323, 0x1E93},
    {0x7A, 0x331, 0x1E95}, {0xA8, 0x300, 0x1FED}, {0xA8, 0x301, 0x385}, {0xA8, 0x342, 0x1FC1},
    {0xC2, 0x300, 0x1EA6}, {0xC2, 0x301, 0x1EA4}, {0xC2, 0x303, 0x1EAA}, {0xC2, 0x309, 0x1EA8},
    {0xC4, 0x304, 0x1DE}, {0xC5, 0x301, 0x1FA}, {0xC6, 0x301, 0x1FC}, {0xC6, 0x304, 0x1E2},
    {0xC7, 0x301, 0x1E08}, {0xCA, 0x300, 0x1EC0}, {0xCA, 0x301, 0x1EBE}, {0xCA, 0x303, 0x1EC4},
    {0xCA, 0x309, 0x1EC2}, {0xCF, 0x301, 0x1E2E}, {0xD4, 0x300, 0x1ED2}, {0xD4, 0x301, 0x1ED0},
    {0xD4, 0x303, 0x1ED6}, {0xD4, 0x309, 0x1ED4}, {0xD5, 0x301, 0x1E4C}, {0xD5, 0x304, 0x22C},
    {0xD5, 0x308, 0x1E4E}, {0xD6, 0x304, 0x22A}, {0xD8, 0x301, 0x1FE}, {0xDC, 0x300, 0x1DB},
    {0xDC, 0x301, 0x1D7}, {0xDC, 0x304, 0x1D5}, {0xDC, 0x30C, 0x1D9}, {0xE2, 0x300, 0x1EA7},
    {0xE2, 0x301, 0x1EA5}, {0xE2, 0x303, 0x1EAB}, {0xE2, 0x309, 0x1EA9}, {0xE4, 0x304, 0x1DF},
    {0xE5, 0x301, 0x1FB}, {0xE6, 0x301, 0x1FD}, {0xE6, 0x304, 0x1E3}, {0xE7, 0x301, 0x1E09},
    {0xEA, 0x300, 0x1EC1}, {0xEA, 0x301, 0x1EBF}, {0xEA, 0x303, 0x1EC5}, {0xEA, 0x309, 0x1EC3},
    {0xEF, 0x301, 0x1E2F}, {0xF4, 0x300, 0x1ED3}, {0xF4, 0x301, 0x1ED1}, {0xF4, 0x303, 0x1ED7},
    {0xF4, 0x309, 0x1ED5}, {0xF5, 0x301, 0x1E4D}, {0xF5, 0x304, 0x22D}, {0xF5, 0x308, 0x1E4F},
    {0xF6, 0x304, 0x22B}, {0xF8, 0x301, 0x1FF}, {0xFC, 0x300, 0x1DC}, {0xFC, 0x301, 0x1D8},
    {0xFC, 0x304, 0x1D6}, {0xFC, 0x30C, 0x1DA}, {0x102, 0x300, 0x1EB0}, {0x102, 0x301, 0x1EAE},
    {0x102, 0x303, 0x1EB4}, {0x102, 0x309, 0x1EB2}, {0x103, 0x300, 0x1EB1}, {0x103, 0x301, 0x1EAF},
    {0x103, 0x303, 0x1EB5}, {0x103, 0x309, 0x1EB3}, {0x112, 0x300, 0x1E14}, {0x112, 0x301, 0x1E16},
    {0x113, 0x300, 0x1E15}, {0x113, 0x301, 0x1E17}, {0x14C, 0x300, 0x1E50}, {0x14C, 0x301, 0x1E52},
    {0x14D, 0x300, 0x1E51}, {0x14D, 0x301, 0x1E53}, {0x15A, 0x307, 0x1E64}, {0x15B, 0x307, 0x1E65},
    {0x160, 0x307, 0x1E66}, {0x161, 0x307, 0x1E67}, {0x168, 0x301, 0x1E78}, {0x169, 0x301, 0x1E79},
    {0x16A, 0x308, 0x1E7A}, {0x16B, 0x308, 0x1E7B}, {0x17F, 0x307, 0x1E9B}, {0x1A0, 0x300, 0x1EDC},
    {0x1A0, 0x301, 0x1EDA}, {0x1A0, 0x303, 0x1EE0}, {0x1A0, 0x309, 0x1EDE}, {0x1A0, 0x323, 0x1EE2},
    {0x1A1, 0x300, 0x1EDD}, {0x1A1, 0x301, 0x1EDB}, {0x1A1, 0x303, 0x1EE1}, {0x1A1, 0x309, 0x1EDF},
    {0x1A1, 0x323, 0x1EE3}, {0x1AF, 0x300, 0x1EEA}, {0x1AF, 0x301, 0x1EE8}, {0x1AF, 0x303, 0x1EEE},
    {0x1AF, 0x309, 0x1EEC}, {0x1AF, 0x323, 0x1EF0}, {0x1B0, 0x300, 0x1EEB}, {0x1B0, 0x301, 0x1EE9},
    {0x1B0, 0x303, 0x1EEF}, {0x1B0, 0x309, 0x1EED}, {0x1B0, 0x323, 0x1EF1}, {0x1B7, 0x30C, 0x1EE},
    {0x1EA, 0x304, 0x1EC}, {0x1EB, 0x304, 0x1ED}, {0x226, 0x304, 0x1E0}, {0x227, 0x304, 0x1E1},
    {0x228, 0x306, 0x1E1C}, {0x229, 0x306, 0x1E1D}, {0x22E, 0x304, 0x230}, {0x22F, 0x304, 0x231},
    {0x292, 0x30C, 0x1EF}, {0x391, 0x300, 0x1FBA}, {0x391, 0x301, 0x386}, {0x391, 0x304, 0x1FB9},
    {0x391, 0x306, 0x1FB8}, {0x391, 0x313, 0x1F08}, {0x391, 0x314, 0x1F09}, {0x391, 0x345, 0x1FBC},
    {0x395, 0x300, 0x1FC8}, {0x395, 0x301, 0x388}, {0x395, 0x313, 0x1F18}, {0x395, 0x314, 0x1F19},
    {0x397, 0x300, 0x1FCA}, {0x397, 0x301, 0x389}, {0x397, 0x313, 0x1F28}, {0x397, 0x314, 0x1F29},
    {0x397, 0x345, 0x1FCC}, {0x399, 0x300, 0x1FDA}, {0x399, 0x301, 0x38A}, {0x399, 0x304, 0x1FD9},
    {0x399, 0x306, 0x1FD8}, {0x399, 0x308, 0x3AA}, {0x399, 0x313, 0x1F38}, {0x399, 0x314, 0x1F39},
    {0x39F, 0x300, 0x1FF8}, {0x39F, 0x301, 0x38C}, {0x39F, 0x313, 0x1F48}, {0x39F, 0x314, 0x1F49},
    {0x3A1, 0x314, 0x1FEC}, {0x3A5, 0x300, 0x1FEA}, {0x3A5, 0x301, 0x38E}, {0x3A5, 0x304, 0x1FE9},
    {0x3A5, 0x306, 0x1FE8}, {0x3A5, 0x308, 0x3AB}, {0x3A5, 0x314, 0x1F59}, {0x3A9, 0x300, 0x1FFA},
    {0x3A9, 0x301, 0x38F}, {0x3A9, 0x313, 0x1F68}, {0x3A9, 0x314, 0x1F69}, {0x3A9, 0x345, 0x1FFC},
    {0x3AC, 0x345, 0x1FB4}, {0x3AE, 0x345, 0x1FC4}, {0x3B1, 0x300, 0x1F70}, {0x3B1, 0x301, 0x3AC},
    {0x3B1, 0x304, 0x1FB1}, {0x3B1, 0x306, 0x1FB0}, {0x3B1, 0x313, 0x1F00}, {0x3B1, 0x314, 0x1F01},
    {0x3B1, 0x342, 0x1FB6}, {0x3B1, 0x345, 0x1FB3}, {0x3B5, 0x300, 0x1F72}, {0x3B5, 0x301, 0x3AD},
    {0x3B5, 0x313, 0x1F10}, {0x3B5, 0x314, 0x1F11}, {0x3B7, 0x300, 0x1F74}, {0x3B7, 0x301, 0x3AE},
    {0x3B7, 0x313, 0x1F20}, {0x3B7, 0x314, 0x1F21}, {0x3B7, 0x342, 0x1FC6}, {0x3B7, 0x345, 0x1FC3},
    {0x3B9, 0x300, 0x1F76}, {0x3B9, 0x301, 0x3AF}, {0x3B9, 0x304, 0x1FD1}, {0x3B9, 0x306, 0x1FD0},
    {0x3B9, 0x308, 0x3CA}, {0x3B9, 0x313, 0x1F30}, {0x3B9, 0x314, 0x1F31}, {0x3B9, 0x342, 0x1FD6},
    {0x3BF, 0x300, 0x1F78}, {0x3BF, 0x301, 0x3CC}, {0x3BF, 0x313, 0x1F40}, {0x3BF, 0x314, 0x1F41},
    {0x3C1, 0x313, 0x1FE4}, {0x3C1, 0x314, 0x1FE5}, {0x3C5, 0x300, 0x1F7A}, {0x3C5, 0x301, 0x3CD},
    {0x3C5, 0x304, 0x1FE1}, {0x3C5, 0x306, 0x1FE0}, {0x3C5, 0x308, 0x3CB}, {0x3C5, 0x313, 0x1F50},
    {0x3C5, 0x314, 0x1F51}, {0x3C5, 0x342, 0x1FE6}, {0x3C9, 0x300, 0x1F7C}, {0x3C9, 0x301, 0x3CE},
    {0x3C9, 0x313, 0x1F60}, {0x3C9, 0x314, 0x1F61}, {0x3C9, 0x342, 0x1FF6}, {0x3C9, 0x345, 0x1FF3},
    {0x3CA, 0x300, 0x1FD2}, {0x3CA, 0x301, 0x390}, {0x3CA, 0x342, 0x1FD7}, {0x3CB, 0x300, 0x1FE2},
    {0x3CB, 0x301, 0x3B0}, {0x3CB, 0x342, 0x1FE7}, {0x3CE, 0x345, 0x1FF4}, {0x3D2, 0x301, 0x3D3},
    {0x3D2, 0x308, 0x3D4}, {0x406, 0x308, 0x407}, {0x410, 0x306, 0x4D0}, {0x410, 0x308, 0x4D2},
    {0x413, 0x301, 0x403}, {0x415, 0x300, 0x400}, {0x415, 0x306, 0x4D6}, {0x415, 0x308, 0x401},
    {0x416, 0x306, 0x4C1}, {0x416, 0x308, 0x4DC}, {0x417, 0x308, 0x4DE}, {0x418, 0x300, 0x40D},
    {0x418, 0x304, 0x4E2}, {0x418, 0x306, 0x419}, {0x418, 0x308, 0x4E4}, {0x41A, 0x301, 0x40C},
    {0x41E, 0x308, 0x4E6}, {0x423, 0x304, 0x4EE}, {0x423, 0x306, 0x40E}, {0x423, 0x308, 0x4F0},
    {0x423, 0x30B, 0x4F2}, {0x427, 0x308, 0x4F4}, {0x42B, 0x308, 0x4F8}, {0x42D, 0x308, 0x4EC},
    {0x430, 0x306, 0x4D1}, {0x430, 0x308, 0x4D3}, {0x433, 0x301, 0x453}, {0x435, 0x300, 0x450},
    {0x435, 0x306, 0x4D7}, {0x435, 0x308, 0x451}, {0x436, 0x306, 0x4C2}, {0x436, 0x308, 0x4DD},
    {0x437, 0x308, 0x4DF}, {0x438, 0x300, 0x45D}, {0x438, 0x304, 0x4E3}, {0x438, 0x306, 0x439},
    {0x438, 0x308, 0x4E5}, {0x43A, 0x301, 0x45C}, {0x43E, 0x308, 0x4E7}, {0x443, 0x304, 0x4EF},
    {0x443, 0x306, 0x45E}, {0x443, 0x308, 0x4F1}, {0x443, 0x30B, 0x4F3}, {0x447, 0x308, 0x4F5},
    {0x44B, 0x308, 0x4F9}, {0x44D, 0x308, 0x4ED}, {0x456, 0x308, 0x457}, {0x474, 0x30F, 0x476},
    {0x475, 0x30F, 0x477}, {0x4D8, 0x308, 0x4DA}, {0x4D9, 0x308, 0x4DB}, {0x4E8, 0x308, 0x4EA},
    {0x4E9, 0x308, 0x4EB}, {0x627, 0x653, 0x622}, {0x627, 0x654, 0x623}, {0x627, 0x655, 0x625},
    {0x648, 0x654, 0x624}, {0x64A, 0x654, 0x626}, {0x6C1, 0x654, 0x6C2}, {0x6D2, 0x654, 0x6D3},
    {0x6D5, 0x654, 0x6C0}, {0x928, 0x93C, 0x929}, {0x930, 0x93C, 0x931}, {0x933, 0x93C, 0x934},
    {0x9C7, 0x9BE, 0x9CB}, {0x9C7, 0x9D7, 0x9CC}, {0xB47, 0xB3E, 0xB4B}, {0xB47, 0xB56, 0xB48},
    {0xB47, 0xB57, 0xB4C}, {0xB92, 0xBD7, 0xB94}, {0xBC6, 0xBBE, 0xBCA}, {0xBC6, 0xBD7, 0xBCC},
    {0xBC7, 0xBBE, 0xBCB}, {0xC46, 0xC56, 0xC48}, {0xCBF, 0xCD5, 0xCC0}, {0xCC6, 0xCC2, 0xCCA},
    {0xCC6, 0xCD5, 0xCC7}, {0xCC6, 0xCD6, 0xCC8}, {0xCCA, 0xCD5, 0xCCB}, {0xD46, 0xD3E, 0xD4A},
    {0xD46, 0xD57, 0xD4C}, {0xD47, 0xD3E, 0xD4B}, {0xDD9, 0xDCA, 0xDDA}, {0xDD9, 0xDCF, 0xDDC},
    {0xDD9, 0xDDF, 0xDDE}, {0xDDC, 0xDCA, 0xDDD}, {0x1025, 0x102E, 0x1026}, {0x1B05, 0x1B35, 0x1B06},
    {0x1B07, 0x1B35, 0x1B08}, {0x1B09, 0x1B35, 0x1B0A}, {0x1B0B, 0x1B35, 0x1B0C},
    {0x1B0D, 0x1B35, 0x1B0E}, {0x1B11, 0x1B35, 0x1B12}, {0x1B3A, 0x1B35, 0x1B3B},
    {0x1B3C, 0x1B35, 0x1B3D}, {0x1B3E, 0x1B35, 0x1B40}, {0x1B3F, 0x1B35, 0x1B41},
    {0x1B42, 0x1B35, 0x1B43}, {0x1E36, 0x304, 0x1E38}, {0x1E37, 0x304, 0x1E39}, {0x1E5A, 0x304, 0x1E5C},
    {0x1E5B, 0x304, 0x1E5D}, {0x1E62, 0x307, 0x1E68}, {0x1E63, 0x307, 0x1E69}, {0x1EA0, 0x302, 0x1EAC},
    {0x1EA0, 0x306, 0x1EB6}, {0x1EA1, 0x302, 0x1EAD}, {0x1EA1, 0x306, 0x1EB7}, {0x1EB8, 0x302, 0x1EC6},
    {0x1EB9, 0x302, 0x1EC7}, {0x1ECC, 0x302, 0x1ED8}, {0x1ECD, 0x302, 0x1ED9}, {0x1F00, 0x300, 0x1F02},
    {0x1F00, 0x301, 0x1F04}, {0x1F00, 0x342, 0x1F06}, {0x1F00, 0x345, 0x1F80}, {0x1F01, 0x300, 0x1F03},
    {0x1F01, 0x301, 0x1F05}, {0x1F01, 0x342, 0x1F07}, {0x1F01, 0x345, 0x1F81}, {0x1F02, 0x345, 0x1F82},
    {0x1F03, 0x345, 0x1F83}, {0x1F04, 0x345, 0x1F84}, {0x1F05, 0x345, 0x1F85}, {0x1F06, 0x345, 0x1F86},
    {0x1F07, 0x345, 0x1F87}, {0x1F08, 0x300, 0x1F0A}, {0x1F08, 0x301, 0x1F0C}, {0x1F08, 0x342, 0x1F0E},
    {0x1F08, 0x345, 0x1F88}, {0x1F09, 0x300, 0x1F0B}, {0x1F09, 0x301, 0x1F0D}, {0x1F09, 0x342, 0x1F0F},
    {0x1F09, 0x345, 0x1F89}, {0x1F0A, 0x345, 0x1F8A}, {0x1F0B, 0x345, 0x1F8B}, {0x1F0C, 0x345, 0x1F8C},
    {0x1F0D, 0x345, 0x1F8D}, {0x1F0E, 0x345, 0x1F8E}, {0x1F0F, 0x345, 0x1F8F}, {0x1F10, 0x300, 0x1F12},
    {0x1F10, 0x301, 0x1F14}, {0x1F11, 0x300, 0x1F13}, {0x1F11, 0x301, 0x1F15}, {0x1F18, 0x300, 0x1F1A},
    {0x1F18, 0x301, 0x1F1C}, {0x1F19, 0x300, 0x1F1B}, {0x1F19, 0x301, 0x1F1D}, {0x1F20, 0x300, 0x1F22},
    {0x1F20, 0x301, 0x1F24}, {0x1F20, 0x342, 0x1F26}, {0x1F20, 0x345, 0x1F90}, {0x1F21, 0x300, 0x1F23},
    {0x1F21, 0x301, 0x1F25}, {0x1F21, 0x342, 0x1F27}, {0x1F21, 0x345, 0x1F91}, {0x1F22, 0x345, 0x1F92},
    {0x1F23, 0x345, 0x1F93}, {0x1F24, 0x345, 0x1F94}, {0x1F25, 0x345, 0x1F95}, {0x1F26, 0x345, 0x1F96},
    {0x1F27, 0x345, 0x1F97}, {0x1F28, 0x300, 0x1F2A}, {0x1F28, 0x301, 0x1F2C}, {0x1F28, 0x342, 0x1F2E},
    {0x1F28, 0x345, 0x1F98}, {0x1F29, 0x300, 0x1F2B}, {0x1F29, 0x301, 0x1F2D}, {0x1F29, 0x342, 0x1F2F},
    {0x1F29, 0x345, 0x1F99}, {0x1F2A, 0x345, 0x1F9A}, {0x1F2B, 0x345, 0x1F9B}, {0x1F2C, 0x345, 0x1F9C},
    {0x1F2D, 0x345, 0x1F9D}, {0x1F2E, 0x345, 0x1F9E}, {0x1F2F, 0x345, 0x1F9F}, {0x1F30, 0x300, 0x1F32},
    {0x1F30, 0x301, 0x1F34}, {0x1F30, 0x342, 0x1F36}, {0x1F31, 0x300, 0x1F33}, {0x1F31, 0x301, 0x1F35},
    {0x1F31, 0x342, 0x1F37}, {0x1F38, 0x300, 0x1F3A}, {0x1F38, 0x301, 0x1F3C}, {0x1F38, 0x342, 0x1F3E},
    {0x1F39, 0x300, 0x1F3B}, {0x1F39, 0x301, 0x1F3D}, {0x1F39, 0x342, 0x1F3F}, {0x1F40, 0x300, 0x1F42},
    {0x1F40, 0x301, 0x1F44}, {0x1F41, 0x300, 0x1F43}, {0x1F41, 0x301, 0x1F45}, {0x1F48, 0x300, 0x1F4A},
    {0x1F48, 0x301, 0x1F4C}, {0x1F49, 0x300, 0x1F4B}, {0x1F49, 0x301, 0x1F4D}, {0x1F50, 0x300, 0x1F52},
    {0x1F50, 0x301, 0x1F54}, {0x1F50, 0x342, 0x1F56}, {0x1F51, 0x300, 0x1F53}, {0x1F51, 0x301, 0x1F55},
    {0x1F51, 0x342, 0x1F57}, {0x1F59, 0x300, 0x1F5B}, {0x1F59, 0x301, 0x1F5D}, {0x1F59, 0x342, 0x1F5F},
    {0x1F60, 0x300, 0x1F62}, {0x1F60, 0x301, 0x1F64}, {0x1F60, 0x342, 0x1F66}, {0x1F60, 0x345, 0x1FA0},
    {0x1F61, 0x300, 0x1F63}, {0x1F61, 0x301, 0x1F65}, {0x1F61, 0x342, 0x1F67}, {0x1F61, 0x345, 0x1FA1},
    {0x1F62, 0x345, 0x1FA2}, {0x1F63, 0x345, 0x1FA3}, {0x1F64, 0x345, 0x1FA4}, {0x1F65, 0x345, 0x1FA5},
    {0x1F66, 0x345, 0x1FA6}, {0x1F67, 0x345, 0x1FA7}, {0x1F68, 0x300, 0x1F6A}, {0x1F68, 0x301, 0x1F6C},
    {0x1F68, 0x342, 0x1F6E}, {0x1F68, 0x345, 0x1FA8}, {0x1F69, 0x300, 0x1F6B}, {0x1F69, 0x301, 0x1F6D},
    {0x1F69, 0x342, 0x1F6F}, {0x1F69, 0x345, 0x1FA9}, {0x1F6A, 0x345, 0x1FAA}, {0x1F6B, 0x345, 0x1FAB},
    {0x1F6C, 0x345, 0x1FAC}, {0x1F6D, 0x345, 0x1FAD}, {0x1F6E, 0x345, 0x1FAE}, {0x1F6F, 0x345, 0x1FAF},
    {0x1F70, 0x345, 0x1FB2}, {0x1F74, 0x345, 0x1FC2}, {0x1F7C, 0x345, 0x1FF2}, {0x1FB6, 0x345, 0x1FB7},
    {0x1FBF, 0x300, 0x1FCD}, {0x1FBF, 0x301, 0x1FCE}, {0x1FBF, 0x342, 0x1FCF}, {0x1FC6, 0x345, 0x1FC7},
    {0x1FF6, 0x345, 0x1FF7}, {0x1FFE, 0x300, 0x1FDD}, {0x1FFE, 0x301, 0x1FDE}, {0x1FFE, 0x342, 0x1FDF},
    {0x2190, 0x338, 0x219A}, {0x2192, 0x338, 0x219B}, {0x2194, 0x338, 0x21AE}, {0x21D0, 0x338, 0x21CD},
    {0x21D2, 0x338, 0x21CF}, {0x21D4, 0x338, 0x21CE}, {0x2203, 0x338, 0x2204}, {0x2208, 0x338, 0x2209},
    {0x220B, 0x338, 0x220C}, {0x2223, 0x338, 0x2224}, {0x2225, 0x338, 0x2226}, {0x223C, 0x338, 0x2241},
    {0x2243, 0x338, 0x2244}, {0x2245, 0x338, 0x2247}, {0x2248, 0x338, 0x2249}, {0x224D, 0x338, 0x226D},
    {0x2261, 0x338, 0x2262}, {0x2264, 0x338, 0x2270}, {0x2265, 0x338, 0x2271}, {0x2272, 0x338, 0x2274},
    {0x2273, 0x338, 0x2275}, {0x2276, 0x338, 0x2278}, {0x2277, 0x338, 0x2279}, {0x227A, 0x338, 0x2280},
    {0x227B, 0x338, 0x2281}, {0x227C, 0x338, 0x22E0}, {0x227D, 0x338, 0x22E1}, {0x2282, 0x338, 0x2284},
    {0x2283, 0x338, 0x2285}, {0x2286, 0x338, 0x2288}, {0x2287, 0x338, 0x2289}, {0x2291, 0x338, 0x22E2},
    {0x2292, 0x338, 0x22E3}, {0x22A2, 0x338, 0x22AC}, {0x22A8, 0x338, 0x22AD}, {0x22A9, 0x338, 0x22AE},
    {0x22AB, 0x338, 0x22AF}, {0x22B2, 0x338, 0x22EA}, {0x22B3, 0x338, 0x22EB}, {0x22B4, 0x338, 0x22EC},
    {0x22B5, 0x338, 0x22ED}, {0x3046, 0x3099, 0x3094}, {0x304B, 0x3099, 0x304C},
    {0x304D, 0x3099, 0x304E}, {0x304F, 0x3099, 0x3050}, {0x3051, 0x3099, 0x3052},
    {0x3053, 0x3099, 0x3054}, {0x3055, 0x3099, 0x3056}, {0x3057, 0x3099, 0x3058},
    {0x3059, 0x3099, 0x305A}, {0x305B, 0x3099, 0x305C}, {0x305D, 0x3099, 0x305E},
    {0x305F, 0x3099, 0x3060}, {0x3061, 0x3099, 0x3062}, {0x3064, 0x3099, 0x3065},
    {0x3066, 0x3099, 0x3067}, {0x3068, 0x3099, 0x3069}, {0x306F, 0x3099, 0x3070},
    {0x306F, 0x309A, 0x3071}, {0x3072, 0x3099, 0x3073}, {0x3072, 0x309A, 0x3074},
    {0x3075, 0x3099, 0x3076}, {0x3075, 0x309A, 0x3077}, {0x3078, 0x3099, 0x3079},
    {0x3078, 0x309A, 0x307A}, {0x307B, 0x3099, 0x307C}, {0x307B, 0x309A, 0x307D},
    {0x309D, 0x3099, 0x309E}, {0x30A6, 0x3099, 0x30F4}, {0x30AB, 0x3099, 0x30AC},
    {0x30AD, 0x3099, 0x30AE}, {0x30AF, 0x3099, 0x30B0}, {0x30B1, 0x3099, 0x30B2},
    {0x30B3, 0x3099, 0x30B4}, {0x30B5, 0x3099, 0x30B6}, {0x30B7, 0x3099, 0x30B8},
    {0x30B9, 0x3099, 0x30BA}, {0x30BB, 0x3099, 0x30BC}, {0x30BD, 0x3099, 0x30BE},
    {0x30BF, 0x3099, 0x30C0}, {0x30C1, 0x3099, 0x30C2}, {0x30C4, 0x3099, 0x30C5},
    {0x30C6, 0x3099, 0x30C7}, {0x30C8, 0x3099, 0x30C9}, {0x30CF, 0x3099, 0x30D0},
    {0x30CF, 0x309A, 0x30D1}, {0x30D2, 0x3099, 0x30D3}, {0x30D2, 0x309A, 0x30D4},
    {0x30D5, 0x3099, 0x30D6}, {0x30D5, 0x309A, 0x30D7}, {0x30D8, 0x3099, 0x30D9},
    {0x30D8, 0x309A, 0x30DA}, {0x30DB, 0x3099, 0x30DC}, {0x30DB, 0x309A, 0x30DD},
    {0x30EF, 0x3099, 0x30F7}, {0x30F0, 0x3099, 0x30F8}, {0x30F1, 0x3099, 0x30F9},
    {0x30F2, 0x3099, 0x30FA}, {0x30FD, 0x3099, 0x30FE}, {0x11099, 0x110BA, 0x1109A},
    {0x1109B, 0x110BA, 0x1109C}, {0x110A5, 0x110BA, 0x110AB}, {0x11131, 0x11127, 0x1112E},
    {0x11132, 0x11127, 0x1112F}, {0x11347, 0x1133E, 0x1134B}, {0x11347, 0x11357, 0x1134C},
    {0x114B9, 0x114B0, 0x114BC}, {0x114B9, 0x114BA, 0x114BB}, {0x114B9, 0x114BD, 0x114BE},
    {0x115B8, 0x115AF, 0x115BA}, {0x115B9, 0x115AF, 0x115BB},
};
/* {first, last, stride, to}: str.lower() of first + k * stride (up to last) is to + k * stride; Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_lower[][4] = {
    {0x41, 0x5A, 0x1, 0x61}, {0xC0, 0xD6, 0x1, 0xE0}, {0xD8, 0xDE, 0x1, 0xF8},
    {0x100, 0x12E, 0x2, 0x101}, {0x132, 0x136, 0x2, 0x133}, {0x139, 0x147, 0x2, 0x13A},
    {0x14A, 0x176, 0x2, 0x14B}, {0x178, 0x178, 0x1, 0xFF}, {0x179, 0x17D, 0x2, 0x17A},
    {0x181, 0x181, 0x1, 0x253}, {0x182, 0x184, 0x2, 0x183}, {0x186, 0x186, 0x1, 0x254},
    {0x187, 0x187, 0x1, 0x188}, {0x189, 0x18A, 0x1, 0x256}, {0x18B, 0x18B, 0x1, 0x18C},
    {0x18E, 0x18E, 0x1, 0x1DD}, {0x18F, 0x18F, 0x1, 0x259}, {0x190, 0x190, 0x1, 0x25B},
    {0x191, 0x191, 0x1, 0x192}, {0x193, 0x193, 0x1, 0x260}, {0x194, 0x194, 0x1, 0x263},
    {0x196, 0x196, 0x1, 0x269}, {0x197, 0x197, 0x1, 0x268}, {0x198, 0x198, 0x1, 0x199},
    {0x19C, 0x19C, 0x1, 0x26F}, {0x19D, 0x19D, 0x1, 0x272}, {0x19F, 0x19F, 0x1, 0x275},
    {0x1A0, 0x1A4, 0x2, 0x1A1}, {0x1A6, 0x1A6, 0x1, 0x280}, {0x1A7, 0x1A7, 0x1, 0x1A8},
    {0x1A9, 0x1A9, 0x1, 0x283}, {0x1AC, 0x1AC, 0x1, 0x1AD}, {0x1AE, 0x1AE, 0x1, 0x288},
    {0x1AF, 0x1AF, 0x1, 0x1B0}, {0x1B1, 0x1B2, 0x1, 0x28A}, {0x1B3, 0x1B5, 0x2, 0x1B4},
    {0x1B7, 0x1B7, 0x1, 0x292}, {0x1B8, 0x1B8, 0x1, 0x1B9}, {0x1BC, 0x1BC, 0x1, 0x1BD},
    {0x1C4, 0x1C4, 0x1, 0x1C6}, {0x1C5, 0x1C5, 0x1, 0x1C6}, {0x1C7, 0x1C7, 0x1, 0x1C9},
    {0x1C8, 0x1C8, 0x1, 0x1C9}, {0x1CA, 0x1CA, 0x1, 0x1CC}, {0x1CB, 0x1DB, 0x2, 0x1CC},
    {0x1DE, 0x1EE, 0x2, 0x1DF}, {0x1F1, 0x1F1, 0x1, 0x1F3}, {0x1F2, 0x1F4, 0x2, 0x1F3},
    {0x1F6, 0x1F6, 0x1, 0x195}, {0x1F7, 0x1F7, 0x1, 0x1BF}, {0x1F8, 0x21E, 0x2, 0x1F9},
    {0x220, 0x220, 0x1, 0x19E}, {0x222, 0x232, 0x2, 0x223}, {0x23A, 0x23A, 0x1, 0x2C65},
    {0x23B, 0x23B, 0x1, 0x23C}, {0x23D, 0x23D, 0x1, 0x19A}, {0x23E, 0x23E, 0x1, 0x2C66},
    {0x241, 0x241, 0x1, 0x242}, {0x243, 0x243, 0x1, 0x180}, {0x244, 0x244, 0x1, 0x289},
    {0x245, 0x245, 0x1, 0x28C}, {0x246, 0x24E, 0x2, 0x247}, {0x370, 0x372, 0x2, 0x371},
    {0x376, 0x376, 0x1, 0x377}, {0x37F, 0x37F, 0x1, 0x3F3}, {0x386, 0x386, 0x1, 0x3AC},
    {0x388, 0x38A, 0x1, 0x3AD}, {0x38C, 0x38C, 0x1, 0x3CC}, {0x38E, 0x38F, 0x1, 0x3CD},
    {0x391, 0x3A1, 0x1, 0x3B1}, {0x3A3, 0x3AB, 0x1, 0x3C3}, {0x3CF, 0x3CF, 0x1, 0x3D7},
    {0x3D8, 0x3EE, 0x2, 0x3D9}, {0x3F4, 0x3F4, 0x1, 0x3B8}, {0x3F7, 0x3F7, 0x1, 0x3F8},
    {0x3F9, 0x3F9, 0x1, 0x3F2}, {0x3FA, 0x3FA, 0x1, 0x3FB}, {0x3FD, 0x3FF, 0x1, 0x37B},
    {0x400, 0x40F, 0x1, 0x450}, {0x410, 0x42F, 0x1, 0x430}, {0x460, 0x480, 0x2, 0x461},
    {0x48A, 0x4BE, 0x2, 0x48B}, {0x4C0, 0x4C0, 0x1, 0x4CF}, {0x4C1, 0x4CD, 0x2, 0x4C2},
    {0x4D0, 0x52E, 0x2, 0x4D1}, {0x531, 0x556, 0x1, 0x561}, {0x10A0, 0x10C5, 0x1, 0x2D00},
    {0x10C7, 0x10C7, 0x1, 0x2D27}, {0x10CD, 0x10CD, 0x1, 0x2D2D}, {0x13A0, 0x13EF, 0x1, 0xAB70},
    {0x13F0, 0x13F5, 0x1, 0x13F8}, {0x1C90, 0x1CBA, 0x1, 0x10D0}, {0x1CBD, 0x1CBF, 0x1, 0x10FD},
    {0x1E00, 0x1E94, 0x2, 0x1E01}, {0x1E9E, 0x1E9E, 0x1, 0xDF}, {0x1EA0, 0x1EFE, 0x2, 0x1EA1},
    {0x1F08, 0x1F0F, 0x1, 0x1F00}, {0x1F18, 0x1F1D, 0x1, 0x1F10}, {0x1F28, 0x1F2F, 0x1, 0x1F20},
    {0x1F38, 0x1F3F, 0x1, 0x1F30}, {0x1F48, 0x1F4D, 0x1, 0x1F40}, {0x1F59, 0x1F5F, 0x2, 0x1F51},
    {0x1F68, 0x1F6F, 0x1, 0x1F60}, {0x1F88, 0x1F8F, 0x1, 0x1F80}, {0x1F98, 0x1F9F, 0x1, 0x1F90},
    {0x1FA8, 0x1FAF, 0x1, 0x1FA0}, {0x1FB8, 0x1FB9, 0x1, 0x1FB0}, {0x1FBA, 0x1FBB, 0x1, 0x1F70},
    {0x1FBC, 0x1FBC, 0x1, 0x1FB3}, {0x1FC8, 0x1FCB, 0x1, 0x1F72}, {0x1FCC, 0x1FCC, 0x1, 0x1FC3},
    {0x1FD8, 0x1FD9, 0x1, 0x1FD0}, {0x1FDA, 0x1FDB, 0x1, 0x1F76}, {0x1FE8, 0x1FE9, 0x1, 0x1FE0},
    {0x1FEA, 0x1FEB, 0x1, 0x1F7A}, {0x1FEC, 0x1FEC, 0x1, 0x1FE5}, {0x1FF8, 0x1FF9, 0x1, 0x1F78},
    {0x1FFA, 0x1FFB, 0x1, 0x1F7C}, {0x1FFC, 0x1FFC, 0x1, 0x1FF3}, {0x2126, 0x2126, 0x1, 0x3C9},
    {0x212A, 0x212A, 0x1, 0x6B}, {0x212B, 0x212B, 0x1, 0xE5}, {0x2132, 0x2132, 0x1, 0x214E},
    {0x2160, 0x216F, 0x1, 0x2170}, {0x2183, 0x2183, 0x1, 0x2184}, {0x24B6, 0x24CF, 0x1, 0x24D0},
    {0x2C00, 0x2C2F, 0x1, 0x2C30}, {0x2C60, 0x2C60, 0x1, 0x2C61}, {0x2C62, 0x2C62, 0x1, 0x26B},
    {0x2C63, 0x2C63, 0x1, 0x1D7D}, {0x2C64, 0x2C64, 0x1, 0x27D}, {0x2C67, 0x2C6B, 0x2, 0x2C68},
    {0x2C6D, 0x2C6D, 0x1, 0x251}, {0x2C6E, 0x2C6E, 0x1, 0x271}, {0x2C6F, 0x2C6F, 0x1, 0x250},
    {0x2C70, 0x2C70, 0x1, 0x252}, {0x2C72, 0x2C72, 0x1, 0x2C73}, {0x2C75, 0x2C75, 0x1, 0x2C76},
    {0x2C7E, 0x2C7F, 0x1, 0x23F}, {0x2C80, 0x2CE2, 0x2, 0x2C81}, {0x2CEB, 0x2CED, 0x2, 0x2CEC},
    {0x2CF2, 0x2CF2, 0x1, 0x2CF3}, {0xA640, 0xA66C, 0x2, 0xA641}, {0xA680, 0xA69A, 0x2, 0xA681},
    {0xA722, 0xA72E, 0x2, 0xA723}, {0xA732, 0xA76E, 0x2, 0xA733}, {0xA779, 0xA77B, 0x2, 0xA77A},
    {0xA77D, 0xA77D, 0x1, 0x1D79}, {0xA77E, 0xA786, 0x2, 0xA77F}, {0xA78B, 0xA78B, 0x1, 0xA78C},
    {0xA78D, 0xA78D, 0x1, 0x265}, {0xA790, 0xA792, 0x2, 0xA791}, {0xA796, 0xA7A8, 0x2, 0xA797},
    {0xA7AA, 0xA7AA, 0x1, 0x266}, {0xA7AB, 0xA7AB, 0x1, 0x25C}, {0xA7AC, 0xA7AC, 0x1, 0x261},
    {0xA7AD, 0xA7AD, 0x1, 0x26C}, {0xA7AE, 0xA7AE, 0x1, 0x26A}, {0xA7B0, 0xA7B0, 0x1, 0x29E},
    {0xA7B1, 0xA7B1, 0x1, 0x287}, {0xA7B2, 0xA7B2, 0x1, 0x29D}, {0xA7B3, 0xA7B3, 0x1, 0xAB53},
    {0xA7B4, 0xA7C2, 0x2, 0xA7B5}, {0xA7C4, 0xA7C4, 0x1, 0xA794}, {0xA7C5, 0xA7C5, 0x1, 0x282},
    {0xA7C6, 0xA7C6, 0x1, 0x1D8E}, {0xA7C7, 0xA7C9, 0x2, 0xA7C8}, {0xA7D0, 0xA7D0, 0x1, 0xA7D1},
    {0xA7D6, 0xA7D8, 0x2, 0xA7D7}, {0xA7F5, 0xA7F5, 0x1, 0xA7F6}, {0xFF21, 0xFF3A, 0x1, 0xFF41},
    {0x10400, 0x10427, 0x1, 0x10428}, {0x104B0, 0x104D3, 0x1, 0x104D8},
    {0x10570, 0x1057A, 0x1, 0x10597}, {0x1057C, 0x1058A, 0x1, 0x105A3},
    {0x1058C, 0x10592, 0x1, 0x105B3}, {0x10594, 0x10595, 0x1, 0x105BB},
    {0x10C80, 0x10CB2, 0x1, 0x10CC0}, {0x118A0, 0x118BF, 0x1, 0x118C0},
    {0x16E40, 0x16E5F, 0x1, 0x16E60}, {0x1E900, 0x1E921, 0x1, 0x1E922},
};
/* {c, first, second, third}: str.lower() of c where it is 2 or 3 code points (third 0: two); Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_lower_special[][4] = {
    {0x130, 0x69, 0x307, 0x0},
};
/* {first, last, stride, to}: str.capitalize() of first + k * stride (up to last), its titlecase, is to + k * stride; Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_title[][4] = {
    {0x61, 0x7A, 0x1, 0x41}, {0xB5, 0xB5, 0x1, 0x39C}, {0xE0, 0xF6, 0x1, 0xC0}, {0xF8, 0xFE, 0x1, 0xD8},
    {0xFF, 0xFF, 0x1, 0x178}, {0x101, 0x12F, 0x2, 0x100}, {0x131, 0x131, 0x1, 0x49},
    {0x133, 0x137, 0x2, 0x132}, {0x13A, 0x148, 0x2, 0x139}, {0x14B, 0x177, 0x2, 0x14A},
    {0x17A, 0x17E, 0x2, 0x179}, {0x17F, 0x17F, 0x1, 0x53}, {0x180, 0x180, 0x1, 0x243},
    {0x183, 0x185, 0x2, 0x182}, {0x188, 0x188, 0x1, 0x187}, {0x18C, 0x18C, 0x1, 0x18B},
    {0x192, 0x192, 0x1, 0x191}, {0x195, 0x195, 0x1, 0x1F6}, {0x199, 0x199, 0x1, 0x198},
    {0x19A, 0x19A, 0x1, 0x23D}, {0x19E, 0x19E, 0x1, 0x220}, {0x1A1, 0x1A5, 0x2, 0x1A0},
    {0x1A8, 0x1A8, 0x1, 0x1A7}, {0x1AD, 0x1AD, 0x1, 0x1AC}, {0x1B0, 0x1B0, 0x1, 0x1AF},
    {0x1B4, 0x1B6, 0x2, 0x1B3}, {0x1B9, 0x1B9, 0x1, 0x1B8}, {0x1BD, 0x1BD, 0x1, 0x1BC},
    {0x1BF, 0x1BF, 0x1, 0x1F7}, {0x1C4, 0x1C4, 0x1, 0x1C5}, {0x1C6, 0x1C6, 0x1, 0x1C5},
    {0x1C7, 0x1C7, 0x1, 0x1C8}, {0x1C9, 0x1C9, 0x1, 0x1C8}, {0x1CA, 0x1CA, 0x1, 0x1CB},
    {0x1CC, 0x1DC, 0x2, 0x1CB}, {0x1DD, 0x1DD, 0x1, 0x18E}, {0x1DF, 0x1EF, 0x2, 0x1DE},
    {0x1F1, 0x1F1, 0x1, 0x1F2}, {0x1F3, 0x1F5, 0x2, 0x1F2}, {0x1F9, 0x21F, 0x2, 0x1F8},
    {0x223, 0x233, 0x2, 0x222}, {0x23C, 0x23C, 0x1, 0x23B}, {0x23F, 0x240, 0x1, 0x2C7E},
    {0x242, 0x242, 0x1, 0x241}, {0x247, 0x24F, 0x2, 0x246}, {0x250, 0x250, 0x1, 0x2C6F},
    {0x251, 0x251, 0x1, 0x2C6D}, {0x252, 0x252, 0x1, 0x2C70}, {0x253, 0x253, 0x1, 0x181},
    {0x254, 0x254, 0x1, 0x186}, {0x256, 0x257, 0x1, 0x189}, {0x259, 0x259, 0x1, 0x18F},
    {0x25B, 0x25B, 0x1, 0x190}, {0x25C, 0x25C, 0x1, 0xA7AB}, {0x260, 0x260, 0x1, 0x193},
    {0x261, 0x261, 0x1, 0xA7AC}, {0x263, 0x263, 0x1, 0x194}, {0x265, 0x265, 0x1, 0xA78D},
    {0x266, 0x266, 0x1, 0xA7AA}, {0x268, 0x268, 0x1, 0x197}, {0x269, 0x269, 0x1, 0x196},
    {0x26A, 0x26A, 0x1, 0xA7AE}, {0x26B, 0x26B, 0x1, 0x2C62}, {0x26C, 0x26C, 0x1, 0xA7AD},
    {0x26F, 0x26F, 0x1, 0x19C}, {0x271, 0x271, 0x1, 0x2C6E}, {0x272, 0x272, 0x1, 0x19D},
    {0x275, 0x275, 0x1, 0x19F}, {0x27D, 0x27D, 0x1, 0x2C64}, {0x280, 0x280, 0x1, 0x1A6},
    {0x282, 0x282, 0x1, 0xA7C5}, {0x283, 0x283, 0x1, 0x1A9}, {0x287, 0x287, 0x1, 0xA7B1},
    {0x288, 0x288, 0x1, 0x1AE}, {0x289, 0x289, 0x1, 0x244}, {0x28A, 0x28B, 0x1, 0x1B1},
    {0x28C, 0x28C, 0x1, 0x245}, {0x292, 0x292, 0x1, 0x1B7}, {0x29D, 0x29D, 0x1, 0xA7B2},
    {0x29E, 0x29E, 0x1, 0xA7B0}, {0x345, 0x345, 0x1, 0x399}, {0x371, 0x373, 0x2, 0x370},
    {0x377, 0x377, 0x1, 0x376}, {0x37B, 0x37D, 0x1, 0x3FD}, {0x3AC, 0x3AC, 0x1, 0x386},
    {0x3AD, 0x3AF, 0x1, 0x388}, {0x3B1, 0x3C1, 0x1, 0x391}, {0x3C2, 0x3C2, 0x1, 0x3A3},
    {0x3C3, 0x3CB, 0x1, 0x3A3}, {0x3CC, 0x3CC, 0x1, 0x38C}, {0x3CD, 0x3CE, 0x1, 0x38E},
    {0x3D0, 0x3D0, 0x1, 0x392}, {0x3D1, 0x3D1, 0x1, 0x398}, {0x3D5, 0x3D5, 0x1, 0x3A6},
    {0x3D6, 0x3D6, 0x1, 0x3A0}, {0x3D7, 0x3D7, 0x1, 0x3CF}, {0x3D9, 0x3EF, 0x2, 0x3D8},
    {0x3F0, 0x3F0, 0x1, 0x39A}, {0x3F1, 0x3F1, 0x1, 0x3A1}, {0x3F2, 0x3F2, 0x1, 0x3F9},
    {0x3F3, 0x3F3, 0x1, 0x37F}, {0x3F5, 0x3F5, 0x1, 0x395}, {0x3F8, 0x3F8, 0x1, 0x3F7},
    {0x3FB, 0x3FB, 0x1, 0x3FA}, {0x430, 0x44F, 0x1, 0x410}, {0x450, 0x45F, 0x1, 0x400},
    {0x461, 0x481, 0x2, 0x460}, {0x48B, 0x4BF, 0x2, 0x48A}, {0x4C2, 0x4CE, 0x2, 0x4C1},
    {0x4CF, 0x4CF, 0x1, 0x4C0}, {0x4D1, 0x52F, 0x2, 0x4D0}, {0x561, 0x586, 0x1, 0x531},
    {0x13F8, 0x13FD, 0x1, 0x13F0}, {0x1C80, 0x1C80, 0x1, 0x412}, {0x1C81, 0x1C81, 0x1, 0x414},
    {0x1C82, 0x1C82, 0x1, 0x41E}, {0x1C83, 0x1C84, 0x1, 0x421}, {0x1C85, 0x1C85, 0x1, 0x422},
    {0x1C86, 0x1C86, 0x1, 0x42A}, {0x1C87, 0x1C87, 0x1, 0x462}, {0x1C88, 0x1C88, 0x1, 0xA64A},
    {0x1D79, 0x1D79, 0x1, 0xA77D}, {0x1D7D, 0x1D7D, 0x1, 0x2C63}, {0x1D8E, 0x1D8E, 0x1, 0xA7C6},
    {0x1E01, 0x1E95, 0x2, 0x1E00}, {0x1E9B, 0x1E9B, 0x1, 0x1E60}, {0x1EA1, 0x1EFF, 0x2, 0x1EA0},
    {0x1F00, 0x1F07, 0x1, 0x1F08}, {0x1F10, 0x1F15, 0x1, 0x1F18}, {0x1F20, 0x1F27, 0x1, 0x1F28},
    {0x1F30, 0x1F37, 0x1, 0x1F38}, {0x1F40, 0x1F45, 0x1, 0x1F48}, {0x1F51, 0x1F57, 0x2, 0x1F59},
    {0x1F60, 0x1F67, 0x1, 0x1F68}, {0x1F70, 0x1F71, 0x1, 0x1FBA}, {0x1F72, 0x1F75, 0x1, 0x1FC8},
    {0x1F76, 0x1F77, 0x1, 0x1FDA}, {0x1F78, 0x1F79, 0x1, 0x1FF8}, {0x1F7A, 0x1F7B, 0x1, 0x1FEA},
    {0x1F7C, 0x1F7D, 0x1, 0x1FFA}, {0x1F80, 0x1F87, 0x1, 0x1F88}, {0x1F90, 0x1F97, 0x1, 0x1F98},
    {0x1FA0, 0x1FA7, 0x1, 0x1FA8}, {0x1FB0, 0x1FB1, 0x1, 0x1FB8}, {0x1FB3, 0x1FB3, 0x1, 0x1FBC},
    {0x1FBE, 0x1FBE, 0x1, 0x399}, {0x1FC3, 0x1FC3, 0x1, 0x1FCC}, {0x1FD0, 0x1FD1, 0x1, 0x1FD8},
    {0x1FE0, 0x1FE1, 0x1, 0x1FE8}, {0x1FE5, 0x1FE5, 0x1, 0x1FEC}, {0x1FF3, 0x1FF3, 0x1, 0x1FFC},
    {0x214E, 0x214E, 0x1, 0x2132}, {0x2170, 0x217F, 0x1, 0x2160}, {0x2184, 0x2184, 0x1, 0x2183},
    {0x24D0, 0x24E9, 0x1, 0x24B6}, {0x2C30, 0x2C5F, 0x1, 0x2C00}, {0x2C61, 0x2C61, 0x1, 0x2C60},
    {0x2C65, 0x2C65, 0x1, 0x23A}, {0x2C66, 0x2C66, 0x1, 0x23E}, {0x2C68, 0x2C6C, 0x2, 0x2C67},
    {0x2C73, 0x2C73, 0x1, 0x2C72}, {0x2C76, 0x2C76, 0x1, 0x2C75}, {0x2C81, 0x2CE3, 0x2, 0x2C80},
    {0x2CEC, 0x2CEE, 0x2, 0x2CEB}, {0x2CF3, 0x2CF3, 0x1, 0x2CF2}, {0x2D00, 0x2D25, 0x1, 0x10A0},
    {0x2D27, 0x2D27, 0x1, 0x10C7}, {0x2D2D, 0x2D2D, 0x1, 0x10CD}, {0xA641, 0xA66D, 0x2, 0xA640},
    {0xA681, 0xA69B, 0x2, 0xA680}, {0xA723, 0xA72F, 0x2, 0xA722}, {0xA733, 0xA76F, 0x2, 0xA732},
    {0xA77A, 0xA77C, 0x2, 0xA779}, {0xA77F, 0xA787, 0x2, 0xA77E}, {0xA78C, 0xA78C, 0x1, 0xA78B},
    {0xA791, 0xA793, 0x2, 0xA790}, {0xA794, 0xA794, 0x1, 0xA7C4}, {0xA797, 0xA7A9, 0x2, 0xA796},
    {0xA7B5, 0xA7C3, 0x2, 0xA7B4}, {0xA7C8, 0xA7CA, 0x2, 0xA7C7}, {0xA7D1, 0xA7D1, 0x1, 0xA7D0},
    {0xA7D7, 0xA7D9, 0x2, 0xA7D6}, {0xA7F6, 0xA7F6, 0x1, 0xA7F5}, {0xAB53, 0xAB53, 0x1, 0xA7B3},
    {0xAB70, 0xABBF, 0x1, 0x13A0}, {0xFF41, 0xFF5A, 0x1, 0xFF21}, {0x10428, 0x1044F, 0x1, 0x10400},
    {0x104D8, 0x104FB, 0x1, 0x104B0}, {0x10597, 0x105A1, 0x1, 0x10570},
    {0x105A3, 0x105B1, 0x1, 0x1057C}, {0x105B3, 0x105B9, 0x1, 0x1058C},
    {0x105BB, 0x105BC, 0x1, 0x10594}, {0x10CC0, 0x10CF2, 0x1, 0x10C80},
    {0x118C0, 0x118DF, 0x1, 0x118A0}, {0x16E60, 0x16E7F, 0x1, 0x16E40},
    {0x1E922, 0x1E943, 0x1, 0x1E900},
};
/* {c, first, second, third}: str.capitalize() of c where it is 2 or 3 code points (third 0: two); Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_title_special[][4] = {
    {0xDF, 0x53, 0x73, 0x0}, {0x149, 0x2BC, 0x4E, 0x0}, {0x1F0, 0x4A, 0x30C, 0x0},
    {0x390, 0x399, 0x308, 0x301}, {0x3B0, 0x3A5, 0x308, 0x301}, {0x587, 0x535, 0x582, 0x0},
    {0x1E96, 0x48, 0x331, 0x0}, {0x1E97, 0x54, 0x308, 0x0}, {0x1E98, 0x57, 0x30A, 0x0},
    {0x1E99, 0x59, 0x30A, 0x0}, {0x1E9A, 0x41, 0x2BE, 0x0}, {0x1F50, 0x3A5, 0x313, 0x0},
    {0x1F52, 0x3A5, 0x313, 0x300}, {0x1F54, 0x3A5, 0x313, 0x301}, {0x1F56, 0x3A5, 0x313, 0x342},
    {0x1FB2, 0x1FBA, 0x345, 0x0}, {0x1FB4, 0x386, 0x345, 0x0}, {0x1FB6, 0x391, 0x342, 0x0},
    {0x1FB7, 0x391, 0x342, 0x345}, {0x1FC2, 0x1FCA, 0x345, 0x0}, {0x1FC4, 0x389, 0x345, 0x0},
    {0x1FC6, 0x397, 0x342, 0x0}, {0x1FC7, 0x397, 0x342, 0x345}, {0x1FD2, 0x399, 0x308, 0x300},
    {0x1FD3, 0x399, 0x308, 0x301}, {0x1FD6, 0x399, 0x342, 0x0}, {0x1FD7, 0x399, 0x308, 0x342},
    {0x1FE2, 0x3A5, 0x308, 0x300}, {0x1FE3, 0x3A5, 0x308, 0x301}, {0x1FE4, 0x3A1, 0x313, 0x0},
    {0x1FE6, 0x3A5, 0x342, 0x0}, {0x1FE7, 0x3A5, 0x308, 0x342}, {0x1FF2, 0x1FFA, 0x345, 0x0},
    {0x1FF4, 0x38F, 0x345, 0x0}, {0x1FF6, 0x3A9, 0x342, 0x0}, {0x1FF7, 0x3A9, 0x342, 0x345},
    {0xFB00, 0x46, 0x66, 0x0}, {0xFB01, 0x46, 0x69, 0x0}, {0xFB02, 0x46, 0x6C, 0x0},
    {0xFB03, 0x46, 0x66, 0x69}, {0xFB04, 0x46, 0x66, 0x6C}, {0xFB05, 0x53, 0x74, 0x0},
    {0xFB06, 0x53, 0x74, 0x0}, {0xFB13, 0x544, 0x576, 0x0}, {0xFB14, 0x544, 0x565, 0x0},
    {0xFB15, 0x544, 0x56B, 0x0}, {0xFB16, 0x54E, 0x576, 0x0}, {0xFB17, 0x544, 0x56D, 0x0},
};
/* Case_Ignorable as CPython's handle_capital_sigma reads it, Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_case_ignorable[][2] = {
    {0x27, 0x27}, {0x2E, 0x2E}, {0x3A, 0x3A}, {0x5E, 0x5E}, {0x60, 0x60}, {0xA8, 0xA8}, {0xAD, 0xAD},
    {0xAF, 0xAF}, {0xB4, 0xB4}, {0xB7, 0xB8}, {0x2B0, 0x36F}, {0x374, 0x375}, {0x37A, 0x37A},
    {0x384, 0x385}, {0x387, 0x387}, {0x483, 0x489}, {0x559, 0x559}, {0x55F, 0x55F}, {0x591, 0x5BD},
    {0x5BF, 0x5BF}, {0x5C1, 0x5C2}, {0x5C4, 0x5C5}, {0x5C7, 0x5C7}, {0x5F4, 0x5F4}, {0x600, 0x605},
    {0x610, 0x61A}, {0x61C, 0x61C}, {0x640, 0x640}, {0x64B, 0x65F}, {0x670, 0x670}, {0x6D6, 0x6DD},
    {0x6DF, 0x6E8}, {0x6EA, 0x6ED}, {0x70F, 0x70F}, {0x711, 0x711}, {0x730, 0x74A}, {0x7A6, 0x7B0},
    {0x7EB, 0x7F5}, {0x7FA, 0x7FA}, {0x7FD, 0x7FD}, {0x816, 0x82D}, {0x859, 0x85B}, {0x888, 0x888},
    {0x890, 0x891}, {0x898, 0x89F}, {0x8C9, 0x902}, {0x93A, 0x93A}, {0x93C, 0x93C}, {0x941, 0x948},
    {0x94D, 0x94D}, {0x951, 0x957}, {0x962, 0x963}, {0x971, 0x971}, {0x981, 0x981}, {0x9BC, 0x9BC},
    {0x9C1, 0x9C4}, {0x9CD, 0x9CD}, {0x9E2, 0x9E3}, {0x9FE, 0x9FE}, {0xA01, 0xA02}, {0xA3C, 0xA3C},
    {0xA41, 0xA42}, {0xA47, 0xA48}, {0xA4B, 0xA4D}, {0xA51, 0xA51}, {0xA70, 0xA71}, {0xA75, 0xA75},
    {0xA81, 0xA82}, {0xABC, 0xABC}, {0xAC1, 0xAC5}, {0xAC7, 0xAC8}, {0xACD, 0xACD}, {0xAE2, 0xAE3},
    {0xAFA, 0xAFF}, {0xB01, 0xB01}, {0xB3C, 0xB3C}, {0xB3F, 0xB3F}, {0xB41, 0xB44}, {0xB4D, 0xB4D},
    {0xB55, 0xB56}, {0xB62, 0xB63}, {0xB82, 0xB82}, {0xBC0, 0xBC0}, {0xBCD, 0xBCD}, {0xC00, 0xC00},
    {0xC04, 0xC04}, {0xC3C, 0xC3C}, {0xC3E, 0xC40}, {0xC46, 0xC48}, {0xC4A, 0xC4D}, {0xC55, 0xC56},
    {0xC62, 0xC63}, {0xC81, 0xC81}, {0xCBC, 0xCBC}, {0xCBF, 0xCBF}, {0xCC6, 0xCC6}, {0xCCC, 0xCCD},
    {0xCE2, 0xCE3}, {0xD00, 0xD01}, {0xD3B, 0xD3C}, {0xD41, 0xD44}, {0xD4D, 0xD4D}, {0xD62, 0xD63},
    {0xD81, 0xD81}, {0xDCA, 0xDCA}, {0xDD2, 0xDD4}, {0xDD6, 0xDD6}, {0xE31, 0xE31}, {0xE34, 0xE3A},
    {0xE46, 0xE4E}, {0xEB1, 0xEB1}, {0xEB4, 0xEBC}, {0xEC6, 0xEC6}, {0xEC8, 0xECD}, {0xF18, 0xF19},
    {0xF35, 0xF35}, {0xF37, 0xF37}, {0xF39, 0xF39}, {0xF71, 0xF7E}, {0xF80, 0xF84}, {0xF86, 0xF87},
    {0xF8D, 0xF97}, {0xF99, 0xFBC}, {0xFC6, 0xFC6}, {0x102D, 0x1030}, {0x1032, 0x1037},
    {0x1039, 0x103A}, {0x103D, 0x103E}, {0x1058, 0x1059}, {0x105E, 0x1060}, {0x1071, 0x1074},
    {0x1082, 0x1082}, {0x1085, 0x1086}, {0x108D, 0x108D}, {0x109D, 0x109D}, {0x10FC, 0x10FC},
    {0x135D, 0x135F}, {0x1712, 0x1714}, {0x1732, 0x1733}, {0x1752, 0x1753}, {0x1772, 0x1773},
    {0x17B4, 0x17B5}, {0x17B7, 0x17BD}, {0x17C6, 0x17C6}, {0x17C9, 0x17D3}, {0x17D7, 0x17D7},
    {0x17DD, 0x17DD}, {0x180B, 0x180F}, {0x1843, 0x1843}, {0x1885, 0x1886}, {0x18A9, 0x18A9},
    {0x1920, 0x1922}, {0x1927, 0x1928}, {0x1932, 0x1932}, {0x1939, 0x193B}, {0x1A17, 0x1A18},
    {0x1A1B, 0x1A1B}, {0x1A56, 0x1A56}, {0x1A58, 0x1A5E}, {0x1A60, 0x1A60}, {0x1A62, 0x1A62},
    {0x1A65, 0x1A6C}, {0x1A73, 0x1A7C}, {0x1A7F, 0x1A7F}, {0x1AA7, 0x1AA7}, {0x1AB0, 0x1ACE},
    {0x1B00, 0x1B03}, {0x1B34, 0x1B34}, {0x1B36, 0x1B3A}, {0x1B3C, 0x1B3C}, {0x1B42, 0x1B42},
    {0x1B6B, 0x1B73}, {0x1B80, 0x1B81}, {0x1BA2, 0x1BA5}, {0x1BA8, 0x1BA9}, {0x1BAB, 0x1BAD},
    {0x1BE6, 0x1BE6}, {0x1BE8, 0x1BE9}, {0x1BED, 0x1BED}, {0x1BEF, 0x1BF1}, {0x1C2C, 0x1C33},
    {0x1C36, 0x1C37}, {0x1C78, 0x1C7D}, {0x1CD0, 0x1CD2}, {0x1CD4, 0x1CE0}, {0x1CE2, 0x1CE8},
    {0x1CED, 0x1CED}, {0x1CF4, 0x1CF4}, {0x1CF8, 0x1CF9}, {0x1D2C, 0x1D6A}, {0x1D78, 0x1D78},
    {0x1D9B, 0x1DFF}, {0x1FBD, 0x1FBD}, {0x1FBF, 0x1FC1}, {0x1FCD, 0x1FCF}, {0x1FDD, 0x1FDF},
    {0x1FED, 0x1FEF}, {0x1FFD, 0x1FFE}, {0x200B, 0x200F}, {0x2018, 0x2019}, {0x2024, 0x2024},
    {0x2027, 0x2027}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F}, {0x2071, 0x2071},
    {0x207F, 0x207F}, {0x2090, 0x209C}, {0x20D0, 0x20F0}, {0x2C7C, 0x2C7D}, {0x2CEF, 0x2CF1},
    {0x2D6F, 0x2D6F}, {0x2D7F, 0x2D7F}, {0x2DE0, 0x2DFF}, {0x2E2F, 0x2E2F}, {0x3005, 0x3005},
    {0x302A, 0x302D}, {0x3031, 0x3035}, {0x303B, 0x303B}, {0x3099, 0x309E}, {0x30FC, 0x30FE},
    {0xA015, 0xA015}, {0xA4F8, 0xA4FD}, {0xA60C, 0xA60C}, {0xA66F, 0xA672}, {0xA674, 0xA67D},
    {0xA67F, 0xA67F}, {0xA69C, 0xA69F}, {0xA6F0, 0xA6F1}, {0xA700, 0xA721}, {0xA770, 0xA770},
    {0xA788, 0xA78A}, {0xA7F2, 0xA7F4}, {0xA7F8, 0xA7F9}, {0xA802, 0xA802}, {0xA806, 0xA806},
    {0xA80B, 0xA80B}, {0xA825, 0xA826}, {0xA82C, 0xA82C}, {0xA8C4, 0xA8C5}, {0xA8E0, 0xA8F1},
    {0xA8FF, 0xA8FF}, {0xA926, 0xA92D}, {0xA947, 0xA951}, {0xA980, 0xA982}, {0xA9B3, 0xA9B3},
    {0xA9B6, 0xA9B9}, {0xA9BC, 0xA9BD}, {0xA9CF, 0xA9CF}, {0xA9E5, 0xA9E6}, {0xAA29, 0xAA2E},
    {0xAA31, 0xAA32}, {0xAA35, 0xAA36}, {0xAA43, 0xAA43}, {0xAA4C, 0xAA4C}, {0xAA70, 0xAA70},
    {0xAA7C, 0xAA7C}, {0xAAB0, 0xAAB0}, {0xAAB2, 0xAAB4}, {0xAAB7, 0xAAB8}, {0xAABE, 0xAABF},
    {0xAAC1, 0xAAC1}, {0xAADD, 0xAADD}, {0xAAEC, 0xAAED}, {0xAAF3, 0xAAF4}, {0xAAF6, 0xAAF6},
    {0xAB5B, 0xAB5F}, {0xAB69, 0xAB6B}, {0xABE5, 0xABE5}, {0xABE8, 0xABE8}, {0xABED, 0xABED},
    {0xFB1E, 0xFB1E}, {0xFBB2, 0xFBC2}, {0xFE00, 0xFE0F}, {0xFE13, 0xFE13}, {0xFE20, 0xFE2F},
    {0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFEFF, 0xFEFF}, {0xFF07, 0xFF07}, {0xFF0E, 0xFF0E},
    {0xFF1A, 0xFF1A}, {0xFF3E, 0xFF3E}, {0xFF40, 0xFF40}, {0xFF70, 0xFF70}, {0xFF9E, 0xFF9F},
    {0xFFE3, 0xFFE3}, {0xFFF9, 0xFFFB}, {0x101FD, 0x101FD}, {0x102E0, 0x102E0}, {0x10376, 0x1037A},
    {0x10780, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x10A01, 0x10A03}, {0x10A05, 0x10A06},
    {0x10A0C, 0x10A0F}, {0x10A38, 0x10A3A}, {0x10A3F, 0x10A3F}, {0x10AE5, 0x10AE6}, {0x10D24, 0x10D27},
    {0x10EAB, 0x10EAC}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85}, {0x11001, 0x11001}, {0x11038, 0x11046},
    {0x11070, 0x11070}, {0x11073, 0x11074}, {0x1107F, 0x11081}, {0x110B3, 0x110B6}, {0x110B9, 0x110BA},
    {0x110BD, 0x110BD}, {0x110C2, 0x110C2}, {0x110CD, 0x110CD}, {0x11100, 0x11102}, {0x11127, 0x1112B},
    {0x1112D, 0x11134}, {0x11173, 0x11173}, {0x11180, 0x11181}, {0x111B6, 0x111BE}, {0x111C9, 0x111CC},
    {0x111CF, 0x111CF}, {0x1122F, 0x11231}, {0x11234, 0x11234}, {0x11236, 0x11237}, {0x1123E, 0x1123E},
    {0x112DF, 0x112DF}, {0x112E3, 0x112EA}, {0x11300, 0x11301}, {0x1133B, 0x1133C}, {0x11340, 0x11340},
    {0x11366, 0x1136C}, {0x11370, 0x11374}, {0x11438, 0x1143F}, {0x11442, 0x11444}, {0x11446, 0x11446},
    {0x1145E, 0x1145E}, {0x114B3, 0x114B8}, {0x114BA, 0x114BA}, {0x114BF, 0x114C0}, {0x114C2, 0x114C3},
    {0x115B2, 0x115B5}, {0x115BC, 0x115BD}, {0x115BF, 0x115C0}, {0x115DC, 0x115DD}, {0x11633, 0x1163A},
    {0x1163D, 0x1163D}, {0x1163F, 0x11640}, {0x116AB, 0x116AB}, {0x116AD, 0x116AD}, {0x116B0, 0x116B5},
    {0x116B7, 0x116B7}, {0x1171D, 0x1171F}, {0x11722, 0x11725}, {0x11727, 0x1172B}, {0x1182F, 0x11837},
    {0x11839, 0x1183A}, {0x1193B, 0x1193C}, {0x1193E, 0x1193E}, {0x11943, 0x11943}, {0x119D4, 0x119D7},
    {0x119DA, 0x119DB}, {0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38}, {0x11A3B, 0x11A3E},
    {0x11A47, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B}, {0x11A8A, 0x11A96}, {0x11A98, 0x11A99},
    {0x11C30, 0x11C36}, {0x11C38, 0x11C3D}, {0x11C3F, 0x11C3F}, {0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0},
    {0x11CB2, 0x11CB3}, {0x11CB5, 0x11CB6}, {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D},
    {0x11D3F, 0x11D45}, {0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95}, {0x11D97, 0x11D97},
    {0x11EF3, 0x11EF4}, {0x13430, 0x13438}, {0x16AF0, 0x16AF4}, {0x16B30, 0x16B36}, {0x16B40, 0x16B43},
    {0x16F4F, 0x16F4F}, {0x16F8F, 0x16F9F}, {0x16FE0, 0x16FE1}, {0x16FE3, 0x16FE4}, {0x1AFF0, 0x1AFF3},
    {0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE}, {0x1BC9D, 0x1BC9E}, {0x1BCA0, 0x1BCA3}, {0x1CF00, 0x1CF2D},
    {0x1CF30, 0x1CF46}, {0x1D167, 0x1D169}, {0x1D173, 0x1D182}, {0x1D185, 0x1D18B}, {0x1D1AA, 0x1D1AD},
    {0x1D242, 0x1D244}, {0x1DA00, 0x1DA36}, {0x1DA3B, 0x1DA6C}, {0x1DA75, 0x1DA75}, {0x1DA84, 0x1DA84},
    {0x1DA9B, 0x1DA9F}, {0x1DAA1, 0x1DAAF}, {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021},
    {0x1E023, 0x1E024}, {0x1E026, 0x1E02A}, {0x1E130, 0x1E13D}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF},
    {0x1E8D0, 0x1E8D6}, {0x1E944, 0x1E94B}, {0x1F3FB, 0x1F3FF}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
    {0xE0100, 0xE01EF},
};
/* Cased as CPython's handle_capital_sigma reads it, Python 3.11.7, Unicode 14.0.0 */
static const uint32_t unicode_cased[][2] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xAA, 0xAA}, {0xB5, 0xB5}, {0xBA, 0xBA}, {0xC0, 0xD6}, {0xD8, 0xF6},
    {0xF8, 0x1BA}, {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2B8}, {0x2C0, 0x2C1}, {0x2E0, 0x2E4},
    {0x345, 0x345}, {0x370, 0x373}, {0x376, 0x377}, {0x37A, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386},
    {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F},
    {0x531, 0x556}, {0x560, 0x588}, {0x10A0, 0x10C5}, {0x10C7, 0x10C7}, {0x10CD, 0x10CD},
    {0x10D0, 0x10FA}, {0x10FD, 0x10FF}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C80, 0x1C88},
    {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1DBF}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2071, 0x2071}, {0x207F, 0x207F}, {0x2090, 0x209C},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D},
    {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134},
    {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2160, 0x217F},
    {0x2183, 0x2184}, {0x24B6, 0x24E9}, {0x2C00, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3},
    {0x2D00, 0x2D25}, {0x2D27, 0x2D27}, {0x2D2D, 0x2D2D}, {0xA640, 0xA66D}, {0xA680, 0xA69D},
    {0xA722, 0xA787}, {0xA78B, 0xA78E}, {0xA790, 0xA7CA}, {0xA7D0, 0xA7D1}, {0xA7D3, 0xA7D3},
    {0xA7D5, 0xA7D9}, {0xA7F5, 0xA7F6}, {0xA7F8, 0xA7FA}, {0xAB30, 0xAB5A}, {0xAB5C, 0xAB68},
    {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A},
    {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10570, 0x1057A}, {0x1057C, 0x1058A},
    {0x1058C, 0x10592}, {0x10594, 0x10595}, {0x10597, 0x105A1}, {0x105A3, 0x105B1}, {0x105B3, 0x105B9},
    {0x105BB, 0x105BC}, {0x10780, 0x10780}, {0x10783, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x16E40, 0x16E7F}, {0x1D400, 0x1D454},
    {0x1D456, 0x1D49C}, {0x1D49E, 0x1D49F}, {0x1D4A2, 0x1D4A2}, {0x1D4A5, 0x1D4A6}, {0x1D4A9, 0x1D4AC},
    {0x1D4AE, 0x1D4B9}, {0x1D4BB, 0x1D4BB}, {0x1D4BD, 0x1D4C3}, {0x1D4C5, 0x1D505}, {0x1D507, 0x1D50A},
    {0x1D50D, 0x1D514}, {0x1D516, 0x1D51C}, {0x1D51E, 0x1D539}, {0x1D53B, 0x1D53E}, {0x1D540, 0x1D544},
    {0x1D546, 0x1D546}, {0x1D54A, 0x1D550}, {0x1D552, 0x1D6A5}, {0x1D6A8, 0x1D6C0}, {0x1D6C2, 0x1D6DA},
    {0x1D6DC, 0x1D6FA}, {0x1D6FC, 0x1D714}, {0x1D716, 0x1D734}, {0x1D736, 0x1D74E}, {0x1D750, 0x1D76E},
    {0x1D770, 0x1D788}, {0x1D78A, 0x1D7A8}, {0x1D7AA, 0x1D7C2}, {0x1D7C4, 0x1D7CB}, {0x1DF00, 0x1DF09},
    {0x1DF0B, 0x1DF1E}, {0x1E900, 0x1E943}, {0x1F130, 0x1F149}, {0x1F150, 0x1F169}, {0x1F170, 0x1F189},
};
/* END UNICODE TABLES */


static int in_ranges(const uint32_t (*ranges)[2], size_t n, uint32_t c) {
    size_t low = 0, high = n;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (c < ranges[middle][0]) high = middle;
        else if (c > ranges[middle][1]) low = middle + 1;
        else return 1;
    }
    return 0;
}
#define IN_TABLE(table, c) in_ranges(table, sizeof table / sizeof *table, c)

/* \p{L}, \p{N}, \s (see the tables' comment for which Unicode), ASCII first because it is most text */
static int is_letter(uint32_t c) { return c < 0x80 ? (c | 0x20) - 'a' < 26 : IN_TABLE(unicode_letter, c); }
static int is_number(uint32_t c) { return c < 0x80 ? c - '0' < 10 : IN_TABLE(unicode_number, c); }
static int is_white_space(uint32_t c) { return c < 0x80 ? c == ' ' || (c >= 0x09 && c <= 0x0D) : IN_TABLE(unicode_white_space, c); }

/* ---- Python's case mapping: str.lower() (gsm8k's exact_match, np.char.lower) and str.capitalize()
 * (HellaSwag's ctx_b.capitalize()), from the tables of make_unicode_tables.py */

/* c's full case mapping by one pair of tables (CPython's _PyUnicode_ToLowerFull or _PyUnicode_ToTitleFull
 * in Objects/unicodectype.c): the row {c, first, second, third} of special when c has one (2 or 3 code
 * points, third 0 when two), else to + k * stride from the row {first, last, stride, to} of rows where
 * c = first + k * stride, else c itself */
static void add_case_mapped(Bytes *out, const uint32_t (*special)[4], size_t n_special, const uint32_t (*rows)[4],
                            size_t n_rows, uint32_t c) {
    for (size_t i = 0; i < n_special; i++)
        if (special[i][0] == c) {
            for (int k = 1; k <= 3 && special[i][k]; k++) bytes_add_char(out, special[i][k]);
            return;
        }
    size_t low = 0, high = n_rows;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (c < rows[middle][0]) high = middle;
        else if (c > rows[middle][1]) low = middle + 1;
        else {
            if ((c - rows[middle][0]) % rows[middle][2] == 0) c = rows[middle][3] + (c - rows[middle][0]);
            break;
        }
    }
    bytes_add_char(out, c);
}
#define ADD_CASE_MAPPED(out, special, rows, c) \
    add_case_mapped(out, special, sizeof special / sizeof *special, rows, sizeof rows / sizeof *rows, c)

/* Final sigma (CPython unicodeobject.c handle_capital_sigma; Unicode's Final_Sigma context): U+03A3
 * lowers to U+03C2 when it stands in \p{cased} \p{case-ignorable}* U+03A3 !(\p{case-ignorable}* \p{cased}),
 * else to U+03C3. cased_before: whether the last character before it that is not case-ignorable is cased
 * (0 when there is none); text[after..n) is what follows it. */
static uint32_t lower_sigma(const char *text, size_t after, size_t n, int cased_before) {
    if (!cased_before) return 0x3C3;
    for (size_t at = after; at < n;) {
        uint32_t c = utf8_next(text, &at);
        if (!IN_TABLE(unicode_case_ignorable, c)) return IN_TABLE(unicode_cased, c) ? 0x3C3 : 0x3C2;
    }
    return 0x3C2;
}

/* str.lower() of text[at..n) (CPython do_lower, lower_ucs4): each character's full lowercase mapping,
 * U+03A3 by the final sigma rule, which looks at the characters as they were; cased_before as for
 * lower_sigma, for the characters before at */
static void lower_from(Bytes *out, const char *text, size_t at, size_t n, int cased_before) {
    bytes_add(out, "", 0); /* out->data is set even when text is empty */
    while (at < n) {
        uint32_t c = utf8_next(text, &at);
        if (c == 0x3A3) bytes_add_char(out, lower_sigma(text, at, n, cased_before));
        else ADD_CASE_MAPPED(out, unicode_lower_special, unicode_lower, c);
        if (!IN_TABLE(unicode_case_ignorable, c)) cased_before = IN_TABLE(unicode_cased, c);
    }
}

/* str.lower() */
static void python_lower(Bytes *out, const char *text, size_t n) { lower_from(out, text, 0, n, 0); }

/* str.capitalize() (CPython do_capitalize, Python >= 3.8): the first character's full titlecase mapping
 * ("\u00df" -> "Ss", "\u01c6" -> "\u01c5"), the rest lowered as str.lower() does, whose final sigma rule
 * sees the first character as it was */
static void python_capitalize(Bytes *out, const char *text, size_t n) {
    size_t at = 0;
    int cased = 0;
    if (n > 0) {
        uint32_t c = utf8_next(text, &at);
        ADD_CASE_MAPPED(out, unicode_title_special, unicode_title, c);
        cased = !IN_TABLE(unicode_case_ignorable, c) && IN_TABLE(unicode_cased, c);
    }
    lower_from(out, text, at, n, cased);
}
/* The Punctuation pre-tokenizer's is_punc (pre_tokenizers/punctuation.rs): char::is_ascii_punctuation,
 * which counts ASCII symbols such as $ + < = > ^ ` | ~ as punctuation too, or the crate's P table. */
static int is_punctuation(uint32_t c) {
    if (c < 0x80) return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
    return IN_TABLE(unicode_punctuation, c);
}

static int combining_class(uint32_t c) {
    if (c < 0x300) return 0; /* the first non-zero class is U+0300's */
    size_t low = 0, high = sizeof unicode_combining_class / sizeof *unicode_combining_class;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (c < unicode_combining_class[middle][0]) high = middle;
        else if (c > unicode_combining_class[middle][1]) low = middle + 1;
        else return (int)unicode_combining_class[middle][2];
    }
    return 0;
}

/* the row {c, first, second} of c's canonical decomposition mapping, or NULL */
static const uint32_t *canonical_decomposition(uint32_t c) {
    if (c < 0xC0) return NULL; /* U+00C0 is the first code point with one */
    size_t low = 0, high = sizeof unicode_decomposition / sizeof *unicode_decomposition;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (c < unicode_decomposition[middle][0]) high = middle;
        else if (c > unicode_decomposition[middle][0]) low = middle + 1;
        else return unicode_decomposition[middle];
    }
    return NULL;
}

/* the primary composite of first and second, or 0 when there is none */
static uint32_t primary_composite(uint32_t first, uint32_t second) {
    if (first - HANGUL_L < HANGUL_L_COUNT && second - HANGUL_V < HANGUL_V_COUNT)
        return HANGUL_S + ((first - HANGUL_L) * HANGUL_V_COUNT + (second - HANGUL_V)) * HANGUL_T_COUNT;
    if (first - HANGUL_S < HANGUL_S_COUNT && (first - HANGUL_S) % HANGUL_T_COUNT == 0 && second - (HANGUL_T + 1) < HANGUL_T_COUNT - 1)
        return first + (second - HANGUL_T);
    size_t low = 0, high = sizeof unicode_composition / sizeof *unicode_composition;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const uint32_t *row = unicode_composition[middle];
        if (first < row[0] || (first == row[0] && second < row[1])) high = middle;
        else if (first > row[0] || second > row[1]) low = middle + 1;
        else return row[2];
    }
    return 0;
}


/* The built-in keys of `gna kv`: common English nouns, distinct, each one word (the authors drew random
 * words from the wonderwords package; a fixed list keeps runs reproducible without it).
 * weights_tools/ reads this list from here: keep it between the two marker lines. */
static const char *const kv_default_keys[N_KV_KEYS] = { /* kv-keys-begin */
    "apple", "anchor", "arrow", "badge", "bakery", "banana", "basket", "beach", "bell", "bicycle", "blanket",
    "boat", "bottle", "bread", "bridge", "brush", "bucket", "button", "cabin", "cable", "camera", "candle",
    "canyon", "carpet", "castle", "cattle", "ceiling", "chair", "chalk", "cheese", "cherry", "chimney",
    "circle", "city", "clock", "cloud", "coast", "coffee", "collar", "copper", "corner", "cotton", "cradle",
    "crayon", "crown", "cushion", "dagger", "desert", "diamond", "dinner", "doctor", "dragon", "drawer",
    "dress", "eagle", "earth", "engine", "falcon", "feather", "fence", "finger", "flag", "flower", "forest",
    "fountain", "garden", "garlic", "giant", "glove", "goat", "guitar", "hammer", "harbor", "helmet", "honey",
    "horse", "island", "jacket", "jungle", "kettle", "kitchen", "ladder", "lamp", "lantern", "lemon",
    "letter", "library", "lizard", "magnet", "mango", "marble", "meadow", "mirror", "monkey", "motor",
    "mountain", "muffin", "museum", "needle", "nest", "ocean", "office", "onion", "orange", "oven", "paddle",
    "palace", "panda", "paper", "parrot", "pencil", "pepper", "piano", "pillow", "planet", "pocket", "potato",
    "pumpkin", "puzzle", "rabbit", "radio", "rainbow", "ribbon", "river", "rocket", "saddle", "salad",
    "sandal", "school", "scissors", "shadow", "shelf", "shovel", "silver", "singer", "sister", "sock",
    "spider", "spoon", "squirrel", "stone", "sugar", "summer", "sweater", "table", "teacher", "temple",
    "tent", "thunder", "ticket", "tiger", "toast", "tomato", "tower", "tractor", "train", "tunnel", "turtle",
    "umbrella", "valley", "velvet", "village", "violin", "wagon", "wallet", "walnut", "window", "winter",
    "wizard", "wolf", "yogurt", "zebra", "acorn", "album", "barrel", "beetle", "blossom", "bonnet", "cactus",
    "canoe", "carrot", "cellar", "compass", "cookie", "coral", "cricket", "dolphin", "donkey", "elbow",
    "falafel", "ferry", "fiddle", "goblet", "gravel", "hedge", "hornet", "igloo", "jelly", "kayak", "kite",
    "lobster", "locket", "maple", "meteor", "noodle", "oyster", "pebble", "pigeon", "quilt", "raven",
    "sapphire", "satchel", "spindle", "thimble", "tulip", "walrus",
}; /* kv-keys-end */

/* lm-eval's 57 MMLU subjects, in name order, with their categories (lm_eval/tasks/mmlu/_generate_configs.py) */
static const MmluSubject mmlu_subjects[N_MMLU_SUBJECTS] = {
    {"abstract_algebra", 0}, {"anatomy", 0}, {"astronomy", 0}, {"business_ethics", 3}, {"clinical_knowledge", 3},
    {"college_biology", 0}, {"college_chemistry", 0}, {"college_computer_science", 0}, {"college_mathematics", 0},
    {"college_medicine", 3}, {"college_physics", 0}, {"computer_security", 0}, {"conceptual_physics", 0},
    {"econometrics", 2}, {"electrical_engineering", 0}, {"elementary_mathematics", 0}, {"formal_logic", 1},
    {"global_facts", 3}, {"high_school_biology", 0}, {"high_school_chemistry", 0}, {"high_school_computer_science", 0},
    {"high_school_european_history", 1}, {"high_school_geography", 2}, {"high_school_government_and_politics", 2},
    {"high_school_macroeconomics", 2}, {"high_school_mathematics", 0}, {"high_school_microeconomics", 2},
    {"high_school_physics", 0}, {"high_school_psychology", 2}, {"high_school_statistics", 0},
    {"high_school_us_history", 1}, {"high_school_world_history", 1}, {"human_aging", 3}, {"human_sexuality", 2},
    {"international_law", 1}, {"jurisprudence", 1}, {"logical_fallacies", 1}, {"machine_learning", 0},
    {"management", 3}, {"marketing", 3}, {"medical_genetics", 3}, {"miscellaneous", 3}, {"moral_disputes", 1},
    {"moral_scenarios", 1}, {"nutrition", 3}, {"philosophy", 1}, {"prehistory", 1}, {"professional_accounting", 3},
    {"professional_law", 1}, {"professional_medicine", 3}, {"professional_psychology", 2}, {"public_relations", 2},
    {"security_studies", 2}, {"sociology", 2}, {"us_foreign_policy", 2}, {"virology", 3}, {"world_religions", 1},
};
