"""gna from Python: a ctypes binding over build/libgna.so.

The design card's layout has no other place for Python, so the binding lives in weights_tools/. It is
a ctypes binding over build/libgna.so (`make lib`: gna.c compiled with -DGNA_NO_MAIN into a shared
library) and has no compiled code of its own; it needs the standard library and numpy, nothing else.
The library is found at ../../build/libgna.so relative to this file, or at the path in the environment
variable GNA_LIB.

    import gna
    with gna.Model("test/models/llama_demo") as m:
        ids = m.tokenize("Memorize the following dictionary:\\napple:42\\n")
        logits = m.logits(ids)                           # float32 [T, V]
        ablated = m.logits(ids, mask="L2H0")             # the command line's --mask grammar
        maps = m.attention(ids, heads="L1H5,L2H0")       # float32 [heads, rows, T]
        kv = m.kv(pairs=[10, 30], samples=20, mask="L1H5,L2H0", quiet=True)
        kv["results"]["kv_pairs_10_masked"]["acc,none"]

Model(DIR, threads=None, bf16=False, reference=False, dt_min_clamp=False) loads the folder (gna_load);
the keywords are the command line's --threads N, --bf16, --reference, --dt-min-clamp and hold for
everything the model runs. Interventions are keywords of each call, with the command line's grammar
(`gna --help`): mask="L17H24@-1", layers="0-17" (or (0, 17)), drop=3 (or [3, 5]), replace={17: DIR}
(or "17=DIR", or a list of those). A run (gna_run_new) is made once per set of options and kept until
close(); each logits() call runs the ids from position 0 in a fresh cache, so its numbers are those
of `gna logits --tokens IDS -o OUT.npy` with the same options, bit for bit when the library and the
program are built with the same compiler flags.

  m.config, m.vocab_size, m.path      config.json as a dict; gna_vocab_size; the folder
  m.tokenize(text, special=True)      list of ids (DIR/tokenizer.json, loaded on first use)
  m.detokenize(ids, skip_special=False)
  m.logits(ids, mask=, layers=, drop=, replace=, patch=, states=)   float32 [T, V]
  m.attention(ids, heads="L16H22,L17H24", rows=None, mask=, ...)   float32 [n_heads, n_rows, T]
  m.capture(ids, sites, positions=None, mask=, patch=, states=, ...)
                                      {site: float32 [n_positions, width]}: a site is "L3", the residual
                                      stream after layer 3, or one head, "L3H2" / "L3A1" / "L3S0": its
                                      output, the slice of the out-projection input that ablation zeroes
  m.states(ids, position, layers=None, ...)
                                      {layer: float32 [heads, head_dim, state]}: the SSM state after the
                                      token at `position` (Mamba-1: [channels, 1, state])
  m.unembed(hidden)                   the final norm and LM head on [n, D] (or [D]) rows: the logit lens
  m.lens(ids, position=-1, ...)       float32 [layers run, V]: unembed of the residual after each layer

Patching (activation patching, clean -> corrupted): patch={site: (positions, values)} writes values
[n_positions, width] (or [width] for one position) over the site during the run, after any ablation
there; states={layer: (position, state)} replaces an SSM layer's state after that token (the run goes in
two chunks there; the conv state stays its own). Positions are ints, negative from the end. A capture
sees the site after its ablation and before its patch. Bits: a run split by states= matches the same
split's (the vector matmul's order of summation depends on a chunk's length below 6 tokens).
  m.kv(**options), m.mmlu(data=, ...), m.mc(data=, ...), m.heads(task=, ...)
                                      the harness commands run in this process through gna_task, with
                                      keywords for their options (pairs=[10, 20] is --pairs 10,20,
                                      no_reuse=True is --no-reuse); they return the --json results
                                      as a dict; quiet=True keeps the results table off stdout
  m.close(), `with gna.Model(...) as m:`

Errors: a failed call raises gna.Error, whose message is gna_error()'s line ("<file or option>:
<what is wrong>") and whose .status is GNA_FAILURE (1) or GNA_BAD_INPUT (2). Arguments of the wrong
type raise TypeError before anything reaches C; token ids outside the vocabulary and empty id lists
raise gna.Error before C sees them, in the words gna_forward uses. A Model holds a lock: calls from
several threads take turns (a gna run is used by one thread at a time).

Signals: the library installs no signal handler (only the gna program does, to remove its unfinished
output files), so after any call the process's signal dispositions are what they were before it,
whatever they were, and a SIGINT that Python would turn into KeyboardInterrupt still does.
"""

