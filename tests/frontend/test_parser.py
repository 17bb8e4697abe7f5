"""The PTX parser: each construct on small snippets, then PTX that nvcc produces."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gpurace.errors import PtxSyntaxError
from gpurace.frontend.ptx.ir import (
    Addr,
    AddressOf,
    Guard,
    Imm,
    Negated,
    Param,
    ParamList,
    PredPair,
    Reg,
    RegDecl,
    Sink,
    SpecialReg,
    Sym,
    Vec,
)
from gpurace.frontend.ptx.parser import parse_ptx

HEADER = ".version 8.0\n.target sm_75\n.address_size 64\n"


def kernel(body: str, decls: str = "", params: str = "") -> str:
    """A module with one kernel `k` around `body`."""
    return f"{HEADER}{decls}\n.visible .entry k({params})\n{{\n{body}\n}}\n"


def instructions(body: str, decls: str = ""):
    return parse_ptx(kernel(body, decls)).functions["k"].body


def one(line: str):
    (ins,) = instructions(line)
    return ins


# --------------------------------------------------------------------------
# Module directives and comments
# --------------------------------------------------------------------------


def test_module_directives_and_comments():
    m = parse_ptx(
        "// header\n/* block\n comment */ .version 9.0\n.target sm_90a, debug // trailing\n.address_size 32\n"
    )
    assert m.version == "9.0"
    assert m.target == ("sm_90a", "debug")
    assert m.address_size == 32
    assert m.functions == {}


def test_empty_input_is_an_empty_module():
    assert parse_ptx("").functions == {}


# --------------------------------------------------------------------------
# Functions
# --------------------------------------------------------------------------


def test_entry_params():
    m = parse_ptx(
        kernel(
            "ret;",
            params=".param .u64 a, .param .align 8 .b8 s[16], .param .u64 .ptr .global .align 4 p, .param .u32 n",
        )
    )
    fn = m.functions["k"]
    assert fn.is_entry and fn.linkage == "visible" and not fn.is_declaration
    assert fn.params == [
        Param("a", "u64"),
        Param("s", "b8", (16,), 8),
        Param("p", "u64", ptr_space="global", ptr_align=4),
        Param("n", "u32"),
    ]
    assert fn.params[1].size == 16
    assert [k.name for k in m.kernels] == ["k"]


def test_func_returns_noreturn_and_linkage():
    m = parse_ptx(
        HEADER
        + ".weak .func (.param .b32 retval0) f(.param .b32 x)\n{\nst.param.b32 [retval0], 1;\nret;\n}\n"
        + ".func g() .noreturn\n{\ntrap;\n}\n"
        + ".func h(.reg .b32 a)\n{\nret;\n}\n"
    )
    f, g, h = m.functions["f"], m.functions["g"], m.functions["h"]
    assert not f.is_entry and f.linkage == "weak"
    assert f.returns == [Param("retval0", "b32")] and f.params == [Param("x", "b32")]
    assert g.noreturn and g.params == []
    assert h.params == [Param("a", "b32", space="reg")]


def test_declarations_and_later_definition():
    m = parse_ptx(
        HEADER
        + ".extern .func (.param .b32 r) ext(.param .b32 x);\n"
        + ".func proto(.param .b64 p);\n"
        + ".func later();\n.func later()\n{\nret;\n}\n"
    )
    assert m.functions["ext"].is_declaration and m.functions["ext"].linkage == "extern"
    assert m.functions["proto"].is_declaration
    assert not m.functions["later"].is_declaration and len(m.functions["later"].body) == 1
    assert m.kernels == []


def test_function_defined_twice_is_an_error():
    with pytest.raises(PtxSyntaxError, match="defined twice"):
        parse_ptx(HEADER + ".func f()\n{\nret;\n}\n.func f()\n{\nret;\n}\n")


def test_performance_directives():
    m = parse_ptx(
        HEADER
        + ".entry k() .maxntid 256, 1, 1 .minnctapersm 2 .maxnreg 32 .explicitcluster .reqnctapercluster 2, 1, 1\n"
        + "{\nret;\n}\n.entry r() .reqntid 64\n{\nret;\n}\n"
    )
    assert m.functions["k"].directives == {
        "maxntid": (256, 1, 1),
        "minnctapersm": (2,),
        "maxnreg": (32,),
        "explicitcluster": (),
        "reqnctapercluster": (2, 1, 1),
    }
    assert m.functions["r"].directives == {"reqntid": (64,)}


# --------------------------------------------------------------------------
# Registers and variables
# --------------------------------------------------------------------------


def test_register_declarations():
    fn = parse_ptx(kernel(".reg .b32 %r<36>;\n.reg .pred %p;\n.reg .f32 %f1, %f2;\nret;")).functions["k"]
    assert fn.regs == [RegDecl("b32", "%r", 36), RegDecl("pred", "%p"), RegDecl("f32", "%f1"), RegDecl("f32", "%f2")]
    assert fn.regs[0].names()[35] == "%r35"


def test_module_variables_with_initializers():
    m = parse_ptx(
        HEADER
        + ".global .align 4 .u32 a = 5;\n"
        + ".const .align 4 .u32 b[4] = {1, 2};\n"
        + ".global .s32 c[2][3] = {{1, -2, 3}, {4, 5, 0x10}};\n"
        + ".global .f32 d[2] = {0f3F800000, 0f40000000};\n"
        + ".global .f64 e = 0d3FF0000000000000;\n"
        + ".global .align 1 .b8 s[3] = {104, 105, 0};\n"
        + ".global .align 8 .u64 ptrs[3] = {a, c+8, generic(s)};\n"
        + ".visible .global .u32 v;\n.weak .global .u32 w;\n.common .global .u32 cm;\n"
        + ".extern .shared .align 16 .b8 smem[];\n"
        + ".global .attribute(.managed) .align 4 .u32 managed;\n"
    )
    var = {v.name: v for v in m.variables}
    assert var["a"].init == (5,) and var["a"].align == 4 and var["a"].space == "global"
    assert var["b"].init == (1, 2) and var["b"].dims == (4,) and var["b"].size == 16 and var["b"].space == "const"
    assert var["c"].init == (1, -2, 3, 4, 5, 16) and var["c"].dims == (2, 3)
    assert var["d"].init == (1.0, 2.0)
    assert var["e"].init == (1.0,)
    assert var["s"].init == (104, 105, 0)
    assert var["ptrs"].init == (AddressOf("a"), AddressOf("c", 8), AddressOf("s", 0, generic=True))
    assert (var["v"].linkage, var["w"].linkage, var["cm"].linkage) == ("visible", "weak", "common")
    smem = var["smem"]
    assert smem.linkage == "extern" and smem.dims == (None,) and smem.count is None and smem.size == 0
    assert var["managed"].space == "global"
    assert var["a"].ptx_line == 4


def test_function_scope_variables():
    fn = parse_ptx(
        kernel(
            ".local .align 8 .b8 __local_depot0[16];\n.shared .align 4 .b8 tile[1024];\n"
            ".extern .shared .align 16 .b8 dyn[];\nret;"
        )
    ).functions["k"]
    assert [(v.name, v.space, v.size) for v in fn.variables] == [
        ("__local_depot0", "local", 16),
        ("tile", "shared", 1024),
        ("dyn", "shared", 0),
    ]


def test_several_names_in_one_declaration():
    m = parse_ptx(HEADER + ".global .u32 x, y[2] = {1, 2};\n")
    assert [(v.name, v.dims, v.init) for v in m.variables] == [("x", (), None), ("y", (2,), (1, 2))]


def test_texref_is_rejected_clearly():
    with pytest.raises(PtxSyntaxError, match="texref"):
        parse_ptx(HEADER + ".global .texref tex;\n")


# --------------------------------------------------------------------------
# Instructions and operands
# --------------------------------------------------------------------------


def test_labels_and_guards():
    fn = parse_ptx(
        kernel("$L__BB0_1:\n@%p1 bra $L__BB0_2;\n@!%p1 bra.uni $L__BB0_1;\n$L__BB0_2:\nret;\n$L__end:")
    ).functions["k"]
    assert fn.labels == {"$L__BB0_1": 0, "$L__BB0_2": 2, "$L__end": 3}
    assert fn.body[0].guard == Guard(Reg("%p1"))
    assert fn.body[1].guard == Guard(Reg("%p1"), negated=True)
    assert fn.body[1].operands == (Sym("$L__BB0_1"),)
    assert fn.body[1].modifiers == ("uni",)


@pytest.mark.parametrize(
    "text, value",
    [("42", 42), ("0x1F", 31), ("0X1f", 31), ("017", 15), ("0b101", 5), ("-7", -7), ("4294967295U", 4294967295), ("0", 0)],
)
def test_integer_immediates(text, value):
    assert one(f"mov.u32 %r1, {text};").operands[1] == Imm(value)


def test_float_immediates_keep_their_bits():
    f32 = one("mov.f32 %f1, 0f3F800000;").operands[1]
    assert f32 == Imm(1.0, "f32", 0x3F800000)
    f64 = one("mov.f64 %fd1, 0d3FF0000000000000;").operands[1]
    assert f64 == Imm(1.0, "f64", 0x3FF0000000000000)
    nan = one("mov.f32 %f1, 0f7FC00001;").operands[1]
    assert nan.kind == "f32" and nan.bits == 0x7FC00001
    assert struct.pack("<I", nan.bits) == bytes.fromhex("0100c07f")
    assert one("mov.f64 %fd1, 1.5;").operands[1] == Imm(1.5, "f64")


def test_vector_and_sink_operands():
    ins = one("ld.global.nc.v4.f32 {%f1, %f2, _, %f4}, [%rd1+16];")
    assert ins.opcode == "ld" and ins.modifiers == ("global", "nc", "v4", "f32")
    assert ins.operands == (Vec((Reg("%f1"), Reg("%f2"), Sink(), Reg("%f4"))), Addr(Reg("%rd1"), 16))
    assert ins.space == "global" and ins.types == ("f32",)


@pytest.mark.parametrize(
    "text, addr",
    [
        ("[%rd1]", Addr(Reg("%rd1"))),
        ("[%rd1+8]", Addr(Reg("%rd1"), 8)),
        ("[%rd1+-4]", Addr(Reg("%rd1"), -4)),
        ("[%rd1-4]", Addr(Reg("%rd1"), -4)),
        ("[sym]", Addr(Sym("sym"))),
        ("[sym+4]", Addr(Sym("sym"), 4)),
        ("[0x1000]", Addr(None, 0x1000)),
    ],
)
def test_memory_operands(text, addr):
    assert one(f"ld.u32 %r1, {text};").operands[1] == addr


@pytest.mark.parametrize(
    "text, reg",
    [
        ("%tid.x", SpecialReg("tid", "x")),
        ("%ntid.y", SpecialReg("ntid", "y")),
        ("%ctaid.z", SpecialReg("ctaid", "z")),
        ("%nctaid.x", SpecialReg("nctaid", "x")),
        ("%laneid", SpecialReg("laneid")),
        ("%warpid", SpecialReg("warpid")),
        ("%nwarpid", SpecialReg("nwarpid")),
        ("%smid", SpecialReg("smid")),
        ("%lanemask_lt", SpecialReg("lanemask_lt")),
        ("%clock", SpecialReg("clock")),
        ("%clock64", SpecialReg("clock64")),
        ("%globaltimer", SpecialReg("globaltimer")),
        ("%envreg3", SpecialReg("envreg3")),
        ("%dynamic_smem_size", SpecialReg("dynamic_smem_size")),
        ("%total_smem_size", SpecialReg("total_smem_size")),
    ],
)
def test_special_registers(text, reg):
    assert one(f"mov.u32 %r1, {text};").operands[1] == reg


def test_malformed_special_register_is_an_error():
    with pytest.raises(PtxSyntaxError, match="special register"):
        one("mov.u32 %r1, %tid.w;")


def test_bare_symbol_pred_pair_and_negated_predicate():
    assert one("mov.u64 %rd1, smem;").operands == (Reg("%rd1"), Sym("smem"))
    assert one("setp.lt.s32 %p1|%p2, %r1, %r2;").operands[0] == PredPair(Reg("%p1"), Reg("%p2"))
    ins = one("setp.lt.and.s32 %p1, %r1, %r2, !%p3;")
    assert ins.operands[3] == Negated(Reg("%p3"))


def test_registers_declared_without_sigil():
    fn = parse_ptx(kernel("{\n.reg .pred p;\nsetp.ne.b32 p, %r1, 0;\n@p bra L;\n}\nL:\nmov.u64 %rd1, p;")).functions["k"]
    assert fn.body[0].operands[0] == Reg("p")
    assert fn.body[1].guard == Guard(Reg("p"))
    # outside the block that declared it, `p` is a symbol again
    assert fn.body[2].operands[1] == Sym("p")


@pytest.mark.parametrize(
    "text, modifiers",
    [
        ("ld.global.nc.v4.f32", ("global", "nc", "v4", "f32")),
        ("atom.global.cta.add.u32", ("global", "cta", "add", "u32")),
        ("ld.acquire.gpu.global.u32", ("acquire", "gpu", "global", "u32")),
        ("st.volatile.shared.u8", ("volatile", "shared", "u8")),
        ("cvt.rn.sat.f32.f64", ("rn", "sat", "f32", "f64")),
        ("bar.sync", ("sync",)),
        ("barrier.sync.aligned", ("sync", "aligned")),
        ("bar.warp.sync", ("warp", "sync")),
        ("shfl.sync.bfly.b32", ("sync", "bfly", "b32")),
        ("vote.sync.ballot.b32", ("sync", "ballot", "b32")),
        ("membar.gl", ("gl",)),
        ("fence.acq_rel.gpu", ("acq_rel", "gpu")),
        ("mul.wide.s32", ("wide", "s32")),
        ("mad.lo.cc.u32", ("lo", "cc", "u32")),
        ("ld.global.L1::no_allocate.b32", ("global", "L1::no_allocate", "b32")),
        ("ld.global.L2::128B.u32", ("global", "L2::128B", "u32")),
        ("cp.async.ca.shared.global", ("async", "ca", "shared", "global")),
        ("red.release.gpu.global.add.u32", ("release", "gpu", "global", "add", "u32")),
        ("tex.2d.v4.f32.f32", ("2d", "v4", "f32", "f32")),
        ("cvt.rzi.ftz.sat.f32.f32", ("rzi", "ftz", "sat", "f32", "f32")),
        ("div.full.f32", ("full", "f32")),
        ("sin.approx.ftz.f32", ("approx", "ftz", "f32")),
    ],
)
def test_modifiers_in_order(text, modifiers):
    ins = one(f"{text} %r1;")
    assert ins.opcode == text.split(".")[0]
    assert ins.modifiers == modifiers


def test_memory_model_properties():
    ins = one("red.release.gpu.global.add.u32 [%rd1], 1;")
    assert (ins.space, ins.scope, ins.semantics) == ("global", "gpu", "release")
    assert one("st.volatile.shared.u8 [%r1], %rs1;").semantics == "volatile"


def test_texture_operand_with_coordinates():
    ins = one("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd4, {%f5, %f6}];")
    assert ins.operands[1] == Vec((Reg("%rd4"), Vec((Reg("%f5"), Reg("%f6")))))


def test_instruction_text_and_line():
    fn = parse_ptx(kernel("\tadd.s32 \t%r1,  %r2, 1;\n\t@%p1  bra $L;\n$L:\n\tret;")).functions["k"]
    assert [i.text for i in fn.body] == ["add.s32 %r1, %r2, 1", "@%p1 bra $L", "ret"]
    assert [i.ptx_line for i in fn.body] == [7, 8, 10]


# --------------------------------------------------------------------------
# Calls, scopes, pragmas
# --------------------------------------------------------------------------

CALLS = """
.func (.param .b32 retval0) _Z3fooi(.param .b32 x)
{
ret;
}
.func bar(.param .b64 a, .param .b32 b)
{
ret;
}
.visible .entry k()
{
.reg .b32 %r<4>;
.reg .b64 %rd<6>;
.pragma "nounroll";
{ // callseq 0, 0
.reg .b32 temp_param_reg;
.param .b32 param0;
st.param.b32 [param0+0], %r1;
.param .b32 retval0;
call.uni (retval0),
_Z3fooi,
(
param0
);
ld.param.b32 %r2, [retval0+0];
} // callseq 0
{ // callseq 1, 0
.param .b64 param0;
st.param.b64 [param0+0], %rd1;
.param .b32 param1;
st.param.b32 [param1+0], %r2;
call.uni
bar,
(
param0,
param1
);
}
{
.param .b32 param0;
.param .b32 retval0;
prototype_2 : .callprototype (.param .b32 _) _ (.param .b32 _);
call (retval0),
%rd5,
(
param0
)
, prototype_2;
}
ret;
}
"""


def test_call_sequences_are_flattened():
    fn = parse_ptx(HEADER + CALLS).functions["k"]
    calls = [i for i in fn.body if i.opcode == "call"]
    assert calls[0].operands == (ParamList((Sym("retval0"),)), Sym("_Z3fooi"), ParamList((Sym("param0"),)))
    assert calls[0].modifiers == ("uni",)
    assert calls[0].text == "call.uni (retval0), _Z3fooi, (param0)"
    assert calls[1].operands == (Sym("bar"), ParamList((Sym("param0"), Sym("param1"))))
    assert calls[2].operands == (
        ParamList((Sym("retval0"),)),
        Reg("%rd5"),
        ParamList((Sym("param0"),)),
        Sym("prototype_2"),
    )
    assert [i.opcode for i in fn.body] == ["st", "call", "ld", "st", "st", "call", "call", "ret"]
    params = {v.name: v for v in fn.variables}
    assert set(params) == {"param0", "param1", "retval0"}
    assert all(v.space == "param" for v in params.values())
    assert params["param0"].type == "b64"  # the largest of the slots declared under this name
    assert RegDecl("b32", "temp_param_reg") in fn.regs
    assert fn.pragmas == ["nounroll"]


def test_labels_repeated_in_sibling_blocks_are_renamed_apart():
    body = "{\nL: add.s32 %r1, %r1, 1;\nbra L;\n}\n{\nL: add.s32 %r1, %r1, 2;\nbra L;\n}\nret;"
    fn = parse_ptx(kernel(body)).functions["k"]
    first, second = fn.body[1].operands[0].name, fn.body[3].operands[0].name
    assert first != second
    assert fn.labels[first] == 0 and fn.labels[second] == 2


def test_label_twice_in_one_block_is_an_error():
    with pytest.raises(PtxSyntaxError, match="label L is defined twice"):
        parse_ptx(kernel("L:\nret;\nL:\nret;"))


# --------------------------------------------------------------------------
# Source locations
# --------------------------------------------------------------------------

LOCS = """
.visible .entry k()
{
.loc 1 10 0
mov.u32 %r1, %tid.x;
.loc 1 16 3
.loc 1 6 71, function_name $L__info_string0, inlined_at 1 16 3
.loc 2 107 3, function_name $L__info_string1, inlined_at 1 6 71
atom.global.add.u32 %r2, [%rd1], 1;
.loc 1 6 71, function_name $L__info_string1+3, inlined_at 1 16 3
add.s32 %r3, %r2, 1;
.loc 1 7 1, function_name $L__missing, inlined_at 1 17 3
ret;
}
.file 1 "/src/k.cu"
.file 2 "/inc/atomics.hpp", 1700000000, 1234
.section .debug_str
{
$L__info_string0:
.b8 95,90,54,97,100,100,111,110,101,80,105,105,0
$L__info_string1:
.b8 97,98,99,100
.b8 101,0
}
"""


def test_loc_resolves_files_declared_after_the_body():
    m = parse_ptx(HEADER + LOCS)
    assert m.files == {1: "/src/k.cu", 2: "/inc/atomics.hpp"}
    fn = m.functions["k"]
    mov = fn.body[0]
    assert (mov.loc.file, mov.loc.line, mov.loc.column, mov.loc.inlined_at) == ("/src/k.cu", 10, 0, None)
    assert fn.loc == mov.loc


def test_loc_inlining_chain_and_function_names():
    atom, add, ret = parse_ptx(HEADER + LOCS).functions["k"].body[1:]
    chain = atom.loc.chain()
    assert [(s.file, s.line, s.column) for s in chain] == [
        ("/inc/atomics.hpp", 107, 3),
        ("/src/k.cu", 6, 71),
        ("/src/k.cu", 16, 3),
    ]
    assert chain[0].function == "abcde"
    assert chain[1].function == "addone(int*, int)"  # demangled from _Z6addonePii
    assert add.loc.function == "de"  # label+offset
    assert ret.loc.function == "$L__missing"  # no such string: the label itself
    assert ret.loc.inlined_at.line == 17


def test_loc_naming_an_undeclared_file_is_an_error():
    with pytest.raises(PtxSyntaxError, match="file 3"):
        parse_ptx(kernel(".loc 3 1 0\nret;"))


def test_debug_sections_are_skipped():
    sections = (
        ".section .debug_info\n{\n.b32 1642\n.b8 2\n.b32 .debug_abbrev\n.b64 $L__func_begin0\n}\n"
        ".section .debug_abbrev\n{\n.b8 1\n.b8 17\n}\n"
        ".section .debug_loc\n{\n.b64 $L__tmp16\n.b8 6\n}\n"
        ".section .debug_macinfo\n{\n.b8 0\n}\n"
    )
    m = parse_ptx(kernel("ret;") + sections)
    assert len(m.functions["k"].body) == 1


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message, line",
    [
        (".foo 1;", "unknown directive .foo", 7),
        ("ad.s32 %r1, %r2, %r3;", "unknown instruction opcode 'ad'", 7),
        ("add.s32 %r1 %r2;", "expected ',' or ';'", 7),
        ("ld.u32 %r1, [%rd1;", "']' closing an address", 7),
        ("mov.u32 %r1, 1#;", "unexpected character '#'", 7),
        ("mov.u32 %r1, 09;", "malformed octal", 7),
        ("\n\nmov.u32 %r1, 12ab;", "malformed number", 9),
    ],
)
def test_errors_name_the_line_and_construct(body, message, line):
    with pytest.raises(PtxSyntaxError, match=message) as info:
        parse_ptx(kernel(body), "bad.ptx")
    assert info.value.line == line
    assert info.value.path == "bad.ptx"
    assert f"bad.ptx:{line}:" in str(info.value)


def test_unknown_module_directive():
    with pytest.raises(PtxSyntaxError, match=r"unknown directive \.bogus") as info:
        parse_ptx(HEADER + "\n.bogus 1\n")
    assert info.value.line == 5


def test_known_directive_out_of_place_is_named_as_such():
    with pytest.raises(PtxSyntaxError, match=r"directive \.reg is not supported at module scope"):
        parse_ptx(HEADER + ".reg .b32 %r;\n")
    with pytest.raises(PtxSyntaxError, match=r"directive \.file is not supported in the body of k"):
        parse_ptx(kernel('.file 1 "a.cu"\nret;'))


def test_vector_variable_is_an_inner_dimension():
    (var,) = parse_ptx(HEADER + ".global .align 16 .v4 .f32 quads[8];\n").variables
    assert var.dims == (8, 4) and var.size == 128


@pytest.mark.parametrize(
    "text",
    [HEADER + ".entry k(\n", HEADER + ".entry k()\n{\nret;\n", HEADER + "/* open", HEADER + '.pragma "x'],
)
def test_truncated_input_is_a_syntax_error(text):
    with pytest.raises(PtxSyntaxError):
        parse_ptx(text)


# --------------------------------------------------------------------------
# PTX from nvcc
# --------------------------------------------------------------------------

SOURCE = r"""
__device__ int counter = 5;
__device__ float table[4] = {1.0f, 2.0f};
__device__ int* where = &counter;
extern __shared__ float dyn[];

