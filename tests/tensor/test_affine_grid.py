"""ferrum.grid.affine_grid_2d: Burn 0.20.1's own expected grids, PyTorch's ``affine_grid`` and
``grid_sample`` (align_corners=True, fixtures of scripts/make_affine_grid_fixtures.py), a hand-made
exact 90-degree rotation, gradients against finite differences and the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, KindError, ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.grid import affine_grid_2d

from tests.support.burn_port import assert_eq
from tests.support.gradcheck import case, check_case

Array = npt.NDArray[Any]
DEVICE = NdArray.device()
FIXTURES = np.load(Path(__file__).resolve().parent.parent / "fixtures" / "tensor" / "affine_grid.npz")
CASES = sorted({key.split(".")[0] for key in FIXTURES.files})


def floats(a: Array, dtype: DType = DType.F32) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.ascontiguousarray(a), DEVICE, dtype=dtype)


# Burn 0.20.1, crates/burn-backend-tests/tests/tensor/float/grid/affine_grid.rs


def test_burn_affine_grid_identity() -> None:
    identity = Tensor.from_floats([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], DEVICE)
    out = affine_grid_2d(identity, (1, 1, 2, 2))
    assert_eq(out, [[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]])


def test_burn_affine_grid_scaling() -> None:
    out = affine_grid_2d(Tensor.from_floats([[[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]], DEVICE), (1, 1, 2, 2))
    assert_eq(out, [[[[-2.0, -2.0], [2.0, -2.0]], [[-2.0, 2.0], [2.0, 2.0]]]])


def test_burn_affine_grid_translation() -> None:
    out = affine_grid_2d(Tensor.from_floats([[[1.0, 0.0, 0.5], [0.0, 1.0, -0.5]]], DEVICE), (1, 1, 2, 2))
    assert_eq(out, [[[[-0.5, -1.5], [1.5, -1.5]], [[-0.5, 0.5], [1.5, 0.5]]]])


# PyTorch


@pytest.mark.parametrize("name", CASES)
def test_grid_matches_torch_affine_grid(name: str) -> None:
    theta, image = FIXTURES[f"{name}.theta"], FIXTURES[f"{name}.image"]
    grid = affine_grid_2d(floats(theta), image.shape)
    assert grid.shape() == FIXTURES[f"{name}.grid"].shape
    np.testing.assert_allclose(grid.to_numpy(), FIXTURES[f"{name}.grid"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("name", CASES)
def test_warp_through_grid_sample_matches_torch(name: str, padding: Any) -> None:
    theta, image = FIXTURES[f"{name}.theta"], FIXTURES[f"{name}.image"]
    grid = affine_grid_2d(floats(theta), image.shape)
    warped = floats(image).grid_sample_2d(grid, "bilinear", padding, align_corners=True)
    np.testing.assert_allclose(warped.to_numpy(), FIXTURES[f"{name}.{padding}"], rtol=1e-5, atol=1e-5)


def test_grid_matches_a_numpy_reference_in_f64() -> None:
    rng = np.random.default_rng(7)
    theta = rng.normal(size=(3, 2, 3))
    n, h, w = 3, 4, 5
    xs, ys = np.linspace(-1.0, 1.0, w), np.linspace(-1.0, 1.0, h)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), axis=-1)  # [h, w, 3]
    expected = np.einsum("hwk,nck->nhwc", base, theta)
    got = affine_grid_2d(floats(theta, DType.F64), (n, 2, h, w))
    assert got.dtype == DType.F64
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-12, atol=1e-14)


def test_quarter_turn_rotates_the_pixels_exactly() -> None:
    # A 90-degree turn maps every output pixel centre onto an input pixel centre:
    # out(x, y) = in(-y, x), which is np.rot90 of each channel.
    image = np.arange(2 * 25, dtype=np.float32).reshape(1, 2, 5, 5)
    quarter = floats(np.array([[[0.0, -1.0, 0.0], [1.0, 0.0, 0.0]]], dtype=np.float32))
    grid = affine_grid_2d(quarter, image.shape)
    warped = floats(image).grid_sample_2d(grid, align_corners=True).to_numpy()
    np.testing.assert_allclose(warped, np.rot90(image, k=1, axes=(2, 3)), atol=1e-4)


def test_one_transform_serves_the_whole_batch() -> None:
    theta = np.array([[[0.9, 0.1, 0.2], [-0.3, 1.1, 0.0]]], dtype=np.float32)
    one = affine_grid_2d(floats(theta), (1, 1, 3, 4)).to_numpy()
    three = affine_grid_2d(floats(theta), (3, 1, 3, 4)).to_numpy()
    assert three.shape == (3, 3, 4, 2)
    for b in range(3):
        np.testing.assert_array_equal(three[b], one[0])


def test_gradient_flows_to_the_transform() -> None:
    theta = np.array([[[0.8, -0.4, 0.1], [0.3, 1.2, -0.2]], [[1.0, 0.2, 0.0], [0.1, 0.9, 0.3]]])
    grid = case("affine_grid_2d", lambda t: affine_grid_2d(t, (2, 1, 3, 4)), theta, layouts=("contiguous",))
    check_case(grid)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_gradient_through_the_warp(padding: Any) -> None:
    # A transform whose grid points fall strictly inside cells, where the warp is smooth in theta.
    theta = np.array([[[0.9, 0.1, 0.13], [-0.2, 1.05, 0.07]]])
    image = np.random.default_rng(3).normal(size=(1, 2, 4, 5))

    def warp(t: Tensor[Any, Any, Any], img: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return img.grid_sample_2d(affine_grid_2d(t, (1, 2, 4, 5)), "bilinear", padding, align_corners=True)

    check_case(case(f"warp-{padding}", warp, theta, image, wrt=(0,), layouts=("contiguous",)))


def test_bad_inputs_raise() -> None:
    theta = Tensor.from_floats([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], DEVICE)
    with pytest.raises(ShapeError, match=r"expected a transform of shape \[2, 2, 3\].*found \[1, 3, 3\]"):
        affine_grid_2d(Tensor.zeros((1, 3, 3), DEVICE), (2, 1, 4, 4))
    with pytest.raises(ShapeError, match=r"expected a transform of shape \[3, 2, 3\].*found \[2, 2, 3\]"):
        affine_grid_2d(Tensor.zeros((2, 2, 3), DEVICE), (3, 1, 4, 4))
    with pytest.raises(ShapeError, match="dims must be four sizes"):
        affine_grid_2d(theta, (1, 4, 4))
    with pytest.raises(ShapeError, match="dims must be four sizes"):
        affine_grid_2d(theta, (1, 1, -4, 4))
    with pytest.raises(ShapeError, match="height and width must be at least 1, found 0 and 4"):
        affine_grid_2d(theta, (1, 1, 0, 4))
    with pytest.raises(KindError, match="expected a Float transform, found kind Int"):
        affine_grid_2d(Tensor.zeros((1, 2, 3), DEVICE).int(), (1, 1, 2, 2))  # type: ignore[arg-type]
