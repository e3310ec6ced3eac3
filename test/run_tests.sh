#!/bin/sh
# gna's test suite, run by `make test` and `make san`.
#   test/run_tests.sh GNA GNA_TEST [GNA GNA_TEST ...]
# Each pair is a build to test: GNA the gna program, GNA_TEST the C test program (test/gna_test.c);
# `make test` passes the plain build and the ASan+UBSan build. Every check of a model's numbers runs
# twice, as gna runs by default and with --reference (gna.c's Part I alone), each against the
# reference results. Prints one line per check and ends with "N passed, N failed" over all builds;
# exits 1 if anything failed. Each build's README.md C example (example, beside GNA_TEST) runs too.
# RUN, if set, is put before every run of GNA and GNA_TEST: `make test-arm` sets it to qemu-aarch64
# to run an aarch64 build on this machine.
set -u
RUN=${RUN:-}
QUICK=${QUICK:-}   # make check: each fixture once (no --reference), no slow process checks, no Python or demo
REFERENCE=--reference
[ -n "$QUICK" ] && REFERENCE=""
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
LABEL=""
tab=$(printf '\t')

pass() { passed=$((passed + 1)); printf 'ok   %s%s\n' "$LABEL" "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL %s%s\n' "$LABEL" "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/     /'; }

# Counts the ok/FAIL lines a C test run printed; a crash or a silent exit is a failure of its own.
count_c_checks() { # name, status, output file
    sed "s/^\(ok  \|FAIL\) /\1 $LABEL/" "$3"
    p=$(grep -c '^ok ' "$3")
    f=$(grep -c '^FAIL ' "$3")
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then fail "$1" "exited with status $2 and no failed check (crashed?)"; fi
}

run_suite() {
GNA=$1
GNA_TEST=$2
EXAMPLE=$(dirname "$GNA_TEST")/example # README.md's C example, built beside the test program

# 1. Unit tests of gna.c's parts
$RUN "$GNA_TEST" unit "$TMP" >"$TMP/unit.txt" 2>&1
count_c_checks "unit tests" $? "$TMP/unit.txt"

# 1b. gna.h's argument checks (NULLs, negative counts, a cache of another run, a busy run, a model freed
#     before its run, a log two threads share)
$RUN "$GNA_TEST" api test/models/llama_demo "$TMP" >"$TMP/api.txt" 2>&1
count_c_checks "api checks" $? "$TMP/api.txt"

# 2. Every fixture against transformers' float64 logits, through the command line, then the chunk and
#    thread checks through the library.
for dir in test/fixtures/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    [ "$name" = tokenizers ] && continue # section 6
    [ "$name" = harness ] && continue    # section 2c
    [ "$name" = replace_head ] && continue # section 2b
    [ "$name" = bin ] && continue          # section 5a
    tokens=$(cat "$dir/tokens.txt")
    # zamba2: logits.npy follows the CUDA path (the default), logits_dt_min_clamp.npy transformers' CPU path
    for dt in "" --dt-min-clamp; do
        reference=$dir/logits${dt:+_dt_min_clamp}.npy
        [ -z "$dt" ] || [ -f "$reference" ] || continue
        for mode in "" $REFERENCE; do
            what="$name${dt:+ $dt}${mode:+ $mode}"
            if $RUN "$GNA" logits -q $dt $mode -m "$dir" --tokens "$tokens" -o "$TMP/logits.npy" 2>"$TMP/err" &&
                $RUN "$GNA_TEST" compare "$reference" "$TMP/logits.npy" >"$TMP/cmp" 2>&1; then
                pass "$what: logits equal transformers' float64 logits ($(sed 's/^ *//' "$TMP/cmp"))"
            else
                fail "$what: logits equal transformers' float64 logits" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
            fi
            rm -f "$TMP/logits.npy"
        done
    done

    # --bf16 compute mode, against the same float64 logits with its own tolerance (gna_test.c says
    # why, and why the zamba2 fixtures are left out)
    case "$name" in zamba2_*) ill_conditioned=1 ;; *) ill_conditioned=0 ;; esac
    for mode in "" $REFERENCE; do
        [ $ill_conditioned = 1 ] && break
        if $RUN "$GNA" logits -q --bf16 $mode -m "$dir" --tokens "$tokens" -o "$TMP/logits.npy" 2>"$TMP/err" &&
            $RUN "$GNA_TEST" compare "$dir/logits.npy" "$TMP/logits.npy" --bf16 "$dir" >"$TMP/cmp" 2>&1; then
            pass "$name --bf16$mode: logits within the bf16 tolerance ($(sed 's/^ *//' "$TMP/cmp"))"
        else
            fail "$name --bf16$mode: logits within the bf16 tolerance" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
        fi
        rm -f "$TMP/logits.npy"
    done

    # The layout published checkpoints have: config.json as transformers 4.x wrote it.
    if [ -f "$dir/config_v4.json" ]; then
        rm -rf "$TMP/v4" && mkdir "$TMP/v4"
        cp "$dir/config_v4.json" "$TMP/v4/config.json"
        for f in "$dir"/*.safetensors "$dir"/model.safetensors.index.json; do
            [ -f "$f" ] && ln -s "$PWD/$f" "$TMP/v4/$(basename "$f")"
        done
        if $RUN "$GNA" logits -q -m "$TMP/v4" --tokens "$tokens" -o "$TMP/logits.npy" 2>"$TMP/err" &&
            $RUN "$GNA_TEST" compare "$dir/logits.npy" "$TMP/logits.npy" >"$TMP/cmp" 2>&1; then
            pass "$name: same logits with config.json in the transformers 4.x layout"
        else
            fail "$name: same logits with config.json in the transformers 4.x layout" "$(cat "$TMP/err" "$TMP/cmp")"
        fi
        rm -f "$TMP/logits.npy"
    fi

    # Greedy generation: transformers' float64 argmax continuation of the first 8 tokens.
    expected=$(cat "$dir/generate.txt")
    prompt=$(echo "$expected" | cut -d' ' -f1-8)
    for mode in "" $REFERENCE; do
        got=$($RUN "$GNA" generate -q $mode -m "$dir" --tokens "$prompt" -n 8 --ignore-eos 2>"$TMP/err")
        if [ "$got" = "$expected" ]; then
            pass "$name$mode: greedy generation equals transformers'"
        else
            fail "$name$mode: greedy generation equals transformers'" "expected: $expected
got:      $got $(cat "$TMP/err")"
        fi
    done

    [ -n "$QUICK" ] && continue
    $RUN "$GNA_TEST" chunks "$dir" >"$TMP/chunks.txt" 2>&1
    count_c_checks "$name: chunk checks" $? "$TMP/chunks.txt"
done

# 2b. Interventions and probes against transformers with hooks (weights_tools/fixtures/make_intervention_fixtures.py)
for cases in test/fixtures/*/interventions/cases.tsv; do
    [ -f "$cases" ] || continue
    dir=$(dirname "$(dirname "$cases")")
    name=$(basename "$dir")
    tokens=$(cat "$dir/tokens.txt")
    while IFS="$tab" read -r kind spec file; do
        [ -z "$kind" ] && continue
        for mode in "" $REFERENCE; do
            if [ "$kind" = logits ]; then
                $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" --mask "$spec" -o "$TMP/out.npy" 2>"$TMP/err"
            elif [ "$kind" = surgery ]; then
                # shellcheck disable=SC2086 # the spec is options, words on purpose
                $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" $spec -o "$TMP/out.npy" 2>"$TMP/err"
            else
                $RUN "$GNA" attn -q $mode -m "$dir" --tokens "$tokens" --heads "$spec" -o "$TMP/out.npy" 2>"$TMP/err"
            fi
            if [ $? -eq 0 ] && $RUN "$GNA_TEST" compare "$dir/interventions/$file" "$TMP/out.npy" >"$TMP/cmp" 2>&1; then
                pass "$name$mode: $kind $spec equals transformers with hooks ($(sed 's/^ *//' "$TMP/cmp"))"
            else
                fail "$name$mode: $kind $spec equals transformers with hooks" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
            fi
            rm -f "$TMP/out.npy"
        done
    done <"$cases"
