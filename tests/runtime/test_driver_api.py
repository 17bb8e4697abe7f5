"""Programs written against CUDA's driver API under `gpurace exec`: modules they load themselves, driver launches.

`tests/programs/driver/host.cu` loads `kernels.cu`, built here by nvcc (once
for the module) into every kind of image a program loads: PTX text, a cubin,
a fatbinary with PTX and one with machine code only (the usual
`-gencode arch=compute_XX,code=sm_XX` of driver-API builds), each through
one of cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx and a link (cuLinkCreate ...
cuLinkComplete). Machine code is
run from the PTX of the kernels' source, when gpurace exec is given it. `textures_host.cu` reads CUDA
arrays through texture objects, made and filled with the driver's calls; `graphs_host.cu` builds, captures
and launches CUDA graphs through the driver; `link_host.cu` links `linked_kernels.cu` with `linked_helpers.cu`
(relocatable device code) at run time, as separate compilation links them.
Whatever the image, the program must print what it prints on a GPU and the
race in `total` must be reported at its source line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpurace.errors import UserError
from gpurace.frontend.compile import find_nvcc
from gpurace.limits import Limits
from gpurace.runtime import exec_program
from gpurace.runtime.elf import ElfFile
from gpurace.runtime.fatbin import FatbinError
from gpurace.runtime.module_images import read_image

DRIVER = Path(__file__).resolve().parents[1] / "programs" / "driver"
HOST, KERNELS = DRIVER / "host.cu", DRIVER / "kernels.cu"
TEXTURES_HOST, TEXTURES = DRIVER / "textures_host.cu", DRIVER / "textures.cu"
LINK_HOST, LINKED_RACE_LINE = DRIVER / "link_host.cu", 6
LINKED = {  # relocatable device code of the two files a program links at run time
    "linked_kernels.ptx": ("linked_kernels.cu", ["-ptx", "-rdc=true", "-lineinfo", "-arch=compute_75"]),
    "linked_helpers.ptx": ("linked_helpers.cu", ["-ptx", "-rdc=true", "-lineinfo", "-arch=compute_75"]),
    "linked_helpers.fatbin": (
        "linked_helpers.cu",
        ["-fatbin", "-rdc=true", "-lineinfo", "-gencode", "arch=compute_75,code=compute_75"],
    ),
    "linked_helpers.cubin": ("linked_helpers.cu", ["-cubin", "-rdc=true", "-arch=sm_75"]),
}
GRAPHS_HOST, SCALE_LINE, SECOND_SCALE_NODE_LINE = DRIVER / "graphs_host.cu", 11, 60
GRAPHS_STDOUT = [
    "built: 5 nodes, memset node ok",
    "explicit graph: ok",
    "captured: 3 nodes, active",
    "captured graph: ok",
]
RACE_LINE, LAUNCH_LINE, LOAD_DATA_LINE = 17, 131, 51
IMAGES = {
    "k.ptx": ["-ptx", "-lineinfo", "-arch=compute_75"],
    "k80.ptx": ["-ptx", "-arch=compute_80"],
    "k.cubin": ["-cubin", "-arch=sm_75"],
    "sass.fatbin": ["-fatbin", "-gencode", "arch=compute_75,code=sm_75"],
    "ptx.fatbin": ["-fatbin", "-lineinfo", "-gencode", "arch=compute_75,code=compute_75", "-gencode", "arch=compute_75,code=sm_75"],
}
STDOUT = [
    "missing: CUDA_ERROR_NOT_FOUND",
    "bias: 4 bytes",
    "memset: 01020304 01020304",
    "scale: ok",
    "packed: ok",
    "ex, cooperative and packed ex: ok",
    "after unload: CUDA_ERROR_INVALID_HANDLE",
    "function of an unloaded module: CUDA_ERROR_INVALID_HANDLE",
]


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("images")
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("no nvcc")
    for name, flags in IMAGES.items():
        subprocess.run([str(nvcc), *flags, "-o", str(folder / name), str(KERNELS)], check=True, capture_output=True)
    subprocess.run([str(nvcc), *IMAGES["k.ptx"], "-o", str(folder / "textures.ptx"), str(TEXTURES)], check=True)
    for name, (source, flags) in LINKED.items():
        subprocess.run([str(nvcc), *flags, "-o", str(folder / name), str(DRIVER / source)], check=True)
    return folder


def run(images: Path, image: str, how: str, *, with_kernels: bool, race_free: bool = False):
    sources = [HOST, KERNELS] if with_kernels else [HOST]
    args = [str(images / image), how, *(["race-free"] if race_free else [])]
    return exec_program(sources, args, nvcc_flags=["-lcuda"], capture_output=True)


@pytest.mark.parametrize(
    "image, how, with_kernels",
    [
        ("k.ptx", "load", False),
        ("k.ptx", "data", False),
        ("k.ptx", "link", False),
        ("ptx.fatbin", "ex", False),
        ("k.cubin", "load", True),
        ("sass.fatbin", "data", True),
    ],
)
def test_a_loaded_module_runs_and_its_race_is_found_at_its_source_line(images, image, how, with_kernels):
    result = run(images, image, how, with_kernels=with_kernels)
    expected = (['log "", 0 bytes'] if how == "ex" else []) + STDOUT
    assert result.stdout.splitlines() == expected, (result.stderr, result.errors)
    assert result.errors == [] and result.exit_code() == 1
    (race,) = result.findings
    assert race.kind == "data-race" and race.space == "global"
    assert [(Path(s.loc.file).name, s.loc.line) for s in race.sites] == [("kernels.cu", RACE_LINE)] * 2
    assert race.launch["kernel"] == "total" and race.launch["index"] == 6
    assert race.launch["host"].endswith(f"host.cu:{LAUNCH_LINE}")


def test_a_race_free_module_is_clean(images):
    result = run(images, "k.cubin", "data", with_kernels=True, race_free=True)
    assert result.stdout.splitlines() == STDOUT and result.findings == []
    assert result.exit_code() == 0 and result.launches == 5


def test_cuda_arrays_and_texture_objects_of_the_driver_read_as_on_a_gpu(images):
    result = exec_program([TEXTURES_HOST], [str(images / "textures.ptx")], nvcc_flags=["-lcuda"], capture_output=True)
    assert result.stdout.splitlines() == ["float texels: as copied", "byte texels: normalized", "copied out: 11 12 21 22"]
    assert result.findings == [] and result.errors == [] and result.exit_code() == 0 and result.launches == 2


def run_graphs(images: Path, *args: str):
    return exec_program([GRAPHS_HOST], [str(images / "k.ptx"), *args], nvcc_flags=["-lcuda"], capture_output=True)


def test_driver_graphs_made_node_by_node_and_captured_run_as_on_a_gpu(images):
    result = run_graphs(images)
    assert result.stdout.splitlines() == GRAPHS_STDOUT, (result.stderr, result.errors)
    assert result.findings == [] and result.errors == [] and result.exit_code() == 0 and result.launches == 3


def test_kernel_nodes_of_a_driver_graph_with_no_edge_between_them_race(images):
    result = run_graphs(images, "unordered")
    assert result.stdout.splitlines() == GRAPHS_STDOUT and result.exit_code() == 1
    (race,) = result.findings
    assert race.kind == "data-race" and race.space == "global"
    assert [(Path(s.loc.file).name, s.loc.line) for s in race.sites] == [("kernels.cu", SCALE_LINE)] * 2
    assert race.launch["host"].endswith(f"graphs_host.cu:{SECOND_SCALE_NODE_LINE}")


def run_link(images: Path, first: str, second: str, kernel: str):
    args = [str(images / first), str(images / second), kernel]
    return exec_program([LINK_HOST], args, nvcc_flags=["-lcuda"], capture_output=True)


def test_a_link_of_several_ptx_inputs_resolves_their_functions_and_variables(images):
    result = run_link(images, "linked_kernels.ptx", "linked_helpers.ptx", "sum_atomic")
    assert result.stdout.splitlines() == ["offset: 1", "sum: 2080"], (result.stderr, result.errors)
    assert result.findings == [] and result.errors == [] and result.exit_code() == 0 and result.launches == 1


def test_a_race_in_a_function_of_another_link_input_is_found_at_its_line(images):
    result = run_link(images, "linked_kernels.ptx", "linked_helpers.fatbin", "sum_plain")
    assert result.stdout.splitlines() == ["offset: 1"] and result.exit_code() == 1
    (race,) = result.findings
    assert race.kind == "data-race" and race.space == "global"
    assert [(Path(s.loc.file).name, s.loc.line) for s in race.sites] == [("linked_helpers.cu", LINKED_RACE_LINE)] * 2


def test_a_link_with_an_input_of_machine_code_only_stops_the_program_saying_why(images):
    result = run_link(images, "linked_kernels.ptx", "linked_helpers.cubin", "sum_atomic")
    assert result.exit_code() == 2 and result.launches == 0
    (error,) = result.errors
    assert "cuModuleLoadData: the image given to cuModuleLoadData: its input helpers holds machine code only" in error


def test_machine_code_without_the_kernels_source_stops_the_program_saying_what_to_give(images):
    result = run(images, "sass.fatbin", "data", with_kernels=False)
    assert result.exit_code() == 2 and result.launches == 0
    (error,) = result.errors
    assert f"host.cu:{LOAD_DATA_LINE}: cuModuleLoadData: the image given to cuModuleLoadData holds" in error
    assert "machine code only (kernels: total, scale)" in error and "the source file that defines" in error


def test_ptx_for_a_newer_gpu_stops_the_program_naming_the_architecture_to_simulate(images):
    result = run(images, "k80.ptx", "load", with_kernels=False)
    assert result.exit_code() == 2
    (error,) = result.errors
    assert "k80.ptx: its PTX targets sm_80" in error and "--arch compute_80" in error


def test_images_are_read_by_their_kind(images):
    limits = Limits()
    ptx = read_image((images / "k.ptx").read_bytes(), "k.ptx", 75, limits)
    assert {f.name for f in ptx.module.kernels} == {"scale", "total"}
    for name in ("k.cubin", "sass.fatbin"):
        loaded = read_image((images / name).read_bytes(), name, 75, limits)
        assert loaded.module is None and loaded.kernels == ("total", "scale")
    assert read_image((images / "ptx.fatbin").read_bytes(), "ptx.fatbin", 75, limits).module is not None
    assert ElfFile("k.cubin", limits, data=(images / "k.cubin").read_bytes()).kernel_names() == ["total", "scale"]


@pytest.mark.parametrize(
    "data, error",
    [
        (b"\xff\xfe not text", "neither PTX text, nor a fatbinary, nor a cubin"),
        (b"\x7fELF" + bytes(60), "not 64-bit CUDA machine code"),
    ],
)
def test_an_image_that_is_no_module_is_a_user_error(data, error):
    with pytest.raises(UserError, match=error):
        read_image(data, "image", 75, Limits())


def test_a_damaged_fatbinary_is_a_fatbin_error(images):
    data = (images / "sass.fatbin").read_bytes()
    with pytest.raises(FatbinError, match="runs past the end"):
        read_image(data[: len(data) // 2], "half.fatbin", 75, Limits())


NVRTC_HOST = DRIVER / "nvrtc_host.cpp"


@pytest.mark.parametrize("output", ["cubin", "ptx"])
def test_kernels_compiled_at_run_time_with_nvrtc_run_and_their_race_is_found_at_its_source_line(output):
    result = exec_program([NVRTC_HOST], [str(KERNELS), output], nvcc_flags=["-lnvrtc", "-lcuda"], capture_output=True)
    assert result.stdout.splitlines() == ["scale: ok", "total: launched"], (result.stderr, result.errors)
    assert result.errors == [] and result.exit_code() == 1 and result.launches == 2
    (race,) = result.findings
    assert race.kind == "data-race" and race.space == "global" and race.launch["kernel"] == "total"
    assert [(s.loc.file, s.loc.line) for s in race.sites] == [(str(KERNELS), RACE_LINE)] * 2


def test_kernels_compiled_at_run_time_with_nvrtc_race_free_are_clean():
    result = exec_program(
        [NVRTC_HOST], [str(KERNELS), "cubin", "race-free"], nvcc_flags=["-lnvrtc", "-lcuda"], capture_output=True
    )
    assert result.stdout.splitlines() == ["scale: ok"] and result.findings == []
    assert result.errors == [] and result.exit_code() == 0 and result.launches == 1
