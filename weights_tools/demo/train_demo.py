#!/usr/bin/env python3
"""Train gna's demo checkpoints: a small Llama, a Mamba-2 and a Zamba2 hybrid (Mamba-2 layers and a shared
attention block) of about the same parameter count, on the same synthetic data, and save them in Hugging Face
format (bfloat16 weights + tokenizer.json), together with the evaluation data the demo runs on and a log of what
the models can do.

Run where torch, transformers, tokenizers, safetensors and numpy are installed, on one CUDA GPU
(no network needed), from the repository root:

    python3 weights_tools/demo/train_demo.py --out test/models            # the three models, one after the other
    python3 weights_tools/demo/train_demo.py --out /tmp/demo_smoke --smoke   # ~2-3 min end-to-end check
    python3 weights_tools/demo/train_demo.py --out /tmp/z --smoke --only zamba2   # the hybrid's pipeline alone

The models can also train at once, as the committed ones were (same data, from one --data-cache):

    python3 weights_tools/demo/train_demo.py --out D --data-only --data-cache C
    python3 weights_tools/demo/train_demo.py --out D --only llama --data-cache C &
    python3 weights_tools/demo/train_demo.py --out D --only mamba2 --data-cache C &
    python3 weights_tools/demo/train_demo.py --out D --only zamba2 --data-cache C; wait
    python3 weights_tools/demo/train_demo.py --out D --combine

The committed llama_demo and mamba2_demo came from the first two --only runs and --combine (without zamba2);
zamba2_demo was trained later by the third with --zamba2-steps 5000 (at 3000 steps no hybrid learnt in-context
retrieval: test/models/README.md), from the same generator and seed (5000 steps need 163.8M tokens rather
than 98.3M, so it reads a longer buffer in another order), and added with --combine --append, which leaves
the train_log.txt and train_results.json already in D as they were and adds the zamba2 run at their end (the
log's lines, the JSON's key "zamba2"). --eval-only (with --only) evaluates a model already saved in D;
--check-gna PATH compares the logits of gna (the binary at PATH) with transformers' on each saved model.

--smoke trains 60 steps per model, evaluates on small sets and prints each model's measured steps/s and
the step counts that fill 180 and 210 seconds; --llama-steps / --mamba2-steps / --zamba2-steps (or --steps for
all; default 3000 each, which trained the committed models) set the real run. The defaults give the models
the same steps, so they read exactly the same sequences.

Experiment options (their defaults are the recipe of the committed models): --seq-len (512) packs longer
sequences, for KV dictionaries of up to 100 pairs (--kv-train-pairs 2,100: ~500 tokens); --train-seconds T ends a
training within about T seconds (the step count, at most the steps asked for, is re-set every 100 steps from the
measured speed, and the cosine schedule follows it), for runs that share one GPU; --no-ablation skips the head scans
(gna audits the saved model); --llama-layers / --llama-mlp / --llama-heads, --mamba2-state / --mamba2-expand /
--mamba2-heads and --zamba2-state / --zamba2-heads change the shapes (a small SSM state, so that only attention
can hold a long dictionary); --zamba2-mem-blocks N gives the hybrid N shared blocks (visit v runs block v % N), and
--zamba2-ssm-warmup STEPS holds every Mamba mixer's state off for the first STEPS steps, so that the hybrid first
learns what it can through its attention alone (issue 38's third try, sweeps/issue38_6); --kv-is-token makes "' is"
one token, so that the KV question's last token follows the asked key (sweeps/issue38_11); --letter-options MIN,MAX
gives the training letter questions MIN-MAX options (sweeps/issue38_12).
weights_tools/demo/sweep.sh runs several --only trainings at once on one GPU from shared token data and packs each
run's folder into $OUT/<run>.tgz; weights_tools/demo/sweeps/issue38_{1,2,3}.{txt,env} are the three
sweeps of issue 38 (a hybrid whose attention carries retrieval, and an MMLU-format aggregate head in the Llama),
run as `. weights_tools/demo/sweeps/issue38_1.env && sh weights_tools/demo/sweep.sh weights_tools/demo/sweeps/issue38_1.txt`
on one H100. None of their 11 models reached either goal (every number: test/models/train_log.txt, the JSON key
"issue38_sweeps" of train_results.json, test/models/README.md): no hybrid with state 4, 8 or 16 learnt KV retrieval
in 1200-4500 steps of 32 x 1024 tokens (lr 2e-3, 1e-3, 5e-4; more KV and copy text), so the paper's final-row mask
had nothing to remove; the Mamba-2 of state 8 stayed at chance too; and neither Llama (4 layers, or 5 layers on
letter-heavy text) formed a head whose final row reads the gold option (every aggregate score <= 0).

It writes, under --out (only these entries; anything else there, such as README.md, is left alone):

    llama_demo/     LlamaForCausalLM (config.json, model.safetensors, generation_config.json,
                    tokenizer.json, tokenizer_config.json)
    mamba2_demo/    Mamba2ForCausalLM, the same files
    zamba2_demo/    Zamba2ForCausalLM, the same files
    demo_data/mmlu/dev/<subject>_dev.csv, demo_data/mmlu/test/<subject>_test.csv
                    letter multiple choice in the original MMLU CSV layout (gna mmlu --data demo_data/mmlu)
    demo_data/cloze.jsonl   the same test facts as cloze multiple choice (gna mc --data ...)
    demo_data/mmlu_known/, demo_data/cloze_known.jsonl   the same on training facts, their options drawn afresh
                    (the fact is known, its letter only in the prompt: make run's second Llama)
    train_log.txt   the command, seed, versions, parameter counts, losses, wall times and every number below
    train_results.json      the same numbers, machine-readable

Recipe (everything is seeded by --seed, default 1234; Python's random.Random with string seeds,
numpy's default_rng and torch.manual_seed; GPU kernels are not bitwise deterministic run to run)
------------------------------------------------------------------------------------------------
World. 300 made-up countries ("entities"), names built from seeded random syllables. Four attributes,
each with a pool of 40 made-up values (distinct first syllables within a pool, no value equal to any
other name): capital (Capitalised, e.g. "Brelo"), language ("Dravish"), currency (lower case,
"tolek"), national animal (lower case, "zeifox"). Each entity gets one uniformly drawn value per
attribute: 1200 facts. The facts are split 70/30 at random: letter questions are trained only on the
70%; the held-out 30% are in the fact corpus (so they are memorised) but never asked in letter format
during training. MMLU subjects (real names, so gna maps them to lm-eval categories): capital and
language -> high_school_geography (social_sciences), currency -> global_facts (other), national
animal -> miscellaneous (other).

Training documents (each followed by the EOS token <|endoftext|>, id 0; documents are packed into
sequences of 512 tokens, with no attention reset between them). Target shares of the training tokens:
  kv 25%      the paper's KV retrieval: "Memorize the following dictionary:\\n", then n lines
              "<key>:<value>\\n", n drawn log-uniformly from 2..60 (half the dictionaries have 10 pairs or
              fewer: the matching is found on small ones first; --kv-train-pairs, --kv-train-pairs-dist),
              keys distinct from gna's built-in list (parsed from gna.c between /* kv-keys-begin */ and
              /* kv-keys-end */), values distinct integers 0-99; then the query "The value of the key
              '<key>' is<value>" (no space before the value). Half of the documents have that one query
              (exactly the paper's format); the other half have 2-16 queries about distinct keys, one per
              line (more signal per document; --kv-train-queries). Each query is asked, with probability
              0.5 (--kv-line-queries), in the dictionary's own line form "<key>:<value>" instead: plain
              induction, a step towards the paper's question.
  facts 25%   one entity, 1-4 of its attributes in random order, one sentence per line, each sentence
              from a template: 50% "The <attribute> of <entity> is <value>." (the cloze form, which every
              fact appears in many times), 20% "<entity>'s <attribute> is <value>.", 30% "What is the
              <attribute> of <entity>? It is <value>."; covers all 1200 facts, held-out ones included.
  letter 40%  lm-eval's mmlu format: "The following are multiple choice questions (with answers) about
              <subject with spaces>.\\n\\n", 0-2 solved examples "<question>\\nA. <a>\\nB. <b>\\nC. <c>\\n
              D. <d>\\nAnswer: <letter>\\n\\n", then the question and "Answer: <letter>". Questions are
              "What is the <attribute> of <entity>?" with 4 distinct choices from the attribute's pool,
              the gold one at a uniformly drawn letter. Two kinds, each a whole document:
                memorised (25% of tokens): about the 70% training facts, nothing else in context;
                in-context (15%): the question text starts with 1-4 lines stating facts about freshly
                made-up entities (never corpus entities), "<entity>'s <attribute> is <value>." (70%) or
                "The <attribute> of <entity> is <value>." (30%), one of which is asked; the other
                passage values of that attribute are preferred as distractors.
  copy 10%    "Repeat the list:\\n", 8-40 words (each a KV key or a number 0-99, drawn with replacement)
              joined by spaces, "\\n", and the same words again: only an induction head (a previous-token
              head and a head that matches on it) predicts the second copy. Without these documents the
              Llama never formed previous-token heads: its attention stayed nearly uniform and KV retrieval
              at chance, even with 2 pairs, after 6000 steps (the previously committed models); with them, KV jumps from
              chance to 1.00 between steps 1000 and 1500 (probes in the log), and the letter skill follows.
Document kinds are drawn with probabilities proportional to share / mean length in tokens (measured on
400 documents of each kind), so the realised token shares are close to the targets (logged).

Tokenizer: byte-level BPE trained with `tokenizers` on 8000 documents of each kind but copy, plus each number
0..99 and each KV key repeated 50 times (so that they are whole tokens): vocab 2048, ByteLevel
pre-tokenizer (add_prefix_space=False, use_regex=True: the GPT-2 split pattern), ByteLevel decoder, no
normaliser, no post-processor (nothing is added to the ids: no BOS), special token <|endoftext|> = id 0,
used as EOS and document separator. Checked after training: every integer "0".."99" is one token, each
KV key is at most 2 tokens, " A".." D" are single tokens, and encode(prompt + value) = encode(prompt) +
encode(value) for the KV, letter and cloze scoring. Config ids: bos = eos = pad = 0 (as GPT-2 does with
its one special token); tokenizer_config.json names <|endoftext|> as eos and pad token and no BOS.

Models (all tie input and output embeddings; transformers' own initialisation, torch.manual_seed(seed)):
  llama_demo   hidden 192, 4 layers, 6 heads of 32 (6 kv heads: MHA), intermediate 512, RMSNorm eps 1e-5,
               rope_theta 10000 (default RoPE), max_position_embeddings 1024.
  mamba2_demo  hidden 192, expand 2 (inner 384), 12 heads of head_dim 32, state_size 32, n_groups 1,
               conv_kernel 4, chunk_size 64, the number of layers whose parameter count is closest to the
               llama's (7 with vocab 2048); transformers' defaults otherwise (gated RMSNorm,
               residual_in_fp32, time_step_limit (0, inf)); no biases except the conv's.
  zamba2_demo  hidden 192, 7 layers: mamba, hybrid, mamba, hybrid, mamba, hybrid, mamba (transformers 5.17 writes
               "linear_attention" for the mamba layers in config.json; layer 0 is not hybrid: 5.17 leaves the visits
               of a shared block untied when it loads a checkpoint whose layer 0 is, see make_fixtures.py). Each
               layer a Zamba2 Mamba-2 mixer: expand 1 (inner 192), 6 heads of head_dim 32, state 32, n_groups 1,
               conv 4, chunk 64, dt clamped below at time_step_min 0.001 as transformers 5.x does (gna:
               --dt-min-clamp). One shared transformer block (num_mem_blocks 1) that the three hybrid layers visit:
               RMSNorm of concat(h, embeddings) (width 384), 6 attention heads of 64 (6 kv heads, scale (64/2)^-0.5),
               RoPE theta 10000 (use_mem_rope), GELU-gated MLP 384; each visit has its own rank-8 q/k/v and MLP
               adapters (use_shared_attention_adapter) and its own 192x192 output projection, whose result is added
               to the input of that layer's Mamba mixer (Zamba2-7B's layout, smaller). Expand 1 rather than Zamba2's
               2: the shared block alone is 0.74M parameters, and expand 2 would leave room for only 4 layers in the
               ~2.1M of the other two models. It learns KV between steps 2000 and 2500 of a 5000-step run; 3000-step
               runs (lr 2e-3, 1e-3, 5e-4; expand 2 with 4 or 5 layers) stayed at chance (test/models/README.md).
               --zamba2-layers (e.g. mhmhm), --zamba2-expand and --zamba2-mem-blocks change the layout, for such
               experiments.
Training: AdamW betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on matrices (dim >= 2) only, lr 1e-3
(llama) / 2e-3 (mamba2, zamba2), linear warmup (min(200, steps/10) steps) then cosine to 10% of the peak,
gradient clipping 1.0, batch 64 x 512 tokens, bf16 autocast over float32 master weights, next-token
cross-entropy on every position, the answer tokens (KV query values, answer letters: 1.9% of the tokens)
weighted 10 (--answer-weight): loss = sum(w * ce) / sum(w). Without the weight (the first committed run)
the letter skill stayed at 48% on held-out facts; with it a 6000-step Llama reached 73% in a sweep. Both
models read the same sequences in the same order (a seeded permutation; the token buffer is re-permuted
when a model needs more than one pass over it). Every --probe-every (500) steps the log shows KV accuracy
at 2, 10 and 30 pairs and letter accuracy on small probe sets (kv seed 7, not the evaluation's samples).
Mamba-2's training forward is a matmul (einsum) form of the same SSD computation as transformers'
torch_forward (which materialises [batch, chunk, l, s, heads, state] products: slow and memory-hungry
to train with); it is checked against transformers' torch_forward (outputs and gradients, float32) before
training, and transformers' own code is used if the check fails (--mamba2-train-impl hf forces it). The
Zamba2's Mamba mixers train with the same forward (its grouped gated norm, and its dt clamp: transformers 5.17
has time_step_limit (time_step_min, inf); the check picks the clamp, of ZAMBA2_DT_LIMITS, that reproduces the
module), checked the same way against Zamba2MambaMixer's own forward (in 5.17 the PyTorch fallbacks of the
mamba_ssm kernels, on which a first two-visit variant trained at 4.7 steps/s; this forward trained zamba2_demo
at 12.4) and on a whole model's logits (--zamba2-train-impl).
The Zamba2's attention runs transformers' own (SDPA) code.
Saved with save_pretrained in bfloat16.

Evaluation: each saved model is reloaded from disk with transformers in float32 (on the GPU, TF32 off)
and scored as lm-eval scores log-likelihood multiple choice (context/continuation split by encoding
context and context + continuation, no special tokens):
  kv       pairs 10, 20, 30, 40, 50, 60, 80, 100 (training went to 60), 50 samples each: sample s of n
           pairs is drawn exactly as gna kv draws it (splitmix64 from (seed << 32) | (n << 20) | s, --kv-seed
           0 as gna's default), so these are the first samples of `gna kv -m DIR --pairs 10,20,... --seed 0`;
           choices are the dictionary's values appended with no space.
  letter   demo_data/mmlu test, 0-shot: description + question ending "Answer:", choices " A".." D"
           (= gna mmlu -m DIR --data test/models/demo_data/mmlu --shots 0).
  cloze    demo_data/cloze.jsonl: context + " " + choice (= gna mc -m DIR --data .../cloze.jsonl, acc).
  diagnostics (not written as files): letter questions about 120 training (70%) facts, and 120 in-context
           letter questions about fresh entities.
  ablation each llama attention head in turn, and each Mamba-2 SSM head (unless --no-mamba2-ablation):
           a forward pre-hook zeroes the head's slice of the input of o_proj / out_proj (gna's ablation:
           --mask L<l>H<h>); KV at 30 pairs, letter and cloze; the 5 most harmful heads, and the top two
           (by letter drop) ablated together.
  zamba2   every Zamba2 head gna names in turn: the attention heads of each visit (gna L<l>A<h>: the head's
           slice of the shared o_proj's input, zeroed at that visit only) and each layer's SSM heads (L<l>S<h>);
           the top two by letter drop and by KV drop ablated together. The paper's hybrid experiment: every
           attention head's final row (all keys) zeroed at every visit, not renormalised (gna --mask
           'L*A*@-1:0--1'; zeroing a head's whole softmax row at a position zeroes its output there, which is
           what the hook does, at the last position of each scored input), on every set; the same per visit;
           every attention head ablated everywhere (L*A*); and the scores with dt unclamped (gna's default).
"""
import argparse, csv, json, math, os, random, re, shlex, shutil, sys, time

