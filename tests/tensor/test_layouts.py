"""The tensor helpers themselves (tests/support/tensors.py): every layout holds the array's values,
and all but "contiguous" are strided views in ferrum."""

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    ALL_DTYPES,
    LAYOUTS,
    arrays,
    dtypes,
    layouts,
    shapes,
    shapes_with_zero,
    tensor,
)


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(ALL_DTYPES), shapes_with_zero(), layouts())
def test_layout_holds_values(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = tensor(a, layout)
    assert t.shape() == a.shape
    np.testing.assert_array_equal(t.to_numpy(), a)
    np.testing.assert_array_equal(np.asarray(t.to_data().to_list()).reshape(a.shape), a)


@settings(max_examples=25, deadline=None)
@given(st.data(), shapes(min_rank=2, min_side=2), st.sampled_from([x for x in LAYOUTS if x != "contiguous"]))
def test_strided_layouts_are_not_contiguous(data: st.DataObject, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays("f32", shape))
    t = tensor(a, layout)
    assert not t.is_contiguous()
    assert tensor(a).is_contiguous()
