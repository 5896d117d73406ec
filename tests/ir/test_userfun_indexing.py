"""Multi-dimensional indexing `a[i][j]` of array parameters in Python user functions: the interpreter
indexes the numpy array, the kernel its flat buffer (rows of constant length)."""

import numpy as np
import pytest

from lift import ArrayType, Float, Int, LiftTypeError, MapGlb, SizeVar, compile, fun, interpret, userfun

N, M = SizeVar("N"), SizeVar("M")
Table = ArrayType(ArrayType(Float, 3), 4)


@userfun
def lookup(k: Int, w: ArrayType(ArrayType(Float, 3), 4)) -> Float:
    return w[k % 4][(k + 1) % 3] * 2.0 + w[3][2]


def test_two_dimensional_indexing_matches_numpy():
    ks = np.arange(0, 23, dtype=np.int32)
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    program = fun([ArrayType(Int, N), Table], lambda ks_, w_: MapGlb(lambda k: lookup(k, w_))(ks_))
    want = w[ks % 4, (ks + 1) % 3] * 2.0 + w[3, 2]
    np.testing.assert_allclose(interpret(program, ks, w), want, rtol=1e-6)
    np.testing.assert_allclose(compile(program)(ks, w), want, rtol=1e-6)


@userfun
def cell(k: Int, c: ArrayType(ArrayType(ArrayType(Float, 2), 3), 4)) -> Float:
    return c[k % 4][k % 3][k % 2] - c[1][2][0]


def test_three_dimensional_indexing_matches_numpy():
    ks = np.arange(0, 29, dtype=np.int32)
    c = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    program = fun([ArrayType(Int, N), ArrayType(ArrayType(ArrayType(Float, 2), 3), 4)],
                  lambda ks_, c_: MapGlb(lambda k: cell(k, c_))(ks_))
    want = c[ks % 4, ks % 3, ks % 2] - c[1, 2, 0]
    np.testing.assert_allclose(interpret(program, ks, c), want)
    np.testing.assert_allclose(compile(program)(ks, c), want)


def test_rows_of_symbolic_length_are_refused():
    with pytest.raises(LiftTypeError, match="no constant length"):
        @userfun
        def corner(w: ArrayType(ArrayType(Float, M), N)) -> Float:
            return w[0][0]
