/* gna.h - the public C API of gna, the Gather-and-Aggregate workbench.
 *
 * gna.c is the whole implementation; compile it with -DGNA_NO_MAIN to use it as a library from C,
 * C++ or Python's ctypes. Every call that can fail returns a status: GNA_OK, GNA_FAILURE (something
 * went wrong while running) or GNA_BAD_INPUT (a file or argument is wrong); gna_error() then holds one
 * line, "<file or option>: <what is wrong>".
 *
 *     gna_model *model; gna_cache *cache;
 *     if (gna_load("path/to/Llama-3.1-8B", &model)) { fprintf(stderr, "%s\n", gna_error()); ... }
 *     gna_cache_new(model, 512, &cache);
 *     float *logits = malloc(sizeof(float) * n_tokens * gna_vocab_size(model));
 *     gna_forward(model, cache, tokens, n_tokens, logits);   // continues from what the cache holds
 */
#ifndef GNA_H
#define GNA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GNA_OK = 0, GNA_FAILURE = 1, GNA_BAD_INPUT = 2 };

typedef struct gna_model gna_model; /* config, mmapped weights; read-only once loaded */
typedef struct gna_cache gna_cache; /* what a sequence has left behind: KV cache, conv and SSM state */

/* Load a Hugging Face model folder (config.json + model.safetensors or a sharded index). */
int gna_load(const char *dir, gna_model **model);
void gna_free(gna_model *model);

/* The message of the last failed call in this thread of use (gna is not re-entrant for errors). */
const char *gna_error(void);

int gna_vocab_size(const gna_model *model);

/* A cache for one sequence of at most max_tokens tokens. */
int gna_cache_new(const gna_model *model, int max_tokens, gna_cache **cache);
void gna_cache_free(gna_cache *cache);
int gna_cache_length(const gna_cache *cache); /* tokens consumed so far */

/* Run n_tokens more tokens of the sequence through the model. logits: [n_tokens, vocab] float32,
 * or NULL when only the cache should advance. */
int gna_forward(const gna_model *model, gna_cache *cache, const int *tokens, int n_tokens, float *logits);

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

/* The command line, as the gna program runs it: argv[1] is the command. Prints its results to
 * stdout and, on failure, "gna: error: ..." to stderr; returns the exit status. */
int gna_main(int argc, char **argv);

/* Worker threads for the kernels (default: all cores). Results do not depend on it, bit for bit. */
void gna_set_threads(int n_threads);

/* 1: bfloat16 compute mode: matmul inputs (activations and weights) rounded to bfloat16, products
 * summed in float32, as a GPU runs the checkpoints in bfloat16. 0 (default): float32 throughout. */
void gna_set_bf16(int on);

#ifdef __cplusplus
}
#endif
#endif
