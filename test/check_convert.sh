#!/bin/sh
# weights_tools/convert/bin_to_safetensors.py against the pytorch_model.bin fixtures of test/fixtures/bin
# (made with torch by weights_tools/fixtures/make_bin_fixtures.py from the safetensors fixtures of test/fixtures).
#   sh test/check_convert.sh GNA PYTHON TMPDIR
# GNA the gna program, PYTHON a python3 (no torch needed), TMPDIR a scratch folder. Prints one
# "ok   ..." or "FAIL ..." line per check and exits 1 if any failed.
set -u
GNA=$1
PY=$2
W=$3/check_convert
CONVERT=weights_tools/convert/bin_to_safetensors.py
BIN=test/fixtures/bin
rm -rf "$W" && mkdir -p "$W" || exit 1
failed=0
pass() { printf 'ok   %s\n' "$1"; }
fail() { failed=1; printf 'FAIL %s\n' "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/     /'; }

# 1. Each fixture converted gives gna the very logits of the safetensors fixture it was made from.
for name in llamba_f32 llama_tied_bf16 mamba2_bf16_g2_k3; do
    tokens=$(cat "test/fixtures/$name/tokens.txt")
    set -- "$BIN/$name"/*.bin
    what="$name: gna logits on the converted $# .bin file(s) equal those on test/fixtures/$name"
    if "$PY" "$CONVERT" "$BIN/$name" "$W/$name" >/dev/null 2>"$W/err" &&
        "$GNA" logits -q -m "test/fixtures/$name" --tokens "$tokens" -o "$W/want.npy" 2>>"$W/err" &&
        "$GNA" logits -q -m "$W/$name" --tokens "$tokens" -o "$W/got.npy" 2>>"$W/err" &&
        cmp "$W/want.npy" "$W/got.npy" >>"$W/err" 2>&1; then
        pass "$what"
    else
        fail "$what" "$(cat "$W/err")"
    fi
done

# 2. The file itself: byte for byte the one safetensors wrote (no tied weights there), and, for tensors
#    that are views of their storage (offsets, strides, 0-d, empty, tied, three dtypes), their
#    contiguous bytes as torch made them.
if cmp -s test/fixtures/llamba_f32/model.safetensors "$W/llamba_f32/model.safetensors"; then
    pass "llamba_f32: model.safetensors equals the one safetensors wrote, byte for byte"
else
    fail "llamba_f32: model.safetensors equals the one safetensors wrote, byte for byte"
fi
if "$PY" "$CONVERT" "$BIN/views" "$W/views" >/dev/null 2>"$W/err" &&
    cmp "$BIN/views/expected.safetensors" "$W/views/model.safetensors" >>"$W/err" 2>&1; then
    pass "views: transposed, sliced, strided, 0-d, empty and tied tensors written contiguous"
else
    fail "views: transposed, sliced, strided, 0-d, empty and tied tensors written contiguous" "$(cat "$W/err")"
fi

# 3. Untrusted files are refused: exit status 2, one line naming the file and the problem, no output.
mkdir -p "$W/bad/global" "$W/bad/dtype" "$W/bad/missing" "$W/bad/short" || exit 1
"$PY" - "$BIN/llama_tied_bf16/pytorch_model.bin" "$W" <<'EOF'
import sys, zipfile
src, w = sys.argv[1], sys.argv[2]
def rezip(case, edit):
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(f"{w}/bad/{case}/pytorch_model.bin", "w") as out:
        for i in z.infolist():
            data = edit(i.filename, z.read(i))
            if data is not None:
                out.writestr(i.filename, data)
cmd = f"touch {w}/pwned".encode()  # what a plain pickle.load would run: os.system(cmd), protocol 2
pwn = b"\x80\x02cos\nsystem\nX" + len(cmd).to_bytes(4, "little") + cmd + b"\x85R."
rezip("global", lambda n, d: pwn if n.endswith("/data.pkl") else d)
rezip("dtype", lambda n, d: d.replace(b"\nBFloat16Storage\n", b"\nLongStorage\n") if n.endswith("/data.pkl") else d)
rezip("missing", lambda n, d: None if n.endswith("/data/0") else d)
rezip("short", lambda n, d: d[:len(d) // 2] if n.endswith("/data/0") else d)
EOF
for c in "global:the global os.system" "dtype:torch.LongStorage is not supported" \
    "missing:storage 0 is not in the zip" "short:reaches element"; do
    case=${c%%:*}
    expect=${c#*:}
    "$PY" "$CONVERT" "$W/bad/$case" >"$W/out" 2>"$W/err"
    status=$?
    what="refused: $case ($expect): exit 2, one line naming the file, nothing written"
    if [ $status -eq 2 ] && [ "$(wc -l <"$W/err")" -eq 1 ] &&
        grep -q "bad/$case/pytorch_model.bin: .*$expect" "$W/err" &&
        [ ! -s "$W/out" ] && [ ! -e "$W/bad/$case/model.safetensors" ] && [ ! -e "$W/pwned" ]; then
        pass "$what"
    else
        fail "$what" "exit $status: $(cat "$W/err")"
    fi
done

# 4. An existing model.safetensors is kept unless --force.
mkdir -p "$W/beside" && cp "$BIN/llamba_f32/pytorch_model.bin" "$BIN/llamba_f32/config.json" "$W/beside/" &&
    echo keep >"$W/beside/model.safetensors"
"$PY" "$CONVERT" "$W/beside" >/dev/null 2>"$W/err"
status=$?
if [ $status -eq 2 ] && [ "$(cat "$W/beside/model.safetensors")" = keep ] &&
    "$PY" "$CONVERT" "$W/beside" --force >/dev/null 2>>"$W/err" &&
    cmp -s test/fixtures/llamba_f32/model.safetensors "$W/beside/model.safetensors"; then
    pass "an existing model.safetensors is refused (exit 2) and replaced with --force"
else
    fail "an existing model.safetensors is refused (exit 2) and replaced with --force" "exit $status: $(cat "$W/err")"
fi

rm -rf "$W"
exit $failed
