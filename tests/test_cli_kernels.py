"""`gpurace kernels`: text and JSON listings, and exit status 2 without a traceback for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli

SOURCE = """\
struct Box { float lo; float hi; int n; };

__global__ void reduce(const int* in, int* out, int n)
{
    __shared__ int partial[256];
    partial[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0;
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(out, partial[0] + partial[255]);
}

template <typename T>
__global__ void clamp(T* v, Box box)
{
    v[threadIdx.x] = v[threadIdx.x] < box.lo ? box.lo : v[threadIdx.x];
}
template __global__ void clamp<float>(float*, Box);

extern "C" __global__ void plain(unsigned char* bytes, long long count)
{
    bytes[threadIdx.x] = (unsigned char)count;
}
"""

SCRIPT = Path(sys.executable).parent / "gpurace"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "three.cu"
    path.write_text(SOURCE)
    return path


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_json_listing(source):
    result = _run("kernels", str(source), "--format", "json")
    assert result.exit_code == 0, result.output
    kernels = {k["name"]: k for k in json.loads(result.stdout)["kernels"]}
    assert set(kernels) == {"reduce", "clamp<float>", "plain"}

    reduce = kernels["reduce"]
    assert reduce["mangled"] == "_Z6reducePKiPii"
    assert [p["type"] for p in reduce["params"]] == ["const int*", "int*", "int"]
    assert [p["size"] for p in reduce["params"]] == [8, 8, 4]
    assert all(p["name"].startswith("_Z6reducePKiPii_param_") for p in reduce["params"])
    assert [p["cpp_name"] for p in reduce["params"]] == ["in", "out", "n"]
    assert reduce["shared_bytes"] == 1024

    clamp = kernels["clamp<float>"]
    assert [p["type"] for p in clamp["params"]] == ["float*", "Box"]
    assert [p["size"] for p in clamp["params"]] == [8, 12]
    assert [p["cpp_name"] for p in clamp["params"]] == ["v", "box"]
    assert clamp["shared_bytes"] == 0

    plain = kernels["plain"]
    assert plain["mangled"] == "plain"
    assert [p["type"] for p in plain["params"]] == [None, None]
    assert [p["size"] for p in plain["params"]] == [8, 8]
    assert [p["cpp_name"] for p in plain["params"]] == ["bytes", "count"]


def test_text_listing(source):
    result = _run("kernels", str(source))
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("reduce", "_Z6reducePKiPii", "const int*", "1024 bytes", "clamp<float>", "Box", "plain"):
        assert text in out, text
    assert out.index("reduce") < out.index("clamp<float>") < out.index("plain")


def test_options_reach_the_compiler(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "size.h").write_text("#define N 8\n")
    path = tmp_path / "sized.cu"
    path.write_text('#include "size.h"\n__global__ void k(int* p) { __shared__ int s[N * M]; s[threadIdx.x] = 1;'
                    " __syncthreads(); p[threadIdx.x] = s[N * M - 1 - threadIdx.x]; }\n")
    result = _run("kernels", str(path), "-I", str(tmp_path / "inc"), "-D", "M=4", "--arch", "sm_80", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kernels"][0]["shared_bytes"] == 8 * 4 * 4


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.cu", None, "no such file"),
        ("kernel.txt", "x", "unknown file type"),
        ("broken.cu", "__global__ void k() { nope(); }\n", "nope"),
        ("broken.ptx", ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n    frobnicate.u32 %r1, 1;\n    ret;\n}\n", "broken.ptx"),
    ],
)
def test_user_errors_exit_2_without_traceback(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = _run("kernels", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith("gpurace: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_usage_errors_exit_2(source):
    assert _run("kernels").exit_code == 2
    assert _run("kernels", str(source), "--format", "yaml").exit_code == 2
    assert _run("kernels", str(source), "--arch", "pascal").exit_code == 2


def test_console_script(source, tmp_path):
    ok = subprocess.run([str(SCRIPT), "kernels", str(source), "--format", "json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert {k["name"] for k in json.loads(ok.stdout)["kernels"]} == {"reduce", "clamp<float>", "plain"}

    bad = subprocess.run([str(SCRIPT), "kernels", str(tmp_path / "absent.cu")], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.startswith("gpurace: error: ")
    assert "Traceback" not in bad.stderr
