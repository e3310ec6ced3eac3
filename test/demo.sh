#!/bin/sh
# `make run`: the Gather-and-Aggregate mechanism on the bundled demo models (test/models: a small Llama,
# a Mamba-2 and, once it is there, a Zamba2-layout hybrid of about the same size, trained on the same
# synthetic data by weights_tools/demo/train_demo.py), in just under a minute on two cores (the models run side
# by side). For each model:
#   1. gna heads finds the G&A candidates on KV retrieval, with a sweep of the top heads of each score
#      (the SSM's critical head is not its top-scored pair), and, for the Llama and the Mamba-2, on
#      MMLU-format questions;
#   2. KV retrieval (10-100 pairs), MMLU-format (letter) accuracy and cloze accuracy on the same facts
#      are measured before and after ablating the KV pair (the sweep's head for the Mamba-2) and the
#      MMLU pair; the hybrid instead gets the paper's experiment, every attention head's final row
#      masked (--mask 'L*A*@-1:0--1'), and the same mask on its SSM heads for comparison, and a sweep
#      of its attention heads on the letter questions, whose top head is ablated alone;
#   3. gna attn draws the heads' maps on a short dictionary, with token labels;
#   4. a second Llama, trained on letter questions of 2 to 8 options (llama_mmlu_demo): its top aggregate
#      head on letter questions about facts it was trained on, ablated alone and with the next-ranked one,
#      and the final rows of its layer and the later ones masked, against cloze on the same facts;
#   5. the rebuttal's refined mask: only the final row's entries on the option letters (:letters) of
#      every Llama head, of the second Llama's top two aggregate heads and of every hybrid attention head,
#      against their whole final rows.
# Then a table of the models side by side, and build/demo/index.html: one self-contained page (inline
# SVG and CSS, no script, no external reference) that tells the paper's story with these figures, each
# with the gna command that made it. The script is a thin client in sh, sed and awk: every measured number
# on the page is one that gna wrote in its JSON (accuracies, head scores, gna attn --json's map
# statistics), only formatted, and the others are the settings it passes to gna; the script compares
# numbers to choose its words, and draws the charts. Figures, JSON
# results and every command run (commands.txt) go to build/demo/.
#   GNA             the gna program (default ./gna)
#   GNA_DEMO_OUT    the output folder (default build/demo; make test's check of the page uses its own)
#   GNA_DEMO_MODELS the models' folder (default test/models): llama_demo, mamba2_demo, demo_data and,
#                   when it holds a model.safetensors, zamba2_demo
set -eu
LC_ALL=C # bytes in, bytes out (token labels are UTF-8), and "0.5" in numbers
export LC_ALL
GNA=${GNA:-./gna}
M=${GNA_DEMO_MODELS:-test/models}
OUT=${GNA_DEMO_OUT:-build/demo}
mkdir -p "$OUT"
rm -f "$OUT/commands.txt" "$OUT"/*_critical.* "$OUT"/zamba2_demo_*
MODELS="llama_demo mamba2_demo"
HYBRID=""
if [ -f "$M/zamba2_demo/model.safetensors" ]; then HYBRID=zamba2_demo; MODELS="$MODELS zamba2_demo"; fi
# gna's threads for each command: the jobs below run side by side (a job per model, and one for the hybrid's SSM
# rows), so each gets its share of the cores; gna's results are bitwise the same for any --threads, and on 2 cores
# four jobs of 2 threads each took 10 s longer than of 1
CORES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
# shellcheck disable=SC2086 # the words are the jobs
THREADS=$(set -- $MODELS $HYBRID; echo $((CORES / $#)))
[ "$THREADS" -ge 1 ] || THREADS=1
[ "$THREADS" -le 64 ] || THREADS=64 # gna's most (MAX_THREADS)
# The hybrid was trained with dt clamped at time_step_min, as transformers 5.x computes it
# (weights_tools/demo/train_demo.py), so gna runs it that way.
ZAMBA2_DT=--dt-min-clamp
ZAMBA2_N=20 # dictionaries of each size for its KV runs (it is the slowest of the three)
# a short dictionary in the KV task's format (test/models/README.md), for maps with token labels;
# the key asked is on the dictionary's GOLD_LINE-th line
SHORT="Memorize the following dictionary:
apple:42
river:17
stone:88
cloud:5
tiger:63
The value of the key 'stone' is"
GOLD_LINE=3 GOLD_VALUE=88
ATTENTION_ROWS='L*A*@-1:0--1'
SSM_ROWS='L*S*@-1:0--1'
# the rebuttal's refined mask: only the entries from the final position to the option letters (gna's
# named positions), against the whole final row; the Llama's every head, the hybrid's attention heads
LLAMA_ROWS='L*H*@-1:0--1' LLAMA_LETTERS='L*H*@-1:letters' ATTENTION_LETTERS='L*A*@-1:letters'
# the Llama trained on letter questions of 2-8 options, where no head per letter can answer (section 7), and
# its questions: facts it was trained on, with options drawn afresh (the letter is only in the prompt)
AGG=llama_mmlu_demo KNOWN=$M/demo_data/mmlu_known KNOWN_CLOZE=$M/demo_data/cloze_known.jsonl

# -- running gna, and keeping each command line as the page shows it
# a word quoted for the shell; the short prompt as "$SHORT", which the page defines
quote() {
    case $1 in
    "$SHORT") printf '"$SHORT"' ;;
    "$QUESTION") printf '"$QUESTION"' ;;
    '' | *[!A-Za-z0-9_./,=:@%+-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
    *) printf '%s' "$1" ;;
    esac
}
g() { # name, gna's arguments: runs gna; the command line goes to commands.txt under that name
    name=$1
    shift
    set -- "$@" --threads "$THREADS"
    line=$GNA
    for a in "$@"; do line="$line $(quote "$a")"; done
    printf '%s\t%s\n' "$name" "$line" >>"$OUT/commands.txt"
    "$GNA" "$@"
}
cmd() { for n in "$@"; do awk -F '\t' -v n="$n" '$1 == n { print $2 }' "$OUT/commands.txt"; done; }

# the first question in $KNOWN, as gna mmlu asks it at 0 shots (its log's first request: the context, whose words
# hold no quote or backslash, so its only JSON escape is \n), for its aggregate head's map, under whose figure its
# command goes; GOLD: its letter
QUESTION="" # no word is quoted as "$QUESTION" before it is made
rm -f "$OUT/${AGG}_question.jsonl"
g ${AGG}_map mmlu -q -m "$M/$AGG" --data "$KNOWN" --limit 1 --log "$OUT/${AGG}_question.jsonl" >/dev/null
FIRST=$(sed -n '/"arguments"/{p;q;}' "$OUT/${AGG}_question.jsonl")
QUESTION=$(printf '%b' "$(printf '%s' "$FIRST" | sed -n 's/.*"arguments": \[\["\([^"\\]*\(\\n[^"\\]*\)*\)", .*/\1/p')")
GOLD=$(printf '%s' "$FIRST" | sed -n 's/.*"target": \([0-7]\),.*/\1/p')
if [ -z "$QUESTION" ] || [ -z "$GOLD" ]; then echo "demo.sh: no plain first question in $OUT/${AGG}_question.jsonl" >&2; exit 1; fi
GOLD=$(echo ABCDEFGH | cut -c $((GOLD + 1)))

