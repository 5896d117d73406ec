"""`userfun-sincos` (lift.rules.userfun_sincos): the sine and cosine of one angle computed by one call.

Random user functions computing sines and cosines of a few angles, in one statement or in several, with the
angle's variables re-assigned between them, inside branches and loops, mean the same fused: the interpreter agrees
exactly before and after, and the kernel of the fused function (OpenCL's `sincos`) agrees with it. The DFT example
gets it from the default lowering and agrees with numpy."""

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Map, SizeVar, UserFun, VectorType, Vectorize, Zip, fun, userfun
from lift.ir.userfun_body import For, If, SinCos
from lift.ir.userfun_components import scalarised
from lift.opencl_gen.userfun_c import userfun_c_body
from lift.rules import RewriteEngine
from lift.rules.default_lowering import default_lowering
from lift.rules.userfun_sincos import sincos_userfun
from opencl_device import needs_device

N = SizeVar("N")
ENGINE = RewriteEngine()
ANGLES = ("a", "x", "a + x", "a * 0.5", "x - y")


def _sincos_statements(body) -> list:
    """The `SinCos` statements of a typed body, those in branches and loops included."""
    found = []
    for stmt in body:
        if isinstance(stmt, SinCos):
            found.append(stmt)
        elif isinstance(stmt, If):
            found += _sincos_statements(stmt.then) + _sincos_statements(stmt.other)
        elif isinstance(stmt, For):
            found += _sincos_statements(stmt.body)
    return found


@st.composite
def _statements(draw, depth):
    """Statements on the accumulator `acc` and the local `a` (re-assigned: an angle reading it changes)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        angle, other = draw(st.sampled_from(ANGLES)), draw(st.sampled_from(ANGLES))
        f, g = draw(st.permutations(["sin", "cos"]))
        kinds = ["one", "both", "reassign", "two", "if", "loop"] if depth < 2 else ["one", "both", "reassign", "two"]
        kind = draw(st.sampled_from(kinds))
        if kind == "one":
            out.append(f"acc = acc + math.{f}({angle})")
        elif kind == "both":
            out.append(f"acc = acc * 0.5 + math.{f}({angle}) * math.{g}({other})")
        elif kind == "reassign":
            out.append(f"a = a * 0.5 + math.{f}({angle})")
        elif kind == "two":
            out += [f"b = math.{f}({angle})", f"acc = acc + b - math.{g}({angle})"]
        elif kind == "if":
            then, other_branch = draw(_statements(depth + 1)), draw(_statements(depth + 1))
            out += [f"if math.{f}({angle}) > 0.0:"] + ["    " + s for s in then] + \
                ["else:"] + ["    " + s for s in other_branch]
        else:
            out += [f"for i{depth} in range(2):"] + ["    " + s for s in draw(_statements(depth + 1))]
    return out


@st.composite
def trigonometric_functions(draw):
    """A user function `(x: Float, y: Float) -> Float` of sines and cosines."""
    lines = ["def trig(x: Float, y: Float) -> Float:", "    acc = 0.0", "    a = x + y", "    b = 0.0"]
    lines += ["    " + s for s in draw(_statements(0))] + ["    return acc + a + b"]
    return userfun(source="\n".join(lines))


def _program(f: UserFun):
    return fun([ArrayType(Float, N), ArrayType(Float, N)], lambda xs, ys: Map(lambda p: f(Get(p, 0), Get(p, 1)))(
        Zip(xs, ys)))


def _inputs(n=11, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, n).astype(np.float32), rng.uniform(-3, 3, n).astype(np.float32)]


def _fused_program(program):
    """`program` with `userfun-sincos` applied where the engine enumerates it (once: one user function), or None."""
    rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule == "userfun-sincos"]
    assert len(rewrites) <= 1
    return ENGINE.apply(program, rewrites[0]) if rewrites else None


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(trigonometric_functions())
def test_fusing_a_random_user_functions_sines_and_cosines_keeps_its_meaning(f):
    program = _program(f)
    fused = _fused_program(program)
    if fused is None:
        assert sincos_userfun(f) is None
        return
    (g,) = [n for n in fused.subterms() if isinstance(n, UserFun)]
    assert g.name == "trig_sincos" and _sincos_statements(g.origin.body)
    inputs = _inputs()
    np.testing.assert_array_equal(lift.interpret(fused, *inputs), lift.interpret(program, *inputs))
    assert _fused_program(fused) is None, "fused once"


@needs_device
@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(trigonometric_functions())
def test_the_kernel_of_a_random_fused_user_function_agrees_with_the_interpreter(f):
    program = _program(f)
    inputs = _inputs(n=13, seed=1)
    fused = _fused_program(program)
    compiled = lift.compile(fused or program, lowering="default")
    assert ("sincos(" in compiled.source) == (fused is not None)
    np.testing.assert_allclose(compiled(*inputs), lift.interpret(program, *inputs), rtol=1e-4, atol=1e-4)


@userfun
def reassigned(x: Float) -> Float:
    c = math.cos(x)
    x = x * 2.0
    return c + math.sin(x)


@userfun
def rotated(x: Float, y: Float) -> (Float, Float):
    return (x * math.cos(y) - math.sin(x), x * math.sin(y) + math.cos(x))


def test_an_angle_whose_variable_is_assigned_between_is_not_fused():
    assert sincos_userfun(reassigned) is None


def test_each_angle_gets_its_own_sincos_in_c():
    c = userfun_c_body(sincos_userfun(rotated))
    assert c.count("sincos(") == 2 and "sin(" not in c.replace("sincos(", "") and "cos(" not in c.replace(
        "sincos(", "")


@needs_device
def test_a_vectorised_function_uses_the_vector_sincos():
    """`vectorize-4(rotated)`: OpenCL's `sincos` of a `float4`."""
    v4 = VectorType(Float, 4)
    program = fun([ArrayType(v4, N), ArrayType(v4, N)], lambda xs, ys: Map(lambda p: Vectorize(4, rotated)(
        Get(p, 0), Get(p, 1)))(Zip(xs, ys)))
    fused = _fused_program(program)
    inputs = [a.reshape(-1, 4) for a in _inputs(n=44, seed=2)]
    compiled = lift.compile(fused, lowering="default")
    assert "sincos(" in compiled.source
    got, want = compiled(*inputs), lift.interpret(program, *inputs)
    for i in range(2):
        np.testing.assert_allclose(got[f"_{i}"] if got.dtype.fields else got[..., i], want[i] if isinstance(
            want, tuple) else want[f"_{i}"], rtol=1e-5, atol=1e-5)


