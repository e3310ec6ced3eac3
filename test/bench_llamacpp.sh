#!/bin/sh
# llama.cpp beside gna on the same random Llama weights (`make bench-llamacpp`): prefill tokens/s at T
# and decode tokens/s, THREADS threads. llama.cpp comes prebuilt from npm (node-llama-cpp, whose
# linux-x64 package carries libllama and ggml CPU back ends for each x86 generation and loads the best
# one for this CPU), installed into test/.cache/node-llama-cpp; the checkpoint is written as GGUF by
# weights_tools/llama_to_gguf.py (bf16 weights as stored; see its notes). Measures and prints only.
#   test/bench_llamacpp.sh GNA_BENCH DIR        (DIR/llama-1b as make bench makes it)
set -eu
GNA_BENCH=$1
DIR=$2
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
T=${T:-512}
N_DECODE=${N_DECODE:-16}
PYTHON=${PYTHON:-/usr/bin/python3}
VERSION=3.22.1
NODE_DIR=test/.cache/node-llama-cpp
model=$DIR/llama-1b
[ -f "$model/config.json" ] || "$PYTHON" weights_tools/make_random_checkpoint.py llama-1b "$model"
[ -f "$model.gguf" ] || "$PYTHON" weights_tools/llama_to_gguf.py "$model" "$model.gguf"
gguf=$(cd "$DIR" && pwd)/llama-1b.gguf
if [ ! -d "$NODE_DIR/node_modules/node-llama-cpp" ]; then
    command -v npm >/dev/null || { echo "bench_llamacpp: needs node and npm (Debian: apt-get install npm)" >&2; exit 1; }
    mkdir -p "$NODE_DIR"
    (cd "$NODE_DIR" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --silent --no-save "node-llama-cpp@$VERSION")
fi
cat >"$NODE_DIR/bench.mjs" <<'EOF'
import {getLlama} from "node-llama-cpp";
const [path, T, threads, nDecode] = [process.argv[2], +process.argv[3], +process.argv[4], +process.argv[5]];
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: threads});
const model = await llama.loadModel({modelPath: path, gpuLayers: 0});
const context = await model.createContext({contextSize: 2048, batchSize: 512, threads, sequences: 1});
const sequence = context.getSequence();
const tokens = Array.from({length: T}, (_, i) => 259 + (i * 7919) % 30000); /* ids, as gna_bench feeds */
let start = performance.now();
await sequence.evaluateWithoutGeneratingNewTokens(tokens);
const prefill = T / ((performance.now() - start) / 1000);
let n = 0;
start = performance.now();
for await (const token of sequence.evaluate([300], {temperature: 0})) if (++n >= nDecode) break;
console.log(`prefill_tps ${prefill.toFixed(2)} decode_tps ${(n / ((performance.now() - start) / 1000)).toFixed(3)}`);
EOF
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "/^$1\$/{n;p;}"; }
echo "llama-1b (bf16 weights), T = $T, $THREADS threads: tokens/s"
printf '%-22s %10s %10s\n' "" prefill decode
for run in 1 2 3; do # alternated, since a shared machine's speed drifts
    g=$("$GNA_BENCH" model "$model" "$T" "$N_DECODE" "$THREADS")
    b=$("$GNA_BENCH" model "$model" "$T" "$N_DECODE" "$THREADS" --bf16)
    l=$(cd "$NODE_DIR" && node bench.mjs "$gguf" "$T" "$THREADS" "$N_DECODE" 2>/dev/null | tail -1)
    printf '%-22s %10s %10s\n' "gna (float32)" "$(field prefill_tps "$g")" "$(field decode_tps "$g")"
    printf '%-22s %10s %10s\n' "gna --bf16" "$(field prefill_tps "$b")" "$(field decode_tps "$b")"
    printf '%-22s %10s %10s\n' "llama.cpp $VERSION" "$(field prefill_tps "$l")" "$(field decode_tps "$l")"
done
