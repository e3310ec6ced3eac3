#!/bin/sh
# `make run`: the Gather-and-Aggregate mechanism on the bundled demo models (test/models: a small Llama,
# a Mamba-2 and a Zamba2-layout hybrid of about the same size, trained on the same synthetic data by
# weights_tools/train_demo.py), in under a minute on two cores. For each model:
#   1. gna heads finds the G&A candidates on MMLU-format questions and on KV retrieval, and ablates them
#      (on KV, with a sweep of the top heads of each score: the SSM's critical head is not its top pair);
#   2. KV retrieval (10-100 pairs), MMLU-format (letter) accuracy and cloze accuracy on the same facts
#      are measured before and after ablating the KV pair (the sweep's head for the Mamba-2) and the
#      MMLU pair; the hybrid instead gets the paper's experiment, every attention head's final row
#      masked (--mask 'L*A*@-1:0--1'), and the same mask on its SSM heads for comparison;
#   3. gna attn draws the heads' maps on a short dictionary, with token labels.
# Then a table of the models side by side, and build/demo/index.html: one self-contained page (inline
# SVG and CSS, no script, no external reference) telling the paper's story with these figures. Figures
# and JSON results go to build/demo/.
set -eu
GNA=${GNA:-./gna}
M=test/models
OUT=${OUT:-build/demo}
mkdir -p "$OUT"
MODELS="llama_demo mamba2_demo"
[ -f "$M/zamba2_demo/model.safetensors" ] && MODELS="$MODELS zamba2_demo"
# a short dictionary in the KV task's format (test/models/README.md), for maps with token labels
SHORT="Memorize the following dictionary:
apple:42
river:17
stone:88
cloud:5
tiger:63
The value of the key 'stone' is"
ATTENTION_ROWS='L*A*@-1:0--1'
SSM_ROWS='L*S*@-1:0--1'

# "acc,none" of a task in a results JSON written by gna
acc() { sed -n "s/^ *\"$2\": {[^}]*\"acc,none\": \([0-9.]*\).*/\1/p" "$1" | awk '{printf "%.3f", $1}'; }

# the top-scored gather -> aggregate pair of a heads JSON; without one (no top gather head before a top
# aggregate head), the top aggregate head
pair_of() {
    pair=$(sed -n 's/.*"gather": "\([^"]*\)", "aggregate": "\([^"]*\)".*"top_scored": true.*/\1,\2/p' "$1")
    [ -n "$pair" ] || pair=$(sed -n 's/.*{"head": "\([^"]*\)".*/\1/p' "$1" | head -1)
    echo "$pair"
}
# the sweep's most harmful head, and what it costs
swept() { grep -o "{\"head\": \"[^\"]*\", \"acc\": [^,]*, \"cost\": [-0-9.e]*" "$1" | head -1 | sed 's/{"head": "\([^"]*\)", "acc": \([^,]*\), "cost": \(.*\)/\1 \3/'; }

for model in $MODELS; do
    echo "== $model: gna heads --task mmlu (the held-out MMLU-format questions, 20 per subject)"
    $GNA heads -q -m "$M/$model" --task mmlu --data "$M/demo_data/mmlu" --limit 20 --top 3 \
        --json "$OUT/${model}_heads.json" >/dev/null
    pair_of "$OUT/${model}_heads.json" >"$OUT/${model}_pair.txt"
    echo "== $model: gna heads --task kv --sweep 3 (30 dictionaries of 20 pairs)"
    $GNA heads -q -m "$M/$model" --task kv --pairs 20 --samples 30 --top 3 --sweep 3 \
        --json "$OUT/${model}_kv_heads.json" >/dev/null
    pair_of "$OUT/${model}_kv_heads.json" >"$OUT/${model}_kv_pair.txt"
    swept "$OUT/${model}_kv_heads.json" >"$OUT/${model}_swept.txt"
    pair=$(cat "$OUT/${model}_pair.txt")
    kv_mask=$(cat "$OUT/${model}_kv_pair.txt")
    [ "$model" = mamba2_demo ] && kv_mask=$(cut -d' ' -f1 "$OUT/${model}_swept.txt") # the scores miss it
    [ "$model" = zamba2_demo ] && kv_mask=$ATTENTION_ROWS && pair=$ATTENTION_ROWS      # the paper's experiment
    echo "$kv_mask" >"$OUT/${model}_kv_mask.txt"
    echo "$pair" >"$OUT/${model}_mmlu_mask.txt"
    echo "== $model: KV, MMLU format and cloze, before and after --mask $kv_mask (KV) and $pair (MMLU, cloze)"
    $GNA kv -q -m "$M/$model" --pairs 10,30,50,80,100 --samples 30 --mask "$kv_mask" \
        --json "$OUT/${model}_kv.json" --svg "$OUT/${model}_kv.svg" >/dev/null
    $GNA mmlu -q -m "$M/$model" --data "$M/demo_data/mmlu" --json "$OUT/${model}_mmlu.json" >/dev/null
    $GNA mmlu -q -m "$M/$model" --data "$M/demo_data/mmlu" --mask "$pair" --json "$OUT/${model}_mmlu_ablated.json" >/dev/null
    $GNA mc -q -m "$M/$model" --data "$M/demo_data/cloze.jsonl" --json "$OUT/${model}_cloze.json" >/dev/null
    $GNA mc -q -m "$M/$model" --data "$M/demo_data/cloze.jsonl" --mask "$pair" --json "$OUT/${model}_cloze_ablated.json" >/dev/null
    # the maps on the short dictionary: the KV pair, and for the SSMs the sweep's most harmful head too
    heads=$(cat "$OUT/${model}_kv_pair.txt")
    [ "$model" != llama_demo ] && heads="$(cut -d' ' -f1 "$OUT/${model}_swept.txt"),$heads"
    $GNA attn -q -m "$M/$model" -p "$SHORT" --heads "$heads" -o "$OUT/${model}_short.npy" --svg "$OUT/${model}_short.svg"
    echo "$heads" >"$OUT/${model}_short_heads.txt"
