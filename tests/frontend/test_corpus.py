"""Every corpus kernel against the expectations written in its header (tests/kernels/README.md)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from corpus import KERNELS_DIR, CorpusHeader, corpus_files, hip_marks, kernel_key, read_header

from gpurace.frontend.kernels import (
    KernelInfo,
    describe_kernels,
    reachable_functions,
    source_loc,
    sync_sites,
)
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
FILES = [
    pytest.param(p, marks=hip_marks(p), id=f"{p.parent.name}/{p.stem}")
    for p in corpus_files() + corpus_files(KERNELS_DIR / "hip") + corpus_files(EXAMPLES_DIR)
]


@cache
def _load(path: Path) -> tuple[Module, dict[str, KernelInfo]]:
    """Compile and parse each corpus file once per test session."""
    module = load_module(path)
    return module, {kernel_key(k.name): k for k in describe_kernels(module)}


def _header_and_module(path: Path) -> tuple[CorpusHeader, Module, dict[str, KernelInfo]]:
    return (read_header(path), *_load(path))


def test_corpus_is_big_enough():
    assert len(corpus_files(KERNELS_DIR)) >= 32
    assert corpus_files(EXAMPLES_DIR)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_header_names_each_kernel_and_a_launch(path):
    header = read_header(path)
    assert header.kernels, "no @kernel line"
    assert header.launches, "no @launch line"
    per_kernel = [header.shared, header.barriers, header.warpsyncs, header.atomics, header.fences]
    for mapping in per_kernel:
        assert set(mapping) <= set(header.kernels), "a per-kernel line names an unknown kernel"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_kernels_and_parameter_types(path):
    header, _, infos = _header_and_module(path)
    assert set(infos) == set(header.kernels)
    for name, info in infos.items():
        assert tuple(p.type for p in info.params) == header.kernels[name], name


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_static_shared_bytes(path):
    header, _, infos = _header_and_module(path)
    for name, info in infos.items():
        assert info.shared_bytes == header.shared.get(name, 0), name


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_sync_sites(path):
    header, module, infos = _header_and_module(path)
    for name, info in infos.items():
        sites = sync_sites(module, module.functions[info.mangled])
        lines: dict[str, set] = {"barrier": set(), "warpsync": set(), "atomic": set(), "fence": set()}
        for site in sites:
            loc = source_loc(site.loc, path)
            assert loc is not None, f"{name}: no source line for {site.text!r}"
            if site.kind == "atomic":
                lines["atomic"].add((loc.line, site.op, site.scope))
            elif site.kind == "fence":
                lines["fence"].add((loc.line, site.scope))
            else:
                lines[site.kind].add(loc.line)
        assert sorted(lines["barrier"]) == header.barriers.get(name, []), f"{name}: barriers"
        assert sorted(lines["warpsync"]) == header.warpsyncs.get(name, []), f"{name}: warp syncs"
        assert sorted(lines["atomic"]) == sorted(set(header.atomics.get(name, []))), f"{name}: atomics"
        assert sorted(lines["fence"]) == sorted(set(header.fences.get(name, []))), f"{name}: fences"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_instruction_has_a_source_line(path):
    _, module, infos = _header_and_module(path)
    n_lines = len(path.read_text().splitlines())
    for info in infos.values():
        for fn in reachable_functions(module, module.functions[info.mangled]):
            assert fn.body, fn.name
            for instr in fn.body:
                loc = source_loc(instr.loc, path)
                assert loc is not None, f"{fn.name}: PTX line {instr.ptx_line} {instr.text!r} has no .cu location"
                # Line 0 is DWARF's "no particular line", which nvcc uses for compiler-made code.
                assert 0 <= loc.line <= n_lines, f"{fn.name}: {instr.text!r} at line {loc.line}"