import contextlib
import ctypes
import json
import operator
import os
import re
import shutil
import sys
import tempfile
import threading

import numpy as np

__all__ = ["Model", "Error", "GNA_OK", "GNA_FAILURE", "GNA_BAD_INPUT", "library"]

GNA_OK, GNA_FAILURE, GNA_BAD_INPUT = 0, 1, 2
_INT_MAX = 2**31 - 1


class Error(Exception):
    """A gna call failed: str(error) is gna's one line, error.status GNA_FAILURE or GNA_BAD_INPUT."""

    def __init__(self, message, status=GNA_BAD_INPUT):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------------------------------
# The library

_lock = threading.Lock()
_library = None
_libc = None
_p = ctypes.c_void_p
_FLOATS = np.ctypeslib.ndpointer(dtype=np.float32, flags="C_CONTIGUOUS")
_INTS = np.ctypeslib.ndpointer(dtype=np.intc, flags="C_CONTIGUOUS")

_SIGNATURES = {  # name: (restype, argtypes), as gna.h declares them
    "gna_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_p)]),
    "gna_free": (None, [_p]),
    "gna_vocab_size": (ctypes.c_int, [_p]),
    "gna_error": (ctypes.c_char_p, []),
    "gna_run_new": (ctypes.c_int, [_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_p)]),
    "gna_run_free": (None, [_p]),
    "gna_count_heads": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "gna_run_record": (ctypes.c_int, [_p, ctypes.c_char_p, _p, ctypes.c_int, ctypes.c_int, _FLOATS]),
    "gna_cache_new": (ctypes.c_int, [_p, ctypes.c_int, ctypes.POINTER(_p)]),
    "gna_cache_free": (None, [_p]),
    "gna_cache_length": (ctypes.c_int, [_p]),
    "gna_forward": (ctypes.c_int, [_p, _p, _INTS, ctypes.c_int, _p]),
    "gna_tokenizer_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_p)]),
    "gna_tokenizer_free": (None, [_p]),
    "gna_tokenize": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                    ctypes.POINTER(ctypes.POINTER(ctypes.c_int)), ctypes.POINTER(ctypes.c_int)]),
    "gna_detokenize": (ctypes.c_int, [_p, _INTS, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_p),
                                      ctypes.POINTER(ctypes.c_size_t)]),
    "gna_main": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "gna_task": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "gna_site_width": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "gna_run_tap": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_char_p, _INTS, ctypes.c_int, _p]),
    "gna_unembed": (ctypes.c_int, [_p, _FLOATS, ctypes.c_int, _FLOATS]),
    "gna_cache_state": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_int, _p, ctypes.POINTER(ctypes.c_int)]),
    "gna_interrupt": (None, []),
}
GNA_CAPTURE, GNA_PATCH = 0, 1


