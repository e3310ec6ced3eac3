#!/usr/bin/env python3
"""The PyTorch peer of `make bench`: the forward pass of a Llama, Mamba or Mamba-2 checkpoint in plain
PyTorch, written after transformers' own code for the CPU (transformers itself is not needed), timed
the way gna_bench times gna: prefill of T tokens in one chunk with logits at every position, then
one-token decode steps from the cache.

    bench_torch.py DIR T N_DECODE THREADS [--bf16]
    bench_torch.py matmul T ROWS COLS THREADS

Prints one line: prefill_tps ... decode_tps ... . --bf16 runs the model in torch.bfloat16 (weights and
activations), float32 otherwise. `matmul` times F.linear on float32 [T, COLS] x [ROWS, COLS]^T, the
best of 5 as gna_bench's matmul, and prints matmul_gflops: the BLAS's (OpenBLAS's sgemm here) rate on
the same shape, the peer of gna's matmul figure. The code follows, step for step:
  llama   modeling_llama.py: LlamaRMSNorm (variance in float32), rotate_half RoPE with llama3 scaling,
          eager attention (softmax in float32), LlamaMLP
  mamba   modeling_mamba.py: MambaMixer.slow_forward (the path transformers takes without the CUDA
          kernels: discretised A and B for all tokens at once, then a Python loop over time)
  mamba2  modeling_mamba2.py: Mamba2Mixer.torch_forward (the chunked SSD algorithm with its
          broadcast-and-sum contractions), and its one-token cache step for decode
Needs torch and numpy (Debian: python3-torch, python3-numpy).
"""
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(folder, dtype):
    index = os.path.join(folder, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    weights = {}
    for file in files:
        path = os.path.join(folder, file)
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
        data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
        for name, t in header.items():
            if name == "__metadata__":
                continue
            begin, end = t["data_offsets"]
            raw = np.array(data[begin:end])
            if t["dtype"] == "BF16":
                w = torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16)
            elif t["dtype"] == "F16":
                w = torch.from_numpy(raw.view(np.float16))
            else:
                w = torch.from_numpy(raw.view(np.float32))
            weights[name] = w.reshape(t["shape"]).to(dtype)
    return weights


def rms_norm(x, w, eps):
    """LlamaRMSNorm / MambaRMSNorm: the variance in float32, the result back in the input dtype"""
    dtype = x.dtype
    x = x.float()
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return w * x.to(dtype)


