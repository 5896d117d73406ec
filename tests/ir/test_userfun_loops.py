"""`for` loops over `range(...)` in Python user functions: the numpy evaluator (uniform and per-element
bounds) and the OpenCL C of the kernel against Python run element by element, and the errors for loop forms
outside the subset."""

import re

import numpy as np
import pytest

from lift import ArrayType, Float, Int, LiftTypeError, MapGlb, SizeVar, VectorType, compile, fun, interpret, userfun
from lift.opencl_gen.userfun_c import userfun_c_body

N, M, K = SizeVar("N"), SizeVar("M"), SizeVar("K")
Float4 = VectorType(Float, 4)


@userfun
def horner(x: Float, c: ArrayType(Float, 5)) -> Float:
    acc = 0.0
    for k in range(len(c) - 1, -1, -1):
        acc = acc * x + c[k]
    return acc


@userfun
def triangle(n: Int) -> Float:
    s = 0
    for i in range(n):
        for j in range(i, n, 2):
            s += i * j
    return float(s) * 0.5


@userfun
def matrix_trace_weighted(k: Int, m: ArrayType(ArrayType(Float, 3), 3)) -> Float:
    total = 0.0
    for i in range(3):
        for j in range(3):
            w = 1.0 if i == j else 0.25
            total += w * m[i][j] * float(k)
    return total


@userfun
def clipped_sum(x: Float) -> Float:
    s = 0.0
    for i in range(1, 9, 3):
        if x * float(i) > 2.0:
            s += 2.0
        else:
            s += x * float(i)
    return s


def python_triangle(n):
    return sum(i * j for i in range(n) for j in range(i, n, 2)) * 0.5


def python_clipped_sum(x):
    return sum(2.0 if x * i > 2.0 else x * i for i in range(1, 9, 3))


def test_constant_bounds_match_numpy_in_the_interpreter_and_the_kernel():
    xs = np.linspace(-1.5, 1.5, 41).astype(np.float32)
    c = np.array([1, -2, 3, 0.5, -1], np.float32)
    program = fun([ArrayType(Float, N), ArrayType(Float, 5)], lambda x, c_: MapGlb(lambda v: horner(v, c_))(x))
    want = np.polyval(c[::-1].astype(np.float64), xs)
    np.testing.assert_allclose(interpret(program, xs, c), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compile(program)(xs, c), want, rtol=1e-5, atol=1e-5)


def test_bounds_that_differ_between_elements_run_each_elements_own_loop():
    ns = np.array([0, 1, 2, 7, 3, 12, 5, 0, 9], np.int32)
    program = fun([ArrayType(Int, N)], lambda n: MapGlb(triangle)(n))
    want = np.array([python_triangle(n) for n in ns], np.float32)
    np.testing.assert_array_equal(interpret(program, ns), want)
    np.testing.assert_array_equal(compile(program)(ns), want)
    assert triangle.python(np.int32(7)) == python_triangle(7)


def test_nested_loops_index_a_two_dimensional_array():
    ks = np.arange(-3, 10, dtype=np.int32)
    m = np.arange(9, dtype=np.float32).reshape(3, 3) / 4
    program = fun([ArrayType(Int, N), ArrayType(ArrayType(Float, 3), 3)],
                  lambda k, m_: MapGlb(lambda v: matrix_trace_weighted(v, m_))(k))
    weights = np.where(np.eye(3, dtype=bool), 1.0, 0.25)
    want = (weights * m).sum() * ks
    np.testing.assert_allclose(interpret(program, ks, m), want, rtol=1e-6)
    np.testing.assert_allclose(compile(program)(ks, m), want, rtol=1e-6)


def test_conditions_inside_loops_and_on_vectors():
    xs = np.linspace(-1, 1.5, 32).astype(np.float32)
    want = np.array([python_clipped_sum(float(x)) for x in xs], np.float32)
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(clipped_sum)(x))
    np.testing.assert_allclose(interpret(program, xs), want, rtol=1e-6)
    np.testing.assert_allclose(compile(program)(xs), want, rtol=1e-6)
    c4 = userfun_c_body(clipped_sum, (Float4,), Float4)
    assert "for (int i = 1; i < 9; i += 3) {" in c4 and "select(" in c4


