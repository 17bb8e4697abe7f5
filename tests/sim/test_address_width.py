"""Addresses follow the width of the instruction that makes them, and no out-of-bounds access reaches a neighbour.

A `.shared` address in a 32-bit register wraps modulo 2^32 in 32-bit
arithmetic (`add.u32`, `mad.lo.s32` with a negative factor) and in the sum of
register and offset, as on hardware, so an intermediate value "below" the
tile is no out-of-bounds access. Automatic buffers lie far enough apart that
an index far past one buffer is out of bounds, never inside the next buffer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.sim.launch import simulate
from gpurace.sim.memory import AUTO_BUFFER_BYTES, Memory

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

WRAP = """
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b8 tile[128];
  .reg .u32 %r<8>;
  .reg .u64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, tile;
  mul.lo.s32 %r3, %r1, -4;
  add.u32 %r4, %r2, %r3;          // tile - 4 * tid: wraps below 0 for tid > 0
  mul.lo.u32 %r5, %r1, 8;
  add.u32 %r6, %r4, %r5;          // tile + 4 * tid, back in the tile
  st.shared.u32 [%r6], %r1;
  st.shared.u32 [%r4+-4], 7;      // (tile - 4 * tid - 4) mod 2^32: out of bounds for every thread
  bar.sync 0;
  add.u32 %r7, %r4, 64;
  ld.shared.u32 %r7, [%r7+-64];   // tile - 4 * tid, wrapped: in the tile only for tid 0
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
"""


def test_32_bit_shared_addresses_wrap_modulo_2_to_the_32(tmp_path):
    path = tmp_path / "wrap.ptx"
    path.write_text(WRAP)
    result = CliRunner().invoke(cli, ["check", str(path), "--grid", "1", "--block", "8", "--arg", "buf:8", "--format", "json"])
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    # The wrapped store lands back in the tile: no finding. The store below the tile and the wrapped load of the
    # threads whose address stays below it are out of bounds, and nothing else is.
    assert sorted((f["kind"], f["count"], f["accesses"][0]["instruction"]) for f in findings) == [
        ("out-of-bounds", 7, "ld.shared.u32 %r7, [%r7+-64]"),
        ("out-of-bounds", 8, "st.shared.u32 [%r4+-4], 7"),
    ]


def test_a_wavefront_over_a_wrapped_shared_address_computes_the_recurrence():
    block = 16
    score = np.arange((block + 1) ** 2, dtype=np.int32)
    cost = np.arange(block * block, dtype=np.int32)
    expected = score.reshape(block + 1, block + 1).copy()
    for y in range(1, block + 1):
        for x in range(1, block + 1):
            expected[y, x] = max(
                expected[y - 1, x - 1] + cost[(y - 1) * block + x - 1], expected[y, x - 1] - 1, expected[y - 1, x] - 1
            )
    result = simulate(KERNELS / "addressing" / "wavefront.cu", grid=1, block=block, args=[score, cost, 1])
    assert not result.findings
    assert (score.reshape(block + 1, block + 1) == expected).all()


def test_automatic_buffers_are_farther_apart_than_any_32_bit_index_reaches():
    mem = Memory(1, 1)
    mem.allocate_global("explicit", 1024)
    first, second = mem.allocate_automatic(["a", "b"])
    assert second.base - first.end > (1 << 32) * 16
    assert first.base > (1 << 32) * 16
    # Canonical addresses (what detectors see) and the backing store leave the unbacked space out.
    assert second.canonical_base - first.canonical_base < 2 * AUTO_BUFFER_BYTES
    mem.write(second, b"\x01\x02")
    assert mem.read(second, 2) == b"\x01\x02" and mem.read(first, 2) == b"\x00\x00"
    assert mem.describe(second.canonical_base + 8).allocation == "b"


def test_an_index_past_an_automatic_buffer_is_out_of_bounds_not_a_race_on_the_next():
    path = KERNELS / "auto" / "transpose_past_neighbour.cu"
    result = CliRunner().invoke(cli, ["check", str(path), "--grid", "4,4", "--block", "16,16", "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    (finding,) = report["findings"]
    assert finding["kind"] == "out-of-bounds" and "past the end of `out (float*)`" in finding["cause"]
    text = CliRunner().invoke(cli, ["check", str(path), "--grid", "4,4", "--block", "16,16"]).output
    assert "automatic buffer in (const float*): 16384 bytes used" in text  # only its own reads: 64 x 64 floats
    assert "automatic buffer flags (int*): 16384 bytes used" in text


def test_more_automatic_buffers_than_the_address_space_holds_is_a_clear_error():
    with pytest.raises(UserError, match="600 automatic buffers do not fit in the simulated address space, which holds 511"):
        Memory(1, 1).allocate_automatic([f"p{i}" for i in range(600)])
