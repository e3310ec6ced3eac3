#!/usr/bin/env python3
"""Reference results for gna's interventions and probes, from transformers with hooks (and, for
Llamba, from weights_tools/llamba_reference.py), in float64 on the CPU.

    python3 weights_tools/make_intervention_fixtures.py test/fixtures [NAME...]

For each fixture folder named in CASES it writes interventions/<n>.npy and interventions/cases.tsv,
whose lines are   kind <TAB> spec <TAB> file   with kind `logits` (gna logits --mask spec), `attn`
(gna attn --heads spec) or `surgery` (gna logits <spec>, e.g. --drop 0: transformers' layer list cut). The spec grammar is gna's (gna --help); what each case does in PyTorch:

  ablation (no `:`)   a forward pre-hook on the output projection (o_proj / out_proj) zeroes the
                      head's slice of its input, at every position or at the @ query positions
  attention entries   transformers' eager attention function, patched: after the softmax the masked
                      entries are zeroed (not renormalised); the same function records attention maps
  SSM entries/probes  the mixer's dt, B, C and x are recomputed in PyTorch from the module's own
                      weights and its in_proj output (captured by a hook), the implicit attention
                      matrix M is built from them, and a pre-hook on the gated norm (mamba-2, zamba2)
                      or out_proj (mamba-1, llamba) replaces the rows with masked entries by the
                      materialised form  sum_s M'[t, s] x_s + D x_t  (times the gate where it comes first)

Everything runs inside make_fixtures.Float64Everywhere, so no arithmetic leaves float64.
"""
import json, os, re, shutil, sys

import numpy as np
import torch
import torch.nn.functional as F
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llamba_reference  # noqa: E402
from make_fixtures import Float64Everywhere, grouped_gated_norm_forward, load_f64, run, zamba2_cuda_dt  # noqa: E402

torch.set_grad_enabled(False)

CASES = {
    "llama_gqa_llama3": [("surgery", "--drop 0"), ("logits", "L1H2"), ("logits", "L0H1@-1"), ("logits", "L1H3@-1:0-5"),
                         ("logits", "L0H*@10-20:3-4,L1H0@-3--1:0-0"), ("attn", "L0H0,L1H3"), ("logits", "L1H*")],
    "llama_headdim_f16_bias": [("logits", "L0H3"), ("attn", "L1H1,L1H2"), ("logits", "L1H0@-1:0--2")],
    "mamba_f32": [("logits", "L1H5"), ("logits", "L0H7@-1"), ("logits", "L1H3@-1:0-10"), ("attn", "L0H2,L1H60")],
    "falcon_mamba_f32": [("surgery", "--drop 1"), ("logits", "L0H9"), ("attn", "L1H4"), ("logits", "L0H2@-2--1:0-3")],
    "mamba2_f32": [("surgery", "--layers 0-0"), ("logits", "L1H3"), ("logits", "L0H0@5-9"), ("logits", "L1H6@-1:0-20"), ("attn", "L0H1,L1H7")],
    "mamba2_bf16_g2_k3": [("logits", "L0H4"), ("attn", "L1H5"), ("logits", "L0H2@-1:0-9")],
    "zamba2_f32": [("logits", "L3A1"), ("logits", "L1S2"), ("logits", "L*A*@-1:0--1"), ("attn", "L1A0,L4A3,L0S1"),
                   ("logits", "L4S0@-1:0-10")],
    "llamba_f32": [("logits", "L1H2"), ("logits", "L0H1@-1:0-10"), ("attn", "L1H0,L0H3")],
    "llamba_bf16_shared_bc": [("attn", "L0H3"), ("logits", "L1H1@-2--1:0-4")],
}

# ---------------------------------------------------------------------------------------------
# The spec grammar (gna --help), resolved against the model


def layer_kinds(family, model, n_layers):
    """per layer: the set of head kinds it has ('A' attention, 'S' SSM)"""
    if family == "llama":
        return [{"A"}] * n_layers
    if family == "zamba2":
        return [{"A", "S"} if t == "hybrid" else {"S"} for t in model.config.layers_block_type]
    return [{"S"}] * n_layers


