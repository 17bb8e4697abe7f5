"""Cube map fetches (`sim.texture_ops.cube_face`): the face a direction selects and the face coordinates, by the
CUDA Programming Guide's cube map fetch table (face: major axis, sc, tc)."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.sim.texture_ops import cube_face

# (direction, face, s, t): for the direction (m * major axis + a * first + b * second) the table gives
# s = (sc / |m| + 1) / 2 and t = (tc / |m| + 1) / 2.
CASES = [
    ((2.0, 0.5, -1.0), 0, 0.75, 0.375),  # +x: sc = -z, tc = -y
    ((-2.0, 0.5, -1.0), 1, 0.25, 0.375),  # -x: sc = z, tc = -y
    ((0.5, 2.0, -1.0), 2, 0.625, 0.25),  # +y: sc = x, tc = z
    ((0.5, -2.0, -1.0), 3, 0.625, 0.75),  # -y: sc = x, tc = -z
    ((0.5, -1.0, 2.0), 4, 0.625, 0.75),  # +z: sc = x, tc = -y
    ((0.5, -1.0, -2.0), 5, 0.375, 0.75),  # -z: sc = -x, tc = -y
]


@pytest.mark.parametrize("direction, face, s, t", CASES)
def test_each_face_and_its_coordinates(direction, face, s, t):
    faces, ss, ts = cube_face(*(np.array([c], dtype=np.float32) for c in direction))
    assert (int(faces[0]), float(ss[0]), float(ts[0])) == (face, s, t)


def test_a_tie_goes_to_x_then_y():
    faces, _, _ = cube_face(*(np.array(v, dtype=np.float32) for v in ([1, 0, 0], [1, 1, 1], [0, 1, 1])))
    assert faces.tolist() == [0, 2, 2]


def test_the_faces_of_many_lanes_at_once():
    rng = np.random.default_rng(7)
    x, y, z = (rng.uniform(-1, 1, 1000).astype(np.float32) for _ in range(3))
    faces, s, t = cube_face(x, y, z)
    major = np.argmax(np.abs(np.stack([x, y, z])), axis=0)
    assert (faces // 2 == major).all()
    assert ((s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)).all()
