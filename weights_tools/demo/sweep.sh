#!/bin/sh
# Several small trainings of train_demo.py at once on one GPU (issue 38's sweeps), each in its own folder,
# from shared token data; each run's folder is packed into $OUT/<name>.tgz (the device tool brings back at most
# 8 files). Usage: sh weights_tools/demo/sweep.sh RUNFILE
#   RUNFILE: lines "<name> <cache tag> <train_demo.py arguments...>"; the arguments of every run of one cache tag
#   must give the same data (seed, --seq-len, --batch, --steps cap, --max-data-tokens, KV and share options).
#   DATA_ARGS_<tag> (environment) holds those data arguments; the first tag's data is built before any run starts.
#   SWEEP_SECONDS: each run is killed after this many seconds (default 540).
set -u
RUNS=$1
W=${SWEEP_DIR:-/tmp/sweep}
OUT=${OUT:-/tmp/sweep_out}
mkdir -p "$W" "$OUT"
T=${SWEEP_SECONDS:-540}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$W/gpu.txt" 2>&1
first=$(awk 'NF { print $2; exit }' "$RUNS")
eval "data=\${DATA_ARGS_$first}"
# shellcheck disable=SC2086,SC2154
python3 weights_tools/demo/train_demo.py --out "$W/data_$first" --data-only --data-cache "$W/cache_$first" $data \
    >"$W/data_$first.out" 2>&1
pids=""
while read -r name tag args; do
    [ -n "$name" ] || continue
    eval "data=\${DATA_ARGS_$tag}"
    mkdir -p "$W/$name"
    # shellcheck disable=SC2086
    timeout "$T" python3 weights_tools/demo/train_demo.py --out "$W/$name" --data-cache "$W/cache_$tag" $data $args \
        >"$W/$name/stdout.txt" 2>&1 &
    pids="$pids $!"
done <"$RUNS"
for p in $pids; do wait "$p"; done
while read -r name tag args; do
    [ -n "$name" ] || continue
    rm -rf "$W/$name"/.eval_data_*
    tar -C "$W" -czf "$OUT/$name.tgz" "$name"
done <"$RUNS"
tar -C "$W" -czf "$OUT/misc.tgz" gpu.txt data_"$first".out
ls -la "$OUT"
