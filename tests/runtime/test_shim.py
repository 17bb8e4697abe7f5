"""gpurace's libcudart.so.13: built once per version into the cache, exporting what programs link against."""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from gpurace.errors import UserError
from gpurace.limits import Limits
from gpurace.runtime import shim_build
from gpurace.runtime.process import Program
from gpurace.runtime.protocol import STICKY, STOP, MemoryKind, ObjectKind, Op, ResourceKind, VarFlag

NVIDIA_RUNTIME = Path("/usr/local/cuda/lib64/libcudart.so.13")


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        return shim_build.shim_directory(Limits()) / shim_build.LIBRARY_NAME


def exported(path: Path) -> dict[str, str]:
    """Exported function name -> version node, from `objdump -T`."""
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=True).stdout
    rows = (line.split() for line in out.splitlines() if " DF " in line and "*UND*" not in line)
    return {row[-1]: row[-2] for row in rows}


def test_the_library_is_built_once_into_the_cache(library, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(library.parents[2]))
    built = library.stat().st_mtime_ns
    assert shim_build.shim_directory(Limits()) == library.parent
    assert library.stat().st_mtime_ns == built


def test_without_gcc_the_message_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(shim_build.shutil, "which", lambda name: None)
    with pytest.raises(UserError, match="no gcc on PATH"):
        shim_build.shim_directory(Limits())


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump")
def test_every_call_carries_the_version_programs_ask_for(library):
    symbols = exported(library)
    assert {"cudaMalloc", "cudaMemcpy", "__cudaRegisterFatBinary", "__cudaPushCallConfiguration"} <= set(symbols)
    assert set(symbols.values()) == {"libcudart.so.13"}


@pytest.mark.skipif(
    shutil.which("objdump") is None or not NVIDIA_RUNTIME.is_file(), reason="needs objdump and NVIDIA's runtime"
)
def test_every_call_of_nvidias_runtime_is_defined(library):
    """Those not implemented are stubs that stop the program naming the call (shim/unsupported_calls.h)."""
    ours, theirs = exported(library), exported(NVIDIA_RUNTIME)
    wanted = {name for name in theirs if re.match(r"^_?_?cuda", name)}
    assert wanted <= set(ours), sorted(wanted - set(ours))


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump")
def test_the_driver_library_defines_every_function_of_cuda_h(library):
    """cuda.h as the nvidia-cuda-nvcc package ships it: what a program linking -lcuda may call. Those not
    implemented stop the program naming the call (shim/driver_calls.h); nothing but cu* names is exported."""
    header = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "include" / "cuda.h"
    declared = set(re.findall(r"CUresult CUDAAPI (cu\w+)\(", header.read_text()))
    ours = exported(library.parent / shim_build.DRIVER_NAME)
    assert {"cuInit", "cuMemAlloc", "cuTensorMapEncodeTiled", "cuLaunchKernel"} <= declared
    assert declared <= set(ours), sorted(declared - set(ours))
    assert all(name.startswith("cu") for name in ours)
    assert (library.parent / "libcuda.so").resolve() == (library.parent / shim_build.DRIVER_NAME).resolve()


def test_a_call_no_runtime_defines_is_noticed_on_stderr(capfd):
    # What the dynamic linker writes when a program calls a function no loaded library defines.
    message = "./app: symbol lookup error: ./app: undefined symbol: cudaFutureCall, version libcudart.so.13"
    program = Program(Path("/bin/sh"), ["-c", f"echo '{message}' >&2; exit 127"], {}, (), capture=False)
    assert program.wait() == 127
    assert program.missing_symbols == ["cudaFutureCall"]
    assert capfd.readouterr().err == message + "\n"  # passed through unchanged


def test_captured_output_and_signals():
    program = Program(Path("/bin/sh"), ["-c", "echo out; echo err >&2; kill -TERM $$"], {}, (), capture=True)
    assert program.wait() == 128 + 15
    assert (program.stdout, program.stderr) == ("out\n", "err\n")


def test_the_shim_speaks_the_protocol_as_documented():
    """The C side's numbers are the Python side's (runtime/protocol.py is the contract)."""
    source = (shim_build.SHIM_SOURCES / "cudart.c").read_text()
    every_file = "".join((shim_build.SHIM_SOURCES / name).read_text() for name in shim_build.SHIM_FILES if name.endswith((".c", ".h")))
    numbers = {name: int(value) for name, value in re.findall(r"\b([A-Z_0-9]+) = (\d+)", every_file)}
    assert {op.name: op.value for op in Op} == {k[3:]: v for k, v in numbers.items() if k.startswith("OP_")}
    assert {k.name: k.value for k in MemoryKind} == {k[5:]: v for k, v in numbers.items() if k.startswith("KIND_")}
    assert {f.name: f.value for f in VarFlag} == {k[4:]: v for k, v in numbers.items() if k.startswith("VAR_")}
    assert {k.name: k.value for k in ObjectKind} == {k[7:]: v for k, v in numbers.items() if k.startswith("OBJECT_")}
    assert {k.name: k.value for k in ResourceKind} == {k[9:]: v for k, v in numbers.items() if k.startswith("RESOURCE_")}
    sticky = re.search(r"static int is_sticky\(cudaError_t e\) \{(.*?)\}", source, re.S).group(1)
    assert {int(n) for n in re.findall(r"e == (\d+)", sticky)} == set(STICKY)
    assert re.search(r"#define STOP \((-?\d+)\)", source).group(1) == str(STOP)
