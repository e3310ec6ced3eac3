#!/bin/sh
# `make run`: the Gather-and-Aggregate mechanism on the two bundled demo models (test/models: a small
# Llama and a Mamba-2 of the same size, trained on the same synthetic data by
# weights_tools/train_demo.py), in about a minute on two cores. For each model:
#   1. gna heads finds the G&A candidates on MMLU-format questions and on KV retrieval, and ablates them;
#   2. each task's top-scored gather -> aggregate pair is ablated while KV retrieval (10-100 pairs),
#      MMLU-format (letter) accuracy and cloze accuracy on the same facts are measured, before and after
#      (the MMLU pair for the letter and cloze rows, the KV pair for the KV rows).
# Then a table of both models side by side: before -> after, and the Transformer - SSM gap.
# Figures and JSON results go to build/demo/.
set -eu
GNA=${GNA:-./gna}
M=test/models
OUT=build/demo
mkdir -p "$OUT"

# "acc,none" of a task in a results JSON written by gna
acc() { sed -n "s/^ *\"$2\": {[^}]*\"acc,none\": \([0-9.]*\).*/\1/p" "$1" | awk '{printf "%.3f", $1}'; }

# the top-scored gather -> aggregate pair of a heads JSON; without one (no top gather head before a top
# aggregate head), the top aggregate head
pair_of() {
    pair=$(sed -n 's/.*"gather": "\([^"]*\)", "aggregate": "\([^"]*\)".*"top_scored": true.*/\1,\2/p' "$1")
    [ -n "$pair" ] || pair=$(sed -n 's/.*{"head": "\([^"]*\)".*/\1/p' "$1" | head -1)
    echo "$pair"
}

for model in llama_demo mamba2_demo; do
    echo "== $model: gna heads --task mmlu (the held-out MMLU-format questions, 20 per subject)"
    $GNA heads -q -m "$M/$model" --task mmlu --data "$M/demo_data/mmlu" --limit 20 --top 3 \
        --json "$OUT/${model}_heads.json" --svg "$OUT/${model}_heads.svg"
    pair_of "$OUT/${model}_heads.json" >"$OUT/${model}_pair.txt"
    echo "== $model: gna heads --task kv (30 dictionaries of 20 pairs)"
    $GNA heads -q -m "$M/$model" --task kv --pairs 20 --samples 30 --top 3 \
        --json "$OUT/${model}_kv_heads.json" --svg "$OUT/${model}_kv_heads.svg"
    pair_of "$OUT/${model}_kv_heads.json" >"$OUT/${model}_kv_pair.txt"
    pair=$(cat "$OUT/${model}_pair.txt")
    kv_pair=$(cat "$OUT/${model}_kv_pair.txt")
    echo "== $model: ablating $kv_pair for KV retrieval, $pair for the MMLU format and cloze"
    $GNA kv -q -m "$M/$model" --pairs 10,30,50,80,100 --samples 30 --mask "$kv_pair" \
        --json "$OUT/${model}_kv.json" --svg "$OUT/${model}_kv.svg" >/dev/null
    $GNA mmlu -q -m "$M/$model" --data "$M/demo_data/mmlu" --json "$OUT/${model}_mmlu.json" >/dev/null
    $GNA mmlu -q -m "$M/$model" --data "$M/demo_data/mmlu" --mask "$pair" --json "$OUT/${model}_mmlu_ablated.json" >/dev/null
    $GNA mc -q -m "$M/$model" --data "$M/demo_data/cloze.jsonl" --json "$OUT/${model}_cloze.json" >/dev/null
    $GNA mc -q -m "$M/$model" --data "$M/demo_data/cloze.jsonl" --mask "$pair" --json "$OUT/${model}_cloze_ablated.json" >/dev/null
done

row() { # label, then for each model: before after
    printf '%-26s %6s -> %-6s      %6s -> %-6s   %+.3f\n' "$1" "$2" "$3" "$4" "$5" "$(echo "$2 $4" | awk '{print $1 - $2}')"
}
L=$OUT/llama_demo
S=$OUT/mamba2_demo
echo
printf '%-26s %-23s %-20s %s\n' "accuracy, before -> after" "llama_demo" "mamba2_demo" "gap (llama - mamba2, before)"
printf '%-26s %-23s %-20s\n' "ablated for KV" "$(cat "${L}_kv_pair.txt")" "$(cat "${S}_kv_pair.txt")"
for pairs in 10 30 50 80 100; do
    row "KV retrieval, $pairs pairs" "$(acc "${L}_kv.json" kv_pairs_$pairs)" "$(acc "${L}_kv.json" kv_pairs_${pairs}_masked)" \
        "$(acc "${S}_kv.json" kv_pairs_$pairs)" "$(acc "${S}_kv.json" kv_pairs_${pairs}_masked)"
done
printf '%-26s %-23s %-20s\n' "ablated for MMLU, cloze" "$(cat "${L}_pair.txt")" "$(cat "${S}_pair.txt")"
row "MMLU format (letters)" "$(acc "${L}_mmlu.json" mmlu)" "$(acc "${L}_mmlu_ablated.json" mmlu)" \
    "$(acc "${S}_mmlu.json" mmlu)" "$(acc "${S}_mmlu_ablated.json" mmlu)"
row "cloze (same facts)" "$(acc "${L}_cloze.json" cloze)" "$(acc "${L}_cloze_ablated.json" cloze)" \
    "$(acc "${S}_cloze.json" cloze)" "$(acc "${S}_cloze_ablated.json" cloze)"
echo
echo "figures: $OUT/*_heads.svg (the pair's attention maps), $OUT/*_kv.svg (KV accuracy against pairs); JSON beside them"
