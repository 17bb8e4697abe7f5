"""Fuzzing the module images a driver-API program hands `gpurace exec` (`runtime.module_images.read_image`).

An image is the program's own bytes, so anything may arrive: valid PTX text,
fatbinaries and cubins built by nvcc from a corpus kernel are damaged by
flipping bytes, overwriting header fields (the fatbinary's sizes and
offsets, the ELF header's section table) with extreme values, and cutting
the image short. Every damaged image is read or refused with a UserError
(which stops the program with its message); never another exception, never
an allocation its header promises but the image does not hold.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ
from gpurace.errors import UserError
from gpurace.frontend.compile import find_nvcc
from gpurace.limits import Limits
from gpurace.runtime.module_images import read_image

KERNEL = Path(__file__).resolve().parents[1] / "programs" / "driver" / "kernels.cu"
BUILDS = {
    "ptx": ["-ptx", "-lineinfo", "-arch=compute_75"],
    "cubin": ["-cubin", "-arch=sm_75"],
    "fatbin": ["-fatbin", "-gencode", "arch=compute_75,code=compute_75", "-gencode", "arch=compute_75,code=sm_75"],
}
EXTREMES = (0, 1, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 2**40, 2**63 - 1, 2**64 - 1)
BUDGET = Limits(max_memory=64 << 20)  # a header promising more than this is refused before anything is allocated


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> dict[str, bytes]:
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("no nvcc")
    folder = tmp_path_factory.mktemp("images")
    for kind, flags in BUILDS.items():
        subprocess.run([str(nvcc), *flags, "-o", str(folder / kind), str(KERNEL)], check=True, capture_output=True)
    return {kind: (folder / kind).read_bytes() for kind in BUILDS}


def read_or_refuse(data: bytes) -> None:
    try:
        read_image(data, "image", 75, BUDGET)
    except UserError:
        pass


@FUZZ
@given(kind=st.sampled_from(sorted(BUILDS)), flips=st.lists(st.tuples(st.integers(0, 2**20), st.integers(1, 255)), max_size=8))
def test_flipped_bytes_are_read_or_refused(images, kind, flips):
    data = bytearray(images[kind])
    for at, mask in flips:
        data[at % len(data)] ^= mask
    read_or_refuse(bytes(data))


@FUZZ
@given(
    kind=st.sampled_from(["cubin", "fatbin"]),
    offset=st.integers(0, 120),
    width=st.sampled_from([2, 4, 8]),
    value=st.sampled_from(EXTREMES),
)
def test_header_fields_set_to_extremes_are_read_or_refused(images, kind, offset, width, value):
    data = bytearray(images[kind])
    data[offset : offset + width] = struct.pack({2: "<H", 4: "<I", 8: "<Q"}[width], value & ((1 << 8 * width) - 1))
    read_or_refuse(bytes(data))


@FUZZ
@given(kind=st.sampled_from(sorted(BUILDS)), keep=st.floats(0, 1))
def test_images_cut_short_are_read_or_refused(images, kind, keep):
    data = images[kind]
    read_or_refuse(data[: int(len(data) * keep)])
