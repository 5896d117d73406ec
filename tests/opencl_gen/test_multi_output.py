"""Programs with several outputs: tuples of arrays, `unzip`, fused kernels writing several buffers, sharing.

Each generated program runs on the OpenCL CPU device and is compared with `lift.interpret` of the same
program and with numpy.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Get, Join, MapGlb, MapSeq, ReduceSeq, SizeVar, Split, Tuple, TupleType,
                  Unzip, Zip, fun, infer, interpret, paper, python_source, userfun)
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate

from opencl_device import MANIFEST_HOST, needs_device, needs_oclgrind, run_under_oclgrind
from userfuns import absf, add, neg
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
N = SizeVar("N")
V = ArrayType(Float, N)


@userfun
def abs_and_square(x: Float) -> TupleType(Float, Float):
    return (x if x >= 0.0 else -x, x * x)


def _chunk_sums(t):
    """`unzip ∘ map-global(λc. tuple(map-seq(abs)(c), reduce-seq(add, 0)(c))) ∘ split-4`: two arrays, one map."""
    return Unzip()(MapGlb(lambda c: Tuple(MapSeq(absf)(c), ReduceSeq(add, 0.0)(c)))(Split(4)(t)))


two_kernels = fun([V], lambda x: Tuple(MapGlb(absf)(x), ReduceSeq(add, 0.0)(MapGlb(neg)(x))))
one_kernel = fun([V], lambda x: fun(lambda t: Tuple(Join()(Get(t, 0)), Join()(Get(t, 1))))(_chunk_sums(x)))
struct_split = fun([V], lambda x: Unzip()(MapGlb(abs_and_square)(x)))
shared_twice = fun([V], lambda x: Tuple(MapGlb(neg)(MapGlb(absf)(x)), ReduceSeq(add, 0.0)(MapGlb(absf)(x))))


def _axpydot_written_out(a, w, v, u, reverse=False):
    """The fused AXPYDOT with the shared tuple written out twice in the tree, in either output order."""
    ex = _example("axpydot").namespace

    def t():
        return (Unzip() @ MapGlb(lambda c: Tuple(
            MapSeq(lambda p: ex["w_minus_av"](a, Get(p, 0), Get(p, 1)))(c),
            ReduceSeq(lambda acc, p: ex["axpy_dot_step"](acc, a, Get(p, 0), Get(p, 1), Get(p, 2)), 0.0)(c)
        )) @ Split(8))(Zip(w, v, u))

    z, r = Join()(Get(t(), 0)), (ReduceSeq(add, 0.0) @ Join())(Get(t(), 1))
    return Tuple(r, z) if reverse else Tuple(z, r)


_loaded = {}


def _example(stem):
    from lift.ir.program_file import load_program_file

    if stem not in _loaded:
        _loaded[stem] = load_program_file(EXAMPLES / f"{stem}.py")
    return _loaded[stem]


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def _check(program, inputs, numpy_result, sizes=None, kernels=None):
    """Run on the device; compare with the interpreter and numpy, in numpy's shapes (a full reduction is 0-d);
    return the generated program."""
    want = interpret(program, *inputs, numpy_shapes=True)
    got = compile(program, sizes=sizes)(*inputs)
    assert type(got) is type(want)
    for g, w, n in zip(_as_tuple(got), _as_tuple(want), _as_tuple(numpy_result)):
        assert g.shape == w.shape == np.shape(n)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)
        np.testing.assert_allclose(g, n, rtol=2e-4, atol=2e-3)
    generated = generate(program, sizes=sizes)
    if kernels is not None:
        assert len(generated.kernels) == kernels
    return generated


def _x(n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)


def _axpydot_inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    a = np.float32(1.5)
    w, v, u = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(3))
    z = w - a * v
    return (a, w, v, u), (z, np.array(np.dot(z.astype(np.float64), u), np.float32))


# --- the pattern -------------------------------------------------------------------------------------------


def test_unzip_types_interprets_and_prints():
    program = fun([V, ArrayType(Float, N)], lambda x, y: Unzip()(Zip(x, y)))
    assert str(infer(program).type) == "<Float[N], Float[N]>"
    x, y = _x(10), _x(10, 1)
    got = interpret(program, x, y)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], y)
    assert paper(program) == "λ x, y. unzip ∘ zip(x, y)"
    assert eval(python_source(program), vars(lift)) == program


def test_unzip_of_a_non_tuple_array_is_a_one_line_type_error():
    with pytest.raises(lift.LiftTypeError) as e:
        fun([V], lambda x: Unzip()(MapGlb(absf)(x)))
    assert re.fullmatch(r"unzip expects an array of tuples, got Float\[N\] \(at body.f\), written at "
                        r"\S*test_multi_output.py:\d+", str(e.value))


def test_interpreter_returns_a_tuple_of_arrays_for_several_outputs():
    x = _x(12)
    got = interpret(one_kernel, x)
    np.testing.assert_allclose(got[0], np.abs(x))
    np.testing.assert_allclose(got[1], x.reshape(3, 4).sum(axis=1), rtol=1e-6)


# --- generated programs ----------------------------------------------------------------------------------------


@needs_device
@pytest.mark.parametrize("n", [1000, 4099])
def test_two_independent_outputs(n):
    x = _x(n)
    g = _check(two_kernels, (x,), (np.abs(x), np.array(-x.sum(), np.float32)), kernels=3)
    assert [m.name for m in g.outputs] == ["out0", "out1"]


@needs_device
@pytest.mark.parametrize("n", [1000, 4 * 1031])
def test_one_kernel_writes_two_outputs(n):
    x = _x(n)
    g = _check(one_kernel, (x,), (np.abs(x), x.reshape(-1, 4).sum(axis=1)), sizes={"N": n}, kernels=1)
    assert g.temporaries == [] and [m.name for m in g.outputs] == ["out0", "out1"]
    assert "out0[" in g.source and "out1[" in g.source


@needs_device
def test_unzip_stores_a_tuple_result_into_two_outputs():
    x = _x(1000)
    g = _check(struct_split, (x,), (np.abs(x), x * x), kernels=1)
    assert "out0[g_" in g.source and "out1[g_" in g.source


@needs_device
@pytest.mark.parametrize("n", [1000, 8 * 4099])
@pytest.mark.parametrize("form", ["let", "written-out", "written-out-reversed"])
def test_axpydot_fused_is_two_kernels_writing_z_in_place(n, form):
    inputs, (z, r) = _axpydot_inputs(n)
    if form == "let":
        program = _example("axpydot").kernels["axpydot_fused"]
    else:
        program = fun([Float, V, V, V], lambda a, w, v, u: _axpydot_written_out(a, w, v, u, form.endswith("reversed")))
    expected = (r, z) if form.endswith("reversed") else (z, r)
    g = _check(program, inputs, expected, sizes={"N": n}, kernels=2)
    z_out = g.outputs[1 if form.endswith("reversed") else 0].name
    fused = g.kernels[0]
    assert [m.name for m in fused.params if m.kind == "output"] == [z_out], "z goes straight to its output"
    assert [m.name for m in g.temporaries] == [m.name for m in fused.params if m.kind == "temporary"]
    assert z_out not in [m.name for m in g.kernels[1].params], "z is never read back"


@needs_device
@pytest.mark.parametrize("n", [1000, 8 * 1031])
def test_axpydot_shared_computes_z_once(n):
    inputs, expected = _axpydot_inputs(n, seed=2)
    program = _example("axpydot").kernels["axpydot_shared"]
    g = _check(program, inputs, expected, kernels=3)
    assert sum("w_minus_av(a" in l for k in g.kernels for l in k.lines) == 1
    assert "out0" in [m.name for m in g.kernels[1].params], "the dot product reads z from its output"


@needs_device
def test_a_computation_written_twice_runs_once():
    x = _x(1000)
    g = _check(shared_twice, (x,), (-np.abs(x), np.array(np.abs(x).sum(), np.float32)), kernels=3)
    assert sum("absf(" in l for k in g.kernels for l in k.lines) == 1


def test_high_level_axpydot_interprets():
    inputs, (z, r) = _axpydot_inputs(100)
    got = interpret(_example("axpydot").kernels["axpydot"], *inputs)
    np.testing.assert_allclose(got[0], z, rtol=1e-6)
    np.testing.assert_allclose(got[1], r, rtol=1e-4)


def test_one_result_in_two_outputs_is_a_one_line_error():
    program = fun([V], lambda x: Tuple(MapGlb(absf)(x), MapGlb(absf)(x)))
    with pytest.raises(lift.LiftCodegenError) as e:
        generate(program)
    message = str(e.value)
    assert "\n" not in message and "map-global(absf) at body.args1" in message and "two places" in message


def test_an_input_as_an_output_is_a_one_line_error():
    with pytest.raises(lift.LiftCodegenError, match=r"^the array at body.args0 must be written by a map"):
        generate(fun([V], lambda x: Tuple(x, MapGlb(absf)(x))))


# --- oclgrind, the manifest and the command line ------------------------------------------------------------------


@needs_oclgrind
def test_fused_axpydot_is_race_free_and_in_bounds_under_oclgrind(tmp_path):
    inputs, expected = _axpydot_inputs(1000, seed=4)
    got = run_under_oclgrind(EXAMPLES / "axpydot.py", "axpydot_fused", {"N": 1000}, inputs, tmp_path)
    want = interpret(_example("axpydot").kernels["axpydot_fused"], *inputs)
    for g, w, n in zip(got, want, expected):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)
        np.testing.assert_allclose(g, n, rtol=2e-4, atol=2e-3)





@needs_device
def test_lift_compile_writes_every_output_and_runs_from_the_manifest_alone(tmp_path):
    n = 8 * 1031
    result = subprocess.run([sys.executable, "-m", "lift.cli", "compile", str(EXAMPLES / "axpydot.py"),
                             "--kernel", "axpydot_fused", "--size", f"N={n}", "-o", str(tmp_path / "axpydot.cl")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "axpydot.json").read_text())
    assert manifest["outputs"] == [{"name": "out0", "dtype": "float32", "shape": [str(n)]},
                                   {"name": "out1", "dtype": "float32", "shape": ["1"]}]
    assert [k["name"] for k in manifest["kernels"]] == ["axpydot_fused_k0", "axpydot_fused_k1"]
    assert "outputs: out0: float32[8248], out1: float32[1]" in (tmp_path / "axpydot.cl").read_text()
    (a, w, v, u), (z, r) = _axpydot_inputs(n, seed=5)
    np.savez(tmp_path / "inputs.npz", a=a, w=w, v=v, u=u)
    subprocess.run([sys.executable, str(MANIFEST_HOST), str(tmp_path / "axpydot.cl"),
                    str(tmp_path / "axpydot.json"), str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")],
                   capture_output=True, text=True, check=True)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["out0"], z, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["out1"], r, rtol=2e-4, atol=2e-3)
@needs_device
@pytest.mark.parametrize("n", [64, 8 * 37])
def test_lanes_of_a_stored_tuple_of_vectors_are_read_one_by_one(n):
    """A vectorised map of pairs stored as an array of tuples of vectors (a struct of `float8`s per element), then
    read back lane by lane by `asScalar ∘ get-k ∘ unzip` in the next kernel: each scalar is lane `i mod 8` of
    component `k` of the struct `i / 8` (it used to read the whole struct)."""
    from lift import AsScalar, AsVector, Map, Vectorize
    lanes = fun([V], lambda x: fun(lambda m: Map(add)(Zip(*(AsScalar()(Get(Unzip()(m), k)) for k in range(2)))))(
        Map(Vectorize(8, abs_and_square))(AsVector(8)(x))))
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    got = compile(lanes)(x)
    np.testing.assert_allclose(got, interpret(lanes, x), rtol=1e-6)
    np.testing.assert_allclose(got, np.abs(x) + x * x, rtol=1e-6)
