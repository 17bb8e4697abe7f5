"""TMA copies through swizzled tensor maps (`sim.tensor_maps.swizzled`, `sim.tensor_copies`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.sim.launch import simulate
from gpurace.sim.tensor_maps import parse_spec, swizzled

BULK = Path(__file__).resolve().parents[1] / "kernels" / "bulk_copy"
ROUND_TRIP = BULK / "tma_swizzle_round_trip.cu"
MISALIGNED = BULK / "tma_swizzle_misaligned.cu"


def reference(offset: int, span: int) -> int:
    """Where a span-byte swizzle puts the byte at `offset` from an aligned base, as CUDA describes it: the
    16-byte chunks of each span are permuted, chunk k of 128-byte row r going to chunk k ^ (r mod chunks)."""
    chunks = span // 16
    row = offset // 128
    start = offset - offset % span
    chunk = (offset % span) // 16
    return start + 16 * (chunk ^ (row % chunks)) + offset % 16


@pytest.mark.parametrize("span", [32, 64, 128])
def test_the_swizzle_permutes_chunks_as_cuda_describes(span):
    offsets = np.arange(8 * span * 3, dtype=np.uint64)
    moved = swizzled(offsets, span)
    assert moved.tolist() == [reference(int(o), span) for o in offsets]
    repeat = 8 * span
    assert sorted(moved[:repeat].tolist()) == list(range(repeat))  # a permutation of each repeat
    assert swizzled(offsets, 0) is offsets


def launch(swizzle: str) -> list[np.ndarray]:
    spec = f"tensormap:f32:64x32:16x32:{{}}{swizzle}"
    args = [spec.format(3), spec.format(4), "buf:2048", "buf:2048:iota", "buf:2048"]
    result = simulate(ROUND_TRIP, grid=4, block=512, args=args, arch="sm_90a")
    assert result.findings == []
    return result.args[2:5]


def test_a_swizzled_load_and_store_move_every_element_where_the_swizzle_says():
    plain, tensor, out = launch(":swizzle=128B")
    assert np.array_equal(plain, tensor)  # each thread found its element at the swizzled offset
    assert np.array_equal(out, tensor)  # the swizzled store undid it


def test_without_the_swizzle_the_kernels_swizzled_reads_find_other_elements():
    plain, tensor, out = launch("")
    assert np.array_equal(out, tensor)
    rows = (plain != tensor).reshape(-1, 32).any(axis=1)
    assert not rows[0::8].any() and rows.reshape(-1, 8)[:, 1:].all()  # row 0 of every 8 is not permuted


def test_a_box_that_starts_mid_pattern_continues_the_pattern_of_its_addresses():
    """tma_swizzle_misaligned.cu loads a 16 x 32 f32 box 128 bytes past a 1024-byte boundary and reads back its
    first 128 bytes unswizzled: they are at the pattern's row 1, so chunk c holds the box's chunk c ^ 1."""
    args = ["tensormap:f32:16x32:16x32:2:swizzle=128B", "buf:32", "buf:512:iota"]
    result = simulate(MISALIGNED, grid=1, block=32, args=args, arch="sm_90a")
    assert result.findings == []
    t = np.arange(32)
    assert result.args[1].tolist() == (((t // 4) ^ 1) * 4 + t % 4).tolist()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("f32:64x32:16x32:3:swizzle=256B", "swizzle '256B': one of 32B, 64B, 128B"),
        ("f32:64x64:16x64:3:swizzle=128B", "may span at most 128 bytes"),  # 64 floats: 256-byte rows
        ("f16:64x64:16x64:3:swizzle=64B", "may span at most 64 bytes"),
    ],
)
def test_maps_cuda_refuses_are_refused(spec, message):
    with pytest.raises(UserError, match=message):
        parse_spec(spec, "--arg")


def test_a_swizzle_of_the_spans_width_is_accepted():
    assert parse_spec("f16:64x64:16x64:3:swizzle=128B", "--arg") == ("f16", (64, 64), (64, 16), 3, 128)
