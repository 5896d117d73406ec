"""Bit operators on Int values in user functions (`& | ^ << >> ~`): the OpenCL kernel and the interpreter's numpy
body compute OpenCL C's 32-bit results (a shift counting modulo 32, `>>` arithmetic, `<<` wrapping), for any ints."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lift
from lift import ArrayType, Float, Get, Int, LiftTypeError, Map, SizeVar, Zip, fun, userfun

from lift.opencl_gen.userfun_c import userfun_c_body

from opencl_device import needs_device

N = SizeVar("N")


@userfun
def bits(a: Int, b: Int) -> Int:
    s = a ^ (a << b)
    s ^= s >> (b + 3)
    return (s & ~b) | (a << 5)


BITS = fun([ArrayType(Int, N), ArrayType(Int, N)], lambda x, y: Map(lambda p: bits(Get(p, 0), Get(p, 1)))(Zip(x, y)))
_COMPILED = {}


def _reference(a, b):
    """The same in Python's unbounded ints, reduced to 32 bits as C's `int` wraps."""
    def wrap(v):
        return (v + (1 << 31)) % (1 << 32) - (1 << 31)
    a, b = int(a), int(b)
    s = a ^ wrap(a << (b & 31))
    s ^= s >> ((b + 3) & 31)
    return wrap((s & ~b) | wrap(a << 5))


_INTS = hnp.arrays(np.int32, 17, elements=st.integers(-(1 << 31), (1 << 31) - 1))


@needs_device
@settings(max_examples=25, deadline=None)
@given(_INTS, hnp.arrays(np.int32, 17, elements=st.integers(-40, 40)))
def test_bit_operators_compute_opencl_c_s_ints(a, b):
    if "bits" not in _COMPILED:
        _COMPILED["bits"] = lift.compile(BITS)
    want = np.array([_reference(x, y) for x, y in zip(a, b)], np.int32)
    np.testing.assert_array_equal(lift.interpret(BITS, a, b), want)
    np.testing.assert_array_equal(_COMPILED["bits"](a, b), want)


def test_constant_operands_fold_to_32_bit_ints():
    @userfun
    def mask(a: Int) -> Int:
        return a & ((1 << 31) >> 4) | (7 ^ 2)

    assert userfun_c_body(mask) == "return a & -134217728 | 5;", userfun_c_body(mask)
    a = np.array([-1, 0, 123456789], np.int32)
    np.testing.assert_array_equal(lift.interpret(fun([ArrayType(Int, N)], lambda x: Map(mask)(x)), a),
                                  (a & np.int32(-134217728)) | 5)


def test_bit_operators_on_floats_are_refused():
    with pytest.raises(LiftTypeError, match=r"`\^` needs Int values, not a value of type Float"):
        @userfun
        def xor(a: Float, b: Int) -> Int:
            return a ^ b
    with pytest.raises(LiftTypeError, match="`~` needs an Int value"):
        @userfun
        def invert(a: Float) -> Float:
            return ~a
