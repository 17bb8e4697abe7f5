"""Tensor maps as `cuTensorMapEncodeTiled` makes them under exec (`sim.tensor_maps.encode_tiled`), and as a kernel's
`tensormap.replace` edits them (`replace_field`)."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.sim.tensor_maps import (
    CUDA_ERROR_INVALID_VALUE,
    TYPES,
    ZERO_MAP,
    TensorMap,
    encode_tiled,
    enumerated_field,
    replace_field,
)

F32 = 7  # CU_TENSOR_MAP_DATA_TYPE_FLOAT32


def tiled(**changes):
    args = dict(
        data_type=F32, address=0x1000, dims=(100, 40), strides=(448,), box=(32, 16), element_strides=(1, 1),
        interleave=0, swizzle=0, oob_fill=0,
    )  # fmt: skip
    return encode_tiled(**{**args, **changes})


def test_a_padded_tensor_is_read_with_its_own_row_stride():
    tmap = TensorMap.decode(tiled(), "map")
    assert (tmap.dims, tmap.box, tmap.byte_strides()) == ((100, 40), (32, 16), (4, 448))
    addrs, inside = tmap.elements(np.array([[98, 39]]))
    assert int(addrs[0, 0]) == 0x1000 + 39 * 448 + 98 * 4  # the box's first element
    assert inside[0, :2].tolist() == [True, True] and not inside[0, 2]  # column 100 is past the extent


def test_a_dense_map_made_for_check_has_the_strides_its_extents_give():
    tmap = TensorMap.decode(TensorMap(0x2000, 2, 8, (64, 8, 3), (16, 4, 1)).encode(), "map")
    assert tmap.byte_strides() == (2, 128, 1024)


@pytest.mark.parametrize(
    "change",
    [
        dict(address=0x1008),  # not 16-byte aligned
        dict(strides=(440,)),  # not a multiple of 16
        dict(box=(300, 16)),  # past 256
        dict(box=(2, 16)),  # an innermost row of 8 bytes
        dict(dims=(0, 40)),
        dict(element_strides=(9, 1)),
        dict(swizzle=2),  # a 64-byte swizzle with 128-byte box rows
        dict(swizzle=7),
    ],
)
def test_what_the_driver_refuses_fails_with_its_error(change):
    assert tiled(**change) == CUDA_ERROR_INVALID_VALUE


@pytest.mark.parametrize("data_type", [10, 11, 12])  # FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
def test_tf32_and_flush_to_zero_maps_copy_as_f32(data_type):
    assert TensorMap.decode(tiled(data_type=data_type), "map").esize == TensorMap.decode(tiled(), "map").esize == 4


@pytest.mark.parametrize(
    "change, field",
    [(dict(swizzle=4), "swizzle 4"), (dict(interleave=1), "interleave 1"), (dict(oob_fill=1), "oobFill 1"),
     (dict(element_strides=(2, 1)), "element strides"), (dict(data_type=13), "data type 13")],
)  # fmt: skip
def test_valid_maps_the_simulator_cannot_follow_are_refused_by_name(change, field):
    with pytest.raises(UserError, match=field):
        tiled(**change)


@pytest.mark.parametrize("swizzle, span", [(0, 0), (1, 32), (2, 64), (3, 128)])
def test_a_swizzled_map_keeps_its_span(swizzle, span):
    box = (span // 4 or 32, 16)
    assert TensorMap.decode(tiled(swizzle=swizzle, box=box), "map").swizzle == span


# ---------------------------------------------------------------- tensormap.replace's fields (`replace_field`)


def edited(field, value, ordinal=0, base=None):
    """The map `tiled()` makes (f32, extents 100x40, rows 448 bytes apart, box 32x16) after one field's edit."""
    data = np.frombuffer(base or tiled(), dtype=np.uint8).copy().reshape(1, 128)
    replace_field(data, field, ordinal, np.array([value], dtype=np.uint64), "edit")
    return data[0].tobytes()


def test_the_global_address_and_the_per_dimension_fields_land_in_their_slots():
    tmap = TensorMap.decode(edited("global_address", 0x7F000), "map")
    assert tmap.address == 0x7F000 and tmap.dims == (100, 40)
    assert TensorMap.decode(edited("global_dim", 56, 0), "map").dims == (56, 40)
    assert TensorMap.decode(edited("global_dim", 7, 1), "map").dims == (100, 7)
    assert TensorMap.decode(edited("box_dim", 8, 1), "map").box == (32, 8)
    # the stride of ordinal 0 is dimension 1's: the innermost dimension's is the element size
    assert TensorMap.decode(edited("global_stride", 256, 0), "map").byte_strides() == (4, 256)


