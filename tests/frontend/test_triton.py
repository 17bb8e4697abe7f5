"""Triton kernels: `gpurace.triton.check` compiles a `@triton.jit` kernel with Triton (no GPU) and checks a launch.

The kernels are in tests/kernels/triton/, each with an `# @expect` header
(the corpus format written with `#`: kind, memory space, both Python lines)
and a comment giving its launch, which these tests make from Python (the
command line's are in test_triton_cli.py). They skip when Triton is not installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from corpus import read_header
from gpurace.errors import UserError
from gpurace.sim.async_copies import WGMMA_SOURCE
from gpurace.sim.proxy_fences import UNFENCED

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "triton"


@pytest.fixture(scope="module")
def kernels():
    """The kernel files' modules, imported once (Triton reads each kernel's source from its file)."""
    pytest.importorskip("triton", reason="Triton is not installed (pip install -e '.[test,triton]')")
    modules = {}
    for path in sorted(KERNELS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"triton_kernels_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = module
    return modules


def sites(report) -> list[tuple]:
    """(kind, space, both lines) of each finding, in the report's order; every site must be in a kernel file."""
    for f in report.findings:
        assert {Path(s.loc.file).parent for s in f.sites} == {KERNELS}, f.sites
    return sorted((f.kind, f.space, sorted(s.loc.line for s in f.sites)) for f in report.findings)


def expected(name: str, key: str = "expect") -> list[tuple]:
    header = read_header(KERNELS / f"{name}.py")
    found = []
    for line in header.expect if key == "expect" else header.extra[key]:
        if line != "clean":
            kind, space, first, second = line.split()
            found.append((kind, space, sorted([int(first), int(second)])))
    return sorted(found)


