#!/usr/bin/env python3
"""Make the golden fixtures of `gna knowledge` (lm-eval's arc_easy, arc_challenge, openbookqa, piqa,
hellaswag and winogrande, 0-shot: the G&A paper's knowledge control) and `gna gsm8k` (lm-eval's gsm8k,
generate_until): hand-written task data in each dataset's own schema, the prompts and requests, and the
per-document logs and aggregate results of tiny random-weight checkpoints, computed in float64 on the
CPU the way lm-evaluation-harness 0.4.7 computes them.

    python3 weights_tools/make_task_fixtures.py [OUT] [--families F,..] [--cases C,..]   (OUT: test/fixtures/harness)
    python3 weights_tools/make_task_fixtures.py [OUT] --data-only

`--data-only` needs the standard library only (and jinja2, PyYAML and numpy for the cross-check): it writes the
data files, gsm8k_filters.jsonl, python_random.jsonl and every case's command.txt and
expected_requests.jsonl, and checks every prompt against lm-eval 0.4.7's own code (below); with the tokenizers
library (and the Llama-3.1 tokenizer) the named cases' request lines carry their mask positions too (without it
they are skipped with a note, and those already on file kept where the requests are the same). The full run
also needs torch, transformers 5.x, tokenizers, safetensors and numpy, and the real Llama-3.1 tokenizer in
test/.cache/llama3_1/tokenizer.json (`make tokenizer-cache`); it builds the new checkpoints, reuses
llama3_tiny/ and mamba2_tiny/ (made by make_harness_fixtures.py), and writes each case's expected_log.jsonl
and expected_results.json and MANIFEST_tasks.txt. --families (llama, mamba2, mamba, falcon_mamba, zamba2,
llamba) and --cases (case names) run a subset; the MANIFEST lines of the other cases are kept.

What it writes under OUT:
  data/tasks/<task>.jsonl          the six tasks' rows, gsm8k.jsonl (evaluated) and gsm8k_train.jsonl (30 rows:
                                   random.sample's set method for 5 shots)
  data/tasks_small/gsm8k*.jsonl    the same gsm8k.jsonl, a 12-row gsm8k_train.jsonl (sample's pool method)
  gsm8k_filters.jsonl              responses and targets through strict-match, flexible-extract, exact_match
  python_random.jsonl              random.Random(seed).sample(range(n), k), six calls in a row, per line
  {mamba,falcon_mamba,zamba2,llamba}_tiny/   new checkpoints (bf16, vocab 1500, the Falcon-pipeline tokenizer)
  cases/{knowledge,gsm8k}_*/       command.txt, expected_requests.jsonl, expected_log.jsonl, expected_results.json
  cases/named_*/                   the same for masks that name positions (:letters, :value, :text=is; section 5b):
                                   mmlu, knowledge and kv on llama3_tiny and zamba2_tiny, each masked document's
                                   lines with "mask_positions"
  MANIFEST_tasks.txt               versions, seeds, per case the smallest margins (near ties)
and ROOT/build/task_fixtures_readme.md, the README section for test/fixtures/harness/README.md.

The lm-eval 0.4.7 code mirrored (each function below names its own):
  lm_eval/tasks/arc/arc_easy.yaml, arc_challenge.yaml, openbookqa/openbookqa.yaml, piqa/piqa.yaml,
    hellaswag/hellaswag.yaml + utils.py, winogrande/default.yaml + preprocess_winogrande.py, gsm8k/gsm8k.yaml
  lm_eval/api/task.py      ConfigurableTask.doc_to_text / doc_to_target / doc_to_choice (a template's text that
                           isdigit() becomes an int; "[..]" targets go through literal_eval), fewshot_context,
                           construct_requests (multiple_input: Winogrande), process_results (acc, acc_norm =
                           argmax ll / len(choice); gold index checks), TaskConfig (generation_kwargs)
  lm_eval/api/samplers.py  ContextSampler.get_context / sample (rnd.sample(docs, n), the evaluated doc dropped)
  lm_eval/evaluator.py     simple_evaluate: fewshot_random_seed 1234 -> task.set_fewshot_seed: random.Random(1234)
  lm_eval/utils.py         apply_template (jinja2, StrictUndefined, keep_trailing_newline)
  lm_eval/filters/extraction.py RegexFilter, filters/selection.py TakeFirstFilter
  lm_eval/api/metrics.py   exact_match_hf_evaluate, mean, mean_stderr
  lm_eval/models/huggingface.py  tok_encode / tok_batch_encode (no special tokens), generate_until (EOS text
                           appended to until, max_gen_toks, the response cut at each stop string),
                           _loglikelihood_tokens (via make_harness_fixtures.score_doc's code)
The named positions mirror gna.c's definition (I.7: named_positions, span_tokens), and their masks
make_intervention_fixtures' patched attention (entries zeroed after the softmax, with explicit position lists).
  lm_eval/models/utils.py  handle_stop_sequences, MultiTokenEOSCriteria (its look-back window is compared too)
The cross-check execs those files, read at run time from the lm-eval mirror (a git directory; --mirror or
$LM_EVAL_MIRROR; tag v0.4.7), and asserts that they give byte-identical prompts and the same metrics as the
functions here. Nothing of lm-eval is copied into this file.
"""
import argparse, ast, copy, importlib.util, json, logging, os, random, re, shutil, subprocess, sys, types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_harness_fixtures as mh  # noqa: E402  (standard library only at import time)

DEFAULT_OUT = os.path.join(ROOT, "test", "fixtures", "harness")
DEFAULT_MIRROR = "/work/.mirror/EleutherAI+lm-evaluation-harness/repo"
LM_EVAL_TAG = "v0.4.7"
README_OUT = os.path.join(ROOT, "build", "task_fixtures_readme.md")

KNOWLEDGE_TASKS = ["arc_challenge", "arc_easy", "hellaswag", "openbookqa", "piqa", "winogrande"]  # gna's order
NO_ACC_NORM = {"winogrande"}            # default.yaml's metric_list has acc only
FEWSHOT_SEED = 1234                     # simple_evaluate(fewshot_random_seed=1234)
GSM8K_UNTIL = ["Question:", "</s>", "<|im_end|>"]
GSM8K_GEN_KWARGS = {"until": GSM8K_UNTIL, "do_sample": False, "temperature": 0.0}
LM_EVAL_MAX_LENGTH = 2048               # HFLM._DEFAULT_MAX_LENGTH
LM_EVAL_MAX_GEN_TOKS = 256              # HFLM.max_gen_toks
NEW_BYTES_BUDGET = 1_600_000            # everything this script adds to the repository

# =============================================================================================
# 1. The data: rows in each Hugging Face dataset's own schema, hand-written to hit the awkward cases.