def parse_range(text, count):
    if text == "*":
        return list(range(count))
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def parse_positions(text, T):
    m = re.fullmatch(r"(-?\d+)(?:-(-?\d+))?", text)
    a, b = int(m.group(1)), int(m.group(2) if m.group(2) is not None else m.group(1))
    a, b = (a + T if a < 0 else a), (b + T if b < 0 else b)
    return list(range(a, b + 1))


def parse_spec(spec, family, model, n_layers, heads_count, T):
    """[(layer, kind 'A'/'S', head, queries or None, keys or None)]"""
    kinds = layer_kinds(family, model, n_layers)
    items = []
    for text in spec.split(","):
        m = re.fullmatch(r"L(\*|\d+(?:-\d+)?)([HAS])(\*|\d+(?:-\d+)?)(?:@([-\d]+(?:-[-\d]+)?)(?::([-\d]+(?:-[-\d]+)?))?)?", text)
        assert m, text
        layers = parse_range(m.group(1), n_layers)
        queries = parse_positions(m.group(4), T) if m.group(4) else None
        keys = parse_positions(m.group(5), T) if m.group(5) else None
        for l in layers:
            kind = m.group(2)
            if kind == "H":
                assert len(kinds[l]) == 1
                kind = next(iter(kinds[l]))
            if kind not in kinds[l]:
                continue
            for h in parse_range(m.group(3), heads_count(l, kind)):
                items.append((l, kind, h, queries, keys))
    return items


# ---------------------------------------------------------------------------------------------
# Where things are in each family's modules


def modules(family, model, l):
    """(attention module or None, SSM mixer or None, output projection for attention, for SSM)"""
    if family == "llama":
        a = model.model.layers[l].self_attn
        return a, None, a.o_proj, None
    if family == "zamba2":
        layer = model.model.layers[l]
        if hasattr(layer, "shared_transformer"):
            a = layer.shared_transformer.self_attn
            return a, layer.mamba_decoder.mamba, a.o_proj, layer.mamba_decoder.mamba.out_proj
        return None, layer.mamba, None, layer.mamba.out_proj
    mixer = model.backbone.layers[l].mixer
    return None, mixer, None, mixer.out_proj


def head_width(family, model, kind, mixer):
    if kind == "A":
        return model.config.head_dim if family == "llama" else model.config.attention_head_dim
    if family in ("mamba", "falcon_mamba"):
        return 1
    if family == "llamba":
        return mixer.headdim
    return mixer.head_dim


# ---------------------------------------------------------------------------------------------
# Attention: transformers' eager attention, with entries zeroed after the softmax and maps recorded

STATE = {"layer": None, "masks": {}, "capture": {}, "ran": 0}


def patched_eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    from transformers.models.llama.modeling_llama import repeat_kv
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask[:, :, :, : key_states.shape[-2]]
    weights = F.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    layer = STATE["layer"] if STATE["layer"] is not None else module.layer_idx
    for head, queries, keys in STATE["masks"].get(layer, []):
        weights[0, head, torch.tensor(queries)[:, None], torch.tensor(keys)[None, :]] = 0
    for head in range(weights.shape[1]):
        STATE["capture"][(layer, "A", head)] = weights[0, head].clone()
    STATE["ran"] += 1
    out = torch.matmul(weights, value_states).transpose(1, 2).contiguous()
    return out, weights


def patch_attention(family, model):
    from transformers.models.llama import modeling_llama
    from transformers.models.zamba2 import modeling_zamba2
    modeling_llama.eager_attention_forward = patched_eager
    modeling_zamba2.eager_attention_forward = patched_eager
    hooks = []
    if family == "zamba2":  # the shared attention does not know its layer: each layer says so on entry
        for i, layer in enumerate(model.model.layers):
            hooks.append(layer.register_forward_pre_hook(lambda mod, args, i=i: STATE.__setitem__("layer", i)))
    return hooks


# ---------------------------------------------------------------------------------------------
# SSM internals recomputed from the module's own weights and its captured in_proj output


