#!/bin/sh
# Tokenizer throughput (measured, not asserted): `make bench-tokenize`.
#   test/bench_tokenize.sh GNA
# Tokenizes about 4 MB of text (this repository's README, LICENSE, corpus and gna.c, repeated) with each
# tokenizer.json at hand, and prints MB/s of text after loading (the load, timed on a one-word text,
# is taken off).
set -u
GNA=${1:-./gna}
cd "$(dirname "$0")/.." || exit 1
sh test/fetch_tokenizers.sh || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/text.txt"
while [ "$(wc -c <"$TMP/text.txt")" -lt 4000000 ]; do
    cat README.md LICENSE test/tokenizer_corpus.txt gna.c >>"$TMP/text.txt"
done
bytes=$(wc -c <"$TMP/text.txt")
now() { date +%s.%N; }
for json in test/.cache/llama3_1/tokenizer.json test/.cache/llama2/tokenizer.json test/fixtures/tokenizers/*/tokenizer.json; do
    [ -f "$json" ] || continue
    t0=$(now)
    "$GNA" tokenize --tokenizer "$json" -p x >/dev/null || exit 1
    t1=$(now)
    "$GNA" tokenize --tokenizer "$json" -f "$TMP/text.txt" >"$TMP/ids.txt" || exit 1
    t2=$(now)
    awk -v b="$bytes" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v ids="$(wc -w <"$TMP/ids.txt")" -v name="$json" \
        'BEGIN { load = t1 - t0; run = t2 - t1 - load; if (run <= 0) run = 1e-9;
                 printf "%-45s %.1f MB, %d ids: %.2f s (load %.2f s): %.1f MB/s\n", name, b / 1e6, ids, t2 - t1, load, b / 1e6 / run }'
done