def test_the_default_lowering_fuses_the_dfts_twiddle(examples):
    pf = examples["dft"]
    derivation = default_lowering(pf.kernels["dft"], pf.bind({"N": 37}))
    assert derivation.steps[-1].rule == "userfun-sincos"


@needs_device
def test_the_fused_dft_agrees_with_numpy_at_an_odd_size(examples):
    pf = examples["dft"]
    sizes = pf.bind({"N": 37})
    inputs = pf.inputs("dft", sizes)
    compiled = lift.compile(pf.kernels["dft"], sizes=sizes, lowering="default")
    got = compiled(*inputs)
    got = np.stack([got[f] for f in got.dtype.names], axis=-1) if got.dtype.fields else got
    want = pf.namespace["reference"](*inputs)
    assert "sincos(" in compiled.source
    np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max())


@userfun
def polar(r: VectorType(Float, 4), t: VectorType(Float, 4)) -> VectorType(Float, 4):
    return r * math.cos(t) + math.sin(t)


def test_a_fused_function_on_vectors_takes_apart_into_the_same_function_on_lanes():
    """`struct-of-arrays`' scalarised function (`lift.ir.userfun_components`) of the fused `polar`: each lane's
    sine and cosine, as the unfused one computes them."""
    fused = sincos_userfun(polar)
    assert _sincos_statements(fused.origin.body)
    rng = np.random.default_rng(3)
    lanes = [rng.uniform(-3, 3, 9).astype(np.float32) for _ in range(8)]
    np.testing.assert_array_equal(scalarised(fused).python(*lanes), scalarised(polar).python(*lanes))
