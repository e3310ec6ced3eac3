#!/usr/bin/env python3
"""Write a checkpoint with random weights in the shape of a published model, in Hugging Face's layout
(config.json + model.safetensors, or shards with model.safetensors.index.json), for benchmarks and
memory checks. Needs numpy (Debian: python3-numpy); no torch.

    make_random_checkpoint.py SHAPE OUT_DIR [--dtype bf16|f32] [--seed S] [--shard-gb G]

SHAPE is one of:
    llama-1b      Llama-3.2-1B (vocab cut to 32000, tied embeddings)   ~1.2e9 parameters
    llama-8b      Llama-3.1-8B                                           ~8.0e9 (16 GB in bf16)
    mamba-790m    state-spaces/mamba-790m-hf                             ~0.79e9
    mamba2-780m   state-spaces/mamba2-780m (transformers' Mamba2 layout) ~0.78e9
    falcon-mamba-7b  tiiuae/falcon-mamba-7b                              ~7.3e9 (15 GB in bf16)
    llamba-8b     cartesia-ai/Llamba-8B (cartesia's layout)              ~8.3e9 (17 GB in bf16)

The values: weights normal(0, 0.02), norms 1, A_log = log(1..N) (Mamba-1) or log(1..16) per head
(Mamba-2), D 1, dt biases so that softplus(dt) lies in [0.001, 0.1] - the initialisations of the
reference code, so that activations keep sensible magnitudes through all layers. Tensors are written
in pieces, so the 16 GB checkpoint never sits in memory.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

SHAPES = {
    "llama-1b": dict(
        model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=2048, intermediate_size=8192,
        num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=32000,
        rms_norm_eps=1e-5, rope_theta=500000.0, max_position_embeddings=131072, tie_word_embeddings=True,
        rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_max_position_embeddings=8192),
        attention_bias=False, mlp_bias=False, hidden_act="silu", bos_token_id=1, eos_token_id=2),
    "llama-8b": dict(
        model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=4096, intermediate_size=14336,
        num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=128256,
        rms_norm_eps=1e-5, rope_theta=500000.0, max_position_embeddings=131072, tie_word_embeddings=False,
        rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_max_position_embeddings=8192),
        attention_bias=False, mlp_bias=False, hidden_act="silu", bos_token_id=128000, eos_token_id=128001),
    "mamba-790m": dict(
        model_type="mamba", architectures=["MambaForCausalLM"], hidden_size=1536, intermediate_size=3072,
        num_hidden_layers=48, state_size=16, expand=2, conv_kernel=4, time_step_rank=96, vocab_size=50280,
        layer_norm_epsilon=1e-5, use_bias=False, use_conv_bias=True, tie_word_embeddings=True,
        hidden_act="silu", residual_in_fp32=True, bos_token_id=0, eos_token_id=0),
    "mamba2-780m": dict(
        model_type="mamba2", architectures=["Mamba2ForCausalLM"], hidden_size=1536, num_hidden_layers=48,
        num_heads=48, head_dim=64, state_size=128, n_groups=1, expand=2, conv_kernel=4, chunk_size=256,
        vocab_size=50288, layer_norm_epsilon=1e-5, use_bias=False, use_conv_bias=True, rms_norm=True,
        tie_word_embeddings=True, time_step_limit=[0.0, 1e30], hidden_act="silu", residual_in_fp32=True,
        bos_token_id=0, eos_token_id=0, pad_token_id=0),
    "falcon-mamba-7b": dict(
        model_type="falcon_mamba", architectures=["FalconMambaForCausalLM"], hidden_size=4096,
        intermediate_size=8192, num_hidden_layers=64, state_size=16, expand=16, conv_kernel=4, time_step_rank=256,
        vocab_size=65024, layer_norm_epsilon=1e-5, mixer_rms_eps=1e-6, use_bias=False, use_conv_bias=True,
        tie_word_embeddings=False, hidden_act="silu", residual_in_fp32=True, bos_token_id=0, eos_token_id=11),
    "llamba-8b": dict(
        model_type="llamba", d_model=4096, n_layer=32, vocab_size=128256, pad_vocab_size_multiple=8,
        tie_embeddings=False, lm_head_bias=False, norm_epsilon=1e-5,
        mlp_cfg=dict(intermediate_size=14336, bias=False, act_fn="silu"),
        ssm_cfg=dict(d_state=64, n_v_heads=32, n_qk_heads=32, expand=1, chunk_size=128, activation="identity",
                     bias=False)),
}


def dt_bias(n, rng):
    """inverse softplus of dt drawn log-uniformly from [0.001, 0.1] (mamba_ssm's dt initialisation)"""
    dt = np.exp(rng.uniform(math.log(0.001), math.log(0.1), n)).astype(np.float64)
    return (dt + np.log(-np.expm1(-dt))).astype(np.float32)


def llama_mlp(p, D, I):
    """LlamaMLP's three projections under prefix p (Llama's and Llamba's blocks)"""
    return [(f"{p}.mlp.gate_proj.weight", (I, D), "normal"), (f"{p}.mlp.up_proj.weight", (I, D), "normal"),
            (f"{p}.mlp.down_proj.weight", (D, I), "normal")]


def tensors(c):
    """(name, shape, how) for every tensor; how is 'normal', 'ones', or a function of rng giving the values"""
    out = []
    if c["model_type"] == "llamba":  # cartesia's DiscreteMamba2 blocks with a Llama MLP
        D, L, s, I = c["d_model"], c["n_layer"], c["ssm_cfg"], c["mlp_cfg"]["intermediate_size"]
        di, H, G, N = D * s["expand"], s["n_v_heads"], s["n_qk_heads"], s["d_state"]
        conv_dim = di + 2 * G * N
        out.append(("backbone.embedding.weight", (c["vocab_size"], D), "normal"))
        for l in range(L):
            p = f"backbone.layers.{l}"
            out += [(f"{p}.input_layernorm.weight", (D,), "ones"),
                    (f"{p}.mixer.in_proj.weight", (conv_dim + di + H, D), "normal"),  # x B C, z, dt
                    (f"{p}.mixer.conv1d.weight", (conv_dim, 1, 4), "normal"),
                    (f"{p}.mixer.conv1d.bias", (conv_dim,), "normal"),
                    (f"{p}.mixer.z_bias", (di,), "normal"),
                    (f"{p}.mixer.D", (H,), "ones"),
                    (f"{p}.mixer.out_proj.weight", (D, di), "normal"),
                    (f"{p}.post_attention_layernorm.weight", (D,), "ones")] + llama_mlp(p, D, I)
        out.append(("backbone.final_layernorm.weight", (D,), "ones"))
        out.append(("lm_head.weight", (c["vocab_size"], D), "normal"))
        return out
    D, L = c["hidden_size"], c["num_hidden_layers"]
    if c["model_type"] == "llama":
        hd, H, KV, I = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
        out.append(("model.embed_tokens.weight", (c["vocab_size"], D), "normal"))
        for l in range(L):
            p = f"model.layers.{l}"
            out += [(f"{p}.input_layernorm.weight", (D,), "ones"),
                    (f"{p}.self_attn.q_proj.weight", (H * hd, D), "normal"),
                    (f"{p}.self_attn.k_proj.weight", (KV * hd, D), "normal"),
                    (f"{p}.self_attn.v_proj.weight", (KV * hd, D), "normal"),
                    (f"{p}.self_attn.o_proj.weight", (D, H * hd), "normal"),
                    (f"{p}.post_attention_layernorm.weight", (D,), "ones")] + llama_mlp(p, D, I)
        out.append(("model.norm.weight", (D,), "ones"))
    elif c["model_type"] in ("mamba", "falcon_mamba"):
        di, N, R, K = c["intermediate_size"], c["state_size"], c["time_step_rank"], c["conv_kernel"]
        out.append(("backbone.embeddings.weight", (c["vocab_size"], D), "normal"))
        for l in range(L):
            p = f"backbone.layers.{l}"
            out += [(f"{p}.norm.weight", (D,), "ones"),
                    (f"{p}.mixer.in_proj.weight", (2 * di, D), "normal"),
                    (f"{p}.mixer.conv1d.weight", (di, 1, K), "normal"),
                    (f"{p}.mixer.conv1d.bias", (di,), "normal"),
                    (f"{p}.mixer.x_proj.weight", (R + 2 * N, di), "normal"),
                    (f"{p}.mixer.dt_proj.weight", (di, R), "normal"),
                    (f"{p}.mixer.dt_proj.bias", (di,), lambda rng, di=di: dt_bias(di, rng)),
                    (f"{p}.mixer.A_log", (di, N), lambda rng, di=di, N=N: np.tile(np.log(np.arange(1, N + 1, dtype=np.float32)), (di, 1))),
                    (f"{p}.mixer.D", (di,), "ones"),
                    (f"{p}.mixer.out_proj.weight", (D, di), "normal")]
        out.append(("backbone.norm_f.weight", (D,), "ones"))
    else:
        H, P, N, G, K = c["num_heads"], c["head_dim"], c["state_size"], c["n_groups"], c["conv_kernel"]
        di = int(c["expand"] * D)
        conv_dim = di + 2 * G * N
        out.append(("backbone.embeddings.weight", (c["vocab_size"], D), "normal"))
        for l in range(L):
            p = f"backbone.layers.{l}"
            out += [(f"{p}.norm.weight", (D,), "ones"),
                    (f"{p}.mixer.in_proj.weight", (di + conv_dim + H, D), "normal"),
                    (f"{p}.mixer.conv1d.weight", (conv_dim, 1, K), "normal"),
                    (f"{p}.mixer.conv1d.bias", (conv_dim,), "normal"),
                    (f"{p}.mixer.dt_bias", (H,), lambda rng, H=H: dt_bias(H, rng)),
                    (f"{p}.mixer.A_log", (H,), lambda rng, H=H: np.log(rng.uniform(1, 16, H)).astype(np.float32)),
                    (f"{p}.mixer.D", (H,), "ones"),
                    (f"{p}.mixer.norm.weight", (di,), "ones"),
                    (f"{p}.mixer.out_proj.weight", (D, di), "normal")]
        out.append(("backbone.norm_f.weight", (D,), "ones"))
    if not c["tie_word_embeddings"]:
        out.append(("lm_head.weight", (c["vocab_size"], D), "normal"))
    return out


def to_bf16_bits(x):
    """float32 -> bfloat16 bits, rounding to nearest even"""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def write_values(f, n, how, dtype, rng):
    piece = 1 << 24
    done = 0
    while done < n:
        m = min(piece, n - done)
        if how == "normal":
            v = rng.standard_normal(m, dtype=np.float32) * np.float32(0.02)
        elif how == "ones":
            v = np.ones(m, np.float32)
        else:
            v = how(rng).reshape(-1).astype(np.float32)
            assert v.size == n, (v.size, n)
        f.write((to_bf16_bits(v) if dtype == "bf16" else v.astype("<f4")).tobytes())
        done += v.size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out_dir")
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard-gb", type=float, default=5.0, help="largest shard (default 5, as transformers)")
    a = ap.parse_args()
    config = dict(SHAPES[a.shape])
    config["torch_dtype"] = "bfloat16" if a.dtype == "bf16" else "float32"
    rng = np.random.default_rng(a.seed)
    element = 2 if a.dtype == "bf16" else 4
    items = tensors(config)
    # cut into shards of at most shard_gb, in order
    shards, size = [[]], 0
    for name, shape, how in items:
        nbytes = math.prod(shape) * element
        if shards[-1] and size + nbytes > a.shard_gb * 1e9:
            shards.append([])
            size = 0
        shards[-1].append((name, shape, how))
        size += nbytes
    os.makedirs(a.out_dir, exist_ok=True)
    weight_map, total = {}, 0
    for i, shard in enumerate(shards):
        file = "model.safetensors" if len(shards) == 1 else f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        for name, shape, how in shard:
            nbytes = math.prod(shape) * element
            header[name] = {"dtype": "BF16" if a.dtype == "bf16" else "F32", "shape": list(shape),
                            "data_offsets": [offset, offset + nbytes]}
            offset += nbytes
            weight_map[name] = file
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as safetensors writes it
        with open(os.path.join(a.out_dir, file), "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for name, shape, how in shard:
                write_values(f, math.prod(shape), how, a.dtype, rng)
        total += offset
        print(f"{file}: {len(shard)} tensors, {offset / 1e9:.2f} GB", file=sys.stderr)
    if len(shards) > 1:
        with open(os.path.join(a.out_dir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(a.out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"{a.out_dir}: {a.shape}, {a.dtype}, {total / 1e9:.2f} GB in {len(shards)} file(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
