"""A small PyTorch reference of cartesia's Llamba (LlambaLMHeadModel with DiscreteMamba2 mixers).

transformers has no Llamba class, so gna's Llamba fixtures come from this file. It was written from
reading cartesia-ai/edge (cartesia-pytorch/cartesia_pytorch/Llamba/{llamba.py,
configuration_llamba.py, mixers/discrete_mamba2.py}) and goombalab/phi-mamba, without their code:
the module names and the config layout are cartesia's, so the state dict and config.json it saves are
what a Llamba checkpoint holds. It needs only torch; it runs in any dtype (the fixtures use float64).

The math (cartesia `Block.forward`, `DiscreteMamba2.forward`):
    h = E[ids]
    per layer:  h = h + mixer(RMSNorm(h, input_layernorm, eps 1e-5))
                h = h + MLP(RMSNorm(h, post_attention_layernorm, eps 1e-5))      (Llama's SwiGLU MLP)
    logits = RMSNorm(h, final_layernorm, norm_epsilon) W_lm^T (+ bias)
mixer:
    [xBC | z | a] = u W_in^T (+ b)               widths d_inner + 2 n_qk N, d_inner, n_v
    xBC = act(causal_conv1d(xBC))                act: identity (the default) or silu
    [x | B | C] = xBC                            x per v-head (P = d_inner / n_v), B and C per qk-head (N)
    dt = softplus(a)                             per v-head
    S_h <- exp(-dt_h) S_h + dt_h (x_h / dt_h) B_g^T     (mamba_chunk_scan_combined with A = -1 and x / dt)
    y_h = S_h C_g + D_h x_h                      g = h / (n_v / n_qk)
    out = (y * silu(z + z_bias)) W_out^T (+ b)   z_bias exists only when the mixer has no biases
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class MLP(nn.Module):
    def __init__(self, d_model, intermediate_size, bias=False, act_fn="silu"):
        super().__init__()
        assert act_fn == "silu"
        self.gate_proj = nn.Linear(d_model, intermediate_size, bias=bias)
        self.up_proj = nn.Linear(d_model, intermediate_size, bias=bias)
        self.down_proj = nn.Linear(intermediate_size, d_model, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def softplus(x):
    return torch.where(x <= 20.0, torch.log1p(torch.exp(torch.clamp(x, max=20.0))), x)


class DiscreteMamba2(nn.Module):
    def __init__(self, d_model, d_state=64, n_qk_heads=32, n_v_heads=32, d_conv=4, expand=1,
                 activation="identity", bias=False, conv_bias=True, chunk_size=128, **unused):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state, self.n_qk, self.n_v, self.d_conv = d_state, n_qk_heads, n_v_heads, d_conv
        self.headdim = self.d_inner // n_v_heads
        self.activation, self.chunk_size = activation, chunk_size
        conv_dim = self.d_inner + 2 * n_qk_heads * d_state
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner + 2 * n_qk_heads * d_state + n_v_heads, bias=bias)
        self.has_z_bias = not bias
        if self.has_z_bias:
            self.z_bias = nn.Parameter(torch.zeros(self.d_inner))
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, d_conv, groups=conv_dim, padding=d_conv - 1, bias=conv_bias)
        self.D = nn.Parameter(torch.ones(n_v_heads))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=bias)

    def inputs(self, u):
        T = u.shape[0]
        p = self.in_proj(u)
        xBC, z, a = torch.split(p, [self.d_inner + 2 * self.n_qk * self.d_state, self.d_inner, self.n_v], dim=-1)
        xBC = self.conv1d(xBC.t()[None])[0, :, :T].t()
        if self.activation in ("silu", "swish"):
            xBC = F.silu(xBC)
        x, B, C = torch.split(xBC, [self.d_inner, self.n_qk * self.d_state, self.n_qk * self.d_state], dim=-1)
        x = x.reshape(T, self.n_v, self.headdim)
        B = B.reshape(T, self.n_qk, self.d_state).repeat_interleave(self.n_v // self.n_qk, dim=1)
        C = C.reshape(T, self.n_qk, self.d_state).repeat_interleave(self.n_v // self.n_qk, dim=1)
        return x, B, C, softplus(a), z

    def scan_sequential(self, x, B, C, dt):
        T = x.shape[0]
        S = torch.zeros(self.n_v, self.headdim, self.d_state, dtype=x.dtype)
        ys = []
        for t in range(T):
            decay = torch.exp(-dt[t])[:, None, None]
            S = decay * S + (dt[t][:, None] * (x[t] / dt[t][:, None]))[:, :, None] * B[t][:, None, :]
            ys.append(torch.einsum("hpn,hn->hp", S, C[t]))
        return torch.stack(ys)

    def scan_chunked(self, x, B, C, dt, chunk_size):
        """SSD's chunked form: quadratic inside a chunk, a carried state between chunks."""
        T = x.shape[0]
        S = torch.zeros(self.n_v, self.headdim, self.d_state, dtype=x.dtype)
        ys = []
        for c0 in range(0, T, chunk_size):
            sl = slice(c0, min(T, c0 + chunk_size))
            xs, Bs, Cs, ds = x[sl], B[sl], C[sl], dt[sl]
            L = torch.cumsum(-ds, dim=0)                                    # [Q, H] log decay
            Q = xs.shape[0]
            decay = torch.exp(L[:, None, :] - L[None, :, :])                # [t, s, H]
            mask = torch.tril(torch.ones(Q, Q, dtype=torch.bool))[:, :, None]
            scores = torch.einsum("thn,shn->tsh", Cs, Bs) * torch.where(mask, decay, torch.zeros_like(decay))
            y = torch.einsum("tsh,shp->thp", scores, xs)
            y = y + torch.exp(L)[:, :, None] * torch.einsum("hpn,thn->thp", S, Cs)
            ys.append(y)
            to_end = torch.exp(L[-1][None, :] - L)                          # [s, H]
            S = torch.exp(L[-1])[:, None, None] * S + torch.einsum("sh,shp,shn->hpn", to_end, xs, Bs)
        return torch.cat(ys)

    def forward(self, u, chunked=False):
        x, B, C, dt, z = self.inputs(u)
        y = self.scan_chunked(x, B, C, dt, self.chunk_size) if chunked else self.scan_sequential(x, B, C, dt)
        y = (y + self.D[None, :, None] * x).reshape(u.shape[0], self.d_inner)
        gate = z + self.z_bias if self.has_z_bias else z
        return self.out_proj(y * F.silu(gate))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.mixer = DiscreteMamba2(config["d_model"], **config["ssm_cfg"])
        self.input_layernorm = RMSNorm(config["d_model"], 1e-5)
        self.post_attention_layernorm = RMSNorm(config["d_model"], 1e-5)
        self.mlp = MLP(config["d_model"], **config["mlp_cfg"])

    def forward(self, h, chunked=False):
        h = h + self.mixer(self.input_layernorm(h), chunked)
        return h + self.mlp(self.post_attention_layernorm(h))


