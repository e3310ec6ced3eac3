#!/usr/bin/env python3
"""Reference results for gna's capture, patch and logit lens (gna.h: gna_run_tap, gna_cache_state,
gna_unembed), from transformers with hooks, in float64 on the CPU.

    python3 weights_tools/make_patching_fixtures.py test/fixtures [NAME...]

For each fixture folder named in CASES it writes patching/<n>.npy (results), patching/in<n>.npy (the
arrays patched in) and patching/cases.tsv, whose lines are  kind <TAB> site <TAB> position <TAB> input
<TAB> output,  position "-" for every position. What each kind does in PyTorch:

  capture L<l>          a forward hook on decoder layer l: its output, the residual stream   [T, D]
  capture L<l>H<h>      a forward pre-hook on the output projection: head h's slice of its input
                        (where gna's ablation zeroes it)                                     [T, width]
  patch <site>          the same hooks write the input array over the site at the position   logits [T, V]
  lens L<l>             the final norm and the LM head applied to layer l's output           [T, V]
  state <l>             an SSM layer's state after the position's token, from the mixer's own x, B, C and
                        dt (make_intervention_fixtures.ssd_internals, its in_proj output captured):
                          S_t[h, p, n] = sum_{s<=t} exp(A_h sum_{r=s+1..t} dt_r,h) dt_s,h x_s[h, p] B_s[h, n]
                                                                                     [H, P, N]
  state_patch <l>       that state replaced by the input array: every later output of the scan
                        changes by  C_t' . exp(A_h sum_{r=t+1..t'} dt_r,h) (S' - S_t)  (added in a
                        pre-hook on the gated norm, before the gate), the conv state left as it was
                                                                                     logits [T, V]
"""
import os, sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import Float64Everywhere, run  # noqa: E402
from make_intervention_fixtures import fixtures, modules, ssd_internals  # noqa: E402

torch.set_grad_enabled(False)

# (kind, site, position or None)
CASES = {
    "llama_gqa_llama3": [("capture", "L0", None), ("capture", "L1H2", None), ("patch", "L1H2", -1), ("patch", "L0", 3),
                         ("lens", "L0", None), ("lens", "L1", None)],
    "mamba2_f32": [("capture", "L0", None), ("capture", "L1H3", None), ("patch", "L1H3", 5), ("patch", "L0", -2),
                   ("lens", "L0", None), ("state", "1", 10), ("state_patch", "1", 10), ("state_patch", "0", 30)],
}


def layers_of(model):
    return model.model.layers if hasattr(model, "model") else model.backbone.layers


def final_norm(model):
    return model.model.norm if hasattr(model, "model") else model.backbone.norm_f


def head_site(family, model, site):
    """(output projection, head, width) of "L<l>H<h>" """
    l, h = (int(v) for v in site[1:].split("H"))
    _, mixer, o_attn, o_ssm = modules(family, model, l)
    if family == "llama":
        return o_attn, h, model.config.head_dim
    return o_ssm, h, mixer.head_dim


def hooked_run(family, model, ids, site, position, values):
    """logits [T, V], and the site's values [T, width] as the model computed them (before a patch)"""
    seen = {}
    if "H" in site:
        proj, h, width = head_site(family, model, site)

        def pre(mod, args):
            x = args[0].clone()
            seen["v"] = x[0, :, h * width:(h + 1) * width].clone()
            if values is not None:
                x[0, position, h * width:(h + 1) * width] = values[0]
            return (x,) + args[1:]
        hook = proj.register_forward_pre_hook(pre)
    else:
        layer = layers_of(model)[int(site[1:])]

        def post(mod, args, out):
            hs = out[0] if isinstance(out, tuple) else out
            seen["v"] = hs[0].clone()
            if values is None:
                return None
            hs = hs.clone()
            hs[0, position] = values[0]
            return (hs,) + tuple(out[1:]) if isinstance(out, tuple) else hs
        hook = layer.register_forward_hook(post)
    with Float64Everywhere():
        logits = run(model, ids)
    hook.remove()
    return logits, seen["v"]