def library_path():
    """GNA_LIB, else ../../build/libgna.so beside this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("GNA_LIB") or os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libgna.so")


def library():
    """The loaded libgna.so (ctypes.CDLL), its functions typed as gna.h declares them."""
    global _library, _libc
    with _lock:
        if _library is None:
            path = library_path()
            if not os.path.exists(path):
                raise OSError(f"{path}: no such file; build it with `make lib`, or set GNA_LIB to its path")
            lib = ctypes.CDLL(path)
            for name, (restype, argtypes) in _SIGNATURES.items():
                function = getattr(lib, name)
                function.restype, function.argtypes = restype, argtypes
            # gna_tokenize and gna_detokenize hand back malloc'd memory, to be given to the C library's
            # free(); the process's free is the one libgna.so links to
            libc = ctypes.CDLL(None)
            libc.free.restype, libc.free.argtypes = None, [_p]
            libc.fflush.restype, libc.fflush.argtypes = ctypes.c_int, [_p]
            _libc, _library = libc, lib
        return _library


def _check(status, message=None):
    """raise gna.Error unless status is GNA_OK; message: gna_error() as the calling thread read it"""
    if status != GNA_OK:
        message = (library().gna_error() if message is None else message) or b""
        raise Error(message.decode("utf-8", "replace"), status)


def _interruptible(call):
    """Run call(), a gna.h call that returns a status, so that Ctrl-C reaches Python within a tenth of a
    second: from the main thread it runs in a worker thread, and a KeyboardInterrupt asks gna to stop
    (gna_interrupt, which ends the call within a layer of its forward pass), waits for it, then goes on
    up. Returns (status, gna_error() as the calling thread left it)."""
    lib = library()
    if threading.current_thread() is not threading.main_thread():
        status = call()
        return status, lib.gna_error()
    result = {}

    def work():
        result["status"] = call()
        result["error"] = lib.gna_error()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        lib.gna_interrupt()
        worker.join()
        raise
    return result["status"], result["error"]


# ---------------------------------------------------------------------------------------------------
# Arguments: checked here, so that C is only given what it can take

def _text(name, value):
    """A str (or os.PathLike) option as bytes for C; embedded NULs would cut it short there."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogateescape")
    else:
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if b"\0" in data:
        raise Error(f"{name}: contains a NUL character")
    return data


def _integer(name, value, minimum=None):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if minimum is not None and number < minimum:
        raise Error(f"{name}: must be at least {minimum}, got {number}")
    return number


def _ids(value, what="tokens"):
    """Token ids as a C-contiguous int array; any int that is not a C int is refused here."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") and not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ints, not {type(value).__name__}")
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError(f"{what} must be one-dimensional, got shape {value.shape}")
        if value.dtype.kind not in "iu":
            raise TypeError(f"{what} must hold integers, not {value.dtype}")
        wide = value.astype(np.int64)
    else:
        wide = np.array([_integer(what, x) for x in value] or [], dtype=object)
        for x in wide:
            if not -_INT_MAX <= x <= _INT_MAX:
                raise Error(f"{what}: token id {x} is out of range")
        wide = wide.astype(np.int64)
    if wide.size and (wide.min() < -_INT_MAX or wide.max() > _INT_MAX):
        bad = wide[(wide < -_INT_MAX) | (wide > _INT_MAX)][0]
        raise Error(f"{what}: token id {bad} is out of range")
    return np.ascontiguousarray(wide, dtype=np.intc)


def _run_options(mask=None, layers=None, drop=None, replace=None):
    """Keywords of a run as the command line's option strings, in gna_run_new's order."""
    options = []
    if layers is not None:
        if isinstance(layers, (tuple, list)) and len(layers) == 2:
            layers = f"{_integer('layers', layers[0])}-{_integer('layers', layers[1])}"
        options += [b"--layers", _text("layers", layers)]
    if drop is not None:
        for layer in [drop] if not isinstance(drop, (list, tuple, set, range)) else sorted(drop):
            options += [b"--drop", str(_integer("drop", layer)).encode()]
    if replace is not None:
        if isinstance(replace, dict):
            items = [f"{_integer('replace', layer)}={os.fspath(d)}" for layer, d in replace.items()]
        elif isinstance(replace, (str, bytes, os.PathLike)):
            items = [replace]
        else:
            items = list(replace)
        for item in items:
            options += [b"--replace", _text("replace", item)]
    if mask is not None:
        options += [b"--mask", _text("mask", mask)]
    return tuple(options)


def _rows(rows, T):
    """Query rows: an int, ints, or the command line's "N,N-M" text; negative from the end."""
    if isinstance(rows, (str, bytes)):
        text = rows.decode() if isinstance(rows, bytes) else rows
        pairs = []
        for part in text.split(","):
            match = re.fullmatch(r"(-?\d+)(?:-(-?\d+))?", part.strip())
            if not match:
                raise Error(f"rows: \"{text}\": expected positions N or N-M inside the {T} tokens, comma separated")
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) is not None else first
            pairs.append((first, last))
    else:
        numbers = [rows] if not hasattr(rows, "__iter__") else list(rows)
        pairs = [(_integer("rows", r),) * 2 for r in numbers]
    out = []
    for first, last in pairs:
        a, b = first + T if first < 0 else first, last + T if last < 0 else last
        if not (0 <= a < T and 0 <= b < T):
            raise Error(f"rows: row {first if not 0 <= a < T else last} is outside the {T} tokens")
        if b < a:
            raise Error(f"rows: {first}-{last} runs backwards")
        out.extend(range(a, b + 1))
    if not out:
        raise Error("rows: no rows given")
    return np.array(out, dtype=np.intc)



