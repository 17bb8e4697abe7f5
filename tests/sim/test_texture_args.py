"""`--arg tex:...` / `surf:...` (`sim.texture_args`): the objects they describe, kernels reading and writing
through them under check, and every malformed or CUDA-refused description refused with the argument named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpurace
from gpurace.errors import UserError
from gpurace.sim.texture_args import texture_arg
from gpurace.sim.textures import AddressMode, ChannelKind, FilterMode, ReadMode, SurfaceObject, TextureObject


def _arg(spec: str):
    made = []

    def make(count, dtype, init):
        made.append((count, np.dtype(dtype), init))
        return np.zeros(count, dtype=dtype)

    return texture_arg(spec, "t", "--arg", make), made


def test_2d_texture_with_options():
    arg, made = _arg("tex:f32x4:16x8:ones:wrap,linear,normalized-coords")
    assert made == [(16 * 8 * 4, np.dtype(np.float32), "ones")]
    res = arg.resource
    assert (res.kind, res.dims, res.width, res.height, res.pitch) == ("array", 2, 16, 8, 16 * 16)
    assert (res.format.kind, res.format.bits, res.format.channels) == (ChannelKind.FLOAT, 32, 4)
    s = arg.sampling
    assert s.address_modes == (AddressMode.WRAP,) * 3 and s.filter_mode is FilterMode.LINEAR and s.normalized
    obj = arg.object(0x4000)
    assert isinstance(obj, TextureObject) and obj.resource.base == 0x4000


def test_1d_defaults_and_array_option():
    arg, made = _arg("tex:u8:100")
    assert made == [(100, np.dtype(np.uint8), "zeros")]
    assert arg.resource.kind == "linear" and arg.resource.dims == 1
    s = arg.sampling
    assert s.address_modes == (AddressMode.CLAMP,) * 3 and s.filter_mode is FilterMode.POINT
    assert s.read_mode is ReadMode.ELEMENT_TYPE and not s.normalized
    arg, _ = _arg("tex:u8:100:rand:array,normalized-float,linear")
    assert arg.resource.kind == "array" and arg.resource.pitch == 100
    assert arg.sampling.read_mode is ReadMode.NORMALIZED_FLOAT


def test_surface_is_over_an_array():
    arg, made = _arg("surf:i16x2:8x4x2:iota")
    assert made == [(8 * 4 * 2 * 2, np.dtype(np.int16), "iota")]
    assert isinstance(arg.object(0), SurfaceObject)
    assert (arg.resource.kind, arg.resource.dims, arg.resource.depth, arg.resource.pitch) == ("array", 3, 2, 32)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("tex:f32", "tex:TYPE:SHAPE"),
        ("tex:f64:8", "64-bit channels"),
        ("tex:q32:8", "texel type 'q32'"),
        ("tex:f32x3:8", "1, 2 or 4 channels"),
        ("tex:f32:0x4", "SHAPE must be"),
        ("tex:f32:2x2x2x2", "SHAPE must be"),
        ("tex:u8:8:zeros:linear", "CUDA would refuse this texture object: linear filtering"),
        ("tex:f32:8:zeros:normalized-coords", "linear memory takes integer coordinates"),
        ("tex:f32:8:zeros:wrap,clamp", "at most one address mode"),
        ("tex:f32:8:bogus", "neither an INIT"),
        ("surf:f32:8:zeros:clamp", "neither an INIT"),
    ],
)
def test_malformed_and_refused(spec, message):
    with pytest.raises(UserError, match="--arg") as err:
        _arg(spec)
    assert message in str(err.value)


KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "textures"

TEX2D = r"""
__global__ void sample(cudaTextureObject_t t, float* out)
{
    int x = threadIdx.x;
    out[x] = tex2D<float>(t, x + 1.0f, 1.5f);  // halfway between texels x and x+1 of row 1
}
"""

FETCH = r"""
__global__ void scale(cudaTextureObject_t t, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * tex1Dfetch<float>(t, i);
}
"""


def test_linear_filtering_over_a_given_array(tmp_path):
    path = tmp_path / "sample.cu"
    path.write_text(TEX2D)
    out = np.zeros(8, dtype=np.float32)
    result = gpurace.run(str(path), grid=1, block=8, args=["tex:f32:16x4:iota:linear,clamp", out])
    assert result.clean
    row = np.arange(16, 32, dtype=np.float32)  # iota over the texels: row 1 holds 16..31
    assert np.array_equal(out, (row[:8] + row[1:9]) / 2)


def test_fetch_through_a_texture_argument():
    out = np.zeros(64, dtype=np.float32)
    result = gpurace.run(str(KERNELS / "texture_fetch_scale.cu"), grid=2, block=32, args=["tex:f32:64:iota", out, 64])
    assert result.clean
    assert np.array_equal(out, 2 * np.arange(64, dtype=np.float32))


@pytest.mark.parametrize("args, message", [(["tex:f32:8", "tex:f32:8", 8], "this parameter is float*"), (["tex:f32:8", np.zeros(8, np.float32), "tex:f32:8"], "this parameter is int")])
def test_texture_for_a_parameter_that_is_no_handle(tmp_path, args, message):
    path = tmp_path / "scale.cu"
    path.write_text(FETCH)
    with pytest.raises(UserError, match=message):
        gpurace.run(str(path), grid=1, block=8, args=args)


def test_missing_object_names_the_option(tmp_path):
    path = tmp_path / "scale.cu"
    path.write_text(FETCH)
    with pytest.raises(UserError, match=r"not a live texture object \(under check, pass one with --arg tex:TYPE:SHAPE"):
        gpurace.run(str(path), grid=1, block=8, args=["7", np.zeros(8, np.float32), 8])