# -- reading gna's JSON
# "acc,none" of a task in a results JSON
acc() { sed -n "s/^ *\"$2\": {[^}]*\"acc,none\": \([0-9.]*\).*/\1/p" "$1" | awk '{printf "%.3f", $1}'; }
# the top-scored gather -> aggregate pair of a heads JSON; without one (no top gather head before a top
# aggregate head), the top aggregate head
pair_of() {
    pair=$(sed -n 's/.*"gather": "\([^"]*\)", "aggregate": "\([^"]*\)".*"top_scored": true.*/\1,\2/p' "$1")
    [ -n "$pair" ] || pair=$(sed -n 's/.*{"head": "\([^"]*\)".*/\1/p' "$1" | head -1)
    echo "$pair"
}
# the sweep's heads, most harmful first: "head acc cost" lines (none without a sweep)
sweep_of() {
    sed -n '/"sweep"/,$p' "$1" | sed -n 's/.*{"head": "\([^"]*\)", "acc": \([-0-9.e]*\), "cost": \([-0-9.e]*\).*/\1 \2 \3/p'
}
# the two heads a heads JSON ranks first (by aggregate score), as a mask: "A,B"
top_two() { sed -n 's/.*{"head": "\([^"]*\)", "aggregate".*/\1/p' "$1" | head -2 | tr '\n' ',' | sed 's/,$//'; }
# a sweep's most harmful head; and an HTML table of its five most harmful heads (title of the first column)
top_head() { sed -n '1s/ .*//p' "$1"; }
sweep_table() {
    printf '<table><tr><th>%s</th><th>accuracy</th><th>cost</th></tr>\n' "$1"
    head -5 "$2" | awk '{ printf "<tr><td>%s</td><td>%.3f</td><td>%.3f</td></tr>\n", $1, $2, $3 }'
    printf '</table>'
}
# a score of a head in a heads JSON (aggregate, gather, gold_mass, ablated_accuracy), 2 decimals
score() { sed -n "s/.*{\"head\": \"$2\", .*\"$3\": \([-0-9.e]*\).*/\1/p" "$1" | head -1 | awk '{printf "%.2f", $1}' | unsign; }
# the best aggregate score of a heads JSON, 2 decimals, and its head: gna lists the heads by it
best() { sed -n 's/.*{"head": "\([^"]*\)", "aggregate": \([-0-9.e]*\).*/\2 \1/p' "$1" | head -1 | awk '{ printf "%.2f %s", $1, $2 }' | unsign; }
unsign() { sed 's/^-\(0\.0*\)$/\1/; s/^-\(0\.0*\) /\1 /; s/^-0$/0/; s/^-0 /0 /'; } # -0.00 is 0.00
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }
# the accuracy a heads JSON measured as it is, and with a pair (gather,aggregate) ablated, 2 decimals
base_acc() { sed -n 's/^  "accuracy": \([-0-9.e]*\).*/\1/p' "$1" | awk '{printf "%.2f", $1}'; }
pair_acc() {
    sed -n "s/.*{\"gather\": \"${2%%,*}\", \"aggregate\": \"${2#*,}\", \"ablated_accuracy\": \([-0-9.e]*\).*/\1/p" "$1" |
        head -1 | awk '{printf "%.2f", $1}'
}

# -- the runs: each model's in a job of its own, and the hybrid's SSM-row masks in another, side by side
# (on two cores about two thirds of the time of one after the other; gna's numbers do not depend on it)
model_runs() { # model
    model=$1 dir=$M/$1
    # n dictionaries of each size. The hybrid's masks are the paper's experiment, so its heads are only
    # found on KV, for its maps; it runs three times slower than the others, so it gets fewer candidates
    # and dictionaries (make run stays well under a minute on two cores)
    dt="" top=3 n=30
    [ "$model" != zamba2_demo ] || dt=$ZAMBA2_DT top=2 n=$ZAMBA2_N
    sweep="--sweep $top"
    if [ "$model" != zamba2_demo ]; then
        echo "== $model: gna heads --task mmlu (the held-out MMLU-format questions, 20 per subject)"
        g ${model}_heads heads -q -m "$dir" --task mmlu --data "$M/demo_data/mmlu" --limit 20 --top 3 \
            --json "$OUT/${model}_heads.json" >/dev/null
        pair_of "$OUT/${model}_heads.json" >"$OUT/${model}_pair.txt"
    fi
    echo "== $model: gna heads --task kv --top $top${sweep:+ $sweep} ($n dictionaries of 20 pairs)"
    # shellcheck disable=SC2086 # $dt and $sweep are words on purpose
    g ${model}_kv_heads heads -q -m "$dir" $dt --task kv --pairs 20 --samples $n --top $top $sweep \
        --json "$OUT/${model}_kv_heads.json" >/dev/null
    pair_of "$OUT/${model}_kv_heads.json" >"$OUT/${model}_kv_pair.txt"
    sweep_of "$OUT/${model}_kv_heads.json" >"$OUT/${model}_sweep.txt"
    kv_pair=$(cat "$OUT/${model}_kv_pair.txt")
    critical=$(top_head "$OUT/${model}_sweep.txt")
    case $model in
    llama_demo) kv_mask=$kv_pair mask=$(cat "$OUT/${model}_pair.txt") ;;
    mamba2_demo) kv_mask=$critical mask=$(cat "$OUT/${model}_pair.txt") ;; # the scores miss it
    zamba2_demo) kv_mask=$ATTENTION_ROWS mask=$ATTENTION_ROWS ;;                         # the paper's experiment
    esac
    echo "$kv_mask" >"$OUT/${model}_kv_mask.txt"
    echo "$mask" >"$OUT/${model}_mmlu_mask.txt"
    echo "== $model: KV, MMLU format and cloze, before and after --mask $kv_mask (KV) and $mask (MMLU, cloze)"
    # shellcheck disable=SC2086
    {
        g ${model}_kv kv -q -m "$dir" $dt --pairs 10,30,50,80,100 --samples $n --mask "$kv_mask" \
            --json "$OUT/${model}_kv.json" --svg "$OUT/${model}_kv.svg"
        # command names: _base (as it is) and _ablated, so each figure lists the commands of its own bars
        g ${model}_base mmlu -q -m "$dir" $dt --data "$M/demo_data/mmlu" --json "$OUT/${model}_mmlu.json"
        g ${model}_base mc -q -m "$dir" $dt --data "$M/demo_data/cloze.jsonl" --json "$OUT/${model}_cloze.json"
        g ${model}_ablated mmlu -q -m "$dir" $dt --data "$M/demo_data/mmlu" --mask "$mask" --json "$OUT/${model}_mmlu_ablated.json"
        g ${model}_ablated mc -q -m "$dir" $dt --data "$M/demo_data/cloze.jsonl" --mask "$mask" --json "$OUT/${model}_cloze_ablated.json"
        if [ "$model" = llama_demo ]; then # the refined mask (section 8): letter entries only, and whole final rows
            for m in "rows:$LLAMA_ROWS" "letters:$LLAMA_LETTERS"; do
                g ${model}_refined mmlu -q -m "$dir" --data "$M/demo_data/mmlu" --mask "${m#*:}" --json "$OUT/${model}_mmlu_${m%%:*}.json"
                g ${model}_refined mc -q -m "$dir" --data "$M/demo_data/cloze.jsonl" --mask "${m#*:}" --json "$OUT/${model}_cloze_${m%%:*}.json"
            done
            if [ -n "$HYBRID" ]; then # the hybrid's, here: the Llama's job is the shortest of the jobs side by side
                g ${HYBRID}_refined mmlu -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/mmlu" --mask "$ATTENTION_LETTERS" \
                    --json "$OUT/${HYBRID}_mmlu_letters.json"
                g ${HYBRID}_refined mc -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/cloze.jsonl" --mask "$ATTENTION_LETTERS" \
                    --json "$OUT/${HYBRID}_cloze_letters.json"
            fi
        fi
        # the maps on the short dictionary (milliseconds): the KV pair, and the sweep's most harmful head
        g ${model}_short attn -q -m "$dir" $dt -p "$SHORT" --heads "$kv_pair" -o "$OUT/${model}_short.npy" --svg "$OUT/${model}_short.svg" \
            --json "$OUT/${model}_short.json"
        if [ "$model" != llama_demo ]; then
            g ${model}_critical attn -q -m "$dir" $dt -p "$SHORT" --heads "$critical" -o "$OUT/${model}_critical.npy" \
                --svg "$OUT/${model}_critical.svg" --json "$OUT/${model}_critical.json"
        fi
    } >/dev/null
    [ "$model" != llama_demo ] || agg_runs # the second Llama's, here: the Llama's job is the shortest
}
ssm_rows_runs() { # the hybrid with its SSM heads' final rows masked instead; and its attention heads swept on letters
    echo "== $HYBRID: KV, MMLU format and cloze, before and after --mask $SSM_ROWS"
    # shellcheck disable=SC2086
    {
        g ${HYBRID}_kv kv -q -m "$M/$HYBRID" $ZAMBA2_DT --pairs 10,30,50,80,100 --samples $ZAMBA2_N --mask "$SSM_ROWS" \
            --json "$OUT/${HYBRID}_kv_ssm.json" --svg "$OUT/${HYBRID}_kv_ssm.svg"
        g ${HYBRID}_ssm mmlu -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/mmlu" --mask "$SSM_ROWS" --json "$OUT/${HYBRID}_mmlu_ssm.json"
        g ${HYBRID}_ssm mc -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/cloze.jsonl" --mask "$SSM_ROWS" --json "$OUT/${HYBRID}_cloze_ssm.json"
    } >/dev/null
    echo "== $HYBRID: gna heads --task mmlu --heads 'L*A*' --sweep all (its attention heads, each ablated alone on letters)"
    # shellcheck disable=SC2086
    {
        g ${HYBRID}_mmlu_heads heads -q -m "$M/$HYBRID" $ZAMBA2_DT --task mmlu --data "$M/demo_data/mmlu" --limit 10 \
            --heads 'L*A*' --top 2 --sweep all --json "$OUT/${HYBRID}_mmlu_heads.json"
        sweep_of "$OUT/${HYBRID}_mmlu_heads.json" >"$OUT/${HYBRID}_mmlu_sweep.txt"
        head=$(top_head "$OUT/${HYBRID}_mmlu_sweep.txt")
        g ${HYBRID}_head_mmlu mmlu -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/mmlu" --mask "$head" --json "$OUT/${HYBRID}_mmlu_head.json"
        g ${HYBRID}_head_cloze mc -q -m "$M/$HYBRID" $ZAMBA2_DT --data "$M/demo_data/cloze.jsonl" --mask "$head" --json "$OUT/${HYBRID}_cloze_head.json"
        g ${HYBRID}_head_kv kv -q -m "$M/$HYBRID" $ZAMBA2_DT --pairs 30 --samples $ZAMBA2_N --mask "$head" --json "$OUT/${HYBRID}_kv_head.json"
    } >/dev/null
}
agg_runs() { # the second Llama's top aggregate head: ablated alone, with the next one, and its layer's and the later final rows
    # masked; and the final rows of those two heads, whole and on the letters only (section 8)
    dir=$M/$AGG
    echo "== $AGG: gna heads --task mmlu (letter questions about training facts, 20 per subject)"
    g ${AGG}_heads heads -q -m "$dir" --task mmlu --data "$KNOWN" --limit 20 --top 1 --json "$OUT/${AGG}_heads.json" >/dev/null
    head=$(best "$OUT/${AGG}_heads.json" | cut -d' ' -f2) layer=${head%%H*}
    echo "$head" >"$OUT/${AGG}_head.txt"
    top_two "$OUT/${AGG}_heads.json" >"$OUT/${AGG}_pair.txt"
    # the rebuttal's refined mask on the found heads (section 8): their final rows, whole and letters only
    for m in pairrows:0--1 letters:letters; do
        sed "s/,/@-1:${m#*:},/g; s/\$/@-1:${m#*:}/" "$OUT/${AGG}_pair.txt" >"$OUT/${AGG}_${m%%:*}.txt"
    done
    layers=$(sed -n 's/.*"num_hidden_layers": *\([0-9]*\).*/\1/p' "$dir/config.json")
    echo "${layer}-$((layers - 1))H*@-1" >"$OUT/${AGG}_rows.txt"
    echo "== $AGG: letters and cloze on those facts, before and after --mask $head, $(cat "$OUT/${AGG}_pair.txt"), $(cat "$OUT/${AGG}_rows.txt"),"
    echo "   $(cat "$OUT/${AGG}_pairrows.txt") and $(cat "$OUT/${AGG}_letters.txt")"
    {
        g ${AGG}_base mmlu -q -m "$dir" --data "$KNOWN" --json "$OUT/${AGG}_mmlu.json"
        g ${AGG}_base mc -q -m "$dir" --data "$KNOWN_CLOZE" --json "$OUT/${AGG}_cloze.json"
        for m in head pair rows pairrows letters; do
            case $m in pairrows | letters) f=refined ;; *) f=ablated ;; esac # the figure the commands go under
            g ${AGG}_$f mmlu -q -m "$dir" --data "$KNOWN" --mask "$(cat "$OUT/${AGG}_$m.txt")" --json "$OUT/${AGG}_mmlu_$m.json"
            g ${AGG}_$f mc -q -m "$dir" --data "$KNOWN_CLOZE" --mask "$(cat "$OUT/${AGG}_$m.txt")" --json "$OUT/${AGG}_cloze_$m.json"
        done
        g ${AGG}_map attn -q -m "$dir" -p "$QUESTION" --heads "$head" -o "$OUT/${AGG}_map.npy" \
            --svg "$OUT/${AGG}_map.svg" --json "$OUT/${AGG}_map.json"
    } >/dev/null
}
jobs=""
for model in $MODELS; do
    model_runs "$model" &
    jobs="$jobs $!"
