"""Address layout, allocations, symbols, initializers, describe/nearest."""

import struct

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import AddressOf
from gpurace.sim.memory import (
    CONST_BASE,
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PARAM_BASE,
    REDZONE,
    SHARED_WINDOW,
    Memory,
    Space,
    from_generic,
    space_of,
    to_generic,
)
from gpurace.sim.memory.layout import AllocationTable


def test_global_allocations_are_aligned_and_separated_by_red_zones():
    mem = Memory(1, 32)
    sizes = [1, 100, 256, 4096, 3, 0, 17]
    allocs = [mem.allocate_global(f"buf{i}", n) for i, n in enumerate(sizes)]
    assert allocs[0].base == GLOBAL_BASE
    for prev, cur in zip(allocs, allocs[1:]):
        assert cur.base % 256 == 0
        assert cur.base - prev.end >= REDZONE
    assert [a.size for a in allocs] == sizes
    assert all(a.space is Space.GLOBAL for a in allocs)


def test_larger_alignment_is_honoured():
    mem = Memory(1, 1)
    mem.allocate_global("a", 10)
    b = mem.allocate_global("b", 10, align=4096)
    assert b.base % 4096 == 0


def test_const_allocations_live_in_their_own_region():
    mem = Memory(1, 1)
    g = mem.allocate_global("g", 64)
    c = mem.allocate_global("c", 64, const=True)
    assert c.space is Space.CONST and CONST_BASE <= c.base < GLOBAL_BASE
    assert mem.symbol("c") == (Space.CONST, c.base)
    assert mem.symbol("g") == (Space.GLOBAL, g.base)


def test_symbols_of_every_space_and_unknown_or_duplicate_names():
    mem = Memory(2, 4)
    mem.allocate_global("gv", 8)
    offsets = mem.define_shared([("s1", 4, 4), ("s2", 8, 8)])
    mem.set_params(bytes(16), {"p0": 0, "p1": 8})
    assert mem.symbol("s2") == (Space.SHARED, offsets["s2"]) and offsets["s2"] == 8
    assert mem.symbol("p1") == (Space.PARAM, 8)
    with pytest.raises(UserError, match="unknown symbol 'nope'"):
        mem.symbol("nope")
    with pytest.raises(UserError, match="defined twice"):
        mem.allocate_global("gv", 8)
    # argument buffers are not symbols and may share a name
    a1 = mem.allocate_global("out", 8, symbol=False)
    a2 = mem.allocate_global("out", 8, symbol=False)
    assert a1.base != a2.base


def test_generic_windows_and_cvta():
    addrs = np.array([0, SHARED_WINDOW + 12, LOCAL_WINDOW + 4, PARAM_BASE + 8, CONST_BASE + 256, GLOBAL_BASE + 4], np.uint64)
    assert list(space_of(addrs)) == [Space.GLOBAL, Space.SHARED, Space.LOCAL, Space.PARAM, Space.CONST, Space.GLOBAL]
    assert from_generic(Space.SHARED, addrs[1:2])[0] == 12
    assert from_generic(Space.LOCAL, addrs[2:3])[0] == 4
    assert to_generic(Space.SHARED, np.array([12]))[0] == addrs[1]
    assert to_generic(Space.GLOBAL, addrs[5:])[0] == addrs[5]
    assert from_generic(Space.CONST, addrs[4:5])[0] == addrs[4]
    assert list(Memory(1, 1).space_of(addrs)) == list(space_of(addrs))


def test_dynamic_shared_arrays_alias_after_the_static_variables():
    mem = Memory(2, 2, dynamic_shared_bytes=64)
    offs = mem.define_shared([("a", 6, 2), ("dyn_f", 0, 4), ("b", 8, 8), ("dyn_d", 0, 8)])
    assert offs["a"] == 0 and offs["b"] == 8
    assert offs["dyn_f"] == offs["dyn_d"] == 16
    assert mem.shared.size == 16 + 64
    with pytest.raises(RuntimeError):
        mem.define_shared([])