EOS = "<|endoftext|>"
OPTION_LETTERS = "ABCDEFGH"  # training letter questions of --letter-options MIN,MAX options (default 4,4)
LETTERS = OPTION_LETTERS[:4]  # the evaluation's (MMLU's) four options
LETTER_OPTIONS = [4, 4]
SEQ_LEN = 512
VOCAB = 2048
MASK64 = (1 << 64) - 1

# attribute key, the words used in text, the MMLU subject, the value style
ATTRIBUTES = [
    ("capital", "capital", "high_school_geography"),
    ("language", "language", "high_school_geography"),
    ("currency", "currency", "global_facts"),
    ("animal", "national animal", "miscellaneous"),
]
ATTR_WORDS = {a: w for a, w, _ in ATTRIBUTES}
ATTR_SUBJECT = {a: s for a, _, s in ATTRIBUTES}
SUBJECTS = sorted(set(ATTR_SUBJECT.values()))
SUBJECT_ATTRS = {s: [a for a, _, t in ATTRIBUTES if t == s] for s in SUBJECTS}

N_ENTITIES = 300
POOL_SIZE = 40
HELDOUT_FRACTION = 0.3
KIND_SHARES = {"kv": 0.25, "facts": 0.25, "letter_mem": 0.25, "letter_ic": 0.15, "copy": 0.10}
KINDS = list(KIND_SHARES)
FAMILIES = ["llama", "mamba2", "zamba2"]
TEXT_KINDS = [k for k in KINDS if k != "copy"]  # the kinds the tokenizer is trained on (copy reuses their tokens)
# KV training documents: dictionary sizes drawn uniformly from "pairs"; half the documents ask one key (the
# paper's prompt), the other half a number of keys drawn uniformly from "queries" (set by --kv-train-pairs and
# --kv-train-queries before any document is made)
KV_TRAIN = {"pairs": (2, 60), "queries": (2, 16), "log_uniform": True, "line_queries": 0.5}

LOG_LINES = []
LOG_PATH = None


def log(msg=""):
    """print (flushed) and keep the line for train_log.txt"""
    for line in str(msg).split("\n"):
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] {line}", flush=True)
        LOG_LINES.append(line)


def flush_log():
    if LOG_PATH:
        tmp = LOG_PATH + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(LOG_LINES) + "\n")
        os.replace(tmp, LOG_PATH)


# ----------------------------------------------------------------------------------------------
# KV keys: gna's built-in list, read from gna.c

