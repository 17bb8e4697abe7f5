"""Tensor maps as `cuTensorMapEncodeTiled` makes them under exec (`sim.tensor_maps.encode_tiled`)."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.sim.tensor_maps import CUDA_ERROR_INVALID_VALUE, TensorMap, encode_tiled

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