def test_vector_add_is_clean_and_adds(kernels) -> None:
    import triton

    import gpurace.triton

    n = 1000
    x, y, out = np.random.default_rng(1).random((3, n)).astype(np.float32)
    out[:] = 0
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731 (Triton's idiom)
    report = gpurace.triton.check(kernels["vector_add"].add, grid, x, y, out, n, BLOCK=256)
    assert report.clean and expected("vector_add") == []
    assert np.array_equal(out, x + y)
    assert report.kernel == "add"
    assert report.launch["grid"] == [4, 1, 1] and report.launch["block"] == [128, 1, 1]  # num_warps=4
    assert report.launch["args"] == ["float32[1000]"] * 3 + ["1000"]


def test_overlapping_stores_of_two_programs_race(kernels) -> None:
    import gpurace.triton

    n, block = 1024, 128
    x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    tag = kernels["overlapping_store"].tag
    report = gpurace.triton.check(tag, n // (block // 2) - 1, x, out, n, BLOCK=block, num_warps=2)
    assert sites(report) == expected("overlapping_store") != []
    (race,) = report.findings
    assert race.severity == "error"
    first, second = race.sites
    assert abs(first.block[0] - second.block[0]) == 1  # neighbouring programs
    assert race.address.allocation.startswith("out_ptr")


def test_histograms(kernels) -> None:
    import gpurace.triton

    values = np.random.default_rng(2).integers(0, 1000, 512).astype(np.int32)
    bins = np.zeros(8, np.int32)
    report = gpurace.triton.check(kernels["histogram_atomic"].histogram, 4, values, bins, 512, NBINS=8, BLOCK=128)
    assert report.clean
    assert np.array_equal(bins, np.bincount(values % 8, minlength=8))
    plain = kernels["histogram_plain"].histogram
    racy = gpurace.triton.check(plain, 4, values, np.zeros(8, np.int32), 512, NBINS=8, BLOCK=128)
    assert sites(racy) == expected("histogram_plain") != []


def test_spin_lock_orders_programs_only_with_acquire_and_release(kernels) -> None:
    import gpurace.triton

    x = np.random.default_rng(5).random(512).astype(np.float32)
    for name in ("spin_lock", "spin_lock_relaxed"):
        acc, lock = np.zeros(128, np.float32), np.zeros(1, np.int32)
        report = gpurace.triton.check(kernels[name].accumulate, 4, x, acc, lock, 512, BLOCK=128)
        assert sites(report) == expected(name)
        assert lock[0] == 0 and np.allclose(acc, x.reshape(4, 128).sum(0), rtol=1e-5)  # this schedule lost nothing
    assert expected("spin_lock_relaxed") != []
    assert {f.sites[0].block != f.sites[1].block for f in report.findings} == {True}  # between programs


def test_reduction_through_shared_memory_is_clean(kernels) -> None:
    """tl.sum goes through shared memory with Triton's barriers; its replicated same-value stores are dropped."""
    import gpurace.triton

    x = np.random.default_rng(3).random(512).astype(np.float32)
    out = np.zeros(1, np.float32)
    report = gpurace.triton.check(kernels["block_sum"].block_sum, 4, x, out, 512, BLOCK=128)
    assert report.clean
    assert report.stats["same_value_dropped"] >= 1
    assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)


def test_tensor_core_matmul_is_clean(kernels) -> None:
    """tl.dot on sm_80: tiles copied into shared memory by cp.async (Triton pipelines the loop, since the
    buffers and sizes are multiples of 16 as on a GPU), read by ldmatrix, multiplied by mma.sync; the
    product equals NumPy's."""
    import gpurace.triton
    from gpurace.frontend.triton_kernels import bind, compile_kernel

    m = n = 64
    k = 128
    rng = np.random.default_rng(4)
    a, b = rng.random((m, k)).astype(np.float16), rng.random((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    matmul = kernels["matmul"].matmul
    report = gpurace.triton.check(matmul, (2, 2), a, b, c, m, n, k, BM=32, BN=32, BK=32)
    assert report.clean and expected("matmul") == []
    bound = bind(matmul, (a, b, c, m, n, k), dict(BM=32, BN=32, BK=32))
    compiled = compile_kernel(matmul, bound, num_warps=4, num_stages=3, cc=80)
    opcodes = {i.opcode for f in compiled.module.functions.values() for i in f.body if hasattr(i, "opcode")}
    assert {"cp", "ldmatrix", "mma"} <= opcodes
    assert np.allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def delete_first(monkeypatch, removed: str) -> None:
    """Compile Triton kernels with the first PTX line that starts with `removed` deleted."""
    from gpurace.frontend import triton_kernels

    def without_first(ptx: str) -> str:
        lines = ptx.split("\n")
        first = next(i for i, line in enumerate(lines) if line.strip().startswith(removed))
        return original("\n".join(lines[:first] + lines[first + 1 :]))

    original = triton_kernels.inline_asm_lines
    monkeypatch.setattr(triton_kernels, "inline_asm_lines", without_first)
    monkeypatch.setattr(triton_kernels, "_compiled", type(triton_kernels._compiled)())


def hopper_matmul(kernels) -> tuple:
    """The matmul at cc=90 on one 64x64 tile, K = 128: (report, c, NumPy's product summed k by k in float32)."""
    import gpurace.triton

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((64, 128)).astype(np.float16), rng.standard_normal((128, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    report = gpurace.triton.check(kernels["matmul"].matmul, (1, 1), a, b, c, 64, 64, 128, BM=64, BN=64, BK=32, cc=90)
    product = np.zeros((64, 64), np.float32)
    for k in range(128):
        product = product + a[:, k, None].astype(np.float32) * b[None, k, :].astype(np.float32)
    return report, c, product


def test_tensor_core_matmul_on_hopper_is_clean(kernels) -> None:
    """tl.dot at cc=90: cp.async copies the tiles into 128-byte and 64-byte swizzled shared memory, and
    wgmma.mma_async reads them through swizzled descriptors, B MN-major; the product equals NumPy's bit for bit."""
    from gpurace.frontend.triton_kernels import bind, compile_kernel

    report, c, product = hopper_matmul(kernels)
    assert report.clean
    np.testing.assert_array_equal(c, product)
    args = (np.zeros((64, 128), np.float16), np.zeros((128, 64), np.float16), c, 64, 64, 128)
    compiled = compile_kernel(kernels["matmul"].matmul, bind(kernels["matmul"].matmul, args, dict(BM=64, BN=64, BK=32)),
                              num_warps=4, num_stages=3, cc=90)  # fmt: skip
    products = [i for f in compiled.module.functions.values() for i in f.body if getattr(i, "opcode", "") == "wgmma"
                and "mma_async" in i.modifiers]  # fmt: skip
    assert products and all(i.operands[-1].value == 1 for i in products)  # B transposed


def test_tensor_descriptors_made_on_a_hopper_device_move_tiles_with_tma(kernels) -> None:
    """At cc=90 tl.make_tensor_descriptor builds each tensor map in the kernel, from zeroed shared memory edited
    field by field (tensormap.replace), and the tiles move with TMA: the clipped transposed tiles are exact."""
    import gpurace.triton

    x = np.random.default_rng(5).standard_normal((48, 80)).astype(np.float32)
    out = np.zeros((80, 48), np.float32)
    report = gpurace.triton.check(kernels["descriptor_tiles"].transpose_add, (2, 3), x, out, 48, 80, BM=32, BN=32, cc=90)
    assert sites(report) == expected("descriptor_tiles") == []
    np.testing.assert_array_equal(out, x.T + 1)


def test_an_int8_matmul_on_hopper_runs_integer_wgmma_exactly(kernels) -> None:
    """tl.dot of int8 tiles at cc=90 is wgmma.mma_async m64nNk32.s32.s8.s8 on K-major tiles: exact."""
    import gpurace.triton

    rng = np.random.default_rng(8)
    a, b = rng.integers(-128, 128, (64, 128)).astype(np.int8), rng.integers(-128, 128, (128, 64)).astype(np.int8)
    c = np.zeros((64, 64), np.float32)
    report = gpurace.triton.check(kernels["matmul"].matmul, (1, 1), a, b, c, 64, 64, 128, BM=64, BN=64, BK=64, cc=90)
    assert report.clean
    np.testing.assert_array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32))


@pytest.mark.parametrize("removed, cause", [("wgmma.wait_group", WGMMA_SOURCE), ("fence.proxy.async", UNFENCED)])
def test_a_wait_or_fence_removed_from_triton_s_hopper_pipeline_is_a_race(kernels, monkeypatch, removed, cause) -> None:
    """Without its first wgmma.wait_group, the matmul's cp.async copies of the next tiles (lines 17 and 18) write
    a buffer the previous product may still read (line 19); without its fence.proxy.async, the product reads
    the copies' generic-proxy writes unfenced."""
    delete_first(monkeypatch, removed)
    report, c, product = hopper_matmul(kernels)
    assert sites(report) == [("data-race", "shared", [17, 19]), ("data-race", "shared", [18, 19])]
    assert {f.cause for f in report.findings} == {cause}


@pytest.mark.parametrize("removed", ["cp.async.wait_group", "bar.sync"])
def test_a_wait_removed_from_triton_s_pipeline_is_a_race(kernels, monkeypatch, removed) -> None:
    """The matmul's PTX with its first `cp.async.wait_group` (or the barrier after it) deleted: `ldmatrix` reads
    the tiles while the `cp.async` copies of the loads may still be writing them, or before the other warps'
    copies are known complete (Triton gives both the load's line, 17 for `a`, 18 for `b`)."""
    import gpurace.triton

    delete_first(monkeypatch, removed)
    rng = np.random.default_rng(4)
    a, b = rng.random((64, 128)).astype(np.float16), rng.random((128, 64)).astype(np.float16)
    report = gpurace.triton.check(kernels["matmul"].matmul, (2, 2), a, b, np.zeros((64, 64), np.float32), 64, 64, 128, BM=32, BN=32, BK=32)
    races = [f for f in report.findings if f.kind == "data-race"]
    assert {(f.space, *sorted(s.loc.line for s in f.sites)) for f in races} == {("shared", 17, 17), ("shared", 18, 18)}
    for f in races:
        assert sorted(s.instruction.split(".")[0] for s in f.sites) == ["cp", "ldmatrix"], f.sites


def test_scalars_of_each_kind(kernels) -> None:
    """A bool, a half, an int past 32 bits and a float: PTX alone would take the int for a pointer."""
    import gpurace.triton

    select = kernels["scalars"].select
    out = np.zeros(64, np.float32)
    report = gpurace.triton.check(select, 1, out, True, np.float16(1.5), (1 << 40) + 3, 0.25, BLOCK=64, num_warps=2)
    assert report.clean and np.array_equal(out, 1.5 * np.arange(64) + 3)
    assert report.launch["args"] == ["float32[64]", "True", "float16(1.5)", str((1 << 40) + 3), "0.25"]
    gpurace.triton.check(select, 1, out, False, np.float16(1.5), 1 << 40, 0.25, BLOCK=64, num_warps=2)
    assert np.array_equal(out, 0.25 * np.arange(64))


def test_each_autotuning_configuration_is_a_program_to_check(kernels) -> None:
    """Configuration 1's larger block overlaps the next program's (the kernel steps by 128); heuristics
    compute EVEN from the arguments, so n = 1024 takes the unmasked path, which also runs past the end."""
    import triton

    import gpurace.triton

    scale = kernels["autotuned_scale"].scale
    for n in (1000, 1024):
        for config, warps in ((0, 4), (1, 2)):
            x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
            report = gpurace.triton.check(scale, lambda meta: (triton.cdiv(meta["n"], 128),), x, out, n, config=config)
            assert report.launch["num_warps"] == warps and report.launch["autotune_config"] == config
            if n == 1000:
                assert sites(report) == expected("autotuned_scale", f"expect_config{config}")
            elif config == 1:  # line 26 despite Triton's asm line numbering (`inline_asm_lines`)
                found = {(f.kind, s.loc.line) for f in report.findings for s in f.sites}
                assert found == {("data-race", 26), ("out-of-bounds", 26)}
            assert np.array_equal(out, x * 2 + np.arange(n) // 128)
    with pytest.raises(UserError, match="2 autotuning configuration"):
        gpurace.triton.check(scale, 8, x, out, n, config=2)


def test_a_launch_option_named_by_a_parameter_is_bound_to_both(kernels) -> None:
    """`num_stages=2` goes to Triton's compiler and to the kernel's `num_stages` parameter, as Triton binds it;
    a kernel without such a parameter takes the option alone."""
    import gpurace.triton

    rows, cols = 12, 50
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(rows, np.float32)
    report = gpurace.triton.check(kernels["pipelined_rows"].row_max, 4, x, out, rows, cols, BLOCK=64, num_stages=2)
    assert sites(report) == expected("pipelined_rows") == []
    assert np.array_equal(out, x.max(axis=1))
    with pytest.raises(UserError, match="no value for parameter 'num_stages'"):
        gpurace.triton.check(kernels["pipelined_rows"].row_max, 4, x, out, rows, cols, BLOCK=64)


def test_an_autotuning_configuration_s_pre_hook_runs_before_the_launch(kernels) -> None:
    """The hook gets the arguments by name with the configuration's meta-parameters (Triton's `full_nargs`)
    and prepares the arrays the launch then updates; its error names it."""
    import gpurace.triton

    rows, cols = 6, 40
    x = np.random.default_rng(6).standard_normal((rows, cols)).astype(np.float32)
    tuned = kernels["pipelined_rows"].tuned_row_max
    for config, block in ((0, 64), (1, 128)):
        out = np.zeros(rows + 2, np.float32)
        report = gpurace.triton.check(tuned, 3, x, out, rows, cols, config=config)
        assert report.clean and np.array_equal(out[:rows], x.max(axis=1)) and (out[rows:] == block).all()
    with pytest.raises(UserError, match="pre_hook failed: TypeError"):
        gpurace.triton.check(tuned, 3, x, out, "6", cols)


def test_refusals(kernels) -> None:
    import triton
    import triton.language as tl

    import gpurace.triton

    add = kernels["vector_add"].add
    x = np.zeros(64, np.float32)
    with pytest.raises(UserError, match="not a @triton.jit kernel"):
        gpurace.triton.check(print, 1, x)
    with pytest.raises(UserError, match="the heuristic for 'EVEN' failed"):
        gpurace.triton.check(kernels["autotuned_scale"].scale, 8, x, x, "64")
    with pytest.raises(UserError, match="no value for parameter 'BLOCK'"):
        gpurace.triton.check(add, 1, x, x, x, 64)
    with pytest.raises(UserError, match="has no parameter 'BLOK'"):
        gpurace.triton.check(add, 1, x, x, x, 64, BLOK=64)
    with pytest.raises(UserError, match="C-contiguous"):
        gpurace.triton.check(add, 1, np.zeros(128, np.float32)[::2], x, x, 64, BLOCK=64)
    with pytest.raises(UserError, match="power of two"):
        gpurace.triton.check(add, 1, x, x, x, 64, BLOCK=64, num_warps=3)
    with pytest.raises(UserError, match="grid"):
        gpurace.triton.check(add, (0,), x, x, x, 64, BLOCK=64)

    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)  # noqa: F821

    with pytest.raises(UserError, match="Triton could not compile broken"):
        gpurace.triton.check(broken, 1, x, BLOCK=64)


def test_a_scalar_in_braces_is_a_scalar() -> None:
    """Triton's loads and stores write one register in braces (`ld.global.b32 { %r1 }`), which ptxas takes."""
    from gpurace.frontend.ptx.parser import parse_ptx
    from gpurace.sim.launch import simulate

    ptx = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.b64 %rd1, [k_param_0];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.b32 { %r2 }, [ %rd3 + 0 ];
    add.s32 %r3, %r2, %r1;
    st.global.b32 [ %rd3 + 0 ], { %r3 };
    ret;
}
"""
    values = np.full(32, 5, np.uint32)
    simulate(parse_ptx(ptx, "k.ptx"), grid=1, block=32, args=[values])
    assert np.array_equal(values, 5 + np.arange(32))


def test_each_line_of_an_inline_asm_block_is_the_call_s_line() -> None:
    """LLVM numbers an asm block's lines from the call's line on; they all belong to the call."""
    from gpurace.frontend.triton_kernels import inline_asm_lines

    ptx = """\t.loc\t1 23 37
\t// begin inline asm
\t.loc\t1 23 37
\tmov.u32 %r1, 0x0;
\t.loc\t1 24 37
\tld.global.b32 { %r1 }, [ %rd1 + 0 ];
\t// end inline asm
\t.loc\t1 24 5
\tst.global.b32 [ %rd2 + 0 ], %r1;
"""
    fixed = inline_asm_lines(ptx)
    assert fixed == ptx.replace("\t.loc\t1 24 37\n", "\t.loc\t1 23 37\n")
    assert "\t.loc\t1 24 5\n" in fixed  # outside the block, untouched


def test_triton_is_an_optional_dependency(monkeypatch) -> None:
    import gpurace.frontend.triton_kernels as triton_kernels
    import gpurace.triton

    monkeypatch.setattr(triton_kernels.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError, match=r"install gpurace\[triton\]"):
        gpurace.triton.check(object(), 1)


def test_findings_name_the_file_the_kernel_was_loaded_from(kernels, tmp_path) -> None:
    """Triton's own cache is keyed by source text: a copy of a kernel file elsewhere must not get PTX whose line
    information names the original."""
    import gpurace.triton

    kernels["overlapping_store"]  # the original was compiled first
    copy = tmp_path / "overlapping_store.py"
    copy.write_text((KERNELS / "overlapping_store.py").read_text())
    spec = importlib.util.spec_from_file_location("triton_kernels_copy", copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    n, block = 1024, 128
    report = gpurace.triton.check(module.tag, n // (block // 2) - 1, np.arange(n, dtype=np.float32), np.zeros(n, np.float32), n, BLOCK=block, num_warps=2)
    assert report.findings and {Path(s.loc.file) for f in report.findings for s in f.sites} == {copy.resolve()}


def test_cpu_tensors_stand_for_arrays_and_receive_the_results(kernels) -> None:
    """A tensor that speaks DLPack (as a PyTorch CPU tensor does) is the array sharing its memory: the sum
    appears in the tensor; one on a GPU is refused by name."""
    import gpurace.triton
    from dlpack_tensor import Tensor

    n = 256
    x, y = np.arange(n, dtype=np.float32), np.full(n, 2.0, np.float32)
    out = Tensor(np.zeros(n, np.float32))
    report = gpurace.triton.check(kernels["vector_add"].add, 2, Tensor(x), y, out, n, BLOCK=128)
    assert report.clean and np.array_equal(out.read(), x + y)
    assert report.launch["args"] == ["float32[256]"] * 3 + ["256"]
    with pytest.raises(UserError, match="argument 3: a Tensor on a CUDA GPU"):
        gpurace.triton.check(kernels["vector_add"].add, 2, x, y, Tensor(np.zeros(n, np.float32), (2, 0)), n, BLOCK=128)