done
# One head from another model (--replace L<l>H<h>=DIR) against a PyTorch reference of the same definition
# in float64 (weights_tools/fixtures/make_head_replacement_fixtures.py): a Llama head into a Llama and into a Llamba
R=test/fixtures/replace_head
if [ -f "$R/cases.tsv" ]; then
    while IFS="$tab" read -r host options file; do
        [ -z "$host" ] && continue
        for mode in "" $REFERENCE; do
            # shellcheck disable=SC2046,SC2086 # the options are words on purpose
            if $RUN "$GNA" logits -q $mode -m "$host" --tokens "$(cat "$host/tokens.txt")" $(echo "$options" | sed "s|DONOR|$R/llama_donor|") \
                -o "$TMP/out.npy" 2>"$TMP/err" && $RUN "$GNA_TEST" compare "$R/$file" "$TMP/out.npy" >"$TMP/cmp" 2>&1; then
                pass "$(basename "$host")$mode $options: equals PyTorch's one-head replacement ($(sed 's/^ *//' "$TMP/cmp"))"
            else
                fail "$(basename "$host")$mode $options: equals PyTorch's one-head replacement" "$(cat "$TMP/err" "$TMP/cmp" 2>/dev/null)"
            fi
            rm -f "$TMP/out.npy"
        done
    done <"$R/cases.tsv"
else
    fail "one-head replacement fixtures" "$R/cases.tsv is missing (weights_tools/fixtures/make_head_replacement_fixtures.py)"