done
if [ -f "$M/zamba2_demo/model.safetensors" ]; then # the same final-row mask on the hybrid's SSM heads
    $GNA kv -q -m "$M/zamba2_demo" --pairs 10,30,50,80,100 --samples 30 --mask "$SSM_ROWS" --json "$OUT/zamba2_demo_kv_ssm.json" >/dev/null
    $GNA mmlu -q -m "$M/zamba2_demo" --data "$M/demo_data/mmlu" --mask "$SSM_ROWS" --json "$OUT/zamba2_demo_mmlu_ssm.json" >/dev/null
    $GNA mc -q -m "$M/zamba2_demo" --data "$M/demo_data/cloze.jsonl" --mask "$SSM_ROWS" --json "$OUT/zamba2_demo_cloze_ssm.json" >/dev/null
fi

# -- the table
table() {
    printf '%-26s' "accuracy, before -> after"
    for model in $MODELS; do printf ' %-21s' "$model"; done
    printf '\n%-26s' "masked for KV"
    for model in $MODELS; do printf ' %-21s' "$(cat "$OUT/${model}_kv_mask.txt")"; done
    echo
    for pairs in 10 30 50 80 100; do
        printf '%-26s' "KV retrieval, $pairs pairs"
        for model in $MODELS; do
            printf ' %6s -> %-11s' "$(acc "$OUT/${model}_kv.json" kv_pairs_$pairs)" "$(acc "$OUT/${model}_kv.json" kv_pairs_${pairs}_masked)"
        done
        echo
    done
    printf '%-26s' "masked for MMLU, cloze"
    for model in $MODELS; do printf ' %-21s' "$(cat "$OUT/${model}_mmlu_mask.txt")"; done
    echo
    for task in "MMLU format (letters):mmlu:mmlu" "cloze (same facts):cloze:cloze"; do
        label=${task%%:*} rest=${task#*:}
        printf '%-26s' "$label"
        for model in $MODELS; do
            printf ' %6s -> %-11s' "$(acc "$OUT/${model}_${rest%%:*}.json" "${rest#*:}")" "$(acc "$OUT/${model}_${rest%%:*}_ablated.json" "${rest#*:}")"
        done
        echo
    done
}
echo
table | tee "$OUT/table.txt"

# -- the page
esc() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g'; }
figure() { # id, svg file, caption (HTML), the command that made it
    printf '<figure id="%s">\n' "$1"
    sed '/^<?xml/d' "$2"
    printf '<figcaption>%s<br/><code>%s</code></figcaption>\n</figure>\n' "$3" "$(printf '%s' "$4" | esc)"
}
row() { # label, results file, task, masked results file, task
    printf '<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$1" "$(acc "$2" "$3")" "$(acc "$4" "$5")"
}
L=$OUT/llama_demo S=$OUT/mamba2_demo
llama_pair=$(cat "${L}_kv_pair.txt")
ssm_head=$(cut -d' ' -f1 "${S}_swept.txt") ssm_cost=$(awk '{printf "%.0f", 100 * $2}' "${S}_swept.txt")
mmlu_section=5
[ -f "$M/zamba2_demo/model.safetensors" ] && mmlu_section=6
{
    cat <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>Gather and Aggregate, on three small models</title>
<style>
body { font-family: Georgia, serif; max-width: 60em; margin: 2em auto; padding: 0 1em; line-height: 1.45; color: #222; }
h1, h2 { font-family: Helvetica, Arial, sans-serif; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
figure { margin: 1.5em 0; overflow-x: auto; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; } code, pre { font-family: Menlo, Consolas, monospace; font-size: 0.85em; }
pre { background: #f5f5f5; padding: 0.8em; overflow-x: auto; } table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.7em; text-align: right; } td:first-child, th:first-child { text-align: left; }
</style></head><body>
<h1>Gather and Aggregate, on three small models</h1>
<p>Bick, Xing and Gu (ICML 2025, arXiv 2504.18574) find that Transformers and state-space models retrieve from
their context through the same two-step mechanism: a <b>gather</b> head summarises each segment of the context
(a dictionary line, an answer option) into one of its tokens, and an <b>aggregate</b> head at the final position
reads the summary of the segment that is asked for. Remove the pair and retrieval collapses; SSMs implement it
less sharply, which is where they lose to Transformers; a hybrid keeps it in its attention layers. This page
shows each step on the demo models that ship with gna (<code>test/models</code>: about 2M parameters each, trained
on the same synthetic data), as <code>make run</code> measured them on this machine with the <code>gna</code> program.</p>
<h2 id="task">1. The task</h2>
<p>KV retrieval, in the paper's format: a dictionary of keys and two-digit values, then one key asked. The model
must find the queried line and copy its value; the answer is scored as the most likely of the 100 values.</p>
<pre>$(printf '%s' "$SHORT" | esc)</pre>
<h2 id="llama">2. The Llama's gather and aggregate heads</h2>
<p><code>gna heads --task kv</code> scores every head from its attention maps on 30 dictionaries and ablates the
candidates. Its top-scored pair is <b>$llama_pair</b>: the gather head reads one token back (each value
token takes in its key), and the aggregate head, from the final position, puts its attention on the asked line.</p>
EOF
    figure llama-maps "${L}_short.svg" "The Llama's gather and aggregate heads on the short dictionary (rows: queries; columns: keys; darker: more attention)." \
        "gna attn -m test/models/llama_demo -p \"\$SHORT\" --heads $(cat "${L}_short_heads.txt") --svg llama_demo_short.svg"
    cat <<EOF
<h2 id="ablation">3. Ablating the pair</h2>
<p>Zeroing the two heads' outputs (the paper's ablation: their slice of the output projection's input) takes the
Llama's KV accuracy to near zero at every dictionary size:</p>
EOF
    figure llama-curve "${L}_kv.svg" "The Llama's KV accuracy against the number of pairs, as it is and with $llama_pair ablated (30 dictionaries per size)." \
        "gna kv -m test/models/llama_demo --pairs 10,30,50,80,100 --samples 30 --mask $(cat "${L}_kv_mask.txt") --svg llama_demo_kv.svg"
    cat <<EOF
<h2 id="ssm">4. The Mamba-2: smoother maps, weaker retrieval</h2>
<p>An SSM head has no attention matrix, but its output is still a weighted sum over the past: its implicit
attention (Dao and Gu 2024; Ali, Zimerman and Wolf 2024), which gna computes for every head. The Mamba-2's maps are
smooth, and the attention-pattern scores pick a pair ($(cat "${S}_kv_pair.txt")) that costs nothing when ablated. The sweep
(<code>--sweep</code>, every top head ablated alone) finds the head that matters: <b>$ssm_head</b>, whose removal costs
$ssm_cost points of KV accuracy at 20 pairs.</p>
EOF
    figure ssm-maps "${S}_short.svg" "The Mamba-2's implicit attention on the short dictionary: the sweep's most harmful head $ssm_head, then the top-scored pair. Red: negative entries." \
        "gna attn -m test/models/mamba2_demo -p \"\$SHORT\" --heads $(cat "${S}_short_heads.txt") --svg mamba2_demo_short.svg"
    figure ssm-curve "${S}_kv.svg" "The Mamba-2's KV accuracy against the number of pairs, as it is and with $ssm_head ablated. It retrieves worse than the Llama as the dictionary grows." \
        "gna kv -m test/models/mamba2_demo --pairs 10,30,50,80,100 --samples 30 --mask $ssm_head --svg mamba2_demo_kv.svg"
    printf '<table><tr><th>the sweep (KV, 20 pairs), most harmful first</th><th>accuracy without it</th><th>cost</th></tr>\n'
    grep -o '{"head": "[^"]*", "acc": [^,]*, "cost": [-0-9.e]*' "${S}_kv_heads.json" | head -5 | tr -d '{",' |
        awk '{printf "<tr><td>%s</td><td>%.3f</td><td>%.3f</td></tr>\n", $2, $4, $6}'
    printf '</table>\n<p><code>gna heads -m test/models/mamba2_demo --task kv --pairs 20 --samples 30 --top 3 --sweep 3 --json mamba2_demo_kv_heads.json</code></p>\n'
    if [ -f "$M/zamba2_demo/model.safetensors" ]; then
        Z=$OUT/zamba2_demo
        cat <<EOF
<h2 id="hybrid">5. The hybrid: the attention carries the mechanism</h2>
<p>The paper's strongest result is on Zamba2-7B, Mamba-2 layers with a shared attention block: masking the final
row of every attention head (the final position may attend to nothing) takes its MMLU accuracy from 64.3% to 34.9%.
The demo hybrid (<code>test/models/zamba2_demo</code>, the same layout) gets the same experiment, and the same mask on
its SSM heads' implicit attention for comparison:</p>
<table><tr><th>accuracy</th><th>as it is</th><th>attention final rows masked</th><th>SSM final rows masked</th></tr>
EOF
        for pairs in 10 30 50 80 100; do
            printf '<tr><td>KV retrieval, %s pairs</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$pairs" "$(acc "${Z}_kv.json" kv_pairs_$pairs)" \
                "$(acc "${Z}_kv.json" kv_pairs_${pairs}_masked)" "$(acc "${Z}_kv_ssm.json" kv_pairs_${pairs}_masked)"
        done
        printf '<tr><td>MMLU format (letters)</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$(acc "${Z}_mmlu.json" mmlu)" \
            "$(acc "${Z}_mmlu_ablated.json" mmlu)" "$(acc "${Z}_mmlu_ssm.json" mmlu)"
        printf '<tr><td>cloze (same facts)</td><td>%s</td><td>%s</td><td>%s</td></tr>\n</table>\n' "$(acc "${Z}_cloze.json" cloze)" \
            "$(acc "${Z}_cloze_ablated.json" cloze)" "$(acc "${Z}_cloze_ssm.json" cloze)"
        printf '<p><code>gna kv -m test/models/zamba2_demo --pairs 10,30,50,80,100 --samples 30 --mask %s</code> (and <code>%s</code>); <code>gna mmlu</code> and <code>gna mc</code> with the same masks.</p>\n' \
            "$(printf '%s' "'$ATTENTION_ROWS'" | esc)" "$(printf '%s' "'$SSM_ROWS'" | esc)"
        figure hybrid-curve "${Z}_kv.svg" "The hybrid's KV accuracy against the number of pairs, as it is and with every attention head's final row masked." \
            "gna kv -m test/models/zamba2_demo --pairs 10,30,50,80,100 --samples 30 --mask '$ATTENTION_ROWS' --svg zamba2_demo_kv.svg"
        figure hybrid-maps "${Z}_short.svg" "The hybrid's heads on the short dictionary: the sweep's most harmful head, then the top-scored pair." \
            "gna attn -m test/models/zamba2_demo -p \"\$SHORT\" --heads $(cat "${Z}_short_heads.txt") --svg zamba2_demo_short.svg"
    fi
    cat <<EOF
<h2 id="mmlu">$mmlu_section. MMLU format against cloze</h2>
<p>The paper's MMLU finding: in the letter format (question, options A-D, <code>Answer:</code>) the model must find
the option that holds the answer it knows and emit its letter, a retrieval from context; in the cloze format it
only has to produce the answer. Ablating a few heads destroys the first and leaves the second. The demo's questions
are about made-up countries (<code>test/models/demo_data</code>); <code>gna heads --task mmlu</code> picks the pair.</p>
<table><tr><th>model: heads ablated</th><th>letters, before</th><th>after</th><th>cloze, before</th><th>after</th></tr>
EOF
    for model in $MODELS; do
        printf '<tr><td>%s: %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$model" "$(esc <"$OUT/${model}_mmlu_mask.txt")" \
            "$(acc "$OUT/${model}_mmlu.json" mmlu)" "$(acc "$OUT/${model}_mmlu_ablated.json" mmlu)" \
            "$(acc "$OUT/${model}_cloze.json" cloze)" "$(acc "$OUT/${model}_cloze_ablated.json" cloze)"
    done
    cat <<EOF
</table>
<p><code>gna mmlu -m DIR --data test/models/demo_data/mmlu --mask PAIR</code>; <code>gna mc -m DIR --data test/models/demo_data/cloze.jsonl --mask PAIR</code>.
In the Llama the damage comes almost all from one early head that reads the previous token, not from an aggregate
head reading the gold option from <code>Answer:</code>: the demo models learnt the letter skill, but not by the
paper's circuit (test/models/README.md says what was tried).</p>
<h2 id="summary">Summary</h2>
<pre>$(esc <"$OUT/table.txt")</pre>
<p>Made by <code>make run</code> (test/demo.sh); every number above is in the JSON files beside this page.</p>
</body></html>
EOF
} >"$OUT/index.html.part"
mv "$OUT/index.html.part" "$OUT/index.html"
echo
echo "page: $OUT/index.html; figures and JSON beside it"