def ssd_state(family, model, ids, l, t, new_state):
    """layer l's state after token t [H, P, N]; with new_state, the logits with it patched in at t"""
    _, mixer, _, _ = modules(family, model, l)
    captured = {}
    h1 = mixer.in_proj.register_forward_hook(lambda mod, args, out: captured.__setitem__("p", out[0].clone()))
    parts = {}

    def pre(mod, args):
        x, B, C, dt, A, D, z = ssd_internals(family, mixer, captured["p"])
        T, H, P = x.shape
        decay_sum = torch.zeros(T, H, dtype=x.dtype)   # sum_{r=s+1..t} dt_r for s = 0..t
        decay_sum[:t] = torch.flip(torch.cumsum(torch.flip(dt[1:t + 1], [0]), 0), [0])
        S = torch.einsum("sh,shp,shn->hpn", torch.exp(A[None] * decay_sum[:t + 1]) * dt[:t + 1], x[:t + 1], B[:t + 1])
        parts["S"] = S
        if new_state is None:
            return None
        delta = torch.as_tensor(new_state, dtype=x.dtype) - S
        y = args[0].clone()
        later = torch.cumsum(dt[t + 1:], 0)                       # sum_{r=t+1..t'} dt_r, t' > t
        add = torch.einsum("th,thn,hpn->thp", torch.exp(A[None] * later), C[t + 1:], delta)
        y[0, t + 1:] += add.reshape(T - t - 1, H * P)
        return (y,) + args[1:]
    h2 = mixer.norm.register_forward_pre_hook(pre)
    with Float64Everywhere():
        logits = run(model, ids)
    h1.remove()
    h2.remove()
    return logits, parts["S"]


def main():
    for name, cases, path, family, model, ids in fixtures(CASES):
        rng = np.random.default_rng(20261204)
        out = os.path.join(path, "patching")
        os.makedirs(out, exist_ok=True)
        lines = []
        for i, (kind, site, position) in enumerate(cases):
            given = "-"
            if kind in ("capture", "lens"):
                _, v = hooked_run(family, model, ids, site, None, None)
                with Float64Everywhere():
                    result = v if kind == "capture" else model.lm_head(final_norm(model)(v))
            elif kind == "patch":
                _, clean = hooked_run(family, model, ids, site, None, None)
                values = rng.standard_normal((1, clean.shape[1])) * float(clean.std()) * 2
                result, _ = hooked_run(family, model, ids, site, position, torch.tensor(values))
                given = f"in{i}.npy"
                np.save(os.path.join(out, given), values.astype(np.float32))
            else:
                l, t = int(site), position
                _, S = ssd_state(family, model, ids, l, t, None)
                result = S
                try:  # the same state from transformers' own cache, after a forward of the first t + 1 tokens
                    with Float64Everywhere():
                        cache = model(ids[:, :t + 1], use_cache=True).cache_params
                    states = getattr(cache, "ssm_states", None)
                    own = states[l] if states is not None else cache.layers[l].recurrent_states
                    print(name, "state", l, t, "vs transformers' cache: max |diff|", float((own[0] - S).abs().max()))
                except Exception as e:  # noqa: BLE001 - a cross-check only
                    print(name, "state: transformers' cache not compared:", repr(e)[:200])
                if kind == "state_patch":
                    values = (rng.standard_normal(S.shape) * float(S.std()) * 2).astype(np.float32)
                    result, _ = ssd_state(family, model, ids, l, t, values.astype(np.float64))
                    given = f"in{i}.npy"
                    np.save(os.path.join(out, given), values)
            result = result.numpy() if hasattr(result, "numpy") else result
            np.save(os.path.join(out, f"{i}.npy"), np.ascontiguousarray(result))
            lines.append(f"{kind}\t{site}\t{'-' if position is None else position}\t{given}\t{i}.npy")
            print(name, kind, site, position, result.shape, result.dtype, float(np.abs(result).max()))
        # consistency of the references themselves: the lens of the last layer is the logits
        logits, last = hooked_run(family, model, ids, f"L{len(layers_of(model)) - 1}", None, None)
        with Float64Everywhere():
            last = model.lm_head(final_norm(model)(last))
        assert torch.equal(last, logits) or torch.allclose(last, logits, atol=1e-10), "the last layer's lens is not the logits"
        with open(os.path.join(out, "cases.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
