"""Python user functions: numpy_impl against the functions run by Python element by element, the
generated OpenCL C (scalar and float4 versions) against numpy_impl on a device, and the errors for
code outside the subset."""

import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lift.errors import LiftTypeError
from lift.ir.python_userfun import translate
from lift.opencl_gen.c_types import c_struct_definition, c_type_name
from lift.opencl_gen.userfun_c import python_userfun_c
from lift.types.arith import SizeVar
from lift.types.types import ArrayType, Bool, Double, Float, Int, TupleType, VectorType

Float4 = VectorType(Float, 4)
SCALE = 0.5
NAME = "not a number"


def absf(x: Float) -> Float:
    return x if x >= 0.0 else -x


def add(x: Float, y: Float) -> Float:
    return x + y


def mult(x: Float, y: Float) -> Float:
    return x * y


def clamp3(x: Float, lo: Float, hi: Float) -> Float:
    return lo if x < lo else (hi if x > hi else x)


def clamp_if(x: Float) -> Float:
    if x < -1.0:
        y = -1.0
    elif x > 1.0:
        y = 1.0
    else:
        y = x
    return y


def ramp(x: Float) -> Float:
    """An early return, a local widened from Int to Float, `+=`, a module constant, `min` and `**`."""
    if x < 0.0:
        return 0.0
    y = 1
    y += x * SCALE
    return min(y, 2.0) ** 2


def in_band(x: Float, y: Float) -> Float:
    return 1.0 if 0.0 <= x < 1.0 and not (y > x or y < -1.0) else -1.0


def mixed(x: Float, y: Float) -> Float:
    k = int(abs(x) * 4.0)
    return (math.fmod(x, 0.7) + math.floor(y) * math.atan2(y, x) + float(k % 3)
            + math.pow(abs(y), 0.25) + max(x, y, 0.2) + math.pi)


def make_band_gain(k):
    """A closure: `k` is inlined; `inside` is a lane mask in the float4 version."""

    def band_gain(x: Float) -> Float:
        inside = k < x < 2.0 * k
        r = 0.0
        if inside:
            r = x * k
        return r

    return band_gain


def black_scholes(s: Float) -> (Float, Float):
    d1 = (math.log(s / 100.0) + (0.02 + 0.5 * 0.3 * 0.3) * 1.5) / (0.3 * math.sqrt(1.5))
    d2 = d1 - 0.3 * math.sqrt(1.5)
    n1 = 0.5 + 0.5 * math.erf(d1 / math.sqrt(2.0))
    n2 = 0.5 + 0.5 * math.erf(d2 / math.sqrt(2.0))
    discounted = 100.0 * math.exp(-0.02 * 1.5)
    return (s * n1 - discounted * n2, discounted * (1.0 - n2) - s * (1.0 - n1))


def update_f(f: Float4, nid: Int, p: Float4, particles: ArrayType(Float4, SizeVar("N")), cutoff: Float) -> Float4:
    n = particles[nid]
    dx = p.x - n.x
    dy = p.y - n.y
    dz = p.z - n.z
    r2 = dx * dx + dy * dy + dz * dz
    inv = 1.0 / r2
    s = inv * inv * inv * (2.0 * inv * inv * inv - 1.0) * inv
    return f + (p - n) * s if r2 < cutoff else f


def cross3(a: Float4, b: Float4) -> Float4:
    return Float4(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0)


def cross3_spelled_out(a: VectorType(Float, 4), b: VectorType(Float, 4)) -> VectorType(Float, 4):
    return VectorType(Float, 4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0)


def int_ops(a: Int, b: Int) -> Int:
    return a / b * 100 + a % b - abs(a) + max(a, b)


def damped(x: Double, n: Int) -> Double:
    return math.exp(-x * 0.1) * math.cos(math.pi * x) + x * n ** 2 / 3.0


def scale_pair(p: TupleType(Float, Int)) -> [Int, Float]:
    return (p[1] * 2, p[0] * p[1])


class Vec(tuple):
    """A float4 for running `update_f` in Python: components and element-wise arithmetic."""

    x, y, z, w = (property(lambda self, i=i: self[i]) for i in range(4))

    def __add__(self, other):
        return Vec(a + b for a, b in zip(self, other))

    def __sub__(self, other):
        return Vec(a - b for a, b in zip(self, other))

    def __mul__(self, k):
        return Vec(a * k for a in self)


