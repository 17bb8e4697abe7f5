"""Resolution, bounds, alignment, loads and stores, generic addressing."""

import struct

import numpy as np
import pytest

from gpurace.sim.memory import (
    LOCAL_WINDOW,
    PARAM_BASE,
    SHARED_WINDOW,
    ErrorKind,
    Memory,
    Space,
)


def lanes(n, block_size=None):
    t = np.arange(n, dtype=np.int64)
    return t, t // (block_size or n)


def words(mem, alloc, dtype=np.uint32):
    return np.frombuffer(mem.read(alloc), dtype)


def test_bounds_at_the_exact_edges():
    mem = Memory(1, 8)
    buf = mem.allocate_global("buf", 12)
    t, b = lanes(6)
    addrs = buf.base + np.array([0, 8, 12, -4, 8, 100 + 12], dtype=np.int64)
    acc = mem.resolve(Space.GLOBAL, addrs.astype(np.uint64), t, b, 4)
    assert list(acc.error) == [0, 0, 1, 1, 0, 1]
    acc8 = mem.resolve(Space.GLOBAL, np.array([buf.base, buf.base + 8], np.uint64), t[:2], b[:2], 8)
    assert list(acc8.error) == [ErrorKind.OK, ErrorKind.OUT_OF_BOUNDS]  # the second straddles the end
    assert "straddling the end of `buf` (12 bytes)" in mem.describe_error(acc8, 1)
    assert "0 bytes past the end of `buf`" in mem.describe_error(acc, 2)


def test_out_of_bounds_and_misaligned_accesses_are_not_performed():
    mem = Memory(1, 4)
    buf = mem.allocate_global("buf", 16, init=np.arange(4, dtype=np.uint32) + 10)
    t, b = lanes(4)
    addrs = np.array([buf.base, buf.base + 2, buf.base + 16, 8], np.uint64)
    acc = mem.resolve(Space.GLOBAL, addrs, t, b, 4, write=True)
    assert list(acc.error) == [ErrorKind.OK, ErrorKind.MISALIGNED, ErrorKind.OUT_OF_BOUNDS, ErrorKind.OUT_OF_BOUNDS]
    assert list(mem.load(acc, 4)) == [10, 0, 0, 0]
    mem.store(acc, 4, np.array([1, 2, 3, 4]))
    assert list(words(mem, buf)) == [1, 11, 12, 13]
    assert mem.describe_error(acc, 1).startswith("misaligned 4-byte global access")
    assert "no allocation" not in mem.describe_error(acc, 2)


def test_red_zone_overflow_lands_in_no_allocation():
    mem = Memory(1, 1)
    a = mem.allocate_global("a", 64)
    bb = mem.allocate_global("b", 64)
    t, b = lanes(1)
    for off in range(64, bb.base - a.base, 4):
        acc = mem.resolve(Space.GLOBAL, np.array([a.base + off], np.uint64), t, b, 4)
        assert acc.error[0] == ErrorKind.OUT_OF_BOUNDS


def test_const_is_readable_everywhere_and_never_writable():
    mem = Memory(1, 3)
    c = mem.allocate_global("table", 8, const=True, init=struct.pack("<2I", 7, 9))
    t, b = lanes(3)
    addrs = np.array([c.base, c.base + 4, c.base], np.uint64)
    for space in (Space.CONST, Space.GLOBAL, Space.GENERIC):
        acc = mem.resolve(space, addrs, t, b, 4)
        assert acc.all_ok and list(acc.space) == [Space.CONST] * 3
        assert list(mem.load(acc, 4)) == [7, 9, 7]
    acc = mem.resolve(Space.GLOBAL, addrs, t, b, 4, write=True)
    assert list(acc.error) == [ErrorKind.WRITE_TO_CONST] * 3
    mem.store(acc, 4, np.array([1, 2, 3]))
    assert mem.atomic(acc, "add", "u32", np.ones(3)).tolist() == [0, 0, 0]
    assert mem.read(c) == struct.pack("<2I", 7, 9)
    assert "read-only const memory `table`" in mem.describe_error(acc, 0)


def test_params_are_read_through_symbols_and_generic_addresses():
    mem = Memory(1, 2)
    mem.set_params(struct.pack("<iIQ", -5, 3, 0xDEADBEEF12345678), {"a": 0, "n": 4, "p": 8})
    t, b = lanes(2)
    space, off = mem.symbol("p")
    acc = mem.resolve(space, np.array([off, off], np.uint64), t, b, 8)
    assert list(mem.load(acc, 8)) == [0xDEADBEEF12345678] * 2
    gen = mem.resolve(Space.GENERIC, np.array([PARAM_BASE, PARAM_BASE + 4], np.uint64), t, b, 4)
    assert list(mem.load(gen, 4)) == [2**32 - 5, 3]
    assert list(mem.resolve(Space.PARAM, np.array([16, 0], np.uint64), t, b, 4).error) == [ErrorKind.OUT_OF_BOUNDS, 0]
    w = mem.resolve(Space.PARAM, np.array([0, 4], np.uint64), t, b, 4, write=True)
    assert list(w.error) == [ErrorKind.WRITE_TO_CONST] * 2


