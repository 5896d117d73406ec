"""`userfun-composition` (lift.rules.userfun_composition): a user function applied to another's result replaced by
their composition, one function.

Random pairs of user functions, the outer one reading the inner one's result once among locals of its own (named
like the inner one's parameters), mean the same composed: the interpreter agrees exactly before and after, and the
composed function's kernel agrees with it. Compositions that would compute the inner function more or less often
than before, or that are not written in Python, are refused. The 2-D 9-point weighted Jacobi (jacobi2d_high) gets
its fold's steps as multiply-adds from the default lowering and from the stencil row blocks, and agrees with numpy
at odd sizes."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Map, SizeVar, UserFun, VectorType, Vectorize, Zip, fun, userfun
from lift.ir.userfun_composition import composed, contracts
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, composed_userfuns, default_lowering, lower_rest
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import Focus, outermost
from opencl_device import needs_device
from userfuns import add, mult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from stencils import jacobi2d_high  # noqa: E402

N = SizeVar("N")
ENGINE = RewriteEngine()
TERMS = ("x", "y", "x * y", "x - 0.5", "y * 2.0 + x", "abs(x)", "(x + y) * (x - y)")


@st.composite
def inner_functions(draw):
    """`g(x: Float, y: Float) -> Float`, one returned expression."""
    left, right = draw(st.sampled_from(TERMS)), draw(st.sampled_from(TERMS))
    op = draw(st.sampled_from(["+", "-", "*"]))
    return userfun(source=f"def g(x: Float, y: Float) -> Float:\n    return ({left}) {op} ({right})")


@st.composite
def outer_functions(draw):
    """`f(a: Float, r: Float, x: Float) -> Float` reading `r` (where `g`'s result goes) once, with locals `y` and
    `x` re-assigned (the names of `g`'s parameters: the composition renames them apart)."""
    lines = ["def f(a: Float, r: Float, x: Float) -> Float:", "    y = a * 0.25"]
    use = draw(st.sampled_from(["a + r * x", "a - r", "min(a, r) + y", "y * (r + x)"]))
    lines += ["    x = x + y", f"    return {use} + x"] if draw(st.booleans()) else [f"    return {use}"]
    return userfun(source="\n".join(lines))


def _program(f: UserFun, g: UserFun):
    return fun([ArrayType(Float, N)] * 4, lambda a, b, c, d: Map(lambda t: f(Get(t, 0), g(Get(t, 1), Get(t, 2)),
                                                                               Get(t, 3)))(Zip(a, b, c, d)))


def _inputs(n=11, seed=0, count=4):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, n).astype(np.float32) for _ in range(count)]


def _composed_program(program):
    """`program` with `userfun-composition` applied where the engine enumerates it (once here), or None."""
    rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule == "userfun-composition"]
    assert len(rewrites) <= 1
    return ENGINE.apply(program, rewrites[0]) if rewrites else None


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)
@given(outer_functions(), inner_functions())
def test_composing_random_user_functions_keeps_their_meaning(f, g):
    program = _program(f, g)
    done = _composed_program(program)
    assert done is not None
    (h,) = [n for n in done.subterms() if isinstance(n, UserFun)]
    assert h.name == "f_g" and h.arity == 4
    inputs = _inputs()
    np.testing.assert_array_equal(lift.interpret(done, *inputs), lift.interpret(program, *inputs))
    assert _composed_program(done) is None, "composed once"


@needs_device
@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(outer_functions(), inner_functions())
def test_the_kernel_of_a_random_composition_agrees_with_the_interpreter(f, g):
    program = _program(f, g)
    inputs = _inputs(n=13, seed=1)
    compiled = lift.compile(_composed_program(program), lowering="default")
    assert "f_g(" in compiled.source
    np.testing.assert_allclose(compiled(*inputs), lift.interpret(program, *inputs), rtol=1e-4, atol=1e-4)


@userfun
def twice(a: Float, r: Float) -> Float:
    return a * r + r


