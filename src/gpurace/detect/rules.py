"""Which conflicting access pairs are races, and why: the PTX memory model's rules in one place.

Every race detector asks the same questions about a pair of accesses once it
has decided that nothing orders them: do they *conflict* (overlapping bytes,
different threads, at least one write), are they *morally strong* (then they
never race), and if they race, which cause and severity does the user read.
Answering them here, as functions over NumPy arrays of access pairs, keeps the
detectors consistent with each other and with DESIGN.md ("What counts as a
race"), and lets a detector classify thousands of pairs in one call.

Per-access facts are passed as `AccessFlags` (arrays of equal length, one entry
per access); pairs are two `AccessFlags` of the same length plus per-pair
arrays (`same_block`, `same_warp`).

Models (see DESIGN.md): under `cuda` (default) only atomic accesses (`atom`/
`red`, `ld`/`st` with `.relaxed/.acquire/.release`) are exempt from racing with
each other; `volatile` accesses are strong but not atomic, so their unordered
conflicts are reported with a warning. Under `ptx` a volatile access counts
as `.relaxed.sys` and takes part in the exemption. Under `scord` (ScoRD's
rules, its paper's Table IV) only atomics whose scopes cover both threads are
exempt (condition d); a volatile access is data like any other, which only a
fence of sufficient scope orders (conditions a-b: `MISSING_FENCE` when it is
not), and a pair with a plain access is ordered by nothing but barriers, warp
syncs and program order, since fences order only strong accesses (condition
c: `NOT_STRONG` when only a fence, flag or lock orders it; the detectors
decide that, as they decide ordering).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from gpurace.detect import scalar_paths
from gpurace.detect.findings import ERROR, WARNING
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind

NO_SCOPE = -1
"""Scope rank of a weak (plain) access."""

BLOCK_SCOPES = (SCOPE_RANK["cta"], SCOPE_RANK["cluster"])
"""Scopes narrower than the launch: `cta` covers the threads of the issuing block, `cluster` those of its
cluster (`sim.clusters`; a block of its own without a cluster launch)."""

ATOMIC_SEMANTICS = frozenset({"relaxed", "acquire", "release", "acq_rel"})


class Cause(IntEnum):
    """Why a pair of accesses races; `NONE` for pairs that do not race."""

    NONE = 0
    UNSYNCHRONISED = 1
    INTRA_WARP = 2
    INSUFFICIENT_SCOPE = 3
    ATOMIC_VS_PLAIN = 4
    VOLATILE_NOT_ATOMIC = 5
    MISSING_FENCE = 6
    NOT_STRONG = 7


CAUSE_TEXT: dict[Cause, str] = {
    Cause.UNSYNCHRONISED: "no synchronisation between the two accesses",
    Cause.INTRA_WARP: (
        "the two accesses are in the same warp: lanes are scheduled independently (Volta and later), "
        "so without __syncwarp they race"
    ),
    Cause.INSUFFICIENT_SCOPE: (
        "insufficient scope: {op}{hint} at {where} only orders accesses within one {within}, "
        "but the other access comes from block {block}"
    ),
    Cause.ATOMIC_VS_PLAIN: "an atomic access races with a plain access at {where}",
    Cause.VOLATILE_NOT_ATOMIC: (
        "volatile is not atomic: volatile accesses are strong but CUDA C++ does not make them atomic, "
        "so unordered conflicting volatile accesses race; use atomics, or order them with "
        "__syncwarp/__syncthreads"
    ),
    Cause.MISSING_FENCE: (
        "missing fence: under ScoRD's rules volatile accesses are data, and only an atomic pair is exempt; "
        "no fence whose scope covers both threads (before the flag write or the lock release) orders them"
    ),
    Cause.NOT_STRONG: (
        "not a strong access: under ScoRD's rules fences, flags and locks order only volatile and atomic "
        "accesses, and a plain access is ordered only by __syncthreads/__syncwarp"
    ),
}
"""The words users read, one template per cause; `cause_message` fills the fields."""

SEVERITY: dict[Cause, str] = {cause: ERROR for cause in CAUSE_TEXT}
SEVERITY[Cause.VOLATILE_NOT_ATOMIC] = WARNING


@dataclass(frozen=True)
class AccessFlags:
    """What the rules need to know about each access, as parallel arrays.

    `write` is true for stores and read-modify-writes; `atomic` for `atom`/
    `red` and for `ld`/`st` with `.relaxed/.acquire/.release` (a scope is
    implied: PTX's default); `volatile` for `ld`/`st.volatile`; `scope` is the
    `SCOPE_RANK` of the access (`NO_SCOPE` for weak accesses).
    """

    write: np.ndarray
    atomic: np.ndarray
    volatile: np.ndarray
    scope: np.ndarray

    @staticmethod
    def of(write, atomic, volatile, scope) -> AccessFlags:
        """Build from anything array-like (scalars broadcast against each other)."""
        w, a, v, s = np.broadcast_arrays(
            np.asarray(write, dtype=np.bool_),
            np.asarray(atomic, dtype=np.bool_),
            np.asarray(volatile, dtype=np.bool_),
            np.asarray(scope, dtype=np.int8),
        )
        return AccessFlags(w, a, v, s)

    def take(self, index: np.ndarray) -> AccessFlags:
        return AccessFlags(self.write[index], self.atomic[index], self.volatile[index], self.scope[index])


def batch_flags(batch: AccessBatch) -> tuple[bool, bool, bool, int]:
    """(write, atomic, volatile, scope rank) of every access of one event batch (they share one instruction)."""
    write = batch.kind in (AccessKind.WRITE, AccessKind.ATOMIC)
    atomic = batch.kind == AccessKind.ATOMIC or (batch.strong and batch.sem in ATOMIC_SEMANTICS)
    volatile = batch.sem == "volatile"
    scope = SCOPE_RANK[batch.scope] if batch.strong and batch.scope is not None else NO_SCOPE
    return write, atomic, volatile, scope


def overlaps(start_a, size_a, start_b, size_b) -> np.ndarray:
    """Whether the byte ranges [start, start+size) of each pair overlap (byte-precise)."""
    a = np.asarray(start_a, dtype=np.uint64)
    b = np.asarray(start_b, dtype=np.uint64)
    return (a < b + np.asarray(size_b, dtype=np.uint64)) & (b < a + np.asarray(size_a, dtype=np.uint64))


def conflicts(start_a, size_a, thread_a, start_b, size_b, thread_b, fa: AccessFlags, fb: AccessFlags) -> np.ndarray:
    """Conflicting pairs: overlapping bytes, different threads, and at least one write (atomics write)."""
    return (
        overlaps(start_a, size_a, start_b, size_b)
        & (np.asarray(thread_a) != np.asarray(thread_b))
        & (fa.write | fb.write)
    )


def model_strong(f: AccessFlags, model: str) -> np.ndarray:
    """Accesses that take part in the morally-strong exemption under `model`."""
    if model in ("cuda", "scord"):
        return f.atomic
    if model == "ptx":
        return f.atomic | f.volatile
    raise ValueError(f"unknown memory model {model!r}")


def scope_covers(scope: np.ndarray, same_block: np.ndarray, same_cluster=None) -> np.ndarray:
    """Whether an access of this scope covers the other thread (`cta`: same block; `cluster`: same cluster,
    `same_cluster`, which defaults to `same_block`; wider: the launch)."""
    same_cluster = same_block if same_cluster is None else same_cluster
    within = np.where(scope == SCOPE_RANK["cta"], same_block, np.where(scope == SCOPE_RANK["cluster"], same_cluster, True))
    return (scope != NO_SCOPE) & within


def morally_strong(fa: AccessFlags, fb: AccessFlags, same_block, model: str = "cuda", same_cluster=None) -> np.ndarray:
    """Pairs exempt from racing: both strong under `model` and each thread inside the other's scope."""
    same_block = np.asarray(same_block, dtype=np.bool_)
    return (
        model_strong(fa, model)
        & model_strong(fb, model)
        & scope_covers(fa.scope, same_block, same_cluster)
        & scope_covers(fb.scope, same_block, same_cluster)
    )


def classify(fa: AccessFlags, fb: AccessFlags, same_block, same_warp, model: str = "cuda", same_cluster=None) -> np.ndarray:
    """The `Cause` of each *unordered conflicting* pair (`Cause.NONE` where it is exempt), as an int8 array.

    The most specific cause wins: a scope that does not cover the other
    thread, then volatile-is-not-atomic (model `cuda`) or a missing fence
    (model `scord`), then atomic against plain, then lanes of one warp, else
    no synchronisation at all.

    A few pairs (`scalar_paths.MAX_LANES`, given as 1-d arrays) are looked up pair by pair in a memo of this same
    classification: the inputs of one pair take few distinct values, and the array path costs some twenty
    NumPy calls whatever the number of pairs.
    """
    pairs = [fa.write, fa.atomic, fa.volatile, fa.scope, fb.write, fb.atomic, fb.volatile, fb.scope, same_block, same_warp]
    if same_cluster is not None:
        pairs.append(same_cluster)
    n = len(fa.write) if isinstance(fa.write, np.ndarray) and fa.write.ndim == 1 else -1
    if 0 < n <= scalar_paths.MAX_LANES and all(isinstance(a, np.ndarray) and a.shape == (n,) for a in pairs):
        columns = [a.tolist() for a in pairs]
        if same_cluster is None:
            columns.append(columns[8])
        return np.array([_classify_pair(*key, model) for key in zip(*columns)], dtype=np.int8)
    return _classify_arrays(fa, fb, same_block, same_warp, model, same_cluster)


@functools.lru_cache(maxsize=4096)
def _classify_pair(wa, aa, va, sa, wb, ab, vb, sb, same_block, same_warp, same_cluster, model) -> int:
    """`classify` of one pair, by its values."""
    fa, fb = AccessFlags.of([wa], [aa], [va], [sa]), AccessFlags.of([wb], [ab], [vb], [sb])
    return int(_classify_arrays(fa, fb, np.array([same_block]), np.array([same_warp]), model, np.array([same_cluster]))[0])


def _classify_arrays(fa: AccessFlags, fb: AccessFlags, same_block, same_warp, model: str, same_cluster) -> np.ndarray:
    """`classify` over arrays of pairs."""
    same_block = np.asarray(same_block, dtype=np.bool_)
    same_warp = np.asarray(same_warp, dtype=np.bool_)
    atomic_a, atomic_b = model_strong(fa, model), model_strong(fb, model)
    # volatile is strong under every model: with atomics it forms strong pairs whose scope can fall short
    strong_a, strong_b = fa.atomic | fa.volatile, fb.atomic | fb.volatile
    covered = scope_covers(fa.scope, same_block, same_cluster) & scope_covers(fb.scope, same_block, same_cluster)
    exempt = atomic_a & atomic_b & covered
    shape = np.broadcast(exempt, same_warp).shape
    cause = np.full(shape, Cause.UNSYNCHRONISED, dtype=np.int8)
    cause[np.broadcast_to(same_warp, shape)] = Cause.INTRA_WARP
    cause[np.broadcast_to(atomic_a ^ atomic_b, shape)] = Cause.ATOMIC_VS_PLAIN
    volatile_pair = strong_a & strong_b & covered & (fa.volatile | fb.volatile)
    if model == "scord":
        # lanes of one warp need __syncwarp, not a fence: they keep the intra-warp cause
        volatile_pair = np.broadcast_to(volatile_pair, shape)
        cause[volatile_pair] = np.where(np.broadcast_to(same_warp, shape), Cause.INTRA_WARP, Cause.MISSING_FENCE)[volatile_pair]
    else:
        cause[np.broadcast_to(volatile_pair, shape)] = Cause.VOLATILE_NOT_ATOMIC
    cause[np.broadcast_to(strong_a & strong_b & ~covered, shape)] = Cause.INSUFFICIENT_SCOPE
    cause[np.broadcast_to(exempt, shape)] = Cause.NONE
    return cause


def fence_blind(fa: AccessFlags, fb: AccessFlags, model: str) -> np.ndarray:
    """Pairs that fences, flags and locks cannot order under `model`: under `scord`, those with a plain access
    (neither atomic nor volatile; ScoRD's Table IV, condition c), which only barriers, warp syncs and program
    order order; no pair under the other models."""
    weak = ~(fa.atomic | fa.volatile) | ~(fb.atomic | fb.volatile)
    return weak if model == "scord" else np.zeros_like(weak)


def severity_of(cause: Cause | int) -> str:
    """`warning` for volatile-is-not-atomic, `error` for every other race."""
    return SEVERITY[Cause(int(cause))]


def unacquired_severity(cause: Cause | int, strong_pair: bool, model: str) -> str:
    """The severity of a race that a fence after the consumer's flag read would order (the producer's release
    carries the earlier access; the consumer read the flag and never completed the acquire pattern).

    The PTX model calls it a race; ScoRD's rules, like the flag protocols people write, need no consumer
    fence. So `cuda` reports it as a warning when both accesses are strong (atomic or volatile: not served
    from a non-coherent cached copy, and issued only once the flag value they depend on has been read); a
    plain load behind an unfenced flag read may return a stale cached value, so a pair with a plain access
    keeps its cause's severity, as every pair does under `ptx` (the model to the letter) and `scord` (where
    only a lock's `atomicCAS` wants a fence, and the detectors never call this for one).
    """
    if model == "cuda" and strong_pair:
        return WARNING
    return severity_of(cause)


_ATOMIC_BUILTIN = {
    "add": "atomicAdd", "exch": "atomicExch", "cas": "atomicCAS", "min": "atomicMin", "max": "atomicMax",
    "inc": "atomicInc", "dec": "atomicDec", "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor",
}  # fmt: skip


def scoped_op_name(opcode: str, scope: str, atomic_op: str | None = None) -> tuple[str, str]:
    """("atom.cta", " (e.g. atomicAdd_block)") for the insufficient-scope message; no hint for ld/st."""
    op = f"{opcode}.{scope}"
    builtin = _ATOMIC_BUILTIN.get(atomic_op or "") if opcode in ("atom", "red") and scope == "cta" else None
    return op, (f" (e.g. {builtin}_block)" if builtin else "")


def cause_message(cause: Cause | int, **fields) -> str:
    """The text of a cause, its fields filled in.

    Fields: `op`, `hint`, `where` and `block` (insufficient scope; a block
    given as coordinates is written `(x,y,z)`), `where` (atomic vs plain).
    """
    template = CAUSE_TEXT[Cause(int(cause))]
    if "op" in fields:  # `.cluster` scope covers a cluster, `.cta` a block
        fields.setdefault("within", "cluster" if fields["op"].endswith(".cluster") else "block")
    if isinstance(fields.get("block"), tuple):
        fields["block"] = "({})".format(",".join(str(int(c)) for c in fields["block"]))
    return template.format(**fields) if fields else template
