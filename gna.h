/* gna.h - the public C API of gna, the Gather-and-Aggregate workbench.
 *
 * gna.c is the whole implementation; compile it with -DGNA_NO_MAIN to use it as a library from C,
 * C++ or Python's ctypes. Every call that can fail returns a status: GNA_OK, GNA_FAILURE (something
 * went wrong while running) or GNA_BAD_INPUT (a file or argument is wrong); gna_error() then holds one
 * line, "<file or option>: <what is wrong>", for the thread that made the call. gna never ends the
 * process: out of memory is GNA_FAILURE ("out of memory: asked for N bytes"), and what the failed call
 * had allocated is then not given back.
 *
 *     gna_model *model; gna_run *run; gna_cache *cache;
 *     const char *options[] = {"--mask", "L17H24"};          // the command line's own options
 *     if (gna_load("Llama-3.1-8B", &model) || gna_run_new(model, 2, options, &run) ||
 *         gna_cache_new(run, 512, &cache)) { fprintf(stderr, "%s\n", gna_error()); ... }
 *     float *logits = malloc(sizeof(float) * n_tokens * gna_vocab_size(model));
 *     gna_forward(run, cache, tokens, n_tokens, logits);     // continues from what the cache holds
 *
 * Models, runs, caches and tokenizers are independent objects: two of each in one process do not
 * interfere. A run (and its caches) is used by one thread at a time.
 */
#ifndef GNA_H
#define GNA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GNA_OK = 0, GNA_FAILURE = 1, GNA_BAD_INPUT = 2 };

typedef struct gna_model gna_model; /* config, mmapped weights; read-only once loaded */
typedef struct gna_run gna_run;     /* how a model runs, and what is done to it */
typedef struct gna_cache gna_cache; /* what a sequence has left behind: KV cache, conv and SSM state */

/* Load a Hugging Face model folder (config.json + model.safetensors or a sharded index). */
int gna_load(const char *dir, gna_model **model);
void gna_free(gna_model *model);
int gna_vocab_size(const gna_model *model);

/* The message of this thread's last failed call. */
const char *gna_error(void);

/* A run of the model, from the command line's options, as separate strings (each once; --drop and
 * --replace repeat):
 *   "--mask" SPEC         ablate heads or mask attention entries: "L17H24", "L16H22,L17H24@-1",
 *                         "L17H24@-1:5-9", "L*A*@-1:0--1" (gna --help has the grammar)
 *   "--layers" "A-B"      run only layers A..B (the paper's minimal model: "0-17")
 *   "--drop" "L"          leave layer L out
 *   "--replace" "L=DIR"   run layer L of the model in DIR in place of layer L
 *   "--bf16"              bfloat16 compute, as the checkpoints run on a GPU
 *   "--reference"         gna.c's Part I alone: the definitions, without the vector kernels
 *   "--dt-min-clamp"      zamba2: dt clamped at time_step_min, as transformers 5.x (default: as the
 *                         CUDA path that made the paper's numbers)
 *   "--threads" "N"       worker threads (default: all cores); no result depends on it
 * n_options 0: the model as it is, on all cores. */
int gna_run_new(const gna_model *model, int n_options, const char *const *options, gna_run **run);
void gna_run_free(gna_run *run);

/* How many heads a spec such as "L16H22,L17H*" names in the run's model. */
int gna_count_heads(const gna_run *run, const char *heads, int *n_heads);

/* Record attention: for each head of `heads` (in the order the spec names them), its attention rows
 * `rows` (query positions; NULL: all n_tokens of them) - softmax probabilities, or the implicit
 * attention of an SSM head - during the run's next gna_forward, which must take a whole sequence of
 * n_tokens tokens in one call. matrices: the caller's [n_heads, n_rows, n_tokens] floats, which must
 * stay valid while the run records into them; each call replaces the last one's heads, a failed call
 * leaves them as they were, and heads NULL records nothing from then on. */
int gna_run_record(gna_run *run, const char *heads, const int *rows, int n_rows, int n_tokens, float *matrices);