ARC_EASY = [
    {"id": "Mercury_7175875",
     "question": "An astronomer observes that a planet rotates faster after a meteorite impact. Which is the most "
                 "likely effect of this increase in rotation?",
     "choices": {"text": ["Planetary density will decrease.", "Planetary years will become longer.",
                          "Planetary days will become shorter.", "Planetary gravity will become stronger."],
                 "label": ["A", "B", "C", "D"]}, "answerKey": "C"},
    # labels "1"-"4"
    {"id": "NYSEDREGENTS_2015_4_8", "question": "Which tool is used to measure the mass of a rock?",
     "choices": {"text": ["balance", "ruler", "thermometer", "graduated cylinder"], "label": ["1", "2", "3", "4"]},
     "answerKey": "1"},
    # 3 choices; non-ASCII; double space and trailing spaces inside the question (kept)
    {"id": "MCAS_2000_4_6", "question": "Le caf\u00e9 refroidit.  \u5496\u5561\u53d8\u51c9\u4e86\u3002 What happens "
                                         "to the coffee's temperature?  ",
     "choices": {"text": ["It goes up", "It goes down", "It stays the same"], "label": ["A", "B", "C"]},
     "answerKey": "B"},
    # 5 choices, the gold the fifth; emoji (written with \\u escapes in the file)
    {"id": "Mercury_SC_401", "question": "Which animal can fly? \U0001F987",
     "choices": {"text": ["shark \U0001F988", "whale \U0001F40B", "trout", "octopus", "bat"],
                 "label": ["A", "B", "C", "D", "E"]}, "answerKey": "E"},
    # choices with quotes, a backslash, a tab and a line break: doc_to_choice "{{choices.text}}" renders the
    # list's repr and literal_eval()s it back
    {"id": "Quoting_1", "question": "Which string holds 'single' and \"double\" quotes?",
     "choices": {"text": ["it's \"both\"", "back\\slash \\n literal", "tab\there", "new\nline"],
                 "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
]

ARC_CHALLENGE = [
    {"id": "Mercury_SC_415702",
     "question": "George wants to warm his hands quickly by rubbing them. Which skin surface will produce the most heat?",
     "choices": {"text": ["dry palms", "wet palms", "palms covered with oil", "palms rubbed with lotion"],
                 "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
    {"id": "NYSEDREGENTS_2008_8_13", "question": "Which process in an apple tree primarily results from cell division?",
     "choices": {"text": ["growth", "photosynthesis", "gas exchange", "waste removal"], "label": ["1", "2", "3", "4"]},
     "answerKey": "4"},
    # 5 choices labelled "1"-"5"
    {"id": "Numeric_5", "question": "How many legs does an insect have?",
     "choices": {"text": ["two", "four", "six", "eight", "ten"], "label": ["1", "2", "3", "4", "5"]},
     "answerKey": "3"},
    # 3 choices; German and Greek; a capital sigma at a word's end
    {"id": "MDSA_2011_8_20", "question": "\u00dcber welche Eigenschaft sprechen wir beim Wort \u039a\u039f\u03a3\u039c\u039f\u03a3?",
     "choices": {"text": ["Ordnung", "Gr\u00f6\u00dfe", "Farbe"], "label": ["A", "B", "C"]}, "answerKey": "A"},
    # line breaks and a degree sign in the question
    {"id": "Mercury_7_table", "question": "Read the table.\nTemperature: 20 \u00b0C\nPressure: 1 atm\nWhich is true?",
     "choices": {"text": ["It is freezing.", "It is boiling.", "Water is liquid.", "Water is gas."],
                 "label": ["A", "B", "C", "D"]}, "answerKey": "C"},
]

OPENBOOKQA = [
    {"id": "7-980", "question_stem": "The sun is responsible for",
     "choices": {"text": ["puppies learning new tricks", "children growing up and getting old", "flowers wilting in a vase",
                          "plants sprouting, blooming and wilting"], "label": ["A", "B", "C", "D"]}, "answerKey": "D"},
    # a trailing space on the stem (moved into the continuation); answerKey with a leading space
    {"id": "7-584", "question_stem": "When standing miles away from Mount Rushmore ",
     "choices": {"text": ["the mountains seem very close", "the mountains are boring", "the mountains look the same as "
                          "from up close", "the mountains seem smaller than in photographs"], "label": ["A", "B", "C", "D"]},
     "answerKey": " D"},
    # two leading spaces; non-ASCII
    {"id": "8-376", "question_stem": "Les \u00e9toiles brillent la nuit parce que",
     "choices": {"text": ["elles \u00e9mettent de la lumi\u00e8re", "la Lune les \u00e9claire", "elles sont froides",
                          "le ciel est noir"], "label": ["A", "B", "C", "D"]}, "answerKey": "  A"},
    # a no-break space before the key (str.lstrip() removes Unicode white space too); emoji
    {"id": "9-732", "question_stem": "An example of a renewable resource is \U0001F31E",
     "choices": {"text": ["coal", "oil", "sunlight", "natural gas"], "label": ["A", "B", "C", "D"]},
     "answerKey": "\u00a0C"},
    {"id": "10-1", "question_stem": "\u6c34\u5728\u6444\u6c0f\u96f6\u5ea6\u65f6\u4f1a",
     "choices": {"text": ["\u7ed3\u51b0", "\u6cb8\u817e", "\u53d8\u6210\u6c14\u4f53", "\u53d8\u8272"],
                 "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
]

PIQA = [
    {"goal": "How do I ready a guinea pig cage for it's new occupants?",
     "sol1": "Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper strips, you will "
             "also need to supply it with a water bottle and a food dish.",
     "sol2": "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans material, you "
             "will also need to supply it with a water bottle and a food dish.", "label": 0},
    {"goal": "dresser", "sol1": "can hold clothes", "sol2": "can hold a house", "label": 0},
    # a solution with a leading space ("  sprinkle" after the delimiter); accents
    {"goal": "To make cr\u00e8me br\u00fbl\u00e9e crunchy on top,", "sol1": "sprinkle salt and freeze it.",
     "sol2": " sprinkle sugar and torch it.", "label": 1},
    # jinja-looking text in the fields is data, not template; a line break in the goal
    {"goal": "Write {{braces}} and 100% of a \"quote\"\n(on two lines)", "sol1": "Wrap them in {% raw %} tags.",
     "sol2": "Type them as they are.", "label": 1},
    {"goal": "\u716e\u7c73\u996d\u65f6\uff0c\u600e\u6837\u9632\u6b62\u7c98\u9505\uff1f",
     "sol1": "\u5148\u628a\u9505\u70e7\u70ed\u518d\u52a0\u6cb9\u3002", "sol2": "\u628a\u7c73\u653e\u8fdb\u51b0\u7bb1\u3002\U0001F35A",
     "label": 0},
]


def hellaswag_row(ind, activity_label, ctx_a, ctx_b, endings, source_id, split_type, label):
    """a row in Rowan/hellaswag's schema; its ctx is ctx_a + " " + ctx_b as stored (lm-eval does not read it)"""
    ctx = ctx_a + (" " + ctx_b if ctx_b else "")
    return {"ind": ind, "activity_label": activity_label, "ctx_a": ctx_a, "ctx_b": ctx_b, "ctx": ctx,
            "endings": endings, "source_id": source_id, "split": "val", "split_type": split_type, "label": label}


HELLASWAG = [
    # WikiHow headers: "[header]", " [title]" (-> ". "), "[step]"; ctx_b led by a bracket (capitalize() changes no
    # first letter but lowers "Cross" and "WIDE"); an ending with " [title]" inside, triple spaces, an unclosed
    # bracket, a nested pair
    hellaswag_row(4, "Personal Care and Style",
                  "[header] How to tie a tie [title] Drape the tie around your neck. [step] The wide end should hang "
                  "about 12 inches lower than the narrow end.",
                  "[substeps] Cross the WIDE end",
                  ["over the narrow end, then bring it up through the loop. [title] Pull it tight. [step] Adjust the knot.",
                   "[step] Wrap the narrow end around twice.   Then tuck it in.",
                   "under your chin [unclosed bracket and keep going",
                   "across [a [nested] pair] and done."],
                  "wikihow~7", "indomain", "0"),
    # ActivityNet: leading/trailing spaces around the label, triple spaces in ctx_a, a ctx_b that capitalize()
    # changes beyond its first letter ("tHE iPhone SHOWS" -> "The iphone shows"); an ending with spaces around it
    hellaswag_row(24, "  Using the iPhone ", "A man holds up his phone to the camera.   He", "tHE iPhone SHOWS a map",
                  [" points at the screen and smiles. ", "drops it into a glass of water.",
                   "throws the phone across the room.", "puts it in his pocket and walks away."],
                  "activitynet~v_abc", "zeroshot", "2"),
    # an empty ctx_b (the query ends "cup. " before strip()); non-ASCII endings; "[title]" at an ending's start
    # (strip() first, so " [title]" is not there to become ". ": "[title]" goes, leaving a leading space), and
    # a no-break space at its end (strip() removes it)
    hellaswag_row(100, "Caf\u00e9", "Zo\u00eb pours the espresso into a cup.", "",
                  ["Then she adds milk \u2615.", "\u03a3\u03c4\u03b7 \u03c3\u03c5\u03bd\u03ad\u03c7\u03b5\u03b9\u03b1 "
                   "\u03a3\u0395\u03a1\u0392\u0399\u03a1\u0395\u0399 \u03a4\u039f\u039d \u039a\u0391\u03a6\u0395.",
                   "\u5979\u628a\u676f\u5b50\u653e\u5728\u684c\u5b50\u4e0a\u3002", "[title] She drinks it.\u00a0"],
                  "activitynet~v_cafe", "indomain", "1"),
    # capitalize(): "\u00df" titlecases to "Ss"; capital sigmas at words' ends lower to final sigma
    hellaswag_row(200, "Walking", "Two friends walk down the",
                  "\u00dftra\u00dfe NEAR THE \u039f\u0394\u039f\u03a3 \u039a\u0391\u0399 \u03a3\u039f\u03a6\u039f\u03a3",
                  ["and stop at a caf\u00e9.", "and start to run.", "and fall asleep.", "and look at the \u03a3 sign."],
                  "activitynet~v_walk", "indomain", "3"),
    # capitalize(): "\u01c6" titlecases to "\u01c5", "\u0130" lowers to "i" + U+0307; a bracket pair across a
    # line break (not removed: "." matches no "\n") and one across "\r" (removed: "." matches "\r");
    # an ending that strips, loses "[step]", keeps a leading space and ends in ". " after " [title]"
    hellaswag_row(300, "Jumping", "[header] How to jump [step] Bend your knees [note:\nkeep them soft] and",
                  "\u01c6ump \u0130N place",
                  ["jump [a\rb] high.", "[title] Land softly [step] on both feet.", "  fall  over  ",
                   "[step]  stay   still. [title]"],
                  "wikihow~12", "indomain", "0"),
]

WINOGRANDE = [
    {"sentence": "_ is the capital of France, not Lyon.", "option1": "Paris", "option2": "Lyon", "answer": "1"},
    {"sentence": "The trophy doesn't fit into the brown suitcase because the _ is too large.", "option1": "trophy",
     "option2": "suitcase", "answer": "1"},
    # after the blank only punctuation
    {"sentence": "Kevin couldn't lift the box but Tom could, so the strong one was _.", "option1": "Kevin",
     "option2": "Tom", "answer": "2"},
    # spaces and a no-break space after the blank (strip()ped); accents and an emoji
    {"sentence": "Zo\u00eb gave Jos\u00e9 a \U0001F381 because _ \u00a0 was celebrating a birthday today.", "option1": "Zo\u00eb",
     "option2": "Jos\u00e9", "answer": "2"},
    {"sentence": "\u5c0f\u660e\u6bd4\u5c0f\u7ea2\u9ad8\uff0c\u6240\u4ee5_\u7ad9\u5728\u540e\u6392\u3002",
     "option1": "\u5c0f\u660e", "option2": "\u5c0f\u7ea2", "answer": "1"},
    # the blank near the end, only an emoji after it
    {"sentence": "After the race the judges gave the gold medal to _ \U0001F3C5", "option1": "the fastest runner",
     "option2": "the slowest runner", "answer": "1"},
]

# gsm8k's few-shot pool (the train split): 30 rows, so that random.sample(pool, 5) takes its set method
# (n > 21). Rows 0, 14, 24, 25, 29 are special; the others follow one pattern.
GSM8K_NAMES = ["Ava", "Ben", "Chlo\u00e9", "Dmitri", "Emeka", "Fatima", "Giulia", "Hiro", "In\u00e9s", "Jamal"]
GSM8K_ITEMS = ["apple", "marble", "sticker", "book", "shell", "coin"]


def gsm8k_pattern_row(i):
    name, item = GSM8K_NAMES[i % len(GSM8K_NAMES)], GSM8K_ITEMS[i % len(GSM8K_ITEMS)]
    a, b = 3 + (7 * i) % 40, 2 + (5 * i) % 17
    c = (a + b) // 3
    return {"question": f"{name} has {a} {item}s. They buy {b} more and then give away {c}. How many {item}s does "
                        f"{name} have now?",
            "answer": f"After buying, {name} has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} {item}s.\nAfter giving some away, "
                      f"{a + b} - {c} = <<{a + b}-{c}={a + b - c}>>{a + b - c}.\n#### {a + b - c}"}


GSM8K_TRAIN = [gsm8k_pattern_row(i) for i in range(30)]
GSM8K_TRAIN[0] = {"question": "A diver is 3 m below the surface and swims 4 m further down. Where is she relative to "
                              "the surface, in metres?", "answer": "-3 - 4 = <<-3-4=-7>>-7\n#### -7"}
GSM8K_TRAIN[14] = {"question": "What is the sum of the numbers below?\n(The worked answer was lost.)", "answer": ""}
GSM8K_TRAIN[24] = {"question": "A used car costs $12,500 and its tax is $1,250. What is the total cost?",
                   "answer": "12,500 + 1,250 = $<<12500+1250=13750>>13,750\n#### 13,750"}
GSM8K_TRAIN[25] = {"question": "A recipe uses 2.5 cups of flour per cake. How many cups do 3 cakes need?",
                   "answer": "2.5 * 3 = <<2.5*3=7.5>>7.5 cups\n#### 7.5"}
GSM8K_TRAIN[29] = {"question": "Ana tiene 3 \U0001F34E y compra 4 m\u00e1s. \u00bfCu\u00e1ntas manzanas tiene?",
                   "answer": "3 + 4 = <<3+4=7>>7 manzanas.\n#### 7"}
# the 12-row pool of data/tasks_small (n <= 21: sample's pool method), as indices into GSM8K_TRAIN
GSM8K_SMALL_POOL = [0, 14, 4, 5, 6, 24, 7, 25, 8, 2, 3, 29]

# gsm8k's evaluated rows. Rows 2 and 5 equal pool rows 3 and 2, which random.Random(1234) draws for them
# (checked in gsm8k_data): lm-eval drops a drawn shot equal to the evaluated document.
GSM8K_TEST = [
    {"question": "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
                 "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 per "
                 "fresh duck egg. How much in dollars does she make every day at the farmers' market?",
     "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day at "
               "the farmer\u2019s market.\n#### 18"},
    {"question": "A bakery bakes 250 loaves of bread a day. How many loaves does it bake in 5 days?",
     "answer": "It bakes 250 * 5 = <<250*5=1250>>1,250 loaves.\n#### 1,250"},
    dict(GSM8K_TRAIN[3]),
    {"question": "The temperature at noon was 5 \u00b0C. By midnight it had fallen by 12 degrees. What was the "
                 "temperature at midnight, in \u00b0C?", "answer": "5 - 12 = <<5-12=-7>>-7\n#### -7"},
    {"question": "Zo\u00eb walks 0.5 km to school and 2 km to the park. How many km does she walk in total? \U0001F6B6",
     "answer": "0.5 + 2 = <<0.5+2=2.5>>2.5 km\n#### 2.5"},
    dict(GSM8K_TRAIN[2]),
    {"question": "Carlos saves $250 a month for 4 months. How much money has he saved?",
     "answer": "He has saved 250 * 4 = $<<250*4=1000>>1,000.\n#### $1,000."},
    # a reference that exact_match lowers to "[invalid]": a response with no number (strict-match's fallback) matches
    {"question": "\u65e5\u672c\u306e\u5b66\u6821\u306b\u306f\u751f\u5f92\u304c40\u4eba\u3044\u307e\u3059\u3002 What is "
                 "written after the four hashes?", "answer": "The answer is not a number.\n#### [INVALID]"},
]

TASK_ROWS = {"arc_easy": ARC_EASY, "arc_challenge": ARC_CHALLENGE, "openbookqa": OPENBOOKQA, "piqa": PIQA,
             "hellaswag": HELLASWAG, "winogrande": WINOGRANDE}
# lines written with ensure_ascii=True (\\u escapes, surrogate pairs for emoji) and with their keys reversed
ESCAPED_LINES = {("arc_easy", 3), ("hellaswag", 2), ("winogrande", 3), ("gsm8k", 4), ("gsm8k_train", 29)}
REORDERED_LINES = {("piqa", 3), ("hellaswag", 4), ("gsm8k", 6)}


def python_draws(n, k, calls, seed=FEWSHOT_SEED):
    """random.Random(seed).sample(range(n), k), `calls` times in a row"""
    rnd = random.Random(seed)
    return [rnd.sample(range(n), k) for _ in range(calls)]


def gsm8k_data():
    """(evaluated rows, the 30-row pool, the 12-row pool), with the draws they were written for checked"""
    test, train = [dict(d) for d in GSM8K_TEST], [dict(d) for d in GSM8K_TRAIN]
    small = [train[i] for i in GSM8K_SMALL_POOL]
    assert len(train) == 30 and len(small) == 12 and len(set(GSM8K_SMALL_POOL)) == 12
    assert all(t not in train for i, t in enumerate(test) if i not in (2, 5))
    # the pool sizes pick random.sample's methods: set for n=30, k<=5; pool for n=12
    draws5, draws2, draws1 = python_draws(30, 5, len(test)), python_draws(30, 2, len(test)), python_draws(30, 1, len(test))
    small3 = python_draws(12, 3, len(test))
    assert 3 in draws5[2] and 3 in draws1[2]        # gsm8k_llama3 (4 shots left) and gsm8k_zamba2 (none left)
    assert 2 in draws2[5]                           # gsm8k_mamba2
    assert small[small3[2][0]] == test[2] and small[small3[5][1]] == test[5]   # gsm8k_small
    assert 14 in draws5[0] and 14 in draws2[0] and 1 in small3[0]              # the empty answer is drawn
    return test, train, small


# =============================================================================================
# 2. lm-eval 0.4.7's task definitions, as plain functions.
#    A request is {"task", "doc_id", "arguments": [(context, continuation)], "target", "choices", "norm"}.

def arc_doc_to_text(doc):       # arc_easy.yaml doc_to_text "Question: {{question}}\nAnswer:"
    return "Question: " + doc["question"] + "\nAnswer:"


def arc_doc_to_choice(doc):     # doc_to_choice "{{choices.text}}" (repr, then ast.literal_eval: the same list)
    return list(doc["choices"]["text"])


def arc_doc_to_target(doc):     # doc_to_target "{{choices.label.index(answerKey)}}" (isdigit -> int)
    return doc["choices"]["label"].index(doc["answerKey"])


def openbookqa_doc_to_text(doc):    # openbookqa.yaml doc_to_text: question_stem (a feature: the value as it is)
    return doc["question_stem"]


def openbookqa_doc_to_target(doc):  # doc_to_target "{{choices.label.index(answerKey.lstrip())}}"
    return doc["choices"]["label"].index(doc["answerKey"].lstrip())


def piqa_doc_to_text(doc):      # piqa.yaml "Question: {{goal}}\nAnswer:"
    return "Question: " + doc["goal"] + "\nAnswer:"


def piqa_doc_to_choice(doc):    # "{{[sol1, sol2]}}"
    return [doc["sol1"], doc["sol2"]]


def piqa_doc_to_target(doc):    # doc_to_target: label (a feature: the int as it is)
    return doc["label"]


def hellaswag_preprocess(text):
    """hellaswag/utils.py preprocess: strip(); " [title]" -> ". "; remove each [...] (non-greedy, no "\\n"
    inside); "  " -> " " (one pass)"""
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


def hellaswag_process_doc(doc):
    """hellaswag/utils.py process_docs' _process_doc (added to the row's own fields, as Dataset.map does)"""
    ctx = doc["ctx_a"] + " " + doc["ctx_b"].capitalize()
    return {**doc, "query": hellaswag_preprocess(doc["activity_label"] + ": " + ctx),
            "choices": [hellaswag_preprocess(e) for e in doc["endings"]], "gold": int(doc["label"])}


def hellaswag_doc_to_target(doc):   # hellaswag.yaml doc_to_target "{{label}}": the label string, isdigit -> int
    assert doc["label"].isdigit() and doc["label"].isascii()
    return int(doc["label"])


def winogrande_requests(doc):
    """preprocess_winogrande.py: partial evaluation. doc_to_text gives the answer's index (an int: multiple_input),
    doc_to_choice the contexts sentence[:i] + option, doc_to_target the one continuation sentence[i+1:].strip();
    construct_requests: (ctx + choice, " " + target) for each choice, ctx "" (0-shot)"""
    i = doc["sentence"].index("_")
    contexts = [doc["sentence"][:i] + doc["option1"], doc["sentence"][:i] + doc["option2"]]
    continuation = " " + doc["sentence"][i + 1:].strip()
    return [(c, continuation) for c in contexts], {"1": 0, "2": 1}[doc["answer"]]


def knowledge_request(task, doc, doc_id):
    """ConfigurableTask.fewshot_context (0-shot: doc_to_text) + construct_requests (multiple_choice):
    [(context, " " + choice)] with target_delimiter " "; the gold index of process_results"""
    if task == "winogrande":
        arguments, target = winogrande_requests(doc)
        choices = [a[0] for a in arguments]   # doc_to_choice; acc_norm is not reported
    else:
        if task in ("arc_easy", "arc_challenge"):
            context, choices, target = arc_doc_to_text(doc), arc_doc_to_choice(doc), arc_doc_to_target(doc)
        elif task == "openbookqa":
            context, choices, target = openbookqa_doc_to_text(doc), arc_doc_to_choice(doc), openbookqa_doc_to_target(doc)
        elif task == "piqa":
            context, choices, target = piqa_doc_to_text(doc), piqa_doc_to_choice(doc), piqa_doc_to_target(doc)
        elif task == "hellaswag":
            p = hellaswag_process_doc(doc)
            context, choices, target = p["query"], p["choices"], hellaswag_doc_to_target(p)
            assert target == p["gold"]
        else:
            raise ValueError(task)
        arguments = [(context, " " + c) for c in choices]
    assert isinstance(target, int) and 0 <= target < len(choices), (task, doc_id, target)
    return {"task": task, "doc_id": doc_id, "arguments": arguments, "target": target, "choices": choices,
            "norm": task not in NO_ACC_NORM}


def knowledge_requests(tasks, limit=None):
    """the requests of `gna knowledge --tasks ... --limit N`: tasks in gna's (alphabetical) order, each task's
    rows in file order, the first N of each"""
    out = []
    for task in KNOWLEDGE_TASKS:
        if task in tasks:
            rows = TASK_ROWS[task][:limit] if limit else TASK_ROWS[task]
            out += [knowledge_request(task, d, i) for i, d in enumerate(rows)]
    return out


def mc_metrics(lls, target, choices, norm):
    """ConfigurableTask.process_results (multiple_choice): acc = [argmax ll == gold], acc_norm = [argmax
    ll / len(choice) == gold] (np.argmax: the first maximum; len in code points, without the delimiter)"""
    pred = max(range(len(lls)), key=lambda i: lls[i])
    out = {"acc": 1.0 if pred == target else 0.0}
    if norm:
        normed = [ll / float(len(c)) for ll, c in zip(lls, choices)]
        out["acc_norm"] = 1.0 if max(range(len(normed)), key=lambda i: normed[i]) == target else 0.0
    return out


# ---- gsm8k

def gsm8k_doc_to_text(doc):     # gsm8k.yaml "Question: {{question}}\nAnswer:"
    return "Question: " + doc["question"] + "\nAnswer:"


def gsm8k_context(doc, shots, rnd, pool):
    """ConfigurableTask.fewshot_context with ContextSampler.get_context: rnd.sample(pool, shots) (fewshot_split
    train != test_split: no extra draw), a drawn doc equal to `doc` dropped; each shot doc_to_text + " " +
    answer + "\\n\\n" (target_delimiter, fewshot_delimiter; an empty answer adds neither); then doc_to_text(doc)"""
    drawn = rnd.sample(pool, shots)
    context = ""
    for shot in [x for x in drawn if x != doc][:shots]:
        context += gsm8k_doc_to_text(shot)
        if shot["answer"] != "":
            context += " " + shot["answer"] + "\n\n"
    return context + gsm8k_doc_to_text(doc)


def gsm8k_requests(test, pool, shots, limit=None):
    """one generate_until request per evaluated document, in order, the shots drawn from one random.Random(1234)"""
    rnd = random.Random(FEWSHOT_SEED)
    docs = test[:limit] if limit else test
    return [{"task": "gsm8k", "doc_id": i, "target": d["answer"],
             "arguments": [(gsm8k_context(d, shots, rnd, pool), copy.deepcopy(GSM8K_GEN_KWARGS))]}
            for i, d in enumerate(docs)]


STRICT_MATCH = re.compile(r"#### (\-?[0-9\.\,]+)")
FLEXIBLE_EXTRACT = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
EXACT_MATCH_IGNORE = [",", "\\$", "(?s).*#### ", "\\.$"]


def strict_match(response):
    """filter strict-match: RegexFilter (group_select 0: the first match, its one group, strip()), take_first"""
    found = STRICT_MATCH.findall(response)
    return found[0].strip() if found else "[invalid]"


def flexible_extract(response):
    """filter flexible-extract: RegexFilter group_select -1: the last match, its first non-empty group, strip()"""
    found = FLEXIBLE_EXTRACT.findall(response)
    if not found:
        return "[invalid]"
    groups = [g for g in found[-1] if g]
    return groups[0].strip() if groups else "[invalid]"


def exact_match(prediction, reference):
    """exact_match_hf_evaluate with gsm8k.yaml's regexes_to_ignore (re.sub each, in order, on both), ignore_case
    (lower()), equality. (NumPy's lower() keeps each string's length: a string with a character that lowers to
    two, such as U+0130, is cut; filtered predictions are ASCII, so no equality changes.)"""
    for pattern in EXACT_MATCH_IGNORE:
        prediction, reference = re.sub(pattern, "", prediction), re.sub(pattern, "", reference)
    return 1.0 if prediction.lower() == reference.lower() else 0.0


def gsm8k_scores(response, target):
    s, f = strict_match(response), flexible_extract(response)
    return {"strict-match": s, "flexible-extract": f,
            "exact_match,strict-match": exact_match(s, target), "exact_match,flexible-extract": exact_match(f, target)}


def cut_response(text, until):
    """HFLM.generate_until: the decoded text cut at each stop string in turn"""
    for term in until:
        if len(term) > 0:
            text = text.split(term)[0]
    return text


# =============================================================================================
# 3. gsm8k_filters.jsonl and python_random.jsonl: the filters, exact_match and Python's random alone

# (response, target): each response with the target it was written against
FILTER_CASES = [
    ("", "#### 18"),                                        # empty response: both filters "[invalid]"
    (" She makes 18 dollars.\n\n", "#### 18"),
    ("#### 18", "#### 18"),
    ("So the answer is #### 72", "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72"),
    ("#### -1,234.5", "#### -1,234.5"),
    ("#### -1,234.5", "#### -1234.5"),                      # commas removed on both sides
    ("It costs $1,000.", "#### 1,000"),                     # flexible "$1,000." -> "1000"
    ("It costs $1,000.", "#### $1,000."),
    ("#### 5\n#### 6", "#### 5"),                           # several "####": strict takes the first ...
    ("#### 5\n#### 6", "#### 6"),                           # ... flexible the last number
    ("#### abc #### 12", "#### 12"),                        # the first "#### " has no number after it
    ("####  12", "#### 12"),                                # two spaces: no strict match
    ("####12", "#### 12"),
    ("#### $12", "#### 12"),                                # "$" is not in strict's class
    ("#### 3 apples", "#### 3"),                            # text after the number
    ("#### 3.", "#### 3"),                                  # "\\.$" removes the final "."
    ("12.\n", "#### 12"),                                   # flexible "12." ("\\n" is not in the class)
    ("The answer is 18.\n", "#### 18"),                     # a line break after the final period
    ("The answer is 18.\n", "#### 18.\n"),                  # "\\.$" also matches before a final "\\n"
    ("#### 18\n", "#### 18\n"),                             # the reference keeps its "\\n"
    ("#### 18\n", "#### 18"),
    ("-", "#### -1"),                                       # a lone "-"
    ("- 5", "#### 5"),
    ("x-5y", "#### -5"),                                    # flexible "-5" (the second alternative)
    ("5-3=2", "#### 2"),                                    # flexible: "5", "-3", "2": the last
    ("-.5", "#### -.5"),
    ("...", "#### 5"),                                      # only dots: flexible "..." (two or more)
    (",,", "#### 0"),
    ("$$", "#### 5"),
    (".", "#### 5"),                                        # one dot: nothing matches
    ("#### ,,", "#### 7"),                                  # strict ",,", which exact_match empties
    ("#### ,,", "#### ,"),                                  # both empty: equal
    ("1.2.3", "#### 1.2.3"),
    ("10,000,000 grains", "#### 10000000"),
    ("It costs $5 and then 10 more.", "#### 10"),           # the two filters disagree
    ("Answer: 3 apples", "#### 3"),
    ("7 #### 8 9", "#### 8"),                               # strict "8", flexible "9"
    ("7 #### 8 9", "#### 9"),
    ("#### 1e5", "#### 1"),
    ("#### \u22125", "#### -5"),                            # U+2212 MINUS SIGN is not "-"
    ("#### \uff15", "#### 5"),                              # fullwidth digit: no match
    ("\u0667\u0662 apples", "#### 72"),                     # Arabic-Indic digits: no match
    ("\u00b2 and \u2155", "#### 2"),                        # superscript two, a vulgar fraction
    ("1\u00a0000", "#### 1000"),                            # a no-break space splits the number
    ("The answer is 42", "no hashes 42"),                   # a reference without "#### " keeps its text
    ("42", "42"),
    ("I think 4,000.", "#### 4,000."),
    ("There were 2.50 dollars, so 2.5", "#### 2.50"),
    ("0.5", "#### .5"),
    ("Nothing here", "#### [INVALID]"),                     # "[invalid]" == lower("[INVALID]")
    ("#### 5", "#### [INVALID]"),
    ("12", "#### \u00c9T\u00c9"),                           # non-ASCII upper case in the reference
    ("N/A", "#### \u0130"),                                 # U+0130: lower() gives two code points
    ("#### 7\n\nQuestion", "#### 7"),
    ("$1,234.56", "#### 1234.56"),
    ("#### -0", "#### 0"),
    ("#### 007", "#### 7"),                                 # no numeric comparison
    ("Total: 1,2,3,", "#### 123"),
    ("#### 1,234.\n", "#### 1234"),
    ("#####  5 ##### 6", "#### 6"),                         # "#### " inside "##### "
    ("-$5", "#### -5"),
    ("caf\u00e9 \U0001F642 3 \u00e9l\u00e8ves", "#### 3"),
    ("\t 9 \t", "#### 9"),
]


def python_random_lines():
    """random.Random(seed).sample(range(n), k), six calls in a row on one generator, per line"""
    lines = []
    for seed in [FEWSHOT_SEED, 0, 42, 4294967295]:
        for n in [1, 2, 5, 21, 22, 30, 7473, 10 ** 6]:
            ks = sorted({k for k in [0, 1, 3, 5, 6, 8, 25, n] if k <= n and (k <= 25 or n <= 30)})
            for k in ks:
                lines.append({"seed": seed, "population": n, "k": k, "draws": python_draws(n, k, 6, seed)})
    return lines


# =============================================================================================
# 4. The cross-check: lm-eval 0.4.7's own code, read from the mirror at run time, on every row and case.

class LmEvalCode:
    """lm-eval's task yamls and the functions named above, exec'd from the mirror's files (tag v0.4.7)"""

    def __init__(self, mirror):
        import jinja2, numpy, yaml  # noqa: F401  (lm-eval's template engine, its array library, its yaml parser)
        self.mirror = mirror
        self.warnings = []
        warnings = self.warnings

        class Recorder(logging.Handler):
            def emit(self, record):
                warnings.append(record.getMessage())
        self.quiet = logging.getLogger("lm-eval-crosscheck")
        self.quiet.propagate = False
        self.quiet.addHandler(Recorder(level=logging.WARNING))
        self.datasets_stub = types.ModuleType("datasets")

        class Dataset(list):
            """Dataset.map: each row with the function's fields added (a field of the same name replaced)"""
            def map(self, fn):
                return Dataset([{**row, **fn(row)} for row in self])
        self.datasets_stub.Dataset = Dataset
        ns = self.exec_module("lm_eval/utils.py", only={"regex_replace", "apply_template", "softmax", "env", "jinja2"},
                              extra={"np": numpy})
        self.utils = types.SimpleNamespace(apply_template=ns["apply_template"], softmax=ns["softmax"])
        self.task_ns = self.exec_module("lm_eval/api/task.py", only={"TaskConfig", "Task", "ConfigurableTask"}, extra={
            "eval_logger": self.quiet, "utils": self.utils, "Instance": Instance, "OutputType": str, "np": numpy,
            "abc": __import__("abc")})
        self.samplers = self.exec_module("lm_eval/api/samplers.py")
        self.filters = self.exec_module("lm_eval/filters/extraction.py", only={"RegexFilter"}, extra={"Filter": object})
        self.filters.update(self.exec_module("lm_eval/filters/selection.py", only={"TakeFirstFilter"}, extra={"Filter": object}))
        self.metrics = self.exec_module("lm_eval/api/metrics.py", only={"exact_match_hf_evaluate"}, extra={"np": numpy})

    def read(self, path):
        r = subprocess.run(["git", "-C", self.mirror, "show", f"{LM_EVAL_TAG}:{path}"], capture_output=True)
        if r.returncode != 0:
            raise FileNotFoundError(f"{self.mirror}: {LM_EVAL_TAG}:{path}: {r.stderr.decode(errors='replace').strip()}")
        return r.stdout.decode("utf-8")

    def exec_module(self, path, only=None, extra=None):
        """exec a file of the mirror (or, with `only`, just the top-level functions, classes, assignments and
        imports of those names; the methods of a class without annotations and decorators, except a
        dataclass's), with `datasets` stubbed; returns its namespace"""
        source = self.read(path)
        tree = ast.parse(source, path)
        if only is not None:
            body = []
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in only:
                    body.append(node)
                elif isinstance(node, ast.Assign) and any(ast.unparse(t).split(".")[0].split("[")[0] in only
                                                         for t in node.targets):
                    body.append(node)
                elif isinstance(node, ast.ImportFrom) and node.module in only:
                    body.append(node)
            for node in body:
                if isinstance(node, ast.ClassDef) and not any(ast.unparse(d) == "dataclass" for d in node.decorator_list):
                    node.decorator_list = []      # register_filter(...)
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef):
                            strip_function(item)
                elif isinstance(node, ast.FunctionDef):
                    strip_function(node)
            tree = ast.Module(body=body, type_ignores=[])
        import typing, collections.abc, dataclasses, functools, inspect
        ns = {"__name__": "lm_eval_mirror." + path.replace("/", ".")[:-3], "re": re, "ast": ast, "random": random,
              "copy": copy, "deepcopy": copy.deepcopy, "string": __import__("string"), "dataclass": dataclasses.dataclass,
              "asdict": dataclasses.asdict, "getsource": inspect.getsource, "partial": functools.partial}
        ns.update({name: getattr(typing, name) for name in ["Any", "Dict", "Iterable", "Iterator", "List", "Literal",
                                                             "Mapping", "Optional", "Tuple", "Union"]})
        ns["Callable"] = collections.abc.Callable
        ns.update(extra or {})
        saved = sys.modules.get("datasets")
        sys.modules["datasets"] = self.datasets_stub
        try:
            exec(compile(tree, f"{self.mirror}:{LM_EVAL_TAG}:{path}", "exec"), ns)
        finally:
            if saved is None:
                del sys.modules["datasets"]
            else:
                sys.modules["datasets"] = saved
        return ns

    def task_config(self, folder, name):
        """the yaml (its include: merged under it) with each !function resolved in the task folder's module"""
        import yaml

        class Loader(yaml.SafeLoader):
            pass
        Loader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))
        cfg = yaml.load(self.read(f"lm_eval/tasks/{folder}/{name}"), Loader=Loader)
        if "include" in cfg:
            base = self.task_config(folder, cfg.pop("include"))
            base.update(cfg)
            cfg = base
        modules = {}
        for key, value in list(cfg.items()):
            if isinstance(value, tuple) and value[0] == "!function":
                module, function = value[1].rsplit(".", 1)
                if module not in modules:
                    modules[module] = self.exec_module(f"lm_eval/tasks/{folder}/{module}.py")
                cfg[key] = modules[module][function]
        return cfg

    def task(self, cfg, eval_docs, fewshot_docs=None):
        """a ConfigurableTask with lm-eval's own methods and TaskConfig, set up as its __init__ does for the parts
        these tasks use: process_docs, features, multiple_input / multiple_target, metrics, the sampler with
        set_fewshot_seed(1234)'s generator"""
        t = object.__new__(self.task_ns["ConfigurableTask"])   # its __init__ would download the dataset
        config = self.task_ns["TaskConfig"](**cfg)
        t._config = config                                       # Task.config returns it
        t.prompt = None
        t.OUTPUT_TYPE = config.output_type
        docs = eval_docs
        if config.process_docs is not None:
            docs = config.process_docs(self.datasets_stub.Dataset(eval_docs))
        t.task_docs = docs
        t.features = list(docs[0].keys())
        t._metric_fn_list, t._metric_fn_kwargs = {}, {}
        for m in config.metric_list:
            t._metric_fn_list[m["metric"]] = self.metrics["exact_match_hf_evaluate"] if m["metric"] == "exact_match" else None
            t._metric_fn_kwargs[m["metric"]] = {k: v for k, v in m.items()
                                                 if k not in ["metric", "aggregation", "higher_is_better", "hf_evaluate"]}
        t.multiple_input, t.multiple_target = 0, 0
        test_text, test_target = t.doc_to_text(docs[0]), t.doc_to_target(docs[0])
        if config.doc_to_choice is not None and isinstance(test_text, int):
            t.multiple_input = len(t.doc_to_choice(docs[0]))
        if isinstance(test_target, list):
            t.multiple_target = len(test_target)
        if fewshot_docs is not None:
            t.sampler = self.samplers["get_sampler"]("default")(list(fewshot_docs), t, rnd=random.Random(FEWSHOT_SEED))
        return t, docs


def strip_function(node):
    """no decorators but staticmethod, classmethod and property, and no annotations (evaluated at def time,
    they would need lm-eval's imports)"""
    node.decorator_list = [d for d in node.decorator_list if ast.unparse(d) in ("staticmethod", "classmethod", "property")]
    node.returns = None
    a = node.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
        arg.annotation = None


class Instance:
    """lm_eval/api/instance.py's Instance, as far as construct_requests fills it"""

    def __init__(self, request_type, doc, arguments, idx, metadata=None, **kwargs):
        self.request_type, self.doc, self.arguments, self.idx, self.metadata = request_type, doc, arguments, idx, metadata
        self.args = arguments


def crosscheck(mirror, cases):
    """every task row, every case's requests and the filter cases through lm-eval's own code; returns a summary"""
    lm = LmEvalCode(mirror)
    folder_of = {"arc_easy": ("arc", "arc_easy.yaml"), "arc_challenge": ("arc", "arc_challenge.yaml"),
                 "openbookqa": ("openbookqa", "openbookqa.yaml"), "piqa": ("piqa", "piqa.yaml"),
                 "hellaswag": ("hellaswag", "hellaswag.yaml"), "winogrande": ("winogrande", "default.yaml")}
    checked = {"rows": 0, "requests": 0, "metrics": 0, "filters": 0, "gsm8k": 0}
    tasks = {}
    for task in KNOWLEDGE_TASKS:
        cfg = lm.task_config(*folder_of[task])
        assert cfg["task"] == task and cfg["output_type"] == "multiple_choice"
        assert cfg.get("num_fewshot") in (None, 0) and not cfg.get("description") and not cfg.get("fewshot_config")
        assert [m["metric"] for m in cfg["metric_list"]] == (["acc"] if task in NO_ACC_NORM else ["acc", "acc_norm"])
        t, docs = lm.task(cfg, TASK_ROWS[task])
        assert bool(t.multiple_input) == (task == "winogrande")
        tasks[task] = (t, docs)
        metric_rnd = random.Random(7)
        for i, (raw, doc) in enumerate(zip(TASK_ROWS[task], docs)):
            mine = knowledge_request(task, raw, i)
            ctx = t.fewshot_context(doc, 0)
            theirs = [inst.arguments for inst in t.construct_requests(doc, ctx, metadata=(task, i, 1))]
            assert theirs == mine["arguments"], (task, i, theirs, mine["arguments"])
            assert t.doc_to_choice(doc) == mine["choices"], (task, i)
            # process_results against mc_metrics: one-hot lls find the gold; random and tied lls test acc_norm
            trials = [[0.0 if j == c else -1.0 for j in range(len(theirs))] for c in range(len(theirs))]
            trials += [[metric_rnd.uniform(-40.0, -0.5) for _ in theirs] for _ in range(40)] + [[-3.0] * len(theirs)]
            for lls in trials:
                want = mc_metrics(lls, mine["target"], mine["choices"], mine["norm"])
                got = t.process_results(doc, [(ll, False) for ll in lls])
                assert {k: float(v) for k, v in got.items()} == want, (task, i, lls, got, want)
                checked["metrics"] += 1
            checked["rows"] += 1
    assert not lm.warnings, lm.warnings
    # every knowledge case's requests, as build_all_requests makes them (limit: the first N docs of each task)
    for case in cases:
        if case["kind"] != "knowledge":
            continue
        for req in knowledge_requests(case["tasks"], case["limit"]):
            t, docs = tasks[req["task"]]
            doc = docs[req["doc_id"]]
            theirs = [inst.arguments for inst in t.construct_requests(doc, t.fewshot_context(doc, 0), metadata=None)]
            assert theirs == req["arguments"]
            checked["requests"] += 1
    # gsm8k: the sampler, fewshot_context and construct_requests of each case, on a fresh task (its seed 1234)
    cfg = lm.task_config("gsm8k", "gsm8k.yaml")
    assert cfg["num_fewshot"] == 5 and cfg["fewshot_split"] == "train" and cfg["test_split"] == "test"
    test, train, small = gsm8k_data()
    for case in cases:
        if case["kind"] != "gsm8k":
            continue
        pool = small if case["small"] else train
        t, docs = lm.task(cfg, test, fewshot_docs=pool)
        assert t.config.generation_kwargs == GSM8K_GEN_KWARGS and t.config.target_delimiter == " "
        mine = gsm8k_requests(test, pool, case["shots"])
        for req, doc in zip(mine, docs):
            inst = t.construct_requests(doc, t.fewshot_context(doc, case["shots"]), metadata=None)
            assert inst.request_type == "generate_until"
            assert [tuple(inst.arguments)] == req["arguments"], (case["name"], req["doc_id"])
            assert t.doc_to_target(doc) == req["target"]
            checked["gsm8k"] += 1
    # the filters and exact_match, as filter_list and process_results apply them
    t, _ = lm.task(cfg, test, fewshot_docs=train)
    pipelines = []
    for f in cfg["filter_list"]:
        steps = []
        for step in f["filter"]:
            cls = {"regex": lm.filters["RegexFilter"], "take_first": lm.filters["TakeFirstFilter"]}[step["function"]]
            steps.append(cls(**{k: v for k, v in step.items() if k != "function"}))
        pipelines.append((f["name"], steps))
    assert [p[0] for p in pipelines] == ["strict-match", "flexible-extract"]
    for response, target in FILTER_CASES:
        mine = gsm8k_scores(response, target)
        doc = {"question": "?", "answer": target}
        for name, steps in pipelines:
            resps = [[response]]
            for step in steps:
                resps = list(step.apply(resps, [doc]))
            filtered = resps[0]
            assert filtered == mine[name], (response, name, filtered, mine[name])
            score = t.process_results(doc, [filtered])
            assert set(score) == {"exact_match"} and float(score["exact_match"]) == mine["exact_match," + name], \
                (response, target, name, score, mine)
            checked["filters"] += 1
    return checked


# =============================================================================================
# 5. The cases and the files written without a model

FAMILIES = {  # family: (checkpoint folder under OUT, the name in case names)
    "llama": ("llama3_tiny", "llama3"), "mamba2": ("mamba2_tiny", "mamba2"), "mamba": ("mamba_tiny", "mamba"),
    "falcon_mamba": ("falcon_mamba_tiny", "falcon_mamba"), "zamba2": ("zamba2_tiny", "zamba2"),
    "llamba": ("llamba_tiny", "llamba"),
}


# masks with named positions (section 5b): name, family, harness, shots (mmlu), tasks (knowledge), mask. Attention
# heads only: an SSM head's entries would need its implicit attention recomputed (make_intervention_fixtures does
# that for numeric positions; these cases leave SSM heads out)
NAMED_CASES = [
    ("named_mmlu_llama3", "llama", "mmlu", 1, None, "L1H0@-1:letters"),
    ("named_mmlu_zamba2", "zamba2", "mmlu", 0, None, "L*A*@-1:letters"),      # the rebuttal's refined mask
    ("named_knowledge_zamba2", "zamba2", "knowledge", None, ["arc_easy", "winogrande"], "L*A*@-1:letters"),  # no marks
    ("named_kv_llama3", "llama", "kv", None, None, "L1H0@-1:value,L1H1@-1:text=is"),
]


def task_cases(out):
    """[{name, family, kind, command, ...}]: knowledge (tasks, limit, mask), gsm8k (small, shots, max_gen) and named
    (harness, shots, tasks, mask, special) cases"""
    data, small = mh.data_rel(out, "data", "tasks"), mh.data_rel(out, "data", "tasks_small")
    model = {f: ("MODEL_LLAMA3" if f == "llama" else mh.data_rel(out, folder)) for f, (folder, _) in FAMILIES.items()}
    cases = []
    for family, (_, label) in FAMILIES.items():
        cases.append({"name": f"knowledge_{label}", "family": family, "kind": "knowledge", "tasks": KNOWLEDGE_TASKS,
                      "limit": None, "mask": None, "command": f"knowledge -m {model[family]} --data {data}"})
    cases.append({"name": "knowledge_mask", "family": "llama", "kind": "knowledge",
                  "tasks": ["winogrande", "hellaswag", "arc_easy"], "limit": None, "mask": "L1H0",
                  "command": f"knowledge -m MODEL_LLAMA3 --data {data} --tasks winogrande,hellaswag,arc_easy --mask L1H0"})
    cases.append({"name": "knowledge_limit", "family": "llama", "kind": "knowledge", "tasks": ["piqa", "openbookqa"],
                  "limit": 2, "mask": None,
                  "command": f"knowledge -m MODEL_LLAMA3 --data {data} --tasks piqa,openbookqa --limit 2"})
    for name, family, is_small, shots, max_gen in [("gsm8k_llama3", "llama", False, 5, 48), ("gsm8k_mamba2", "mamba2", False, 2, 32),
                                                   ("gsm8k_small", "mamba2", True, 3, 16), ("gsm8k_zamba2", "zamba2", False, 1, 16)]:
        cases.append({"name": name, "family": family, "kind": "gsm8k", "small": is_small, "shots": shots,
                      "max_gen": max_gen, "mask": None,
                      "command": f"gsm8k -m {model[family]} --data {small if is_small else data} --shots {shots} "
                                 f"--max-gen-toks {max_gen}"})
    mmlu_dir, keys = mh.data_rel(out, "data", "mmlu"), mh.data_rel(out, "data", "keys.txt")
    for name, family, harness, shots, tasks, mask in NAMED_CASES:
        if harness == "mmlu":
            options = f"--data {mmlu_dir} --shots {shots}"
        elif harness == "knowledge":
            options = f"--data {data} --tasks {','.join(tasks)}"
        else:
            options = (f"--keys {keys} --pairs {','.join(map(str, mh.KV_PAIRS))} --samples {mh.KV_SAMPLES} "
                       f"--seed {mh.KV_SEED}")
        # command.txt is split on spaces, unquoted: the mask holds no space (L*A*... matches no file at the root)
        assert " " not in mask and "'" not in mask
        cases.append({"name": name, "family": family, "kind": "named", "harness": harness, "shots": shots,
                      "tasks": tasks, "limit": None, "mask": mask,
                      "special": harness == "kv",   # kv: the authors' tokenizer call adds BOS; mmlu and knowledge: no --bos
                      "command": f"{harness} -m {model[family]} {options} --mask {mask}"})
    return cases


def case_requests(case):
    """the requests of a case, in the order of its log"""
    if case["kind"] == "named":
        return named_requests(case)
    if case["kind"] == "knowledge":
        return knowledge_requests(case["tasks"], case["limit"])
    test, train, small = gsm8k_data()
    return gsm8k_requests(test, small if case["small"] else train, case["shots"])


def jsonl_line(obj, key):
    """a data line: json.dumps(row, ensure_ascii=False) as export_tasks.py writes it, or, for a few lines,
    \\u escapes or the keys in reverse order (gna reads JSON, not this layout)"""
    if key in REORDERED_LINES:
        obj = dict(reversed(list(obj.items())))
    return json.dumps(obj, ensure_ascii=key in ESCAPED_LINES)


def write_jsonl(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def write_data(out):
    """data/tasks/, data/tasks_small/, gsm8k_filters.jsonl, python_random.jsonl; each read back and compared"""
    test, train, small = gsm8k_data()
    files = {("tasks", t): rows for t, rows in TASK_ROWS.items()}
    files[("tasks", "gsm8k")], files[("tasks", "gsm8k_train")] = test, train
    files[("tasks_small", "gsm8k")], files[("tasks_small", "gsm8k_train")] = test, small
    for folder in ("tasks", "tasks_small"):
        shutil.rmtree(os.path.join(out, "data", folder), ignore_errors=True)
    for (folder, name), rows in files.items():
        path = os.path.join(out, "data", folder, name + ".jsonl")
        write_jsonl(path, [jsonl_line(r, (name, i) if folder == "tasks" else None) for i, r in enumerate(rows)])
        with open(path, encoding="utf-8") as f:
            back = [json.loads(line) for line in f]
        assert len(back) == len(rows)
        for i, (b, r) in enumerate(zip(back, rows)):
            assert b == r and (list(b) == list(r) or (folder == "tasks" and (name, i) in REORDERED_LINES)), (path, i)
    write_jsonl(os.path.join(out, "gsm8k_filters.jsonl"),
                [json.dumps({"response": r, "target": t, **gsm8k_scores(r, t)}, ensure_ascii=False) for r, t in FILTER_CASES])
    write_jsonl(os.path.join(out, "python_random.jsonl"),
                [json.dumps(x, separators=(",", ":")) for x in python_random_lines()])


def request_line(req, positions=None):
    line = {"task": req["task"], "doc_id": req["doc_id"], "arguments": [list(a) for a in req["arguments"]]}
    if positions is not None:
        line["mask_positions"] = positions
    return line


def write_requests(out, cases, toks=None):
    """each case's command.txt and expected_requests.jsonl (a named case's masked documents with their
    "mask_positions" where toks, {family: tokenizer}, has the tokenizer); an expected_log.jsonl already there must
    hold the same requests and positions (a data change without a model run would leave it stale)"""
    stale = []
    for case in cases:
        folder = os.path.join(out, "cases", case["name"])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "command.txt"), "w") as f:
            f.write(case["command"] + "\n")
        tok = (toks or {}).get(case["family"]) if case["kind"] == "named" else None
        kept = {}   # without the tokenizer here: the positions on file, for requests that are still the same
        path = os.path.join(folder, "expected_requests.jsonl")
        if case["kind"] == "named" and tok is None and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                kept = {json.dumps([x["task"], x["doc_id"], x["arguments"]]): x["mask_positions"]
                        for x in map(json.loads, f) if "mask_positions" in x}
        lines = []
        for req in case_requests(case):
            positions = None
            if tok is not None and req["masked"]:
                positions = [logged for _, logged, _ in
                             named_request_masks(req, parse_named_mask(case["mask"]), tok, case["special"])]
            elif req.get("masked"):
                positions = kept.get(json.dumps([req["task"], req["doc_id"], [list(a) for a in req["arguments"]]]))
            lines.append(request_line(req, positions))
        write_jsonl(path, [json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in lines])
        log = os.path.join(folder, "expected_log.jsonl")
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                logged = [json.loads(x) for x in f]
            keys = ("task", "doc_id", "arguments")
            if ([{k: x[k] for k in keys} for x in logged] != [{k: x[k] for k in keys} for x in lines] or
                    any("mask_positions" in x and y.get("mask_positions") != x["mask_positions"] for x, y in zip(lines, logged))):
                stale.append(case["name"])
    return stale


# =============================================================================================
# 5b. Positions by name: --mask items that name their query or key positions by what is there (gna.c I.7,
#     named_positions and span_tokens; the rebuttal's refined Zamba2 mask, "the ':' of 'Answer:' attending to
#     the option letters A-D"). Standard library only; the tokenizer is an argument (tokenizers.Tokenizer, or
#     the self-test's ToyTokenizer).
#
#     A request's marks are named parts [start, end) of its context: an mmlu question's option lines
#     "X. <choice>\n" ("options") and their letters X ("letters"), of the question asked (the last option lines,
#     before "Answer:"); a kv prompt's "key:value\n" lines ("pairs"), the asked key's line ("asked") and its value
#     ("value": the digits after ":", without the "\n"); the other tasks have none. With C the context's tokens
#     (trailing white space moved off, as _encode_pair does; the harness's special tokens) and P(k) those of
#     context[:k], a mark holds the positions [first, last):
#       first = len(common prefix of P(start) and C)
#       last  = len(common prefix of P(end) and C), plus one when P(end) is not a prefix of C (and there is a
#               token of C left): a token across either edge belongs to the mark
#     A name selects the union of its marks' positions, in order. text=S selects every position of the request's
#     input ((context + continuation)[:-1]) whose token, decoded alone with special tokens kept, is S once
#     str.strip()ped. A numeric @-1 is the input's last position. gna's log line of a document carries
#     "mask_positions": per request {item as written: [query positions, key positions]}, for the items that name
#     positions.

MARK_NAMES = ("letters", "options", "pairs", "asked", "value")   # gna.c's mark_names
POSITIONS_RE = re.compile(r"(-?\d+)(?:-(-?\d+))?")


def parse_positions_or_name(text):
    """what follows @ or ": ("text", S), ("name", one of MARK_NAMES) or ("range", first, last) as written"""
    if text.startswith("text="):
        assert 1 <= len(text) - 5 < 32 and ":" not in text[5:], text   # gna keeps S to 31 bytes, up to "," or ":"
        return ("text", text[5:])
    if text in MARK_NAMES:
        return ("name", text)
    m = POSITIONS_RE.fullmatch(text)
    assert m, f"{text!r}: expected positions N or N-M, or a name ({', '.join(MARK_NAMES)}, text=S)"
    return ("range", int(m.group(1)), int(m.group(2) if m.group(2) is not None else m.group(1)))


def parse_named_mask(spec):
    """a --mask spec's items, each as written: {"text", "layers", "kind", "heads", "queries", "keys"}, layers and
    heads as written ("*", "1", "0-3"), kind "H", "A" or "S", queries and keys None (not written) or
    parse_positions_or_name's tuple"""
    items = []
    for text in spec.split(","):
        m = re.fullmatch(r"L(\*|\d+(?:-\d+)?)([HAS])(\*|\d+(?:-\d+)?)(?:@(text=[^:]+|[^:]+)(?::(.+))?)?", text)
        assert m, f"{text!r}: expected L<layers><H|A|S><heads>[@<queries>[:<keys>]]"
        queries = parse_positions_or_name(m.group(4)) if m.group(4) is not None else None
        keys = parse_positions_or_name(m.group(5)) if m.group(5) is not None else None
        assert not (queries and keys and queries[0] == keys[0] == "text"), f"{text!r}: one text= per item"
        items.append({"text": text, "layers": m.group(1), "kind": m.group(2), "heads": m.group(3),
                      "queries": queries, "keys": keys})
    return items


def names_positions(items):
    return any(side is not None and side[0] != "range" for it in items for side in (it["queries"], it["keys"]))


def mmlu_marks(context, choices):
    """[(name, start, end)]: the option lines "X. <choice>\\n" of the question asked (the context ends with them and
    "Answer:") and each letter X, character offsets, in gna's order (a line, then its letter)"""
    options = "".join(f"{letter}. {c}\n" for letter, c in zip("ABCD", choices))
    assert context.endswith("\n" + options + "Answer:"), context
    at, marks = len(context) - len("Answer:") - len(options), []
    for letter, c in zip("ABCD", choices):
        end = at + len(f"{letter}. {c}\n")
        assert context[at] == letter and context[end - 1] == "\n"
        marks += [("options", at, end), ("letters", at, at + 1)]
        at = end
    return marks


def kv_marks(prompt, values, asked):
    """[(name, start, end)]: each "key:value\\n" line of the dictionary; for the asked one (index `asked`) also the
    line and its value's digits, in gna's order"""
    header = "Memorize the following dictionary:\n"
    assert prompt.startswith(header)
    lines = prompt[len(header):].split("\n")
    assert len(lines) == len(values) + 1
    at, marks, key_asked = len(header), [], None
    for i, (line, value) in enumerate(zip(lines[:-1], values)):
        key, colon, v = line.partition(":")
        assert colon and v == value and value.isdigit(), (line, value)
        end = at + len(line) + 1
        marks.append(("pairs", at, end))
        if i == asked:
            marks += [("asked", at, end), ("value", at + len(key) + 1, end - 1)]
            key_asked = key
        at = end
    assert prompt[at:] == f"The value of the key '{key_asked}' is", prompt
    return marks


def named_requests(case):
    """a named case's documents (make_harness_fixtures' mmlu and kv requests, knowledge_requests), each with its
    "marks" and "masked" (kv's unmasked copies of each sample run without the mask)"""
    if case["harness"] == "mmlu":
        mmlu = mh.mmlu_docs_from_csv()
        docs = mh.mmlu_requests(mmlu, case["shots"])
        for doc in docs:
            choices = mmlu[(doc["task"][len("mmlu_"):], "test")][doc["doc_id"]]["choices"]
            assert all(a[0] == doc["arguments"][0][0] for a in doc["arguments"])
            doc.update(marks=mmlu_marks(doc["arguments"][0][0], choices), masked=True)
        return docs
    if case["harness"] == "kv":
        docs = mh.kv_requests(True)
        for doc in docs:
            doc["marks"] = kv_marks(doc["arguments"][0][0], doc["choices"], doc["target"])
        return docs
    docs = knowledge_requests(case["tasks"], case["limit"])
    for doc in docs:
        doc.update(marks=[], masked=True)
    return docs


def common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def mark_span(encode, context, tokens, start, end):
    """gna.c span_tokens: the positions [first, last) of the tokens (`tokens`: the context's) that hold a character
    of context[start:end]; encode(text) -> ids, as the harness encodes"""
    before, through = encode(context[:start]), encode(context[:end])
    first, last = common_prefix(before, tokens), common_prefix(through, tokens)
    if last < len(through) and last < len(tokens):   # P(end) is not a prefix of C: a token crosses the end
        last += 1
    return first, last


def named_positions(which, marks, encode, decode_one, context, tokens, inp):
    """the positions of the request's input `inp` (its context's `tokens` first) that ("name", N) or ("text", S)
    selects: the union of the marks named N, in order; or every token whose decode_one(id).strip() is S"""
    if which[0] == "text":
        return [i for i, t in enumerate(inp) if decode_one(t).strip() == which[1]]
    out = []
    for name, start, end in marks:
        if name != which[1]:
            continue
        first, last = mark_span(encode, context, tokens, start, end)
        for p in range(first, last):
            if not out or out[-1] < p:
                out.append(p)
    return out


def listed_positions(first, last, T):
    """a numeric range as gna lists it (resolve_position: negative from the end, outside [0, T) none)"""
    resolve = lambda p: (p + T if p < 0 else p) if -T <= p < T else -1
    a, b = resolve(first), resolve(last)
    return list(range(a, b + 1)) if a >= 0 and b >= 0 else []


def resolve_named_request(items, marks, encode, decode_one, context, tokens, inp):
    """(the request's "mask_positions" object: {item text: [queries, keys]} for the items that name positions,
    [(item, queries or None, keys or None)]: each item's positions in this request's input (None: not written)"""
    logged, resolved = {}, []
    for item in items:
        sides = []
        for side in (item["queries"], item["keys"]):
            if side is None:
                sides.append(None)
            elif side[0] == "range":
                sides.append(listed_positions(side[1], side[2], len(inp)))
            else:
                sides.append(named_positions(side, marks, encode, decode_one, context, tokens, inp))
        resolved.append((item, sides[0], sides[1]))
        if names_positions([item]):
            assert item["text"] not in logged, f"{item['text']}: written twice in the spec"
            logged[item["text"]] = [sides[0] or [], sides[1] or []]
    return logged, resolved


def named_request_masks(req, items, tok, special):
    """per (context, continuation) of a document: (the input (context + continuation)[:-1], its "mask_positions"
    object, its resolved items); tok: a tokenizers.Tokenizer (encode(text, add_special_tokens).ids, decode(ids,
    skip_special_tokens)); special: the harness's special tokens (kv: BOS; mmlu and knowledge: none)"""
    encode = lambda text: tok.encode(text, add_special_tokens=special).ids
    decode_one = lambda t: tok.decode([t], skip_special_tokens=False)
    out = []
    for context, continuation in req["arguments"]:
        ctx, cont = mh.encode_pair(tok, context, continuation, special)
        inp = (ctx + cont)[:-1]
        logged, resolved = resolve_named_request(items, req["marks"], encode, decode_one, context, ctx, inp)
        out.append((inp, logged, resolved))
    return out


def named_tokenizers(cases):
    """({family: tokenizers.Tokenizer} for the named cases' positions, notes on what is left out)"""
    families = sorted({c["family"] for c in cases if c["kind"] == "named"})
    if not families:
        return {}, []
    try:
        import tokenizers
    except ImportError:
        return {}, ["no tokenizers library here: the named cases' expected_requests.jsonl lines carry no mask_positions"]
    toks, notes = {}, []
    for family in families:
        path = mh.LLAMA3_TOKENIZER if family == "llama" else mh.FALCON_TOKENIZER
        if not os.path.exists(path) or (family == "llama" and mh.sha256(path) != mh.LLAMA3_TOKENIZER_SHA256):
            notes.append(f"{path} missing or not the pinned one: no mask_positions in the {family} named cases' requests")
            continue
        toks[family] = tokenizers.Tokenizer.from_file(path)
    return toks, notes


class ToyTokenizer:
    """the self-test's stand-in for tokenizers.Tokenizer: greedy longest match over a few pieces, other characters
    one token each (id 1000 + code point); BOS (id 1, "<s>") first when add_special_tokens. Greedy matching is not
    stable under prefixes, as a BPE's merges are not: a piece can cross a mark's edge."""

    def __init__(self, pieces):
        self.ids = {p: 2 + i for i, p in enumerate(pieces)}
        self.pieces = {i: p for p, i in self.ids.items()}
        self.pieces[1] = "<s>"
        self.longest = max(len(p) for p in pieces)

    def encode(self, text, add_special_tokens=True):
        ids, i = ([1] if add_special_tokens else []), 0
        while i < len(text):
            n = next((n for n in range(min(self.longest, len(text) - i), 1, -1) if text[i:i + n] in self.ids), 1)
            ids.append(self.ids.get(text[i:i + n], 1000 + ord(text[i])))
            i += n
        return types.SimpleNamespace(ids=ids)

    def decode(self, ids, skip_special_tokens=True):
        return "".join("" if (t == 1 and skip_special_tokens) else self.pieces.get(t, chr(t - 1000) if t >= 1000 else "")
                       for t in ids)


def check_named_positions():
    """the grammar, the marks and the span rule on hand-written prompts and a toy tokenizer, against positions
    worked out by hand (the comments show each token)"""
    assert parse_named_mask("L*A*@-1:letters") == [{"text": "L*A*@-1:letters", "layers": "*", "kind": "A", "heads": "*",
                                                   "queries": ("range", -1, -1), "keys": ("name", "letters")}]
    items = parse_named_mask("L1H0@-1:value,L1H1@-1:text=is,L0H1,L0-1H*@text=Answer:-3--1,L1H0@asked:2")
    assert [(it["queries"], it["keys"]) for it in items] == [
        (("range", -1, -1), ("name", "value")), (("range", -1, -1), ("text", "is")), (None, None),
        (("text", "Answer"), ("range", -3, -1)), (("name", "asked"), ("range", 2, 2))]
    for bad in ("L0H0@text=:letters", "L0H0@text=a:text=b", "L0H0@-1:letter", "L0H0:letters", "L0X0"):
        try:
            parse_named_mask(bad)
        except AssertionError:
            continue
        raise AssertionError(f"{bad!r} parsed")
    assert [names_positions([it]) for it in items] == [True, True, False, True, True]
    assert listed_positions(-1, -1, 5) == [4] and listed_positions(1, -2, 5) == [1, 2, 3] and listed_positions(-6, -1, 5) == []

    # mmlu: "\nA" and "x\nB" cross a letter's start (the line before ends inside them), "D." crosses D's end, and the
    # "\nA" of "\nAnswer" the last option line's end
    tok = ToyTokenizer(["\nA", ". ", "x\nB", "Answer", "D.", " A"])
    context = "Q?\nA. x\nB. yy\nC. \nD. z\nAnswer:"
    marks = mmlu_marks(context, ["x", "yy", "", "z"])
    assert [context[a:b] for _, a, b in marks] == ["A. x\n", "A", "B. yy\n", "B", "C. \n", "C", "D. z\n", "D"]
    # tokens: 0 Q, 1 ?, 2 \nA, 3 ". ", 4 x\nB, 5 ". ", 6 y, 7 y, 8 \n, 9 C, 10 ". ", 11 \n, 12 D., 13 " ", 14 z,
    # 15 \nA, 16-20 n s w e r, 21 :
    ctx = tok.encode(context, add_special_tokens=False).ids
    assert len(ctx) == 22 and tok.decode(ctx) == context and tok.decode([ctx[15]]) == "\nA"
    req = {"arguments": [(context, " A"), (context, " D.")], "marks": marks}
    mask = parse_named_mask("L0H0@-1:letters,L0H1@text=?:options,L0H0@-1:pairs")
    got = [(inp, logged) for inp, logged, _ in named_request_masks(req, mask, tok, False)]
    assert got[0][0] == ctx and got[1][0] == ctx + [1000 + ord(" ")]   # " D." -> " ", "D.": the input keeps " "
    assert got[0][1] == {"L0H0@-1:letters": [[21], [2, 4, 9, 12]], "L0H1@text=?:options": [[1], list(range(2, 16))],
                         "L0H0@-1:pairs": [[21], []]}, got[0][1]
    assert got[1][1]["L0H0@-1:letters"] == [[22], [2, 4, 9, 12]]
    # with BOS every position moves by one
    assert named_request_masks(req, mask, tok, True)[0][1]["L0H0@-1:letters"] == [[22], [3, 5, 10, 13]]

    # kv: ":7" crosses the value's start, "\nThe" the asked line's end; " is" is the text "is"
    tok = ToyTokenizer(["Memorize the following dictionary:\n", "ab", ":4", "2\n", "cd", ":7", "\nThe", " is", " 'cd'"])
    prompt = "Memorize the following dictionary:\nab:42\ncd:7\nThe value of the key 'cd' is"
    marks = kv_marks(prompt, ["42", "7"], 1)
    assert [(n, prompt[a:b]) for n, a, b in marks] == [("pairs", "ab:42\n"), ("pairs", "cd:7\n"), ("asked", "cd:7\n"),
                                                        ("value", "7")]
    # tokens: 0 <s>, 1 the header, 2 ab, 3 :4, 4 2\n, 5 cd, 6 :7, 7 \nThe, 8-24 " value of the key" one by one,
    # 25 " 'cd'", 26 " is"
    ids = tok.encode(prompt).ids
    assert len(ids) == 27 and tok.decode([ids[26]]) == " is"
    req = {"arguments": [(prompt, "7"), (prompt, "42")], "marks": marks}
    mask = parse_named_mask("L1H0@-1:value,L1H1@-1:text=is,L1H0@asked:pairs,L0H0@-1:letters")
    got = named_request_masks(req, mask, tok, True)
    assert got[0][0] == ids and got[1][0] == ids + [1000 + ord("4")]
    assert got[0][1] == {"L1H0@-1:value": [[26], [6]], "L1H1@-1:text=is": [[26], [26]],
                         "L1H0@asked:pairs": [[5, 6, 7], [2, 3, 4, 5, 6, 7]], "L0H0@-1:letters": [[26], []]}, got[0][1]
    assert got[1][1]["L1H0@-1:value"] == [[27], [6]] and got[1][1]["L1H1@-1:text=is"] == [[27], [26]]
    # items without names are resolved but not logged
    logged, resolved = resolve_named_request(parse_named_mask("L0H0,L1H0@-2:0-1,L1H1@-1:value"), marks,
                                             lambda t: tok.encode(t).ids, lambda t: tok.decode([t], False), prompt, ids, ids)
    assert list(logged) == ["L1H1@-1:value"]
    assert [(q, k) for _, q, k in resolved] == [(None, None), ([25], [0, 1]), ([26], [6])]

    # the cases' own requests: marks where the harness has them, the option letters and values where they should be
    for case in task_cases(DEFAULT_OUT):
        if case["kind"] != "named":
            continue
        for req in named_requests(case):
            context = req["arguments"][0][0]
            names = [n for n, _, _ in req["marks"]]
            if case["harness"] == "mmlu":
                assert names == ["options", "letters"] * 4
                assert [context[a:b] for n, a, b in req["marks"] if n == "letters"] == ["A", "B", "C", "D"]
            elif case["harness"] == "kv":
                value = [context[a:b] for n, a, b in req["marks"] if n == "value"]
                assert value == [req["choices"][req["target"]]] and names.count("pairs") == len(req["choices"])
            else:
                assert names == []


# =============================================================================================
# 6. Models and the expected results (torch, transformers 5.x, tokenizers, safetensors, numpy)

# zamba2_tiny's eos_token_id: an ordinary token, "os" in the Falcon-pipeline vocabulary, chosen from the greedy
# generations of gsm8k_zamba2 so that its stops happen: docs 6 and 5 generate it (an EOS stop, mid-way and at the
# last token), doc 3 generates "posed", whose text holds the EOS token's text "os": a stop string (lm-eval adds
# the EOS text to `until`) met inside another token; the responses are cut at "os". The others run to the limit.
ZAMBA2_EOS = 387
GSM8K_DESIGNED_STOPS = {"gsm8k_zamba2": {3: "os", 5: "eos", 6: "eos"}}

# the new checkpoints: family -> (seed, config), built by make_fixtures.build as make_fixtures.make builds them,
# vocab 1500 for the Falcon-pipeline tokenizer, bf16; llama3_tiny (seed 101) and mamba2_tiny (102) come from
# make_harness_fixtures.py and are reused as they are
NEW_CHECKPOINTS = {
    "mamba": (103, dict(vocab_size=1500, hidden_size=16, intermediate_size=32, state_size=8, num_hidden_layers=2,
                        conv_kernel=4, time_step_rank=2, use_bias=False, use_conv_bias=True, layer_norm_epsilon=1e-5,
                        residual_in_fp32=True, tie_word_embeddings=True, bos_token_id=0, eos_token_id=2, pad_token_id=1)),
    # expand 16 beside intermediate_size 2 x hidden, as falcon-mamba-7b's config (make_fixtures' falcon fixtures)
    "falcon_mamba": (104, dict(vocab_size=1500, hidden_size=16, intermediate_size=32, state_size=8, num_hidden_layers=2,
                               conv_kernel=4, time_step_rank=3, use_bias=False, use_conv_bias=True,
                               layer_norm_epsilon=1e-5, residual_in_fp32=True, tie_word_embeddings=True, expand=16,
                               mixer_rms_eps=1e-6, bos_token_id=0, eos_token_id=2, pad_token_id=1)),
    # make_fixtures' zamba2_f32_one_block at hidden 16: one shared block visited by both hybrid layers
    "zamba2": (105, dict(vocab_size=1500, hidden_size=16, num_hidden_layers=4,
                         layers_block_type=["mamba", "hybrid", "mamba", "hybrid"], mamba_d_state=8, mamba_d_conv=4,
                         mamba_expand=2, mamba_ngroups=2, n_mamba_heads=4, intermediate_size=32, num_attention_heads=4,
                         num_key_value_heads=4, num_mem_blocks=1, use_shared_attention_adapter=True, adapter_rank=4,
                         use_mem_rope=True, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                         chunk_size=8, add_bias_linear=False, tie_word_embeddings=True, rms_norm_eps=1e-5,
                         hidden_act="gelu", bos_token_id=1, eos_token_id=ZAMBA2_EOS, pad_token_id=0)),
    # cartesia's layout (llamba_reference); vocab padded to 1504 by pad_vocab_size_multiple 8, as LlambaLMHeadModel
    "llamba": (106, dict(vocab_size=1500, pad_vocab_size_multiple=8, d_model=16, n_layer=2, tie_embeddings=True,
                         lm_head_bias=False, norm_epsilon=1e-5, resid_dropout=0.0,
                         mlp_cfg={"intermediate_size": 32, "bias": False, "act_fn": "silu"},
                         ssm_cfg={"d_state": 8, "n_v_heads": 4, "n_qk_heads": 2, "expand": 1, "chunk_size": 8,
                                  "activation": "identity", "bias": False})),
}
CHECKPOINT_BYTES = 110_000   # model.safetensors of each new checkpoint


def build_checkpoint(out, family):
    """make_fixtures.make's build and save (without its logits files), the Falcon tokenizer copied in"""
    import torch
    import make_fixtures as mf
    from safetensors.torch import save_file
    seed, cfg = NEW_CHECKPOINTS[family]
    path = os.path.join(out, FAMILIES[family][0])
    shutil.rmtree(path, ignore_errors=True)
    model = mf.build(family, cfg, seed).to(torch.bfloat16)
    if family == "llamba":
        os.makedirs(path)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(path, "model.safetensors"),
                  metadata={"format": "pt"})
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump({"model_type": "llamba", **cfg}, f, indent=2)
    else:
        model.save_pretrained(path)
    shutil.copyfile(mh.FALCON_TOKENIZER, os.path.join(path, "tokenizer.json"))
    size = os.path.getsize(os.path.join(path, "model.safetensors"))
    assert size < CHECKPOINT_BYTES, f"{path}: model.safetensors has {size} bytes"
    return path


def check_zamba2_tied(model):
    """make_fixtures.make's check: every visit of a shared block is tied to its first visit once loaded"""
    import torch
    first_visit = {}
    for i, t in enumerate(model.config.layers_block_type):
        if t != "hybrid":
            continue
        visit = sum(1 for j in range(i) if model.config.layers_block_type[j] == "hybrid")
        b = visit % model.config.num_mem_blocks
        mine = model.model.layers[i].shared_transformer.self_attn.q_proj.weight
        if b in first_visit:
            assert torch.equal(mine, first_visit[b]), f"transformers did not tie layer {i}'s shared block"
        else:
            first_visit[b] = mine


def load_scorer(family, path):
    """make_harness_fixtures.Scorer (float64 transformers, --mask as forward pre-hooks); Zamba2's dt unclamped as
    gna computes it (make_fixtures.zamba2_cuda_dt: the CUDA path behind the paper's numbers)"""
    import make_fixtures as mf
    scorer = mh.Scorer(family, path)
    if family == "zamba2":
        check_zamba2_tied(scorer.model)
        mf.zamba2_cuda_dt(scorer.model)
    return scorer


def eos_ids_of(path):
    """config.json's eos_token_id (an id or a list), as gna reads it"""
    with open(os.path.join(path, "config.json")) as f:
        eos = json.load(f).get("eos_token_id")
    return [] if eos is None else (list(eos) if isinstance(eos, list) else [eos])


def score_knowledge_doc(scorer, tok, req, spec):
    """HFLM._loglikelihood_tokens for each (context, continuation) of a document, as make_harness_fixtures.score_doc
    computes it (TemplateLM._encode_pair without special tokens; float64 log-softmax of the model's logits on
    (context + continuation)[:-1]; ll = the continuation tokens' sum, is_greedy = each is the row's argmax), with
    a context per request (Winogrande); then process_results' acc and acc_norm"""
    import torch
    ctx_encs, cont_encs, lls, greedy, gaps = [], [], [], [], []
    for context, continuation in req["arguments"]:
        assert context != ""  # lm-eval would score an empty context after the prefix token; none here
        ctx, cont = mh.encode_pair(tok, context, continuation, False)
        assert len(ctx) > 0 and len(cont) > 0, (req["task"], req["doc_id"], context, continuation)
        inp = (ctx + cont)[:-1]
        assert len(inp) < LM_EVAL_MAX_LENGTH, "past lm-eval's max_length: it would truncate from the left"
        first = len(ctx) - 1                      # the row predicting cont[0]
        rows = scorer.logprobs(inp, spec, first)
        assert rows.shape[0] == len(cont)
        toks = torch.tensor(cont)
        lls.append(float(rows[torch.arange(len(cont)), toks].sum()))
        greedy.append(bool((rows.argmax(dim=-1) == toks).all()))
        for r, t in zip(rows, cont):
            others = r.clone()
            others[t] = -float("inf")
            gaps.append(abs(float(r[t] - others.max())))
        ctx_encs.append(ctx)
        cont_encs.append(cont)
    metrics = mc_metrics(lls, req["target"], req["choices"], req["norm"])
    line = {"task": req["task"], "doc_id": req["doc_id"], "arguments": [list(a) for a in req["arguments"]],
            "context_tokens": ctx_encs, "continuation_tokens": cont_encs, "lls": lls, "is_greedy": greedy,
            "target": req["target"], **metrics}
    info = {"margin": mh.top2_margin(lls), "gaps": gaps}
    info["rel_margin"] = info["margin"] / max(1.0, abs(max(lls)))
    if req["norm"]:
        normed = [ll / len(c) for ll, c in zip(lls, req["choices"])]
        info["norm_margin"] = mh.top2_margin(normed)
        info["rel_margin"] = min(info["rel_margin"], info["norm_margin"] / max(1.0, abs(max(normed))))
    return line, info


def lm_eval_window_stop(tok, generated, until):
    """MultiTokenEOSCriteria: a stop string found in the decode of the last len(encode(stop)) + 2 generated tokens"""
    for s in until:
        n = len(tok.encode(s, add_special_tokens=False).ids) + 2
        if s in tok.decode(generated[-n:], skip_special_tokens=False):
            return True
    return False


def generate_doc(scorer, tok, req, eos_ids, until, max_gen, spec=None):
    """HFLM.generate_until for one request with greedy decoding: the context encoded without special tokens
    (tok_batch_encode), then up to max_gen tokens, each the argmax (the first maximum) of the float64 logits of
    a whole forward (no cache); stop after an EOS id (config.json) or once a stop string is in the decode of
    the generated tokens (special tokens kept, as MultiTokenEOSCriteria decodes); the response is their decode
    without special tokens, cut at each stop string"""
    import torch
    context = req["arguments"][0][0]
    ctx = tok.encode(context, add_special_tokens=False).ids
    assert len(ctx) <= LM_EVAL_MAX_LENGTH - LM_EVAL_MAX_GEN_TOKS, "lm-eval would truncate the context from the left"
    generated, gaps, stop, window_stop = [], [], "max_gen_toks", None
    while len(generated) < max_gen:
        logits = scorer.forward(ctx + generated, spec)[-1]
        top = torch.topk(logits, 2)
        nxt = int(torch.argmax(logits))           # torch: the first maximal index
        assert float(logits[nxt]) == float(top.values[0])
        gaps.append(float(top.values[0] - top.values[1]))
        assert nxt < tok.get_vocab_size(), "a padded vocabulary row won the argmax"
        generated.append(nxt)
        if window_stop is None and (nxt in eos_ids or lm_eval_window_stop(tok, generated, until)):
            window_stop = len(generated)
        if nxt in eos_ids:
            stop = "eos"
            break
        text = tok.decode(generated, skip_special_tokens=False)
        hits = [s for s in until if s and s in text]
        if hits:
            stop = hits[0]
            break
    response = cut_response(tok.decode(generated, skip_special_tokens=True), until)
    scores = gsm8k_scores(response, req["target"])
    line = {"task": "gsm8k", "doc_id": req["doc_id"], "arguments": [list(a) for a in req["arguments"]],
            "context_tokens": ctx, "generated_tokens": generated, "resps": [[response]],
            "filtered_resps": {"strict-match": scores["strict-match"], "flexible-extract": scores["flexible-extract"]},
            "target": req["target"], "exact_match,strict-match": scores["exact_match,strict-match"],
            "exact_match,flexible-extract": scores["exact_match,flexible-extract"], "min_gap": min(gaps)}
    # lm-eval's look-back window stops where this does (or neither stops before max_gen_toks)
    agrees = window_stop == len(generated) or (window_stop is None and stop == "max_gen_toks")
    info = {"stop": stop, "ctx_len": len(ctx), "gen_len": len(generated), "window_agrees": agrees}
    return line, info


def knowledge_results(logged):
    """lm-eval's results per task (mean, mean_stderr; "N/A" for one document), in gna's task order, and, when all
    six ran, the knowledge control: the plain mean of the six accs (the authors' eval_knowledge)"""
    results = {}
    for task in KNOWLEDGE_TASKS:
        items = [x for x in logged if x["task"] == task]
        if items:
            results[task] = {"alias": task, **mh.task_results(items, ["acc"] if task in NO_ACC_NORM else ["acc", "acc_norm"])}
    if all(t in results for t in KNOWLEDGE_TASKS):
        results["knowledge"] = {"alias": "knowledge",
                                "acc,none": sum(results[t]["acc,none"] for t in KNOWLEDGE_TASKS) / len(KNOWLEDGE_TASKS),
                                "acc_stderr,none": "N/A"}
    return results


def gsm8k_results(logged):
    r = {"alias": "gsm8k"}
    for f in ("strict-match", "flexible-extract"):
        vals = [x["exact_match," + f] for x in logged]
        r["exact_match," + f] = mh.mean(vals)
        r["exact_match_stderr," + f] = mh.mean_stderr(vals) if len(vals) > 1 else "N/A"
    return {"gsm8k": r}


def run_case(case, scorer, tok, path, checked_masks):
    """(log lines, results, the MANIFEST line)"""
    logged, infos = [], []
    reqs = case_requests(case)
    if case["kind"] == "knowledge":
        spec = case["mask"]
        if spec and (case["family"], spec) not in checked_masks:
            ctx, cont = mh.encode_pair(tok, *reqs[0]["arguments"][0], False)
            scorer.check_mask((ctx + cont)[:-1], spec)
            checked_masks.add((case["family"], spec))
        for req in reqs:
            line, info = score_knowledge_doc(scorer, tok, req, spec)
            logged.append(line)
            infos.append(info)
        results = knowledge_results(logged)
        margin = min(i["margin"] for i in infos)
        norms = [i["norm_margin"] for i in infos if "norm_margin" in i]
        gap = min(g for i in infos for g in i["gaps"])
        accs = ", ".join(f"{t} {r['acc,none']:.3f}" + (f"/{r['acc_norm,none']:.3f}" if "acc_norm,none" in r else "")
                         for t, r in results.items())
        msg = (f"{case['name']}: {len(logged)} docs, min top-2 ll margin {margin:.3e}, min acc_norm margin "
               f"{min(norms) if norms else float('inf'):.3e}, min of either relative to the best value "
               f"{min(i['rel_margin'] for i in infos):.3e}, min greedy gap {gap:.3e}; acc/acc_norm {accs}")
        # gna_test's tie band: |best - second| <= 2e-4 max(1, |best|) leaves acc uncompared; acc_norm has none
        if min(i["rel_margin"] for i in infos) < 2e-4 or gap < 1e-4:
            msg += "  WARNING: a near tie (within 2e-4 of the best value); float32 rounding could flip it"
    else:
        eos_ids = eos_ids_of(path)
        eos_texts = [tok.decode([e], skip_special_tokens=False) for e in eos_ids[:1]]   # tokenizer.eos_token_id: one
        until = list(GSM8K_UNTIL)
        for e in eos_texts:                        # handle_stop_sequences: appended unless already there
            if e not in until:
                until.append(e)
        for req in reqs:
            line, info = generate_doc(scorer, tok, req, eos_ids, until, case["max_gen"], case["mask"])
            logged.append(line)
            infos.append(info)
        results = gsm8k_results(logged)
        gap = min(x["min_gap"] for x in logged)
        stops = ", ".join(f"{i['gen_len']}:{i['stop']!r}" for i in infos)
        r = results["gsm8k"]
        msg = (f"{case['name']}: {len(logged)} docs, until {until}, context tokens {min(i['ctx_len'] for i in infos)}-"
               f"{max(i['ctx_len'] for i in infos)}, generated tokens and stop per doc [{stops}], min top-1 - top-2 "
               f"logit gap {gap:.3e}; exact_match strict-match {r['exact_match,strict-match']:.3f}, flexible-extract "
               f"{r['exact_match,flexible-extract']:.3f}")
        designed = GSM8K_DESIGNED_STOPS.get(case["name"], {})
        missed = {d: want for d, want in designed.items() if infos[d]["stop"] != want}
        if missed:
            msg += f"  WARNING: the stops designed for docs {missed} did not happen: choose ZAMBA2_EOS again"
        if not all(i["window_agrees"] for i in infos):
            msg += "  NOTE: lm-eval's look-back window (MultiTokenEOSCriteria) stops at another token on some doc"
        if gap < 1e-3:
            msg += "  WARNING: a near tie in a greedy step; float32 rounding could change the generation"
    return logged, results, msg


class NamedMaskScorer:
    """make_harness_fixtures.Scorer's logprobs under a mask whose items name positions (section 5b): each request's
    input runs whole, from position 0, with the positions found in it (expect()). The entries (query, key) of the
    named attention heads are zeroed after the softmax, not renormalised, by make_intervention_fixtures'
    patched_eager (Zamba2's shared attention told its layer by patch_attention's layer hooks); an item without keys
    zeroes the head's slice of o_proj's input at its queries (ablation_hook). spec None: the plain scorer."""

    def __init__(self, scorer):
        import make_intervention_fixtures as mi
        self.scorer, self.model, self.family = scorer, scorer.model, scorer.family
        self.n_layers = self.model.config.num_hidden_layers
        self.kinds = mi.layer_kinds(self.family, self.model, self.n_layers)
        self.attention_layers = sum("A" in k for k in self.kinds)
        self.masks, self.cache = {}, {}

    def heads(self, resolved):
        """[(layer, head, queries or None, keys or None)]: a request's resolved items on the model's heads (L*A*: every
        attention head of every layer that has them: Zamba2's hybrid layers, the shared block's visits)"""
        import make_intervention_fixtures as mi
        out = []
        for item, queries, keys in resolved:
            for l in mi.parse_range(item["layers"], self.n_layers):
                assert 0 <= l < self.n_layers, f"{item['text']}: no layer {l}"
                kind = item["kind"]
                if kind == "H":
                    assert len(self.kinds[l]) == 1, f"{item['text']}: layer {l} has attention and SSM heads"
                    kind = next(iter(self.kinds[l]))
                if kind not in self.kinds[l]:
                    assert item["layers"] == "*", f"{item['text']}: layer {l} has no {kind} heads"
                    continue
                assert kind == "A", f"{item['text']}: an SSM head's entries need its implicit attention recomputed: not here"
                count = self.model.config.num_attention_heads
                for h in mi.parse_range(item["heads"], count):
                    assert 0 <= h < count, f"{item['text']}: no head {h}"
                    out.append((l, h, queries, keys))
        assert out, "the mask names no attention head"
        return out

    def expect(self, inp, resolved):
        """the mask of the request whose input is inp (the choices of a question may share one)"""
        heads = self.heads(resolved)
        assert self.masks.setdefault(tuple(inp), heads) == heads, "one input, two masks"

    def forward(self, inp, heads):
        """float64 logits [T, V] of inp under the heads' mask"""
        import torch
        import make_fixtures as mf
        import make_intervention_fixtures as mi
        from transformers.models.llama import modeling_llama
        from transformers.models.zamba2 import modeling_zamba2
        model, family, T = self.model, self.family, len(inp)
        saved = (modeling_llama.eager_attention_forward, modeling_zamba2.eager_attention_forward)
        hooks = mi.patch_attention(family, model)
        mi.STATE.update(layer=None, masks={}, capture={}, ran=0)
        try:
            ablate = {}
            for l, h, queries, keys in heads:
                rows = list(range(T)) if queries is None else queries
                assert all(0 <= t < T for t in rows + (keys or []))
                if keys is None:    # Zamba2's o_proj is the shared block's: a hook there would hit both visits
                    assert family == "llama", "a head ablation (no keys) in a named Zamba2 mask: not here"
                    if rows:
                        ablate.setdefault(l, []).append((h, rows))
                elif rows and keys:  # positions that select nothing leave the head as it is
                    mi.STATE["masks"].setdefault(l, []).append((h, rows, keys))
            for l, its in ablate.items():
                _, mixer, o_attn, _ = mi.modules(family, model, l)
                hooks.append(o_attn.register_forward_pre_hook(mi.ablation_hook(its, mi.head_width(family, model, "A", mixer))))
            logits = mf.forward_f64(model, torch.tensor([inp]))
            ran = mi.STATE["ran"]
        finally:
            for hk in hooks:
                hk.remove()
            modeling_llama.eager_attention_forward, modeling_zamba2.eager_attention_forward = saved
            mi.STATE.update(layer=None, masks={}, capture={}, ran=0)
        assert ran == self.attention_layers, f"the patched attention ran {ran} times, not {self.attention_layers}"
        assert logits.shape[0] == T
        return logits

    def logprobs(self, inp, spec, first_row):
        """log_softmax of the logits at rows first_row.. of the input, float64 [R, V] (Scorer.logprobs' contract)"""
        import torch
        if spec is None:
            return self.scorer.logprobs(inp, None, first_row)
        heads = self.masks[tuple(inp)]
        key = (tuple(inp), repr(heads), first_row)
        if key not in self.cache:
            self.cache = {key: torch.log_softmax(self.forward(inp, heads)[first_row:], dim=-1)}  # one entry, as Scorer
        return self.cache[key]

    def check(self, inp):
        """the mask against the plain run of inp: the rows before its first masked query are unchanged (and every row
        where it masks nothing); returns the largest change of a logit at or after the first masked query"""
        heads = self.masks[tuple(inp)]
        plain, masked = self.scorer.forward(inp, None), self.forward(inp, heads)
        rows = [t for _, _, queries, keys in heads if keys is None or keys
                for t in (range(len(inp)) if queries is None else queries)]
        first = min(rows) if rows else len(inp)
        if first > 0:
            before = (plain[:first] - masked[:first]).abs().max().item()
            assert before < 1e-10, f"the mask changed rows before its first query {first}: {before}"
        return (plain[first:] - masked[first:]).abs().max().item() if rows else 0.0


def positions_summary(name, items, tok, records):
    """the MANIFEST line of what each named item selected: per item the counts of query and key positions per
    request, the texts of the tokens selected (decoded alone), and examples; records: (task, doc_id, continuation,
    input, its "mask_positions" object)"""
    import collections
    text = lambda ids: " ".join(repr(tok.decode([ids_], skip_special_tokens=False)) for ids_ in ids)
    parts = []
    for item in [it["text"] for it in items if names_positions([it])]:
        counts = collections.Counter((len(o[item][0]), len(o[item][1])) for *_, o in records)
        keys = collections.Counter(text([inp[k] for k in o[item][1]]) or "(none)" for _, _, _, inp, o in records)
        queries = collections.Counter(text([inp[q] for q in o[item][0]]) or "(none)" for _, _, _, inp, o in records)
        parts.append(f"{item}: (queries, keys) per request {dict(sorted(counts.items()))}; query tokens "
                     + ", ".join(f"{t} x{n}" for t, n in queries.most_common(3)) + "; key tokens "
                     + ", ".join(f"{t} x{n}" for t, n in keys.most_common(4))
                     + (f" ({len(keys) - 4} more)" if len(keys) > 4 else ""))
    examples = []
    for i in sorted({0, len(records) // 2, len(records) - 1}):
        task, doc_id, continuation, inp, o = records[i]
        examples.append(f"{task} {doc_id} {continuation!r} (input of {len(inp)}): " + "; ".join(
            f"{k} @{q} {text([inp[t] for t in q])} : {keys} {text([inp[t] for t in keys])}" for k, (q, keys) in o.items()))
    return f"{name} positions: {len(records)} masked requests; " + " | ".join(parts) + " | e.g. " + " | ".join(examples)


def run_named_case(case, scorer, tok, out):
    """(log lines, results, the MANIFEST line, the positions line) of a case whose mask names positions; the lines
    are make_harness_fixtures.score_doc's (mmlu, kv) or score_knowledge_doc's, each masked document's with its
    "mask_positions", a list with one {item: [queries, keys]} per request, as gna logs them"""
    items = parse_named_mask(case["mask"])
    named = NamedMaskScorer(scorer)
    harness, special = case["harness"], case["special"]

    def score(s, req, spec):
        if harness == "knowledge":
            return score_knowledge_doc(s, tok, req, spec)
        return mh.score_doc(s, tok, req, special, spec, authors_check=harness == "kv")

    logged, infos, records, moved, flips, checked = [], [], [], 0.0, 0, None   # checked: check()'s, first request
    plain_lines = {}
    for req in named_requests(case):
        spec = case["mask"] if req["masked"] else None
        positions = None
        if req["masked"]:
            positions = []
            for (context, continuation), (inp, obj, resolved) in zip(req["arguments"],
                                                                     named_request_masks(req, items, tok, special)):
                named.expect(inp, resolved)
                positions.append(obj)
                records.append((req["task"], req["doc_id"], continuation, inp, obj))
                if checked is None:
                    checked = named.check(inp)
        line, info = score(named, req, spec)
        if positions is not None:
            line["mask_positions"] = positions
            # the same requests without the mask (kv: its unmasked copy, scored just before)
            plain = plain_lines.get((req["task"][:-len("_masked")], req["doc_id"])) if harness == "kv" else \
                score(scorer, req, None)[0]
            moved = max(moved, max(abs(a - b) for a, b in zip(line["lls"], plain["lls"])))
            flips += line["acc"] != plain["acc"]
        else:
            plain_lines[(req["task"], req["doc_id"])] = line
        if "rel_margin" not in info:
            info["rel_margin"] = info["margin"] / max(1.0, abs(max(line["lls"])))
        logged.append(line)
        infos.append(info)
    assert records and checked is not None, "no masked request"
    results = knowledge_results(logged) if harness == "knowledge" else mh.results_of(logged)
    margin = min(i["margin"] for i in infos)
    rel = min(i["rel_margin"] for i in infos)
    gap = min(g for i in infos for g in i["gaps"])
    accs = ", ".join(f"{t} {r['acc,none']:.3f}" + (f"/{r['acc_norm,none']:.3f}" if "acc_norm,none" in r else "")
                     for t, r in results.items() if "acc,none" in r)
    masked_docs = sum(1 for x in logged if "mask_positions" in x)
    msg = (f"{case['name']}: {len(logged)} docs ({masked_docs} masked, {len(records)} requests), min top-2 ll margin "
           f"{margin:.3e}, relative to max(1, |best|) {rel:.3e}, min greedy gap {gap:.3e}; acc"
           f"{'/acc_norm' if harness == 'knowledge' else ''} {accs}; the mask moved log-likelihoods by up to {moved:.3e} "
           f"and changed acc on {flips} docs; on the first masked request the logits from its first masked row on "
           f"moved by up to {checked:.3e}, the rows before it not at all")
    if not any(obj[k][1] for *_, obj in records for k in obj):
        assert moved < 1e-10, f"a mask that selects no entry moved a log-likelihood by {moved}"
        msg += "; it selects no entry: the results are the unmasked ones"
        twin = os.path.join(out, "cases", "knowledge_" + FAMILIES[case["family"]][1], "expected_log.jsonl")
        if harness == "knowledge" and os.path.exists(twin):
            with open(twin, encoding="utf-8") as f:
                theirs = {(x["task"], x["doc_id"]): x for x in map(json.loads, f)}
            diff = max(abs(a - b) for x in logged for a, b in zip(x["lls"], theirs[(x["task"], x["doc_id"])]["lls"]))
            same_acc = all(x["acc"] == theirs[(x["task"], x["doc_id"])]["acc"] for x in logged)
            msg += (f" (against {os.path.relpath(twin, out)}: lls within {diff:.1e}, acc "
                    f"{'the same' if same_acc else 'DIFFERENT'})")
            if diff > 1e-9 or not same_acc:
                msg += "  WARNING: not the unmasked case's values"
    elif checked < 1e-6:
        msg += "  WARNING: the mask hardly changes the first request's logits"
    if rel < 2e-4 or gap < 1e-4:
        msg += "  WARNING: a near tie (within 2e-4 of the best value); float32 rounding could flip it"
    return logged, results, msg, positions_summary(case["name"], items, tok, records)


# =============================================================================================
# 7. Hand-written expectations (typed from the rules, not built by the code above), the README, main

EXPECTED_HELLASWAG = {  # doc -> (query, endings)
    0: ("Personal Care and Style: How to tie a tie. Drape the tie around your neck. The wide end should hang about 12 "
        "inches lower than the narrow end. cross the wide end",
        ["over the narrow end, then bring it up through the loop.. Pull it tight. Adjust the knot.",
         " Wrap the narrow end around twice.  Then tuck it in.", "under your chin [unclosed bracket and keep going",
         "across pair] and done."]),
    1: ("Using the iPhone : A man holds up his phone to the camera.  He The iphone shows a map",
        ["points at the screen and smiles.", "drops it into a glass of water.", "throws the phone across the room.",
         "puts it in his pocket and walks away."]),
    2: ("Caf\u00e9: Zo\u00eb pours the espresso into a cup.", None),
    3: ("Walking: Two friends walk down the Sstra\u00dfe near the \u03bf\u03b4\u03bf\u03c2 \u03ba\u03b1\u03b9 "
        "\u03c3\u03bf\u03c6\u03bf\u03c2", None),
    4: ("Jumping: How to jump Bend your knees [note:\nkeep them soft] and \u01c5ump i\u0307n place",
        ["jump high.", " Land softly on both feet.", "fall over", " stay  still.. "]),
}
EXPECTED_WINOGRANDE = {
    0: [("Paris", " is the capital of France, not Lyon."), ("Lyon", " is the capital of France, not Lyon.")],
    2: [("Kevin couldn't lift the box but Tom could, so the strong one was Kevin", " ."),
        ("Kevin couldn't lift the box but Tom could, so the strong one was Tom", " .")],
    3: [("Zo\u00eb gave Jos\u00e9 a \U0001F381 because Zo\u00eb", " was celebrating a birthday today."),
        ("Zo\u00eb gave Jos\u00e9 a \U0001F381 because Jos\u00e9", " was celebrating a birthday today.")],
    5: [("After the race the judges gave the gold medal to the fastest runner", " \U0001F3C5"),
        ("After the race the judges gave the gold medal to the slowest runner", " \U0001F3C5")],
}
EXPECTED_GSM8K_ZAMBA2 = [  # gsm8k_zamba2 (1 shot): docs 0-2
    "Question: A used car costs $12,500 and its tax is $1,250. What is the total cost?\nAnswer: 12,500 + 1,250 = "
    "$<<12500+1250=13750>>13,750\n#### 13,750\n\nQuestion: Janet\u2019s ducks lay 16 eggs per day. She eats three for "
    "breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the "
    "farmers' market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers' "
    "market?\nAnswer:",
    "Question: What is the sum of the numbers below?\n(The worked answer was lost.)\nAnswer:Question: A bakery bakes "
    "250 loaves of bread a day. How many loaves does it bake in 5 days?\nAnswer:",
    "Question: Dmitri has 24 books. They buy 17 more and then give away 13. How many books does Dmitri have now?\nAnswer:",
]


def check_definitions():
    """the functions of section 2 against the hand-written expectations and a few facts of Python"""
    for i, (query, endings) in EXPECTED_HELLASWAG.items():
        p = hellaswag_process_doc(HELLASWAG[i])
        assert p["query"] == query, (i, p["query"], query)
        assert endings is None or p["choices"] == endings, (i, p["choices"], endings)
    for i, want in EXPECTED_WINOGRANDE.items():
        assert winogrande_requests(WINOGRANDE[i])[0] == want, (i, winogrande_requests(WINOGRANDE[i]))
    assert knowledge_request("openbookqa", OPENBOOKQA[1], 1)["arguments"][0] == (
        "When standing miles away from Mount Rushmore ", " the mountains seem very close")
    assert [knowledge_request("openbookqa", d, i)["target"] for i, d in enumerate(OPENBOOKQA)] == [3, 3, 0, 2, 0]
    assert [knowledge_request("arc_easy", d, i)["target"] for i, d in enumerate(ARC_EASY)] == [2, 0, 1, 4, 0]
    assert [knowledge_request("arc_challenge", d, i)["target"] for i, d in enumerate(ARC_CHALLENGE)] == [0, 3, 2, 0, 2]
    assert [knowledge_request("winogrande", d, i)["target"] for i, d in enumerate(WINOGRANDE)] == [0, 0, 1, 1, 0, 0]
    test, train, small = gsm8k_data()
    got = [r["arguments"][0][0] for r in gsm8k_requests(test, train, 1)[:3]]
    assert got == EXPECTED_GSM8K_ZAMBA2, got
    five = gsm8k_requests(test, train, 5)
    assert five[2]["arguments"][0][0].count("Question: ") == 5          # 4 shots left + the question
    assert five[0]["arguments"][0][0].count("Question: ") == 6
    # Python facts the data relies on
    assert "\u03a3\u039f\u03a6\u039f\u03a3".lower() == "\u03c3\u03bf\u03c6\u03bf\u03c2"      # final sigma
    assert "\u00dfx".capitalize() == "Ssx" and "\u01c6x".capitalize() == "\u01c5x"
    assert "\u00a0C".lstrip() == "C" and " \u00a0 x\u3000".strip() == "x"
    assert re.sub(r"\[.*?\]", "", "[a\nb] [c\rd]") == "[a\nb] "


def manifest_path(out):
    return os.path.join(out, "MANIFEST_tasks.txt")


def manifest_order(cases):
    """the MANIFEST's line names: a case's; a named case's positions line after it"""
    return [n for c in cases for n in ([c["name"]] + ([c["name"] + " positions"] if c["kind"] == "named" else []))]


def write_manifest(out, header, case_lines, order):
    """MANIFEST_tasks.txt: the header, then a line per case in case order; lines of cases not run now are kept"""
    old = {}
    if os.path.exists(manifest_path(out)):
        with open(manifest_path(out), encoding="utf-8") as f:
            for line in f:
                name = line.split(":", 1)[0]
                if name in order:
                    old[name] = line.rstrip("\n")
    old.update(case_lines)
    with open(manifest_path(out), "w", encoding="utf-8") as f:
        f.write("\n".join(header + [old[n] for n in order if n in old]) + "\n")


def new_bytes(out, cases):
    """the bytes this script adds under OUT"""
    paths = [os.path.join(out, "data", "tasks"), os.path.join(out, "data", "tasks_small"),
             os.path.join(out, "gsm8k_filters.jsonl"), os.path.join(out, "python_random.jsonl"), manifest_path(out)]
    paths += [os.path.join(out, FAMILIES[f][0]) for f in NEW_CHECKPOINTS]
    paths += [os.path.join(out, "cases", c["name"]) for c in cases]
    total = 0
    for p in paths:
        if os.path.isdir(p):
            total += mh.dir_bytes(p)
        elif os.path.exists(p):
            total += os.path.getsize(p)
    return total


README_SECTION = """## `gna knowledge` and `gna gsm8k`

Golden data for `gna knowledge` (lm-evaluation-harness 0.4.7's arc_challenge, arc_easy, hellaswag, openbookqa,
piqa and winogrande, 0-shot; the G&A paper's knowledge control is the plain mean of the six accs) and
`gna gsm8k` (lm-eval's gsm8k: generate_until with greedy decoding, the strict-match and flexible-extract
filters, exact_match), made by

    python3 weights_tools/make_task_fixtures.py test/fixtures/harness [--families F,..] [--cases C,..]

(the libraries above; llama3_tiny/ and mamba2_tiny/ must exist, from make_harness_fixtures.py). With
`--data-only` it needs only the standard library, and jinja2, PyYAML and numpy for its cross-check: it writes the
data, gsm8k_filters.jsonl, python_random.jsonl and each case's command.txt and expected_requests.jsonl, and
renders every row and case through lm-eval 0.4.7's own code (its yamls with jinja2 as lm_eval/utils.py
apply_template does, ConfigurableTask's doc_to_* / fewshot_context / construct_requests / process_results,
ContextSampler, RegexFilter, exact_match_hf_evaluate, hellaswag/utils.py, preprocess_winogrande.py), read
from an lm-eval mirror at run time, asserting byte-identical prompts and equal metrics. Real task data comes
from `python3 weights_tools/export_tasks.py FOLDER` (the `datasets` package and the network).

- `data/tasks/<task>.jsonl`: 5-6 hand-written rows per task in its Hugging Face dataset's schema, one JSON
  object a line (a few lines with \\u escapes, a few with their keys in another order): ARC labels "A"-"E"
  and "1"-"5", 3 and 5 choices, choices with quotes, a backslash, a tab and a line break; OpenBookQA answer
  keys with leading spaces and a no-break space (lm-eval lstrip()s them), a stem ending in a space; PIQA
  labels 0 and 1, a solution with a leading space, jinja-like text; HellaSwag's WikiHow brackets
  ("[header]", " [title]" -> ". ", "[step]", nested, unclosed, across "\\n" (kept) and across "\\r"
  (removed)), double and triple spaces, spaces around fields, a ctx_b that capitalize() changes beyond its
  first letter, an empty ctx_b, "\u00df", "\u01c6" and "\u0130" under capitalize(), capital sigmas at words' ends (final
  sigma), label strings "0"-"3"; Winogrande blanks at the start, before punctuation alone, before spaces
  and a no-break space, before an emoji alone; non-ASCII throughout.
- `data/tasks/gsm8k.jsonl` (8 evaluated rows) and `gsm8k_train.jsonl` (the 30-row few-shot pool: n > 21, so
  random.sample(pool, k <= 5) takes its set method): answers with commas, "$", a negative number, a
  decimal, a trailing period, "#### [INVALID]" (exact_match lowers it to strict-match's fallback
  "[invalid]"), a pool row with an empty answer (its shot adds no " " + answer + "\\n\\n"); evaluated rows 2
  and 5 equal pool rows 3 and 2, which random.Random(1234) draws for them in gsm8k_llama3, gsm8k_zamba2 (its
  one shot dropped: no shots left), gsm8k_mamba2 and gsm8k_small, so the drawn copy is left out.
- `data/tasks_small/`: the same gsm8k.jsonl with a 12-row gsm8k_train.jsonl (n <= 21: sample's pool method).
- `mamba_tiny/`, `falcon_mamba_tiny/`, `zamba2_tiny/`, `llamba_tiny/`: random-weight checkpoints (bf16,
  hidden 16, vocabulary 1500; Llamba padded to 1504 by pad_vocab_size_multiple 8; Zamba2 one shared block
  visited by two hybrid layers) with the Falcon-pipeline tokenizer, built by make_fixtures.build.
  zamba2_tiny's eos_token_id is 387, an ordinary token ("os"), picked from gsm8k_zamba2's greedy
  generations so that they stop: docs 5 and 6 generate it (an EOS stop; the response keeps its text, then
  loses it to the cut at the EOS text), doc 3 generates "posed" (the stop string "os" inside another token).
- `gsm8k_filters.jsonl`: `{"response", "target", "strict-match", "flexible-extract", "exact_match,strict-match",
  "exact_match,flexible-extract"}`: Python's re and str on tricky responses and targets.
- `python_random.jsonl`: `{"seed", "population", "k", "draws"}`: random.Random(seed).sample(range(n), k)
  called six times in a row, for gna's Mersenne Twister and sample (both of its methods).
- `cases/knowledge_<family>/` (llama3, mamba2, mamba, falcon_mamba, zamba2, llamba: all six tasks),
  `knowledge_mask` (`--mask L1H0`, three tasks), `knowledge_limit` (`--limit 2`), `gsm8k_llama3` (5 shots,
  48 new tokens), `gsm8k_mamba2` (2, 32), `gsm8k_small` (3, 16, data/tasks_small), `gsm8k_zamba2` (1, 16):
  command.txt; `expected_requests.jsonl` (task, doc_id, arguments: the prompts alone); `expected_log.jsonl`,
  one line per document (tasks in alphabetical order, rows in file order): for multiple choice the
  arguments, per request the context and continuation token ids (Winogrande's two requests have two
  contexts), float64 log-likelihoods, is_greedy, target (the gold index; for Winogrande the answer's index,
  where lm-eval logs the continuation text), acc, acc_norm (not for winogrande); for gsm8k the arguments
  (context and generation kwargs), the context tokens (no special tokens), the greedy generated tokens
  (float64 argmax, the first maximum, stopping after config.json's eos_token_id or once a stop string of
  "Question:", "</s>", "<|im_end|>" and the EOS token's text is in the decode of the generated tokens, special
  tokens kept), resps (their decode without special tokens, cut at each stop string), filtered_resps,
  target, the two exact_match values and min_gap (the smallest top-1 minus top-2 logit gap over the greedy
  steps); `expected_results.json`: lm-eval's keys (`"alias"`, `"acc,none"`, `"acc_stderr,none"`,
  `"acc_norm,none"`, `"acc_norm_stderr,none"`; `"knowledge"` when all six ran; gsm8k's
  `"exact_match,strict-match"`, `"exact_match_stderr,strict-match"`, `"exact_match,flexible-extract"`,
  `"exact_match_stderr,flexible-extract"`). lm-eval's mean and stderr use Python's sum(), which is compensated
  from Python 3.12 on: under 3.11 a value can differ in its last bit (the results are compared to 1e-9).
- `cases/named_*/`: masks that name positions by what is there (gna.c I.7; the rebuttal's refined Zamba2 mask):
  `named_mmlu_llama3` (1 shot, `--mask L1H0@-1:letters`), `named_mmlu_zamba2` (0 shots, `L*A*@-1:letters`: every
  attention head of both hybrid layers), `named_knowledge_zamba2` (arc_easy and winogrande, `L*A*@-1:letters`:
  those tasks have no marks, so the mask zeroes nothing and the results are knowledge_zamba2's) and
  `named_kv_llama3` (`L1H0@-1:value,L1H1@-1:text=is`), attention heads only. A mark is a part [start, end) of a
  request's context: the option lines "X. <choice>\\n" (`options`) and letters X (`letters`) of the mmlu question
  asked, kv's "key:value\\n" lines (`pairs`), the asked one (`asked`) and its digits (`value`); it holds the
  positions [first, last), first the length of the common prefix of the tokens of context[:start] and the
  context's, last that of context[:end], plus one where a token crosses the end. `text=S` is every input token
  whose text alone, str.strip()ped, is S; @-1 is the input's last position, so with Zamba2's tokenizer, where " B"
  and " C" are two tokens, it is the " " before those letters, not the ":" of "Answer:". Every request runs whole
  with its own positions, the entries zeroed after the softmax (make_intervention_fixtures.patched_eager). Each
  masked document's lines carry `"mask_positions"`, per request `{item as written: [query positions, key
  positions]}` (in expected_requests.jsonl where the tokenizers library made it; kv's unmasked samples have none);
  MANIFEST_tasks.txt shows what each item selected.
- `MANIFEST_tasks.txt` (its own file: make_harness_fixtures.py rewrites MANIFEST.txt): versions, seeds, the
  checkpoints' SHA-256, and per case the smallest margins: top-2 log-likelihoods, acc_norm,
  is_greedy, and for gsm8k the greedy logit gap (a near tie there could change a float32 generation), the
  number of tokens generated and why each generation stopped.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=DEFAULT_OUT)
    ap.add_argument("--data-only", action="store_true", help="no models: data, requests, the lm-eval cross-check")
    ap.add_argument("--families", help="comma-separated: " + ",".join(FAMILIES))
    ap.add_argument("--cases", help="comma-separated case names")
    ap.add_argument("--mirror", default=os.environ.get("LM_EVAL_MIRROR", DEFAULT_MIRROR),
                    help="lm-evaluation-harness git directory with the tag " + LM_EVAL_TAG)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    cases = task_cases(out)
    names = [c["name"] for c in cases]
    selected = cases
    if args.families:
        wanted = args.families.split(",")
        bad = [f for f in wanted if f not in FAMILIES]
        assert not bad, f"unknown families {bad}: {list(FAMILIES)}"
        selected = [c for c in selected if c["family"] in wanted]
    if args.cases:
        wanted = args.cases.split(",")
        bad = [n for n in wanted if n not in names]
        assert not bad, f"unknown cases {bad}: {names}"
        selected = [c for c in selected if c["name"] in wanted]

    mh.self_test_aggregation()
    check_definitions()
    check_named_positions()
    write_data(out)
    named_toks, notes = named_tokenizers(cases)
    stale = write_requests(out, cases, named_toks)
    for note in notes:
        print(f"NOTE: {note} (positions already in a case's expected_requests.jsonl are kept where its requests are "
              f"the same)")
    print(f"data written under {out}: " + ", ".join(
        f"{t} {len(rows)}" for t, rows in list(TASK_ROWS.items()) + [("gsm8k", GSM8K_TEST), ("gsm8k_train", GSM8K_TRAIN),
                                                                     ("tasks_small/gsm8k_train", GSM8K_SMALL_POOL)])
          + f" rows; {len(FILTER_CASES)} filter cases, {len(python_random_lines())} python_random lines; "
          f"requests of {len(cases)} cases")
    missing = [m for m in ("jinja2", "yaml", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"NOTE: no {', '.join(missing)} here: the cross-check against lm-eval's own code was skipped")
    elif os.path.isdir(args.mirror):
        checked = crosscheck(args.mirror, cases)
        print("lm-eval " + LM_EVAL_TAG + " cross-check passed (" + ", ".join(f"{v} {k}" for k, v in checked.items()) +
              f"): prompts byte-identical, metrics equal; code read from {args.mirror}")
    else:
        print(f"NOTE: no lm-eval mirror at {args.mirror}: the cross-check against lm-eval's own code was skipped")
    os.makedirs(os.path.dirname(README_OUT), exist_ok=True)
    with open(README_OUT, "w", encoding="utf-8") as f:
        f.write(README_SECTION)
    print(f"README section written to {README_OUT}")
    if args.data_only:
        if stale:
            print(f"WARNING: expected_log.jsonl of {', '.join(stale)} no longer matches the requests: run the models")
        print(f"{new_bytes(out, cases)} bytes of this script's files under {out} (checkpoints and logs of a model run "
              f"included where present)")
        return

    import tokenizers
    import torch
    import transformers
    torch.set_grad_enabled(False)
    assert os.path.exists(mh.LLAMA3_TOKENIZER), f"{mh.LLAMA3_TOKENIZER} is missing: run `make tokenizer-cache`"
    assert mh.sha256(mh.LLAMA3_TOKENIZER) == mh.LLAMA3_TOKENIZER_SHA256, "not the pinned Llama-3.1 tokenizer.json"
    families = sorted({c["family"] for c in selected}, key=list(FAMILIES).index)
    paths, scorers, toks = {}, {}, {}
    for family in families:
        folder = os.path.join(out, FAMILIES[family][0])
        if family in NEW_CHECKPOINTS:
            paths[family] = build_checkpoint(out, family)
        else:
            assert os.path.exists(os.path.join(folder, "model.safetensors")), \
                f"{folder} is missing: run make_harness_fixtures.py first"
            paths[family] = folder
        toks[family] = tokenizers.Tokenizer.from_file(mh.LLAMA3_TOKENIZER if family == "llama" else mh.FALCON_TOKENIZER)
        scorers[family] = load_scorer(family, paths[family])
    header = [f"made by weights_tools/make_task_fixtures.py with torch {torch.__version__}, transformers "
              f"{transformers.__version__}, tokenizers {tokenizers.__version__}, python {sys.version.split()[0]}",
              "seeds: llama3_tiny 101, mamba2_tiny 102 (make_harness_fixtures.py); " +
              ", ".join(f"{FAMILIES[f][0]} {s}" for f, (s, _) in NEW_CHECKPOINTS.items()) +
              f" (make_fixtures.build); gsm8k few-shot random.Random({FEWSHOT_SEED})",
              f"tokenizers: llama3 {mh.LLAMA3_TOKENIZER_SHA256} (not committed), falcon {mh.sha256(mh.FALCON_TOKENIZER)}",
              # every checkpoint there, so that a run of a few cases keeps the others' lines
              "model.safetensors SHA-256: " + ", ".join(f"{folder} {mh.sha256(os.path.join(out, folder, 'model.safetensors'))}"
                                                        for folder, _ in FAMILIES.values()
                                                        if os.path.exists(os.path.join(out, folder, 'model.safetensors'))),
              "knowledge cases: docs, min top-2 ll margin (acc), min top-2 margin of ll/len(choice) (acc_norm), the "
              "smaller of the two relative to max(1, |best|) (gna_test's tie band is 2e-4), min |log p(token) - best "
              "other| over continuation tokens (is_greedy); acc/acc_norm per task",
              "gsm8k cases: the stop strings, context tokens, per doc the tokens generated and why it stopped, min top-1 "
              "minus top-2 logit gap over all greedy steps; exact_match per filter",
              "named cases (masks that name positions): docs, masked requests, min top-2 ll margin, relative to max(1, "
              "|best|), min greedy gap; accs; how far the mask moved the log-likelihoods (against the same requests "
              "unmasked) and on how many docs it changed acc; the next line, per named item: the numbers of query and key "
              "positions per request, the selected tokens' texts (decoded alone) and examples"]
    case_lines = {}
    checked_masks = set()
    import time
    for case in selected:
        started = time.time()
        family = case["family"]
        if case["kind"] == "named":
            logged, results, msg, positions = run_named_case(case, scorers[family], toks[family], out)
            case_lines[case["name"] + " positions"] = positions
            print(positions)
        else:
            logged, results, msg = run_case(case, scorers[family], toks[family], paths[family], checked_masks)
        folder = os.path.join(out, "cases", case["name"])
        with open(os.path.join(folder, "expected_log.jsonl"), "w", encoding="utf-8", newline="\n") as f:
            for line in logged:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        with open(os.path.join(folder, "expected_results.json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(json.dumps({"results": results}, indent=2, ensure_ascii=False) + "\n")
        print(msg, f"({time.time() - started:.1f} s)", flush=True)
        case_lines[case["name"]] = msg
    write_manifest(out, header, case_lines, manifest_order(cases))
    assert not write_requests(out, cases, named_toks) or args.cases or args.families, "a log does not match its requests"
    total = new_bytes(out, cases)
    print(f"{total} bytes added under {out}")
    assert total < NEW_BYTES_BUDGET, f"{total} bytes: over the {NEW_BYTES_BUDGET} budget"


if __name__ == "__main__":
    main()