fi
# A replaced head is the donor's: a mask that names it masks the donor's head (ablated, it is the head
# ablated without the replacement; its final row's entries masked, its final row ablated), and gna attn
# records the donor's map, not the map of the head it replaced; in a Llama, and in a Llamba, whose layer
# names its heads as SSM heads.
for case in "$R/llama_host:L1H1" "test/fixtures/llamba_f32:L1H2"; do
    host=${case%:*} head=${case##*:}
    tokens=$(cat "$host/tokens.txt")
    for mode in "" $REFERENCE; do
        donor="--replace $head=$R/llama_donor"
        for run in "plain|" "ablated|--mask $head" "replaced|$donor" "replaced_ablated|$donor --mask $head" \
            "replaced_row|$donor --mask $head@-1" "replaced_entries|$donor --mask $head@-1:0--1"; do
            # shellcheck disable=SC2086 # the options are words on purpose
            $RUN "$GNA" logits -q $mode -m "$host" --tokens "$tokens" ${run#*|} -o "$TMP/${run%%|*}.npy" 2>"$TMP/err"
        done
        $RUN "$GNA" attn -q $mode -m "$host" --tokens "$tokens" --heads "$head" -o "$TMP/own_map.npy" 2>>"$TMP/err"
        # shellcheck disable=SC2086
        $RUN "$GNA" attn -q $mode -m "$host" --tokens "$tokens" --heads "$head" $donor -o "$TMP/donor_map.npy" 2>>"$TMP/err"
        if $RUN "$GNA_TEST" compare "$TMP/ablated.npy" "$TMP/replaced_ablated.npy" >/dev/null 2>&1 &&
            $RUN "$GNA_TEST" compare "$TMP/replaced_row.npy" "$TMP/replaced_entries.npy" >/dev/null 2>&1 &&
            ! cmp -s "$TMP/replaced.npy" "$TMP/replaced_entries.npy" && ! cmp -s "$TMP/plain.npy" "$TMP/replaced.npy" &&
            [ -s "$TMP/own_map.npy" ] && [ -s "$TMP/donor_map.npy" ] && ! cmp -s "$TMP/own_map.npy" "$TMP/donor_map.npy"; then
            pass "$(basename "$host")$mode: a mask or a map of a replaced head ($head) is the donor head's"
        else
            fail "$(basename "$host")$mode: a mask or a map of a replaced head ($head) is the donor head's" "$(cat "$TMP/err")"
        fi
        rm -f "$TMP"/*.npy
    done
done
for fixture in llama_gqa_llama3:1 mamba_f32:1 falcon_mamba_f32:0 mamba2_f32:1 llamba_f32:1; do
    $RUN "$GNA_TEST" properties "test/fixtures/${fixture%%:*}" "${fixture##*:}" >"$TMP/prop.txt" 2>&1
    count_c_checks "${fixture%%:*}: intervention properties" $? "$TMP/prop.txt"
done

$RUN "$GNA_TEST" pair test/fixtures/llama_gqa_llama3 test/fixtures/llamba_f32 >"$TMP/pair.txt" 2>&1
count_c_checks "llama and llamba side by side" $? "$TMP/pair.txt"

# Layer surgery: a layer replaced by the same layer of the same checkpoint changes nothing; one from
# another checkpoint of equal width changes the logits; keeping every layer changes nothing.
dir=test/fixtures/llama_gqa_llama3
tokens=$(cat "$dir/tokens.txt")
for mode in "" $REFERENCE; do
    $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" -o "$TMP/plain.npy"
    $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" --replace "1=$dir" -o "$TMP/self.npy"
    $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" --layers 0-1 -o "$TMP/all.npy"
    $RUN "$GNA" logits -q $mode -m "$dir" --tokens "$tokens" --replace 1=test/fixtures/llama_sharded -o "$TMP/other.npy"
    if cmp -s "$TMP/plain.npy" "$TMP/self.npy" && cmp -s "$TMP/plain.npy" "$TMP/all.npy" && ! cmp -s "$TMP/plain.npy" "$TMP/other.npy"; then
        pass "surgery$mode: --replace with the model's own layer and --layers over all layers change nothing; another donor does"
    else
        fail "surgery$mode: --replace and --layers" "plain/self/all/other logits do not compare as expected"
    fi
done

# gna attn writes the .npy and the SVG together: a panel per head, token text on the axes when the
# folder has a tokenizer.json (here <s> for the BOS)
rm -f "$TMP/a.npy" "$TMP/a.svg"
if $RUN "$GNA" attn -q -m test/bad/good_llama_tokenizer -p "hello hi" --heads 'L0H*' -o "$TMP/a.npy" --svg "$TMP/a.svg" 2>"$TMP/err" &&
    [ "$(grep -c 'attention (max' "$TMP/a.svg")" -eq 2 ] && grep -q '&lt;s&gt;' "$TMP/a.svg" && [ -s "$TMP/a.npy" ]; then
    pass "attn: .npy and SVG, one panel per head, token text on the axes"
else
    fail "attn: .npy and SVG, one panel per head, token text on the axes" "$(cat "$TMP/err")"
fi

# gna attn --json: each head's map statistics (map_statistics) against numpy's reading of the same maps
# (the .npy, rows as |row| / sum |row|), on the demo Llama's attention and the demo Mamba-2's implicit
# attention (negative entries), a prompt of 7 lines; and refused with --rows. The plain build only.
numpy_python=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then numpy_python=$p; break; fi
done
if [ -z "$RUN" ] && [ -z "$LABEL" ] && [ -z "$numpy_python" ]; then
    fail "attn --json: the map statistics against numpy" "needs python3 with numpy (Debian: python3-numpy)"
elif [ -z "$RUN" ] && [ -z "$LABEL" ]; then
    prompt=$(printf 'Memorize the following dictionary:\napple:42\nriver:17\nstone:88\ncloud:5\ntiger:63\nThe value of the key %sstone%s is' "'" "'")
    for model in llama_demo:L1H5,L2H0,L3H1 mamba2_demo:L0H0,L1H1,L3H10; do
        if "$GNA" attn -q -m "test/models/${model%%:*}" -p "$prompt" --heads "${model#*:}" -o "$TMP/m.npy" --json "$TMP/m.json" 2>"$TMP/err" &&
            "$numpy_python" - "$TMP/m.npy" "$TMP/m.json" "${model#*:}" "${model%%:*}" >"$TMP/err" 2>&1 <<'PY'
import json, sys
import numpy as np
maps, got = np.load(sys.argv[1]).astype(np.float64), json.load(open(sys.argv[2]))
n, T = got["newlines"], maps.shape[2]
assert n == [5, 9, 13, 17, 21, 25], n  # the demo tokenizer: "Memorize the following dictionary:" is 5 tokens, each pair 4
edges = [0] + [k + 1 for k in n] + [T]
assert [h["head"] for h in got["heads"]] == sys.argv[3].split(","), got["heads"]
assert {h["map"] for h in got["heads"]} == {"attention" if sys.argv[4] == "llama_demo" else "implicit attention"}
for M, h in zip(maps, got["heads"]):
    r = np.abs(M) / np.abs(M).sum(1, keepdims=True)
    want = {"previous": np.mean([r[t, t - 1] for t in range(1, T)]),
            "own_line": np.mean([r[n[j] - 1, n[j - 1] + 1:n[j] - 1].sum() for j in range(1, len(n))])}
    for key, value in want.items():
        assert abs(h[key] - value) < 1e-12, (h["head"], key, h[key], value)
    lines = [r[-1, a:b].sum() for a, b in zip(edges, edges[1:])]
    assert np.allclose(h["lines"], lines, rtol=0, atol=1e-12), (h["head"], h["lines"], lines)
    k = int(np.argmax(np.abs(M[-1])))
    assert h["largest"]["position"] == k and abs(h["largest"]["share"] - r[-1, k]) < 1e-12, (h["head"], h["largest"], k)
PY
        then pass "attn --json: ${model%%:*}'s map statistics equal numpy's on the .npy"
        else fail "attn --json: ${model%%:*}'s map statistics equal numpy's on the .npy" "$(cat "$TMP/err")"
        fi
    done
    if "$GNA" attn -q -m test/models/llama_demo -p "$prompt" --heads L1H5 -o "$TMP/m.npy" --json "$TMP/r.json" --rows -1 2>"$TMP/err"; then
        fail "attn --json with --rows: refused" "exit 0"
    else
        [ $? -eq 2 ] && [ ! -e "$TMP/r.json" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass "attn --json with --rows: refused (exit 2, one line)" ||
            fail "attn --json with --rows: refused (exit 2, one line)" "$(cat "$TMP/err")"
    fi
fi

# 2c. Harnesses (gna kv, mmlu, mc) against a Python reference that mirrors lm-evaluation-harness
#     0.4.x and the paper's KV code, with transformers in float64 (weights_tools/fixtures/make_harness_fixtures.py):
#     each case's prompts, log-likelihoods, choices and aggregated results.
H=test/fixtures/harness
rm -rf "$TMP/llama3_tiny" && mkdir "$TMP/llama3_tiny" && cp "$H"/llama3_tiny/* "$TMP/llama3_tiny/" &&
    cp "$LLAMA3" "$TMP/llama3_tiny/tokenizer.json" 2>/dev/null
for case_dir in "$H"/cases/*/; do
    case_dir=${case_dir%/}
    for mode in "" $REFERENCE; do
        name="$(basename "$case_dir")$mode"
        args="$(sed "s|MODEL_LLAMA3|$TMP/llama3_tiny|g" "$case_dir/command.txt") $mode"
        rm -f "$TMP/h.jsonl" "$TMP/h.json"
        if [ -f "$case_dir/expected_heads.json" ]; then # gna heads: scores of every head, ablations, pairs
            # shellcheck disable=SC2086
            if $RUN "$GNA" $args --json "$TMP/h.json" >"$TMP/out" 2>"$TMP/err"; then
                $RUN "$GNA_TEST" heads "$case_dir/expected_heads.json" "$TMP/h.json" >"$TMP/cmp.txt" 2>&1
                count_c_checks "harness $name" $? "$TMP/cmp.txt"
            else
                fail "harness $name: gna $args" "$(cat "$TMP/err")"
            fi
            if [ -z "$mode" ]; then # the same sweep in 3 shards, merged: one run's JSON byte for byte, its tables
                ok=1
                # shellcheck disable=SC2086
                for i in 1 2 3; do $RUN "$GNA" $args --sweep 4 --shard $i/3 --json "$TMP/part$i.json" >/dev/null 2>"$TMP/err" || ok=0; done
                # shellcheck disable=SC2086
                $RUN "$GNA" $args --sweep 4 --json "$TMP/one.json" >"$TMP/one.txt" 2>>"$TMP/err" || ok=0
                $RUN "$GNA" merge "$TMP/part1.json" "$TMP/part2.json" "$TMP/part3.json" --json "$TMP/merged.json" >"$TMP/merged.txt" 2>>"$TMP/err" || ok=0
                if [ $ok = 1 ] && cmp -s "$TMP/one.json" "$TMP/merged.json" && [ "$(tail -n +2 "$TMP/one.txt")" = "$(tail -n +2 "$TMP/merged.txt")" ]; then
                    pass "harness $name --sweep 4 in 3 shards, merged: one run's JSON and tables"
                else
                    fail "harness $name --sweep 4 in 3 shards, merged" "$(cat "$TMP/err"; diff "$TMP/one.json" "$TMP/merged.json" | head -5)"
                fi
            fi
            continue
        fi
        # shellcheck disable=SC2086 # the arguments are words on purpose
        if $RUN "$GNA" $args -q --log "$TMP/h.jsonl" --json "$TMP/h.json" >"$TMP/out" 2>"$TMP/err"; then
            { $RUN "$GNA_TEST" harness "$case_dir/expected_log.jsonl" "$TMP/h.jsonl" &&
                $RUN "$GNA_TEST" results "$case_dir/expected_results.json" "$TMP/h.json"; } >"$TMP/cmp.txt" 2>&1
            count_c_checks "harness $name" $? "$TMP/cmp.txt"
        else
            fail "harness $name: gna $args" "$(cat "$TMP/err")"
        fi
    done
done
# merge names what is wrong with a set of gna heads parts (those of the last heads case)
cp "$TMP/part2.json" "$TMP/again.json"
sed 's/"accuracy": [0-9.e-]*/"accuracy": 0.123/' "$TMP/part3.json" >"$TMP/other.json"
for refusal in "shard 2/3 is missing|part1.json part3.json" "is shard 2/3, which is given twice|part1.json part2.json again.json part3.json" \
    "is a part of another run than|part1.json part2.json other.json"; do
    expect=${refusal%%|*}
    files=$(printf '%s\n' "${refusal#*|}" | tr ' ' '\n' | sed "s|^|$TMP/|" | tr '\n' ' ')
    rm -f "$TMP/refused.json"
    # shellcheck disable=SC2086
    $RUN "$GNA" merge $files --json "$TMP/refused.json" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$expect" "$TMP/err" && [ ! -e "$TMP/refused.json" ]; then
        pass "merge of gna heads parts refused: $(cat "$TMP/err")"
    else
        fail "merge of gna heads parts refused ($expect)" "exit $rc: $(cat "$TMP/err")"
    fi
done
# gsm8k's filters and exact match, and Python's random.sample, against Python's own (make_task_fixtures.py)
$RUN "$GNA_TEST" tasks "$H/gsm8k_filters.jsonl" "$H/python_random.jsonl" >"$TMP/tasks.txt" 2>&1
count_c_checks "gsm8k filters and Python's random" $? "$TMP/tasks.txt"
if [ -z "$QUICK" ]; then # the rest of the harness checks run processes that take their time
# the same questions from the CSV tree and from JSONL give the same log
for shots in 0 5; do
    $RUN "$GNA" mmlu -q -m "$TMP/llama3_tiny" --data "$H/data/mmlu" --shots $shots --log "$TMP/csv.jsonl" >/dev/null 2>"$TMP/err"
    $RUN "$GNA" mmlu -q -m "$TMP/llama3_tiny" --data "$H/data/mmlu.jsonl" --shots $shots --log "$TMP/jsonl.jsonl" >/dev/null 2>>"$TMP/err"
    if [ -s "$TMP/csv.jsonl" ] && [ "$(tail -n +2 "$TMP/csv.jsonl")" = "$(tail -n +2 "$TMP/jsonl.jsonl")" ]; then
        pass "mmlu $shots-shot: the CSV tree and the JSONL file give the same log"
    else
        fail "mmlu $shots-shot: the CSV tree and the JSONL file give the same log" "$(cat "$TMP/err")"
    fi
    rm -f "$TMP/csv.jsonl" "$TMP/jsonl.jsonl"
done
# a subject's few-shot prefix and each question's context run once, and their caches are reused:
# the same as running every request whole
$RUN "$GNA_TEST" reuse "$TMP" mmlu -m "$H/mamba2_tiny" --data "$H/data/mmlu" --shots 5 >"$TMP/reuse.txt" 2>&1
count_c_checks "mmlu cache reuse (mamba2)" $? "$TMP/reuse.txt"
$RUN "$GNA_TEST" reuse "$TMP" kv -m "$TMP/llama3_tiny" --keys "$H/data/keys.txt" --pairs 4,8 --samples 3 --mask L1H0 >"$TMP/reuse.txt" 2>&1
count_c_checks "kv cache reuse (llama)" $? "$TMP/reuse.txt"
# --shard i/n and gna merge give the results of one run; a run killed part-way resumes from its log
# into the same log and results; the --threads count changes nothing
kv="kv -q -m $H/mamba2_tiny --keys $H/data/keys.txt --pairs 3,6,9 --samples 5 --seed 3 --mask L1H1"
long_kv="kv -q -m $H/mamba2_tiny --keys $H/data/keys.txt --pairs 3,6,9 --samples 60 --seed 3"
# shellcheck disable=SC2086
$RUN "$GNA" $kv --log "$TMP/one.jsonl" --json "$TMP/one.json" --svg "$TMP/kv.svg" >"$TMP/one.txt" 2>"$TMP/err"
for i in 1 2 3; do
    # shellcheck disable=SC2086
    $RUN "$GNA" $kv --shard $i/3 --log "$TMP/shard$i.jsonl" >/dev/null 2>>"$TMP/err"
done
$RUN "$GNA" merge "$TMP/shard2.jsonl" "$TMP/shard1.jsonl" "$TMP/shard3.jsonl" --json "$TMP/merged.json" >"$TMP/merged.txt" 2>>"$TMP/err"
if [ -s "$TMP/one.json" ] && cmp -s "$TMP/one.json" "$TMP/merged.json" && cmp -s "$TMP/one.txt" "$TMP/merged.txt"; then
    pass "kv: 3 shards merged = one run (results JSON and table)"
else
    fail "kv: 3 shards merged = one run" "$(cat "$TMP/err"; diff "$TMP/one.json" "$TMP/merged.json")"
fi
if grep -q '<polyline' "$TMP/kv.svg" && [ "$(grep -c '<circle' "$TMP/kv.svg")" -eq 6 ]; then
    pass "kv --svg: accuracy against pairs, with and without the mask"
else
    fail "kv --svg: accuracy against pairs, with and without the mask" "$(head -c 300 "$TMP/kv.svg")"
fi
head -c 2500 "$TMP/one.jsonl" >"$TMP/cut.jsonl" # a kill in the middle of a line
# shellcheck disable=SC2086
$RUN "$GNA" $kv --log "$TMP/cut.jsonl" --json "$TMP/cut.json" --threads 1 >/dev/null 2>"$TMP/err"
if cmp -s "$TMP/one.jsonl" "$TMP/cut.jsonl" && cmp -s "$TMP/one.json" "$TMP/cut.json"; then
    pass "kv: a log cut in the middle of a line resumes into the same log and results (--threads 1)"
else
    fail "kv: a log cut in the middle of a line resumes into the same log and results" "$(cat "$TMP/err")"
fi
rm -f "$TMP/killed.jsonl"
# shellcheck disable=SC2086
$RUN "$GNA" $kv --log "$TMP/killed.jsonl" >/dev/null 2>&1 &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    [ -f "$TMP/killed.jsonl" ] && [ "$(wc -l <"$TMP/killed.jsonl")" -ge 4 ] && break
    sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
lines=$(wc -l <"$TMP/killed.jsonl")
# shellcheck disable=SC2086
$RUN "$GNA" $kv --log "$TMP/killed.jsonl" --json "$TMP/killed.json" >/dev/null 2>"$TMP/err"
if cmp -s "$TMP/one.jsonl" "$TMP/killed.jsonl" && cmp -s "$TMP/one.json" "$TMP/killed.json"; then
    pass "kv: a run killed (SIGKILL) after $lines log lines resumes into the same log and results"
else
    fail "kv: a run killed (SIGKILL) resumes into the same log and results" "$(cat "$TMP/err")"
fi
# a run started with SIGINT ignored (a shell's background job, nohup) runs on through a SIGINT and gives
# the results of an undisturbed run: gna installs its handlers only where its parent left a signal alone
rm -f "$TMP/ignored.jsonl" "$TMP/ignored.json"
# shellcheck disable=SC2086
(trap '' INT; exec $RUN "$GNA" $long_kv --log "$TMP/ignored.jsonl" --json "$TMP/ignored.json" >/dev/null 2>"$TMP/err") &
pid=$!
for _ in $(seq 1 600); do
    [ -f "$TMP/ignored.jsonl" ] && [ "$(wc -l <"$TMP/ignored.jsonl")" -ge 3 ] && break
    sleep 0.1
done
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
# shellcheck disable=SC2086
$RUN "$GNA" $long_kv --json "$TMP/undisturbed.json" >/dev/null 2>>"$TMP/err"
if [ $rc -eq 0 ] && [ -s "$TMP/ignored.json" ] && cmp -s "$TMP/ignored.json" "$TMP/undisturbed.json"; then
    pass "kv started with SIGINT ignored: a SIGINT neither kills it nor changes its results"
else
    fail "kv started with SIGINT ignored: a SIGINT neither kills it nor changes its results" "status $rc: $(cat "$TMP/err")"
fi
# a checkpoint truncated by another program while gna reads it: one line naming the file, exit 2 (the
# program's SIGBUS handler), no output file left (not under qemu-user, whose SIGBUS is its own)
if [ -z "$RUN" ]; then
    rm -rf "$TMP/shrinks" && mkdir "$TMP/shrinks" && cp test/models/llama_demo/* "$TMP/shrinks/"
    "$GNA" kv -q -m "$TMP/shrinks" --pairs 50 --samples 3000 --json "$TMP/shrinks.json" >/dev/null 2>"$TMP/err" &
    pid=$!
    sleep 1
    truncate -s 4096 "$TMP/shrinks/model.safetensors"
    wait $pid
    rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "shrinks/model.safetensors: the file shrank" "$TMP/err" &&
        [ ! -e "$TMP/shrinks.json" ]; then
        pass "a checkpoint truncated under gna: exit 2, one line naming it ($(cat "$TMP/err"))"
    else
        fail "a checkpoint truncated under gna: exit 2, one line naming it" "status $rc: $(cat "$TMP/err")"
    fi
fi
# two runs given one --log: the second is refused while the first holds it (exit 2, one line), and the
# log, resumed after the first is killed, gives what one run gives
long="kv -q -m $H/mamba2_tiny --keys $H/data/keys.txt --pairs 3,6,9 --samples 200 --seed 3"
rm -f "$TMP/shared.jsonl"
# shellcheck disable=SC2086
$RUN "$GNA" $long --log "$TMP/shared.jsonl" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    [ -f "$TMP/shared.jsonl" ] && [ "$(wc -l <"$TMP/shared.jsonl")" -ge 2 ] && break
    sleep 0.1
done
# shellcheck disable=SC2086
$RUN "$GNA" $long --log "$TMP/shared.jsonl" >/dev/null 2>"$TMP/err"
rc=$?
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
# shellcheck disable=SC2086
$RUN "$GNA" $long --log "$TMP/shared.jsonl" --json "$TMP/shared.json" >/dev/null 2>>"$TMP/err" &&
    $RUN "$GNA" $long --json "$TMP/whole.json" >/dev/null 2>>"$TMP/err"
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "shared.jsonl: is the log of another gna run now" "$TMP/err" &&
    [ -s "$TMP/whole.json" ] && cmp -s "$TMP/shared.json" "$TMP/whole.json" && [ "$(wc -l <"$TMP/shared.jsonl")" -eq 601 ]; then
    pass "kv: a second run on a log in use is refused (exit 2), and the log resumes without loss"
else
    fail "kv: a second run on a log in use is refused (exit 2), and the log resumes without loss" "status $rc: $(cat "$TMP/err")"
fi
mmlu="mmlu -q -m $H/mamba2_tiny --data $H/data/mmlu --shots 2"
# shellcheck disable=SC2086
$RUN "$GNA" $mmlu --json "$TMP/m1.json" >/dev/null 2>"$TMP/err" &&
    $RUN "$GNA" $mmlu --shard 1/2 --log "$TMP/m1.jsonl" >/dev/null 2>>"$TMP/err" &&
    $RUN "$GNA" $mmlu --shard 2/2 --log "$TMP/m2.jsonl" >/dev/null 2>>"$TMP/err" &&
    $RUN "$GNA" merge "$TMP/m1.jsonl" "$TMP/m2.jsonl" --json "$TMP/m.json" >/dev/null 2>>"$TMP/err"
if [ -s "$TMP/m.json" ] && cmp -s "$TMP/m1.json" "$TMP/m.json"; then
    pass "mmlu: 2 shards merged = one run"
else
    fail "mmlu: 2 shards merged = one run" "$(cat "$TMP/err")"
fi
# subject names of any length stay whole: two that share their first 300 bytes are two tasks
long=$(printf 's%.0s' $(seq 1 300))
for x in a b; do
    printf '{"subject": "%s%s", "question": "Q?", "choices": ["1", "2", "3", "4"], "answer": 0}\n' "$long" "$x"
done >"$TMP/long.jsonl"
$RUN "$GNA" mmlu -q -m test/bad/good_llama_tokenizer --data "$TMP/long.jsonl" --json "$TMP/long.json" >/dev/null 2>"$TMP/err"
if [ "$(grep -c "\"mmlu_${long}[ab]\"" "$TMP/long.json")" -eq 4 ]; then
    pass "mmlu: subjects with 300-byte names that differ after them stay two tasks"
else
    fail "mmlu: subjects with 300-byte names that differ after them stay two tasks" "$(cat "$TMP/err" "$TMP/long.json")"
fi
rm -f "$TMP"/*.jsonl "$TMP"/*.json

fi

# 3. Sampling is reproducible from its seed, and differs across seeds.
dir=test/fixtures/llama_gqa_llama3
a=$($RUN "$GNA" generate -q -m $dir --tokens 1,2,3 -n 12 --temp 1.5 --seed 7 --ignore-eos)
b=$($RUN "$GNA" generate -q -m $dir --tokens 1,2,3 -n 12 --temp 1.5 --seed 7 --ignore-eos)
c=$($RUN "$GNA" generate -q -m $dir --tokens 1,2,3 -n 12 --temp 1.5 --seed 8 --ignore-eos)
if [ "$a" = "$b" ] && [ "$a" != "$c" ] && [ "$(echo "$a" | wc -w)" -eq 15 ]; then
    pass "generate: --temp sampling is reproducible from --seed"
else
    fail "generate: --temp sampling is reproducible from --seed" "seed 7: $a / $b; seed 8: $c"
fi

# 3b. README.md's C example: ablating the demo Llama's aggregate head changes the logit it prints
if out=$($RUN "$EXAMPLE" test/models/llama_demo 2>&1) && [ "$(printf '%s\n' "$out" | grep -c 'logit of')" -eq 2 ] &&
    [ "$(printf '%s\n' "$out" | sed -n 's/.*: //p' | sort -u | wc -l)" -eq 2 ]; then
    pass "README's C example: $(printf '%s' "$out" | tr '\n' ' ')"
else
    fail "README's C example runs and the ablation changes the logit" "$out"
fi

# 3c. Part I, the definitions, comes first in gna.c and stays under 2,500 lines (README, How to audit gna.c)
part1=$(awk '/^\/\* ===== PART I:/ { s = NR } /^\/\* ===== PART II:/ { print NR - s; exit }' gna.c)
if [ -n "$part1" ] && [ "$part1" -lt 2500 ] && [ "$(grep -n '^/\* ===== PART I:' gna.c | cut -d: -f1)" -lt 100 ]; then
    pass "gna.c's Part I comes first and is $part1 lines (under 2,500)"
else
    fail "gna.c's Part I is ${part1:-not found} lines, or not first"
fi

# 4. --help describes every command's options, and exactly those: each option its help lists is
# taken (whatever else is then missing), each option only other commands list is refused as not its own
COMMANDS="info tokenize detokenize logits lens generate attn kv mmlu mc knowledge gsm8k heads merge"
for cmd in $COMMANDS; do "$GNA" "$cmd" --help 2>&1 | sed -n 's/^  \(-[a-z0-9-]*\).*/\1/p' | sed 's/^-h$/--help/' >"$TMP/opts_$cmd"; done
for cmd in $COMMANDS; do
    bad=""
    if $RUN "$GNA" "$cmd" --help >"$TMP/help" 2>&1 && grep -q "usage: gna $cmd" "$TMP/help" && { [ $cmd = merge ] || grep -q -- "--threads" "$TMP/help"; }; then :; else bad="no usage or --threads"; fi
    for opt in $(cat "$TMP"/opts_* | sort -u); do
        "$GNA" "$cmd" "$opt" 1 >/dev/null 2>"$TMP/err"
        if grep -qx -- "$opt" "$TMP/opts_$cmd"; then grep -q -- "error: $opt: \(not an option\|unknown option\)" "$TMP/err" && bad="$bad; $opt refused"
        else grep -q "not an option of 'gna $cmd'" "$TMP/err" || bad="$bad; $opt taken: $(cat "$TMP/err")"; fi
    done
    if [ -z "$bad" ]; then pass "gna $cmd --help lists exactly the options it takes ($(wc -l <"$TMP/opts_$cmd"))"; else fail "gna $cmd --help" "$bad"; fi
done
# an option that makes the run, repeated 300 times, overran the options kept for the run (a crash)
$RUN "$GNA" logits -m test/models/llama_demo --tokens 1 $(seq 300 | sed 's/.*/--bf16/') >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ]; then pass "300 run options: exit 2, one line"; else fail "300 run options: exit $rc" "$(cat "$TMP/err")"; fi

# 5. The bad-input corpus (test/bad, made by weights_tools/fixtures/make_bad_inputs.py): each case exits with
#    its status; an error is exactly one line, "gna: error: ...", holding the expected text; no output
#    file is left behind by a failed run.
BAD=test/bad
tab=$(printf '\t')
while IFS="$tab" read -r name status expected args; do
    [ -z "$name" ] && continue
    rm -f "$TMP"/*.npy
    args=$(printf '%s' "$args" | sed "s|\$BAD|$BAD|g; s|\$TMP|$TMP|g")
    # shellcheck disable=SC2086 # the arguments are words on purpose
    $RUN "$GNA" $args >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ "$expected" = "-" ] && expected=""
    expected=$(printf '%s' "$expected" | sed "s|\$BAD|$BAD|g")
    lines=$(wc -l <"$TMP/err")
    leftover=$(ls "$TMP"/*.npy "$TMP"/.*.gna-* 2>/dev/null | grep -v good.npy)
    if [ "$status" = 0 ]; then
        if [ $rc -eq 0 ] && [ -s "$TMP/good.npy" ]; then pass "bad input: $name (the valid base) runs"
        else fail "bad input: $name (the valid base) runs" "status $rc: $(cat "$TMP/err")"; fi
    elif [ $rc -eq "$status" ] && [ "$lines" -eq 1 ] && grep -q '^gna: error: ' "$TMP/err" &&
        grep -qF -- "$expected" "$TMP/err" && [ -z "$leftover" ]; then
        pass "bad input: $name -> $(cat "$TMP/err")"
    else
        fail "bad input: $name" "expected status $status and one line with: $expected
got status $rc, $lines line(s): $(cat "$TMP/err")${leftover:+
left behind: $leftover}"
    fi
done <"$BAD/cases.tsv"

# An output that is a device or a FIFO (made here: never /dev's) is written in place and stays one, in every
# build (the sanitizers' too: a path resolved and not freed was a leak there)
rm -f "$TMP/node" "$TMP/fifo" "$TMP/fifo.out"
if mknod "$TMP/node" c 1 3 2>/dev/null || mkfifo "$TMP/node"; then
    mkfifo "$TMP/fifo"
    cat "$TMP/fifo" >"$TMP/fifo.out" &
    reader=$!
    ok=1
    [ -p "$TMP/node" ] && { cat "$TMP/node" >/dev/null & }
    $RUN "$GNA" logits -q -m test/bad/good_llama --tokens 1,2 -o "$TMP/node" 2>"$TMP/err" || ok=0
    $RUN "$GNA" logits -q -m test/bad/good_llama --tokens 1,2 -o "$TMP/fifo" 2>>"$TMP/err" || ok=0
    waited=0
    while kill -0 $reader 2>/dev/null && [ $waited -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill $reader 2>/dev/null
    if [ $ok = 1 ] && { [ -c "$TMP/node" ] || [ -p "$TMP/node" ]; } && [ -p "$TMP/fifo" ] && [ -s "$TMP/fifo.out" ] &&
        [ -z "$(ls "$TMP"/.*.gna-* 2>/dev/null)" ]; then
        pass "an output that is a device node or a FIFO: written in place, still one"
    else
        fail "an output that is a device node or a FIFO: written in place, still one" "$(cat "$TMP/err")"
    fi
    rm -f "$TMP/node" "$TMP/fifo" "$TMP/fifo.out"
else
    fail "an output that is a device node or a FIFO" "neither mknod nor mkfifo worked in $TMP"
fi

# 5a. pytorch_model.bin checkpoints (what the authors' save_pretrained writes) converted to safetensors
#     without torch (weights_tools/convert/bin_to_safetensors.py): the same logits as the original fixtures, and
#     hostile pickles refused. And the demo models' evaluation files are the recipe's: train_demo.py (its world and
#     writer need no torch) writes them again for its default seed, 1234, byte for byte test/models/demo_data.
#     The plain build on this machine only (they need python3).
if [ -z "$RUN" ] && [ -z "$LABEL" ]; then
    plain_python=$(command -v python3 || echo /usr/bin/python3)
    sh test/check_convert.sh "$GNA" "$plain_python" "$TMP/convert" >"$TMP/convert.txt" 2>&1
    count_c_checks "the .bin converter" $? "$TMP/convert.txt"
    rm -rf "$TMP/demo_data"
    if "$plain_python" -c 'import sys; sys.path.insert(0, "weights_tools/demo"); import train_demo as T
T.write_eval_data(sys.argv[1], T.make_world(1234, T.read_kv_keys("gna.c")), 1234, 40)' "$TMP/demo_data" >"$TMP/err" 2>&1 &&
        diff -r test/models/demo_data "$TMP/demo_data/demo_data" >"$TMP/err" 2>&1; then
        pass "test/models/demo_data is what train_demo.py writes for seed 1234"
    else
        fail "test/models/demo_data is what train_demo.py writes for seed 1234" "$(head -5 "$TMP/err")"
    fi
    rm -rf "$TMP/demo_data"
fi

[ -n "$QUICK" ] && return # make check stops here: the rest is the Python binding, the demo, and limits
# A checkpoint past the address space (a sparse 5 GB file: no disk used): a 64-bit host maps it and
# runs; a 32-bit one (or wasm32) refuses it in one line, exit 2, never with a wrapped size
mkdir -p "$TMP/big" && cp test/bad/good_llama/config.json test/bad/good_llama/model.safetensors "$TMP/big/" &&
    truncate -s 5G "$TMP/big/model.safetensors"
$RUN "$GNA" logits -q -m "$TMP/big" --tokens 1,2 -o "$TMP/big/out.npy" >/dev/null 2>"$TMP/err"
rc=$?
if { [ $rc -eq 0 ] && [ -s "$TMP/big/out.npy" ]; } ||
    { [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "address space" "$TMP/err"; }; then
    pass "a 5 GB checkpoint: status $rc ($( [ $rc -eq 0 ] && echo "mapped and run" || cat "$TMP/err"))"
else
    fail "a 5 GB checkpoint: runs (64-bit) or exit 2 in one line (32-bit)" "status $rc: $(cat "$TMP/err")"
fi
rm -rf "$TMP/big"

# 5b. The Python binding (weights_tools/binding/gna.py over build/libgna.so, which `make test` builds with the
#     flags of ./gna): its numbers equal the program's bit for bit. The plain build on this machine only.
if [ -z "$RUN" ] && [ -z "$LABEL" ]; then
    python=""
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then python=$p; break; fi
    done
    if [ -z "$python" ]; then
        fail "the Python binding" "needs python3 with numpy (Debian: python3-numpy)"
    elif [ ! -f build/libgna.so ]; then
        fail "the Python binding" "build/libgna.so is missing (make lib)"
    else
        "$python" test/test_python.py "$GNA" >"$TMP/python_all.txt" 2>&1
        rc=$?
        grep -v ' passed, .* failed$' "$TMP/python_all.txt" >"$TMP/python.txt"
        count_c_checks "the Python binding" $rc "$TMP/python.txt"
    fi
fi

# 5b'. The demo (make run, about 45 s on two cores) into a temporary folder, and its page: well-formed,
#     complete (the hybrid's section too when test/models has it) and self-contained (test/check_page.py),
#     and the check itself rejects broken copies of the page. The plain build on this machine only.
if [ -z "$RUN" ] && [ -z "$LABEL" ] && [ -n "${python:-}" ]; then
    hybrid=""
    [ -f test/models/zamba2_demo/model.safetensors ] && hybrid=--hybrid
    if GNA=$GNA GNA_DEMO_OUT="$TMP/demo" sh test/demo.sh >"$TMP/demo.txt" 2>&1; then
        pass "make run (test/demo.sh) writes its page"
        "$python" test/check_page.py "$TMP/demo/index.html" $hybrid >"$TMP/page.txt" 2>&1
        count_c_checks "the demo page" $? "$TMP/page.txt"
        "$python" test/check_page.py "$TMP/demo/index.html" --self-test >"$TMP/page.txt" 2>&1
        count_c_checks "the demo page's check" $? "$TMP/page.txt"
    else
        fail "make run (test/demo.sh) writes its page" "$(tail -5 "$TMP/demo.txt")"
    fi
    rm -rf "$TMP/demo"
fi

# 5c. Out of memory (a 12 MB address-space limit; the run needs about 30): one line, status 1, and no
#     file left behind, neither the output nor its temporary (open by then, and removed on the way
#     out). The plain build on this machine only: the sanitizers and qemu need more address space.
if [ -z "$RUN" ] && [ -z "$LABEL" ]; then
    rm -f "$TMP"/*.npy "$TMP"/.*.gna-*
    ids=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%s%d", i ? "," : "", i % 100 }')
    (ulimit -v 12000 && exec "$GNA" logits -m test/fixtures/llama_gqa_llama3 --tokens "$ids" --threads 1 -o "$TMP/oom.npy") >"$TMP/out" 2>"$TMP/err"
    rc=$?
    leftover=$(ls "$TMP"/*.npy "$TMP"/.*.gna-* 2>/dev/null)
    if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^gna: error: out of memory: asked for [0-9]* bytes$' "$TMP/err" &&
        [ -z "$leftover" ]; then
        pass "out of memory -> $(cat "$TMP/err"), nothing left behind"
    else
        fail "out of memory: status 1, one line, nothing left behind" "got status $rc: $(cat "$TMP/err")${leftover:+
left behind: $leftover}"
    fi
    # through the library: GNA_FAILURE, and the caller goes on (gna.c has no exit())
    (ulimit -v 400000 && exec "$GNA_TEST" oom test/fixtures/llama_gqa_llama3) >"$TMP/oom.txt" 2>&1
    count_c_checks "out of memory through the library" $? "$TMP/oom.txt"
fi

# 5d. Interrupted (SIGTERM, or SIGHUP as a closed terminal sends, once the temporary output exists, in a run
#     that would take about 10 s): the signal's status, and no file left behind.
if [ -z "$RUN" ] && [ -z "$LABEL" ]; then
    ids=$(awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%s%d", i ? "," : "", i % 100 }')
    signals="TERM:143"
    [ -z "$(sh -c 'kill -HUP $$; echo ignored')" ] && signals="$signals HUP:129" # not under nohup, which ignores it
    for sig in $signals; do
        rm -f "$TMP"/*.npy "$TMP"/.*.gna-*
        "$GNA" logits -q -m test/fixtures/llama_gqa_llama3 --tokens "$ids" --threads 1 -o "$TMP/term.npy" 2>"$TMP/err" &
        pid=$!
        waited=0
        while [ -z "$(ls "$TMP"/.*.gna-* 2>/dev/null)" ] && [ $waited -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
        kill -"${sig%:*}" $pid 2>/dev/null
        wait $pid 2>/dev/null
        rc=$?
        leftover=$(ls "$TMP"/*.npy "$TMP"/.*.gna-* 2>/dev/null)
        if [ $waited -lt 100 ] && [ $rc -eq "${sig#*:}" ] && [ -z "$leftover" ]; then
            pass "SIG${sig%:*} while writing: status ${sig#*:}, nothing left behind"
        else
            fail "SIG${sig%:*} while writing: status ${sig#*:}, nothing left behind" "got status $rc after ${waited}00 ms: $(cat "$TMP/err")${leftover:+
left behind: $leftover}"
        fi
    done
fi

# 5e. Outputs that cannot be written, or would destroy what a run reads, refused before any work (II.9),
#     in one line with status 2: a link to nothing, a socket, a file inside --data's folder (gna reads the
#     files there), the model's tokenizer_config.json; and a name of 250 bytes is written (its temporary's
#     name fits NAME_MAX).
if [ -z "$RUN" ] && [ -z "$LABEL" ] && command -v python3 >/dev/null 2>&1; then
    o=$TMP/outputs
    mkdir -p "$o" && cp -r test/fixtures/harness/data/mmlu "$o/mmlu" && cp -r test/bad/good_llama_tokenizer "$o/m" &&
        printf '{}\n' >"$o/m/tokenizer_config.json" && ln -s nowhere.json "$o/dangling.json" &&
        python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$o/socket"
    for case in "dangling.json|is a symbolic link to nothing" "socket|is a socket" "mmlu/new.json|is inside --data's folder" \
        "m/tokenizer_config.json|is also an input of this run"; do
        "$GNA" mmlu -q -m "$o/m" --data "$o/mmlu" --limit 1 --json "$o/${case%%|*}" >/dev/null 2>"$TMP/err"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF -- "${case#*|}" "$TMP/err" && [ ! -e "$o/mmlu/new.json" ] &&
            [ "$(cat "$o/m/tokenizer_config.json")" = "{}" ]; then
            pass "an output that is ${case%%|*} -> $(cat "$TMP/err")"
        else
            fail "an output that is ${case%%|*}: status 2, one line with \"${case#*|}\"" "got status $rc: $(cat "$TMP/err")"
        fi
    done
    long=$(awk 'BEGIN { for (i = 0; i < 246; i++) printf "y" }').npy
    if "$GNA" logits -q -m test/bad/good_llama --tokens 1 -o "$o/$long" 2>"$TMP/err" && [ -s "$o/$long" ]; then
        pass "an output named in 250 bytes is written"
    else
        fail "an output named in 250 bytes is written" "$(cat "$TMP/err")"
    fi
    rm -rf "$o"
fi

# 6. Tokenizers against Hugging Face tokenizers' ids: the real Llama-3.1 and Llama-2 tokenizer.json
#    (test/.cache, fetched below) and the two trained ones in test/fixtures/tokenizers, each on every
#    text of test/fixtures/tokenizers/expected_<name>.jsonl (weights_tools/fixtures/make_tokenizer_fixtures.py).
#    A missing file is a failure, not a skip.
for name in llama3 llama2 falcon neox; do
    case $name in
    llama3) json=$LLAMA3 ;;
    llama2) json=$LLAMA2 ;;
    *) json=$TOKENIZERS/$name/tokenizer.json ;;
    esac
    $RUN "$GNA_TEST" tokenizer "$json" "$TOKENIZERS/expected_$name.jsonl" >"$TMP/tok.txt" 2>&1
    count_c_checks "tokenizer $name" $? "$TMP/tok.txt"
done

# 7. The tokenizer commands (ids checked by hand against HF tokenizers)
check_output() { # name, expected output, command...
    name=$1 expected=$2
    shift 2
    got=$("$@" 2>"$TMP/err")
    if [ "$got" = "$expected" ]; then pass "$name"
    else fail "$name" "expected: $expected
got:      $got $(cat "$TMP/err")"; fi
}
check_output "tokenize: Llama-3.1 adds <|begin_of_text|>" "128000 9906 1917" $RUN "$GNA" tokenize --tokenizer "$LLAMA3" -p "Hello world"
check_output "tokenize: --no-special" "9906 1917" $RUN "$GNA" tokenize --tokenizer "$LLAMA3" -p "Hello world" --no-special
check_output "tokenize: ignore_merges keeps ' Việt' whole (llama.cpp#7193)" "128000 101798" $RUN "$GNA" tokenize --tokenizer "$LLAMA3" -p " Việt"
check_output "tokenize: Mistral/Llama-2 vocabulary, <s> and the prepended space" "1 22557 1526" $RUN "$GNA" tokenize --tokenizer "$LLAMA2" -p "Hello world"
check_output "detokenize: special tokens kept" "<|begin_of_text|>Hello world" $RUN "$GNA" detokenize --tokenizer "$LLAMA3" --tokens 128000,9906,1917
check_output "detokenize: --skip-special" "Hello world" $RUN "$GNA" detokenize --tokenizer "$LLAMA3" --tokens 128000,9906,1917 --skip-special
printf 'Hello world' >"$TMP/hello.txt"
check_output "tokenize: -f reads the file's bytes" "128000 9906 1917" $RUN "$GNA" tokenize --tokenizer "$LLAMA3" -f "$TMP/hello.txt"
# byte-level BPE loses nothing: the corpus comes back byte for byte
if ids=$($RUN "$GNA" tokenize --tokenizer "$LLAMA3" -f test/tokenizer_corpus.txt --no-special 2>"$TMP/err") &&
    $RUN "$GNA" detokenize --tokenizer "$LLAMA3" --tokens "$ids" >"$TMP/back.txt" 2>>"$TMP/err" &&
    cmp -s test/tokenizer_corpus.txt "$TMP/back.txt"; then
    pass "detokenize(tokenize(corpus)) is the corpus, byte for byte (Llama-3.1)"
else
    fail "detokenize(tokenize(corpus)) is the corpus, byte for byte (Llama-3.1)" "$(cat "$TMP/err")"
fi
# -p on logits and generate: the folder's tokenizer.json
dir=$BAD/good_llama_tokenizer
ids=$($RUN "$GNA" tokenize -m $dir -p "hello hi")
if $RUN "$GNA" logits -q -m $dir -p "hello hi" -o "$TMP/p.npy" 2>"$TMP/err" &&
    $RUN "$GNA" logits -q -m $dir --tokens "$ids" -o "$TMP/t.npy" 2>>"$TMP/err" && cmp -s "$TMP/p.npy" "$TMP/t.npy"; then
    pass "logits -p TEXT = logits --tokens \$(gna tokenize -p TEXT) ($ids)"
else
    fail "logits -p TEXT = logits --tokens \$(gna tokenize -p TEXT)" "$(cat "$TMP/err")"
fi
rm -f "$TMP/p.npy" "$TMP/t.npy"
got=$($RUN "$GNA" generate -q -m $dir -p "hello" -n 4 --ignore-eos 2>"$TMP/err")
case "$got" in
"<s> hello"?*) pass "generate -p prints the decoded text: $got" ;;
*) fail "generate -p prints the decoded text" "got: $got $(cat "$TMP/err")" ;;
esac
}

TOKENIZERS=test/fixtures/tokenizers
LLAMA3=test/.cache/llama3_1/tokenizer.json
LLAMA2=test/.cache/llama2/tokenizer.json
sh test/fetch_tokenizers.sh || echo "(the tokenizer tests that need test/.cache will fail)"

while [ $# -ge 2 ]; do
    case "$1" in *san*) LABEL="[asan+ubsan] " ;; build/arm/*) LABEL="[aarch64] " ;; build/*-*/*) LABEL="[${1#build/}] "; LABEL="${LABEL%/gna] }] " ;; *) LABEL="" ;; esac
    run_suite "$1" "$2"
    shift 2
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