/* Capture and patch (activation patching). A site is the residual stream after a layer, "L3" ([D]
 * floats per position), or one head's output, named as --mask names it without positions: "L3H2",
 * "L3A1", "L3S0" - its slice of the out-projection input, where ablation zeroes it ([head_dim]; an
 * SSM head: [P]; a Mamba-1 channel: [1]). gna_site_width gives that width. During the run's next
 * gna_forward calls, at each sequence position positions[i] (0: the first token) that a call runs,
 *   GNA_CAPTURE  copies the site into values[i * width ..], after any --mask ablation there;
 *   GNA_PATCH    copies values[i * width ..] over the site, after the captures.
 * values is the caller's and must stay valid; each call adds one tap; site NULL removes them all. */
enum { GNA_CAPTURE = 0, GNA_PATCH = 1 };
int gna_site_width(const gna_run *run, const char *site, int *width);
int gna_run_tap(gna_run *run, int mode, const char *site, const int *positions, int n_positions, float *values);

/* The logit lens: the final norm and the LM head on hidden [n_rows, D] (a captured residual), into
 * logits [n_rows, vocab]. On the last layer's residual it gives gna_forward's logits: bit for bit when
 * n_rows is the forward's number of tokens, or both are at least 6, or under --reference (the vector
 * matmul sums in another order below 6 rows); within the fidelity tolerance otherwise. */
int gna_unembed(gna_run *run, const float *hidden, int n_rows, float *logits);

/* A cache for one sequence of at most max_tokens tokens, shaped for the run's layers. */
int gna_cache_new(const gna_run *run, int max_tokens, gna_cache **cache);
void gna_cache_free(gna_cache *cache);
int gna_cache_length(const gna_cache *cache); /* tokens consumed so far */
/* The SSM state of an SSM layer after the tokens the cache has consumed: [H_ssm, P, N] floats (Mamba-1:
 * [d_inner, N]). GNA_CAPTURE copies it into state, GNA_PATCH copies state over it; *n_floats gets its
 * size (state NULL: only that). Between two gna_forward calls this reads or patches the state at a
 * position (the conv state stays the sequence's own). */
int gna_cache_state(gna_cache *cache, int layer, int mode, float *state, int *n_floats);

/* Run n_tokens more tokens of the sequence through the model as the run has it. logits:
 * [n_tokens, vocab] float32, or NULL when only the cache should advance. */
int gna_forward(gna_run *run, gna_cache *cache, const int *tokens, int n_tokens, float *logits);

/* Tokenizers: a tokenizer.json (a model folder has one) turns UTF-8 text into the token ids that
 * Hugging Face tokenizers gives, and ids back into text. */
typedef struct gna_tokenizer gna_tokenizer;
int gna_tokenizer_load(const char *path, gna_tokenizer **tokenizer);
void gna_tokenizer_free(gna_tokenizer *tokenizer);
/* text[0..length) into *ids (malloc'd: free() it), with the special tokens the tokenizer adds when
 * add_special (HF's add_special_tokens); added tokens written in the text are always recognised. */
int gna_tokenize(const gna_tokenizer *tokenizer, const char *text, size_t length, int add_special, int **ids, int *n_ids);
/* ids into *text (malloc'd, NUL-terminated, *length bytes), special tokens left out if skip_special */
int gna_detokenize(const gna_tokenizer *tokenizer, const int *ids, int n_ids, int skip_special, char **text, size_t *length);

/* A task - a harness (kv, mmlu, mc, knowledge, gsm8k) or heads - on a loaded model: options are
 * those of `gna COMMAND` after it, its own and the run's (--mask, --layers, ...), without -m, e.g.
 * {"--pairs", "10,20", "--json", "out.json"}. Prints what gna COMMAND prints, writes what its
 * options name, and returns GNA_OK or an error (gna_error()). The command line runs its tasks
 * through the same code, after loading the model of -m. */
int gna_task(const gna_model *model, const char *command, int n_options, const char *const *options);

/* The command line, as the gna program runs it: argv[1] is the command. Prints its results to
 * stdout and, on failure, "gna: error: ..." to stderr; returns the exit status. */
int gna_main(int argc, char **argv);

/* Ask every gna call running now in this process to stop: each returns GNA_FAILURE ("interrupted")
 * within a layer of its forward pass, leaving no half-written output file; calls started afterwards run
 * as usual. Safe from a signal handler and from another thread (the Python binding's Ctrl-C). The
 * library installs no signal handler of its own. */
void gna_interrupt(void);

#ifdef __cplusplus
}
#endif
#endif
