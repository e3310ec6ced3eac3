/* fuzz.c - gna's libFuzzer harnesses (test/fuzz/run.sh builds and runs them): one binary, gna.c
 * compiled once, the target chosen by the environment variable FUZZ_TARGET (a harness's name: fuzz_NAME.c).
 * Each harness feeds one reader of outside data; its own comment says which. */
#define GNA_NO_MAIN 1
#include "../../gna.c"
#include "fuzz.h"
#include "fuzz_api.c"
#include "fuzz_cli.c"
#include "fuzz_config.c"
#include "fuzz_config_gen.c"
#include "fuzz_csv.c"
#include "fuzz_index.c"
#include "fuzz_json.c"
#include "fuzz_jsonl.c"
#include "fuzz_keys.c"
#include "fuzz_mask.c"
#include "fuzz_merge.c"
#include "fuzz_outputs.c"
#include "fuzz_resume.c"
#include "fuzz_safetensors.c"
#include "fuzz_safetensors_gen.c"
#include "fuzz_tokenize.c"
#include "fuzz_tokenizer_json.c"

static const struct {
    const char *name;
    int (*run)(const uint8_t *data, size_t size);
} targets[] = {
    {"api", fuzz_api},
    {"cli", fuzz_cli},
    {"config", fuzz_config},
    {"config_gen", fuzz_config_gen},
    {"csv", fuzz_csv},
    {"index", fuzz_index},
    {"json", fuzz_json},
    {"jsonl", fuzz_jsonl},
    {"keys", fuzz_keys},
    {"mask", fuzz_mask},
    {"merge", fuzz_merge},
    {"outputs", fuzz_outputs},
    {"resume", fuzz_resume},
    {"safetensors", fuzz_safetensors},
    {"safetensors_gen", fuzz_safetensors_gen},
    {"tokenize", fuzz_tokenize},
    {"tokenizer_json", fuzz_tokenizer_json}
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int (*run)(const uint8_t *, size_t);
    if (!run) {
        const char *name = getenv("FUZZ_TARGET");
        for (size_t i = 0; name && i < sizeof targets / sizeof *targets; i++)
            if (strcmp(name, targets[i].name) == 0) run = targets[i].run;
        if (!run) {
            fprintf(stderr, "fuzz: set FUZZ_TARGET to one of the harnesses (fuzz_NAME.c: NAME)\n");
            abort();
        }
    }
    return run(data, size);
}