def _harness_arguments(options):
    arguments = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = b"--" + name.replace("_", "-").encode()
        if value is True:
            arguments.append(flag)
        elif isinstance(value, (list, tuple, range)):
            if name == "shard" and len(value) == 2:
                text = f"{_integer(name, value[0])}/{_integer(name, value[1])}"
            else:
                text = ",".join(str(_integer(name, v)) for v in value)
            arguments += [flag, text.encode()]
        elif isinstance(value, (str, bytes, os.PathLike)):
            arguments += [flag, _text(name, value)]
        else:
            arguments += [flag, str(_integer(name, value)).encode()]
    return arguments


_quiet = {"lock": threading.Lock(), "count": 0, "saved": None}


@contextlib.contextmanager
def _stdio(quiet):
    """gna_task writes with C's stdio: flush around it so its lines keep their place; quiet sends file
    descriptors 1 and 2 to /dev/null meanwhile. File descriptors are the process's: quiet calls from
    several threads share one redirection, made by the first and undone by the last, so that stdout and
    stderr are always given back."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _libc.fflush(None)
    if not quiet:
        try:
            yield
        finally:
            _libc.fflush(None)
        return
    with _quiet["lock"]:
        if _quiet["count"] == 0:
            _quiet["saved"] = [os.dup(1), os.dup(2)]
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.close(null)
        _quiet["count"] += 1
    try:
        yield
    finally:
        _libc.fflush(None)
        with _quiet["lock"]:
            _quiet["count"] -= 1
            if _quiet["count"] == 0:
                os.dup2(_quiet["saved"][0], 1)
                os.dup2(_quiet["saved"][1], 2)
                for fd in _quiet["saved"]:
                    os.close(fd)


# ---------------------------------------------------------------------------------------------------
# The model

class Model:
    """A model folder loaded with gna_load, and the runs made of it (see the module's docstring)."""

    def __init__(self, path, threads=None, bf16=False, reference=False, dt_min_clamp=False):
        self._model = None
        self._runs = {}
        self._tokenizer = None
        self._config = None
        self._lock = threading.RLock()
        lib = library()
        self.path = os.fspath(path) if isinstance(path, os.PathLike) else path
        encoded = _text("path", self.path)
        base = []
        if threads is not None:
            base += [b"--threads", str(_integer("threads", threads)).encode()]
        for flag, on in ((b"--bf16", bf16), (b"--reference", reference), (b"--dt-min-clamp", dt_min_clamp)):
            if not isinstance(on, (bool, np.bool_)):
                raise TypeError(f"{flag.decode()[2:].replace('-', '_')} must be a bool")
            if on:
                base.append(flag)
        self._base = tuple(base)
        model = _p()
        _check(lib.gna_load(encoded, ctypes.byref(model)))
        self._model = model
        self.vocab_size = lib.gna_vocab_size(model)
        try:
            self._run(())  # the model as it is: checks the options now (a bad --threads, say)
        except BaseException:
            self.close()
            raise

    # -- lifetime

    def close(self):
        """Frees the runs, the tokenizer and the model; the object is unusable after."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            lib = _library
            if lib is None:
                return
            for run in getattr(self, "_runs", {}).values():
                lib.gna_run_free(run)
            self._runs = {}
            if getattr(self, "_tokenizer", None) is not None:
                lib.gna_tokenizer_free(self._tokenizer)
                self._tokenizer = None
            if getattr(self, "_model", None) is not None:
                lib.gna_free(self._model)
                self._model = None

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self):
        state = "closed" if self._model is None else f"vocab_size {self.vocab_size}"
        return f"gna.Model({self.path!r}, {state})"

    def _open(self):
        if self._model is None:
            raise ValueError("the model is closed")

    # -- what the folder holds

    @property
    def config(self):
        """config.json, parsed (a copy: changing it changes nothing that runs)."""
        if self._config is None:
            with open(os.path.join(self.path, "config.json"), encoding="utf-8") as f:
                self._config = json.load(f)
        return json.loads(json.dumps(self._config))

    def _run(self, options):
        """The run for this option set (made once, freed by close())."""
        self._open()
        key = self._base + options
        run = self._runs.get(key)
        if run is None:
            run = self._new_run(key)
            self._runs[key] = run
        return run

    def _new_run(self, options):
        strings = (ctypes.c_char_p * max(1, len(options)))(*options)
        run = _p()
        _check(library().gna_run_new(self._model, len(options), strings, ctypes.byref(run)))
        return run

    def _token_ids(self, ids):
        tokens = _ids(ids)
        if tokens.size == 0:
            raise Error("tokens: nothing to run: no tokens")
        bad = tokens[(tokens < 0) | (tokens >= self.vocab_size)]
        if bad.size:
            raise Error(f"tokens: token id {bad[0]} is out of range for vocab_size {self.vocab_size}")
        return tokens

    # -- tokenizer

    def _tokenizer_handle(self):
        self._open()
        if self._tokenizer is None:
            handle = _p()
            _check(library().gna_tokenizer_load(_text("path", os.path.join(self.path, "tokenizer.json")),
                                                ctypes.byref(handle)))
            self._tokenizer = handle
        return self._tokenizer

    def tokenize(self, text, special=True):
        """The ids of a text (str, or UTF-8 bytes): Hugging Face tokenizers' encode(text).ids, with the
        tokenizer's special tokens (BOS) added unless special=False."""
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogatepass")  # C names an unpaired surrogate's byte
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise TypeError(f"text must be a str or bytes, not {type(text).__name__}")
        lib = library()
        with self._lock:
            handle = self._tokenizer_handle()
            ids, n = ctypes.POINTER(ctypes.c_int)(), ctypes.c_int()
            _check(lib.gna_tokenize(handle, data, len(data), 1 if special else 0, ctypes.byref(ids), ctypes.byref(n)))
            try:
                return ids[: n.value]
            finally:
                _libc.free(ctypes.cast(ids, _p))

    def detokenize(self, ids, skip_special=False):
        """The text of token ids (Hugging Face's decode(ids)); special tokens left out if skip_special."""
        tokens = _ids(ids)
        buffer = tokens if tokens.size else np.zeros(1, dtype=np.intc)
        lib = library()
        with self._lock:
            handle = self._tokenizer_handle()
            text, length = _p(), ctypes.c_size_t()
            _check(lib.gna_detokenize(handle, buffer, tokens.size, 1 if skip_special else 0, ctypes.byref(text),
                                      ctypes.byref(length)))
            try:
                return ctypes.string_at(text, length.value).decode("utf-8", "replace")
            finally:
                _libc.free(text)

    # -- running the model

    def logits(self, ids, mask=None, layers=None, drop=None, replace=None, patch=None, states=None):
        """float32 [T, V]: the next-token logits at every position of ids, run from position 0 in a
        fresh cache, with those interventions (`gna logits --tokens IDS -o OUT.npy` and its options);
        patch= and states= as the module's docstring says."""
        if patch is None and states is None:
            options = _run_options(mask, layers, drop, replace)
            tokens = self._token_ids(ids)
            T = int(tokens.size)
            out = np.empty((T, self.vocab_size), dtype=np.float32)
            lib = library()
            with self._lock:
                run = self._run(options)
                cache = _p()
                _check(lib.gna_cache_new(run, T, ctypes.byref(cache)))
                try:
                    _check(*_interruptible(lambda: lib.gna_forward(run, cache, tokens, T, out.ctypes.data)))
                finally:
                    lib.gna_cache_free(cache)
            return out
        return self._tapped(ids, (), patch, states, (mask, layers, drop, replace))[0]

    def capture(self, ids, sites, positions=None, mask=None, layers=None, drop=None, replace=None, patch=None,
                states=None):
        """{site: float32 [n_positions, width]}: each site's vectors at positions (None: all) during a
        run of ids; sites: a site or a list of them ("L3", "L3H2", ...)."""
        names = [sites] if isinstance(sites, (str, bytes)) else list(sites)
        return self._tapped(ids, names, patch, states, (mask, layers, drop, replace), positions)[1]

    def states(self, ids, position, layers=None, mask=None, drop=None, replace=None, patch=None):
        """{layer: float32 [heads, head_dim, state]}: the state of each SSM layer (layers: an int, ints,
        or None: every SSM layer the run has) after the token at `position` of ids."""
        tokens = self._token_ids(ids)
        at = self._positions(position, int(tokens.size), "position")[0]
        return self._tapped(tokens[: at + 1], (), patch, None, (mask, None, drop, replace), None, layers)[2]

    def unembed(self, hidden, mask=None, layers=None, drop=None, replace=None):
        """float32 [n, V] (or [V] for one [D] row): RMSNorm(hidden) Wlm^T, the final norm and LM head
        (gna_unembed): the logit lens on a residual from capture()."""
        rows = np.ascontiguousarray(hidden, dtype=np.float32)
        single = rows.ndim == 1
        D = self.config.get("hidden_size", self.config.get("d_model"))
        if rows.ndim not in (1, 2) or rows.shape[-1] != D or rows.size == 0:
            raise Error(f"hidden: expected [n, {D}] floats, got shape {rows.shape}")
        rows = rows.reshape(-1, D)
        out = np.empty((rows.shape[0], self.vocab_size), dtype=np.float32)
        with self._lock:
            _check(library().gna_unembed(self._run(_run_options(mask, layers, drop, replace)), rows, rows.shape[0], out))
        return out[0] if single else out

    def lens(self, ids, position=-1, mask=None, layers=None, drop=None, replace=None, patch=None, states=None):
        """float32 [layers run, V]: the logit lens at one position (`gna lens --at`): the residual
        after each layer the run has, through unembed(). The last row is the model's own logits."""
        options = (mask, layers, drop, replace)
        with self._lock:
            run = self._run(_run_options(*options))
            names = []
            for layer in range(self._layer_count()):
                width = ctypes.c_int()
                if library().gna_site_width(run, f"L{layer}".encode(), ctypes.byref(width)) == GNA_OK:
                    names.append(f"L{layer}")
            captured = self._tapped(ids, names, patch, states, options, [position])[1]
        return self.unembed(np.concatenate([captured[n] for n in names]), *options)

    # -- taps: capture, patch, states

    def _layer_count(self):
        c = self.config
        return c.get("num_hidden_layers", c.get("n_layer", c.get("n_layers")))

    @staticmethod
    def _positions(positions, T, what):
        numbers = [positions] if not hasattr(positions, "__iter__") or isinstance(positions, (str, bytes)) else list(positions)
        out = []
        for p in numbers:
            p = _integer(what, p)
            q = p + T if p < 0 else p
            if not 0 <= q < T:
                raise Error(f"{what}: position {p} is outside the {T} tokens")
            out.append(q)
        if not out:
            raise Error(f"{what}: no positions given")
        return np.array(out, dtype=np.intc)

    def _tapped(self, ids, capture_sites, patch, states, options, positions=None, state_layers=()):
        """One run of ids with taps: the logits, {site: captured}, {layer: state after the last token}
        (state_layers: () none, None every SSM layer, or ints)"""
        tokens = self._token_ids(ids)
        T = int(tokens.size)
        if patch is not None and not isinstance(patch, dict):
            raise TypeError("patch must be a dict {site: (positions, values)}")
        if states is not None and not isinstance(states, dict):
            raise TypeError("states must be a dict {layer: (position, state)}")
        lib = library()
        keep = []  # every array C points into, alive until the run is freed
        with self._lock:
            self._open()
            # a run of its own, freed here: its taps point into this call's arrays
            run = self._new_run(self._base + _run_options(*options))
            cache = _p()
            try:
                def width_of(site):
                    width = ctypes.c_int()
                    _check(lib.gna_site_width(run, site, ctypes.byref(width)))
                    return width.value

                captured = {}
                at = np.arange(T, dtype=np.intc) if positions is None else self._positions(positions, T, "positions")
                for site in capture_sites:
                    name = _text("site", site)
                    values = np.zeros((at.size, width_of(name)), dtype=np.float32)
                    _check(lib.gna_run_tap(run, GNA_CAPTURE, name, at, at.size, values.ctypes.data))
                    keep.append(at)
                    captured[site if isinstance(site, str) else site.decode()] = values
                for site, given in (patch or {}).items():
                    name = _text("site", site)
                    if not isinstance(given, tuple) or len(given) != 2:
                        raise TypeError(f"patch[{site!r}] must be (positions, values)")
                    where = self._positions(given[0], T, "patch positions")
                    width = width_of(name)
                    values = np.ascontiguousarray(given[1], dtype=np.float32)
                    if values.size != where.size * width:
                        raise Error(f"patch: \"{site}\": expected {where.size} x {width} values, got shape {values.shape}")
                    keep += [where, values]
                    _check(lib.gna_run_tap(run, GNA_PATCH, name, where, where.size, values.ctypes.data))
                splits = {}
                for layer, given in (states or {}).items():
                    if not isinstance(given, tuple) or len(given) != 2:
                        raise TypeError(f"states[{layer!r}] must be (position, state)")
                    p = int(self._positions(given[0], T, "states position")[0])
                    splits.setdefault(p, []).append((_integer("states layer", layer), given[1]))
                _check(lib.gna_cache_new(run, T, ctypes.byref(cache)))
                logits = np.empty((T, self.vocab_size), dtype=np.float32)
                start = 0
                for end in sorted(splits) + [T - 1]:
                    if end >= start:
                        chunk = np.ascontiguousarray(tokens[start:end + 1])
                        _check(*_interruptible(lambda: lib.gna_forward(run, cache, chunk, chunk.size, logits[start:].ctypes.data)))
                        start = end + 1
                    for layer, state in splits.get(end, []):
                        n = ctypes.c_int()
                        _check(lib.gna_cache_state(cache, layer, GNA_PATCH, None, ctypes.byref(n)))
                        values = np.ascontiguousarray(state, dtype=np.float32)
                        if values.size != n.value:
                            raise Error(f"states: layer {layer}: expected {n.value} floats, got shape {values.shape}")
                        _check(lib.gna_cache_state(cache, layer, GNA_PATCH, values.ctypes.data, ctypes.byref(n)))
                found = {}
                if state_layers != ():
                    wanted = range(self._layer_count()) if state_layers is None else (
                        [state_layers] if not hasattr(state_layers, "__iter__") else state_layers)
                    for layer in wanted:
                        layer = _integer("layers", layer)
                        n = ctypes.c_int()
                        status = lib.gna_cache_state(cache, layer, GNA_CAPTURE, None, ctypes.byref(n))
                        if status != GNA_OK and state_layers is None:
                            continue  # every SSM layer: an attention layer has none
                        _check(status)
                        heads = ctypes.c_int()
                        _check(lib.gna_count_heads(run, f"L{layer}S*".encode(), ctypes.byref(heads)))
                        head_dim = width_of(f"L{layer}S0".encode())
                        values = np.empty((heads.value, head_dim, n.value // (heads.value * head_dim)), dtype=np.float32)
                        _check(lib.gna_cache_state(cache, layer, GNA_CAPTURE, values.ctypes.data, ctypes.byref(n)))
                        found[layer] = values
            finally:
                lib.gna_cache_free(cache)
                lib.gna_run_free(run)
        return logits, captured, found

    def attention(self, ids, heads, rows=None, mask=None, layers=None, drop=None, replace=None):
        """float32 [n_heads, n_rows, T]: for each head of `heads` (the --heads grammar, in its order)
        its attention rows, softmax probabilities or an SSM head's implicit attention (`gna attn`).
        rows: None (all), an int, ints or "N,N-M" text, negative from the end; mask etc. as logits()."""
        options = _run_options(mask, layers, drop, replace)
        heads_text = _text("heads", heads)
        tokens = self._token_ids(ids)
        T = int(tokens.size)
        row_ids = None if rows is None else _rows(rows, T)
        n_rows = T if row_ids is None else int(row_ids.size)
        lib = library()
        with self._lock:
            self._open()
            # A run of its own, freed here: gna_run_record's probes stay on a run and point into the
            # caller's matrices, so a cached run would keep writing into a freed array on its next use.
            run = self._new_run(self._base + options)
            cache = _p()
            try:
                n_heads = ctypes.c_int()
                _check(lib.gna_count_heads(run, heads_text, ctypes.byref(n_heads)))
                matrices = np.zeros((max(1, n_heads.value), n_rows, T), dtype=np.float32)
                rows_pointer = None if row_ids is None else row_ids.ctypes.data
                _check(lib.gna_run_record(run, heads_text, rows_pointer, n_rows, T, matrices))
                _check(lib.gna_cache_new(run, T, ctypes.byref(cache)))
                _check(*_interruptible(lambda: lib.gna_forward(run, cache, tokens, T, None)))
            finally:
                lib.gna_cache_free(cache)
                lib.gna_run_free(run)
        return matrices[: n_heads.value]

    # -- the harnesses, through the command line in this process

    def _harness(self, command, quiet, mask, layers, drop, replace, options):
        for name in ("json", "threads"):  # the binding's own: it reads --json itself, and threads= is the Model's
            if name in options:
                raise TypeError(f"{command}() got an unexpected keyword argument '{name}' "
                                "(the results are returned; threads= is gna.Model's)")
        self._open()
        arguments = list(self._base) + list(_run_options(mask, layers, drop, replace))
        arguments += _harness_arguments(options)
        lib = library()
        directory = tempfile.mkdtemp(prefix="gna-")
        try:
            results = os.path.join(directory, "results.json")
            arguments += [b"--json", results.encode(), b"-q"]
            strings = (ctypes.c_char_p * (len(arguments) + 1))(*arguments, None)
            with self._lock, _stdio(quiet):
                status, message = _interruptible(lambda: lib.gna_task(self._model, command.encode(), len(arguments), strings))
            if status != GNA_OK and re.search(rb"^--[a-z0-9-]+: (unknown option|not an option)", message or b""):
                option = message.split(b":")[0].decode()
                raise TypeError(f"{command}() got an unexpected keyword argument '{option[2:].replace('-', '_')}' ({message.decode()})")
            _check(status, message)
            with open(results, encoding="utf-8") as f:
                return json.load(f)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def kv(self, mask=None, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna kv`: pairs=[10, 20], samples=, seed=, keys=FILE, svg=, log=, shard=(i, n), no_reuse=;
        with mask= every sample is scored with and without it. Returns the --json results."""
        return self._harness("kv", quiet, mask, layers, drop, replace, options)

    def mmlu(self, data, mask=None, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna mmlu --data PATH`: shots=, limit=, bos=, log=, shard=, no_reuse=. Returns the --json results."""
        return self._harness("mmlu", quiet, mask, layers, drop, replace, dict(options, data=data))

    def mc(self, data, mask=None, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna mc --data FILE.jsonl`: limit=, bos=, log=, shard=, no_reuse=. Returns the --json results."""
        return self._harness("mc", quiet, mask, layers, drop, replace, dict(options, data=data))

    def knowledge(self, data, mask=None, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna knowledge --data FOLDER`: the paper's knowledge control (lm-eval's six zero-shot tasks);
        tasks="arc_easy,piqa", limit=, bos=, log=, shard=, no_reuse=. Returns the --json results."""
        return self._harness("knowledge", quiet, mask, layers, drop, replace, dict(options, data=data))

    def gsm8k(self, data, mask=None, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna gsm8k --data FOLDER`: shots=, max_gen_toks=, limit=, bos=, log=, shard=, no_reuse=. Returns the
        --json results."""
        return self._harness("gsm8k", quiet, mask, layers, drop, replace, dict(options, data=data))

    def heads(self, task, layers=None, drop=None, replace=None, quiet=False, **options):
        """`gna heads --task kv|mmlu`: heads=SPEC, top=, pairs=, samples=, seed=, data=, shots=, limit=, sweep=N or "all",
        svg=, shard=(i, n) (then the return is the shard's part, for gna merge). Returns the --json results: every head's scores, the ablations and the pairs."""
        return self._harness("heads", quiet, None, layers, drop, replace, dict(options, task=task))