# ---------------------------------------------------------------------------------------- llama
def llama_inv_freq(c):
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    s = c.get("rope_scaling")
    if s and s.get("rope_type") == "llama3":
        factor, low, high, orig = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
        low_wl, high_wl = orig / low, orig / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (orig / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Llama:
    def __init__(self, c, W, dtype):
        self.c, self.W, self.dtype = c, W, dtype
        self.inv_freq = llama_inv_freq(c)
        self.lm_head = W.get("lm_head.weight", W["model.embed_tokens.weight"])

    def new_cache(self):
        return {"k": [None] * self.c["num_hidden_layers"], "v": [None] * self.c["num_hidden_layers"], "n": 0}

    def forward(self, ids, cache):
        c, W = self.c, self.W
        H, KV, D = c["num_attention_heads"], c["num_key_value_heads"], c["hidden_size"]
        hd = c.get("head_dim", D // H)
        T, p0 = ids.shape[0], cache["n"]
        x = W["model.embed_tokens.weight"][ids]
        pos = torch.arange(p0, p0 + T).float()
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(self.dtype), emb.sin().to(self.dtype)
        mask = torch.full((T, p0 + T), float("-inf"), dtype=self.dtype).triu(p0 + 1)
        for l in range(c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            h = rms_norm(x, W[p + "input_layernorm.weight"], c["rms_norm_eps"])
            q = F.linear(h, W[p + "self_attn.q_proj.weight"]).view(T, H, hd).transpose(0, 1)
            k = F.linear(h, W[p + "self_attn.k_proj.weight"]).view(T, KV, hd).transpose(0, 1)
            v = F.linear(h, W[p + "self_attn.v_proj.weight"]).view(T, KV, hd).transpose(0, 1)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            if cache["k"][l] is not None:
                k = torch.cat([cache["k"][l], k], dim=1)
                v = torch.cat([cache["v"][l], v], dim=1)
            cache["k"][l], cache["v"][l] = k, v
            k = k.repeat_interleave(H // KV, dim=0)
            v = v.repeat_interleave(H // KV, dim=0)
            scores = torch.matmul(q, k.transpose(1, 2)) * hd ** -0.5 + mask
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(self.dtype)
            o = torch.matmul(probs, v).transpose(0, 1).reshape(T, H * hd)
            x = x + F.linear(o, W[p + "self_attn.o_proj.weight"])
            h = rms_norm(x, W[p + "post_attention_layernorm.weight"], c["rms_norm_eps"])
            g = F.linear(h, W[p + "mlp.gate_proj.weight"])
            u = F.linear(h, W[p + "mlp.up_proj.weight"])
            x = x + F.linear(F.silu(g) * u, W[p + "mlp.down_proj.weight"])
        cache["n"] += T
        return F.linear(rms_norm(x, W["model.norm.weight"], c["rms_norm_eps"]), self.lm_head)


# ---------------------------------------------------------------------------------------- mamba
class Mamba:
    def __init__(self, c, W, dtype):
        self.c, self.W, self.dtype = c, W, dtype
        emb = W["backbone.embeddings.weight"]
        self.lm_head = W.get("lm_head.weight", emb)
        self.A = [-torch.exp(W[f"backbone.layers.{l}.mixer.A_log"].float()) for l in range(c["num_hidden_layers"])]

    def new_cache(self):
        return {"conv": [None] * self.c["num_hidden_layers"], "ssm": [None] * self.c["num_hidden_layers"], "n": 0}

    def mixer(self, l, x, cache):
        """MambaMixer.slow_forward, batch of one: x [T, D] -> [T, D]"""
        c, W = self.c, self.W
        p = f"backbone.layers.{l}.mixer."
        di, N, R, K = c["intermediate_size"], c["state_size"], c["time_step_rank"], c["conv_kernel"]
        T = x.shape[0]
        projected = F.linear(x, W[p + "in_proj.weight"]).transpose(0, 1)[None]  # [1, 2di, T]
        hidden, gate = projected.chunk(2, dim=1)
        conv_w = W[p + "conv1d.weight"]
        if cache["conv"][l] is None:  # prefill: padded convolution; keep the last K inputs
            cache["conv"][l] = F.pad(hidden, (K - T, 0)) if T < K else hidden[:, :, -K:]
            hidden = F.silu(F.conv1d(hidden, conv_w, W[p + "conv1d.bias"], padding=K - 1, groups=di)[..., :T])
        else:  # one token: roll the state
            state = torch.roll(cache["conv"][l], shifts=-1, dims=-1)
            state[:, :, -1] = hidden[:, :, 0]
            cache["conv"][l] = state
            hidden = torch.sum(state * conv_w[:, 0, :], dim=-1) + W[p + "conv1d.bias"]
            hidden = F.silu(hidden)[..., None]
        ssm_parameters = F.linear(hidden.transpose(1, 2), W[p + "x_proj.weight"])
        time_step, B, C = torch.split(ssm_parameters, [R, N, N], dim=-1)
        dt = F.softplus(F.linear(time_step, W[p + "dt_proj.weight"], W[p + "dt_proj.bias"])).transpose(1, 2)
        discrete_A = torch.exp(self.A[l][None, :, None, :] * dt[:, :, :, None])
        discrete_B = dt[:, :, :, None] * B[:, None, :, :].float()
        deltaB_u = discrete_B * hidden[:, :, :, None].float()
        state = cache["ssm"][l] if cache["ssm"][l] is not None else torch.zeros(1, di, N)
        outputs = []
        for i in range(T):
            state = discrete_A[:, :, i, :] * state + deltaB_u[:, :, i, :]
            outputs.append(torch.matmul(state.to(self.dtype), C[:, i, :].unsqueeze(-1))[:, :, 0])
        cache["ssm"][l] = state
        y = torch.stack(outputs, dim=-1) + hidden * W[p + "D"][None, :, None]
        y = y * F.silu(gate)
        return F.linear(y.transpose(1, 2)[0], W[p + "out_proj.weight"])

    def forward(self, ids, cache):
        c, W = self.c, self.W
        x = W["backbone.embeddings.weight"][ids]
        for l in range(c["num_hidden_layers"]):
            x = x + self.mixer(l, rms_norm(x, W[f"backbone.layers.{l}.norm.weight"], c["layer_norm_epsilon"]), cache)
        cache["n"] += ids.shape[0]
        return F.linear(rms_norm(x, W["backbone.norm_f.weight"], c["layer_norm_epsilon"]), self.lm_head)


# ---------------------------------------------------------------------------------------- mamba2
def segment_sum(x):
    """transformers' segment_sum: [..., T] -> [..., T, T], exp of it is the decay between positions"""
    T = x.size(-1)
    x = x[..., None].expand(*x.size(), T)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)
    x = x.masked_fill(~mask, 0)
    s = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=0)
    return s.masked_fill(~mask, -torch.inf)


class Mamba2(Mamba):
    def __init__(self, c, W, dtype):
        self.c, self.W, self.dtype = c, W, dtype
        self.lm_head = W.get("lm_head.weight", W["backbone.embeddings.weight"])
        self.A = [-torch.exp(W[f"backbone.layers.{l}.mixer.A_log"].float()) for l in range(c["num_hidden_layers"])]

    def mixer(self, l, x, cache):
        """Mamba2Mixer.torch_forward, batch of one: x [T, D] -> [T, D]"""
        c, W = self.c, self.W
        p = f"backbone.layers.{l}.mixer."
        D, H, P, N, G, K, Q = (c["hidden_size"], c["num_heads"], c["head_dim"], c["state_size"], c["n_groups"],
                               c["conv_kernel"], c["chunk_size"])
        di = int(c["expand"] * D)
        conv_dim = di + 2 * G * N
        T = x.shape[0]
        dt_min, dt_max = c.get("time_step_limit", [0.0, float("inf")])
        projected = F.linear(x, W[p + "in_proj.weight"])[None]  # [1, T, width]
        gate, xBC, dt = torch.split(projected, [di, conv_dim, H], dim=-1)
        conv_w = W[p + "conv1d.weight"]
        A = self.A[l]
        if cache["conv"][l] is None:
            xBC_t = xBC.transpose(1, 2)
            cache["conv"][l] = F.pad(xBC_t, (K - T, 0)) if T < K else xBC_t[:, :, -K:]
            xBC = F.silu(F.conv1d(xBC_t, conv_w, W[p + "conv1d.bias"], padding=K - 1, groups=conv_dim)[..., :T].transpose(1, 2))
        else:
            state = torch.roll(cache["conv"][l], shifts=-1, dims=-1)
            state[:, :, -1] = xBC[:, 0, :]
            cache["conv"][l] = state
            xBC = F.silu(torch.sum(state * conv_w[:, 0, :], dim=-1) + W[p + "conv1d.bias"])[:, None, :]
        hs, B, C = torch.split(xBC, [di, G * N, G * N], dim=-1)
        dt = F.softplus(dt + W[p + "dt_bias"])
        dt = torch.clamp(dt, dt_min, dt_max)
        if cache["ssm"][l] is not None and T == 1:  # one-token step
            state = cache["ssm"][l]  # [1, H, P, N]
            dA = torch.exp(dt[0, 0][:, None, None] * A[:, None, None])
            Bh = B[0, 0].view(G, N).repeat_interleave(H // G, dim=0)
            Ch = C[0, 0].view(G, N).repeat_interleave(H // G, dim=0)
            xh = hs[0, 0].view(H, P)
            dBx = (dt[0, 0][:, None, None] * Bh[:, None, :]) * xh[:, :, None]
            state = state * dA + dBx
            cache["ssm"][l] = state
            y = torch.einsum("hpn,hn->hp", state[0].to(self.dtype), Ch) + W[p + "D"][:, None] * xh
            y = y.reshape(1, 1, di)
        else:  # chunked SSD, as torch_forward
            hs = hs.reshape(1, T, H, P).float()
            B = B.reshape(1, T, G, N).float().repeat_interleave(H // G, dim=2)
            C = C.reshape(1, T, G, N).float().repeat_interleave(H // G, dim=2)
            pad = (Q - T % Q) % Q
            D_residual = W[p + "D"][..., None] * F.pad(hs, (0, 0, 0, 0, 0, pad))
            hs = hs * dt[..., None]
            Adt = A.to(hs.dtype) * dt
            chunk = lambda t: F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad)).reshape(t.shape[0], -1, Q, *t.shape[2:])
            hs, Adt, B, C = [chunk(t) for t in (hs, Adt, B, C)]
            Adt = Adt.permute(0, 3, 1, 2)
            A_cumsum = torch.cumsum(Adt, dim=-1)
            L = torch.exp(segment_sum(Adt))
            G_intermediate = C[:, :, :, None, :, :] * B[:, :, None, :, :, :]
            Gm = G_intermediate.sum(dim=-1)
            M_intermediate = Gm[..., None] * L.permute(0, 2, 3, 4, 1)[..., None]
            M = M_intermediate.sum(dim=-1)
            Y_diag = (M[..., None] * hs[:, :, None]).sum(dim=3)
            decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
            B_decay = B * decay_states.permute(0, -2, -1, 1)[..., None]
            states = (B_decay[..., None, :] * hs[..., None]).sum(dim=2)
            previous = torch.zeros_like(states[:, :1])
            states = torch.cat([previous, states], dim=1)
            decay_chunk = torch.exp(segment_sum(F.pad(A_cumsum[:, :, :, -1], (1, 0)))).transpose(1, 3)
            new_states = (decay_chunk[..., None, None] * states[:, :, None, ...]).sum(dim=1)
            states, cache["ssm"][l] = new_states[:, :-1], new_states[:, -1]
            state_decay_out = torch.exp(A_cumsum)
            C_times_states = C[..., None, :] * states[:, :, None, ...]
            Y_off = C_times_states.sum(-1) * state_decay_out.permute(0, 2, 3, 1)[..., None]
            y = (Y_diag + Y_off).reshape(1, -1, H, P) + D_residual
            y = y[:, :T].reshape(1, T, -1).to(self.dtype)
        # MambaRMSNormGated: y * silu(gate), then RMS-normalised in float32
        y = y.float() * F.silu(gate.float())
        y = rms_norm(y, W[p + "norm.weight"], c["layer_norm_epsilon"]).to(self.dtype)
        return F.linear(y[0], W[p + "out_proj.weight"])


def matmul(T, rows, cols, threads):
    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(T, cols, generator=generator) - 0.5
    w = (torch.rand(rows, cols, generator=generator) - 0.5) * 0.1
    seconds = float("inf")
    with torch.no_grad():
        for _ in range(5):
            start = time.perf_counter()
            F.linear(x, w)
            seconds = min(seconds, time.perf_counter() - start)
    print(f"matmul_gflops {2.0 * T * rows * cols / seconds / 1e9:.1f} T {T} rows {rows} cols {cols} threads {threads} "
          f"seconds {seconds:.5f} torch {torch.__version__}")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "matmul":
        return matmul(*(int(a) for a in sys.argv[2:]))
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    folder, T, n_decode, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    dtype = torch.bfloat16 if len(sys.argv) == 6 and sys.argv[5] == "--bf16" else torch.float32
    torch.set_num_threads(threads)
    c = json.load(open(os.path.join(folder, "config.json")))
    W = load_safetensors(folder, dtype)
    model = {"llama": Llama, "mamba": Mamba, "mamba2": Mamba2}[c["model_type"]](c, W, dtype)
    ids = torch.from_numpy(np.random.default_rng(7).integers(0, c["vocab_size"], T))
    prefill = decode = float("inf")
    with torch.no_grad():
        for _ in range(2):
            cache = model.new_cache()
            start = time.perf_counter()
            model.forward(ids, cache)
            prefill = min(prefill, time.perf_counter() - start)
            if prefill > 60:  # a second run of a minute-long prefill (Mamba-2's SSD here) would change nothing
                break
        for _ in range(2):
            step_cache = {k: (list(v) if isinstance(v, list) else v) for k, v in cache.items()}
            start = time.perf_counter()
            for i in range(n_decode):
                model.forward(ids[i % T : i % T + 1], step_cache)
            decode = min(decode, (time.perf_counter() - start) / n_decode)
    print(f"prefill_tps {T / prefill:.2f} decode_tps {1 / decode:.3f} T {T} threads {threads} "
          f"dtype {str(dtype).replace('torch.', '')} torch {torch.__version__}")


if __name__ == "__main__":
    main()
