"""Binding size variables from input shapes (`lift.ir.binding.bind_sizes`): a length affine in one variable
(`2*N`, `N+2`, `N/4`) binds it, and a shape no value fits is one error naming the input."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lift import ArrayType, Float, SizeVar
from lift.errors import LiftSizeError
from lift.ir.binding import bind_sizes

N = SizeVar("N")


@given(st.integers(1, 10_000), st.sampled_from([(2, 0), (3, 2), (1, 5), (8, 1)]))
def test_an_affine_length_binds_its_variable(n, ab):
    a, b = ab
    assert bind_sizes([ArrayType(Float, a * N + b)], [np.zeros(a * n + b)], ["x"]) == {"N": n}


@given(st.integers(1, 1000))
def test_a_quotient_binds_its_variable(n):
    assert bind_sizes([ArrayType(Float, N / 4)], [np.zeros(n)], ["x"]) == {"N": 4 * n}


def test_a_later_input_binding_the_variable_checks_the_earlier_one():
    with pytest.raises(LiftSizeError, match=r"input x should be Float\[2\*N\] with 2\*N = 10"):
        bind_sizes([ArrayType(Float, 2 * N), ArrayType(Float, N)], [np.zeros(9), np.zeros(5)], ["x", "y"])


def test_a_length_no_value_gives_names_the_input():
    with pytest.raises(LiftSizeError, match=r"input x should be Float\[2\*N\]: no N gives 2\*N = 9"):
        bind_sizes([ArrayType(Float, 2 * N)], [np.zeros(9)], ["x"])
