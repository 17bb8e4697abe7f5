"""Compiling LLVM IR to machine code with llvmlite, and the on-disk cache of the object code.

A module is compiled once (optimised at -O2 for the host CPU) and its object
code kept under `$XDG_CACHE_HOME/gpurace/native/` (default
`~/.cache/gpurace/native/`), one file per module named by a hash of the IR
text, the llvmlite and gpurace versions and the host CPU with its features:
the same kernel seen again loads its machine code without running LLVM. Each
entry starts with the SHA-256 of its object code: a damaged entry is compiled
again. A cache directory that cannot be written only costs the compile next
time.

llvmlite is imported here and only here, when the first compiled run or
large fused multiply-add executes (`array_fma`), so `import gpurace` and
small interpreted launches never load LLVM.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gpurace.cache import cache_dir

#: The C signature of every compiled run: (thread ids, count, operand table, per-instruction flags) -> the threads
#: it finished (count, or fewer when an access aborted the call: `memory_steps`).
RUN_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


@dataclass
class CompileStats:
    """What the last `load` cost: whether the cache had it, and the seconds spent."""

    cache_hit: bool = False
    seconds: float = 0.0


LAST = CompileStats()
LOADED: dict[str, dict] = {}
"""Cache key -> the functions of the module loaded under it in this process (its machine code stays loaded)."""


class _Llvm:
    """The initialised LLVM target machine of this host (created on first use)."""

    _instance = None

    def __init__(self):
        import llvmlite
        import llvmlite.binding as llvm

        from gpurace import __version__

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.llvm = llvm
        target = llvm.Target.from_default_triple()
        cpu = llvm.get_host_cpu_name()
        features = llvm.get_host_cpu_features().flatten()
        self.machine = target.create_target_machine(cpu=cpu, features=features, opt=2, reloc="static", codemodel="jitdefault")
        self.identity = f"llvmlite {llvmlite.__version__}; gpurace {__version__}; {llvm.get_process_triple()}; {cpu}; {features}"
        self.engines = []  # kept alive: the machine code of every loaded module lives in its engine

    @classmethod
    def get(cls) -> "_Llvm":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def compile(self, ir_text: str) -> bytes:
        llvm = self.llvm
        module = llvm.parse_assembly(ir_text)
        module.verify()
        options = llvm.PipelineTuningOptions(speed_level=2)
        builder = llvm.create_pass_builder(self.machine, options)
        builder.getModulePassManager().run(module, builder)
        return self.machine.emit_object(module)

    def load(self, obj: bytes, names: list[str]) -> dict[str, int]:
        llvm = self.llvm
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.machine)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        self.engines.append(engine)
        return {name: engine.get_function_address(name) for name in names}


def load(ir_text: str, names: list[str], signature=RUN_SIGNATURE) -> dict[str, object]:
    """The functions `names` of the module `ir_text`, as ctypes callables of `signature` (compiled or from the cache)."""
    start = time.perf_counter()
    llvm = _Llvm.get()
    key = hashlib.sha256(f"{llvm.identity}\n{ir_text}".encode()).hexdigest()
    if key in LOADED:  # another launch of the same kernel in this process
        LAST.cache_hit, LAST.seconds = True, time.perf_counter() - start
        return LOADED[key]
    path = cache_dir() / "native" / f"{key}.o"
    obj = _cached(path)
    hit = obj is not None
    if obj is None:
        obj = llvm.compile(ir_text)
        _store(path, obj)
    addresses = llvm.load(obj, names)
    functions = LOADED[key] = {name: signature(address) for name, address in addresses.items()}
    LAST.cache_hit, LAST.seconds = hit, time.perf_counter() - start
    return functions


def _cached(path: Path) -> bytes | None:
    """The object code in a cache entry, or None when there is none or it is damaged (LLVM would crash on it)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, obj = data[:32], data[32:]
    return obj if hashlib.sha256(obj).digest() == digest else None


def _store(path: Path, obj: bytes) -> None:
    """Write atomically (a concurrent run reads a whole file or none), with the digest `_cached` checks;
    a failure only loses the cache entry."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(obj).digest() + obj)
        os.replace(tmp, path)
    except OSError:
        pass