class Backbone(nn.Module):
    def __init__(self, config, vocab):
        super().__init__()
        self.embedding = nn.Embedding(vocab, config["d_model"])
        self.layers = nn.ModuleList([Block(config) for _ in range(config["n_layer"])])
        self.final_layernorm = RMSNorm(config["d_model"], config.get("norm_epsilon", 1e-5))


class Llamba(nn.Module):
    """LlambaLMHeadModel for one sequence: forward(ids [T]) -> logits [T, V]."""

    def __init__(self, config):
        super().__init__()
        vocab = config["vocab_size"]
        multiple = config.get("pad_vocab_size_multiple", 8)
        if vocab % multiple:
            vocab += multiple - vocab % multiple
        self.vocab = vocab
        self.config = config
        self.backbone = Backbone(config, vocab)
        if not config.get("tie_embeddings", False):
            self.lm_head = nn.Linear(config["d_model"], vocab, bias=config.get("lm_head_bias", False))

    def forward(self, ids, chunked=False):
        h = self.backbone.embedding(ids)
        for layer in self.backbone.layers:
            h = layer(h, chunked)
        h = self.backbone.final_layernorm(h)
        if self.config.get("tie_embeddings", False):
            return h @ self.backbone.embedding.weight.t()
        return self.lm_head(h)
