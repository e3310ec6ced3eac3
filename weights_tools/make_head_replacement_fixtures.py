#!/usr/bin/env python3
"""Make the fixtures of `--replace L<l>H<h>=DIR`, one head of a donor's attention layer in place of the
same-numbered head of a layer (the rebuttal of the G&A paper: "we replaced only the Aggregate head,
leaving the rest of the layer unchanged"), with an independent PyTorch reference in float64.

    python3 weights_tools/make_head_replacement_fixtures.py test/fixtures/replace_head

Needs torch and transformers (as make_fixtures.py). It writes llama_host/ and llama_donor/, two tiny
random Llamas of width 32 (seeds 61, 62), and per case the float64 logits of a host with the head
replaced, on the host's tokens.txt (test/fixtures/llamba_f32 is the Llamba host, also of width 32):

    cases.tsv     host folder, gna's options (the donor as DONOR), expected logits file

The definition (gna.c, replace_head), on the host's layer l with residual stream h before it:
    the host's own head h removed: its slice of the out-projection's input zeroed (gna's --mask ablation)
    out += (attention head h of the donor, on RMSNorm_donor(h), with the donor's q/k/v projections, its
            RoPE and causal softmax) Wo_donor[:, h hd .. (h+1) hd]^T
Here the donor's head is computed by hand from the donor layer's weights (not by transformers' attention
module), and added to the host's mixer output by a forward hook; the host's head is zeroed by a forward
pre-hook on its out-projection.
"""
import json, os, shutil, sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402

torch.set_grad_enabled(False)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMBA_HOST = os.path.join(ROOT, "test", "fixtures", "llamba_f32")

LLAMA = dict(vocab_size=90, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-5, tie_word_embeddings=False,
             rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 4.0, "original_max_position_embeddings": 64})

# host, gna's options (DONOR: the donor folder), the heads each (layer, [heads]) replaces, an extra ablation
CASES = [
    ("llama_host", "--replace L1H1=DONOR", (1, [1]), None),
    ("llama_host", "--replace L0H0-1=DONOR", (0, [0, 1]), None),
    ("llamba_f32", "--replace L1H2=DONOR", (1, [2]), None),
    ("llamba_f32", "--replace L0H3=DONOR --mask L1H0", (0, [3]), (1, 0)),
]


def rotate_half(x):
    a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-b, a), dim=-1)


def donor_heads(donor, layer, h, heads):
    """the donor layer's attention, only `heads` kept, on RMSNorm_donor(h): [T, D] float64"""
    cfg = donor.config
    H, KV = cfg.num_attention_heads, cfg.num_key_value_heads
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // H
    d = donor.model.layers[layer]
    x = d.input_layernorm(h)
    T = x.shape[0]
    q = d.self_attn.q_proj(x).view(T, H, hd)
    k = d.self_attn.k_proj(x).view(T, KV, hd)
    v = d.self_attn.v_proj(x).view(T, KV, hd)
    cos, sin = donor.model.rotary_emb(x[None], torch.arange(T)[None])
    cos, sin = cos[0][:, None, :].to(x.dtype), sin[0][:, None, :].to(x.dtype)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    out = torch.zeros(T, H * hd, dtype=x.dtype)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for head in heads:
        g = head // (H // KV)
        scores = (q[:, head] @ k[:, g].t()) * hd ** -0.5
        p = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        out[:, head * hd:(head + 1) * hd] = p @ v[:, g]
    return d.self_attn.o_proj(out)


def zero_heads(heads, width):
    def hook(module, args):
        x = args[0].clone()
        for head in heads:
            x[..., head * width:(head + 1) * width] = 0
        return (x,) + tuple(args[1:])
    return hook


def reference(family, host, donor, ids, replaced, ablated):
    layer, heads = replaced
    hooks, captured = [], {}
    if family == "llama":
        block, mixer = host.model.layers[layer], host.model.layers[layer].self_attn
        out_proj, width = mixer.o_proj, host.config.hidden_size // host.config.num_attention_heads
    else:
        block, mixer = host.backbone.layers[layer], host.backbone.layers[layer].mixer
        out_proj, width = mixer.out_proj, mixer.headdim

    def capture(module, args, kwargs):
        captured["h"] = (args[0] if args else kwargs["hidden_states"])
        return None

    def add(module, args, output):
        h = captured["h"]
        contribution = donor_heads(donor, layer, h.reshape(-1, h.shape[-1]), heads)
        if isinstance(output, tuple):
            return (output[0] + contribution.reshape(output[0].shape),) + tuple(output[1:])
        return output + contribution.reshape(output.shape)

    hooks.append(block.register_forward_pre_hook(capture, with_kwargs=True))
    hooks.append(mixer.register_forward_hook(add))
    hooks.append(out_proj.register_forward_pre_hook(zero_heads(heads, width)))
    if ablated:
        l2, h2 = ablated
        m2 = host.model.layers[l2].self_attn.o_proj if family == "llama" else host.backbone.layers[l2].mixer.out_proj
        w2 = width if family == "llama" else host.backbone.layers[l2].mixer.headdim
        hooks.append(m2.register_forward_pre_hook(zero_heads([h2], w2)))
    try:
        logits = mf.forward_f64(host, ids)
    finally:
        for hk in hooks:
            hk.remove()
    plain = mf.forward_f64(host, ids)
    assert (logits - plain).abs().max().item() > 1e-6, "the replacement changed nothing"
    return logits.numpy()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "test", "fixtures", "replace_head")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, seed in [("llama_host", 61), ("llama_donor", 62)]:
        model = mf.build("llama", dict(LLAMA), seed)
        model.save_pretrained(os.path.join(out, name))
    ids = torch.tensor([[(7 * t + 3) % 90 for t in range(23)]])
    with open(os.path.join(out, "llama_host", "tokens.txt"), "w") as f:
        f.write(",".join(str(int(t)) for t in ids[0]) + "\n")
    donor = mf.load_f64("llama", os.path.join(out, "llama_donor"))
    donor.config._attn_implementation = "eager"
    lines = []
    for i, (host_name, options, replaced, ablated) in enumerate(CASES):
        path = LLAMBA_HOST if host_name == "llamba_f32" else os.path.join(out, host_name)
        with open(os.path.join(path, "config.json")) as f:
            family = json.load(f)["model_type"]
        host = mf.load_f64(family, path)
        with open(os.path.join(path, "tokens.txt")) as f:
            host_ids = torch.tensor([[int(t) for t in f.read().split(",")]])
        logits = reference(family, host, donor, host_ids, replaced, ablated)
        np.save(os.path.join(out, f"{i}.npy"), logits)
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        lines.append(f"{rel}\t{options}\t{i}.npy")
        print(rel, options, logits.shape, float(np.abs(logits).max()))
    with open(os.path.join(out, "cases.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