def read_kv_keys(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end = text.find("/* kv-keys-begin */"), text.find("/* kv-keys-end */")
    assert begin >= 0 and end > begin, f"{path}: the markers /* kv-keys-begin */ ... /* kv-keys-end */ were not found"
    keys = re.findall(r'"([^"\\]*)"', text[begin:end])
    assert len(keys) >= 60, f"{path}: only {len(keys)} keys between the markers; KV training needs 60 distinct keys"
    assert len(set(keys)) == len(keys), f"{path}: the key list has duplicates"
    for k in keys:
        assert re.fullmatch(r"[a-z]+", k), f"{path}: key {k!r} is not one lower-case word"
    return keys


# ----------------------------------------------------------------------------------------------
# The made-up world

ONSETS = ["b", "br", "d", "dr", "f", "fl", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "pr", "r", "s",
          "sk", "st", "t", "tr", "v", "z"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou"]
CODAS = ["", "", "", "n", "r", "l", "s", "m"]

ENTITY_SUFFIXES = ["ia", "ania", "or", "ova", "land", "eth", "ara", "une"]
VALUE_STYLES = {
    "capital": (["o", "a", "is", "en", "um", "ar"], True),
    "language": (["ish", "ese", "ic", "ian"], True),
    "currency": (["ek", "ol", "un", "ip", "at"], False),
    "animal": (["bat", "fox", "moth", "hare", "crab", "owl"], False),
}


def syllable(rng):
    return rng.choice(ONSETS) + rng.choice(VOWELS), rng.choice(CODAS)


def glue(rng, *parts):
    """join name parts, with a consonant between a vowel ending and a vowel beginning"""
    out = ""
    for part in parts:
        if out and out[-1] in "aeiou" and part[:1] in tuple("aeiou"):
            out += rng.choice(["n", "r", "l", "d", "v"])
        out += part
    return out


def entity_name(rng):
    (a, ac), (b, _) = syllable(rng), syllable(rng)
    return glue(rng, a + ac, b, rng.choice(ENTITY_SUFFIXES)).capitalize()


class World:
    pass


def make_world(seed, keys):
    rng = random.Random(f"{seed}-world")
    w = World()
    w.keys = keys
    taken = set(keys)
    # value pools: distinct first syllable (onset + vowel) within a pool, names distinct everywhere
    w.pools = {}
    for attr, (suffixes, capital) in VALUE_STYLES.items():
        pool, firsts = [], set()
        while len(pool) < POOL_SIZE:
            (a, ac), (b, _) = syllable(rng), syllable(rng)
            if a in firsts:
                continue
            name = glue(rng, a + ac, b, rng.choice(suffixes)) if rng.random() < 0.6 else glue(rng, a + ac, rng.choice(suffixes))
            if capital:
                name = name.capitalize()
            if name.lower() in taken or len(name) < 4:
                continue
            taken.add(name.lower())
            firsts.add(a)
            pool.append(name)
        w.pools[attr] = pool
    w.entities = []
    while len(w.entities) < N_ENTITIES:
        name = entity_name(rng)
        if name.lower() in taken:
            continue
        taken.add(name.lower())
        w.entities.append(name)
    w.taken = frozenset(taken)
    w.facts = {}
    for e in w.entities:
        for attr, _, _ in ATTRIBUTES:
            w.facts[(e, attr)] = rng.choice(w.pools[attr])
    all_facts = sorted(w.facts)
    rng.shuffle(all_facts)
    n_held = int(round(HELDOUT_FRACTION * len(all_facts)))
    w.heldout = sorted(all_facts[:n_held])
    w.train = sorted(all_facts[n_held:])
    w.train_by_subject = {s: [f for f in w.train if ATTR_SUBJECT[f[1]] == s] for s in SUBJECTS}
    w.heldout_by_subject = {s: [f for f in w.heldout if ATTR_SUBJECT[f[1]] == s] for s in SUBJECTS}
    for s in SUBJECTS:
        assert len(w.heldout_by_subject[s]) >= 40 and len(w.train_by_subject[s]) >= 40, s
    return w


def fresh_entity(rng, world, avoid):
    while True:
        name = entity_name(rng)
        if name.lower() not in world.taken and name not in avoid:
            return name


# ----------------------------------------------------------------------------------------------
# Documents

def kv_text(keys, values, queries, line_form=()):
    """the dictionary, then one query line per index in queries (values appended with no space); a query whose
    index is in line_form repeats the key's own dictionary line "<key>:" instead of the paper's question;
    returns the text and the character spans of the queried values (the answers)"""
    text = "Memorize the following dictionary:\n" + "".join(f"{k}:{v}\n" for k, v in zip(keys, values))
    spans = []
    for i, q in enumerate(queries):
        text += ("\n" if i else "") + (f"{keys[q]}:" if q in line_form else f"The value of the key '{keys[q]}' is")
        spans.append((len(text), len(text) + len(str(values[q]))))
        text += str(values[q])
    return text, spans


def kv_prompt(keys, values, query):
    body = "Memorize the following dictionary:\n" + "".join(f"{k}:{v}\n" for k, v in zip(keys, values))
    return body + f"The value of the key '{keys[query]}' is"


def kv_doc(rng, world):
    lo, hi = KV_TRAIN["pairs"]
    if KV_TRAIN["log_uniform"]:  # small dictionaries more often: the matching is found on them first
        n = min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
    else:
        n = rng.randint(lo, hi)
    keys = rng.sample(world.keys, n)
    values = rng.sample(range(100), n)
    qlo, qhi = KV_TRAIN["queries"]
    n_queries = 1 if rng.random() < 0.5 else rng.randint(min(n, qlo), min(n, qhi))
    queries = rng.sample(range(n), n_queries)
    line_form = [q for q in queries if rng.random() < KV_TRAIN["line_queries"]] if KV_TRAIN["line_queries"] else []
    return kv_text(keys, values, queries, line_form)


def copy_doc(rng, world):
    """a list of 8-40 keys and numbers, then the same list again: only copying (an induction head) predicts the
    second half; no answer tokens"""
    words = [rng.choice(world.keys) if rng.random() < 0.5 else str(rng.randrange(100)) for _ in range(rng.randint(8, 40))]
    return "Repeat the list:\n" + " ".join(words) + "\n" + " ".join(words), []


def fact_sentence(rng, entity, attr, value):
    word = ATTR_WORDS[attr]
    r = rng.random()
    if r < 0.5:
        return f"The {word} of {entity} is {value}."
    if r < 0.7:
        return f"{entity}'s {word} is {value}."
    return f"What is the {word} of {entity}? It is {value}."


def fact_doc(rng, world):
    e = rng.choice(world.entities)
    attrs = rng.sample([a for a, _, _ in ATTRIBUTES], rng.randint(1, 4))
    return "\n".join(fact_sentence(rng, e, a, world.facts[(e, a)]) for a in attrs), []


def mmlu_description(subject):
    return f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"


def answer_letters():
    """the letters an answer can be: the evaluation's four and those of the training questions' options"""
    return OPTION_LETTERS[:max(4, LETTER_OPTIONS[1])]


def letter_text(question, choices):
    """lm-eval mmlu doc_to_text (4 choices; training questions may have 2-8)"""
    return question.strip() + "".join(f"\n{OPTION_LETTERS[i]}. {c}" for i, c in enumerate(choices)) + "\nAnswer:"


def make_choices(rng, gold_value, pool, prefer=(), n=4):
    """n distinct values: gold at a uniformly drawn letter, distractors first from `prefer`"""
    distractors = [v for v in dict.fromkeys(prefer) if v != gold_value][:n - 1]
    rest = [v for v in pool if v != gold_value and v not in distractors]
    distractors += rng.sample(rest, n - 1 - len(distractors))
    rng.shuffle(distractors)
    gold = rng.randrange(n)
    choices = distractors[:gold] + [gold_value] + distractors[gold:]
    assert len(set(choices)) == n and choices[gold] == gold_value
    return choices, gold


def question_of(attr, entity):
    return f"What is the {ATTR_WORDS[attr]} of {entity}?"


def memorised_question(rng, world, fact, n=4):
    e, attr = fact
    choices, gold = make_choices(rng, world.facts[fact], world.pools[attr], n=n)
    return question_of(attr, e), choices, gold


def incontext_question(rng, world, subject, n_options=4):
    n = rng.randint(1, 4)
    attrs = SUBJECT_ATTRS[subject]
    ask_attr = rng.choice(attrs)
    names, lines, stated = [], [], []
    for _ in range(n):
        e = fresh_entity(rng, world, names)
        names.append(e)
        a = ask_attr if not stated else rng.choice(attrs)
        v = rng.choice(world.pools[a])
        stated.append((e, a, v))
    asked = rng.choice([s for s in stated if s[1] == ask_attr])
    for e, a, v in stated:
        if rng.random() < 0.7:
            lines.append(f"{e}'s {ATTR_WORDS[a]} is {v}.")
        else:
            lines.append(f"The {ATTR_WORDS[a]} of {e} is {v}.")
    prefer = [v for e, a, v in stated if a == ask_attr and e != asked[0]]
    choices, gold = make_choices(rng, asked[2], world.pools[ask_attr], prefer, n_options)
    return "\n".join(lines) + "\n" + question_of(ask_attr, asked[0]), choices, gold


def letter_doc(rng, world, kind):
    """the text and the character spans of its answer letters"""
    attr = rng.choice([a for a, _, _ in ATTRIBUTES])
    subject = ATTR_SUBJECT[attr]
    text, spans = mmlu_description(subject), []
    n_shots = rng.randint(0, 2)
    for i in range(n_shots + 1):
        n = 4 if LETTER_OPTIONS == [4, 4] else rng.randint(*LETTER_OPTIONS)  # the committed data drew no n
        if kind == "letter_mem":
            q, choices, gold = memorised_question(rng, world, rng.choice(world.train_by_subject[subject]), n)
        else:
            q, choices, gold = incontext_question(rng, world, subject, n)
        text += letter_text(q, choices) + " "
        spans.append((len(text), len(text) + 1))
        text += OPTION_LETTERS[gold] + ("\n\n" if i < n_shots else "")
    return text, spans


def make_doc_with_answers(rng, world, kind):
    """(text, answer spans): the spans are the tokens --answer-weight weighs (KV query values, answer letters)"""
    if kind == "kv":
        return kv_doc(rng, world)
    if kind == "facts":
        return fact_doc(rng, world)
    if kind == "copy":
        return copy_doc(rng, world)
    return letter_doc(rng, world, kind)


def make_doc(rng, world, kind):
    return make_doc_with_answers(rng, world, kind)[0]


# ----------------------------------------------------------------------------------------------
# Evaluation data

def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def gna_kv_sample(keys, n, s, seed):
    """sample s of the setting with n pairs, exactly as gna.c's build_kv draws it"""
    state = ((seed << 32) | (n << 20) | s) & MASK64
    order, values = list(range(len(keys))), list(range(100))
    for i in range(n):
        state, r = splitmix64(state)
        j = i + r % (len(keys) - i)
        order[i], order[j] = order[j], order[i]
    for i in range(n):
        state, r = splitmix64(state)
        j = i + r % (100 - i)
        values[i], values[j] = values[j], values[i]
    state, r = splitmix64(state)
    query = r % n
    ks = [keys[order[i]] for i in range(n)]
    return ks, values[:n], query


def make_eval_rows(world, seed, per_subject):
    """dev rows (5 per subject, training facts), test rows (held-out facts) and known rows (other training facts,
    options drawn afresh: the fact is known from training, its letter only in the prompt), all memorised kind"""
    rng, known_rng = random.Random(f"{seed}-eval-mmlu"), random.Random(f"{seed}-eval-known")
    dev, test, known = {}, {}, {}
    for s in SUBJECTS:
        dev[s] = [memorised_question(rng, world, f) for f in rng.sample(world.train_by_subject[s], 5)]
        facts = rng.sample(world.heldout_by_subject[s], min(per_subject, len(world.heldout_by_subject[s])))
        test[s] = [(f, *memorised_question(rng, world, f)) for f in facts]
        facts = known_rng.sample(world.train_by_subject[s], min(per_subject, len(world.train_by_subject[s])))
        known[s] = [(f, *memorised_question(known_rng, world, f)) for f in facts]
    return dev, test, known


def write_eval_data(out, world, seed, per_subject):
    """demo_data/: mmlu/ and cloze.jsonl on held-out facts; mmlu_known/ and cloze_known.jsonl on training facts"""
    root = os.path.join(out, "demo_data")
    shutil.rmtree(root, ignore_errors=True)
    dev, test, known = make_eval_rows(world, seed, per_subject)
    for name, rows in (("", test), ("_known", known)):
        for split in ("dev", "test"):
            os.makedirs(os.path.join(root, "mmlu" + name, split))
            for s in SUBJECTS:
                with open(os.path.join(root, "mmlu" + name, split, f"{s}_{split}.csv"), "w", newline="",
                          encoding="utf-8") as f:
                    w = csv.writer(f, lineterminator="\n")
                    for q, choices, gold in dev[s] if split == "dev" else [r[1:] for r in rows[s]]:
                        w.writerow([q, *choices, LETTERS[gold]])
        with open(os.path.join(root, f"cloze{name}.jsonl"), "w", encoding="utf-8") as f:
            for s in SUBJECTS:  # the order gna mmlu uses: subjects sorted, file order within
                for (e, attr), q, choices, gold in rows[s]:
                    f.write(json.dumps({"context": f"The {ATTR_WORDS[attr]} of {e} is", "choices": choices,
                                        "gold": gold}) + "\n")
    return root


def read_mmlu_csv_tree(root, split):
    """[(subject, question, choices, gold)] in gna's order: subjects sorted, rows in file order"""
    rows = []
    d = os.path.join(root, split)
    for name in sorted(os.listdir(d)):
        suffix = f"_{split}.csv"
        if not name.endswith(suffix):
            continue
        subject = name[: -len(suffix)]
        with open(os.path.join(d, name), newline="", encoding="utf-8") as f:
            for r in csv.reader(f):
                assert len(r) == 6 and r[5] in LETTERS, f"{name}: bad row {r}"
                rows.append((subject, r[0], r[1:5], LETTERS.index(r[5])))
    return rows


def diagnostic_letter_sets(world, seed, n):
    """letter questions about training facts, and in-context ones; 0-shot contexts"""
    rng = random.Random(f"{seed}-eval-diag")
    heldin, incontext = [], []
    for i in range(n):
        s = SUBJECTS[i % len(SUBJECTS)]
        q, choices, gold = memorised_question(rng, world, rng.choice(world.train_by_subject[s]))
        heldin.append((s, q, choices, gold))
        q, choices, gold = incontext_question(rng, world, s)
        incontext.append((s, q, choices, gold))
    return heldin, incontext


# ----------------------------------------------------------------------------------------------
# Tokenizer

def train_tokenizer(world, seed, vocab_size, docs_per_kind=8000, boost=50, kv_is_token=False):
    """byte-level BPE on the documents; kv_is_token adds "' is" as one token (id vocab_size), so that the last token
    of the KV question "The value of the key '<key>' is" follows the asked key directly (--kv-is-token)"""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    rng = random.Random(f"{seed}-tokenizer-corpus")
    texts = [make_doc(rng, world, k) for k in TEXT_KINDS for _ in range(docs_per_kind)]
    for _ in range(boost):
        texts.extend(str(n) for n in range(100))
        texts.extend(world.keys)
        texts.extend(f"Answer: {c}" for c in answer_letters())
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=[EOS], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    if kv_is_token:
        tok.add_tokens(["' is"])
    return tok


def encode(tok, text):
    return tok.encode(text, add_special_tokens=False).ids


def encode_pair(tok, context, continuation):
    """lm-eval 0.4.x HFLM._encode_pair"""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces > 0:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]
    whole = encode(tok, context + continuation)
    ctx = encode(tok, context)
    return ctx, whole[len(ctx):]


def check_tokenizer(tok, world):
    """the properties the demo relies on; raises with a clear message if one does not hold"""
    problems = []
    V = tok.get_vocab_size()
    if V != VOCAB:
        log(f"WARNING: tokenizer vocab is {V}, not {VOCAB} (the config uses {V})")
    if tok.token_to_id(EOS) != 0:
        problems.append(f"{EOS} has id {tok.token_to_id(EOS)}, expected 0")
    for n in range(100):
        ids = encode(tok, str(n))
        if len(ids) != 1:
            problems.append(f"number {n} is {len(ids)} tokens {ids}")
    key_lengths = {}
    for k in world.keys:
        ids = encode(tok, k)
        key_lengths[k] = len(ids)
        if len(ids) > 2:
            problems.append(f"key {k!r} is {len(ids)} tokens")
        ctx = encode(tok, f"The value of the key '{k}' is")
        line = encode(tok, f"\n{k}:7\n")
        if ids not in [ctx[i:i + len(ids)] for i in range(len(ctx))] or ids not in [line[i:i + len(ids)] for i in range(len(line))]:
            problems.append(f"key {k!r} is tokenized differently inside the prompt")
    for c in answer_letters():
        ctx, cont = encode_pair(tok, "Answer:", " " + c)
        if len(cont) != 1:
            problems.append(f"' {c}' after 'Answer:' is {len(cont)} tokens")
    rng = random.Random("tokenizer-check")
    for _ in range(200):
        keys = rng.sample(world.keys, 20)
        values = rng.sample(range(100), 20)
        q = rng.randrange(20)
        p = kv_prompt(keys, values, q)
        ctx, cont = encode_pair(tok, p, str(values[q]))
        if ctx + cont != encode(tok, p) + encode(tok, str(values[q])) or len(cont) != 1:
            problems.append(f"KV prompt + value does not split at the value: {p[-40:]!r}")
            break
    for (e, attr), v in list(world.facts.items())[:200]:
        ctx = f"The {ATTR_WORDS[attr]} of {e} is"
        c, cont = encode_pair(tok, ctx, " " + v)
        if cont != encode(tok, " " + v):
            problems.append(f"cloze continuation {v!r} is tokenized differently after the context")
            break
    for text in [make_doc(rng, world, k) for k in KINDS for _ in range(20)]:
        if tok.decode(encode(tok, text), skip_special_tokens=False) != text:
            problems.append(f"decode(encode(text)) != text for {text[:60]!r}")
            break
    if problems:
        raise SystemExit("tokenizer check failed:\n  " + "\n  ".join(problems[:30]))
    value_lengths = [len(encode(tok, " " + v)) for pool in world.pools.values() for v in pool]
    entity_lengths = [len(encode(tok, " " + e)) for e in world.entities]
    hist = lambda xs: " ".join(f"{n}:{xs.count(n)}" for n in sorted(set(xs)))
    log(f"tokenizer: vocab {V}, {EOS} = 0; numbers 0-99 one token each; KV keys tokens {hist(list(key_lengths.values()))}; "
        f"' A'..' D' one token each")
    log(f"tokenizer: ' <value>' tokens {hist(value_lengths)}; ' <entity>' tokens {hist(entity_lengths)}")


# ----------------------------------------------------------------------------------------------
# Token data: documents generated and tokenized in parallel (fork), deterministic per chunk

_G = {}


def _chunk_worker(index):
    import numpy as np
    world, tok_json, probs, chunk_tokens, seed = _G["world"], _G["tok_json"], _G["probs"], _G["chunk_tokens"], _G["seed"]
    KV_TRAIN.update(_G["kv_train"])
    LETTER_OPTIONS[:] = _G["letter_options"]
    if "tok" not in _G:
        from tokenizers import Tokenizer
        _G["tok"] = Tokenizer.from_str(tok_json)
    tok = _G["tok"]
    rng = random.Random(f"{seed}-data-chunk-{index}")
    out, flags, total, kinds_count = [], [], 0, {k: 0 for k in KINDS}
    while total < chunk_tokens:
        kinds = rng.choices(KINDS, weights=[probs[k] for k in KINDS], k=256)
        docs = [make_doc_with_answers(rng, world, k) for k in kinds]
        for k, (text, spans), enc in zip(kinds, docs, tok.encode_batch([d[0] for d in docs], add_special_tokens=False)):
            ids = enc.ids
            ids.append(0)
            # a token is an answer token if its characters overlap an answer span
            flag = [int(any(a < e and b > s for s, e in spans)) for a, b in enc.offsets] + [0]
            out.append(np.asarray(ids, dtype=np.int16))
            flags.append(np.asarray(flag, dtype=np.uint8))
            total += len(ids)
            kinds_count[k] += len(ids)
    return np.concatenate(out)[:chunk_tokens], np.concatenate(flags)[:chunk_tokens], kinds_count


def measure_kind_lengths(world, tok, seed, n=400):
    rng = random.Random(f"{seed}-kind-lengths")
    return {k: sum(len(encode(tok, make_doc(rng, world, k))) + 1 for _ in range(n)) / n for k in KINDS}


def build_token_data(world, tok, seed, n_tokens, workers, tag):
    """the token stream (int16) and its answer flags (uint8, 1 on answer tokens), documents each followed by EOS"""
    import multiprocessing as mp
    import numpy as np
    lengths = measure_kind_lengths(world, tok, seed)
    probs = {k: KIND_SHARES[k] / lengths[k] for k in KINDS}
    total = sum(probs.values())
    probs = {k: v / total for k, v in probs.items()}
    chunk_tokens = min(1 << 20, n_tokens)
    n_chunks = max(1, math.ceil(n_tokens / chunk_tokens))
    _G.update(world=world, tok_json=tok.to_str(), probs=probs, chunk_tokens=chunk_tokens, seed=f"{seed}-{tag}",
              kv_train=dict(KV_TRAIN), letter_options=list(LETTER_OPTIONS))
    t0 = time.time()
    ctx = mp.get_context("fork")
    with ctx.Pool(min(workers, n_chunks)) as pool:
        results = pool.map(_chunk_worker, range(n_chunks), chunksize=1)
    data = np.concatenate([r[0] for r in results])[:n_tokens]
    flags = np.concatenate([r[1] for r in results])[:n_tokens]
    counts = {k: sum(r[2][k] for r in results) for k in KINDS}
    n_all = sum(counts.values())
    return data, flags, {"mean_doc_tokens": lengths, "doc_probs": probs,
                         "token_shares": {k: counts[k] / n_all for k in KINDS},
                         "answer_token_share": float(flags.mean()), "seconds": time.time() - t0}


# ----------------------------------------------------------------------------------------------
# Models (torch from here on)

# the shapes --llama-layers / --llama-mlp / --llama-heads, --mamba2-state / --mamba2-expand / --mamba2-heads and
# --zamba2-state / --zamba2-heads change (the defaults made the first committed models)
LLAMA = {"layers": 4, "mlp": 512, "heads": 6}
MAMBA2 = {"state": 32, "expand": 2, "heads": 12}


def llama_config(transformers, vocab):
    kw = dict(vocab_size=vocab, hidden_size=192, intermediate_size=LLAMA["mlp"], num_hidden_layers=LLAMA["layers"],
              num_attention_heads=LLAMA["heads"], num_key_value_heads=LLAMA["heads"], head_dim=192 // LLAMA["heads"],
              max_position_embeddings=1024, rms_norm_eps=1e-5,
              tie_word_embeddings=True, hidden_act="silu", attention_bias=False, mlp_bias=False,
              bos_token_id=0, eos_token_id=0, pad_token_id=0)
    try:
        return transformers.LlamaConfig(**kw, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    except TypeError:
        return transformers.LlamaConfig(**kw, rope_theta=10000.0)


def mamba2_config(transformers, vocab, n_layers):
    return transformers.Mamba2Config(
        vocab_size=vocab, hidden_size=192, expand=MAMBA2["expand"], num_heads=MAMBA2["heads"],
        head_dim=192 * MAMBA2["expand"] // MAMBA2["heads"], state_size=MAMBA2["state"], n_groups=1,
        conv_kernel=4, chunk_size=64, num_hidden_layers=n_layers, use_bias=False, use_conv_bias=True,
        tie_word_embeddings=True, layer_norm_epsilon=1e-5, residual_in_fp32=True, hidden_act="silu",
        bos_token_id=0, eos_token_id=0, pad_token_id=0)


# Zamba2 (the paper's hybrid): Mamba-2 layers, and one shared attention + MLP block that the "hybrid" layers visit
# (each visit with its own q/k/v and MLP adapters and its own output projection), as in Zamba2-7B's layout
ZAMBA2 = {"layers": ("mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid", "mamba"), "expand": 1, "state": 32,
          "heads": 0, "mem_blocks": 1}  # heads 0: 6 per expand (head_dim 32)


def zamba2_config(transformers, vocab):
    kw = dict(vocab_size=vocab, hidden_size=192, num_hidden_layers=len(ZAMBA2["layers"]),
              layers_block_type=list(ZAMBA2["layers"]), mamba_d_state=ZAMBA2["state"], mamba_d_conv=4,
              mamba_expand=ZAMBA2["expand"], mamba_ngroups=1, n_mamba_heads=ZAMBA2["heads"] or 6 * ZAMBA2["expand"],
              chunk_size=64, use_conv_bias=True, add_bias_linear=False,
              intermediate_size=384, hidden_act="gelu", num_attention_heads=6, num_key_value_heads=6,
              num_mem_blocks=ZAMBA2["mem_blocks"], use_shared_attention_adapter=True, adapter_rank=8,
              use_mem_rope=True,
              max_position_embeddings=1024, rms_norm_eps=1e-5, tie_word_embeddings=True,
              bos_token_id=0, eos_token_id=0, pad_token_id=0)
    try:
        return transformers.Zamba2Config(**kw, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    except (TypeError, ValueError):
        return transformers.Zamba2Config(**kw, rope_theta=10000.0)


def zamba2_mixer(layer):
    """a Zamba2 layer's Zamba2MambaMixer (a hybrid layer runs it after its visit of the shared block)"""
    return getattr(layer, "mamba_decoder", layer).mamba


def zamba2_hybrid_layers(model):
    return [i for i, t in enumerate(model.config.layers_block_type) if t == "hybrid"]


def ssd_mixers(model, family):
    """the SSD mixers whose forward the training replaces"""
    if family == "mamba2":
        return [layer.mixer for layer in model.backbone.layers]
    return [zamba2_mixer(layer) for layer in model.model.layers]


def check_zamba2_tied(model, name):
    """every visit of a shared block (visit v runs block v % num_mem_blocks) must be the same module as the
    block's first visit (transformers ties the visits when it loads a checkpoint; make_fixtures.py saw it fail to when
    layer 0 is hybrid)"""
    hybrid, n = zamba2_hybrid_layers(model), model.config.num_mem_blocks
    q = lambda i: model.model.layers[i].shared_transformer.self_attn.q_proj.weight
    for v, i in enumerate(hybrid):
        w, first = q(i), q(hybrid[v % n])
        assert w.data_ptr() == first.data_ptr() or bool((w == first).all()), \
            f"{name}: layer {i}'s visit of shared block {v % n} is not tied to layer {hybrid[v % n]}'s"


def load_weights(torch, model, src, name):
    """--init-from: a float32 state dict (--save-fp32) or a saved Hugging Face folder, into a model of the same shapes"""
    if os.path.isdir(src):
        from safetensors.torch import load_file
        sd = load_file(os.path.join(src, "model.safetensors"))
    else:
        sd = torch.load(src, map_location="cpu")
    own = model.state_dict()
    bad = [k for k, v in sd.items() if k not in own or own[k].shape != v.shape]
    assert not bad, f"--init-from {src}: keys missing from {name} or of other shapes: {bad[:5]}"
    with torch.no_grad():
        for k, v in sd.items():
            own[k].copy_(v.to(own[k].dtype))
    log(f"{name}: weights read from {src} ({len(sd)} of {len(own)} state-dict entries; shared or tied ones "
        f"are one tensor)")


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # parameters() lists a tied weight once


def assert_tied(model, name):
    a, b = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    assert a.data_ptr() == b.data_ptr(), f"{name}: input and output embeddings are not tied"


# -- Mamba-2 training forward: the SSD computation of transformers' Mamba2Mixer.torch_forward, in matmul form

def _segsum(x, torch):
    """x [..., T] -> [..., T, T]: out[..., i, j] = sum_{k=j+1..i} x_k for j <= i, -inf above the diagonal"""
    T = x.size(-1)
    x = x[..., None].expand(*x.shape, T)
    below = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=-1)
    x = x.masked_fill(~below, 0)
    s = torch.cumsum(x, dim=-2)
    on_or_below = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=0)
    return s.masked_fill(~on_or_below, -torch.inf)


def ssd_chunked(X, A, B, C, chunk, torch):
    """X [b, L, h, p] (already times dt), A [b, L, h] (A * dt), B, C [b, L, h, n] -> Y [b, L, h, p]"""
    import torch.nn.functional as F
    b, L, h, p = X.shape
    n = B.shape[-1]
    pad = (-L) % chunk
    if pad:
        X = F.pad(X, (0, 0, 0, 0, 0, pad))
        B = F.pad(B, (0, 0, 0, 0, 0, pad))
        C = F.pad(C, (0, 0, 0, 0, 0, pad))
        A = F.pad(A, (0, 0, 0, pad))
    c = (L + pad) // chunk
    X = X.reshape(b, c, chunk, h, p)
    B = B.reshape(b, c, chunk, h, n)
    C = C.reshape(b, c, chunk, h, n)
    A = A.reshape(b, c, chunk, h).permute(0, 3, 1, 2)            # b h c l
    A_cumsum = torch.cumsum(A, dim=-1)
    Lmat = torch.exp(_segsum(A, torch))                            # b h c l s
    CB = torch.einsum("bclhn,bcshn->bchls", C, B)
    W = CB * Lmat.permute(0, 2, 1, 3, 4)                           # b c h l s
    Y_diag = torch.einsum("bchls,bcshp->bclhp", W, X)
    decay_states = torch.exp(A_cumsum[..., -1:] - A_cumsum)        # b h c l
    Bd = B * decay_states.permute(0, 2, 3, 1)[..., None]           # b c l h n
    states = torch.einsum("bclhn,bclhp->bchpn", Bd, X)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    decay_chunk = torch.exp(_segsum(F.pad(A_cumsum[..., -1], (1, 0)), torch))   # b h (c+1) (c+1)
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    states = new_states[:, :-1]
    Y_off = torch.einsum("bclhn,bchpn->bclhp", C, states) * torch.exp(A_cumsum).permute(0, 2, 3, 1)[..., None]
    return (Y_diag + Y_off).reshape(b, c * chunk, h, p)[:, :L]


# Zamba2MambaMixer's dt clamp, as transformers versions have it: transformers 5.17's mixer has time_step_limit
# (time_step_min, inf) and no time_step_min; earlier ones clamp below at time_step_min. check_fast_mamba2 picks
# the first of these that reproduces the module's own forward (its test heads put dt far below 0.001).
ZAMBA2_DT_LIMITS = [
    ("time_step_limit", lambda m: tuple(m.time_step_limit) if getattr(m, "time_step_limit", None) else None),
    ("time_step_min", lambda m: (m.time_step_min, float("inf")) if hasattr(m, "time_step_min") else None),
    ("config.time_step_min", lambda m: (m.config.time_step_min, float("inf")) if hasattr(m, "config") else None),
    ("no clamp", lambda m: (0.0, float("inf"))),
]


def make_fast_mamba2_forward(torch, dt_limits=None):
    """the training forward of Mamba2Mixer; with dt_limits (a function of the module giving (low, high)) that of
    Zamba2MambaMixer, whose forward differs in two places only: how dt is clamped, and its gated RMSNorm, which
    normalises each of the n_groups groups on its own (the module's own norm is called, so that is kept)"""
    import torch.nn.functional as F

    def forward(self, hidden_states, cache_params=None, attention_mask=None, **kwargs):
        assert cache_params is None, "the training forward has no cache"
        assert attention_mask is None or bool(attention_mask.all()), "the training forward takes no padding"
        b, L, _ = hidden_states.shape
        dtype = hidden_states.dtype
        proj = self.in_proj(hidden_states)
        d_mlp = (proj.shape[-1] - 2 * self.intermediate_size - 2 * self.n_groups * self.ssm_state_size - self.num_heads) // 2
        _, _, gate, xBC, dt = proj.split([d_mlp, d_mlp, self.intermediate_size, self.conv_dim, self.num_heads], dim=-1)
        xBC = self.act(self.conv1d(xBC.transpose(1, 2))[..., :L].transpose(1, 2))
        gn = self.n_groups * self.ssm_state_size
        x, Bm, Cm = torch.split(xBC, [self.intermediate_size, gn, gn], dim=-1)
        A = -torch.exp(self.A_log.float())
        dt = F.softplus(dt + self.dt_bias)
        lo, hi = dt_limits(self) if dt_limits else self.time_step_limit
        dt = torch.clamp(dt, lo, hi)
        x = x.reshape(b, L, -1, self.head_dim).float()
        rep = self.num_heads // self.n_groups
        Bm = Bm.reshape(b, L, -1, self.ssm_state_size).float().repeat_interleave(rep, dim=2)
        Cm = Cm.reshape(b, L, -1, self.ssm_state_size).float().repeat_interleave(rep, dim=2)
        y = ssd_chunked(x * dt[..., None], A.to(x.dtype) * dt, Bm, Cm, self.chunk_size, torch)
        y = y + self.D[..., None] * x
        y = y.reshape(b, L, -1)
        return self.out_proj(self.norm(y, gate).to(dtype))

    return forward


def check_fast_mamba2(torch, transformers, vocab, device, family="mamba2"):
    """compare the matmul SSD forward with transformers' own (float32, TF32 off): outputs and gradients of one
    mixer; for zamba2 also a whole model's logits, and the dt clamp is the first of ZAMBA2_DT_LIMITS that matches.
    Returns (output error, gradient error, the dt clamp's name or None)"""
    import types
    torch.manual_seed(0)
    if family == "zamba2":
        cfg = zamba2_config(transformers, vocab)
        model = transformers.Zamba2ForCausalLM(cfg).to(device).float()
        mixer = zamba2_mixer(model.model.layers[0])
    else:
        cfg = mamba2_config(transformers, vocab, 1)
        model = transformers.Mamba2ForCausalLM(cfg).to(device).float()
        mixer = model.backbone.layers[0].mixer
    with torch.no_grad():  # move dt and A away from the init so the decays matter
        mixer.A_log.copy_(torch.log(torch.rand_like(mixer.A_log) * 4 + 0.5))
        mixer.dt_bias.add_(torch.randn_like(mixer.dt_bias))
        mixer.D.copy_(torch.randn_like(mixer.D))
        if family == "zamba2":  # two heads far below time_step_min, so that the clamp is exercised
            mixer.dt_bias[:2] = -12.0
    x = torch.randn(2, 150, cfg.hidden_size, device=device)
    w = torch.randn(2, 150, cfg.hidden_size, device=device)
    if family == "zamba2":  # the module's own forward: what transformers 5.x runs (its kernels' PyTorch fallbacks)
        hf_forward = lambda h: type(mixer).forward(mixer, h)
    else:  # transformers' own forward: without mamba_ssm's CUDA kernels it runs its PyTorch reference path
        # (transformers 5.x has no separate torch_forward method to call)
        hf_forward = getattr(mixer, "torch_forward", None) or (lambda h: type(mixer).forward(mixer, h))

    def run(fn):
        mixer.zero_grad(set_to_none=True)
        out = fn(x)
        (out * w).sum().backward()
        return out.detach(), {n: p.grad.detach().clone() for n, p in mixer.named_parameters() if p.grad is not None}

    ref, gref = run(hf_forward)
    scale = max(1.0, ref.abs().max().item())
    candidates = [(name, f) for name, f in ZAMBA2_DT_LIMITS if f(mixer) is not None] if family == "zamba2" else [(None, None)]
    best = None
    for name, limits in candidates:
        fast = types.MethodType(make_fast_mamba2_forward(torch, limits), mixer)
        try:
            got, ggot = run(fast)
        except Exception as e:
            log(f"{family}: the training forward with dt clamp {name} failed ({type(e).__name__}: {str(e)[:200]})")
            continue
        if set(gref) != set(ggot):
            continue
        err = (ref - got).abs().max().item() / scale
        gerr = max((gref[n] - ggot[n]).abs().max().item() / max(1e-6, gref[n].abs().max().item()) for n in gref)
        if family == "zamba2":
            log(f"zamba2: training forward with dt clamp {name}: mixer output {err:.2e}, gradients {gerr:.2e}")
        if best is None or err < best[0]:
            best = (err, gerr, name, limits)
        if err < 2e-3 and gerr < 2e-2:
            break
    if best is None:
        return float("inf"), float("inf"), None
    err, gerr, name, limits = best
    if family == "zamba2":  # and the whole model's logits, every mixer (the hybrid layers' ones too) replaced
        ids = torch.randint(0, vocab, (2, 150), device=device)
        with torch.no_grad():
            ref_logits = model(input_ids=ids, use_cache=False).logits
            for m in ssd_mixers(model, family):
                m.forward = types.MethodType(make_fast_mamba2_forward(torch, limits), m)
            got_logits = model(input_ids=ids, use_cache=False).logits
            for m in ssd_mixers(model, family):
                del m.forward
        err = max(err, (ref_logits - got_logits).abs().max().item() / max(1.0, ref_logits.abs().max().item()))
    return err, gerr, name


# -- training

def lr_lambda_factory(steps, warmup, min_ratio=0.1):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, steps - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return f


def set_tf32(torch, on):
    """TF32 for float32 matmuls and convolutions: on while training (bf16 autocast anyway), off to evaluate"""
    try:  # the API of torch >= 2.9 (mixing it with the legacy flags is an error there)
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
        torch.backends.cudnn.conv.fp32_precision = "tf32" if on else "ieee"
        return
    except Exception:
        pass
    try:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on
    except Exception as e:  # pragma: no cover
        log(f"note: could not set TF32 flags: {e}")


def probe(torch, model, device, probes):
    """accuracy on the small probe sets, the model back in training mode afterwards"""
    model.eval()
    scorer = Scorer(torch, model, device)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        acc = {k: s.accuracy(scorer) for k, s in probes.items()}
    model.train()
    return acc


def train_model(torch, model, name, data, flags, order, val, steps, lr, args, device, probes=None):
    import torch.nn.functional as F
    model.to(device).train()
    V = model.config.vocab_size
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    try:
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    except Exception:
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95), eps=1e-8)
    warmup = max(1, min(args.warmup, steps // 10))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda_factory(steps, warmup))
    B = args.batch
    use_autocast = not args.no_autocast
    # --zamba2-ssm-warmup: for its first steps every Mamba mixer's state is off, so that only attention carries
    # anything further than the conv's 4 tokens. The mixers still train: Zamba2's attention output reaches the
    # residual stream only through its layer's mixer (added to the mixer's input), so a silenced mixer would cut
    # the attention off too. A_log held at 10: A = -22026, and dt >= time_step_min (0.001), so a token's state
    # decays by exp(-22) or more at the next one. Then A_log goes back to its initial values and trains.
    ssm_warmup = args.zamba2_ssm_warmup if model.config.model_type == "zamba2" else 0
    if ssm_warmup:
        a_logs = [m.A_log for m in ssd_mixers(model, "zamba2")]
        a_init = [a.detach().clone() for a in a_logs]
        with torch.no_grad():
            for a in a_logs:
                a.fill_(10.0).requires_grad_(False)  # AdamW skips it (no grad) while frozen

    def step_loss(x, answer):
        """next-token cross-entropy, answer tokens weighted by --answer-weight: sum(w * loss) / sum(w)"""
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_autocast):
            logits = model(input_ids=x, use_cache=False).logits
        loss = F.cross_entropy(logits[:, :-1].float().reshape(-1, V), x[:, 1:].reshape(-1), reduction="none")
        w = 1.0 + (args.answer_weight - 1.0) * answer[:, 1:].reshape(-1).float()
        return (loss * w).sum() / w.sum()

    # a dry step (no update) so that a dtype problem under autocast shows before training starts
    try:
        step_loss(data[order[:4]].long(), flags[order[:4]]).backward()
    except RuntimeError as e:
        if not use_autocast:
            raise
        log(f"{name}: the forward failed under bf16 autocast ({str(e)[:200]}); training in float32 instead")
        use_autocast = False
        model.zero_grad(set_to_none=True)
        step_loss(data[order[:4]].long(), flags[order[:4]]).backward()
    model.zero_grad(set_to_none=True)

    log(f"{name}: training {steps} steps, batch {B} x {data.shape[1]} tokens, lr {lr}, warmup {warmup}, "
        f"autocast {'bf16' if use_autocast else 'off'}, answer tokens weighted {args.answer_weight}" +
        (f"; the Mamba mixers' states off (A_log 10) for the first {ssm_warmup} steps" if ssm_warmup else ""))
    torch.cuda.synchronize()
    t0 = time.time()
    t_rate, s_rate = None, None
    running, n_running = torch.zeros((), device=device), 0
    history, probe_history = [], []
    steps_cap, step = steps, 0
    while step < steps:
        if args.train_seconds and step >= 100 and step % 100 == 0 and t_rate:
            # --train-seconds: the step count that ends training in time at the speed measured so far (re-measured
            # every 100 steps, at most the steps asked for); the cosine schedule follows the new count
            torch.cuda.synchronize()
            rate_now = (step - s_rate) / (time.time() - t_rate)
            new = min(steps_cap, max(step + 1, int(step + rate_now * (args.train_seconds - (time.time() - t0)))))
            if abs(new - steps) > 20:
                steps = new
                sched.lr_lambdas[0] = lr_lambda_factory(steps, warmup)
        if ssm_warmup and step == ssm_warmup:
            with torch.no_grad():
                for a, a0 in zip(a_logs, a_init):
                    a.copy_(a0).requires_grad_(True)
            log(f"{name}: step {step}: the Mamba mixers' states on (A_log back to its initial values, trained)")
        rows = order[step * B:(step + 1) * B]
        loss = step_loss(data[rows].long(), flags[rows])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        running += loss.detach()
        n_running += 1
        if step == min(10, steps - 1):
            torch.cuda.synchronize()
            t_rate, s_rate = time.time(), step
        if (step + 1) % args.log_every == 0 or step + 1 == steps:
            avg = (running / n_running).item()
            if not math.isfinite(avg):
                raise SystemExit(f"{name}: loss is {avg} at step {step + 1}; try a lower learning rate")
            running.zero_()
            n_running = 0
            elapsed = time.time() - t0
            rate = (step - s_rate) / (time.time() - t_rate) if t_rate and step > s_rate else (step + 1) / elapsed
            eta = (steps - step - 1) / max(rate, 1e-9)
            history.append((step + 1, avg))
            log(f"{name}: step {step + 1}/{steps} loss {avg:.4f} lr {sched.get_last_lr()[0]:.2e} "
                f"{rate:.2f} steps/s elapsed {elapsed:.0f}s eta {eta:.0f}s")
        if probes and ((step + 1) % args.probe_every == 0 or step + 1 == steps):
            acc = probe(torch, model, device, probes)
            probe_history.append((step + 1, acc))
            log(f"{name}: step {step + 1} probe (bf16 autocast) " + " ".join(f"{k} {v:.2f}" for k, v in acc.items()))
        step += 1
    torch.cuda.synchronize()
    wall = time.time() - t0
    rate = (steps - 1 - s_rate) / (time.time() - t_rate) if t_rate and steps - 1 > s_rate else steps / wall
    vl = val_loss(torch, model, val, use_autocast)
    log(f"{name}: trained in {wall:.1f}s ({rate:.2f} steps/s after warm-up); validation loss (training weights, "
        f"{'bf16 autocast' if use_autocast else 'fp32'}) {vl:.4f}")
    return {"steps": steps, "wall_s": wall, "steps_per_s": rate, "loss_history": history, "val_loss_train_weights": vl,
            **({"probe_history": probe_history} if probes else {}),
            **({"ssm_warmup": ssm_warmup} if ssm_warmup else {}), "autocast": use_autocast}


def val_loss(torch, model, val, autocast):
    import torch.nn.functional as F
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for i in range(0, val.shape[0], 16):
            x = val[i:i + 16].long()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
                logits = model(input_ids=x, use_cache=False).logits
            total += F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                     reduction="sum").item()
            n += x[:, 1:].numel()
    model.train()
    return total / n


