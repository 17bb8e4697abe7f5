"""CUDA's device libraries compiled from their real headers: cuRAND's device API and cooperative groups.

Files written for GPUVerify get both without including them (tests/kernels/gpuverify/*_unincluded*.cu,
run here under `verify`; tests/test_expectations.py runs them under `check`), and texture references,
which CUDA 12 removed, are refused with a message that says so.

The corpus kernels in tests/kernels/curand/ and tests/kernels/cooperative/ carry their race expectations
(tests/test_expectations.py runs them); here the values cuRAND's header computes are checked against the
XORWOW generator written out from its definition (Marsaglia's xorwow with a Weyl sequence, seeded as
curand_init does), so a wrong instruction semantics in the simulator shows up as a wrong number.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gpurace
from corpus import read_header
from gpurace.cli import cli
from gpurace.frontend.gpuverify import library_macros

KERNELS = Path(__file__).resolve().parent / "kernels"
MASK = 0xFFFFFFFF


def xorwow(seed: int, count: int) -> list[int]:
    """The first `count` numbers of curand_init(seed, 0, 0, &s) followed by curand(&s)."""
    s0 = (seed & MASK) ^ 0xAAD26B49
    s1 = (seed >> 32) ^ 0xF7DCEFDD
    t0 = (1099087573 * s0) & MASK
    t1 = (2591861531 * s1) & MASK
    d = (6615241 + t1 + t0) & MASK
    v = [(123456789 + t0) & MASK, 362436069 ^ t0, (521288629 + t1) & MASK, 88675123 ^ t1, (5783321 + t0) & MASK]
    out = []
    for _ in range(count):
        t = v[0] ^ (v[0] >> 2)
        v = v[1:] + [(v[4] ^ ((v[4] << 4) & MASK)) ^ (t ^ ((t << 1) & MASK))]
        d = (d + 362437) & MASK
        out.append((v[4] + d) & MASK)
    return out


def test_curand_xorwow_values_and_skipahead():
    first = np.zeros(128, np.uint32)
    skipped = np.zeros(32, np.uint32)
    uniform = np.zeros(32, np.float32)
    result = gpurace.run(KERNELS / "curand" / "sequence.cu", grid=1, block=32, args=[first, skipped, uniform, 3])
    assert result.clean
    expected = [xorwow(i, 4) for i in range(32)]
    assert first.reshape(32, 4).tolist() == expected
    # curand_init's offset jumps ahead with the header's precomputed matrices: the same fourth number.
    assert skipped.tolist() == [e[3] for e in expected]
    # curand_uniform maps x to x * 2^-32 + 2^-33 in single precision, so the result lies in (0, 1].
    inv = np.float32(2.0**-32)
    want = np.array([e[0] for e in expected], np.float32) * inv + np.float32(inv / np.float32(2))
    assert uniform.tolist() == want.tolist()


def expected_tiles(inputs: np.ndarray) -> list[int]:
    """What tests/kernels/cooperative/groups.cu computes, written out per thread of each 64-thread block."""
    out = []
    for block in inputs.reshape(-1, 64).tolist():
        v = [block[63 - r] for r in range(64)]
        for offset in (16, 8, 4, 2, 1):  # shfl_down: a lane past the tile's end gets its own value
            v = [v[r] + (v[r + offset] if r % 32 + offset < 32 else v[r]) for r in range(64)]
        w = [v[(r & ~15) + ((r % 16 + 1) & 15)] for r in range(64)]
        # coalesced_threads() in the even lanes: rank among them, and shfl from the warp's lane 0
        out += [w[r] + r % 32 // 2 + w[r & ~31] if r % 2 == 0 else w[r] for r in range(64)]
    return out


def test_cooperative_groups_tiles_shuffles_and_coalesced_groups():
    inputs = np.arange(128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    result = gpurace.run(KERNELS / "cooperative" / "groups.cu", grid=2, block=64, args=[inputs, out])
    assert result.clean
    assert out.tolist() == expected_tiles(inputs)


# ---------------------------------------------------------------------------------------------------------
# Files written for GPUVerify use cooperative groups and cuRAND without including them
# ---------------------------------------------------------------------------------------------------------

GPUVERIFY_FILES = sorted(
    p for p in (KERNELS / "gpuverify").glob("*.cu") if {"verify", "verify_unknown"} & set(read_header(p).extra)
)


def verify(path: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["verify", str(path), "--format", "json"])
    assert result.exit_code in (0, 1, 4), f"{path.name}: exit {result.exit_code}\n{result.output}"
    return result.exit_code, json.loads(result.stdout)


def test_gpuverify_files_using_libraries_are_covered():
    names = {p.stem for p in GPUVERIFY_FILES}
    assert {"groups_unincluded", "groups_unincluded_racy", "groups_divergent", "curand_unincluded", "curand_unincluded_racy"} <= names


@pytest.mark.parametrize("path", GPUVERIFY_FILES, ids=[p.stem for p in GPUVERIFY_FILES])
def test_gpuverify_file_under_verify(path: Path):
    """`@verify OBJECT VERDICT [STATUS L1 L2]` for every object, or `@verify_unknown REASON` for the kernel."""
    extra = read_header(path).extra
    status, report = verify(path)
    (kernel,) = report["kernels"]
    if "verify_unknown" in extra:
        assert status == 4 and extra["verify_unknown"][0] in kernel["unknown"], kernel["unknown"]
        return
    assert kernel["unknown"] is None, kernel["unknown"]
    objects = {o["object"]: o for o in kernel["objects"]}
    wanted = {line.split()[0]: line.split()[1:] for line in extra["verify"]}
    assert set(objects) == set(wanted)
    for name, (verdict, *rest) in wanted.items():
        assert objects[name]["verdict"] == verdict, objects[name]
        if rest:
            race_status, *lines = rest
            alarms = [(a["status"], sorted(int(w.rsplit(":", 1)[1]) for w in (a["first"], a["second"])))
                      for a in objects[name]["alarms"]]
            assert (race_status, sorted(int(x) for x in lines)) in alarms, alarms
    if "verify_barriers" in extra:
        assert kernel["barriers"] == extra["verify_barriers"][0]
        assert {d["status"] for d in kernel["barrier_divergence"]} == set(extra.get("verify_divergence", []))
    alarms = any(v[0] == "race" for v in wanted.values()) or kernel["barrier_divergence"]
    assert status == (1 if alarms else 0)


def test_gpuverify_group_sync_reached_by_half_the_block_diverges_under_check():
    path = KERNELS / "gpuverify" / "groups_divergent.cu"
    result = CliRunner().invoke(cli, ["check", str(path), "--format", "json"])
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["kind"] == "barrier-divergence"
    assert 22 in [a["line"] for a in finding["accesses"]]  # the odd threads went on to the kernel's end


def test_library_macros_only_for_names_the_file_uses():
    assert library_macros("using namespace cooperative_groups;\n") == ["__GPURACE_COOPERATIVE_GROUPS"]
    assert library_macros("__global__ void k(curandState *s) {}") == ["__GPURACE_CURAND"]
    assert library_macros("__global__ void k(int *a) { a[0] = 1; } // curand, thread_block") == []


# ---------------------------------------------------------------------------------------------------------
# Texture references, removed in CUDA 12
# ---------------------------------------------------------------------------------------------------------

REMOVED_TEXTURES = "texture references (`texture<...>`) were removed in CUDA 12: use texture objects (cudaTextureObject_t)"


@pytest.mark.parametrize("command", ["check", "verify"])
def test_texture_reference_is_refused_naming_the_line(command):
    path = KERNELS / "gpuverify" / "texture_reference.cu"
    result = CliRunner().invoke(cli, [command, str(path)])
    assert result.exit_code == 2
    assert f"texture_reference.cu:10: {REMOVED_TEXTURES}" in result.stderr
    assert "Traceback" not in result.output


def test_texture_reference_in_a_program_with_host_code(tmp_path):
    """nvcc compiles files with host code; its diagnostic is explained the same way."""
    source = tmp_path / "legacy.cu"
    source.write_text(
        "#include <cstdio>\n"
        "texture<int, 1, cudaReadModeElementType> table;\n"
        "__global__ void k(int *out) { out[threadIdx.x] = tex1Dfetch(table, threadIdx.x); }\n"
        "int main() { k<<<1, 32>>>(nullptr); return 0; }\n"
    )
    result = CliRunner().invoke(cli, ["check", str(source), "--grid", "1", "--block", "32", "--arg", "buf:32"])
    assert result.exit_code == 2
    assert f"legacy.cu:2: {REMOVED_TEXTURES}" in result.stderr