def test_write_initializer_ints_floats_bytes_and_addresses():
    mem = Memory(1, 1)
    target = mem.allocate_global("target", 32)
    mem.define_shared([("sh", 16, 16)])
    ints = mem.allocate_global("ints", 16)
    mem.write_initializer(ints, "s32", [1, -2, 0x7FFFFFFF])
    assert struct.unpack("<4i", mem.read(ints)) == (1, -2, 0x7FFFFFFF, 0)
    f32 = mem.allocate_global("f32", 8)
    mem.write_initializer(f32, "f32", [1.5, -0.25])
    assert struct.unpack("<2f", mem.read(f32)) == (1.5, -0.25)
    f64 = mem.allocate_global("f64", 8)
    mem.write_initializer(f64, "f64", [0.1])
    assert struct.unpack("<d", mem.read(f64)) == (0.1,)
    halves = mem.allocate_global("halves", 4)
    mem.write_initializer(halves, "f16", [1.0, -2.0])
    assert struct.unpack("<2e", mem.read(halves)) == (1.0, -2.0)
    bf = mem.allocate_global("bf", 2)
    mem.write_initializer(bf, "bf16", [1.0])
    assert mem.read(bf) == bytes([0x80, 0x3F])
    text = mem.allocate_global("text", 4)
    mem.write_initializer(text, "b8", list(b"hi!"))
    assert mem.read(text) == b"hi!\0"
    ptrs = mem.allocate_global("ptrs", 24)
    mem.write_initializer(ptrs, "u64", [AddressOf("target", 8), AddressOf("sh", 4, generic=True), AddressOf("sh", 4)])
    assert struct.unpack("<3Q", mem.read(ptrs)) == (target.base + 8, SHARED_WINDOW + 4, 4)
    with pytest.raises(UserError, match="initializer"):
        mem.write_initializer(text, "u32", [1, 2])


def test_describe_maps_canonical_addresses_back_to_allocations():
    mem = Memory(2, 2, dynamic_shared_bytes=32)
    out = mem.allocate_global("out", 1024, symbol=False)
    tab = mem.allocate_global("tab", 64, const=True)
    mem.define_shared([("tile", 16, 4), ("dyn", 0, 16)])
    mem.set_params(bytes(16), {"n": 0, "ptr": 8})
    mem.ensure_local(16)
    t = np.array([0, 3])
    g = mem.resolve(Space.GLOBAL, np.array([out.base + 12, tab.base + 4]), t, t // 2, 4)
    assert mem.describe(g.canonical[0]) == (Space.GLOBAL, "out", 12)
    assert mem.describe(g.canonical[1]) == (Space.CONST, "tab", 4)
    s = mem.resolve(Space.SHARED, np.array([8, 20]), t, t // 2, 4)
    assert mem.describe(s.canonical[0]) == (Space.SHARED, "tile", 8)
    assert mem.describe(s.canonical[1]) == (Space.SHARED, "dyn", 4)
    assert mem.owner_of(s.canonical[1]) == 1
    loc = mem.resolve(Space.LOCAL, np.array([4, 8]), t, t // 2, 4)
    assert mem.describe(loc.canonical[1]) == (Space.LOCAL, "local memory", 8)
    assert mem.owner_of(loc.canonical[1]) == 3
    p = mem.resolve(Space.PARAM, np.array([0, 12]), t, t // 2, 4)
    assert mem.describe(p.canonical[1]) == (Space.PARAM, "ptr", 4)


def test_nearest_measures_distance_to_the_closest_allocation():
    mem = Memory(1, 1)
    out = mem.allocate_global("out", 1024)
    mem.allocate_global("other", 16)
    near = mem.nearest(out.base + 1028)
    assert near.name == "out" and near.distance == 4
    assert near.text() == "4 bytes past the end of `out` (1024 bytes)"
    before = mem.nearest(out.base - 8)
    assert before.name == "out" and before.distance == -8
    assert before.text() == "8 bytes before the start of `out` (1024 bytes)"
    inside = mem.nearest(out.base + 1020)
    assert inside.straddles and inside.text().startswith("straddling the end of `out`")
    mem.define_shared([("tile", 64, 4)])
    assert mem.nearest(SHARED_WINDOW + 68).text() == "4 bytes past the end of `tile` (64 bytes)"
    assert mem.nearest(72, Space.SHARED).distance == 8
    assert Memory(1, 1).nearest(GLOBAL_BASE) is None


def test_reserved_address_space_holds_only_what_is_inserted_into_it():
    table = AllocationTable(GLOBAL_BASE, GLOBAL_BASE + (1 << 30), Space.GLOBAL)
    before = table.place("before", 100, 256)
    base = table.reserve(2 << 20, 1 << 20)
    after = table.place("after", 100, 256)
    assert base % (1 << 20) == 0 and base >= before.end + REDZONE and after.base >= base + (2 << 20) + REDZONE
    addresses = np.array([base, base + (1 << 20)], dtype=np.uint64)
    assert not table.contains(addresses, 4).any()
    low = table.insert("low", base, 1 << 20)
    high = table.insert("high", base + (1 << 20), 1 << 20)
    assert [a.name for a in table.allocations] == ["before", "low", "high", "after"]
    assert table.contains(addresses, 4).all() and table.find(base + (1 << 20)) is high
    assert table.contiguous_end(low) == high.end and table.contiguous_end(high) == high.end
    table.remove(high)
    assert table.find(base + (1 << 20)) is None and table.contiguous_end(low) == low.end
    assert list(table.contains(addresses, 4)) == [True, False]
