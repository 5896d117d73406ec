"""A map whose function passes rows of a length not constant to a user function (cross-entropy's `row_loss(..,
row, label)`, `examples/cross_entropy.py`) at any number of rows: the rows are passed as pointers into their
memory (`lift.opencl_gen.views.memory_row`), so `pad-map` (`lift.rules.padding`), whose padded rows are constants in
no memory, does not apply, and `pad-map-repeat`'s padded rows are copies of the last, which the kernel points at.
Against the interpreter on the device, at random row counts no block divides (Hypothesis)."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Int, Map, SizeVar, Zip, fun, interpret, paper, userfun
from lift.ir import patterns as P
from lift.rules import RewriteEngine
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus, is_call, outermost, rewrite
from opencl_device import needs_device

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
C = SizeVar("C")


@userfun
def pick(row: ArrayType(Float, C), k: Int) -> Float:
    return 2.0 * row[k] - row[0]


def _program(rows: int):
    return fun([ArrayType(ArrayType(Float, C), rows), ArrayType(Int, rows)],
               lambda a, ks: Map(lambda q: pick(Get(q, 0), Get(q, 1)))(Zip(a, ks)))


def _padded(program, rule: str, k: int, sizes: dict):
    strategy = outermost(is_call(P.Map), rewrite(rule, k=k) >> outermost(is_call(P.Map), rewrite("split-join", n=k)))
    focus = (strategy >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))
    return None if focus is None else focus.program


@needs_device
@SETTINGS
@given(st.integers(1, 70), st.integers(1, 9), st.sampled_from([2, 4, 8, 16]), st.integers(0, 1 << 16))
def test_rows_passed_to_a_user_function_are_padded_with_copies_of_the_last(rows, cols, k, seed):
    assume(rows % k and k <= max(2, 1 << (rows - 1).bit_length()))  # the multiples the padding rules take
    program, sizes = _program(rows), {"C": cols}
    assert _padded(program, "pad-map", k, sizes) is None
    lowered = _padded(program, "pad-map-repeat", k, sizes)
    assert f"pad-to-multiple-{k}(clamp)" in paper(lowered) and "map-global" in paper(lowered)
    rng = np.random.default_rng(seed)
    a, ks = rng.integers(-4, 5, (rows, cols)).astype(np.float32), rng.integers(0, cols, rows).astype(np.int32)
    want = interpret(program, a, ks)
    np.testing.assert_array_equal(want, 2 * a[np.arange(rows), ks] - a[:, 0])
    np.testing.assert_array_equal(lift.compile(lowered, sizes=sizes)(a, ks), want)


def test_a_map_of_scalars_or_of_rows_read_element_by_element_is_still_padded_with_constants(examples):
    """Only a row passed whole to a user function keeps `pad-map` out: softmax's rows, which its reductions read
    element by element, are padded with rows of zeros as before."""
    softmax = examples["softmax"].kernels["softmax"]
    sizes = {"R": 13, "C": 7}
    assert "pad-to-multiple-4(0.0)" in paper(_padded(softmax, "pad-map", 4, sizes))
    assert _padded(_program(13), "pad-map", 4, {"C": 7}) is None
