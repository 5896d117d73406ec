"""`struct-of-arrays` (`lift.rules.struct_of_arrays`), the scalar form of user functions of vectors
(`lift.ir.userfun_components`), and `struct_of_vectors` (`lift.rules.struct_of_vectors`: struct-of-arrays, then
`vectorize-zip-tuple-map` on 4, 8 or 16 lanes, padded where they do not divide): random maps over arrays of float4s,
of user functions with lane-wise arithmetic, math, conditions, vector results and folds of vectors, evaluated equal
to the interpreter's result of the program before the rules; and N-body, rewritten and compiled, equal to numpy."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import lift
from lift import (ArrayType, Float, Get, Map, Reduce, SizeVar, TupleType, VectorType, Vectorize, Zip, fun, interpret,
                  userfun)
from lift.ir.userfun_components import NotScalarisable, lane, packed, scalarised
from lift.rules import Rewrite, RewriteEngine
from lift.rules.strategy import Focus, body
from lift.rules.struct_of_vectors import struct_of_vectors

from numpy_references import nbody as nbody_reference
from opencl_device import needs_device

N = SizeVar("N")
F4 = VectorType(Float, 4)


@userfun
def attract(p: F4, q: F4, e: Float) -> F4:
    d = q - p
    r = 1.0 / math.sqrt(d.x * d.x + d.y * d.y + d.z * d.z + e)
    return F4(d.x * r, d.y * r, d.z * r, 0.0) if q.w > p.w else d * q.w


@userfun
def add4(a: F4, b: F4) -> F4:
    return a + b


@userfun
def norm_and_scaled(p: F4, s: Float) -> TupleType(Float, F4):
    n = abs(p.x) + abs(p.y) + max(p.z, p.w)
    if n > 1.0:
        n = math.sqrt(n)
    return (n, p * s - F4(1.0, 2.0, 3.0, 4.0))


PROGRAMS = {
    "elementwise": fun([ArrayType(F4, N), ArrayType(F4, N), Float],
                       lambda a, b, e: Map(lambda p, q: attract(p, q, e))(Zip(a, b))),
    "tuple-result": fun([ArrayType(F4, N), ArrayType(Float, N)],
                        lambda a, s: Map(lambda p, x: norm_and_scaled(p, x))(Zip(a, s))),
    "all-pairs": fun([ArrayType(F4, N), Float],
                     lambda a, e: Map(lambda p: Reduce(add4, Vectorize(4, 0.0))(Map(lambda q: attract(p, q, e))(a)))(a)),
    "single": fun([ArrayType(F4, N)], lambda a: Map(lambda p: add4(p, p))(a)),
    "components": fun([ArrayType(F4, N), ArrayType(Float, N), ArrayType(F4, N), Float],
                      lambda a, s, b, e: Map(lambda t: norm_and_scaled(attract(Get(t, 0), Get(t, 2), e), Get(t, 1)))(
                          Zip(a, s, b))),
    "fold-of-zips": fun([ArrayType(F4, N), ArrayType(F4, N), Float],
                        lambda a, b, e: Map(lambda p: Reduce(add4, Vectorize(4, 1.0))(
                            Map(lambda q, r: attract(add4(p, r), q, e))(Zip(a, b))))(a)),
}
ENGINE = RewriteEngine()


def _inputs(program, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p in program.params:
        t = p.t
        if t == Float:
            out.append(np.float32(rng.uniform(0.01, 1.0)))
        elif t.elem == F4:
            out.append(rng.uniform(-2.0, 2.0, (n, 4)).astype(np.float32))
        else:
            out.append(rng.uniform(-2.0, 2.0, n).astype(np.float32))
    return out


def _flat(a):
    a = np.asarray(a)
    if a.dtype.fields:
        return np.concatenate([_flat(a[f]).reshape(len(a), -1) for f in a.dtype.names], axis=1)
    return a.astype(np.float64).reshape(len(a), -1)


def _close(got, want):
    """Equal up to rounding: a fold of float4s (the interpreter's `ufunc.reduce`) and of tuples of scalars (a loop)
    add in different orders, so the tolerance scales with the largest magnitude, as `lift explore`'s check does."""
    got, want = _flat(got), _flat(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


@settings(deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 40), st.integers(0, 2 ** 16))
def test_struct_of_arrays_means_the_program(name, n, seed):
    program = PROGRAMS[name]
    rewritten = ENGINE.apply(program, Rewrite.of("struct-of-arrays", "body"))
    assert "_soa(" in lift.paper(rewritten)
    inputs = _inputs(program, n, seed)
    _close(interpret(rewritten, *inputs), interpret(program, *inputs))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 40), st.sampled_from([4, 8, 16]), st.integers(0, 2 ** 16))
def test_elements_on_lanes_mean_the_program(name, n, width, seed):
    """Padded up to at most the next power of two (`pad-map-repeat`): `width` lanes over more than `width / 2`."""
    assume(n > width // 2)
    program = PROGRAMS[name]
    focus = body(struct_of_vectors(width, n % width != 0))(Focus(program, RewriteEngine(sizes={"N": n})))
    assert f"vectorize-{width}(" in lift.paper(focus.program)
    inputs = _inputs(program, n, seed)
    _close(interpret(focus.program, *inputs), interpret(program, *inputs))


def test_a_user_function_of_vectors_is_its_scalar_form_between_lanes_and_pack():
    """`u = pack ∘ u_soa ∘ lanes` (the module's equation) on `norm_and_scaled`, element by element."""
    rng = np.random.default_rng(1)
    p, s = rng.uniform(-2, 2, (50, 4)).astype(np.float32), rng.uniform(-2, 2, 50).astype(np.float32)
    want = norm_and_scaled.python(p, s)
    lanes = [lane(F4, k).python(p) for k in range(4)]
    got = packed(TupleType(Float, F4)).python(scalarised(norm_and_scaled).python(*lanes, s))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_a_user_function_of_bools_or_in_c_has_no_scalar_form():
    c_written = lift.UserFun("twice4", ("v",), "return v * 2;", (F4,), F4)
    with pytest.raises(NotScalarisable, match="written in C"):
        scalarised(c_written)
    with pytest.raises(NotScalarisable, match="has no vectors"):
        scalarised(userfun(source="def plus(x: Float) -> Float:\n    return x + 1.0\n"))


@needs_device
@pytest.mark.parametrize("n", [256, 250])
def test_nbody_in_struct_of_arrays_compiles_to_numpy_s_step(examples, n):
    pf = examples["nbody"]
    rewritten = ENGINE.apply(pf.kernels["nbody"], Rewrite.of("struct-of-arrays", "body.args0"))
    inputs = pf.inputs("nbody", {"N": n}, seed=2)
    got = lift.compile(rewritten, sizes={"N": n}, lowering="default")(*inputs)
    new_pos, new_vel = nbody_reference(*inputs)
    np.testing.assert_allclose(got["_0"], new_pos, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["_1"], new_vel, rtol=1e-4, atol=1e-5)


def test_lanes_named_as_a_variable_of_the_function_or_constants_python_cannot_write_have_no_scalar_form():
    clash = userfun(source="def clash(p: VectorType(Float, 4), p_x: Float) -> Float:\n    return p.y + p_x\n")
    with pytest.raises(NotScalarisable, match="lanes of p"):
        scalarised(clash)
    infinite = userfun(source="def far(p: VectorType(Float, 4)) -> Float:\n    return p.x if p.y > 0.0 else M\n",
                       names={"M": float("inf")})
    with pytest.raises(NotScalarisable, match="on scalars"):
        scalarised(infinite)