def test_the_rank_field_holds_the_rank_minus_one_and_the_new_dimension_its_slots():
    data = tiled()
    for field, value in (("global_dim", 3), ("box_dim", 2), ("global_stride", 40 * 448), ("element_stride", 1)):
        data = edited(field, value, 2 if field != "global_stride" else 1, data)
    tmap = TensorMap.decode(edited("rank", 2, 0, data), "map")
    assert (tmap.rank, tmap.dims, tmap.box, tmap.byte_strides()) == (3, (100, 40, 3), (32, 16, 2), (4, 448, 17920))


@pytest.mark.parametrize(
    "code, name", [(0, "u8"), (3, "i32"), (6, "f16"), (7, "f32"), (8, "f32.ftz"), (9, "f64"), (10, "bf16"), (12, "tf32.ftz")]
)
def test_element_types_take_the_ptx_isa_codes_not_the_drivers(code, name):
    tmap = TensorMap.decode(edited("elemtype", code), "map")
    assert (tmap.esize, tmap.code) == TYPES[name]


@pytest.mark.parametrize("code, span", [(0, 0), (1, 32), (2, 64), (3, 128)])
def test_swizzle_modes_are_spans(code, span):
    base = tiled(box=(8, 16))  # 32-byte rows fit every span
    assert TensorMap.decode(edited("swizzle_mode", code, base=base), "map").swizzle == span


@pytest.mark.parametrize(
    "field, value, message",
    [("elemtype", 13, "packed"), ("elemtype", 16, "not a elemtype"), ("swizzle_mode", 4, "96-byte"),
     ("interleave_layout", 1, "interleave 1"), ("fill_mode", 1, "oobFill 1"), ("fill_mode", 2, "not a fill_mode")],
)  # fmt: skip
def test_enumerated_values_outside_the_table_or_not_followed_are_refused_by_name(field, value, message):
    with pytest.raises(UserError, match=message):
        enumerated_field(field, value, "edit")


@pytest.mark.parametrize(
    "field, value, ordinal, message",
    [("box_dim", 300, 0, "box extent"), ("global_stride", 440, 0, "multiple of 16"), ("global_dim", 0, 1, "extent is 0"),
     ("elemtype", 0, 0, r"innermost row \(8 x 1 bytes\)"), ("global_address", 0x1008, 0, "16-byte aligned")],
)  # fmt: skip
def test_a_map_its_edits_left_invalid_is_refused_when_used(field, value, ordinal, message):
    base = tiled(box=(8, 16)) if field == "elemtype" else None  # rows of 8 elements: 32 bytes of f32, 8 of u8
    data = edited(field, value, ordinal, base)
    with pytest.raises(UserError, match=message):
        TensorMap.decode(data, "map")


def test_element_strides_past_8_cannot_be_written_and_other_than_1_are_refused_by_name():
    with pytest.raises(UserError, match="element stride of 9"):
        edited("element_stride", 9)
    with pytest.raises(UserError, match="element strides other than 1"):
        TensorMap.decode(edited("element_stride", 2, 1), "map")


def test_an_object_not_in_the_simulators_layout_is_refused():
    with pytest.raises(UserError, match="not a tensor map gpurace made"):
        TensorMap.decode(bytes(128), "map")


def test_zeroed_bytes_are_the_map_of_zero_fields_and_filling_every_field_makes_a_valid_one():
    data = ZERO_MAP
    with pytest.raises(UserError, match="not a valid tensor map"):
        TensorMap.decode(data, "map")
    for field, value, ordinal in (("global_address", 0x7F000, 0), ("rank", 1, 0), ("global_dim", 100, 0),
                                  ("global_dim", 40, 1), ("global_stride", 400, 0), ("box_dim", 32, 0),
                                  ("box_dim", 16, 1), ("element_stride", 1, 0), ("element_stride", 1, 1),
                                  ("elemtype", 7, 0)):  # fmt: skip
        data = edited(field, value, ordinal, data)
    assert TensorMap.decode(data, "map") == TensorMap(0x7F000, 4, TYPES["f32"][1], (100, 40), (32, 16), (400,))
