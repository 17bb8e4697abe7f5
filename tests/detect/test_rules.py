"""The race rules of the PTX memory model, on small arrays of access pairs."""

import numpy as np
import pytest

from gpurace.detect.findings import ERROR, WARNING
from gpurace.detect.rules import (
    NO_SCOPE,
    AccessFlags,
    Cause,
    batch_flags,
    cause_message,
    classify,
    conflicts,
    fence_blind,
    morally_strong,
    overlaps,
    scope_covers,
    scoped_op_name,
    severity_of,
)
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind

CTA, CLUSTER, GPU, SYS = (SCOPE_RANK[s] for s in ("cta", "cluster", "gpu", "sys"))


def plain(write=True):
    return AccessFlags.of(write, False, False, NO_SCOPE)


def atomic(scope=GPU, write=True):
    return AccessFlags.of(write, True, False, scope)


def volatile(write=True):
    return AccessFlags.of(write, False, True, SYS)


# ---------------------------------------------------------------- conflicts


def test_overlap_is_byte_precise_at_both_edges():
    x = 1000
    # a 4-byte access at x against 1-byte accesses at x-1 .. x+4
    starts = np.array([x - 1, x, x + 1, x + 3, x + 4])
    got = overlaps(np.full(5, x), np.full(5, 4), starts, np.ones(5, dtype=np.int64))
    assert got.tolist() == [False, True, True, True, False]


def test_overlap_of_wide_accesses_that_straddle():
    got = overlaps([0, 0, 8], [8, 8, 8], [4, 8, 0], [8, 4, 16])
    assert got.tolist() == [True, False, True]


def test_conflict_needs_different_threads_and_a_write():
    starts = np.array([64, 64, 64, 64])
    sizes = np.full(4, 4)
    fa = AccessFlags.of([True, False, False, True], False, False, NO_SCOPE)
    fb = AccessFlags.of([False, False, True, True], False, False, NO_SCOPE)
    got = conflicts(starts, sizes, [1, 1, 1, 7], starts, sizes, [2, 2, 2, 7], fa, fb)
    assert got.tolist() == [True, False, True, False]


def test_conflict_write_and_byte_read_inside_but_not_after():
    fa, fb = plain(True), plain(False)
    assert conflicts(100, 4, 0, 101, 1, 1, fa, fb)
    assert not conflicts(100, 4, 0, 104, 1, 1, fa, fb)


def test_atomics_count_as_writes_for_conflicts():
    assert conflicts(0, 4, 0, 0, 4, 1, atomic(write=True), plain(False))


# ---------------------------------------------------------------- scopes and exemptions


def test_scope_coverage_by_block():
    scopes = np.array([CTA, CLUSTER, GPU, SYS, NO_SCOPE])
    assert scope_covers(scopes, np.ones(5, bool)).tolist() == [True, True, True, True, False]
    assert scope_covers(scopes, np.zeros(5, bool)).tolist() == [False, False, True, True, False]


def test_atomics_of_covering_scopes_are_morally_strong():
    assert morally_strong(atomic(GPU), atomic(GPU), False)
    assert morally_strong(atomic(CTA), atomic(CTA), True)
    assert morally_strong(atomic(CTA), atomic(SYS), True)


def test_cta_atomic_does_not_cover_another_block():
    assert not morally_strong(atomic(CTA), atomic(CTA), False)
    assert not morally_strong(atomic(GPU), atomic(CTA), False)
    assert not morally_strong(atomic(CLUSTER), atomic(GPU), False)


def test_plain_access_is_never_morally_strong():
    assert not morally_strong(atomic(GPU), plain(), True)
    assert not morally_strong(plain(), plain(), True)


@pytest.mark.parametrize("model,exempt", [("cuda", False), ("ptx", True), ("scord", False)])
def test_volatile_exemption_depends_on_the_model(model, exempt):
    assert bool(morally_strong(volatile(), volatile(), True, model)) is exempt
    assert bool(morally_strong(volatile(), atomic(GPU), False, model)) is exempt


def test_unknown_model_is_rejected():
    with pytest.raises(ValueError, match="unknown memory model"):
        morally_strong(plain(), plain(), True, "sc")


# ---------------------------------------------------------------- causes and severities


def test_plain_race_across_warps_has_no_synchronisation_cause():
    assert classify(plain(), plain(False), True, False) == Cause.UNSYNCHRONISED


def test_plain_race_inside_a_warp_names_independent_thread_scheduling():
    assert classify(plain(), plain(False), True, True) == Cause.INTRA_WARP


def test_atomic_against_plain():
    assert classify(atomic(GPU), plain(False), True, False) == Cause.ATOMIC_VS_PLAIN
    assert classify(plain(), atomic(CTA), False, False) == Cause.ATOMIC_VS_PLAIN
    # more specific than the intra-warp explanation
    assert classify(plain(), atomic(GPU), True, True) == Cause.ATOMIC_VS_PLAIN


def test_block_scoped_atomics_from_two_blocks_have_insufficient_scope():
    assert classify(atomic(CTA), atomic(CTA), False, False) == Cause.INSUFFICIENT_SCOPE
    assert classify(atomic(GPU), atomic(CLUSTER), False, False) == Cause.INSUFFICIENT_SCOPE
    assert classify(atomic(CTA), atomic(CTA), True, False) == Cause.NONE


def test_covering_atomics_are_not_races_in_any_model():
    for model in ("cuda", "ptx", "scord"):
        assert classify(atomic(GPU), atomic(SYS), False, False, model) == Cause.NONE