__device__ __forceinline__ int bump(int* p, int v) { return atomicAdd(p, v) + 1; }
__device__ __noinline__ int triple(int x) { return 3 * x + counter; }

__global__ void __launch_bounds__(256) stage(int* out, const float* __restrict__ in, int n)
{
    __shared__ int tile[256];
    int t = threadIdx.x;
    tile[t] = t;
    __syncthreads();
    int v = tile[(t + 1) % 256];
    v += bump(out, v);
    v = triple(v);
    dyn[t] = in[t] * 2.0f;
    v += __shfl_xor_sync(0xffffffff, v, 1);
    __threadfence();
    if (t < n) out[t] = v;
}

struct Pair { int a; double b; };
__global__ void viaPointer(Pair s, int (*fn)(int)) { atomicAdd_block(&counter, fn(s.a)); }
"""

SOURCE_LINE = {text: i + 1 for i, text in enumerate(SOURCE.splitlines()) if text.strip()}


def _line_of(fragment: str) -> int:
    return next(n for text, n in SOURCE_LINE.items() if fragment in text)


def nvcc_ptx(tmp_path: Path, *flags: str) -> str:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    out = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-ptx", *flags, str(src), "-o", str(out)], check=True, capture_output=True)
    return out.read_text()


@pytest.fixture(scope="module")
def lineinfo_module(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lineinfo")
    return parse_ptx(nvcc_ptx(tmp, "-lineinfo", "-arch=compute_75"), "k.ptx"), tmp / "k.cu"


def test_nvcc_structure(lineinfo_module):
    m, _ = lineinfo_module
    assert m.target == ("sm_75",) and m.address_size == 64
    kernels = {k.name: k for k in m.kernels}
    assert set(kernels) == {"_Z5stagePiPKfi", "_Z10viaPointer4PairPFiiE"}
    stage = kernels["_Z5stagePiPKfi"]
    assert [p.ptx_type for p in stage.params] == ["u64", "u64", "u32"]
    assert stage.directives["maxntid"] == (256, 1, 1)
    assert any(v.space == "shared" and v.size == 1024 for v in stage.variables)
    pair = kernels["_Z10viaPointer4PairPFiiE"].params[0]
    assert pair.ptx_type == "b8" and pair.size == 16 and pair.align == 8
    variables = {v.name: v for v in m.variables}
    assert variables["counter"].init == (5,)
    assert variables["table"].init == (0, 0, 128, 63, 0, 0, 0, 64)  # 1.0f, 2.0f as bytes
    assert variables["where"].init == (AddressOf("counter", generic=True),)
    assert variables["dyn"].linkage == "extern" and variables["dyn"].dims == (None,)
    assert "_Z6triplei" in m.functions
    for fn in m.functions.values():
        for label, index in fn.labels.items():
            assert 0 <= index <= len(fn.body), label


def test_nvcc_instructions_and_locs(lineinfo_module):
    m, src = lineinfo_module
    stage = m.functions["_Z5stagePiPKfi"]
    by_op = {}
    for ins in stage.body:
        by_op.setdefault(ins.opcode, []).append(ins)
    (bar,) = by_op["bar"]
    assert bar.loc.file == str(src) and bar.loc.line == _line_of("__syncthreads")
    (atom,) = by_op["atom"]
    assert atom.space == "global" and atom.has("add")
    chain = atom.loc.chain()
    assert chain[-1].file == str(src) and chain[-1].line == _line_of("bump(out, v)")
    assert any(step.line == _line_of("int bump(") and step.function.startswith("bump(") for step in chain)
    (shfl,) = by_op["shfl"]
    assert isinstance(shfl.operands[0], PredPair)
    assert shfl.loc.chain()[-1].line == _line_of("__shfl_xor_sync")
    (membar,) = by_op["membar"]
    assert membar.modifiers == ("gl",) and membar.loc.line == _line_of("__threadfence")
    (call,) = by_op["call"]
    assert call.operands[1] == Sym("_Z6triplei")
    assert any(isinstance(op, SpecialReg) and op == SpecialReg("tid", "x") for i in stage.body for op in i.operands)
    for ins in stage.body:
        assert ins.ptx_line > 0 and ins.text and ins.loc is not None


def test_nvcc_indirect_call(lineinfo_module):
    m, _ = lineinfo_module
    body = m.functions["_Z10viaPointer4PairPFiiE"].body
    (call,) = [i for i in body if i.opcode == "call"]
    assert isinstance(call.operands[1], Reg)
    assert isinstance(call.operands[-1], Sym) and call.operands[-1].name.startswith("prototype")


def test_nvcc_debug_build(tmp_path):
    m = parse_ptx(nvcc_ptx(tmp_path, "-G", "-arch=compute_75"))
    assert "debug" in m.target
    stage = m.functions["_Z5stagePiPKfi"]
    assert any(i.opcode == "bar" for i in stage.body)
    assert all(i.loc is not None for i in stage.body)
    assert str(tmp_path / "k.cu") in m.files.values()


@pytest.mark.parametrize("arch", ["compute_80", "compute_90"])
def test_nvcc_newer_architectures(tmp_path, arch):
    m = parse_ptx(nvcc_ptx(tmp_path, "-lineinfo", f"-arch={arch}"))
    assert m.target == (arch.replace("compute", "sm"),)
    assert {k.name for k in m.kernels} == {"_Z5stagePiPKfi", "_Z10viaPointer4PairPFiiE"}