def c_int_ops(a: int, b: int) -> int:
    """`int_ops` with C's division, truncating toward zero."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q * 100 + (a - b * q) - abs(a) + max(a, b)


rng = np.random.default_rng(7)
N = 64


def floats(low=-3.0, high=3.0, shape=(N,)):
    return rng.uniform(low, high, shape).astype(np.float32)


# name: (function, arguments, element-wise over scalars, so that a float4 version exists)
CASES = {
    "absf": (absf, lambda: [floats()], True),
    "add": (add, lambda: [floats(), floats()], True),
    "mult": (mult, lambda: [floats(), floats()], True),
    "clamp3": (clamp3, lambda: [floats(), floats(-2, 0), floats(0, 2)], True),
    "clamp_if": (clamp_if, lambda: [floats()], True),
    "ramp": (ramp, lambda: [floats()], True),
    "in_band": (in_band, lambda: [floats(-0.5, 1.5), floats(-1.5, 1.5)], True),
    "mixed": (mixed, lambda: [floats(0.1, 3), floats()], True),
    "band_gain": (make_band_gain(1.5), lambda: [floats(0, 4)], True),
    "black_scholes": (black_scholes, lambda: [floats(50, 150)], True),
    "update_f": (update_f, lambda: [floats(shape=(N, 4)), rng.integers(0, 16, N).astype(np.int32),
                                    floats(shape=(N, 4)), floats(shape=(16, 4)), np.full(N, 3.0, np.float32)],
                 False),
    "int_ops": (int_ops, lambda: [rng.integers(-50, 50, N).astype(np.int32),
                                  rng.choice([-7, -3, -2, 2, 3, 5], N).astype(np.int32)], False),
    "damped": (damped, lambda: [rng.uniform(-5, 5, N), rng.integers(-4, 4, N).astype(np.int32)], False),
    "scale_pair": (scale_pair, lambda: [(floats(), rng.integers(-9, 9, N).astype(np.int32))], False),
}


def python_value(value, t):
    """Element `value` of a numpy argument as Python gives it to the original function."""
    if isinstance(t, ArrayType):
        return [python_value(v, t.elem) for v in value]
    if isinstance(t, TupleType):
        return tuple(python_value(v, e) for v, e in zip(value, t.elems))
    if isinstance(t, VectorType):
        return Vec(float(v) for v in value)
    return int(value) if t == Int else float(value)


def element(args, in_types, i):
    return [python_value(a if isinstance(t, ArrayType) else
                         tuple(c[i] for c in a) if isinstance(t, TupleType) else a[i], t)
            for a, t in zip(args, in_types)]


def assert_close(actual, expected, t):
    if isinstance(t, TupleType):
        for a, e, et in zip(actual, expected, t.elems):
            assert_close(a, e, et)
    elif t in (Int, Bool):
        np.testing.assert_array_equal(actual, expected)
    else:
        tolerance = 1e-12 if t == Double else 2e-5
        np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                                   rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", [c for c in CASES if c not in ("int_ops", "update_f")])
def test_numpy_impl_matches_python(case):
    fn, make_args, _ = CASES[case]
    u = translate(fn)
    args = make_args()
    result = u.numpy_impl(*args)
    for i in range(0, N, 7):
        expected = fn(*element(args, u.in_types, i))
        actual = tuple(r[i] for r in result) if isinstance(result, tuple) else result[i]
        assert_close(actual, expected, u.out_type)


def test_numpy_impl_matches_python_on_vectors_and_arrays():
    fn, make_args, _ = CASES["update_f"]
    u = translate(fn)
    args = make_args()
    result = u.numpy_impl(*args)
    assert result.shape == (N, 4) and result.dtype == np.float32
    for i in range(N):
        assert_close(result[i], fn(*element(args, u.in_types, i)), Float)


def test_int_division_and_remainder_truncate_like_c():
    a = np.array([-7, 7, -7, 7, -1, 0, 49], np.int32)
    b = np.array([2, -2, -2, 2, 3, -5, 7], np.int32)
    result = translate(int_ops).numpy_impl(a, b)
    assert result.dtype == np.int32
    assert result.tolist() == [c_int_ops(int(x), int(y)) for x, y in zip(a, b)]


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6).filter(bool))
def test_int_division_property(a, b):
    assert translate(int_ops).numpy_impl(a, b) == c_int_ops(a, b)


def test_numpy_impl_keeps_declared_dtypes_and_broadcasts():
    assert translate(mult).numpy_impl(np.ones(3, np.float32), 2.0).dtype == np.float32
    assert translate(damped).numpy_impl(np.ones(3), 2).dtype == np.float64
    assert translate(clamp3).numpy_impl(np.float32([-5, 0.5, 5]), -1.0, 1.0).tolist() == [-1.0, 0.5, 1.0]
    assert translate(ramp).numpy_impl(np.float32([[-1.0, 2.0]])).tolist() == [[0.0, 4.0]]
    ints, floats_ = translate(scale_pair).numpy_impl((np.float32([1.5, 2.0]), np.int32([2, -3])))
    assert ints.dtype == np.int32 and ints.tolist() == [4, -6] and floats_.tolist() == [3.0, -6.0]


def test_vector_constructor_and_components():
    a, b = floats(shape=(N, 4)), floats(shape=(N, 4))
    result = translate(cross3).numpy_impl(a, b)
    np.testing.assert_allclose(result[:, :3], np.cross(a[:, :3], b[:, :3]), rtol=1e-5, atol=1e-5)
    assert (result[:, 3] == 0).all()


def test_a_vector_type_written_out_builds_a_vector_as_its_name_does():
    """`VectorType(Float, 4)(a, b, c, d)`, as the README spells it (`examples/quaternion.py`), is `Float4(a, b, c,
    d)`: it used to be refused, "`VectorType(Float, 4)` is not a function"."""
    a, b = floats(shape=(N, 4)), floats(shape=(N, 4))
    np.testing.assert_array_equal(translate(cross3_spelled_out).numpy_impl(a, b), translate(cross3).numpy_impl(a, b))
    assert "(float4)(" in python_userfun_c(translate(cross3_spelled_out), (Float4, Float4), Float4)


def test_signature_and_source():
    u = translate(update_f)
    assert u.param_names == ("f", "nid", "p", "particles", "cutoff")
    assert u.in_types == (Float4, Int, Float4, ArrayType(Float4, SizeVar("N")), Float)
    assert u.out_type == Float4
    assert translate(black_scholes).out_type == TupleType(Float, Float)
    assert translate(scale_pair).out_type == TupleType(Int, Float)
    assert u.source.startswith("def update_f(") and u.source.rstrip().endswith("else f")
    assert translate(absf) == translate(absf) and len({translate(absf), translate(absf), translate(add)}) == 2


def test_flops_count_floating_point_arithmetic_only():
    assert [translate(f).flops for f in (add, mult, absf, int_ops, cross3, scale_pair)] == [1, 1, 0, 0, 9, 1]


def string_annotations(x: "Float4", n: "Int") -> "(Float, Int)":
    return (x.w, n)


def test_string_annotations_are_evaluated_in_the_module():
    u = translate(string_annotations)
    assert u.in_types == (Float4, Int) and u.out_type == TupleType(Float, Int)


def test_closures_with_other_constants_are_other_functions():
    assert translate(make_band_gain(1.5)) != translate(make_band_gain(2.0))
    assert "x * 2.0f" in python_userfun_c(translate(make_band_gain(2.0)))


def decorated(fn):
    return fn


@decorated
def decorated_abs(x: Float) -> Float:
    return abs(x)


def test_decorators_are_not_part_of_the_source():
    assert translate(decorated_abs).source.startswith("def decorated_abs(")
    assert python_userfun_c(translate(decorated_abs)) == "return fabs(x);"


def test_c_literals_follow_the_operand_types():
    assert python_userfun_c(translate(absf)) == "return x >= 0.0f ? x : -x;"
    assert "0.5f" in python_userfun_c(translate(ramp))
    damped_c = python_userfun_c(translate(damped))
    assert "0.1" in damped_c and not re.search(r"\d\.?\d*f\b", damped_c)
    assert "(int)abs(a)" in python_userfun_c(translate(int_ops))
    assert "select(" in python_userfun_c(translate(absf), (Float4,), Float4)


def test_tuple_results_are_structs():
    c = python_userfun_c(translate(black_scholes))
    assert "Tuple_float_float result;" in c and "result._0 = " in c and c.endswith("return result;")
    assert "p._1 * 2" in python_userfun_c(translate(scale_pair))


# ---------------------------------------------------------------------------------------------------
# The generated C on an OpenCL device

@pytest.fixture(scope="module")
def device():
    cl = pytest.importorskip("pyopencl")
    try:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except cl.Error:
        devices = []
    if not devices:
        pytest.skip("no OpenCL device")
    context = cl.Context([devices[0]])
    return cl, context, cl.CommandQueue(context)


def c_name(t):
    return "int" if t == Bool else c_type_name(t)


def kernel_source(u, in_types, out_type):
    """The user function and a kernel `k` that applies it to element `i` of every input buffer."""
    tuples = [t for t in (*in_types, out_type) if isinstance(t, TupleType)]
    lines = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"] + [c_struct_definition(t) for t in tuples]
    params = ", ".join(f"global {c_name(t.elem)}* {n}" if isinstance(t, ArrayType) else f"{c_name(t)} {n}"
                       for n, t in zip(u.param_names, in_types))
    lines.append(f"{c_name(out_type)} {u.name}({params}) {{\n{python_userfun_c(u, in_types, out_type)}\n}}")
    buffers, body, args = [], [], []
    for k, t in enumerate(in_types):
        if isinstance(t, ArrayType):
            buffers.append(f"global {c_name(t.elem)}* in{k}")
            args.append(f"in{k}")
        elif isinstance(t, TupleType):
            body.append(f"{c_name(t)} a{k};")
            for j, e in enumerate(t.elems):
                buffers.append(f"global {c_name(e)}* in{k}_{j}")
                body.append(f"a{k}._{j} = in{k}_{j}[i];")
            args.append(f"a{k}")
        else:
            buffers.append(f"global {c_name(t)}* in{k}")
            args.append(f"in{k}[i]")
    body.append(f"{c_name(out_type)} r = {u.name}({', '.join(args)});")
    outs = out_type.elems if isinstance(out_type, TupleType) else (out_type,)
    for j, e in enumerate(outs):
        buffers.append(f"global {c_name(e)}* out{j}")
        body.append(f"out{j}[i] = r{f'._{j}' if isinstance(out_type, TupleType) else ''};")
    lines.append(f"kernel void k({', '.join(buffers)}) {{\n    int i = get_global_id(0);\n    "
                 + "\n    ".join(body) + "\n}")
    return "\n".join(lines)


def run_on_device(device, u, args, in_types, out_type, n):
    cl, context, queue = device
    program = cl.Program(context, kernel_source(u, in_types, out_type)).build()
    flags = cl.mem_flags
    flat = [a for arg in args for a in (arg if isinstance(arg, tuple) else (arg,))]
    buffers = [cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
               for a in flat]
    outs = out_type.elems if isinstance(out_type, TupleType) else (out_type,)
    results = [np.empty((n, e.width) if isinstance(e, VectorType) else (n,),
                        np.int32 if e == Bool else e.dtype) for e in outs]
    out_buffers = [cl.Buffer(context, flags.WRITE_ONLY, r.nbytes) for r in results]
    program.k(queue, (n,), None, *buffers, *out_buffers)
    for r, b in zip(results, out_buffers):
        cl.enqueue_copy(queue, r, b)
    return tuple(results) if isinstance(out_type, TupleType) else results[0]


@pytest.mark.parametrize("case", list(CASES))
def test_c_matches_numpy_impl(device, case):
    fn, make_args, _ = CASES[case]
    u = translate(fn)
    if Double in u.in_types and "cl_khr_fp64" not in device[2].device.extensions:
        pytest.skip("the device has no doubles")
    args = make_args()
    actual = run_on_device(device, u, args, u.in_types, u.out_type, N)
    assert_close(actual, u.numpy_impl(*args), u.out_type)


def vector_type(t):
    return TupleType(*(vector_type(e) for e in t.elems)) if isinstance(t, TupleType) else VectorType(t, 4)


@pytest.mark.parametrize("case", [c for c, (_, _, elementwise) in CASES.items() if elementwise])
def test_float4_c_matches_numpy_impl(device, case):
    fn, make_args, _ = CASES[case]
    u = translate(fn)
    args = [a.reshape(N // 4, 4) for a in make_args()]
    actual = run_on_device(device, u, args, tuple(map(vector_type, u.in_types)), vector_type(u.out_type), N // 4)
    assert_close(actual, u.numpy_impl(*args), u.out_type)


def test_vector_constructor_on_device(device):
    u = translate(cross3)
    args = [floats(shape=(N, 4)), floats(shape=(N, 4))]
    assert_close(run_on_device(device, u, args, u.in_types, u.out_type, N), u.numpy_impl(*args), Float)


# ---------------------------------------------------------------------------------------------------
# Errors

def line_of(fn, text):
    """The file line of the first line of `fn` (the `def` line when `text` is None) that holds `text`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if (text or "def ") in line and (i or not text))