def test_an_owned_address_array_is_kept_and_failed_lanes_leave_it_as_computed():
    # Param addresses are their own store indices: zeroing the index of a failed lane must not change the
    # address the report names, even when the Access keeps the caller's array instead of a copy.
    mem = Memory(1, 3)
    mem.set_params(struct.pack("<3I", 11, 22, 33), {"a": 0, "b": 4, "c": 8})
    t, b = lanes(3)
    addrs = np.array([8, 6, 20], np.uint64)
    acc = mem.resolve(Space.PARAM, addrs, t, b, 4, owned=True)
    assert acc.address is addrs
    assert list(acc.error) == [ErrorKind.OK, ErrorKind.MISALIGNED, ErrorKind.OUT_OF_BOUNDS]
    assert list(acc.index) == [8, 0, 0] and list(addrs) == [8, 6, 20]
    assert list(mem.load(acc, 4)) == [33, 0, 0]
    copied = mem.resolve(Space.PARAM, addrs, t, b, 4)
    assert copied.address is not addrs and list(copied.address) == [8, 6, 20]


def test_shared_memory_is_per_block():
    nblocks, bs = 3, 4
    mem = Memory(nblocks, bs)
    mem.define_shared([("x", 4, 4)])
    t, b = lanes(nblocks * bs, bs)
    first = t % bs == 0
    acc = mem.resolve(Space.SHARED, np.zeros(first.sum(), np.uint64), t[first], b[first], 4, write=True)
    mem.store(acc, 4, 100 + b[first])
    acc = mem.resolve(Space.SHARED, np.zeros(len(t), np.uint64), t, b, 4)
    assert list(mem.load(acc, 4)) == list(100 + b)
    assert len(set(acc.canonical.tolist())) == nblocks
    assert mem.shared_bytes(2) == struct.pack("<I", 102)
    assert mem.resolve(Space.SHARED, np.array([4], np.uint64), t[:1], b[:1], 4).error[0] == ErrorKind.OUT_OF_BOUNDS


def test_generic_accesses_through_the_windows_reach_own_block_and_thread():
    nblocks, bs = 2, 2
    mem = Memory(nblocks, bs, dynamic_shared_bytes=16)
    offs = mem.define_shared([("dyn_a", 0, 4), ("dyn_b", 0, 8)])
    mem.ensure_local(8)
    buf = mem.allocate_global("buf", 16)
    t, b = lanes(4, bs)
    # through the shared window with one extern name, read back through the other
    mem.store(mem.resolve(Space.GENERIC, np.uint64(SHARED_WINDOW + offs["dyn_a"]) + 4 * (t % 2).astype(np.uint64), t, b, 4, write=True), 4, t + 1)
    back = mem.resolve(Space.SHARED, np.full(4, offs["dyn_b"], np.uint64), t, b, 8)
    assert list(mem.load(back, 8)) == [(2 << 32) | 1, (2 << 32) | 1, (4 << 32) | 3, (4 << 32) | 3]
    # the local window is per thread
    mem.store(mem.resolve(Space.GENERIC, np.full(4, LOCAL_WINDOW + 4, np.uint64), t, b, 4, write=True), 4, 10 * t)
    assert list(mem.load(mem.resolve(Space.LOCAL, np.full(4, 4, np.uint64), t, b, 4), 4)) == [0, 10, 20, 30]
    # one generic batch mixing global, shared and local lanes
    addrs = np.array([buf.base + 4, SHARED_WINDOW + offs["dyn_a"], LOCAL_WINDOW + 4, buf.base + 8], np.uint64)
    acc = mem.resolve(Space.GENERIC, addrs, t, b, 4, write=True)
    assert list(acc.space) == [Space.GLOBAL, Space.SHARED, Space.LOCAL, Space.GLOBAL]
    mem.store(acc, 4, np.array([7, 8, 9, 6]))
    assert list(mem.load(mem.resolve(Space.GENERIC, addrs, t, b, 4), 4)) == [7, 8, 9, 6]
    assert list(words(mem, buf)) == [0, 7, 6, 0]


def test_null_and_unmapped_generic_addresses_are_out_of_bounds():
    mem = Memory(1, 2)
    t, b = lanes(2)
    acc = mem.resolve(Space.GENERIC, np.array([0, SHARED_WINDOW], np.uint64), t, b, 4)
    assert list(acc.error) == [ErrorKind.OUT_OF_BOUNDS] * 2  # no global allocation, no shared memory declared
    assert mem.describe_error(acc, 0).endswith("no allocation in this space")


