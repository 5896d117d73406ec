"""A stencil's long 1-D windows folded in a loop (`lift.rules.default_lowering.MAX_UNROLLED_WINDOW`): the kernel holds
one step of the fold, not one per tap, and each vector of windows still tests the grid's edges once
(`map-seq-unswitch`: the reads' indices are affine in the fold's counter, so they are tested at its first and
last value, `lift.opencl_gen.accesses.GuardedAccess.over_loop`). Issue 18: conv1d's 31 taps unrolled made a
kernel of 151 KB that PoCL built in 49 s. A vector stored lane by lane at the end of a row is computed once, not
once per lane. The kernels against numpy at sizes shorter than a window, around the block, and prime."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lift import ArrayType, Float, Map, Pad, Reduce, SizeVar, Slide, Zip, fun, paper
from lift.opencl_gen.accesses import GuardedAccess
from lift.opencl_gen.compiled import compile
from lift.rules.default_lowering import MAX_UNROLLED_WINDOW
from lift.types.arith import Cst, Var

from opencl_device import needs_device, vector_lowering
from userfuns import add, mult

N = SizeVar("N")
SIZE_BOUND = 16_000
"""The most bytes of C the default kernel of a 31-tap convolution may take (13.5 KB; 151 KB unrolled)."""


def _convolution(taps: int, mode: str):
    return fun([ArrayType(Float, N), ArrayType(Float, taps)], lambda x, h: Map(
        lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, h))))(Slide(taps, 1)(Pad(taps // 2, taps // 2, mode)(x))))


def _numpy(x, h, mode: str):
    numpy_mode = {"clamp": "edge", "wrap": "wrap", "mirror": "symmetric"}[mode]
    p = np.pad(x.astype(np.float64), h.size // 2, mode=numpy_mode)
    return np.correlate(p, h.astype(np.float64), mode="valid")


def _inputs(n: int, taps: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, taps).astype(np.float32)


@needs_device
@pytest.mark.parametrize("n", [7, 64, 1009, 4099])
def test_the_default_kernel_of_a_31_tap_convolution_is_small_and_right(examples, n):
    """conv1d's default kernel: the fold a loop, its fast copy reading vectors with no check, the kernel within
    `SIZE_BOUND` bytes; its results numpy's, the clamped edges included."""
    program = examples["conv1d"].kernels["conv1d"]
    compiled = compile(program, sizes={"N": n}, lowering=vector_lowering(program, {"N": n}))
    assert "map-seq-unswitch(λ w. reduce-seq(" in paper(compiled.lowered()), paper(compiled.lowered())
    x, h = _inputs(n, 31)
    source = compiled.generated_for(x, h).source
    assert len(source) < SIZE_BOUND, len(source)
    assert "reduce-seq-unroll" not in source and "the clamped vector reads in bounds" in source
    got = compiled(x, h)
    np.testing.assert_allclose(np.reshape(got, n), _numpy(x, h, "clamp"), rtol=1e-5, atol=1e-5)


@needs_device
@settings(max_examples=6, deadline=None)
@given(taps=st.sampled_from([MAX_UNROLLED_WINDOW + 1, 19, 31, 33]), n=st.integers(1, 300),
       mode=st.sampled_from(["clamp", "wrap", "mirror"]))
def test_rolled_window_folds_compute_the_convolution(taps, n, mode):
    """Any long odd window, any boundary mode, any length (shorter than a window too, but for `mirror`, which
    reflects once): the default kernel, its fold a loop whose edge test is hoisted, gives numpy's convolution."""
    n = max(n, taps) if mode == "mirror" else n
    compiled = compile(_convolution(taps, mode), sizes={"N": n}, lowering="default")
    assert "reduce-seq-unroll" not in paper(compiled.lowered())
    x, h = _inputs(n, taps, seed=n)
    np.testing.assert_allclose(np.reshape(compiled(x, h), n), _numpy(x, h, mode), rtol=1e-5, atol=1e-5)


def test_a_short_window_is_still_unrolled():
    """A window of up to `MAX_UNROLLED_WINDOW` taps keeps its unrolled fold (constant indices at each step)."""
    program = _convolution(5, "clamp")
    compiled = compile(program, sizes={"N": 1000}, lowering=vector_lowering(program, {"N": 1000}))
    assert "reduce-seq-unroll(" in paper(compiled.lowered())


def _guard(j, n=N) -> GuardedAccess:
    return GuardedAccess(condition="c", bounds=frozenset({"k", "g"}), ranges=((j, n),))


def test_a_guard_is_hoisted_over_a_loop_only_where_its_indices_are_affine_in_the_counter():
    """Tested at the counter's first and last value: sound for `g + 2k - 3` (an affine index is in range all
    along the loop where it is at both ends), never for a division, a remainder or a product with the counter,
    nor for a size that reads it."""
    k, g = Var("k", 0, 8), Var("g", 0, 100)
    hoisted = _guard(g + 2 * k - 3).over_loop("k", Cst(8))
    assert hoisted == "(g - 3 >= 0 && g - 3 < N) && (g + 11 >= 0 && g + 11 < N)", hoisted
    for j in (g + k % 3, g + k // 2, g * k):
        assert _guard(j).over_loop("k", Cst(8)) is None, j
    assert _guard(g + k, N + k).over_loop("k", Cst(8)) is None
    assert _guard(g + k).over_loop("k", N) is None, "a loop of unknown count"
    assert GuardedAccess(condition="c", bounds=frozenset({"k"})).over_loop("k", Cst(8)) is None, "no ranges"


@needs_device
def test_a_user_function_of_a_window_stored_lane_by_lane_is_computed_once(examples):
    """bilateral's 3x3 user function over vectors of 16 windows, at a width (101) that leaves a partial vector
    stored lane by lane: the function is called once there, not 16 times (each call inlined by the driver), and the
    image is numpy's."""
    pf = examples["bilateral"]
    compiled = compile(pf.kernels["bilateral"], sizes={"M": 37, "N": 101},
                       lowering=vector_lowering(pf.kernels["bilateral"], {"M": 37, "N": 101}))
    (a,) = pf.inputs("bilateral", {"M": 37, "N": 101}, seed=2)
    source = compiled.generated_for(a).source
    assert len(re.findall(r"float16 lanes_\d+ = ", source)) == 2 and ").s1;" not in source, "once per copy"
    np.testing.assert_allclose(compiled(a), pf.namespace["reference"](a), rtol=1e-4, atol=1e-5)
