"""Malformed or hostile PTX ends in a UserError that names the PTX line, never in a crash.

Each test is one crash class that the PTX fuzz tests (tests/fuzz/test_fuzz_ptx.py)
found or that the hardening issue reported, reduced to a few lines of PTX.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpurace.errors import PtxSyntaxError, UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import MAX_REGISTERS_PER_DECLARATION, MAX_REGISTERS_PER_KERNEL
from gpurace.sim.launch import simulate
from gpurace.sim.program import build_program, thread_state_bytes

HEADER = """.version 8.0
.target sm_80
.address_size 64
"""
BODY_LINE = 9  # the PTX line of the first line of `body` in `kernel()`


def kernel(body: str, before: str = "") -> str:
    """A kernel `k(u32* out)` with registers %p, %r, %rd (and `before` at module scope); `body` starts at BODY_LINE."""
    return (
        HEADER
        + before
        + ".visible .entry k(.param .u64 k_param_0)\n{\n"
        + "\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
        + body
        + "\n}\n"
    )


def run(text: str, block: int = 32):
    return simulate(parse_ptx(text, "k.ptx"), grid=1, block=block, args=[np.zeros(64, dtype=np.uint32)])


def rejected(text: str, message: str, line: int | None = None) -> str:
    """Assert that simulating `text` raises a UserError matching `message` and naming PTX line `line`."""
    with pytest.raises(UserError) as error:
        run(text)
    text_of_error = str(error.value)
    assert re.search(message, text_of_error), text_of_error
    if line is not None:
        assert f"PTX line {line}" in text_of_error or f"k.ptx:{line}" in text_of_error, text_of_error
    return text_of_error


# -- control falling off the end of a body ---------------------------------------


def test_a_kernel_without_a_final_ret_ends_its_threads_there():
    text = kernel("\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], 7;")
    out = run(text).args[0]
    assert out[0] == 7


def test_a_kernel_whose_last_instruction_is_a_guarded_branch_ends_there_too():
    run(kernel("\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n$L_top:\n\t@%p1 bra $L_end;\n$L_end:"))


def test_an_empty_kernel_runs():
    assert run(HEADER + ".visible .entry k(.param .u64 k_param_0)\n{\n}\n").findings == []


def test_a_function_without_a_final_ret_is_an_error_naming_it():
    text = HEADER + (
        ".func f()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1;\n}\n"
        ".visible .entry k(.param .u64 k_param_0)\n{\n\tcall.uni f, ();\n\tret;\n}\n"
    )
    rejected(text, r"function f can run past its last instruction without `ret`", line=8)


# -- immediates out of range --------------------------------------------------


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        ("bar.sync 16;", r"barrier id 16 .* PTX allows 0\.\.15"),
        ("bar.sync 0, 33;", r"thread count 33 .* multiples of 32"),
        ("bar.sync 0, 0;", r"thread count 0 "),
        ("bar.red.popc.u32 %r1, 99, %p1;", r"barrier id 99"),
        ("cp.async.ca.shared.global [%r1], [%rd1], 3;", r"copy size .* 4, 8 or 16"),
        ("shfl.sync.idx.b32 %r1, %r2, 0, 31, 0x1ffffffff;", r"immediate 8589934591 .* does not fit \.b32"),
        ("bar.warp.sync 0x100000000;", r"immediate 4294967296 .* does not fit \.b32"),
        ("add.s16 %r1, %r1, 65536;", r"immediate 65536 .* does not fit \.s16"),
    ],
)
def test_immediates_out_of_range(instruction, message):
    rejected(kernel(f"\t{instruction}\n\tret;"), message, line=BODY_LINE)


def test_a_barrier_id_out_of_range_in_a_register_is_an_error_when_it_is_read():
    text = kernel("\tmov.u32 %r1, 17;\n\tbar.sync %r1;\n\tret;")
    rejected(text, r"barrier id of `bar.sync %r1` is 17 at run time", line=BODY_LINE + 1)


def test_integer_constants_wider_than_64_bits_are_syntax_errors():
    with pytest.raises(PtxSyntaxError, match=r"k.ptx:9: integer constant 18446744073709551616 does not fit in 64 bits"):
        parse_ptx(kernel("\tmov.u64 %rd1, 18446744073709551616;\n\tret;"), "k.ptx")


# -- operand counts and vector arity -----------------------------------------


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        ("st.global.v4.u32 [%rd1], %r1;", r"has a scalar where it needs a vector of 4"),
        ("ld.global.v2.u32 {%r1, %r2, %r3}, [%rd1];", r"has a vector of 3 where it needs a vector of 2"),
        ("ld.global.u32 {%r1, %r2}, [%rd1];", r"needs a scalar \(no \.vN modifier\)"),
        ("ld.global.u32 %r1, %rd1;", r"needs an address \[\.\.\.\]"),
        ("st.global.u32 [%rd1], %r1, %r2;", r"takes 2 operand\(s\), found 3"),
        ("atom.global.cas.b32 %r1, [%rd1], %r2;", r"takes 4 operand\(s\), found 3"),
        ("red.global.exch.b32 [%rd1], %r2;", r"red has no \.exch"),
        ("shfl.sync.bfly.b32 %r1, %r2, 1, 31;", r"takes 5 operand\(s\), found 4"),
        ("shfl.sync.b32 %r1, %r2, 1, 31, -1;", r"needs exactly one shuffle mode"),
        ("vote.sync.ballot.b32 %r1, %p1;", r"takes 3 operand\(s\), found 2"),
        ("bar.arrive 1;", r"takes 2 operand\(s\), found 1"),
        ("bar.warp.sync;", r"takes 1 operand\(s\), found 0"),
        ("add.s32;", r"no operands"),
        ("add.s32 %r1, %r2;", r"expected 3 operands, found 2"),
        ("mov.b32 {%r1, %r2, %r3}, %r4;", r"cannot split a \.b32 value into 3 parts"),
        ("membar.cta.sys;", r"needs exactly one level"),
        ("bra;", r"takes 1 operand\(s\), found 0"),
    ],
)
def test_operand_counts_and_shapes(instruction, message):
    rejected(kernel(f"\t{instruction}\n\tret;"), message, line=BODY_LINE)


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        ("@%r1 bra $L_end;", r"guard .* is %r1, which is not a \.pred register"),
        ("add.s32 %p1|%p2, %r1, %r2;", r"destination pair p\|q is only for instructions with two results"),
        ("add.s32 %r1, !%p1, %r2;", r"only a \.pred operand can be negated"),
        ("atom.global.add.b128 %rd1, [%rd1], %rd2;", r"values of type \.b128 are not supported"),
        ("atom.local.add.u32 %r1, [%rd1], 1;", r"modifier\(s\) \.local not supported for atom"),
        ("atom.global.inc.u64 %rd1, [%rd1], 1;", r"does not support atomic inc on \.u64"),
        ("ld.global.mmio.u32 %r1, [%rd1];", r"modifier\(s\) \.mmio not supported for ld"),
        ("ld.shared.global.u32 %r1, [%rd1];", r"names several state spaces"),
        ("cvta.shared::cluster.u64 %rd1, %rd2;", r"modifier\(s\) \.shared::cluster not supported"),
        ("cvta.u64 %rd1, %rd2;", r"needs the state space to convert"),
        ("redux.sync.add.f32 %r1, %r2, -1;", r"modifier\(s\) \.f32 not supported for redux"),
        ("match.any.sync.b32 %r1|%p1, %r2, -1;", r"only match\.all has a predicate destination"),
    ],
)
def test_operands_of_the_wrong_kind(instruction, message):
    rejected(kernel(f"\t{instruction}\n$L_end:\n\tret;"), message, line=BODY_LINE)


def test_shared_cta_is_the_blocks_shared_memory():
    text = kernel(
        "\tmov.u32 %r1, %tid.x;\n\tshl.b32 %r2, %r1, 2;\n\tmov.u32 %r3, s;\n\tadd.s32 %r3, %r3, %r2;\n"
        "\tst.shared::cta.u32 [%r3], %r1;\n\tbar.sync 0;\n\tld.shared.u32 %r4, [%r3];\n"
        "\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.u32 %rd3, %r1, 4;\n"
        "\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r4;\n\tret;",
        before=".shared .align 4 .b32 s[32];\n",
    )
    assert list(run(text).args[0][:32]) == list(range(32))


# -- calls ---------------------------------------------------------------------

CALLEE = (
    ".func (.param .b32 ret) f(.param .b32 a)\n{\n\t.reg .b32 %r<2>;\n"
    "\tld.param.b32 %r1, [a];\n\tst.param.b32 [ret], %r1;\n\tret;\n}\n"
)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("call.uni (r0), f, (nowhere);", r"passes nowhere, which is not a \.param declared in k"),
        ("call.uni (r0), f, (p0, p0);", r"passes 2 argument\(s\) and 1 return\(s\); f takes 1 and 1"),
        ("call.uni (r0), f, (%r1);", r"passes something other than \.param names"),
        ("call.uni (r0), k, (p0);", r"calls the kernel k"),
        ("call.uni (r0), f, (p0), (p0);", r"unexpected operands after the arguments"),
    ],
)
def test_malformed_calls(call, message):
    text = HEADER + CALLEE + (
        ".visible .entry k(.param .u64 k_param_0)\n{\n\t.reg .b32 %r<2>;\n"
        "\t{\n\t.param .b32 p0;\n\tst.param.b32 [p0], 1;\n\t.param .b32 r0;\n"
        f"\t{call}\n\tld.param.b32 %r1, [r0];\n\t}}\n\tret;\n}}\n"
    )
    rejected(text, message, line=18)


def test_a_param_access_outside_the_parameter_is_an_error():
    text = HEADER + CALLEE.replace("ld.param.b32 %r1, [a];", "ld.param.b32 %r1, [a+4];") + (
        ".visible .entry k(.param .u64 k_param_0)\n{\n\t{\n\t.param .b32 p0;\n\tst.param.b32 [p0], 1;\n"
        "\t.param .b32 r0;\n\tcall.uni (r0), f, (p0);\n\t}\n\tret;\n}\n"
    )
    rejected(text, r"accesses bytes 4\.\.7 of \.param a, which has 4", line=7)


# -- declarations --------------------------------------------------------------


def test_a_huge_register_declaration_is_refused_by_the_parser():
    text = kernel("\tret;").replace("%r<8>", "%q<100000000>")
    with pytest.raises(PtxSyntaxError, match=r"k.ptx:7: 100,000,000 registers in one declaration are more than"):
        parse_ptx(text, "k.ptx")


def test_the_declaration_limit_itself_is_accepted():
    parse_ptx(kernel("\tret;").replace("%r<8>", f"%r<{MAX_REGISTERS_PER_DECLARATION}>"), "k.ptx")


def test_too_many_registers_in_a_kernel_are_refused_before_they_are_allocated():
    count = MAX_REGISTERS_PER_KERNEL // MAX_REGISTERS_PER_DECLARATION + 1
    decls = "".join(f"\t.reg .b32 %v{i}_<{MAX_REGISTERS_PER_DECLARATION}>;\n" for i in range(count))
    module = parse_ptx(kernel(decls + "\tret;"), "k.ptx")
    with pytest.raises(UserError, match=r"declare [\d,]+ registers, more than gpurace supports"):
        build_program(module, "k")


def test_thread_state_bytes_counts_registers_and_param_slots():
    module = parse_ptx(kernel("\t{\n\t.param .b64 p;\n\t}\n\tret;"), "k.ptx")
    # 4 predicates, 8 b32 and 8 b64 that nothing uses share one slot per type (1, 4 and 8 bytes); one .param
    # slot of at least 16 bytes
    assert thread_state_bytes(build_program(module, "k")) == 1 + 4 + 8 + 16


def test_an_initializer_longer_than_its_array_is_a_syntax_error():
    with pytest.raises(PtxSyntaxError, match=r"k.ptx:4: the initializer of t has 3 values for 2 element"):
        parse_ptx(kernel("\tret;", before=".global .u32 t[2] = {1, 2, 3};\n"), "k.ptx")


def test_an_unsized_array_takes_its_size_from_its_initializer():
    module = parse_ptx(kernel("\tret;", before=".global .u32 t[][2] = {{1, 2}, {3, 4}, {5}};\n"), "k.ptx")
    assert module.variables[0].dims == (3, 2)


def test_a_float_initializer_of_an_integer_variable_is_a_syntax_error():
    with pytest.raises(PtxSyntaxError, match=r"k.ptx:4: the initializer of t has the value 1.5, which is not an integer"):
        parse_ptx(kernel("\tret;", before=".global .u32 t = 1.5;\n"), "k.ptx")


def test_an_alignment_that_is_not_a_power_of_two_is_a_syntax_error():
    with pytest.raises(PtxSyntaxError, match=r"k.ptx:4: alignment 3 is not a power of two"):
        parse_ptx(kernel("\tret;", before=".global .align 3 .u32 t;\n"), "k.ptx")


def test_blocks_nested_beyond_the_limit_are_a_syntax_error_not_a_slow_parse():
    with pytest.raises(PtxSyntaxError, match=r"blocks nested more than \d+ deep in k"):
        parse_ptx(kernel("{" * 100_000 + "}" * 100_000 + "\tret;"), "k.ptx")


def test_a_syntax_error_quotes_at_most_the_start_of_a_long_line():
    with pytest.raises(PtxSyntaxError) as error:
        parse_ptx(kernel("\tadd.s32 %r1, %r1, " + "9" * 100_000 + ";"), "k.ptx")
    assert len(str(error.value)) < 500


def test_kernel_parameters_larger_than_cuda_allows_are_refused():
    text = HEADER + ".visible .entry k(.param .align 8 .b8 s[1099511627776])\n{\n\tret;\n}\n"
    with pytest.raises(UserError, match=r"the parameters of kernel k \(PTX line 4\) take 1,099,511,627,776 bytes"):
        build_program(parse_ptx(text, "k.ptx"), "k")


def test_a_call_of_something_that_is_not_a_function_names_the_call():
    module = parse_ptx(kernel("$L_x:\n\tcall.uni $L_x, ();\n\tret;"), "k.ptx")
    with pytest.raises(UserError, match=r"PTX line 10: `call.uni \$L_x, \(\)` calls \$L_x, which is not a function"):
        build_program(module, "k")


def test_registers_of_an_unsupported_type_name_their_declaration():
    module = parse_ptx(kernel("\t.reg .b128 %q;\n\tret;"), "k.ptx")
    with pytest.raises(UserError, match=r"register %q of k \(PTX line 9\) has type \.b128"):
        build_program(module, "k")


def test_a_module_scope_local_variable_is_not_supported():
    module = parse_ptx(kernel("\tret;", before=".local .u32 t;\n"), "k.ptx")
    with pytest.raises(UserError, match=r"module-scope \.local variable t is not supported \(PTX line 4\)"):
        build_program(module, "k")