def no_param_annotation(x) -> Float:
    return x


def no_result_annotation(x: Float):
    return x


def bad_annotation(x: "int") -> Float:
    return x


def while_loop(x: Float) -> Float:
    while x > 1.0:
        x = x / 2.0
    return x


def for_loop(x: ArrayType(Float, 4)) -> Float:
    for v in x:
        s = v
    return s


def uses_lambda(x: Float) -> Float:
    g = lambda y: y  # noqa: E731
    return g(x)


def uses_list(x: Float) -> Float:
    return [x, x][0]


def calls_unknown(x: Float) -> Float:
    return frobnicate(x)  # noqa: F821


def calls_len(x: Float) -> Float:
    return len(x)


def floor_division(a: Int, b: Int) -> Int:
    return a // b


def returns_vector(v: Float4) -> Float:
    return v * 2.0


def not_every_path_returns(x: Float) -> Float:
    if x > 0.0:
        return x


def used_before_assignment(x: Float) -> Float:
    y = z + x  # noqa: F821
    z = 1.0
    return y


def uses_string_constant(x: Float) -> Float:
    return x * NAME


def component_of_scalar(x: Float) -> Float:
    return x.y


def dot(a: Float, b: Float) -> Float:
    return a * b


def vector_of_five(x: Float) -> Float:
    return VectorType(Float, 5)(x).x