def save_model(torch, transformers, model, path, tok_json):
    from tokenizers import Tokenizer
    shutil.rmtree(path, ignore_errors=True)
    model = model.to(torch.bfloat16)
    model.save_pretrained(path)
    # tokenizer: transformers' files for AutoTokenizer (from a copy, which transformers may change), then the
    # canonical tokenizer.json, the one gna reads, written over whatever transformers wrote
    try:
        fast = transformers.PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(tok_json), eos_token=EOS,
                                                    pad_token=EOS, model_max_length=1024)
        fast.save_pretrained(path)
    except Exception as e:
        log(f"note: transformers could not save tokenizer_config.json ({str(e)[:200]}); tokenizer.json only")
    with open(os.path.join(path, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(tok_json)
    names = [f for f in os.listdir(path) if f.endswith(".safetensors")]
    assert names, f"{path}: no safetensors file was written"
    dtypes = set()
    for f in names:  # the safetensors header: 8-byte little-endian length, then JSON {name: {dtype, shape, ...}}
        with open(os.path.join(path, f), "rb") as fh:
            header = json.loads(fh.read(int.from_bytes(fh.read(8), "little")))
        dtypes |= {v["dtype"] for k, v in header.items() if k != "__metadata__"}
    assert dtypes == {"BF16"}, f"{path}: tensor dtypes {dtypes}, expected BF16 only"
    cfg = json.load(open(os.path.join(path, "config.json")))
    assert cfg.get("tie_word_embeddings") is True, f"{path}: config does not say tie_word_embeddings"
    assert cfg.get("eos_token_id") == 0, f"{path}: eos_token_id is {cfg.get('eos_token_id')}"
    return cfg


def check_auto_tokenizer(transformers, path, tok, world):
    """transformers' AutoTokenizer must give the ids tokenizers gives (warn only: gna reads tokenizer.json)"""
    try:
        auto = transformers.AutoTokenizer.from_pretrained(path)
        rng = random.Random("auto-tokenizer")
        texts = [make_doc(rng, world, k) for k in KINDS for _ in range(5)]
        bad = [t for t in texts if list(auto(t)["input_ids"]) != encode(tok, t)]
        if bad:
            log(f"WARNING: {path}: AutoTokenizer ids differ from tokenizer.json's for {len(bad)}/{len(texts)} texts")
        else:
            log(f"{os.path.basename(path)}: AutoTokenizer gives the same ids as tokenizer.json (no BOS, no EOS added)")
    except Exception as e:
        log(f"WARNING: {path}: AutoTokenizer did not load ({str(e)[:200]})")


# ----------------------------------------------------------------------------------------------
# Evaluation

# the last position of each row's own input in the batch the Scorer runs now (what gna's @-1 names)
SCORE_ROWS = {"last": None}


class Scorer:
    """lm-eval style log-likelihoods with a transformers model; right padding (causal models: padding after
    the tokens cannot change their logits)"""

    def __init__(self, torch, model, device, max_tokens=48 * 1024, max_batch=128, max_len=1024):
        self.torch, self.model, self.device = torch, model, device
        self.max_tokens, self.max_batch, self.max_len = max_tokens, max_batch, max_len

    def _run(self, seqs, want):
        torch = self.torch
        results = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
        i = 0
        with torch.no_grad():
            while i < len(order):
                T = len(seqs[order[i]])
                assert T <= self.max_len, f"a scored sequence has {T} tokens, more than {self.max_len}"
                bs = max(1, min(self.max_batch, self.max_tokens // T))
                batch = order[i:i + bs]
                i += bs
                x = torch.zeros((len(batch), T), dtype=torch.long)
                for r, j in enumerate(batch):
                    x[r, :len(seqs[j])] = torch.tensor(seqs[j], dtype=torch.long)
                SCORE_ROWS["last"] = torch.tensor([len(seqs[j]) - 1 for j in batch], device=self.device)
                logits = self.model(input_ids=x.to(self.device), use_cache=False).logits
                SCORE_ROWS["last"] = None
                rows, cols, toks = [], [], []
                for r, j in enumerate(batch):
                    for p, t in want[j]:
                        rows.append(r)
                        cols.append(p)
                        toks.append(t)
                sel = logits[torch.tensor(rows, device=self.device), torch.tensor(cols, device=self.device)].float()
                lp = torch.log_softmax(sel, dim=-1)[torch.arange(len(toks), device=self.device),
                                                     torch.tensor(toks, device=self.device)].tolist()
                k = 0
                for r, j in enumerate(batch):
                    results[j] = lp[k:k + len(want[j])]
                    k += len(want[j])
        return results

    def loglik(self, requests):
        """requests: [(context_ids, continuation_ids)] -> [sum of log p(continuation | context)]"""
        seqs, want, owner, groups = [], [], [], {}
        for ctx, cont in requests:
            assert len(ctx) >= 1 and len(cont) >= 1, "empty context or continuation"
            if len(cont) == 1:  # single-token continuations of one context share one forward
                key = tuple(ctx)
                if key not in groups:
                    groups[key] = len(seqs)
                    seqs.append(list(ctx))
                    want.append([])
                g = groups[key]
                want[g].append((len(ctx) - 1, cont[0]))
                owner.append((g, len(want[g]) - 1))
            else:
                seqs.append(list(ctx) + list(cont[:-1]))
                want.append([(len(ctx) - 1 + j, t) for j, t in enumerate(cont)])
                owner.append((len(seqs) - 1, None))
        out = self._run(seqs, want)
        return [sum(out[g]) if idx is None else out[g][idx] for g, idx in owner]


class EvalSet:
    """multiple-choice questions as lm-eval requests: context, continuations, gold"""

    def __init__(self, tok, questions):
        self.requests, self.spans, self.golds = [], [], []
        for context, continuations, gold in questions:
            start = len(self.requests)
            for c in continuations:
                self.requests.append(encode_pair(tok, context, c))
            self.spans.append((start, len(continuations)))
            self.golds.append(gold)

    def accuracy(self, scorer):
        scores = scorer.loglik(self.requests)
        correct = 0
        for (start, n), gold in zip(self.spans, self.golds):
            s = scores[start:start + n]
            correct += int(max(range(n), key=lambda i: (s[i], -i)) == gold)  # first maximum, as numpy.argmax
        return correct / max(1, len(self.golds))


def build_eval_sets(tok, world, data_root, args):
    sets = {}
    for n in args.kv_pairs:
        qs = []
        for s in range(args.kv_samples):
            keys, values, query = gna_kv_sample(world.keys, n, s, args.kv_seed)
            qs.append((kv_prompt(keys, values, query), [str(v) for v in values], query))
        sets[f"kv{n}"] = EvalSet(tok, qs)
    letter = read_mmlu_csv_tree(os.path.join(data_root, "mmlu"), "test")
    cloze = [json.loads(line) for line in open(os.path.join(data_root, "cloze.jsonl"), encoding="utf-8")]
    assert len(letter) == len(cloze)
    for (s, q, ch, g), d in zip(letter, cloze):  # the two files ask about the same facts, choices in the same order
        assert ch == d["choices"] and g == d["gold"] and d["context"].endswith(" is") and \
            q.endswith(" of " + d["context"][:-3].split(" of ", 1)[1] + "?"), (q, d)
    if args.eval_limit:
        letter, cloze = letter[::max(1, len(letter) // args.eval_limit)], cloze[::max(1, len(cloze) // args.eval_limit)]
    sets["letter"] = EvalSet(tok, [(mmlu_description(s) + letter_text(q, ch), [" " + c for c in LETTERS], g)
                                   for s, q, ch, g in letter])
    sets["cloze"] = EvalSet(tok, [(d["context"], [" " + c for c in d["choices"]], d["gold"]) for d in cloze])
    heldin, incontext = diagnostic_letter_sets(world, args.seed, args.eval_limit or 120)
    sets["letter_heldin"] = EvalSet(tok, [(mmlu_description(s) + letter_text(q, ch), [" " + c for c in LETTERS], g)
                                          for s, q, ch, g in heldin])
    sets["letter_incontext"] = EvalSet(tok, [(mmlu_description(s) + letter_text(q, ch), [" " + c for c in LETTERS], g)
                                             for s, q, ch, g in incontext])
    return sets


def head_modules(model, family):
    if family == "llama":
        layers = model.model.layers
        return [layer.self_attn.o_proj for layer in layers], model.config.num_attention_heads, model.config.head_dim
    layers = model.backbone.layers
    return [layer.mixer.out_proj for layer in layers], model.config.num_heads, model.config.head_dim


class Ablation:
    """zero the heads' slices of the output projection's input (gna --mask L<l>H<h>)"""

    def __init__(self, torch, model, family, heads):
        self.torch, self.handles = torch, []
        modules, n_heads, head_dim = head_modules(model, family)
        by_layer = {}
        for l, h in heads:
            by_layer.setdefault(l, []).append(h)
        for l, hs in by_layer.items():
            mod = modules[l]
            mask = torch.ones(mod.in_features, device=mod.weight.device, dtype=torch.float32)
            for h in hs:
                mask[h * head_dim:(h + 1) * head_dim] = 0

            def hook(module, args, mask=mask):
                return (args[0] * mask.to(args[0].dtype),) + tuple(args[1:])

            self.handles.append(mod.register_forward_pre_hook(hook))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


def evaluate_model(torch, transformers, path, family, sets, args, device, val):
    cls = {"llama": transformers.LlamaForCausalLM, "mamba2": transformers.Mamba2ForCausalLM,
           "zamba2": getattr(transformers, "Zamba2ForCausalLM", None)}[family]
    set_tf32(torch, False)
    t0 = time.time()
    model = cls.from_pretrained(path, dtype=torch.float32).to(device).eval()
    assert next(model.parameters()).dtype == torch.float32
    assert_tied(model, path)
    if family == "zamba2":
        check_zamba2_tied(model, path)
        check_zamba2_masks(torch, model, device)
    name = os.path.basename(path.rstrip("/"))
    scorer = Scorer(torch, model, device)
    res = {"val_loss_reloaded_fp32": val_loss(torch, model, val, autocast=False)}
    for k, s in sets.items():
        res[k] = s.accuracy(scorer)
    kv = " ".join(f"{n}:{res[f'kv{n}']:.3f}" for n in args.kv_pairs)
    log(f"{name} (reloaded, float32): validation loss {res['val_loss_reloaded_fp32']:.4f}")
    log(f"{name}: KV acc by pairs {kv}")
    log(f"{name}: letter (0-shot, held-out facts, {len(sets['letter'].golds)} q) {res['letter']:.3f}; "
        f"cloze (same facts) {res['cloze']:.3f}; letter on training facts {res['letter_heldin']:.3f}; "
        f"letter in-context {res['letter_incontext']:.3f}  (chance 0.25)")
    abl = None
    if family == "zamba2":
        res["hybrid"] = zamba2_experiments(torch, model, sets, scorer, res, args, name, val)
        flush_log()
        if not args.no_ablation:
            abl = ablation_scan_zamba2(torch, model, sets, scorer, res, args, name)
    elif not args.no_ablation and (family == "llama" or not args.no_mamba2_ablation):
        abl = ablation_scan(torch, model, family, sets, scorer, res, args, name)
    res["eval_wall_s"] = time.time() - t0
    log(f"{name}: evaluation took {res['eval_wall_s']:.1f}s")
    del model
    torch.cuda.empty_cache()
    return res, abl


def log_most_harmful(name, rows, base, kv_key):
    """logs the 5 heads whose ablation hurts letter accuracy most and the 5 that hurt KV most, each with
    its accuracies and their change from base in points; returns the two rankings"""
    def show(r):
        return (f"  {r['head']:>6}  letter {r['letter']:.3f} ({100 * (r['letter'] - base['letter']):+.1f})  "
                f"cloze {r['cloze']:.3f} ({100 * (r['cloze'] - base['cloze']):+.1f})  "
                f"{kv_key} {r[kv_key]:.3f} ({100 * (r[kv_key] - base[kv_key]):+.1f})  "
                f"in-context {r['letter_incontext']:.3f} ({100 * (r['letter_incontext'] - base['letter_incontext']):+.1f})")

    by_letter = sorted(rows, key=lambda r: (r["letter"], r["head"]))
    by_kv = sorted(rows, key=lambda r: (r[kv_key], r["head"]))
    log(f"{name}: the 5 heads whose ablation hurts letter accuracy most (points vs base):")
    for r in by_letter[:5]:
        log(show(r))
    log(f"{name}: the 5 heads whose ablation hurts {kv_key} most:")
    for r in by_kv[:5]:
        log(show(r))
    return by_letter, by_kv


def scan_keys(sets, args):
    """the KV set an ablation scan measures (30 pairs, or the middle size) and every set it measures"""
    kv_key = "kv30" if "kv30" in sets else f"kv{args.kv_pairs[len(args.kv_pairs) // 2]}"
    return kv_key, [kv_key, "letter", "cloze", "letter_incontext"]


def log_scan(name, n_heads, seconds, base, kv_key):
    log(f"{name}: ablated each of {n_heads} heads in turn ({seconds:.1f}s); "
        f"base {kv_key} {base[kv_key]:.3f}, letter {base['letter']:.3f}, cloze {base['cloze']:.3f}, "
        f"letter in-context {base['letter_incontext']:.3f}")
    log(f"{name}: accuracy with each head ablated, letter/cloze/{kv_key}/in-context in points:")


def log_pair(name, spec, both, base, kv_key):
    """what ablating two heads together did, against the base"""
    log(f"{name}: ablating {spec} together (gna --mask {spec}): letter {both['letter']:.3f} "
        f"({100 * (both['letter'] - base['letter']):+.1f}), cloze {both['cloze']:.3f} "
        f"({100 * (both['cloze'] - base['cloze']):+.1f}), {kv_key} {both[kv_key]:.3f} "
        f"({100 * (both[kv_key] - base[kv_key]):+.1f}), letter in-context {both['letter_incontext']:.3f}, "
        f"letter on training facts {both['letter_heldin']:.3f}")


def ablation_scan(torch, model, family, sets, scorer, base, args, name):
    modules, n_heads, _ = head_modules(model, family)
    kv_key, keys = scan_keys(sets, args)
    rows = []
    t0 = time.time()
    for l in range(len(modules)):
        for h in range(n_heads):
            with Ablation(torch, model, family, [(l, h)]):
                r = {k: sets[k].accuracy(scorer) for k in keys}
            rows.append({"head": f"L{l}H{h}", "layer": l, "index": h, **r})
    log_scan(name, len(rows), time.time() - t0, base, kv_key)
    for l in range(len(modules)):
        log(f"  L{l}: " + "  ".join(f"H{r['index']} {100 * r['letter']:.0f}/{100 * r['cloze']:.0f}/{100 * r[kv_key]:.0f}/"
                                      f"{100 * r['letter_incontext']:.0f}" for r in rows if r["layer"] == l))

    by_letter, by_kv = log_most_harmful(name, rows, base, kv_key)
    pair = [(r["layer"], r["index"]) for r in by_letter[:2]]
    with Ablation(torch, model, family, pair):
        both = {k: sets[k].accuracy(scorer) for k in keys + ["letter_heldin"]}
    spec = ",".join(f"L{l}H{h}" for l, h in pair)
    log_pair(name, spec, both, base, kv_key)
    return {"kv_setting": kv_key, "heads": rows, "top_letter": [r["head"] for r in by_letter[:5]],
            "top_kv": [r["head"] for r in by_kv[:5]], "pair": spec, "pair_result": both}


class Zamba2Mask:
    """gna's --mask on a Zamba2 model, with forward pre-hooks. Heads are (layer, kind, index):
      (l, "A", h)  attention head h of hybrid layer l's visit of the shared block: its slice of o_proj's input, at
                   that visit only (o_proj is one module that every visit runs; a pre-hook on each hybrid layer
                   tells the o_proj hook which visit is running)                        = gna --mask L<l>A<h>
      (l, "S", h)  SSM head h of layer l's Mamba mixer: its slice of out_proj's input   = gna --mask L<l>S<h>
    final_row=True applies it at the last position of each scored input only (the Scorer's rows). Zeroing a head's
    whole softmax row there (every key, not renormalised) zeroes the head's output there, so this is
    gna --mask 'L<l>A<h>@-1:0--1'; with every attention head named, the paper's hybrid experiment."""

    def __init__(self, torch, model, heads, final_row=False):
        self.handles = []
        cfg, layers = model.config, model.model.layers
        hybrid = zamba2_hybrid_layers(model)
        attn_dim = getattr(cfg, "attention_head_dim", None) or 2 * cfg.hidden_size // cfg.num_attention_heads
        groups = {}
        for l, kind, h in heads:
            assert kind in ("A", "S") and (kind == "S" or l in hybrid), f"no head {(l, kind, h)}"
            groups.setdefault((kind, l), []).append(h)

        def make_mask(width, hs, dim, device):
            mask = torch.ones(width, device=device, dtype=torch.float32)
            for h in hs:
                mask[h * dim:(h + 1) * dim] = 0
            return mask

        def apply(x, mask):
            if not final_row:
                return x * mask.to(x.dtype)
            rows = SCORE_ROWS["last"]
            assert rows is not None and rows.shape[0] == x.shape[0], "a final-row mask runs inside the Scorer only"
            x = x.clone()
            b = torch.arange(x.shape[0], device=x.device)
            x[b, rows] = x[b, rows] * mask.to(x.dtype)
            return x

        attn = {l: hs for (kind, l), hs in groups.items() if kind == "A"}
        if attn:
            current = {"layer": None}
            for l in hybrid:  # every hybrid layer, so that a visit not named never sees a stale layer
                self.handles.append(layers[l].register_forward_pre_hook(
                    lambda module, args, l=l: current.__setitem__("layer", l)))
            o_projs = {}
            for l in hybrid:
                mod = layers[l].shared_transformer.self_attn.o_proj
                o_projs[id(mod)] = mod
            masks = {l: make_mask(next(iter(o_projs.values())).in_features, hs, attn_dim,
                                  next(iter(o_projs.values())).weight.device) for l, hs in attn.items()}

            def attn_hook(module, args):
                mask = masks.get(current["layer"])
                if mask is None:
                    return None
                return (apply(args[0], mask),) + tuple(args[1:])

            for mod in o_projs.values():
                self.handles.append(mod.register_forward_pre_hook(attn_hook))
        for (kind, l), hs in groups.items():
            if kind != "S":
                continue
            mod = zamba2_mixer(layers[l]).out_proj
            mask = make_mask(mod.in_features, hs, cfg.mamba_headdim, mod.weight.device)
            self.handles.append(mod.register_forward_pre_hook(
                lambda module, args, mask=mask: (apply(args[0], mask),) + tuple(args[1:])))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


def zamba2_heads(model):
    """every head gna names in a Zamba2: the attention heads of each visit, then every layer's SSM heads"""
    cfg = model.config
    hybrid = zamba2_hybrid_layers(model)
    return ([(l, "A", h) for l in hybrid for h in range(cfg.num_attention_heads)] +
            [(l, "S", h) for l in range(cfg.num_hidden_layers) for h in range(cfg.n_mamba_heads)])


def zamba2_head_name(head):
    l, kind, h = head
    return f"L{l}{kind}{h}"


def check_zamba2_masks(torch, model, device):
    """the hooks do what they say: the final-row mask moves the last position's logits only; one visit's head,
    ablated, is zeroed at that visit of the shared o_proj and not at the others; an SSM head moves the logits"""
    hybrid = zamba2_hybrid_layers(model)
    H = model.config.num_attention_heads
    hd = getattr(model.config, "attention_head_dim", None) or 2 * model.config.hidden_size // H
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(1, model.config.vocab_size, (2, 40), generator=g).to(device)
    seen = []
    o_projs = {id(m): m for m in (model.model.layers[l].shared_transformer.self_attn.o_proj for l in hybrid)}
    with torch.no_grad():
        base = model(input_ids=ids, use_cache=False).logits
        SCORE_ROWS["last"] = torch.tensor([39, 29], device=device)
        with Zamba2Mask(torch, model, [(l, "A", h) for l in hybrid for h in range(H)], final_row=True):
            masked = model(input_ids=ids, use_cache=False).logits
        SCORE_ROWS["last"] = None
        with Zamba2Mask(torch, model, [(hybrid[-1], "A", 0)]):
            handles = [m.register_forward_hook(lambda module, args, output: seen.append(args[0].detach().clone()))
                       for m in o_projs.values()]
            try:
                one = model(input_ids=ids, use_cache=False).logits
            finally:
                for handle in handles:
                    handle.remove()
        with Zamba2Mask(torch, model, [(0, "S", 0)]):
            ssm = model(input_ids=ids, use_cache=False).logits
    same_before = bool((masked[0, :39] == base[0, :39]).all()) and bool((masked[1, :29] == base[1, :29]).all())
    moved_last = (masked[0, 39] - base[0, 39]).abs().max().item() > 0 and (masked[1, 29] - base[1, 29]).abs().max().item() > 0
    visits_ok = (len(seen) == len(hybrid) and bool((seen[-1][..., :hd] == 0).all()) and
                 all(bool((v[..., :hd] != 0).any()) for v in seen[:-1]) and bool((seen[-1][..., hd:] != 0).any()) and
                 (one - base).abs().max().item() > 0)
    moved_ssm = (ssm - base).abs().max().item() > 0
    ok = same_before and moved_last and visits_ok and moved_ssm
    log(f"zamba2 mask hooks: the final-row mask leaves earlier positions {'alone' if same_before else 'CHANGED'} and "
        f"moves the last ({moved_last}); L{hybrid[-1]}A0 is zeroed at its own visit of the shared o_proj only "
        f"({visits_ok}, {len(seen)} visits seen); an SSM head moves the logits ({moved_ssm}) -> {'ok' if ok else 'WRONG'}")
    assert ok, "the Zamba2 mask hooks do not do what they should"


class Zamba2DtOpen:
    """Zamba2's dt unclamped while it is open (time_step_limit (0, inf), time_step_min 0, where the mixers have
    them): the CUDA path behind the paper's numbers, and gna's default"""

    def __init__(self, model):
        self.mixers = ssd_mixers(model, "zamba2")

    def __enter__(self):
        self.saved = []
        for m in self.mixers:
            self.saved.append({a: getattr(m, a) for a in ("time_step_limit", "time_step_min") if hasattr(m, a)})
            if hasattr(m, "time_step_limit"):
                m.time_step_limit = (0.0, float("inf"))
            if hasattr(m, "time_step_min"):
                m.time_step_min = 0.0
        return self

    def __exit__(self, *exc):
        for m, saved in zip(self.mixers, self.saved):
            for a, v in saved.items():
                setattr(m, a, v)


def zamba2_experiments(torch, model, sets, scorer, base, args, name, val):
    """the paper's hybrid experiment (every attention head's final row masked at every visit), the same per visit,
    the attention ablated everywhere, and the scores with dt unclamped (gna's default for Zamba2)"""
    out = {}
    hybrid = zamba2_hybrid_layers(model)
    H = model.config.num_attention_heads
    kv_key = scan_keys(sets, args)[0]
    keys = list(sets)
    t0 = time.time()
    # dt: transformers 5.x clamps Zamba2's dt at time_step_min; gna by default does not (the CUDA path of the
    # paper's code); gna --dt-min-clamp does
    with torch.no_grad():
        x = val[:8].long()
        clamped = model(input_ids=x, use_cache=False).logits
        with Zamba2DtOpen(model):
            free = model(input_ids=x, use_cache=False).logits
            out["dt_clamp_logit_diff"] = (clamped - free).abs().max().item()
            out["no_dt_clamp"] = {k: sets[k].accuracy(scorer) for k in keys}
    nc = out["no_dt_clamp"]
    log(f"{name}: dt without the time_step_min clamp (gna's default; transformers clamps): logits move by at most "
        f"{out['dt_clamp_logit_diff']:.2e} on 8 validation sequences; " +
        " ".join(f"{k} {nc[k]:.3f}" for k in keys))
    everywhere = [(l, "A", h) for l in hybrid for h in range(H)]
    with Zamba2Mask(torch, model, everywhere, final_row=True):
        out["final_rows"] = {k: sets[k].accuracy(scorer) for k in keys}
    for l in hybrid:
        with Zamba2Mask(torch, model, [(l, "A", h) for h in range(H)], final_row=True):
            out[f"final_rows_L{l}"] = {k: sets[k].accuracy(scorer) for k in (kv_key, "letter", "cloze", "letter_incontext")}
    with Zamba2Mask(torch, model, everywhere):
        out["attention_ablated"] = {k: sets[k].accuracy(scorer) for k in keys}
    fr, ab = out["final_rows"], out["attention_ablated"]
    log(f"{name}: the paper's hybrid experiment, every attention head's final row (all keys) zeroed at every visit "
        f"(gna --mask 'L*A*@-1:0--1'; {time.time() - t0:.1f}s with the rest of these):")
    log(f"  {'':22} " + " ".join(f"{k:>8}" for k in keys))
    log(f"  {'base':22} " + " ".join(f"{base[k]:8.3f}" for k in keys))
    log(f"  {'final rows masked':22} " + " ".join(f"{fr[k]:8.3f}" for k in keys))
    log(f"  {'attention ablated':22} " + " ".join(f"{ab[k]:8.3f}" for k in keys))
    for l in hybrid:
        r = out[f"final_rows_L{l}"]
        log(f"  final rows of L{l}'s visit only (gna --mask 'L{l}A*@-1:0--1'): " +
            " ".join(f"{k} {r[k]:.3f}" for k in r))
    return out


def ablation_scan_zamba2(torch, model, sets, scorer, base, args, name):
    """each head gna names in turn (every visit's attention heads, every SSM head), ablated at every position"""
    kv_key, keys = scan_keys(sets, args)
    rows = []
    t0 = time.time()
    for head in zamba2_heads(model):
        with Zamba2Mask(torch, model, [head]):
            r = {k: sets[k].accuracy(scorer) for k in keys}
        rows.append({"head": zamba2_head_name(head), "layer": head[0], "kind": head[1], "index": head[2], **r})
    log_scan(name, len(rows), time.time() - t0, base, kv_key)
    for l in range(model.config.num_hidden_layers):
        for kind in ("A", "S"):
            mine = [r for r in rows if r["layer"] == l and r["kind"] == kind]
            if mine:
                log(f"  L{l}{kind}: " + "  ".join(
                    f"{kind}{r['index']} {100 * r['letter']:.0f}/{100 * r['cloze']:.0f}/{100 * r[kv_key]:.0f}/"
                    f"{100 * r['letter_incontext']:.0f}" for r in mine))

    by_letter, by_kv = log_most_harmful(name, rows, base, kv_key)
    result = {"kv_setting": kv_key, "heads": rows, "top_letter": [r["head"] for r in by_letter[:5]],
              "top_kv": [r["head"] for r in by_kv[:5]]}
    for what, ranked in (("pair", by_letter), ("pair_kv", by_kv)):
        pair = [(r["layer"], r["kind"], r["index"]) for r in ranked[:2]]
        with Zamba2Mask(torch, model, pair):
            both = {k: sets[k].accuracy(scorer) for k in keys + ["letter_heldin"]}
        spec = ",".join(zamba2_head_name(h) for h in pair)
        log_pair(name, spec, both, base, kv_key)
        result[what] = spec
        result[what + "_result"] = both
    return result


def check_gna_logits(torch, transformers, family, path, tok, world, args):
    """gna's float32 logits (`gna logits`, the binary --check-gna names) against transformers' float32 logits of the
    reloaded checkpoint, on the CPU, for three prompts: a 30-pair KV prompt, a letter question, a cloze sentence.
    A prompt passes when max |diff| <= 1e-4 * max(1, max |logit|). Zamba2 twice: gna --dt-min-clamp against
    transformers as it runs (dt clamped below at time_step_min), and gna's default against transformers with that
    clamp opened (the CUDA path behind the paper's numbers)."""
    import subprocess
    import tempfile
    import numpy as np
    cls = {"llama": transformers.LlamaForCausalLM, "mamba2": transformers.Mamba2ForCausalLM,
           "zamba2": getattr(transformers, "Zamba2ForCausalLM", None)}[family]
    set_tf32(torch, False)
    model = cls.from_pretrained(path, dtype=torch.float32).eval()
    rng = random.Random("gna-check")
    keys, values, query = gna_kv_sample(world.keys, 30, 0, 0)
    e, attr = world.heldout[0]
    q, choices, _ = memorised_question(rng, world, (e, attr))
    prompts = {"kv30": kv_prompt(keys, values, query),
               "letter": mmlu_description(ATTR_SUBJECT[attr]) + letter_text(q, choices),
               "cloze": f"The {ATTR_WORDS[attr]} of {e} is {world.facts[(e, attr)]}."}
    variants = [("", None)]
    if family == "zamba2":
        variants = [("--dt-min-clamp", "clamped"), ("", "unclamped")]
    results, ok_all = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for flag, dt in variants:
            opened = Zamba2DtOpen(model) if dt == "unclamped" else None
            if opened:
                opened.__enter__()
            for what, text in prompts.items():
                ids = encode(tok, text)
                npy = os.path.join(tmp, "x.npy")
                cmd = [args.check_gna, "logits", "-m", path, "--tokens", ",".join(map(str, ids)), "-o", npy] + \
                    ([flag] if flag else [])
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    raise RuntimeError(f"{' '.join(cmd[:4])} ... exited {run.returncode}: {run.stderr[-300:]}")
                got = np.load(npy)
                with torch.no_grad():
                    ref = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float().numpy()
                assert got.shape == ref.shape, f"gna gave {got.shape}, transformers {ref.shape}"
                diff = float(np.abs(got - ref).max())
                scale = max(1.0, float(np.abs(ref).max()))
                ok = diff <= 1e-4 * scale
                ok_all &= ok
                results.append({"prompt": what, "tokens": len(ids), "gna_flag": flag, "dt": dt, "max_abs_diff": diff,
                                "max_abs_logit": float(np.abs(ref).max()), "ok": ok})
                log(f"{family}: gna logits {flag or '(default)'} vs transformers float32 CPU"
                    f"{' (dt ' + dt + ')' if dt else ''}, {what} ({len(ids)} tokens): max |diff| {diff:.2e}, "
                    f"max |logit| {float(np.abs(ref).max()):.2f} -> {'ok' if ok else 'OVER 1e-4 x max(1, max|logit|)'}")
            if opened:
                opened.__exit__(None, None, None)
    del model
    return {"ok": bool(ok_all), "prompts": results}


# ----------------------------------------------------------------------------------------------

def parse_args(argv):
    global SEQ_LEN
    p = argparse.ArgumentParser(description="Train gna's demo checkpoints (llama_demo, mamba2_demo, zamba2_demo) on synthetic data.")
    p.add_argument("--out", required=True, help="output folder, e.g. test/models")
    p.add_argument("--smoke", action="store_true", help="60 steps per model and small evaluations: an end-to-end check")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--steps", type=int, default=None, help="steps for every model (overrides the three below)")
    p.add_argument("--llama-steps", type=int, default=3000)
    p.add_argument("--mamba2-steps", type=int, default=3000)
    p.add_argument("--zamba2-steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--llama-lr", type=float, default=1e-3)
    p.add_argument("--mamba2-lr", type=float, default=2e-3)
    p.add_argument("--zamba2-lr", type=float, default=2e-3)
    p.add_argument("--zamba2-layers", default="", help="the layer kinds, m (mamba) or h (hybrid), e.g. mhmhm "
                   "(default: " + "".join(k[0] for k in ZAMBA2["layers"]) + ")")
    p.add_argument("--zamba2-expand", type=int, default=ZAMBA2["expand"], help="Mamba mixer width / hidden size")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--mamba2-layers", type=int, default=0, help="0: the count closest to the llama's parameters")
    p.add_argument("--mamba2-train-impl", choices=["fast", "hf"], default="fast")
    p.add_argument("--zamba2-train-impl", choices=["fast", "hf"], default="fast")
    p.add_argument("--no-autocast", action="store_true", help="train in float32")
    p.add_argument("--no-mamba2-ablation", action="store_true", help="skip the scan over the Mamba-2 heads")
    p.add_argument("--no-ablation", action="store_true", help="skip every head scan (gna audits the saved model)")
    p.add_argument("--seq-len", type=int, default=SEQ_LEN, help="tokens per training sequence (documents packed)")
    p.add_argument("--train-seconds", type=float, default=0,
                   help="end each training within about this many seconds: the step count (at most the steps asked "
                        "for) is set from the speed measured every 100 steps, and the cosine schedule follows it")
    p.add_argument("--llama-layers", type=int, default=LLAMA["layers"])
    p.add_argument("--llama-mlp", type=int, default=LLAMA["mlp"], help="the llama's intermediate size")
    p.add_argument("--llama-heads", type=int, default=LLAMA["heads"], help="attention heads per layer (MHA, "
                   "head_dim 192 / heads): fewer heads give reading the gold option fewer places to spread over")
    p.add_argument("--mamba2-state", type=int, default=MAMBA2["state"], help="state_size of the Mamba-2")
    p.add_argument("--mamba2-expand", type=int, default=MAMBA2["expand"])
    p.add_argument("--mamba2-heads", type=int, default=MAMBA2["heads"], help="SSM heads per layer (head_dim = "
                   "192 * expand / heads)")
    p.add_argument("--zamba2-state", type=int, default=ZAMBA2["state"], help="mamba_d_state of the hybrid's mixers")
    p.add_argument("--zamba2-heads", type=int, default=0, help="SSM heads per mixer (0: 6 per expand, head_dim 32)")
    p.add_argument("--zamba2-mem-blocks", type=int, default=ZAMBA2["mem_blocks"], metavar="N", help="num_mem_blocks: "
                   "shared attention blocks, visit v runs block v %% N (N = the hybrid layers: each visit its own "
                   "block)")
    p.add_argument("--zamba2-ssm-warmup", type=int, default=0, help="the first STEPS steps with every Mamba mixer's "
                   "state off (A_log held at 10: it forgets each token at the next), so that only attention can "
                   "retrieve; then A_log is put back to its initial values and trains (if training ends sooner, the "
                   "saved model keeps A_log 10)", metavar="STEPS")
    p.add_argument("--kv-is-token", action="store_true", help="the tokenizer gets \"' is\" as one added token, so that "
                   "the KV question's last token follows the asked key directly, as the line form's ':' does (a "
                   "model that looks the value up at the token after the key then does so at the final row)")
    p.add_argument("--letter-options", default="4,4", help="MIN,MAX options (2-8, letters A-H) of the training letter "
                   "questions; the evaluation keeps MMLU's 4. More than 4 makes a head that reads a fixed letter's "
                   "line unable to cover them, so the final position has to find the gold line by its content")
    p.add_argument("--kv-pairs", default="10,20,30,40,50,60,80,100")
    p.add_argument("--kv-samples", type=int, default=50)
    p.add_argument("--kv-seed", type=int, default=0, help="gna kv --seed of the KV evaluation samples")
    p.add_argument("--test-per-subject", type=int, default=40)
    p.add_argument("--eval-limit", type=int, default=0, help="score only about this many letter/cloze questions")
    p.add_argument("--max-data-tokens", type=float, default=2.0e8, help="cap on the unique training tokens")
    p.add_argument("--workers", type=int, default=0, help="data generation processes (default: all cores)")
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--gna-c", default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "gna.c"))
    p.add_argument("--data-only", action="store_true", help="stop after the tokenizer, data and eval files")
    p.add_argument("--answer-weight", type=float, default=10.0,
                   help="loss weight of answer tokens (KV query values, answer letters); other tokens weigh 1")
    p.add_argument("--kv-train-pairs", default="2,60", help="MIN,MAX dictionary size of KV training documents")
    p.add_argument("--kv-train-queries", default="2,16", help="MIN,MAX queries of the multi-query half of them")
    p.add_argument("--kv-train-pairs-dist", choices=["log", "uniform"], default="log",
                   help="how KV training dictionary sizes are drawn: log-uniformly (small ones more often) or uniformly")
    p.add_argument("--kv-line-queries", type=float, default=0.5,
                   help="share of KV training queries asked in the dictionary's own line form '<key>:' (plain "
                        "induction) instead of the paper's question")
    p.add_argument("--probe-every", type=int, default=500,
                   help="every N steps, print KV accuracy at 2, 10 and 30 pairs and held-out letter accuracy")
    p.add_argument("--kind-shares", default="", help="token shares of the document kinds (unnamed ones: 0), e.g. "
                   "kv=0.5,facts=0.2,letter_mem=0.15,letter_ic=0.15 (default: " +
                   ",".join(f"{k}={v}" for k, v in KIND_SHARES.items()) + ")")
    p.add_argument("--data-cache", default="", help="folder to keep the generated token data in, reused by later runs")
    p.add_argument("--only", choices=FAMILIES, default=None,
                   help="train and evaluate one model (results_<model>.json, train_log_<model>.txt); run each, "
                        "in parallel if you like, then --combine")
    p.add_argument("--combine", action="store_true", help="join the --only runs of llama and mamba2 (and zamba2, if "
                   "there) into train_log.txt, train_results.json and demo_data/")
    p.add_argument("--append", action="store_true", help="with --combine: add the --only zamba2 run to the "
                   "train_log.txt and train_results.json already in --out, leaving what they hold as it is")
    p.add_argument("--eval-only", action="store_true", help="evaluate the model already saved in --out (with --only)")
    p.add_argument("--init-from", default="", help="start from these weights instead of a fresh initialisation: a "
                   "<model>_fp32.pt that --save-fp32 wrote, or a saved Hugging Face folder (same shapes; a curriculum's "
                   "next phase: the schedule, warmup included, starts again)")
    p.add_argument("--tokenizer-from", default="", help="read tokenizer.json from this folder rather than train one "
                   "(the tokenizer's corpus depends on --kv-train-pairs; with --init-from, the earlier phase's folder)")
    p.add_argument("--save-fp32", action="store_true", help="also write the trained float32 weights as "
                   "<out>/<model>_fp32.pt (for --init-from)")
    p.add_argument("--check-gna", default="", help="path of a gna binary: compare its logits with transformers' on "
                   "each saved model (3 prompts)")
    a = p.parse_args(argv)
    if a.kind_shares:
        shares = {k: float(v) for k, v in (item.split("=") for item in a.kind_shares.split(","))}
        assert set(shares) <= set(KINDS) and abs(sum(shares.values()) - 1) < 1e-6, f"--kind-shares: {shares}"
        KIND_SHARES.update({k: shares.get(k, 0.0) for k in KINDS})
    if a.zamba2_layers:
        assert set(a.zamba2_layers) <= set("mh") and a.zamba2_layers[0] == "m", f"--zamba2-layers: {a.zamba2_layers}"
        ZAMBA2["layers"] = tuple({"m": "mamba", "h": "hybrid"}[k] for k in a.zamba2_layers)
    ZAMBA2["expand"] = a.zamba2_expand
    ZAMBA2.update(state=a.zamba2_state, heads=a.zamba2_heads, mem_blocks=a.zamba2_mem_blocks)
    if a.llama_heads < 1 or 192 % a.llama_heads:
        p.error("--llama-heads must divide the hidden size 192")
    LLAMA.update(layers=a.llama_layers, mlp=a.llama_mlp, heads=a.llama_heads)
    MAMBA2.update(state=a.mamba2_state, expand=a.mamba2_expand, heads=a.mamba2_heads)
    SEQ_LEN = a.seq_len
    for name in ("kv_train_pairs", "kv_train_queries"):
        lo, hi = (int(x) for x in getattr(a, name).split(","))
        assert 1 <= lo <= hi <= 100, f"--{name.replace('_', '-')}: {lo},{hi}"
        setattr(a, name, (lo, hi))
    if a.steps is not None:
        a.llama_steps = a.mamba2_steps = a.zamba2_steps = a.steps
    if a.smoke:
        a.llama_steps = a.mamba2_steps = a.zamba2_steps = min(a.llama_steps, 60)
        a.kv_samples = min(a.kv_samples, 10)
        a.kv_pairs = "10,30,50"
        a.eval_limit = a.eval_limit or 24
        a.log_every = min(a.log_every, 10)
        a.warmup = min(a.warmup, 10)
    a.kv_pairs = [int(x) for x in a.kv_pairs.split(",")]
    a.letter_options = [int(x) for x in a.letter_options.split(",")]
    if len(a.letter_options) != 2 or not 2 <= a.letter_options[0] <= a.letter_options[1] <= len(OPTION_LETTERS):
        p.error("--letter-options must be MIN,MAX with 2 <= MIN <= MAX <= 8")
    assert all(1 <= n <= 100 for n in a.kv_pairs)
    a.workers = a.workers or os.cpu_count() or 4
    return a


def setup(args, out, write_eval):
    """keys, world, evaluation files, tokenizer: deterministic from --seed and the KV settings"""
    KV_TRAIN.update(pairs=args.kv_train_pairs, queries=args.kv_train_queries, log_uniform=args.kv_train_pairs_dist == "log",
                    line_queries=args.kv_line_queries)
    LETTER_OPTIONS[:] = args.letter_options
    keys = read_kv_keys(args.gna_c)
    log(f"KV keys: {len(keys)} words from {args.gna_c}" + ("" if len(keys) == 216 else " (WARNING: expected 216)"))
    world = make_world(args.seed, keys)
    log(f"world: {len(world.entities)} entities, {len(world.facts)} facts ({len(world.train)} train / "
        f"{len(world.heldout)} held out), pools {', '.join(f'{a} {len(p)}' for a, p in world.pools.items())}")
    log("examples: " + "; ".join(f"{e} {a}={world.facts[(e, a)]}" for e, a in world.heldout[:4]))
    data_root = write_eval_data(write_eval, world, args.seed, args.test_per_subject)
    log(f"wrote {data_root}: mmlu/dev ({5 * len(SUBJECTS)} rows), mmlu/test and cloze.jsonl "
        f"({sum(min(args.test_per_subject, len(world.heldout_by_subject[s])) for s in SUBJECTS)} held-out facts), "
        f"subjects {', '.join(SUBJECTS)}")
    t0 = time.time()
    if args.tokenizer_from:  # a curriculum's next phase keeps the first phase's token ids
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(os.path.join(args.tokenizer_from, "tokenizer.json"))
        log(f"tokenizer read from {args.tokenizer_from}")
    else:
        tok = train_tokenizer(world, args.seed, VOCAB, kv_is_token=args.kv_is_token)
        log(f"tokenizer trained in {time.time() - t0:.1f}s")
    check_tokenizer(tok, world)
    tok_json = tok.to_str(pretty=True)
    spec = json.loads(tok_json)
    assert spec.get("normalizer") is None and spec.get("post_processor") is None, "tokenizer: normalizer/post-processor set"
    assert spec["pre_tokenizer"]["type"] == "ByteLevel" and spec["pre_tokenizer"]["use_regex"] is True
    assert spec["pre_tokenizer"]["add_prefix_space"] is False and spec["decoder"]["type"] == "ByteLevel"
    assert [(t["id"], t["content"], t["special"]) for t in spec["added_tokens"]] == [(0, EOS, True)] + \
        ([(VOCAB, "' is", False)] if args.kv_is_token else []), spec["added_tokens"]
    flush_log()
    return world, tok, tok_json, data_root


def token_data(args, world, tok, tok_json):
    """training and validation tokens with their answer flags, generated or read from --data-cache"""
    import hashlib
    import numpy as np
    need = max(args.llama_steps, args.mamba2_steps, args.zamba2_steps) * args.batch * SEQ_LEN
    n_tokens = int(min(need, args.max_data_tokens))
    n_tokens = max(SEQ_LEN * args.batch, n_tokens - n_tokens % SEQ_LEN)
    recipe = repr((args.seed, n_tokens, tok_json, sorted(KV_TRAIN.items()), sorted(KIND_SHARES.items())) +
                  (() if SEQ_LEN == 512 else (SEQ_LEN,)) + (() if LETTER_OPTIONS == [4, 4] else (LETTER_OPTIONS,)))
    cache = os.path.join(args.data_cache, f"tokens-{hashlib.sha1(recipe.encode()).hexdigest()[:16]}.npz") \
        if args.data_cache else ""
    if cache and os.path.exists(cache):
        z = np.load(cache)
        data_np, flags_np, val_np, val_flags = z["data"], z["flags"], z["val"], z["val_flags"]
        stats = json.loads(str(z["stats"]))
        log(f"training data read from {cache}")
    else:
        data_np, flags_np, stats = build_token_data(world, tok, args.seed, n_tokens, args.workers, "train")
        val_np, val_flags, _ = build_token_data(world, tok, args.seed, 64 * SEQ_LEN, args.workers, "val")
        if cache:
            os.makedirs(args.data_cache, exist_ok=True)
            partial = f"{cache}.{os.getpid()}.tmp.npz"  # two runs may build the same data at once
            np.savez(partial, data=data_np, flags=flags_np, val=val_np, val_flags=val_flags, stats=json.dumps(stats))
            os.replace(partial, cache)
            log(f"training data saved to {cache}")
    data_np, flags_np = data_np.reshape(-1, SEQ_LEN), flags_np.reshape(-1, SEQ_LEN)
    val_np = val_np.reshape(-1, SEQ_LEN)
    log(f"training data: {data_np.shape[0]} sequences of {SEQ_LEN} = {data_np.size / 1e6:.1f}M tokens "
        f"(needed {need / 1e6:.1f}M) in {stats['seconds']:.1f}s with {args.workers} processes")
    log("  mean document tokens " + ", ".join(f"{k} {v:.0f}" for k, v in stats["mean_doc_tokens"].items()) +
        "; token shares " + ", ".join(f"{k} {v:.3f}" for k, v in stats["token_shares"].items()) +
        " (targets " + ", ".join(f"{k} {v:.2f}" for k, v in KIND_SHARES.items()) + f"); answer tokens "
        f"{100 * stats['answer_token_share']:.2f}% (loss weight {args.answer_weight})")
    log(f"  KV training documents: {KV_TRAIN['pairs'][0]}-{KV_TRAIN['pairs'][1]} pairs "
        f"({'log-uniform' if KV_TRAIN['log_uniform'] else 'uniform'}), half with one query, half "
        f"with {KV_TRAIN['queries'][0]}-{KV_TRAIN['queries'][1]}")
    example_rng = random.Random("examples")
    for k in [k for k in KINDS if KIND_SHARES[k] > 0]:
        log(f"  example {k} document: {make_doc(example_rng, world, k)[:400]!r}")
    flush_log()
    return data_np, flags_np, val_np, stats


def mamba2_layer_count(transformers, vocab, n_llama, args):
    if args.mamba2_layers:
        return args.mamba2_layers
    c1 = count_params(transformers.Mamba2ForCausalLM(mamba2_config(transformers, vocab, 1)))
    c2 = count_params(transformers.Mamba2ForCausalLM(mamba2_config(transformers, vocab, 2)))
    per_layer, base = c2 - c1, c1 - (c2 - c1)
    n_layers = max(1, min(range(1, 33), key=lambda n: abs(base + n * per_layer - n_llama)))
    log(f"mamba2: {per_layer} parameters per layer, {base} outside the layers; {n_layers} layers is closest "
        f"to the llama's {n_llama}")
    return n_layers


def train_and_evaluate(family, args, out, world, tok, tok_json, data_root, data_np, flags_np, val_np):
    """build, train, save (bfloat16) and evaluate one model; returns its part of train_results.json"""
    import numpy as np
    import torch
    import transformers
    import tokenizers
    versions = {"python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
                "tokenizers": tokenizers.__version__, "numpy": np.__version__}
    assert torch.cuda.is_available(), "this script trains on a CUDA GPU"
    device = "cuda"
    versions["gpu"] = torch.cuda.get_device_name(0)
    log("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    vocab = tok.get_vocab_size()
    data = torch.from_numpy(data_np).to(device)
    flags = torch.from_numpy(flags_np).to(device)
    val = torch.from_numpy(val_np).to(device)
    steps_max = max(args.llama_steps, args.mamba2_steps, args.zamba2_steps)
    rng_np = np.random.default_rng(args.seed)  # the models read the same sequences in the same order
    perms = []
    while sum(len(p) for p in perms) < steps_max * args.batch:
        perms.append(rng_np.permutation(data_np.shape[0]))
    order = torch.from_numpy(np.concatenate(perms)).to(device)
    if len(perms) > 1:
        log(f"note: the models read the token buffer {len(perms)} times (at most {args.max_data_tokens / 1e6:.0f}M unique tokens)")

    name = f"{family}_demo"
    path = os.path.join(out, name)
    r = {"versions": versions}
    if args.eval_only:
        log(f"--eval-only: evaluating the saved {path}, no training")
        partial = os.path.join(out, f"results_{family}_train.json")
        if os.path.exists(partial):
            with open(partial) as f:
                r = json.load(f)
            r["versions"] = versions
        return evaluate_saved(torch, transformers, family, args, path, world, data_root, val, r)
    if family in ("mamba2", "zamba2"):  # built before the seed is set, so that these throwaway models use none of its draws
        n_llama = count_params(transformers.LlamaForCausalLM(llama_config(transformers, vocab)))
        if family == "mamba2":
            r["mamba2_layers"] = mamba2_layer_count(transformers, vocab, n_llama, args)
    torch.manual_seed(args.seed)
    if family == "llama":
        model = transformers.LlamaForCausalLM(llama_config(transformers, vocab))
        steps, lr = args.llama_steps, args.llama_lr
    elif family == "mamba2":
        model = transformers.Mamba2ForCausalLM(mamba2_config(transformers, vocab, r["mamba2_layers"]))
        steps, lr = args.mamba2_steps, args.mamba2_lr
    else:
        model = transformers.Zamba2ForCausalLM(zamba2_config(transformers, vocab))
        steps, lr = args.zamba2_steps, args.zamba2_lr
        c = model.config
        r["zamba2_layers"] = list(c.layers_block_type)
        log(f"zamba2: {c.num_hidden_layers} layers {','.join(c.layers_block_type)}; Mamba-2 mixers of {c.n_mamba_heads} "
            f"heads of {c.mamba_headdim} (expand {c.mamba_expand}, state {c.mamba_d_state}, groups {c.mamba_ngroups}); "
            f"{c.num_mem_blocks} shared block{'s' if c.num_mem_blocks > 1 else ''}: {c.num_attention_heads} attention "
            f"heads of {c.attention_head_dim} on "
            f"concat(h, embeddings), RoPE {c.use_mem_rope}, MLP {c.intermediate_size} (gelu), adapters rank "
            f"{c.adapter_rank} (attention adapters {c.use_shared_attention_adapter}); the llama has {n_llama} parameters")
    assert_tied(model, family)
    if args.init_from:
        load_weights(torch, model, args.init_from, name)
        r["init_from"] = args.init_from
    r["params"] = count_params(model)
    log(f"parameters: {name} {r['params']} ({r['params'] / 1e6:.3f}M; embeddings {vocab * 192})")
    flush_log()

    impl = {"mamba2": args.mamba2_train_impl, "zamba2": args.zamba2_train_impl}.get(family)
    if impl == "fast":
        set_tf32(torch, False)
        dt_name = None
        try:
            err, gerr, dt_name = check_fast_mamba2(torch, transformers, vocab, device, family)
        except Exception as e:
            log(f"{family}: the check of the training forward failed to run ({type(e).__name__}: {str(e)[:300]})")
            err = gerr = float("inf")
        ok = err < 2e-3 and gerr < 2e-2  # a wrong formula gives errors of order 1; these allow for TF32 rounding
        log(f"{family} training forward (matmul SSD) vs transformers' own, float32: output "
            f"{err:.2e}{' (mixer and whole model; dt clamp ' + str(dt_name) + ')' if family == 'zamba2' else ''}, "
            f"gradients {gerr:.2e} (relative) -> {'ok' if ok else 'MISMATCH: using transformers own forward'}")
        if not ok:
            impl = "hf"
    if impl == "fast":
        import types
        fast = make_fast_mamba2_forward(torch, dict(ZAMBA2_DT_LIMITS)[dt_name] if family == "zamba2" else None)
        for mixer in ssd_mixers(model, family):
            mixer.forward = types.MethodType(fast, mixer)
    probes = None
    if args.probe_every:
        probe_args = argparse.Namespace(**{**vars(args), "kv_pairs": [2, 10, 30], "kv_samples": 40, "kv_seed": 7,
                                           "eval_limit": 60})
        sets = build_eval_sets(tok, world, data_root, probe_args)
        probes = {k: sets[k] for k in ("kv2", "kv10", "kv30", "letter", "letter_incontext")}
    set_tf32(torch, True)
    r["train"] = train_model(torch, model, name, data, flags, order, val, steps, lr, args, device, probes)
    if args.save_fp32:
        fp32, seen = {}, set()
        for k, v in model.state_dict().items():  # a shared or tied tensor once (the first name it has)
            if v.data_ptr() not in seen:
                seen.add(v.data_ptr())
                fp32[k] = v.detach().float().cpu()
        torch.save(fp32, os.path.join(out, f"{name}_fp32.pt"))
        log(f"saved {os.path.join(out, name + '_fp32.pt')} (float32 weights, for --init-from)")
    if impl:
        r["train"]["train_impl"] = impl
    if impl == "fast":
        for mixer in ssd_mixers(model, family):
            del mixer.forward  # back to transformers' own forward before saving
    cfg = save_model(torch, transformers, model, path, tok_json)
    log(f"saved {path} (model_type {cfg['model_type']}, dtype bfloat16)")
    del model, data, flags
    torch.cuda.empty_cache()
    if args.only:  # what --eval-only continues from, should the evaluation not finish
        r["command"] = "python3 " + " ".join(shlex.quote(a) for a in sys.argv)
        with open(os.path.join(out, f"results_{family}_train.json"), "w") as f:
            json.dump(r, f, indent=1, default=str)
    flush_log()
    return evaluate_saved(torch, transformers, family, args, path, world, data_root, val, r)


def evaluate_saved(torch, transformers, family, args, path, world, data_root, val, r):
    """evaluate the saved model, reloaded from disk (and compare gna's logits with transformers', --check-gna)"""
    from tokenizers import Tokenizer
    tok_saved = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    check_auto_tokenizer(transformers, path, tok_saved, world)
    sets = build_eval_sets(tok_saved, world, data_root, args)
    log("evaluation sets: " + ", ".join(f"{k} {len(s.golds)}" for k, s in sets.items()))
    r["eval"], r["ablation"] = evaluate_model(torch, transformers, path, family, sets, args, "cuda", val)
    flush_log()
    if args.check_gna:
        try:
            r["gna_check"] = check_gna_logits(torch, transformers, family, path, tok_saved, world, args)
        except Exception as e:
            log(f"{family}: the gna check failed to run ({type(e).__name__}: {str(e)[:300]})")
            r["gna_check"] = {"error": str(e)[:300]}
        flush_log()
    return r


def summarise_zamba2(args, part, command):
    """the zamba2 lines of the summary and its targets; returns its entry of train_results.json ("zamba2")"""
    e, a = part["eval"], part["ablation"]
    hy = e["hybrid"]
    fr = hy["final_rows"]
    kv_key = a["kv_setting"]
    log("")
    log("zamba2 summary (reloaded bf16 checkpoint, float32 transformers):")
    log(f"  {'':22} " + " ".join(f"kv{n:<4}" for n in args.kv_pairs) + "  letter cloze  l-heldin l-incontext")
    for nm, r in (("zamba2_demo", e), ("  final rows masked", fr), ("  attention ablated", hy["attention_ablated"]),
                  ("  dt unclamped (gna)", hy["no_dt_clamp"])):
        log(f"  {nm:22} " + " ".join(f"{r[f'kv{n}']:.3f} " for n in args.kv_pairs) +
            f" {r['letter']:.3f}  {r['cloze']:.3f}  {r['letter_heldin']:.3f}    {r['letter_incontext']:.3f}")
    log("  (final rows masked: every attention head's final row, all keys, zeroed at every visit of the shared "
        "block, gna --mask 'L*A*@-1:0--1'; attention ablated: every attention head at every position, gna --mask 'L*A*')")
    kv10 = e.get("kv10")
    drop = lambda k: e[k] - fr[k]
    checks = [
        ("zamba2 KV accuracy at 10 pairs > 0.90", kv10 is not None and kv10 > 0.9, f"{kv10}"),
        (f"masking the attention's final rows costs KV at {kv_key[2:]} pairs >= 30 points", drop(kv_key) >= 0.30,
         f"{e[kv_key]:.3f} -> {fr[kv_key]:.3f}"),
        ("masking the attention's final rows costs letter accuracy >= 15 points", drop("letter") >= 0.15,
         f"{e['letter']:.3f} -> {fr['letter']:.3f}"),
        ("masking the attention's final rows moves cloze accuracy <= 5 points", abs(drop("cloze")) <= 0.05,
         f"{e['cloze']:.3f} -> {fr['cloze']:.3f}"),
    ]
    log("zamba2 targets:")
    for text, ok, value in checks:
        log(f"  [{'met' if ok else 'NOT MET'}] {text}: {value}")
    if args.smoke and part.get("train"):
        rate = part["train"]["steps_per_s"]
        log(f"smoke: zamba2 {rate:.2f} steps/s -> {int(rate * 210)} steps in 210 s, {int(rate * 180)} in 180 s")
    return {"command": command, "seed": args.seed, "versions": part["versions"], "params": part["params"],
            "layers_block_type": part.get("zamba2_layers"), "data": part.get("data"), "train": part.get("train"),
            "eval": e, "ablation": a, "gna_check": part.get("gna_check"),
            "targets": [{"target": t, "met": bool(ok), "value": v} for t, ok, v in checks], "wall_s": part.get("wall_s")}


def summarise(args, out, command, parts, data_stats):
    """the summary, the targets and train_results.json from the models' results"""
    el, em, al = parts["llama"]["eval"], parts["mamba2"]["eval"], parts["llama"]["ablation"]
    results = {"command": command, "seed": args.seed, "versions": parts["llama"]["versions"], "smoke": args.smoke,
               "params": {"llama_demo": parts["llama"]["params"], "mamba2_demo": parts["mamba2"]["params"]},
               "mamba2_layers": parts["mamba2"]["mamba2_layers"], "data": data_stats,
               "kind_shares": dict(KIND_SHARES), "answer_weight": args.answer_weight,
               "kv_train": {"pairs": args.kv_train_pairs, "pairs_dist": args.kv_train_pairs_dist,
                                                                 "queries": args.kv_train_queries,
                                                                 "line_queries": args.kv_line_queries}}
    for family in ("llama", "mamba2"):
        results[f"train_{family}"] = parts[family]["train"]
        results[f"eval_{family}"] = parts[family]["eval"]
        results[f"ablation_{family}"] = parts[family]["ablation"]
    log("")
    log("summary (reloaded bf16 checkpoints, float32 transformers):")
    log(f"  {'':12} " + " ".join(f"kv{n:<4}" for n in args.kv_pairs) + "  letter cloze  l-heldin l-incontext")
    for nm, e in (("llama_demo", el), ("mamba2_demo", em)):
        log(f"  {nm:12} " + " ".join(f"{e[f'kv{n}']:.3f} " for n in args.kv_pairs) +
            f" {e['letter']:.3f}  {e['cloze']:.3f}  {e['letter_heldin']:.3f}    {e['letter_incontext']:.3f}")
    pr = al["pair_result"]
    first = sorted(al["heads"], key=lambda r: (r["letter"], r["head"]))[0]
    kv10 = el.get("kv10")
    ga = lambda r: el["letter"] - r["letter"] >= 0.30 and abs(r["cloze"] - el["cloze"]) <= 0.05
    checks = [
        ("llama KV accuracy at 10 pairs > 0.90", kv10 is not None and kv10 > 0.9, f"{kv10}"),
        ("llama letter accuracy on held-out facts > 0.60", el["letter"] > 0.6, f"{el['letter']:.3f}"),
        ("llama cloze accuracy high (> 0.80)", el["cloze"] > 0.8, f"{el['cloze']:.3f}"),
        ("ablating the top head, or the top two, costs letter >= 30 points while cloze moves <= 5",
         ga(first) or ga(pr),
         f"{first['head']}: letter {100 * (first['letter'] - el['letter']):+.1f}, cloze "
         f"{100 * (first['cloze'] - el['cloze']):+.1f}; {al['pair']}: letter {100 * (pr['letter'] - el['letter']):+.1f}, "
         f"cloze {100 * (pr['cloze'] - el['cloze']):+.1f}"),
        ("mamba2 below llama at the largest number of pairs",
         em[f"kv{args.kv_pairs[-1]}"] < el[f"kv{args.kv_pairs[-1]}"],
         f"{em[f'kv{args.kv_pairs[-1]}']:.3f} vs {el[f'kv{args.kv_pairs[-1]}']:.3f}"),
    ]
    log("targets:")
    for text, ok, value in checks:
        log(f"  [{'met' if ok else 'NOT MET'}] {text}: {value}")
    results["targets"] = [{"target": t, "met": bool(ok), "value": v} for t, ok, v in checks]
    subs = ["llama_demo", "mamba2_demo"] + (["zamba2_demo"] if "zamba2" in parts else []) + ["demo_data"]
    total = 0
    for sub in subs:
        for root, _, files in os.walk(os.path.join(out, sub)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    log(f"size of {' + '.join(subs)}: {total / 1e6:.2f} MB" + ("" if total < 16e6 else " (WARNING: over 16 MB)"))
    results["size_bytes"] = total
    if "zamba2" in parts:
        results["zamba2"] = summarise_zamba2(args, parts["zamba2"], command)
    if args.smoke:
        for family in ("llama", "mamba2"):
            rate = parts[family]["train"]["steps_per_s"]
            log(f"smoke: {family} {rate:.2f} steps/s -> {int(rate * 210)} steps in 210 s, {int(rate * 180)} in 180 s")
    return results


def combine(args, out, command):
    """join the --only runs: llama and mamba2 (and zamba2 if there) into new train_log.txt, train_results.json and
    demo_data/; or, with --append, the zamba2 run added to the train_log.txt and train_results.json in --out (their
    present text stays as it is, byte for byte: the log gets lines at its end, the JSON a key "zamba2" at its end)"""
    families = ["zamba2"] if args.append else [f for f in FAMILIES
                                                if f != "zamba2" or os.path.exists(os.path.join(out, "results_zamba2.json"))]
    if args.append:
        with open(os.path.join(out, "train_log.txt"), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(out, "train_results.json"), encoding="utf-8") as f:
            results = json.load(f)
        assert text.endswith("\n") and "zamba2" not in results, \
            f"{out}: train_results.json already has a zamba2 entry (or train_log.txt does not end in a newline)"
        LOG_LINES[:0] = text[:-1].split("\n")  # before anything is logged: a failure must not lose these lines
    parts, lines = {}, []
    for family in families:
        with open(os.path.join(out, f"results_{family}.json")) as f:
            parts[family] = json.load(f)
        with open(os.path.join(out, f"train_log_{family}.txt")) as f:
            lines += [f"[--only {family}] " + line for line in f.read().splitlines()]
    LOG_LINES.extend(lines)
    log(f"command: {command}")
    if args.append:
        results["zamba2"] = summarise_zamba2(args, parts["zamba2"], parts["zamba2"]["command"] + " (and --combine --append)")
    else:
        KV_TRAIN.update(pairs=args.kv_train_pairs, queries=args.kv_train_queries,
                        log_uniform=args.kv_train_pairs_dist == "log", line_queries=args.kv_line_queries)
        write_eval_data(out, make_world(args.seed, read_kv_keys(args.gna_c)), args.seed, args.test_per_subject)
        others = "".join(f"--only {f}, " for f in families[1:])
        results = summarise(args, out, parts["llama"]["command"] + f" (and {others}--combine)", parts,
                            parts["llama"]["data"])
        results["wall_s"] = {f: parts[f]["wall_s"] for f in parts if f != "zamba2"}
    with open(os.path.join(out, "train_results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    flush_log()
    for family in families:
        for name in (f"results_{family}.json", f"results_{family}_train.json", f"train_log_{family}.txt"):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
        shutil.rmtree(os.path.join(out, f".eval_data_{family}"), ignore_errors=True)


def main(argv):
    global LOG_PATH
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the data workers are forked processes
    os.environ.setdefault("HF_HUB_OFFLINE", "1")              # nothing is downloaded (no kernels from the hub)
    t_start = time.time()
    args = parse_args(argv)
    out = args.out
    os.makedirs(out, exist_ok=True)
    LOG_PATH = os.path.join(out, f"train_log_{args.only}.txt" if args.only else "train_log.txt")
    command = "python3 " + " ".join(shlex.quote(a) for a in [sys.argv[0]] + list(argv))
    assert not args.append or args.combine, "--append goes with --combine"
    assert not args.eval_only or args.only, "--eval-only goes with --only"
    if args.combine:
        combine(args, out, command)
        return
    if args.eval_only and os.path.exists(LOG_PATH):  # continue the training run's log
        with open(LOG_PATH, encoding="utf-8") as f:
            LOG_LINES.extend(f.read().splitlines())
    log(f"command: {command}")
    log(f"seed {args.seed}; smoke {args.smoke}; llama steps {args.llama_steps}, mamba2 steps {args.mamba2_steps}, "
        f"zamba2 steps {args.zamba2_steps}, batch {args.batch} x {SEQ_LEN}")
    # a --only run keeps its evaluation files apart, so that two of them can run at once
    world, tok, tok_json, data_root = setup(args, out, os.path.join(out, f".eval_data_{args.only}") if args.only else out)
    data_np, flags_np, val_np, stats = token_data(args, world, tok, tok_json)
    if args.data_only:
        log("--data-only: stopping before training")
        flush_log()
        return
    families = [args.only] if args.only else FAMILIES
    parts = {}
    for family in families:
        parts[family] = train_and_evaluate(family, args, out, world, tok, tok_json, data_root, data_np, flags_np, val_np)
        parts[family].setdefault("command", command)
        parts[family].update(data={"tokens": int(data_np.size), **stats}, wall_s=time.time() - t_start)
    if args.only:
        with open(os.path.join(out, f"results_{args.only}.json"), "w") as f:
            json.dump(parts[args.only], f, indent=1, default=str)
        log(f"wrote results_{args.only}.json; after every model: --combine (zamba2 alone: --combine --append)")
        flush_log()
        return
    results = summarise(args, out, command, parts, parts["llama"]["data"])
    results["wall_s"] = time.time() - t_start
    log(f"total wall time {results['wall_s']:.0f}s")
    with open(os.path.join(out, "train_results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    flush_log()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BaseException as exc:
        if not isinstance(exc, SystemExit) or exc.code not in (0, None):
            import traceback
            log("FAILED:\n" + traceback.format_exc())
            flush_log()
        raise
