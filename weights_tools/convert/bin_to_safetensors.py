#!/usr/bin/env python3
"""Convert pytorch_model.bin (or the shards named by pytorch_model.bin.index.json) in a model folder
into model.safetensors (or model-0000x-of-0000y.safetensors and model.safetensors.index.json), without
torch: standard library only.

    python3 weights_tools/convert/bin_to_safetensors.py DIR [OUT_DIR] [--force]

Why: gna reads weights only from safetensors, but the authors' LlambaLMHeadModel.save_pretrained (and
transformers' with safe_serialization=False) writes pytorch_model.bin. OUT_DIR defaults to DIR; into
another folder config.json and the few other small files gna reads are copied. Outputs that exist are
kept unless --force.

A .bin is a zip of data.pkl (the pickled state dict) and data/<key> (each storage's bytes). The pickle
is untrusted, so it is read with only the opcodes and globals a state dict needs (OrderedDict, torch's
_rebuild_tensor_v2 and _rebuild_parameter, the float32/float16/bfloat16 storages), none of them run.
Each tensor is copied out of its storage by offset, shape and strides into C order, so tied weights
(one storage) are each written whole. The file is what safetensors.torch.save_file writes: tensors
sorted by dtype then name, header padded with spaces to 8 bytes, __metadata__ {"format": "pt"}.
Anything else (another global or dtype, a storage missing from the zip, a tensor past its storage) is
refused with one line on stderr and exit status 2, and no output is left behind.
"""
import collections, io, json, os, pickle, pickletools, re, shutil, sys, zipfile

# storage class -> (safetensors dtype, element bytes, memoryview format that keeps bytes as they are)
DTYPES = {"FloatStorage": ("F32", 4, "I"), "HalfStorage": ("F16", 2, "H"), "BFloat16Storage": ("BF16", 2, "H")}
RANK = {"F32": 2, "BF16": 1, "F16": 0}  # safetensors' order: higher dtype first, then by name
# the pickle opcodes torch.save's state dicts use (protocol 2; 4's few extras): building dicts, tuples,
# ints, strings and calls to the globals above, nothing else (no bytearrays, buffers, extensions)
OPCODES = set("""PROTO FRAME GLOBAL STACK_GLOBAL REDUCE BUILD MARK STOP BINPERSID EMPTY_TUPLE TUPLE TUPLE1
    TUPLE2 TUPLE3 EMPTY_DICT SETITEM SETITEMS EMPTY_LIST APPEND APPENDS BINPUT LONG_BINPUT MEMOIZE BINGET
    LONG_BINGET BININT BININT1 BININT2 LONG1 NONE NEWTRUE NEWFALSE BINFLOAT BINUNICODE SHORT_BINUNICODE""".split())
COPIED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
          "special_tokens_map.json", "tokenizer.model")


class Refused(Exception):
    pass


# made only by persistent_load and rebuild_tensor: a pickle can name neither, nor change them (no __dict__)
Storage = collections.namedtuple("Storage", "dtype size fmt key data")
Tensor = collections.namedtuple("Tensor", "storage offset shape stride")


def is_dims(x):
    return type(x) is tuple and all(type(v) is int and v >= 0 for v in x)


def rebuild_tensor(storage, offset, shape, stride, *_):
    """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])"""
    if type(storage) is not Storage or type(offset) is not int or offset < 0 or \
            not is_dims(shape) or not is_dims(stride) or len(shape) != len(stride):
        raise Refused("a tensor with a malformed storage, offset, shape or stride")
    return Tensor(storage, offset, shape, stride)


class Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix):
        super().__init__(file)
        self.zf, self.prefix, self.storages = zf, prefix, {}

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return rebuild_tensor
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return lambda data, *_: data  # torch._utils._rebuild_parameter(data, requires_grad, hooks)
        if module == "torch" and name in DTYPES:
            return DTYPES[name]
        if module == "torch" and name.endswith("Storage"):
            raise Refused(f"tensor dtype torch.{name} is not supported (only float32, float16, bfloat16)")
        raise Refused(f"the pickle asks for the global {module}.{name}, which a state dict never needs")

    def persistent_load(self, pid):
        """('storage', storage class, key, location, numel) -> the bytes of data/<key>"""
        if type(pid) is not tuple or len(pid) != 5 or pid[0] != "storage" or pid[1] not in DTYPES.values() \
                or type(pid[2]) is not str:
            raise Refused(f"unexpected persistent id {pid!r:.80}")
        if pid[2] not in self.storages:
            try:
                self.storages[pid[2]] = Storage(*pid[1], pid[2], self.zf.read(self.prefix + "data/" + pid[2]))
            except KeyError:
                raise Refused(f"storage {pid[2]} is not in the zip (no {self.prefix}data/{pid[2]})") from None
        return self.storages[pid[2]]