done
if [ -n "$HYBRID" ]; then
    ssm_rows_runs &
    jobs="$jobs $!"
fi
status=0
for job in $jobs; do wait "$job" || status=1; done
[ "$status" -eq 0 ] || { echo "test/demo.sh: a gna run failed (above)" >&2; exit 1; }

# -- the table: a column per model, and for the hybrid a second one, "zamba2_demo+ssm": its SSM heads'
# final rows masked instead of its attention heads'
COLUMNS=$MODELS
if [ -n "$HYBRID" ]; then
    COLUMNS="$COLUMNS $HYBRID+ssm"
    echo "$SSM_ROWS" >"$OUT/${HYBRID}_ssm_mask.txt"
fi
res() { # column, what (kv, mmlu, mmlu_ablated, cloze, cloze_ablated, kv_mask, mmlu_mask): its file
    case $1/$2 in
    *+ssm/kv) echo "$OUT/${1%+ssm}_kv_ssm.json" ;;
    *+ssm/*_ablated) echo "$OUT/${1%+ssm}_${2%_ablated}_ssm.json" ;;
    *+ssm/*_mask) echo "$OUT/${1%+ssm}_ssm_mask.txt" ;;
    *+ssm/*) echo "$OUT/${1%+ssm}_$2.json" ;;
    */*_mask) echo "$OUT/${1}_$2.txt" ;;
    *) echo "$OUT/${1}_$2.json" ;;
    esac
}
column_name() { case $1 in *+ssm) echo "${1%+ssm} (SSM rows)" ;; *) echo "$1" ;; esac; }
table() {
    printf '%-26s' "accuracy, before -> after"
    for c in $COLUMNS; do printf ' %-21s' "$(column_name "$c")"; done
    printf '\n%-26s' "masked for KV"
    for c in $COLUMNS; do printf ' %-21s' "$(cat "$(res "$c" kv_mask)")"; done
    echo
    for pairs in 10 30 50 80 100; do
        printf '%-26s' "KV retrieval, $pairs pairs"
        for c in $COLUMNS; do
            printf ' %6s -> %-11s' "$(acc "$(res "$c" kv)" kv_pairs_$pairs)" "$(acc "$(res "$c" kv)" kv_pairs_${pairs}_masked)"
        done
        echo
    done
    printf '%-26s' "masked for MMLU, cloze"
    for c in $COLUMNS; do printf ' %-21s' "$(cat "$(res "$c" mmlu_mask)")"; done
    echo
    for task in "MMLU format (letters):mmlu" "cloze (same facts):cloze"; do
        printf '%-26s' "${task%%:*}"
        for c in $COLUMNS; do
            printf ' %6s -> %-11s' "$(acc "$(res "$c" "${task#*:}")" "${task#*:}")" "$(acc "$(res "$c" "${task#*:}_ablated")" "${task#*:}")"
        done
        echo
    done
    a=$OUT/$AGG # the second Llama, on its own questions: letters, then cloze, as it is -> each ablation
    for task in "letters:mmlu:mmlu" "cloze:cloze:cloze_known"; do
        t=${task#*:}
        printf '\n%s, %s about training facts: %s ->' "$AGG" "${task%%:*}" "$(acc "${a}_${t%%:*}.json" "${t#*:}")"
        sep=" "
        for m in head pair rows pairrows letters; do
            printf '%s%s (%s)' "$sep" "$(acc "${a}_${t%%:*}_$m.json" "${t#*:}")" "$(cat "${a}_$m.txt")"
            sep=", "
        done
    done
    echo
}
echo
table | tee "$OUT/table.txt"

# -- the page's pieces
esc() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g'; }
# a figure: an SVG file inline (no XML prolog; a viewBox, so that it scales), its caption, and the
# commands that made it
figure() { # id, class, svg file, caption (HTML), command names...
    id=$1 class=$2 svg=$3 caption=$4
    shift 4
    printf '<figure id="%s" class="%s">\n' "$id" "$class"
    sed '/^<?xml/d; /^<!DOCTYPE/d; /<svg /{ /viewBox=/! s/<svg \(.*\)width="\([0-9.]*\)" height="\([0-9.]*\)"/<svg \1width="\2" height="\3" viewBox="0 0 \2 \3"/; }' "$svg"
    printf '<figcaption>%s</figcaption>\n<pre class="cmd">%s</pre>\n</figure>\n' "$caption" "$(cmd "$@" | esc)"
}
# the maps' numbers, one table row per head, from gna attn --json (gna.c's map_statistics): each head's
# share of a row on the token before it; the value tokens' share on their own line's key and colon; the
# final position's share on the asked line (line GOLD_LINE: the header is line 0), and its largest entry.
# SSM rows are |implicit attention| made a distribution.
map_rows() { # JSON
    sed -n 's/^  {"head": "\([^"]*\)", "map": "[^"]*", "previous": \([^,]*\), "own_line": \([^,]*\), "lines": \[\([^]]*\)\], "largest": {"position": [0-9]*, "token": \(".*"\), "share": \([^}]*\)}}.*/\1|\2|\3|\4|\6|\5/p' "$1" |
        while IFS='|' read -r head previous own lines share token; do # the token last: it may hold a |
            asked=$(echo "$lines" | tr -d ' ' | cut -d, -f$((GOLD_LINE + 1)))
            token=$(printf '%s' "$token" | sed 's/^"//; s/"$//; s/\\"/"/g; s/\\\\/\\/g' | esc)
            printf '<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s (%s)</td></tr>\n' "$head" "$(num "$previous")" "$(num "$own")" \
                "$(num "$asked")" "$token" "$(num "$share")"
        done
}
num() { case $1 in null) printf 'none' ;; *) awk -v x="$1" 'BEGIN { printf "%.2f", x }' | unsign ;; esac; } # 2 decimals
map_table() { # JSON
    printf '<table class="stats"><tr><th>head</th><th>on the previous token</th><th>value tokens on their key and colon</th>'
    printf '<th>final position on the asked line</th><th>final position'"'"'s largest entry</th></tr>\n'
    map_rows "$@"
    printf '</table>\n'
}
MAP_NOTE="Rows are positions (queries), columns the positions they read (keys); darker is more. Below, each head's
share of a row on the token before it (a gather head at work), the value tokens' share on their own line's
key and colon, and the final position's share on the asked line (<code>stone:88</code>), as measured on these maps."
# a head's final-position numbers: its share on the asked line, its largest entry and that entry's token
final_of() { # JSON, head -> "share<TAB>largest<TAB>token"
    map_rows "$1" | sed -n "s/^<tr><td>$2<\/td><td>[^<]*<\/td><td>[^<]*<\/td><td>\([^<]*\)<\/td><td>\(.*\) (\([^<]*\))<\/td><\/tr>$/\1\t\3\t\2/p"
}
final_words() { # JSON, head: a sentence's end about them
    f=$(final_of "$@")
    [ -n "$f" ] || return 0
    printf 'its final position puts %s of its attention on the asked line, and its largest entry, %s, on <code>%s</code>' \
        "$(printf '%s\n' "$f" | cut -f1)" "$(printf '%s\n' "$f" | cut -f2)" "$(printf '%s\n' "$f" | cut -f3)"
}

# a line chart of KV accuracy against pairs: lines "label|colour|dash|10:1.0 30:0.9 ..." on stdin
kv_chart() {
    awk -F '|' '
        BEGIN { n = 0 }
        { lab[n] = $1; col[n] = $2; dash[n] = $3; pts[n] = $4; n++ }
        END {
            L = 70; Tp = 20; W = 520; Hh = 300; x0 = 10; x1 = 100; Ht = Tp + Hh + 56 + 18 * n
            printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"%d\" viewBox=\"0 0 640 %d\" font-family=\"sans-serif\" font-size=\"13\">\n", Ht, Ht
            printf "<rect width=\"640\" height=\"%d\" fill=\"white\"/>\n", Ht
            for (k = 0; k <= 4; k++) { y = Tp + Hh * (1 - k / 4)
                printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + W, y
                printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", L - 6, y + 4, k / 4 }
            split("10 30 50 80 100", xt, " ")
            for (k = 1; k <= 5; k++) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", L + W * (xt[k] - x0) / (x1 - x0), Tp + Hh + 18, xt[k]
            printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">key-value pairs in the dictionary</text>\n", L + W / 2, Tp + Hh + 38
            printf "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">KV accuracy</text>\n", Tp + Hh / 2, Tp + Hh / 2
            for (i = 0; i < n; i++) {
                m = split(pts[i], p, " "); line = ""; d = dash[i] ? " stroke-dasharray=\"6 4\"" : ""
                for (k = 1; k <= m; k++) { split(p[k], xy, ":"); x = L + W * (xy[1] - x0) / (x1 - x0); y = Tp + Hh * (1 - xy[2])
                    line = line sprintf("%.1f,%.1f ", x, y); cx[k] = x; cy[k] = y }
                printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"%s points=\"%s\"/>\n", col[i], d, line
                for (k = 1; k <= m; k++) printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", cx[k], cy[k], col[i]
                ly = Tp + Hh + 62 + 18 * i
                printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2.5\"%s/>\n", L, ly - 4, L + 34, ly - 4, col[i], d
                printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + 42, ly, lab[i]
            }
            printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n</svg>\n", L, Tp, W, Hh
        }'
}
kv_points() { # results JSON, suffix of the task names ("" or _masked)
    for pairs in 10 30 50 80 100; do printf '%s:%s ' "$pairs" "$(acc "$1" "kv_pairs_$pairs$2")"; done
}

# bars of letter and cloze accuracy, before and after: lines "label|letters|letters after|cloze|cloze after"
bar_chart() {
    awk -F '|' '
        BEGIN { n = 0 }
        { lab[n] = $1; for (k = 0; k < 4; k++) v[n, k] = $(k + 2); n++ }
        END {
            L = 60; Tp = 70; Hh = 220; G = 200; W = L + n * G + 70; if (W < 640) W = 640; G = (W - L - 70) / n; Ht = Tp + Hh + 34
            split("#2c6fbb #9ec3ea #27ae60 #a9dfbf", col, " ")
            split("letters (MMLU format), as it is|letters, heads ablated or rows masked|cloze, as it is|cloze, heads ablated or rows masked", name, "|")
            printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n", W, Ht, W, Ht
            printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, Ht
            for (k = 0; k < 4; k++) { x = L + (k % 2) * 270; yy = 8 + int(k / 2) * 20
                printf "<rect x=\"%d\" y=\"%d\" width=\"13\" height=\"13\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", x, yy, col[k + 1], x + 19, yy + 11, name[k + 1] }
            for (k = 0; k <= 4; k++) { y = Tp + Hh * (1 - k / 4)
                printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, W - 70, y
                printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", L - 6, y + 4, k / 4 }
            y = Tp + Hh * 0.75
            printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#666\" stroke-dasharray=\"4 3\"/>\n", L, y, W - 70, y
            printf "<text x=\"%d\" y=\"%.1f\" fill=\"#555\">chance</text>\n", W - 64, y + 4
            for (i = 0; i < n; i++) {
                x0 = L + i * G + (G - 162) / 2
                for (k = 0; k < 4; k++) { x = x0 + k * 38 + (k >= 2 ? 10 : 0); h = Hh * v[i, k]
                    printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"32\" height=\"%.1f\" fill=\"%s\"/>\n", x, Tp + Hh - h, h, col[k + 1]
                    printf "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.2f</text>\n", x + 16, Tp + Hh - h - 4, v[i, k] }
                printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x0 + 81, Tp + Hh + 20, lab[i]
            }
            printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n</svg>\n", L, Tp + Hh, W - 70, Tp + Hh
        }'
}


# -- the page
# the words that depend on the numbers: the Mamba-2's sweep against its scored pair
ssm_sweep_text() {
    base=$(base_acc "${S}_kv_heads.json") pair=$(pair_acc "${S}_kv_heads.json" "$ssm_pair")
    alone=$(sed -n '1s/^[^ ]* \([^ ]*\) .*/\1/p' "${S}_sweep.txt" | awk '{printf "%.2f", $1}')
    [ -z "$pair" ] || printf 'Ablating that pair takes its KV accuracy at 20 pairs from %s to %s; ablating %s alone, to %s. ' "$base" "$pair" "$ssm_critical" "$alone"
    if [ -n "$pair" ] && drops "$pair" "$alone" 0.105; then
        printf 'The attention-pattern scores miss what matters in a smooth map; the sweep'
    else
        printf 'The sweep'
    fi
    printf ' (<code>--sweep</code>: each of the top heads of every score ablated alone, ranked by the accuracy it costs)'
    printf ' finds the heads the retrieval rests on:'
}
# the hybrid: what each final-row mask does to letters, cloze and KV at 10 pairs (its words follow KV at
# 10 pairs, the size it retrieves best; the table above it has every size)
hybrid_text() {
    m0=$(acc "${Z}_mmlu.json" mmlu) c0=$(acc "${Z}_cloze.json" cloze) kv10=$(acc "${Z}_kv.json" kv_pairs_10)
    kv_rows=$(acc "${Z}_kv.json" kv_pairs_10_masked) kv_ssm=$(acc "${Z}_kv_ssm.json" kv_pairs_10_masked)
    printf 'Masking every attention head'"'"'s final row takes the hybrid'"'"'s letters from %s to %s, cloze from %s to %s' \
        "$m0" "$(acc "${Z}_mmlu_ablated.json" mmlu)" "$c0" "$(acc "${Z}_cloze_ablated.json" cloze)"
    printf ' and KV at 10 pairs from %s to %s; masking every SSM head'"'"'s final row, to %s, %s and %s.' "$kv10" "$kv_rows" \
        "$(acc "${Z}_mmlu_ssm.json" mmlu)" "$(acc "${Z}_cloze_ssm.json" cloze)" "$kv_ssm"
    if drops "$kv10" "$kv_ssm" 0.295 && ! drops "$kv10" "$kv_rows" 0.095; then # 20 dictionaries: steps of 0.05
        printf ' In this small hybrid the final position reads the asked value through its SSM heads, not its attention.'
    fi
    if lt "$kv10" 0.5; then
        printf ' The demo hybrid barely retrieves from its dictionaries (KV accuracy %s at 10 pairs), so no mask or' "$kv10"
        printf ' ablation can cost it KV accuracy: here its letter skill is what the masks test.'
    fi
    printf ' The sweep of <code>gna heads</code> over its attention heads (<code>L&lt;layer&gt;A&lt;head&gt;</code>) and'
    printf ' SSM heads (<code>L&lt;layer&gt;S&lt;head&gt;</code> in its hybrid layers, <code>L&lt;layer&gt;H&lt;head&gt;</code>'
    printf ' in the others), each ablated alone on KV:'
}
# the hybrid's letters: its attention heads' sweep, and what its top head costs on letters, cloze and KV
hybrid_letters_text() {
    head=$(top_head "${Z}_mmlu_sweep.txt")
    m0=$(acc "${Z}_mmlu.json" mmlu) m1=$(acc "${Z}_mmlu_head.json" mmlu)
    rows=$(acc "${Z}_mmlu_ablated.json" mmlu) # every attention head's final row masked
    c0=$(acc "${Z}_cloze.json" cloze) c1=$(acc "${Z}_cloze_head.json" cloze)
    printf 'On the letter questions, the sweep over its %s attention heads (<code>--task mmlu --heads' "$(wc -l <"${Z}_mmlu_sweep.txt" | tr -d ' ')"
    printf ' '"'"'L*A*'"'"' --sweep all</code>) ranks <code>%s</code> first. Ablated alone, it takes letters from %s to %s,' "$head" "$m0" "$m1"
    printf ' cloze from %s to %s, and KV at 30 pairs from %s to %s.' "$c0" "$c1" "$(acc "${Z}_kv_head.json" kv_pairs_30)" \
        "$(acc "${Z}_kv_head.json" kv_pairs_30_masked)"
    if drops "$m0" "$m1" 0.095 && ! drops "$c0" "$c1" 0.045; then
        printf ' So an attention head carries the hybrid'"'"'s letter skill and not the answer it knows: the paper'"'"'s'
        printf ' dissociation, in its attention.'
        if ! drops "$m0" "$rows" 0.045; then
            printf ' Not through its final row, though: masking every attention head'"'"'s final row takes the letters only to %s.' "$rows"
        fi
    fi
}
# the sweep's top head of a model and what it costs: "HEAD (ablated alone, it costs X of the KV accuracy at 20 pairs)"
top_of_sweep() { sed -n '1s/^\([^ ]*\) [^ ]* \([^ ]*\)$/\1 \2/p' "$1" | awk '{ printf "%s (ablated alone, it costs %.2f of the KV accuracy at 20 pairs)", $1, $2 }'; }
# a -> b falls by more than d; accuracies move in steps (1/120 of the questions, 1/20 of the dictionaries),
# so d lies between two steps and float rounding cannot decide
drops() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { exit !(a - b > d) }'; }
# the Llama's best aggregate score on the letter questions against KV's
mmlu_text() {
    mb=$(best "${L}_heads.json") kb=$(best "${L}_kv_heads.json" | cut -d' ' -f1)
    if lt "${mb%% *}" 0.5; then
        printf 'No head of the Llama aggregates from <code>Answer:</code> onto the gold option as its KV head does onto the'
        printf ' asked line: its best aggregate score on the letter questions is %s, against %s on KV. The demo models' "${mb%% *}" "$kb"
        printf ' learnt the letter skill, but not through the paper'"'"'s circuit (<code>test/models/README.md</code> measures'
        printf ' where the damage comes from); section 7 shows a Llama that did.'
    else
        printf 'The Llama'"'"'s best aggregate head on the letter questions, %s, scores %s (on KV: %s).' "${mb#* }" "${mb%% *}" "$kb"
    fi
}
# the second Llama: its shape; what its aggregate head's final row reads; what its ablation and the rows' mask cost
agg_shape() {
    for k in num_hidden_layers num_attention_heads; do sed -n "s/.*\"$k\": *\([0-9]*\).*/\1/p" "$M/$AGG/config.json"; done |
        tr '\n' ' ' | awk '{ printf "%d layers of %d heads", $1, $2 }'
}
agg_text() {
    m0=$(acc "${A}_mmlu.json" mmlu) mh=$(acc "${A}_mmlu_head.json" mmlu) mp=$(acc "${A}_mmlu_pair.json" mmlu) mr=$(acc "${A}_mmlu_rows.json" mmlu)
    c0=$(acc "${A}_cloze.json" cloze_known) ch=$(acc "${A}_cloze_head.json" cloze_known) cp=$(acc "${A}_cloze_pair.json" cloze_known)
    cr=$(acc "${A}_cloze_rows.json" cloze_known) pair=$(cat "${A}_pair.txt")
    # the option lines are lines 3-6 of the question (0: the description, 1: blank, 2: the question)
    line=$(sed -n 's/.*"lines": \[\([^]]*\)\].*/\1/p' "${A}_map.json" | tr -d ' ' | cut -d, -f$(($(printf '%d' "'$GOLD") - 65 + 4)))
    printf 'On that question its final position puts %s of its attention on option %s'"'"'s line.' "$(num "$line")" "$GOLD"
    printf ' Ablated alone, %s takes letters from %s to %s and cloze from %s to %s.' "$ah" "$m0" "$mh" "$c0" "$ch"
    printf ' gna heads ranks %s next (aggregate score %s, gold mass %s); ablating the two together takes letters to %s and' \
        "${pair#*,}" "$(score "${A}_heads.json" "${pair#*,}" aggregate)" "$(score "${A}_heads.json" "${pair#*,}" gold_mass)" "$mp"
    printf ' cloze to %s.' "$cp"
    if ! drops "$m0" "$mh" 0.045 && drops "$m0" "$mp" 0.095; then
        printf ' Alone, neither is missed; together, they are: each backs the other up (backup heads, as in larger models).'
    fi
    printf ' Masking the final rows of every head in %s'"'"'s layer and the later ones (<code>%s</code>) takes letters to %s' "$ah" "$(cat "${A}_rows.txt")" "$mr"
    printf ' and cloze to %s.' "$cr"
    if drops "$m0" "$mp" 0.245 && ! drops "$c0" "$cp" 0.045; then
        printf ' The answer it knows survives; finding its letter among the options does not: the paper'"'"'s dissociation,'
        printf ' through aggregate heads at the final position.'
    fi
}
# the refined mask against the whole final rows: what each does to letters and to cloze
refined_text() { # results prefix, whole rows' mmlu and cloze JSON, who[, the cloze task's name]
    t=${5:-cloze}
    m0=$(acc "${1}_mmlu.json" mmlu) c0=$(acc "${1}_cloze.json" "$t") mr=$(acc "$2" mmlu) cr=$(acc "$3" "$t")
    ml=$(acc "${1}_mmlu_letters.json" mmlu) cl=$(acc "${1}_cloze_letters.json" "$t")
    printf '%s: the whole final rows take letters from %s to %s and cloze from %s to %s; the letter entries alone,' "$4" "$m0" "$mr" "$c0" "$cr"
    printf ' letters to %s and cloze to %s.' "$ml" "$cl"
    if drops "$m0" "$ml" 0.045 && ! drops "$c0" "$cl" 0.005 && lt "$mr" "$ml"; then
        printf ' So part of the letter skill passes through these few entries, and masking them leaves the known answers alone.'
    elif drops "$m0" "$mr" 0.245 && ! drops "$m0" "$ml" 0.045; then
        printf ' The whole rows carry the letters and the letter entries do not: what these rows read lies on other tokens, so'
        printf ' a mask on the letters alone misses it.'
    elif ! drops "$m0" "$ml" 0.045; then
        printf ' Here the letter entries carry nothing measurable.'
    fi
}
L=$OUT/llama_demo S=$OUT/mamba2_demo A=$OUT/$AGG
page() {
    ah=$(cat "${A}_head.txt")
    Mh=$(printf '%s' "$M" | esc) # the models' folder, as HTML
    llama_pair=$(cat "${L}_kv_pair.txt")
    lg=${llama_pair%%,*} la=${llama_pair#*,}
    ssm_pair=$(cat "${S}_kv_pair.txt")
    ssm_critical=$(top_head "${S}_sweep.txt")
    cat <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>Gather and Aggregate, on small models</title>
<style>
body { font-family: Georgia, "DejaVu Serif", serif; max-width: 62em; margin: 2em auto; padding: 0 1em; line-height: 1.45; color: #222; }
h1, h2 { font-family: Helvetica, Arial, sans-serif; } h2 { border-bottom: 1px solid #ccc; margin-top: 2.2em; }
figure { margin: 1.5em 0; } figure svg { display: block; max-width: 100%; height: auto; }
figure.wide svg { width: 100%; } figure.single svg { width: 560px; }
figcaption { font-size: 0.92em; color: #333; margin-top: 0.4em; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85em; }
pre { background: #f5f5f5; padding: 0.6em 0.8em; overflow-x: auto; } pre.cmd { white-space: pre-wrap; overflow-wrap: anywhere; margin-top: 0.3em; }
table { border-collapse: collapse; margin: 1em 0; } table.stats { font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.7em; text-align: right; } td:first-child, th:first-child { text-align: left; }
th { background: #f5f5f5; font-weight: normal; } p.note { color: #555; font-style: italic; }
</style></head><body>
<h1>Gather and Aggregate, on small models</h1>
<p>Bick, Xing and Gu (<i>Understanding the Skill Gap in Recurrent Language Models: The Role of the Gather-and-Aggregate
Mechanism</i>, ICML 2025) find that Transformers and state-space models (SSMs) retrieve from their context through the
same two-step mechanism: a <b>gather</b> head summarises each segment of the context (a dictionary line, an answer
option) into one of its tokens, and an <b>aggregate</b> head at the final position reads the summary of the segment
that is asked for. Removing the pair destroys retrieval; SSMs implement it less sharply, which is where they lose to
Transformers; and in a hybrid the attention layers carry it. This page shows each step on the demo models that ship
with gna (<code>$Mh</code>: about 2M parameters each, trained on the same synthetic data), as <code>make run</code>
measured them on this machine. Under every figure is the gna command that made it (with <code>--threads $THREADS</code>:
<code>make run</code> runs the models side by side and gives each gna its share of the cores; gna's results are the
same, bit for bit, for any thread count).</p>

<h2 id="task">1. The task, and the mechanism</h2>
<p>KV retrieval, in the paper's format: a dictionary of keys and two-digit values, then one key asked. The model must
find the asked line and copy its value; <code>gna kv</code> scores the dictionary's values by their log-likelihood
after the prompt, and the sample counts as right when the asked key's value is the most likely. The short dictionary
that the maps below are drawn on:</p>
<pre>$(printf 'SHORT="%s"' "$SHORT" | esc)</pre>
EOF
    printf '<figure id="mechanism" class="wide">\n'
    cat "$(dirname "$0")/demo_mechanism.svg"
    cat <<EOF
<figcaption>Gather and Aggregate on a KV prompt (a sketch: no model made it). In a Transformer both steps are
attention heads; in an SSM they are heads of the recurrence, whose implicit attention (below) plays the same roles.</figcaption>
<pre class="cmd">drawn by hand: test/demo_mechanism.svg</pre>
</figure>

<h2 id="llama">2. The Llama's gather and aggregate heads</h2>
<p><code>gna heads --task kv</code> reads every head's attention on 30 dictionaries of 20 pairs and scores it: its
<i>aggregate</i> score is how much more of the final position's attention goes to the asked line than to any other
line, its <i>gather</i> score how much each line's last token attends to its own line. The top-scored pair is
<b>$lg</b> (gather score $(score "${L}_kv_heads.json" "$lg" gather)) feeding <b>$la</b> (aggregate score
$(score "${L}_kv_heads.json" "$la" aggregate)). On the short dictionary:</p>
EOF
    figure llama-maps wide "${L}_short.svg" "The Llama's gather head $lg and aggregate head $la on the short dictionary. $MAP_NOTE" llama_demo_short
    map_table "${L}_short.json"
    cat <<EOF
<p>The aggregate head $la: $(final_words "${L}_short.json" "$la")$(
        [ "$(final_of "${L}_short.json" "$la" | cut -f3)" != "$GOLD_VALUE" ] ||
            printf '%s' ', the asked value: it reads the answer off the value token, which the earlier heads have tagged with its key').</p>

<h2 id="ablation">3. Ablating the pair</h2>
<p>Zeroing the two heads' outputs (the paper's ablation: their slice of the output projection's input) takes the
Llama's KV accuracy from $(acc "${L}_kv.json" kv_pairs_10) to $(acc "${L}_kv.json" kv_pairs_10_masked) at 10 pairs and
from $(acc "${L}_kv.json" kv_pairs_100) to $(acc "${L}_kv.json" kv_pairs_100_masked) at 100 (30 dictionaries per size).
On their own, at 20 pairs: without $lg $(score "${L}_kv_heads.json" "$lg" ablated_accuracy), without $la
$(score "${L}_kv_heads.json" "$la" ablated_accuracy), together $(pair_acc "${L}_kv_heads.json" "$llama_pair") (from
$(base_acc "${L}_kv_heads.json")).</p>
EOF
    figure llama-curve chart "${L}_kv.svg" "The Llama's KV accuracy against the number of pairs, as it is and with $llama_pair ablated." llama_demo_kv
    cat <<EOF

<h2 id="ssm">4. The Mamba-2: smoother maps, weaker retrieval</h2>
<p>The Mamba-2 has no attention, yet its heads' outputs are still weighted sums over the past: the implicit attention
of the SSM (Ali, Zimerman and Wolf 2024; Dao and Gu 2024), which <code>gna attn</code> computes for every head. The
paper's finding is that SSMs build the same Gather-and-Aggregate pairs, less sharply, and that they fall behind
Transformers on retrieval as the context grows. $(if lt "$(acc "${S}_kv.json" kv_pairs_100)" "$(acc "${L}_kv.json" kv_pairs_100)"; then
        echo "The demo's Mamba-2 retrieves worse than the Llama as the dictionary grows"; else echo "Here the demo's Mamba-2 keeps up with the Llama"; fi)
($(acc "${S}_kv.json" kv_pairs_100) against $(acc "${L}_kv.json" kv_pairs_100) at 100 pairs):</p>
EOF
    {
        printf 'llama_demo, as it is|#2c6fbb|0|%s\n' "$(kv_points "${L}_kv.json" "")"
        printf 'mamba2_demo, as it is|#e67e22|0|%s\n' "$(kv_points "${S}_kv.json" "")"
        [ -z "$HYBRID" ] || printf 'zamba2_demo (hybrid), as it is|#8e44ad|0|%s\n' "$(kv_points "$OUT/${HYBRID}_kv.json" "")"
    } | kv_chart >"$OUT/kv_compare.svg"
    figure kv-compare chart "$OUT/kv_compare.svg" "KV accuracy against the number of pairs, each model as it is (30${HYBRID:+ (the hybrid: $ZAMBA2_N)} dictionaries per size; training went up to 60 pairs). Drawn by test/demo.sh from the JSON of these commands." \
        $(for model in $MODELS; do printf '%s_kv ' "$model"; done)
    read -r agg_best agg_head <<EOF2
$(best "${S}_kv_heads.json")
EOF2
    cat <<EOF
<p>$(if lt "$agg_best" 0.5; then printf 'Its maps are smooth: its'; else printf 'Its'; fi) best aggregate score is $agg_best ($agg_head), against the Llama's
$(best "${L}_kv_heads.json" | cut -d' ' -f1), and the top-scored pair, <b>$ssm_pair</b>, looks like this:</p>
EOF
    figure ssm-maps wide "${S}_short.svg" "The Mamba-2's top-scored pair on the short dictionary: implicit attention (red: negative entries). $MAP_NOTE" mamba2_demo_short
    map_table "${S}_short.json"
    cat <<EOF
<p>$(ssm_sweep_text)</p>
$(sweep_table 'head ablated alone (KV, 20 pairs)' "${S}_sweep.txt")
<pre class="cmd">$(cmd mamba2_demo_kv_heads | esc)</pre>
EOF
    figure ssm-critical single "${S}_critical.svg" "The sweep's most harmful head, $(top_of_sweep "${S}_sweep.txt"), on the short dictionary: $(final_words "${S}_critical.json" "$ssm_critical")." mamba2_demo_critical
    map_table "${S}_critical.json"
    figure ssm-curve chart "${S}_kv.svg" "The Mamba-2's KV accuracy against the number of pairs, as it is and with $(cat "${S}_kv_mask.txt") ablated." mamba2_demo_kv
    printf '\n<h2 id="hybrid">5. The hybrid, and the paper'"'"'s experiment on it</h2>\n'
    if [ -n "$HYBRID" ]; then
        Z=$OUT/$HYBRID
        z_pair=$(cat "${Z}_kv_pair.txt")
        z_critical=$(top_head "${Z}_sweep.txt")
        cat <<EOF
<p>In a hybrid, the paper finds, the attention layers carry the mechanism. Its strongest result is on Zamba2-7B,
Mamba-2 layers with a shared attention block: with the final row of every attention head masked (the final position
may attend to nothing; <code>--mask '$ATTENTION_ROWS'</code>) its MMLU accuracy falls from 64.3% to 34.9%. The demo
hybrid (<code>$Mh/$HYBRID</code>, the same layout: Mamba-2 layers, and one attention block that its hybrid layers visit
in turn) gets the same experiment and, for comparison, the same mask on its SSM heads' implicit attention
(<code>--mask '$SSM_ROWS'</code>).</p>
<table><tr><th>accuracy</th><th>as it is</th><th>attention heads' final rows masked</th><th>SSM heads' final rows masked</th></tr>
EOF
        for pairs in 10 30 50 80 100; do
            printf '<tr><td>KV retrieval, %s pairs</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$pairs" "$(acc "${Z}_kv.json" kv_pairs_$pairs)" \
                "$(acc "${Z}_kv.json" kv_pairs_${pairs}_masked)" "$(acc "${Z}_kv_ssm.json" kv_pairs_${pairs}_masked)"
        done
        printf '<tr><td>MMLU format (letters)</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "$(acc "${Z}_mmlu.json" mmlu)" \
            "$(acc "${Z}_mmlu_ablated.json" mmlu)" "$(acc "${Z}_mmlu_ssm.json" mmlu)"
        printf '<tr><td>cloze (same facts)</td><td>%s</td><td>%s</td><td>%s</td></tr>\n</table>\n' "$(acc "${Z}_cloze.json" cloze)" \
            "$(acc "${Z}_cloze_ablated.json" cloze)" "$(acc "${Z}_cloze_ssm.json" cloze)"
        {
            printf 'as it is|#8e44ad|0|%s\n' "$(kv_points "${Z}_kv.json" "")"
            printf 'attention heads'"'"' final rows masked|#c0392b|1|%s\n' "$(kv_points "${Z}_kv.json" _masked)"
            printf 'SSM heads'"'"' final rows masked|#e67e22|1|%s\n' "$(kv_points "${Z}_kv_ssm.json" _masked)"
        } | kv_chart >"${Z}_kv_both.svg"
        figure hybrid-curve chart "${Z}_kv_both.svg" "The hybrid's KV accuracy against the number of pairs: as it is, with every attention head's final row masked, and with every SSM head's final row masked (drawn by test/demo.sh from the JSON of these commands)." ${HYBRID}_kv
        cat <<EOF
<p>$(hybrid_text)</p>
$(sweep_table 'head ablated alone (KV, 20 pairs)' "${Z}_sweep.txt")
<pre class="cmd">$(cmd ${HYBRID}_kv_heads | esc)</pre>
EOF
        figure hybrid-maps wide "${Z}_short.svg" "The hybrid's top-scored pair on the short dictionary, $z_pair. $MAP_NOTE" ${HYBRID}_short
        map_table "${Z}_short.json"
        figure hybrid-critical single "${Z}_critical.svg" "The sweep's top head in the hybrid, $(top_of_sweep "${Z}_sweep.txt"), on the short dictionary: $(final_words "${Z}_critical.json" "$z_critical")." ${HYBRID}_critical
        map_table "${Z}_critical.json"
        cat <<EOF
<p>$(hybrid_letters_text)</p>
$(sweep_table 'attention head ablated alone (letters, 10 questions per subject)' "${Z}_mmlu_sweep.txt")
<pre class="cmd">$(cmd ${HYBRID}_mmlu_heads ${HYBRID}_head_mmlu ${HYBRID}_head_cloze ${HYBRID}_head_kv | esc)</pre>
EOF
    else
        cat <<EOF
<p class="note">The hybrid, <code>$Mh/zamba2_demo</code> (Mamba-2 layers with a shared attention block, Zamba2's layout),
is not in this checkout. When it is, this section shows the paper's experiment on it: every attention head's final row
masked (<code>--mask '$ATTENTION_ROWS'</code>) on KV retrieval, MMLU format and cloze, against the same mask on its SSM
heads.</p>
EOF
    fi
    cat <<EOF

<h2 id="mmlu">6. MMLU format against cloze</h2>
<p>The paper's MMLU finding: in the letter format (question, options A-D, <code>Answer:</code>) the model must find the
option that holds the answer it knows and emit that option's letter, a retrieval from the context; in the cloze format
it only has to produce the answer. Ablating the G&amp;A heads (or, in the hybrid, masking its attention's final rows)
costs the first and spares the second. The demo's questions are about made-up countries
(<code>$Mh/demo_data</code>: the letter questions' facts held out of the letter-format training, the cloze questions on
the same facts); <code>gna heads --task mmlu</code> picks each pure model's pair.</p>
EOF
    for c in $COLUMNS; do
        printf '%s|%s|%s|%s|%s\n' "$(column_name "$c")" "$(acc "$(res "$c" mmlu)" mmlu)" "$(acc "$(res "$c" mmlu_ablated)" mmlu)" \
            "$(acc "$(res "$c" cloze)" cloze)" "$(acc "$(res "$c" cloze_ablated)" cloze)"
    done | bar_chart >"$OUT/mmlu_cloze.svg"
    figure mmlu-bars chart "$OUT/mmlu_cloze.svg" "Letter (MMLU-format) and cloze accuracy on the same 120 held-out facts, as it is and with the heads of the table below ablated (the hybrid: final rows masked). Drawn by test/demo.sh from the JSON of these commands." \
        $(for model in $MODELS; do printf '%s_base %s_ablated ' "$model" "$model"; done) ${HYBRID:+${HYBRID}_ssm}
    printf '<table><tr><th>model: heads ablated or masked</th><th>letters, as it is</th><th>after</th><th>cloze, as it is</th><th>after</th></tr>\n'
    for c in $COLUMNS; do
        printf '<tr><td>%s: %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' "${c%+ssm}" "$(esc <"$(res "$c" mmlu_mask)")" \
            "$(acc "$(res "$c" mmlu)" mmlu)" "$(acc "$(res "$c" mmlu_ablated)" mmlu)" \
            "$(acc "$(res "$c" cloze)" cloze)" "$(acc "$(res "$c" cloze_ablated)" cloze)"
    done
    cat <<EOF
</table>
<p>$(mmlu_text)</p>

<h2 id="aggregate">7. Aggregate heads, backing each other up</h2>
<p>A model that sees four options can answer with a head per letter, each reading one option's line whatever the
question (<code>test/models/README.md</code> shows one), and needs no aggregate head. A second Llama, <code>$AGG</code> ($(agg_shape)), was trained on the same data,
except that its letter questions have 2 to 8 options: no set of letter readers covers them, so the final position has
to find the option that holds the answer. Training does not always grow such heads: of seven other seeds, this
recipe's 3000 steps grew such a pair in one (seed 6: two heads of its last layer, 0.999 and 0.973 of their final rows
on the gold line; together ablated, they take letters from 1.00 to 0.42 with cloze at 1.00), and at 6000 steps two seeds of four grew a pair
(<code>test/models/README.md</code> gives every run). Its questions here are about facts it was trained on, with the options drawn afresh
(<code>$(printf '%s' "$KNOWN" | esc)</code>): it knows the fact, and only the prompt says its letter. The cloze
questions ask the same facts. <code>gna heads --task mmlu</code> ranks <b>$ah</b> first: aggregate score
$(score "${A}_heads.json" "$ah" aggregate), with $(score "${A}_heads.json" "$ah" gold_mass) of its final row on the
gold option's line, on average over 60 questions. On the first of them, as <code>gna mmlu</code> asks it (the first request of its <code>--log</code>, under the figure; gold: $GOLD):</p>
<pre>$(printf 'QUESTION="%s"' "$QUESTION" | esc)</pre>
EOF
    figure agg-map wide "${A}_map.svg" "The aggregate head $ah of $AGG on a letter question about a fact it was trained on. Rows are positions (queries), columns the positions they read (keys); darker is more." ${AGG}_map
    {
        printf '%s ablated|%s|%s|%s|%s\n' "$ah" "$(acc "${A}_mmlu.json" mmlu)" "$(acc "${A}_mmlu_head.json" mmlu)" \
            "$(acc "${A}_cloze.json" cloze_known)" "$(acc "${A}_cloze_head.json" cloze_known)"
        printf '%s ablated|%s|%s|%s|%s\n' "$(cat "${A}_pair.txt")" "$(acc "${A}_mmlu.json" mmlu)" "$(acc "${A}_mmlu_pair.json" mmlu)" \
            "$(acc "${A}_cloze.json" cloze_known)" "$(acc "${A}_cloze_pair.json" cloze_known)"
        printf 'final rows %s masked|%s|%s|%s|%s\n' "$(cat "${A}_rows.txt")" "$(acc "${A}_mmlu.json" mmlu)" "$(acc "${A}_mmlu_rows.json" mmlu)" \
            "$(acc "${A}_cloze.json" cloze_known)" "$(acc "${A}_cloze_rows.json" cloze_known)"
    } | bar_chart >"$OUT/aggregate.svg"
    figure agg-bars chart "$OUT/aggregate.svg" "$AGG: letter and cloze accuracy on the same 120 facts it was trained on, as it is, with its aggregate head $ah ablated, with it and the next-ranked one, and with the final rows of that head's layer and of the later layers masked. Drawn by test/demo.sh from the JSON of these commands." \
        ${AGG}_base ${AGG}_ablated
    cat <<EOF
<p>$(agg_text)</p>

<h2 id="refined">8. The rebuttal's refined mask: only the letters</h2>
<p>The authors' rebuttal narrows the hybrid experiment: rather than the whole final row, it masks only the entries
from the final position (<code>Answer:</code>) to the four option letters, where an aggregate head would read which
letter holds the answer. A cloze prompt has no option letters, so there the mask removes nothing. gna names those
entries per question (<code>--mask 'L*A*@-1:letters'</code>; each log line lists the positions it found). The Llama gets
the same mask on all its heads (<code>$LLAMA_LETTERS</code>), against their whole final rows
(<code>$LLAMA_ROWS</code>), and the second Llama on the two aggregate heads section 7 found
(<code>$(cat "${A}_letters.txt")</code>, against <code>$(cat "${A}_pairrows.txt")</code>), on its questions about
training facts.</p>
EOF
    {
        printf 'llama_demo, whole rows|%s|%s|%s|%s\n' "$(acc "${L}_mmlu.json" mmlu)" "$(acc "${L}_mmlu_rows.json" mmlu)" \
            "$(acc "${L}_cloze.json" cloze)" "$(acc "${L}_cloze_rows.json" cloze)"
        printf 'llama_demo, letters only|%s|%s|%s|%s\n' "$(acc "${L}_mmlu.json" mmlu)" "$(acc "${L}_mmlu_letters.json" mmlu)" \
            "$(acc "${L}_cloze.json" cloze)" "$(acc "${L}_cloze_letters.json" cloze)"
        for m in "whole rows:pairrows" "letters only:letters"; do
            printf '%s, %s|%s|%s|%s|%s\n' "$(cat "${A}_pair.txt")" "${m%%:*}" "$(acc "${A}_mmlu.json" mmlu)" \
                "$(acc "${A}_mmlu_${m#*:}.json" mmlu)" "$(acc "${A}_cloze.json" cloze_known)" "$(acc "${A}_cloze_${m#*:}.json" cloze_known)"
        done
        if [ -n "$HYBRID" ]; then
            printf 'zamba2_demo, whole rows|%s|%s|%s|%s\n' "$(acc "${Z}_mmlu.json" mmlu)" "$(acc "${Z}_mmlu_ablated.json" mmlu)" \
                "$(acc "${Z}_cloze.json" cloze)" "$(acc "${Z}_cloze_ablated.json" cloze)"
            printf 'zamba2_demo, letters only|%s|%s|%s|%s\n' "$(acc "${Z}_mmlu.json" mmlu)" "$(acc "${Z}_mmlu_letters.json" mmlu)" \
                "$(acc "${Z}_cloze.json" cloze)" "$(acc "${Z}_cloze_letters.json" cloze)"
        fi
    } | bar_chart >"$OUT/refined.svg"
    figure refined-bars chart "$OUT/refined.svg" "Letter and cloze accuracy with the final rows masked whole, and with only their entries from the final position to the option letters (the Llama: all its heads; the second Llama, $AGG: its two aggregate heads, named in their bars, on questions about training facts; the hybrid: its attention heads). Drawn by test/demo.sh from the JSON of these commands." \
        llama_demo_base llama_demo_refined ${AGG}_base ${AGG}_refined ${HYBRID:+${HYBRID}_base ${HYBRID}_ablated ${HYBRID}_refined}
    cat <<EOF
<p>$(refined_text "$L" "${L}_mmlu_rows.json" "${L}_cloze_rows.json" "The Llama") $(refined_text "$A" \
        "${A}_mmlu_pairrows.json" "${A}_cloze_pairrows.json" "The second Llama's aggregate heads $(cat "${A}_pair.txt")" cloze_known)$(
        [ -z "$HYBRID" ] || printf ' %s' "$(refined_text "$Z" "${Z}_mmlu_ablated.json" "${Z}_cloze_ablated.json" "The hybrid")")</p>

<h2 id="summary">Summary</h2>
<p>The table <code>make run</code> prints (accuracy as it is, then with the heads ablated or the rows masked):</p>
<pre>$(esc <"$OUT/table.txt")</pre>
<p>Made by <code>make run</code> (<code>test/demo.sh</code>); every number above is in the JSON files beside this page,
and every command it ran in <code>commands.txt</code>.</p>
</body></html>
EOF
}
page >"$OUT/index.html.part"
mv "$OUT/index.html.part" "$OUT/index.html"
echo
echo "page: $OUT/index.html; figures and JSON beside it"
