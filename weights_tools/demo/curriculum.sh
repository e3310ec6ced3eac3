#!/bin/sh
# Curriculum trainings of train_demo.py (issue 38), several at once on one GPU: each run trains phase 1 (P1_ARGS and the
# run's own arguments) for P1_SECONDS, then phase 2 (P2_ARGS and the same run arguments) for P2_SECONDS from phase 1's
# float32 weights and tokenizer (--init-from, --tokenizer-from); each phase's token data is built once, before the runs.
# Each run's two folders are packed into $OUT/<name>.tgz, phase 2's float32 weights left beside it. Usage: sh weights_tools/demo/curriculum.sh RUNFILE
#   RUNFILE: lines "<name> <model> <train_demo.py arguments...>" (model: zamba2, mamba2 or llama)
#   P1_ARGS, P2_ARGS: the data (and other common) arguments of the two phases; P1_SECONDS, P2_SECONDS: training
#   seconds of each phase (a phase's run is killed 90 s after them)
set -u
RUNS=$1
W=${SWEEP_DIR:-/tmp/curriculum}
OUT=${OUT:-/tmp/curriculum_out}
mkdir -p "$W" "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$W/gpu.txt" 2>&1
# shellcheck disable=SC2086
python3 weights_tools/demo/train_demo.py --out "$W/data_p1" --data-only --data-cache "$W/cache_p1" $P1_ARGS >"$W/data_p1.out" 2>&1
pids=""
while read -r name model args; do
    [ -n "$name" ] || continue
    mkdir -p "$W/$name/p1" "$W/$name/p2"
    (
        # shellcheck disable=SC2086
        timeout $((P1_SECONDS + 90)) python3 weights_tools/demo/train_demo.py --out "$W/$name/p1" --only "$model" \
            --data-cache "$W/cache_p1" $P1_ARGS $args --save-fp32 --train-seconds "$P1_SECONDS" >"$W/$name/p1/stdout.txt" 2>&1
        # shellcheck disable=SC2086
        timeout $((P2_SECONDS + 90)) python3 weights_tools/demo/train_demo.py --out "$W/$name/p2" --only "$model" \
            --data-cache "$W/cache_p2" $P2_ARGS $args --save-fp32 --train-seconds "$P2_SECONDS" \
            --init-from "$W/$name/p1/${model}_demo_fp32.pt" --tokenizer-from "$W/$name/p1/${model}_demo" \
            >"$W/$name/p2/stdout.txt" 2>&1
    ) &
    pids="$pids $!"
done <"$RUNS"
for p in $pids; do wait "$p"; done
while read -r name model args; do
    [ -n "$name" ] || continue
    rm -rf "$W/$name"/p*/.eval_data_* "$W/$name"/p1/*_fp32.pt
    for f in "$W/$name"/p2/*_fp32.pt; do [ -f "$f" ] && mv "$f" "$OUT/${name}_p2_$(basename "$f")"; done
    tar -C "$W" -czf "$OUT/$name.tgz" "$name"
done <"$RUNS"
tar -C "$W" -czf "$OUT/misc.tgz" gpu.txt data_p1.out
ls -la "$OUT"