def causal_conv(x, conv):  # x [T, C]; nn.Conv1d(C, C, K, groups=C, padding=K-1), first T outputs
    T = x.shape[0]
    return F.conv1d(x.t()[None], conv.weight, conv.bias, padding=conv.weight.shape[-1] - 1, groups=x.shape[1])[0, :, :T].t()


def softplus(x):
    return torch.where(x <= 20, torch.log1p(torch.exp(torch.clamp(x, max=20))), x)


def ssd_internals(family, mixer, projected):
    """x [T, H, P], B and C [T, H, N] (per head), dt [T, H], A [H], D [H], z [T, di]"""
    T = projected.shape[0]
    if family == "llamba":
        di, N, H, G, P = mixer.d_inner, mixer.d_state, mixer.n_v, mixer.n_qk, mixer.headdim
        conv_dim = di + 2 * G * N
        xBC, z, a = projected.split([conv_dim, di, H], dim=-1)
        xBC = causal_conv(xBC, mixer.conv1d)
        if mixer.activation in ("silu", "swish"):
            xBC = F.silu(xBC)
        dt = softplus(a)
        A = -torch.ones(H, dtype=projected.dtype)
        z = z + mixer.z_bias if mixer.has_z_bias else z
    else:
        di, N, H, G, P = mixer.intermediate_size, mixer.ssm_state_size, mixer.num_heads, mixer.n_groups, mixer.head_dim
        conv_dim = di + 2 * G * N
        z, xBC, dt = projected.split([di, conv_dim, H], dim=-1)
        xBC = F.silu(causal_conv(xBC, mixer.conv1d))
        dt = softplus(dt + mixer.dt_bias)
        lo, hi = mixer.time_step_limit if mixer.time_step_limit is not None else (0.0, float("inf"))
        dt = torch.clamp(dt, min=lo, max=hi)  # zamba2 in transformers 5.17: (time_step_min, inf)
        A = -torch.exp(mixer.A_log)
    x, B, C = xBC.split([di, G * N, G * N], dim=-1)
    x = x.reshape(T, H, P)
    B = B.reshape(T, G, N).repeat_interleave(H // G, dim=1)
    C = C.reshape(T, G, N).repeat_interleave(H // G, dim=1)
    return x, B, C, dt, A, mixer.D, z


def ssd_matrix(x, B, C, dt, A, h, times_dt):
    """M[t, s] = (C_t . B_s) exp(A sum_{r=s+1..t} dt_r) (dt_s)"""
    T = x.shape[0]
    cum = torch.cumsum(dt[:, h] * A[h], dim=0)
    decay = torch.exp(cum[:, None] - cum[None, :])
    M = torch.einsum("tn,sn->ts", C[:, h], B[:, h]) * decay
    if times_dt:
        M = M * dt[None, :, h]
    return torch.tril(M) * torch.tril(torch.ones(T, T, dtype=M.dtype))


def mamba1_internals(family, mixer, projected, config):
    """u [T, di], z [T, di], dt [T, di], B, C [T, N], A [di, N], D [di]"""
    di, N, R = mixer.intermediate_size, mixer.ssm_state_size, mixer.time_step_rank
    u, z = projected.chunk(2, dim=-1)
    u = F.silu(causal_conv(u, mixer.conv1d))
    dbc = u @ mixer.x_proj.weight.t()
    dt, B, C = dbc.split([R, N, N], dim=-1)
    if family == "falcon_mamba":
        rms = lambda v: v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + config.mixer_rms_eps)
        dt, B, C = rms(dt), rms(B), rms(C)
    dt = softplus(dt @ mixer.dt_proj.weight.t() + mixer.dt_proj.bias)
    return u, z, dt, B, C, -torch.exp(mixer.A_log), mixer.D


def mamba1_matrix(dt, B, C, A, d):
    T = dt.shape[0]
    cum = torch.cumsum(dt[:, d], dim=0)                                  # [T]
    span = cum[:, None] - cum[None, :]                                   # sum_{r=s+1..t} dt_r
    M = torch.einsum("tn,tsn,sn->ts", C, torch.exp(A[d][None, None, :] * span[:, :, None]), B * dt[:, d:d + 1])
    return M * torch.tril(torch.ones(T, T, dtype=M.dtype))


# ---------------------------------------------------------------------------------------------


def ablation_hook(ablate, width):
    """a forward pre-hook zeroing each (head, query rows or None) slice of an output projection's input"""
    def pre(mod, args):
        x = args[0].clone()
        for h, q in ablate:
            rows = slice(None) if q is None else torch.tensor(q)
            x[0, rows, h * width:(h + 1) * width] = 0
        return (x,) + args[1:]
    return pre


def reference(family, model, ids, kind, spec):
    cfg = model.config
    T = ids.shape[1]
    if family == "llamba":
        n_layers = cfg["n_layer"]
    else:
        n_layers = cfg.num_hidden_layers

    def heads_count(l, k):
        if k == "A":
            return cfg.num_attention_heads
        _, mixer, _, _ = modules(family, model, l)
        if family in ("mamba", "falcon_mamba"):
            return mixer.intermediate_size
        return mixer.n_v if family == "llamba" else mixer.num_heads

    items = parse_spec(spec, family, model, n_layers, heads_count, T)
    hooks = patch_attention(family, model)
    STATE.update(layer=None, masks={}, capture={}, ran=0)
    captured = {}        # layer -> in_proj output [T, ...]
    matrices = {}        # (layer, 'S', head) -> M
    per_layer = {}
    for it in items:
        per_layer.setdefault((it[0], it[1]), []).append(it)

    for (l, k), its in per_layer.items():
        attention, mixer, o_attn, o_ssm = modules(family, model, l)
        if k == "A":
            masks = [(h, q, keys) for (_, _, h, q, keys) in its if keys is not None and kind == "logits"]
            STATE["masks"].setdefault(l, []).extend(masks)
            ablate = [(h, q) for (_, _, h, q, keys) in its if keys is None and kind == "logits"]
            width = head_width(family, model, "A", mixer)
            if ablate:
                hooks.append(o_attn.register_forward_pre_hook(ablation_hook(ablate, width)))
            continue
        # SSM heads
        hooks.append(mixer.in_proj.register_forward_hook(
            lambda mod, args, out, l=l: captured.__setitem__(l, (out[0] if out.dim() == 3 else out).clone())))
        width = head_width(family, model, "S", mixer)
        recurrent_first = family in ("mamba", "falcon_mamba", "llamba")  # gate before out_proj
        target = o_ssm if recurrent_first else mixer.norm

        def pre(mod, args, l=l, its=its, mixer=mixer, width=width):
            y = args[0].clone()
            unbatched = y.dim() == 2          # the Llamba reference runs one sequence without a batch axis
            if unbatched:
                y = y[None]
            proj = captured[l]
            if family in ("mamba", "falcon_mamba"):
                u, z, dt, B, C, A, D = mamba1_internals(family, mixer, proj, model.config)
                for (_, _, h, q, keys) in its:
                    M = mamba1_matrix(dt, B, C, A, h)
                    if keys is not None and kind == "logits":
                        Mm = M.clone()
                        Mm[torch.tensor(q)[:, None], torch.tensor(keys)[None, :]] = 0
                        for t in q:
                            y[0, t, h] = (Mm[t] @ u[:, h] + D[h] * u[t, h]) * F.silu(z[t, h])
                    matrices[(l, "S", h)] = M
            else:
                x, B, C, dt, A, D, z = ssd_internals(family, mixer, proj)
                for (_, _, h, q, keys) in its:
                    M = ssd_matrix(x, B, C, dt, A, h, family != "llamba")
                    if keys is not None and kind == "logits":
                        Mm = M.clone()
                        Mm[torch.tensor(q)[:, None], torch.tensor(keys)[None, :]] = 0
                        for t in q:
                            row = Mm[t] @ x[:, h] + D[h] * x[t, h]
                            if family == "llamba":
                                row = row * F.silu(z[t, h * width:(h + 1) * width])
                            y[0, t, h * width:(h + 1) * width] = row
                    matrices[(l, "S", h)] = M
            for (_, _, h, q, keys) in its:
                if keys is None and kind == "logits":
                    rows = slice(None) if q is None else torch.tensor(q)
                    if recurrent_first:
                        y[0, rows, h * width:(h + 1) * width] = 0
            return ((y[0] if unbatched else y),) + args[1:]
        hooks.append(target.register_forward_pre_hook(pre))
        ablate_after_norm = [(h, q) for (_, _, h, q, keys) in its if keys is None and kind == "logits"]
        if not recurrent_first and ablate_after_norm:  # mamba-2, zamba2: after the gated norm
            hooks.append(o_ssm.register_forward_pre_hook(ablation_hook(ablate_after_norm, width)))

    with Float64Everywhere():
        logits = run(model, ids)
    for hk in hooks:
        hk.remove()
    if kind == "logits":
        if any(it[1] == "A" and it[4] is not None for it in items):
            assert STATE["ran"] > 0, "the patched attention did not run"
        return logits.numpy()
    maps = []
    for (l, k, h, q, keys) in items:
        maps.append((STATE["capture"] if k == "A" else matrices)[(l, k, h)].numpy())
    return np.stack(maps)


def surgery(family, model, ids, spec):
    """--layers A-B or --drop L: run only the kept decoder layers (their ModuleList cut in place)"""
    layers = model.model.layers if family in ("llama", "zamba2") else model.backbone.layers
    n = len(layers)
    option, value = spec.split()
    if option == "--layers":
        a, b = (int(v) for v in value.split("-"))
        keep = list(range(a, b + 1))
    else:
        keep = [l for l in range(n) if l != int(value)]
    saved = list(layers)
    kept = torch.nn.ModuleList([saved[l] for l in keep])
    if family in ("llama", "zamba2"):
        model.model.layers = kept
    else:
        model.backbone.layers = kept
    with Float64Everywhere():
        logits = run(model, ids)
    if family in ("llama", "zamba2"):
        model.model.layers = torch.nn.ModuleList(saved)
    else:
        model.backbone.layers = torch.nn.ModuleList(saved)
    return logits.numpy()


def family_of(path):
    with open(os.path.join(path, "config.json")) as f:
        return json.load(f)["model_type"]


def fixtures(cases):
    """(name, its cases, path, family, float64 model as gna runs it by default, token ids [1, T]) for each
    fixture of `cases` that the command line names (python3 SCRIPT ROOT [NAME...]; all when none)"""
    root = sys.argv[1] if len(sys.argv) > 1 else "test/fixtures"
    only = set(sys.argv[2:])
    for name, its_cases in cases.items():
        if only and name not in only:
            continue
        path = os.path.join(root, name)
        family = family_of(path)
        model = load_f64(family, path)
        if family == "mamba2" and model.config.n_groups > 1:  # as make_fixtures: the training code's per-group norm
            for layer in model.backbone.layers:
                layer.mixer.norm.gna_n_groups = model.config.n_groups
                layer.mixer.norm.forward = grouped_gated_norm_forward.__get__(layer.mixer.norm)
        if family in ("llama", "zamba2"):
            model.config._attn_implementation = "eager"
        if family == "zamba2":  # gna's default: the CUDA path's dt (make_fixtures.zamba2_cuda_dt)
            zamba2_cuda_dt(model)
        with open(os.path.join(path, "tokens.txt")) as f:
            ids = torch.tensor([[int(t) for t in f.read().split(",")]])
        yield name, its_cases, path, family, model, ids


def main():
    for name, cases, path, family, model, ids in fixtures(CASES):
        out = os.path.join(path, "interventions")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        lines = []
        for i, (kind, spec) in enumerate(cases):
            result = surgery(family, model, ids, spec) if kind == "surgery" else reference(family, model, ids, kind, spec)
            np.save(os.path.join(out, f"{i}.npy"), result)
            lines.append(f"{kind}\t{spec}\t{i}.npy")
            print(name, kind, spec, result.shape, float(np.abs(result).max()))
        with open(os.path.join(out, "cases.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
