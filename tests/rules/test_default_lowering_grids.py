"""The default lowering of stencils over grids as a new user writes them (`lift.rules.default_lowering`): a window
read flat (`join(nb)`, weighted through `zip(join(nb), join(k))`) is computed in vector windows, or where the
device has no vectors folded row by row (`fold_joins`: no float4
gathering the elements of several rows, no index divided by the row length), and a map of maps of maps over a 3-D
grid runs on three dimensions of global work-items. Values against numpy at odd sizes, by the interpreter of the
lowered program and on the device."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lift
from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, Zip, fun, interpret, paper
from lift.rules.default_lowering import lower

from opencl_device import needs_device
from userfuns import add, mult

N, M, O = SizeVar("N"), SizeVar("M"), SizeVar("O")
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


def conv2d(k: int):
    """A `k × k` weighted convolution, clamped at the edges: the weighted sum of each flat window."""
    h = k // 2
    windows = lambda a: Map(Transpose())(Slide(k, 1)(Map(Slide(k, 1))(Pad(h, h, "clamp")(Map(Pad(h, h, "clamp"))(a)))))
    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, k), k)], lambda a, w: Map(Map(
        lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(w))))))(windows(a)))


def box3d():
    """The sum of each 3 × 3 × 3 neighbourhood of a 3-D grid, clamped at the edges."""
    padded = lambda a: Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(Map(Map(Pad(1, 1, "clamp")))(a)))
    slid = lambda a: Slide(3, 1)(Map(Slide(3, 1))(Map(Map(Slide(3, 1)))(a)))
    nbs = lambda a: Map(lambda x: Map(Transpose() @ Map(Transpose()))(Transpose()(x)))(slid(padded(a)))
    return fun([ArrayType(ArrayType(ArrayType(Float, N), M), O)], lambda a: Map(Map(Map(
        lambda nb: Reduce(add, 0.0)(Join()(Join()(nb))))))(nbs(a)))


def conv2d_numpy(a, w):
    h = w.shape[0] // 2
    p = np.pad(a.astype(np.float64), h, mode="edge")
    return sum(w[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(w.shape[0]) for j in range(w.shape[1]))


def box3d_numpy(a):
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    o, m, n = a.shape
    return sum(p[i:i + o, j:j + m, k:k + n] for i in range(3) for j in range(3) for k in range(3))


def _f32(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def test_a_5x5_window_is_computed_in_vector_windows_not_gathered_into_float4s():
    """A stencil takes the `vector-windows` form first: 16 windows to a vector, each window's fold unrolled."""
    lowered = paper(lower(conv2d(5), {"M": 1001, "N": 999}))
    assert "asVector-4" not in lowered and "asVector-16" in lowered and "reduce-seq-unroll(" in lowered


def test_without_vectors_a_5x5_window_is_folded_row_by_row_not_gathered():
    lowered = paper(lower(conv2d(5), {"M": 1001, "N": 999}, vector_width=1))
    assert "asVector" not in lowered and "pad-to-multiple" not in lowered
    assert "reduce-seq(add, 0.0) ∘ join ∘ map-seq(reduce-seq(" in lowered


@SETTINGS
@given(st.sampled_from([3, 5, 7]), st.integers(1, 13), st.integers(1, 13), st.integers(0, 2**32 - 1),
       st.sampled_from([1, 4]))
def test_a_lowered_convolution_computes_numpy_s(k, m, n, seed, vector_width):
    rng = np.random.default_rng(seed)
    a, w = _f32(rng, m, n), _f32(rng, k, k)
    lowered = lower(conv2d(k), {"M": m, "N": n}, vector_width)
    np.testing.assert_allclose(interpret(lowered, a, w, numpy_shapes=True), conv2d_numpy(a, w), rtol=1e-5, atol=1e-5)


def test_a_3d_grid_maps_on_three_dimensions():
    """The fold of a 3 × 3 × 3 window itself (no map before it) is one of `map(id)` (`reduce-map-id`), unrolled over
    vectors of 16 windows like any stencil's, the grid's planes and rows on dimensions 2 and 1: at 61 × 59 × 53 on
    PoCL 1.1 ms (best of 7), 21 ms when each work-item folded its window's rows sequentially."""
    lowered = paper(lower(box3d(), {"O": 61, "M": 59, "N": 53}))
    assert lowered.startswith("map-global[2](map-global[1](take-(N) ∘ join ∘ map-global(")
    assert "map-seq-unswitch(reduce-seq-unroll(λ " in lowered and "vectorize-16(add)" in lowered, lowered


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_a_3d_box_filter_lowered_computes_numpy_s(o, m, n, seed):
    a = _f32(np.random.default_rng(seed), o, m, n)
    lowered = lower(box3d(), {"O": o, "M": m, "N": n})
    np.testing.assert_allclose(interpret(lowered, a, numpy_shapes=True), box3d_numpy(a), rtol=1e-5, atol=1e-5)


def test_a_map_of_short_maps_of_maps_stays_on_two_dimensions():
    """A matrix of 3-element vectors (`map(map(map(f)))` over `[[[Float]_3]_N]_M`): the vectors are not a third
    dimension of work-items."""
    program = fun([ArrayType(ArrayType(ArrayType(Float, 3), N), M)], lambda a: Map(Map(Map(lambda v: v * 2.0)))(a))
    assert paper(lower(program, {"M": 5, "N": 7})).startswith("map-global[1](map-global(map-seq(")


@needs_device
@pytest.mark.parametrize("m, n", [(1, 1), (17, 23), (101, 99)])
def test_a_5x5_convolution_runs_at_odd_sizes(m, n):
    rng = np.random.default_rng(m * n)
    a, w = _f32(rng, m, n), _f32(rng, 5, 5)
    np.testing.assert_allclose(lift.compile(conv2d(5), lowering="default")(a, w), conv2d_numpy(a, w), rtol=1e-5,
                               atol=1e-5)


@needs_device
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 3), (19, 17, 23)])
def test_a_3d_box_filter_runs_at_odd_sizes(shape):
    a = _f32(np.random.default_rng(sum(shape)), *shape)
    np.testing.assert_allclose(lift.compile(box3d(), lowering="default")(a), box3d_numpy(a), rtol=1e-5, atol=1e-5)


def _sum_of_rows(length):
    return fun([ArrayType(ArrayType(Float, length), M)], lambda a: Reduce(add, 0.0)(Join()(a)))


def test_the_sum_of_a_matrix_of_long_rows_reduces_each_row_then_the_row_sums():
    """`reduce(+)(join(a))`: rows on global work-items, no index divided by the row length."""
    lowered = paper(lower(_sum_of_rows(N), {"M": 1001, "N": 999}))
    assert lowered.endswith("join ∘ take-(M) ∘ map-global(reduce-seq(add, 0.0)) ∘ pad-to-multiple-64(0.0)")
    short = paper(lower(_sum_of_rows(3), {"M": 1001}))
    assert short.endswith("asVector-4 ∘ pad-to-multiple-16(0.0) ∘ join")  # short rows: chunks of the flat array


@SETTINGS
@given(st.integers(1, 40), st.sampled_from([1, 3, 16, 17, 33]), st.integers(0, 2**32 - 1))
def test_a_sum_of_rows_computes_numpy_s(m, n, seed):
    a = _f32(np.random.default_rng(seed), m, n)
    program = _sum_of_rows(N)
    got = interpret(lower(program, {"M": m, "N": n}), a, numpy_shapes=True)
    np.testing.assert_allclose(got, a.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
