#!/usr/bin/env python3
"""Write a Llama checkpoint folder (config.json + model.safetensors, bfloat16, as make_random_checkpoint.py
makes them) as a GGUF file for llama.cpp, so that llama.cpp can be timed on the same weights as gna and
PyTorch (test/bench_llamacpp.sh). Only what a speed measurement needs:

- the weights are copied as they are (bfloat16, GGML type BF16); q_proj and k_proj are NOT permuted to
  llama.cpp's interleaved RoPE layout, so the logits differ from the checkpoint's (random weights: the
  work per token is the same);
- the vocabulary is a placeholder of the config's size: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>
  (llama.cpp's SentencePiece loader looks up "<0x0A>"), then "t<i>"; llama.cpp is fed token ids, never text;
- the llama3 RoPE scaling (rope_freqs) is left out: it changes the angles, not the cost;
- one-dimensional tensors (the RMSNorm weights) are widened to float32, as llama.cpp's own converter
  writes them (its CPU kernels do not multiply float32 by bfloat16).

usage: python3 weights_tools/llama_to_gguf.py DIR OUT.gguf      (numpy only)
"""
import json
import os
import struct
import sys

import numpy as np

GGUF_VERSION = 3
ALIGNMENT = 32
TYPE_UINT32, TYPE_INT32, TYPE_FLOAT32, TYPE_STRING, TYPE_ARRAY = 4, 5, 6, 8, 9
GGML_BF16, GGML_F32 = 30, 0


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, value):
    if kind == TYPE_UINT32:
        return struct.pack("<I", value)
    if kind == TYPE_INT32:
        return struct.pack("<i", value)
    if kind == TYPE_FLOAT32:
        return struct.pack("<f", value)
    if kind == TYPE_STRING:
        return gguf_string(value)
    raise ValueError(kind)


def gguf_kv(key, kind, value, element=None):
    out = gguf_string(key) + struct.pack("<I", kind)
    if kind == TYPE_ARRAY:
        return out + struct.pack("<IQ", element, len(value)) + b"".join(gguf_value(element, v) for v in value)
    return out + gguf_value(kind, value)


def read_safetensors(path):
    """{name: (dtype, shape, memoryview of the raw bytes)}"""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    n = int.from_bytes(bytes(data[:8]), "little")
    header = json.loads(bytes(data[8:8 + n]))
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        dtype, raw = t["dtype"], data[8 + n + start:8 + n + end]
        if dtype == "BF16" and len(t["shape"]) == 1:
            raw = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.uint8)
            dtype = "F32"
        out[name] = (dtype, t["shape"], raw)
    return out


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    folder, out_path = argv[1], argv[2]
    cfg = json.load(open(os.path.join(folder, "config.json")))
    assert cfg["model_type"] == "llama", cfg["model_type"]
    tensors = read_safetensors(os.path.join(folder, "model.safetensors"))
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head_dim = cfg.get("head_dim") or hidden // heads
    vocab = cfg["vocab_size"]

    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                 "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
                 "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
                 "mlp.down_proj": "ffn_down"}
    for layer in range(cfg["num_hidden_layers"]):
        for hf, gg in per_layer.items():
            names[f"model.layers.{layer}.{hf}.weight"] = f"blk.{layer}.{gg}.weight"
    missing = [k for k in tensors if k not in names]
    assert not missing, f"tensors with no GGUF name: {missing[:5]}"

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(vocab - len(tokens))]
    token_types = [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)
    kvs = [
        gguf_kv("general.architecture", TYPE_STRING, "llama"),
        gguf_kv("general.name", TYPE_STRING, os.path.basename(os.path.normpath(folder))),
        gguf_kv("general.alignment", TYPE_UINT32, ALIGNMENT),
        gguf_kv("llama.context_length", TYPE_UINT32, min(cfg.get("max_position_embeddings", 4096), 8192)),
        gguf_kv("llama.embedding_length", TYPE_UINT32, hidden),
        gguf_kv("llama.block_count", TYPE_UINT32, cfg["num_hidden_layers"]),
        gguf_kv("llama.feed_forward_length", TYPE_UINT32, cfg["intermediate_size"]),
        gguf_kv("llama.attention.head_count", TYPE_UINT32, heads),
        gguf_kv("llama.attention.head_count_kv", TYPE_UINT32, cfg.get("num_key_value_heads", heads)),
        gguf_kv("llama.attention.key_length", TYPE_UINT32, head_dim),
        gguf_kv("llama.attention.value_length", TYPE_UINT32, head_dim),
        gguf_kv("llama.rope.dimension_count", TYPE_UINT32, head_dim),
        gguf_kv("llama.rope.freq_base", TYPE_FLOAT32, float(cfg.get("rope_theta", 10000.0))),
        gguf_kv("llama.attention.layer_norm_rms_epsilon", TYPE_FLOAT32, float(cfg.get("rms_norm_eps", 1e-5))),
        gguf_kv("llama.vocab_size", TYPE_UINT32, vocab),
        gguf_kv("tokenizer.ggml.model", TYPE_STRING, "llama"),
        gguf_kv("tokenizer.ggml.tokens", TYPE_ARRAY, tokens, TYPE_STRING),
        gguf_kv("tokenizer.ggml.scores", TYPE_ARRAY, [-float(i) for i in range(vocab)], TYPE_FLOAT32),
        gguf_kv("tokenizer.ggml.token_type", TYPE_ARRAY, token_types, TYPE_INT32),
        gguf_kv("tokenizer.ggml.unknown_token_id", TYPE_UINT32, 0),
        gguf_kv("tokenizer.ggml.bos_token_id", TYPE_UINT32, 1),
        gguf_kv("tokenizer.ggml.eos_token_id", TYPE_UINT32, 2),
    ]
    infos, offset, order = [], 0, sorted(tensors, key=lambda k: names[k])
    for name in order:
        dtype, shape, raw = tensors[name]
        assert dtype in ("BF16", "F32"), f"{name}: dtype {dtype}"
        dims = list(reversed(shape))  # GGUF lists the fastest-varying dimension first
        infos.append(gguf_string(names[name]) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", d) for d in dims) +
                     struct.pack("<IQ", GGML_BF16 if dtype == "BF16" else GGML_F32, offset))
        offset += (len(raw) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    head = b"GGUF" + struct.pack("<IQQ", GGUF_VERSION, len(order), len(kvs)) + b"".join(kvs) + b"".join(infos)
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head + b"\0" * ((-len(head)) % ALIGNMENT))
        for name in order:
            raw = tensors[name][2]
            for i in range(0, len(raw), 1 << 26):
                f.write(raw[i:i + (1 << 26)].tobytes())
            f.write(b"\0" * ((-len(raw)) % ALIGNMENT))
    os.replace(tmp, out_path)
    print(f"{out_path}: {len(order)} tensors, {os.path.getsize(out_path) / 1e9:.2f} GB")


if __name__ == "__main__":
    main(sys.argv)