def test_volatile_pairs_are_warnings_under_cuda_only():
    assert classify(volatile(), volatile(False), True, True, "cuda") == Cause.VOLATILE_NOT_ATOMIC
    assert classify(volatile(), atomic(GPU), False, False, "cuda") == Cause.VOLATILE_NOT_ATOMIC
    assert classify(volatile(), volatile(False), True, True, "ptx") == Cause.NONE
    assert classify(volatile(), atomic(GPU), False, False, "ptx") == Cause.NONE


def test_volatile_pairs_miss_a_fence_under_scord():
    # ScoRD's Table IV: volatile accesses are data, only atomic pairs are exempt (condition d)
    assert classify(volatile(), volatile(False), False, False, "scord") == Cause.MISSING_FENCE
    assert classify(volatile(), atomic(GPU), True, False, "scord") == Cause.MISSING_FENCE
    assert classify(atomic(GPU), atomic(CTA), True, False, "scord") == Cause.NONE
    assert classify(volatile(), atomic(CTA), False, False, "scord") == Cause.INSUFFICIENT_SCOPE
    # lanes of one warp need __syncwarp, whatever the fences
    assert classify(volatile(), volatile(False), True, True, "scord") == Cause.INTRA_WARP
    assert severity_of(Cause.MISSING_FENCE) == ERROR and severity_of(Cause.NOT_STRONG) == ERROR


def test_only_scord_leaves_plain_pairs_to_barriers():
    fa = AccessFlags.of(True, [False, False, True, False], [False, True, False, False], [NO_SCOPE, SYS, GPU, NO_SCOPE])
    fb = AccessFlags.of(False, [False, False, True, True], [True, True, False, False], [SYS, SYS, GPU, GPU])
    assert fence_blind(fa, fb, "scord").tolist() == [True, False, False, True]
    for model in ("cuda", "ptx"):
        assert not fence_blind(fa, fb, model).any()


def test_volatile_against_cta_atomic_of_another_block_is_a_scope_error_in_every_model():
    for model in ("cuda", "ptx"):
        assert classify(volatile(), atomic(CTA), False, False, model) == Cause.INSUFFICIENT_SCOPE


def test_volatile_against_plain():
    assert classify(volatile(), plain(), True, False, "cuda") == Cause.UNSYNCHRONISED
    assert classify(volatile(), plain(), True, False, "ptx") == Cause.ATOMIC_VS_PLAIN


def test_classify_is_vectorised():
    fa = AccessFlags.of([True, True, True, True], [False, True, True, False], [False, False, False, True],
                        [NO_SCOPE, GPU, CTA, SYS])  # fmt: skip
    fb = AccessFlags.of([False, True, True, True], [False, True, True, False], [False, False, False, True],
                        [NO_SCOPE, GPU, CTA, SYS])  # fmt: skip
    got = classify(fa, fb, np.array([True, False, False, True]), np.array([False, False, False, True]))
    assert got.tolist() == [Cause.UNSYNCHRONISED, Cause.NONE, Cause.INSUFFICIENT_SCOPE, Cause.VOLATILE_NOT_ATOMIC]


def test_severities():
    assert severity_of(Cause.VOLATILE_NOT_ATOMIC) == WARNING
    for cause in (Cause.UNSYNCHRONISED, Cause.INTRA_WARP, Cause.INSUFFICIENT_SCOPE, Cause.ATOMIC_VS_PLAIN):
        assert severity_of(cause) == ERROR


def test_cause_messages():
    assert cause_message(Cause.UNSYNCHRONISED) == "no synchronisation between the two accesses"
    assert "without __syncwarp" in cause_message(Cause.INTRA_WARP)
    assert cause_message(Cause.VOLATILE_NOT_ATOMIC).startswith("volatile is not atomic: ")
    atomic_vs_plain = cause_message(Cause.ATOMIC_VS_PLAIN, where="k.cu:7")
    assert atomic_vs_plain == "an atomic access races with a plain access at k.cu:7"
    op, hint = scoped_op_name("atom", "cta", "add")
    text = cause_message(Cause.INSUFFICIENT_SCOPE, op=op, hint=hint, where="k.cu:9", block="(1,0,0)")
    assert text == (
        "insufficient scope: atom.cta (e.g. atomicAdd_block) at k.cu:9 only orders accesses within one block, "
        "but the other access comes from block (1,0,0)"
    )
    assert scoped_op_name("ld", "cta") == ("ld.cta", "")
    assert cause_message(Cause.INSUFFICIENT_SCOPE, op="ld.cta", hint="", where="k.cu:3", block=(2, 1, 0)).endswith(
        "block (2,1,0)"
    )


def _batch(kind, strong=False, scope=None, sem=None):
    one = np.zeros(1, dtype=np.int64)
    return AccessBatch(0, 0, kind, one, one.astype(np.uint64), 4, one, strong, scope, sem)


def test_batch_flags_follow_the_ptx_meaning_of_each_instruction():
    assert batch_flags(_batch(AccessKind.READ)) == (False, False, False, NO_SCOPE)
    assert batch_flags(_batch(AccessKind.WRITE)) == (True, False, False, NO_SCOPE)
    assert batch_flags(_batch(AccessKind.ATOMIC, True, "cta", "relaxed")) == (True, True, False, CTA)
    assert batch_flags(_batch(AccessKind.READ, True, "gpu", "acquire")) == (False, True, False, GPU)
    assert batch_flags(_batch(AccessKind.WRITE, True, "sys", "volatile")) == (True, False, True, SYS)
