"""Every program of the paper's Figures 2, 5, 6, 7 and 9: its type, its notation, and its value against numpy."""


import numpy as np
import pytest

import lift
from lift import infer, interpret, paper, python_source
from numpy_references import black_scholes, md

RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("name, expected", [
    ("asum", "Float[1]"), ("asum_nvidia", "Float[1]"), ("asum_amd", "Float[1]"), ("asum_intel", "Float[1]"),
])
def test_asum_types(examples, name, expected):
    assert str(infer(examples["asum"].kernels[name]).type) == expected


@pytest.mark.parametrize("name", ["asum", "asum_nvidia", "asum_amd", "asum_intel"])
@pytest.mark.parametrize("n", [1 << 18, 3 << 18])
def test_asum_values(examples, name, n):
    x = _f32(n)
    got = interpret(examples["asum"].kernels[name], x)
    assert got.shape == (1,) and got.dtype == np.float32
    np.testing.assert_allclose(got[0], np.abs(x).sum(dtype=np.float64), rtol=1e-4)


def test_asum_notation(examples):
    k = examples["asum"].kernels
    assert paper(k["asum"]) == "reduce(add, 0.0) ∘ map(absf)"
    assert paper(k["asum_intel"]) == (
        "reduce-seq(add, 0.0) ∘ join ∘ asScalar ∘ map-workgroup(join ∘ map-local(reduce-seq(vectorize-4(abs_and_add), "
        "vectorize-4(0.0))) ∘ split-8192) ∘ asVector-4 ∘ split-32768")
    assert "iterate-7(join ∘ map-local(reduce-seq(add, 0.0)) ∘ split-2)" in paper(k["asum_nvidia"])
    assert "reorder-stride-128" in paper(k["asum_nvidia"])


def test_asum_split_constraint_is_checked(examples):
    with pytest.raises(lift.LiftSizeError, match="multiple of 32768"):
        interpret(examples["asum"].kernels["asum_intel"], _f32(1000))


def test_scal(examples):
    x = _f32(4096)
    for name in ("scal", "scal_vectorised"):
        program = examples["scal"].kernels[name]
        assert str(infer(program).type) == "Float[N]"
        np.testing.assert_allclose(interpret(program, np.float32(2.5), x), 2.5 * x, rtol=1e-6)
    assert paper(examples["scal"].kernels["scal_vectorised"]) == (
        "λ a, x. join ∘ map-workgroup(asScalar ∘ map-local(λ v. vectorize-4(mult)(a, v)) ∘ asVector-4) ∘ split-1024(x)")


def test_dot(examples):
    x, y = _f32(1 << 16), _f32(1 << 16)
    for name in ("dot", "dot_cpu"):
        got = interpret(examples["dot"].kernels[name], x, y)
        np.testing.assert_allclose(got[0], np.dot(x.astype(np.float64), y), rtol=1e-4, atol=1e-4)
    assert paper(examples["dot"].kernels["dot"]) == "λ x, y. reduce(add, 0.0) ∘ map(mult) ∘ zip(x, y)"


def test_gemv(examples):
    m, n = 64, 96
    a, x, y = _f32(m, n), _f32(n), _f32(m)
    program = examples["gemv"].kernels["gemv"]
    assert str(infer(program).type) == "Float[M]"
    got = interpret(program, a, x, y, np.float32(1.5), np.float32(-0.5))
    np.testing.assert_allclose(got, 1.5 * a @ x - 0.5 * y, rtol=1e-4, atol=1e-4)


def test_gemv_at_4096_is_vectorised(examples):
    a, x, y = _f32(4096, 4096), _f32(4096), _f32(4096)
    got = interpret(examples["gemv"].kernels["gemv"], a, x, y, np.float32(1.0), np.float32(1.0))
    np.testing.assert_allclose(got, a @ x + y, rtol=1e-3, atol=1e-3)


def test_blackscholes(examples):
    pf = examples["blackscholes"]
    (s,) = pf.inputs("blackscholes", {"N": 1000})
    got = interpret(pf.kernels["blackscholes"], s)
    assert str(infer(pf.kernels["blackscholes"]).type) == "<Float, Float>[N]"
    call, put = black_scholes(s)
    np.testing.assert_allclose(got["_0"], call, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got["_1"], put, rtol=1e-3, atol=1e-3)


def testmd(examples):
    pf = examples["md"]
    sizes = {"P": 256, "K": 16}
    positions, neighbours, cutoff = pf.inputs("md", sizes)
    program = pf.kernels["md"]
    assert str(infer(program).type) == "Float4[P][1]"
    got = interpret(program, positions, neighbours, cutoff)
    np.testing.assert_allclose(got[:, 0, :], md(positions, neighbours, cutoff), rtol=1e-3, atol=1e-3)


def test_python_source_round_trips_every_example(examples):
    for pf in examples.values():
        namespace = {**vars(lift), **pf.namespace}
        for name, program in pf.kernels.items():
            source = python_source(program)
            again = eval(source, namespace)
            assert again == program, name
            assert infer(again).type == infer(program).type