def calls_a_call(x: Float) -> Float:
    return line_of(x)(x)


@pytest.mark.parametrize("fn, text, message", [
    (no_param_annotation, None, "parameter `x` has no type annotation"),
    (no_result_annotation, None, "the result has no type annotation"),
    (bad_annotation, None, "the annotation of parameter `x` is not a lift type: 'int'"),
    (while_loop, "while", "`while` loops are not supported in user functions"),
    (for_loop, "for", "user functions loop over `range(...)` only, not over `x`"),
    (uses_lambda, "lambda", "lambdas are not supported in user functions"),
    (uses_list, "[x, x]", "lists are not supported in user functions"),
    (calls_unknown, "frobnicate", "unknown function `frobnicate`"),
    (calls_len, "len", "`len` takes one array"),
    (floor_division, "//", "the operator `//` is not supported in user functions"),
    (returns_vector, "v * 2.0", "a value of type Float4 where Float is expected"),
    (not_every_path_returns, "if", "only one branch of this `if` returns"),
    (used_before_assignment, "z + x", "`z` is used before it is assigned"),
    (uses_string_constant, "NAME", "`NAME` is not a number"),
    (component_of_scalar, "x.y", "`.y` needs a vector, not a value of type Float"),
    (dot, None, "`dot` is a keyword or built-in of OpenCL C: rename it"),
    (vector_of_five, "VectorType", "`VectorType(Float, 5)`: VectorType: width must be one of"),
    (calls_a_call, "line_of", "`line_of(x)` is not a function"),
])
def test_errors_name_the_function_the_line_and_the_construct(fn, text, message):
    with pytest.raises(LiftTypeError) as error:
        translate(fn)
    assert f"user function {fn.__name__}, line {line_of(fn, text)}: {message}" in str(error.value)


def test_lambdas_are_rejected():
    with pytest.raises(LiftTypeError, match="defined with `def`"):
        translate(lambda x: x)


def test_vector_condition_cannot_choose_a_scalar_result():
    with pytest.raises(LiftTypeError, match="cannot be returned under a vector condition"):
        python_userfun_c(translate(ramp), (Float4,), Float)