def test_the_loop_is_c_for_loop():
    c = userfun_c_body(triangle)
    assert "for (int i = 0; i < n; i++) {" in c
    assert "for (int j = i; j < n; j += 2) {" in c
    assert "for (int k = 4; k > -1; k -= 1) {" in userfun_c_body(horner)


@userfun
def count_below(x: Float, a: ArrayType(Float, M)) -> Int:
    count = 0
    for i in range(len(a)):
        if a[i] < x:
            count += 1
    return count


@userfun
def sum_from_one(x: Float, a: ArrayType(Float, M)) -> Float:
    s = x
    for i in range(1, M):
        s += a[i] * a[i - 1]
    return s


def test_size_variable_bounds_are_the_lengths_the_kernel_passes():
    xs = np.linspace(0, 1, 50).astype(np.float32)
    a = np.random.default_rng(0).random(37).astype(np.float32)
    below = fun([ArrayType(Float, N), ArrayType(Float, M)], lambda x, a_: MapGlb(lambda v: count_below(v, a_))(x))
    want = (a[None, :] < xs[:, None]).sum(1)
    np.testing.assert_array_equal(interpret(below, xs, a), want)
    compiled = compile(below)
    np.testing.assert_array_equal(compiled(xs, a), want)
    source = compiled.generated({}).source
    assert "int count_below(float x, global const float* a, int a_length) {" in source
    assert "count_below(x[g_0], a_, M)" in source
    products = fun([ArrayType(Float, N), ArrayType(Float, M)], lambda x, a_: MapGlb(lambda v: sum_from_one(v, a_))(x))
    want = xs + np.sum(a[1:].astype(np.float64) * a[:-1])
    np.testing.assert_allclose(interpret(products, xs, a), want, rtol=1e-5)
    np.testing.assert_allclose(compile(products)(xs, a), want, rtol=1e-5)


def test_flops_count_every_iteration_of_a_constant_loop():
    assert horner.flops == 5 * 2


def loop_over_array(a: ArrayType(Float, 4)) -> Float:
    s = 0.0
    for v in a:
        s += v
    return s


def loop_with_else(x: Float) -> Float:
    for i in range(3):
        x = x + 1.0
    else:
        x = 0.0
    return x


def returns_in_loop(x: Float) -> Float:
    for i in range(3):
        return x
    return x


def float_bound(x: Float) -> Float:
    for i in range(x):
        x = x + 1.0
    return x


def variable_step(x: Float, n: Int) -> Float:
    for i in range(0, 10, n):
        x = x + 1.0
    return x


def assigns_loop_variable(x: Float) -> Float:
    for i in range(3):
        i = i + 1
    return x


def uses_loop_local_after(x: Float) -> Float:
    for i in range(3):
        y = x * 2.0
    return y


def size_of_no_parameter(a: ArrayType(Float, M)) -> Float:
    s = 0.0
    for i in range(K):
        s += a[i]
    return s


@pytest.mark.parametrize("fn, message", [
    (loop_over_array, "user functions loop over `range(...)` only, not over `a`"),
    (loop_with_else, "`for ... else` is not supported"),
    (returns_in_loop, "`return` inside a `for` loop is not supported"),
    (float_bound, "`range` needs Int bounds, not Float"),
    (variable_step, "the step of `range` must be an integer constant other than zero"),
    (assigns_loop_variable, "the loop variable `i` cannot be assigned in the loop"),
    (uses_loop_local_after, "`y` is used before it is assigned"),
    (size_of_no_parameter, "the size K is not the length of an array parameter"),
])
def test_unsupported_loop_forms_are_refused_with_one_clear_error(fn, message):
    with pytest.raises(LiftTypeError, match=f"user function {fn.__name__}, line [0-9]+: .*{re.escape(message)}"):
        userfun(fn)
