#!/usr/bin/env python3
"""Make the pytorch_model.bin fixtures of test/check_convert.sh with the real torch (any version with
the zip format: Debian's python3-torch 1.13 made the committed ones).

    /usr/bin/python3 weights_tools/make_bin_fixtures.py test/fixtures/bin

Each is a safetensors fixture of test/fixtures saved again as save_pretrained would have saved it
with torch.save; config.json and generation_config.json are copied beside it:
  llamba_f32         pytorch_model.bin, float32, as the authors' LlambaLMHeadModel.save_pretrained
                     writes it (torch.save(self.state_dict()))
  llama_tied_bf16    pytorch_model.bin, bfloat16; the fixture has no lm_head.weight (transformers drops
                     tied copies when it writes safetensors), but a .bin from save_pretrained holds
                     lm_head.weight too, sharing the embedding's storage, so it is added that way
  mamba2_bf16_g2_k3  two shards and pytorch_model.bin.index.json as transformers writes them, the
                     tied lm_head.weight in the embedding's shard
  views              tensors that are views (transposed, sliced, offset, permuted, tied, 0-d, empty),
                     with expected.safetensors holding their contiguous bytes
The state dicts carry _metadata as Module.state_dict() leaves it.
"""
import collections, json, os, shutil, struct, sys
import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
RANK = {"F32": 2, "BF16": 1, "F16": 0}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    return {name: torch.frombuffer(bytearray(data[slice(*e["data_offsets"])]), dtype=DTYPES[e["dtype"]])
            .reshape(e["shape"]) for name, e in header.items()}


def state_dict(tensors):
    sd = collections.OrderedDict(sorted(tensors.items()))
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return sd


def write_safetensors(path, tensors):
    """what safetensors.torch.save_file writes: sorted by dtype then name, header padded to 8 bytes"""
    names = {v: k for k, v in DTYPES.items()}
    items = sorted(tensors.items(), key=lambda kv: (-RANK[names[kv[1].dtype]], kv[0]))
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for k, t in items:
        blob = t.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main(out):
    src = "test/fixtures"
    torch.manual_seed(0)
    for name in ("llamba_f32", "llama_tied_bf16", "mamba2_bf16_g2_k3"):
        os.makedirs(f"{out}/{name}", exist_ok=True)
        for f in ("config.json", "generation_config.json"):
            if os.path.exists(f"{src}/{name}/{f}"):
                shutil.copyfile(f"{src}/{name}/{f}", f"{out}/{name}/{f}")
    t = read_safetensors(f"{src}/llamba_f32/model.safetensors")
    torch.save(state_dict(t), f"{out}/llamba_f32/pytorch_model.bin")

    t = read_safetensors(f"{src}/llama_tied_bf16/model.safetensors")
    t["lm_head.weight"] = t["model.embed_tokens.weight"].detach()  # same storage
    torch.save(state_dict(t), f"{out}/llama_tied_bf16/pytorch_model.bin")

    t = read_safetensors(f"{src}/mamba2_bf16_g2_k3/model.safetensors")
    t["lm_head.weight"] = t["backbone.embeddings.weight"].detach()
    first = {k for k in t if not k.startswith("backbone.layers.1.") and not k.startswith("backbone.norm_f")}
    weight_map, storages = {}, {}
    for i, names in enumerate([sorted(first), sorted(set(t) - first)]):
        file = f"pytorch_model-{i + 1:05d}-of-00002.bin"
        torch.save(state_dict({k: t[k] for k in names}), f"{out}/mamba2_bf16_g2_k3/{file}")
        weight_map.update((k, file) for k in names)
        storages.update((t[k].storage().data_ptr(), t[k].storage().nbytes()) for k in names)
    with open(f"{out}/mamba2_bf16_g2_k3/pytorch_model.bin.index.json", "w") as f:
        json.dump({"metadata": {"total_size": sum(storages.values())}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")

    base = torch.randn(6, 10)
    half = torch.randn(3, 4, 5).half()
    bf = torch.randn(8, 6).bfloat16()
    views = {"transposed": base.t(), "rows": base[2:5], "columns": base[:, 3:7], "strided": base[1::2, ::3],
             "scalar": base[4, 4], "empty": base[:0], "permuted": half.permute(2, 0, 1), "half": half,
             "tied.a": bf, "tied.b": bf.detach(), "bf_row": bf[5], "bf_t": bf[1:7].t()}
    os.makedirs(f"{out}/views", exist_ok=True)
    torch.save(state_dict(views), f"{out}/views/pytorch_model.bin")
    write_safetensors(f"{out}/views/expected.safetensors", views)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "test/fixtures/bin")