@userfun
def scaled(x: Float, y: Float) -> Float:
    s = x * 2.0
    return s * y


@userfun
def looped(a: Float, r: Float) -> Float:
    acc = a
    for i in range(2):
        acc = acc + r
    return acc


@userfun
def absf(x: Float) -> Float:
    return abs(x)


def test_what_would_change_the_work_or_is_written_in_c_is_not_composed():
    """An outer function reading the result twice or in a loop (the inner one would be computed more often), an
    inner one of two statements, a function in C: no composition; a sum of a product is a multiply-add."""
    c_mult = UserFun("c_mult", ("x", "y"), "return x * y;", (Float, Float), Float, python=lambda x, y: x * y)
    assert composed(twice, 1, mult) is None and composed(looped, 1, mult) is None
    assert composed(add, 1, scaled) is None
    assert composed(add, 1, c_mult) is None
    assert composed(add, 1, mult).origin.source.endswith("return x + mult_x * mult_y")
    assert contracts(add, 1, mult) and not contracts(add, 1, absf) and not contracts(mult, 1, mult)


def test_a_vectorised_call_of_a_tuple_spread_composes_into_its_components():
    """`vectorize-4(add)(acc, vectorize-4(mult)(t))`, `t` a pair spread over `mult`'s parameters, as a fold's
    step reads it: `vectorize-4(add_mult)(acc, get-0 t, get-1 t)`."""
    v4 = VectorType(Float, 4)
    program = fun([ArrayType(v4, N), ArrayType(v4, N), ArrayType(v4, N)], lambda a, b, c: Map(
        lambda t: Vectorize(4, add)(Get(t, 0), Vectorize(4, mult)(Get(t, 1))))(
        Zip(a, Zip(b, c))))
    done = _composed_program(program)
    assert "vectorize-4(add_mult)(get-0" in lift.paper(done)
    a, b, c = (x.reshape(-1, 4) for x in _inputs(n=24, count=3))
    want = a + b * c
    np.testing.assert_allclose(lift.interpret(done, a, b, c), want, rtol=1e-6)


def test_the_default_lowering_composes_the_weighted_stencils_fold_step():
    derivation = default_lowering(jacobi2d_high, {"M": 61, "N": 67})
    assert "userfun-composition" in [s.rule for s in derivation.steps]


def _row_blocks(sizes, h, w, width):
    blocks = stencil_row_blocks(h, w, width, padded_rows=sizes["M"] % h != 0, padded_columns=sizes["N"] % w != 0)
    return (outermost(grid_windows, blocks)
            >> lower_rest >> clean_up >> composed_userfuns)(Focus(jacobi2d_high, RewriteEngine(sizes=sizes))).program


def _jacobi2d(a, k):
    p = np.pad(a, 1, mode="edge")
    return sum(k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3))


@needs_device
@pytest.mark.parametrize("m, n", [(61, 67), (5, 17)])
@pytest.mark.parametrize("lowering", ["default", "row-blocks"])
def test_the_composed_jacobi2d_agrees_with_numpy_at_odd_sizes(m, n, lowering):
    sizes = {"M": m, "N": n}
    rng = np.random.default_rng(m)
    a, k = rng.uniform(-1, 1, (m, n)).astype(np.float32), rng.uniform(-1, 1, (3, 3)).astype(np.float32)
    program = jacobi2d_high if lowering == "default" else _row_blocks(sizes, 4, 16, 8)
    compiled = lift.compile(program, sizes=sizes)
    assert "add_mult" in compiled.source
    np.testing.assert_allclose(np.reshape(compiled(a, k), (m, n)), _jacobi2d(a, k), rtol=1e-5, atol=1e-5)


def test_the_default_lowering_composes_only_what_contracts(examples):
    """asum's step `add(acc, absf(x))` contracts into nothing: left as the paper writes it (Figure 9)."""
    program = examples["asum"].kernels["asum"]
    assert "userfun-composition" not in [s.rule for s in default_lowering(program, {"N": 1 << 20}).steps]
    assert composed(add, 1, absf) is not None
