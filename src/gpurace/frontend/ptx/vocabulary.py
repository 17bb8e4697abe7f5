"""PTX's fixed vocabulary: instruction opcodes, special registers, directives.

The opcode table follows the instruction list of the PTX ISA (8.x/9.x). It is
here so that a typo (`ad.s32`) is a syntax error at parse time while every real
instruction parses; whether the simulator implements an opcode is decided
later, by the simulator. Opcodes are first dotted components: `cp.async.ca`
has opcode `cp`, `bar.warp.sync` has opcode `bar`.
"""

from __future__ import annotations

import re

OPCODES = frozenset(
    {
        # integer arithmetic
        "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg",
        "min", "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk",
        "dp4a", "dp2a", "addc", "subc", "madc",
        # floating point (half precision shares these names)
        "testp", "copysign", "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh",
        # comparison and selection
        "set", "setp", "selp", "slct",
        # logic and shift
        "and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr",
        # data movement and conversion
        "mov", "shfl", "prmt", "ld", "ldu", "st", "prefetch", "prefetchu", "applypriority",
        "discard", "createpolicy", "isspacep", "cvta", "cvt", "mapa", "getctarank", "cp",
        "multimem", "tensormap", "ldmatrix", "stmatrix", "movmatrix", "alloca",
        "stacksave", "stackrestore",
        # texture and surface
        "tex", "tld4", "txq", "istypeof", "suld", "sust", "sured", "suq",
        # control flow
        "bra", "brx", "call", "ret", "exit",
        # parallel synchronisation and communication
        "bar", "barrier", "membar", "fence", "atom", "red", "vote", "match", "activemask",
        "redux", "griddepcontrol", "elect", "mbarrier", "nanosleep", "clusterlaunchcontrol",
        # matrix multiply-accumulate
        "wmma", "mma", "wgmma", "tcgen05",
        # video
        "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
        "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
        "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
        # miscellaneous
        "brkpt", "pmevent", "trap", "setmaxnreg",
    }
)

# Special registers without a vector component (`%laneid`), and those with
# `.x/.y/.z` (`%tid.x`). `%envregN`, `%pmN` and `%pmN_64` are matched by pattern.
SPECIAL_SCALARS = frozenset(
    {
        "laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid",
        "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt",
        "clock", "clock_hi", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi",
        "reserved_smem_offset_begin", "reserved_smem_offset_end", "reserved_smem_offset_cap",
        "total_smem_size", "aggr_smem_size", "dynamic_smem_size", "current_graph_exec",
        "is_explicit_cluster", "cluster_ctarank", "cluster_nctarank",
    }
)
SPECIAL_VECTORS = frozenset(
    {"tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid"}
)
SPECIAL_NUMBERED = re.compile(r"envreg\d+|pm\d(?:_64)?|reserved_smem_offset_\d+")
VECTOR_COMPONENTS = frozenset({"x", "y", "z"})

STATE_SPACE_DIRECTIVES = frozenset({".global", ".shared", ".const", ".local", ".param"})
LINKAGE_DIRECTIVES = frozenset({".visible", ".weak", ".extern", ".common"})

# Performance-tuning directives between a function header and its body, with
# the number of integers each takes (None: one to three, as in `.maxntid`).
PERFORMANCE_DIRECTIVES = {
    ".maxntid": None,
    ".reqntid": None,
    ".minnctapersm": 1,
    ".maxnctapersm": 1,
    ".maxnreg": 1,
    ".explicitcluster": 0,
    ".reqnctapercluster": None,
    ".maxclusterrank": 1,
    ".blocksareclusters": 0,
}

# Opaque handle types of the legacy texture/surface API (removed in CUDA 12).
OPAQUE_TYPES = frozenset({".texref", ".surfref", ".samplerref"})

# Directives PTX defines that are either out of place where they were found or
# not supported at all; they get a clearer message than "unknown directive".
KNOWN_DIRECTIVES = frozenset(
    {
        ".version", ".target", ".address_size", ".file", ".section", ".loc", ".pragma",
        ".entry", ".func", ".reg", ".param", ".global", ".shared", ".const", ".local", ".tex",
        ".visible", ".weak", ".extern", ".common", ".align", ".ptr", ".attribute", ".noreturn",
        ".alias", ".callprototype", ".calltargets", ".branchtargets", ".sreg", ".abi_preserve",
        ".abi_preserve_control", *PERFORMANCE_DIRECTIVES,
    }
)