def test_local_memory_grows_and_keeps_its_contents():
    mem = Memory(2, 2)
    t, b = lanes(4, 2)
    assert mem.resolve(Space.LOCAL, np.zeros(4, np.uint64), t, b, 4).error.all()
    mem.ensure_local(8)
    mem.store(mem.resolve(Space.LOCAL, np.full(4, 4, np.uint64), t, b, 4, write=True), 4, t + 1)
    assert mem.resolve(Space.LOCAL, np.full(4, 8, np.uint64), t, b, 4).error.all()
    mem.ensure_local(100)
    assert list(mem.load(mem.resolve(Space.LOCAL, np.full(4, 4, np.uint64), t, b, 4), 4)) == [1, 2, 3, 4]
    assert mem.resolve(Space.LOCAL, np.full(4, 96, np.uint64), t, b, 4).all_ok
    assert mem.resolve(Space.LOCAL, np.full(4, 100, np.uint64), t, b, 4).error.all()
    canon = mem.resolve(Space.LOCAL, np.full(4, 4, np.uint64), t, b, 4).canonical
    assert len(set(canon.tolist())) == 4


def test_vector_and_wide_loads_and_stores():
    mem = Memory(1, 2)
    buf = mem.allocate_global("buf", 64, init=np.arange(16, dtype=np.uint32))
    t, b = lanes(2)
    v4 = mem.resolve(Space.GLOBAL, np.array([buf.base, buf.base + 32], np.uint64), t, b, 16)
    assert mem.load(v4, 4, 4).tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    v2 = mem.resolve(Space.GLOBAL, np.array([buf.base + 16, buf.base + 48], np.uint64), t, b, 16)
    assert mem.load(v2, 8, 2).tolist() == [[4 | 5 << 32, 6 | 7 << 32], [12 | 13 << 32, 14 | 15 << 32]]
    v2h = mem.resolve(Space.GLOBAL, np.array([buf.base + 4, buf.base + 60], np.uint64), t, b, 4)
    assert mem.load(v2h, 2, 2).tolist() == [[1, 0], [15, 0]]
    wide = mem.load(v4, 16)
    assert wide.shape == (2, 2) and wide[0].tolist() == [0 | 1 << 32, 2 | 3 << 32]
    mem.store(v4, 4, np.array([[40, 41, 42, 43], [80, 81, 82, 83]]))
    assert list(words(mem, buf)) == [40, 41, 42, 43, 4, 5, 6, 7, 80, 81, 82, 83, 12, 13, 14, 15]
    mem.store(v4, 16, np.array([[1, 2], [3, 4]], np.uint64))
    assert list(words(mem, buf, np.uint64)) == [1, 2, 4 | 5 << 32, 6 | 7 << 32, 3, 4, 12 | 13 << 32, 14 | 15 << 32]
    # a vector access must be aligned to its whole size
    mis = mem.resolve(Space.GLOBAL, np.array([buf.base + 8], np.uint64), t[:1], b[:1], 16)
    assert mis.error[0] == ErrorKind.MISALIGNED


def test_stores_to_one_address_keep_the_last_lane():
    mem = Memory(1, 8)
    buf = mem.allocate_global("buf", 16)
    t, b = lanes(8)
    for pattern in ([0, 0, 0, 0, 1, 1, 1, 1], [3, 1, 3, 0, 1, 2, 0, 3], [3, 3, 2, 2, 1, 1, 0, 0]):
        idx = np.array(pattern)
        acc = mem.resolve(Space.GLOBAL, (buf.base + 4 * idx).astype(np.uint64), t, b, 4, write=True)
        mem.store(acc, 4, 100 + t)
        expect = [0, 0, 0, 0]
        for lane, i in enumerate(pattern):
            expect[i] = 100 + lane
        got = words(mem, buf)
        for i in set(pattern):
            assert got[i] == expect[i]
    acc = mem.resolve(Space.GLOBAL, np.full(8, buf.base, np.uint64), t, b, 16, write=True)
    mem.store(acc, 4, np.arange(32).reshape(8, 4))
    assert list(words(mem, buf)) == [28, 29, 30, 31]


def test_unsupported_sizes_and_mismatched_widths_are_rejected():
    mem = Memory(1, 1)
    buf = mem.allocate_global("buf", 16)
    t, b = lanes(1)
    with pytest.raises(ValueError):
        mem.resolve(Space.GLOBAL, np.array([buf.base], np.uint64), t, b, 12)
    acc = mem.resolve(Space.GLOBAL, np.array([buf.base], np.uint64), t, b, 8)
    with pytest.raises(ValueError):
        mem.load(acc, 4)