def tensor_bytes(name, t):
    """the tensor's elements in C order, checked to lie inside its storage"""
    st = t.storage
    elements = memoryview(st.data)[:len(st.data) // st.size * st.size].cast(st.fmt)
    numel = 1
    for n in t.shape:
        numel *= n
    if numel == 0:
        return b""
    last = t.offset + sum((n - 1) * s for n, s in zip(t.shape, t.stride))
    if last >= len(elements):
        raise Refused(f"tensor {name} reaches element {last} of storage {st.key}, which holds {len(elements)}")
    if numel > len(elements):
        raise Refused(f"tensor {name} has more elements than its storage {st.key} (overlapping strides)")
    c_stride = [1] * len(t.shape)
    for i in range(len(t.shape) - 2, -1, -1):
        c_stride[i] = c_stride[i + 1] * t.shape[i + 1]
    if all(s == c or n == 1 for n, s, c in zip(t.shape, t.stride, c_stride)):  # C-contiguous: one slice
        return elements[t.offset:t.offset + numel].tobytes()
    rows = [t.offset]  # the first element of each row along the last dimension
    for n, s in zip(t.shape[:-1], t.stride[:-1]):
        rows = [r + i * s for r in rows for i in range(n)]
    n, s = t.shape[-1], t.stride[-1]
    if s == 0:
        return b"".join(elements[r:r + 1].tobytes() * n for r in rows)
    return b"".join(elements[r:r + (n - 1) * s + 1:s].tobytes() for r in rows)


def read_bin(path):
    """{name: (dtype, shape, bytes)} of a zip-format torch.save file of a state dict"""
    try:
        with zipfile.ZipFile(path) as zf:
            pkls = [n for n in zf.namelist() if re.fullmatch(r"[^/]+/data\.pkl", n)]
            if len(pkls) != 1:
                raise Refused("no single <archive>/data.pkl in the zip")
            prefix = pkls[0][:-len("data.pkl")]
            if any(i.compress_type != zipfile.ZIP_STORED for i in zf.infolist()):
                raise Refused("compressed zip entries (torch.save stores them uncompressed)")
            if prefix + "byteorder" in zf.namelist() and zf.read(prefix + "byteorder") != b"little":
                raise Refused("storages are not little-endian")
            pkl = zf.read(pkls[0])
            for op, _, _ in pickletools.genops(pkl):
                if op.name not in OPCODES:
                    raise Refused(f"the pickle uses opcode {op.name}, which a state dict never needs")
            state = Unpickler(io.BytesIO(pkl), zf, prefix).load()
    except Refused:
        raise
    except zipfile.BadZipFile as e:
        raise Refused(f"bad zip ({e}; torch.save files of the legacy, non-zip format are not read)") from None
    except Exception as e:
        raise Refused(f"unreadable ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict):
        raise Refused("the pickle holds no state dict")
    out = {}
    for name, t in state.items():
        if type(name) is not str or type(t) is not Tensor:
            raise Refused(f"entry {name!r:.60} is not a tensor")
        out[name] = (t.storage.dtype, list(t.shape), tensor_bytes(name, t))
    return out


def write_safetensors(path, tensors):
    names = sorted(tensors, key=lambda k: (-RANK[tensors[k][0]], k))
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for k in names:
        dtype, shape, data = tensors[k]
        header[k] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for k in names:
            f.write(tensors[k][2])


def read_index(path):
    """{shard file: the set of tensor names the index puts in it}"""
    try:
        with open(path) as f:
            shards = {}
            for name, file in json.load(f)["weight_map"].items():
                shards.setdefault(file, set()).add(name)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise Refused(path, f"not a shard index with a weight_map ({type(e).__name__}: {e})") from None
    for file in shards:
        if type(file) is not str or not re.fullmatch(r"pytorch_model[\w.-]*\.bin", file):
            raise Refused(path, f"weight_map names {file!r:.60}, not a pytorch_model*.bin in the folder")
    return shards


def convert(src, dst, force):
    """returns the paths written; raises Refused(path, problem)"""
    index = os.path.join(src, "pytorch_model.bin.index.json")
    if os.path.exists(os.path.join(src, "pytorch_model.bin")):
        shards, index = {"pytorch_model.bin": None}, None
    elif os.path.exists(index):
        shards = read_index(index)
    else:
        raise Refused(src, "no pytorch_model.bin or pytorch_model.bin.index.json")
    outputs = {file: "model" + file[len("pytorch_model"):-len(".bin")] + ".safetensors" for file in shards}
    elsewhere = os.path.realpath(src) != os.path.realpath(dst)
    copies = [f for f in COPIED if elsewhere and os.path.isfile(os.path.join(src, f))]
    for f in list(outputs.values()) + ["model.safetensors.index.json"] * bool(index) + copies:
        if os.path.exists(os.path.join(dst, f)) and not force:
            raise Refused(os.path.join(dst, f), "exists (--force to overwrite)")
    os.makedirs(dst, exist_ok=True)
    written, weight_map, total = [], {}, 0
    try:
        for file, names in shards.items():
            try:
                tensors = read_bin(os.path.join(src, file))
            except Refused as e:
                raise Refused(os.path.join(src, file), e.args[0]) from None
            if names is not None and names != set(tensors):
                raise Refused(os.path.join(src, file), f"holds other tensors than {index} puts in it")
            written.append(os.path.join(dst, outputs[file]))
            write_safetensors(written[-1], tensors)
            weight_map.update((k, outputs[file]) for k in tensors)
            total += sum(len(t[2]) for t in tensors.values())
        if index:
            written.append(os.path.join(dst, "model.safetensors.index.json"))
            with open(written[-1], "w") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f,
                          indent=2)
        for f in copies:
            written.append(os.path.join(dst, f))
            shutil.copyfile(os.path.join(src, f), written[-1])
    except BaseException:
        for p in written:
            if os.path.exists(p):
                os.remove(p)
        raise
    return written


def main(argv):
    force = "--force" in argv
    args = [a for a in argv if a != "--force"]
    if len(args) not in (1, 2) or any(a.startswith("-") for a in args):
        print("usage: bin_to_safetensors.py DIR [OUT_DIR] [--force]", file=sys.stderr)
        return 2
    try:
        for p in convert(args[0], args[-1], force):
            print(p)
    except Refused as e:
        print(" ".join(f"bin_to_safetensors: {e.args[0]}: {e.args[1]}".splitlines()), file=sys.stderr)
        return 2
    except OSError as e:
        print(f"bin_to_safetensors: {e.filename or args[-1]}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
