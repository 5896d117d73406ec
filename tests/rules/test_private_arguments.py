"""`private-argument` (lift.rules.memory): a user function's array argument that is a row of a matrix or a
window of a stencil is copied to private memory, which the function reads through a pointer; the programs a
user writes so (all-pairs distances `examples/pdist.py`, a k-means assignment `examples/kmeans.py`, a 3-D
stencil over its window) compile with the default lowering and agree with numpy."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Join, Map, Pad, SizeVar, Slide, Transpose, fun, paper, userfun
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable
from opencl_device import needs_device

N, M, O = SizeVar("N"), SizeVar("M"), SizeVar("O")
ENGINE = RewriteEngine()
RNG = np.random.default_rng(11)


@userfun
def seven(w: ArrayType(Float, 27)) -> Float:
    return 0.4 * w[13] + 0.1 * (w[4] + w[10] + w[12] + w[14] + w[16] + w[22])


def _slide2d(a):
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(a)))


def _pad3d(a):
    return Pad(1, 1, "clamp")(Map(lambda s: Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(s)))(a))


stencil3d = fun([ArrayType(ArrayType(ArrayType(Float, N), M), O)], lambda a: Map(Map(Map(
    lambda nb: seven(Join()(Join()(nb))))))(Map(Map(Transpose()))(Map(Transpose())(Slide(3, 1)(Map(_slide2d)(
        _pad3d(a)))))))


def _stencil3d_numpy(a):
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    o, m, n = a.shape

    def c(i, j, k):
        return p[i:i + o, j:j + m, k:k + n]

    return 0.4 * c(1, 1, 1) + 0.1 * (c(0, 1, 1) + c(2, 1, 1) + c(1, 0, 1) + c(1, 2, 1) + c(1, 1, 0) + c(1, 1, 2))


def _f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _example(examples, name):
    return examples[name].kernels[name], examples[name].namespace["reference"]


def test_the_interpreter_passes_each_element_its_own_row(examples):
    """A user function's array argument that differs between the elements of a map (a row of `P`) is one array
    per element (`BatchedArray`), as the kernel's pointer to its row."""
    (pdist, pdist_numpy), (kmeans, kmeans_numpy) = _example(examples, "pdist"), _example(examples, "kmeans")
    P, Q, C, a = _f32(6, 3), _f32(5, 3), _f32(4, 4), _f32(4, 5, 6)
    np.testing.assert_allclose(lift.interpret(pdist, P, Q), pdist_numpy(P, Q), rtol=1e-5)
    P9 = _f32(9, 4)
    np.testing.assert_array_equal(lift.interpret(kmeans, P9, C), kmeans_numpy(P9, C))
    np.testing.assert_allclose(lift.interpret(stencil3d, a), _stencil3d_numpy(a), rtol=1e-5, atol=1e-6)


def _on_work_items(program):
    """`program` with its outermost map on global work-items, the rule's context."""
    return ENGINE.apply(program, Rewrite.of("map-to-global", "body", {"dim": 0}))


def test_a_row_and_a_window_are_copied_but_not_an_input(examples):
    (pdist, pdist_numpy), (kmeans, _) = _example(examples, "pdist"), _example(examples, "kmeans")
    lowered = _on_work_items(pdist)
    rewrites = [rw for rw in ENGINE.rewrites(lowered) if rw.rule == "private-argument"]
    assert {rw.param_dict["k"] for rw in rewrites} == {0, 1}  # p, the row of P; q, the row of Q
    copied = ENGINE.apply(lowered, rewrites[0])
    assert "dist(toPrivate(map-seq(id))(p), q)" in paper(copied)
    P, Q = _f32(6, 3), _f32(5, 3)
    np.testing.assert_allclose(lift.interpret(copied, P, Q), pdist_numpy(P, Q), rtol=1e-5)

    kmeans_rewrites = [rw for rw in ENGINE.rewrites(_on_work_items(kmeans)) if rw.rule == "private-argument"]
    assert [rw.param_dict["k"] for rw in kmeans_rewrites] == [0]  # the centroids `C` are an input, in memory
    window = [rw for rw in ENGINE.rewrites(_on_work_items(stencil3d)) if rw.rule == "private-argument"]
    assert len(window) == 1 and window[0].param_dict == {"k": 0}


def test_not_outside_a_work_item(examples):
    with pytest.raises(RuleNotApplicable, match="not inside a work-item"):
        ENGINE.apply(examples["kmeans"].kernels["kmeans"], Rewrite.of("private-argument", "body.f.f.body", {"k": 0}))


@needs_device
@pytest.mark.parametrize("name", ["pdist", "kmeans", "softmax"])
def test_the_new_users_examples_compile_with_the_default_lowering(examples, name):
    """`examples/pdist.py`, `kmeans.py` (a private row and the global centroids: one user function with
    array parameters in two address spaces) and `softmax.py` (a private fold's result passed by address) at
    small odd sizes against numpy."""
    program, reference = _example(examples, name)
    inputs = {"pdist": lambda: (_f32(37, 3), _f32(29, 3)), "kmeans": lambda: (_f32(101, 4), _f32(7, 4)),
              "softmax": lambda: (_f32(13, 29),)}[name]()
    got = lift.compile(program, lowering="default")(*inputs)
    np.testing.assert_allclose(got, reference(*inputs), rtol=1e-5, atol=1e-6)


@needs_device
def test_a_window_given_to_a_user_function_compiles_with_the_default_lowering():
    a = _f32(5, 7, 9)
    np.testing.assert_allclose(lift.compile(stencil3d, lowering="default")(a), _stencil3d_numpy(a), rtol=1e-5,
                               atol=1e-6)
