"""`lift.compile` of high-level programs with the default lowering (`lift.rules.default_lowering`): the
examples' programs, a matrix multiply, an all-pairs map and a normalisation, run on the OpenCL device and
compared with numpy; the explicit `lowering=` choices; `lift compile` of a high-level program."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, Zip, fun, interpret, paper
from lift.rules.default_lowering import LoweringError, default_lowering, lower
from lift.rules.reduction_choice import reduction_chunk
from lift.rules.engine import RewriteEngine
from lift.rules.lowering_choice import is_lowered

from opencl_device import MANIFEST_HOST, needs_device
from numpy_references import black_scholes, md
from userfuns import add, divide_by, mult, pair_force

RNG = np.random.default_rng(11)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
N, M, K = SizeVar("N"), SizeVar("M"), SizeVar("K")


def _f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


matmul = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
             lambda A, B: Map(lambda a: Map(lambda b: (Reduce(add, 0.0) @ Map(mult))(Zip(a, b)))(Transpose()(B)))(A))

all_pairs = fun([ArrayType(Float, N)],
                lambda x: Map(lambda p: Reduce(add, 0.0)(Map(lambda q: pair_force(p, q))(x)))(x))

normalised = fun([ArrayType(Float, N)], lambda x: Map(lambda xi: divide_by(xi, Reduce(add, 0.0)(x)))(x))

normalised_let = fun([ArrayType(Float, N)],
                     lambda x: fun(lambda s: Map(lambda v: divide_by(v, s))(x))(Reduce(add, 0.0)(x)))


def test_reduction_chunk_leaves_chunks_at_any_size():
    assert reduction_chunk(1 << 24) == 4096 and reduction_chunk(1 << 20) == 256 and reduction_chunk(4096) == 16
    assert reduction_chunk(16_777_213) == 4096 and reduction_chunk(3000) == 16 and reduction_chunk(20) == 16
    assert reduction_chunk(6) == 4 and reduction_chunk(7) == 4
    assert reduction_chunk(3) is None and reduction_chunk(None) is None


def test_asum_lowers_to_chunks_of_float4_lanes(examples):
    program = examples["asum"].kernels["asum"]
    lowered = default_lowering(program, {"N": 1 << 20}).replay(program)
    assert paper(lowered) == ("reduce-seq(add, 0.0) ∘ asScalar ∘ reduce-seq(vectorize-4(add), vectorize-4(0.0)) "
                              "∘ join ∘ map-global(reduce-seq(λ acc_1, x_2. vectorize-4(add)(acc_1, "
                              "vectorize-4(absf)(x_2)), vectorize-4(0.0))) ∘ split-64 ∘ asVector-4")


def test_without_vectors_asum_lowers_to_two_kernels_of_chunks(examples):
    """A device of native vector width 1 (where `vect-4` costs four operations, as four scalars do)."""
    program = examples["asum"].kernels["asum"]
    lowered = default_lowering(program, {"N": 1 << 20}, vector_width=1).replay(program)
    assert paper(lowered) == ("reduce-seq(add, 0.0) ∘ join ∘ map-global(reduce-seq(λ acc_1, x_2. add(acc_1, "
                              "absf(x_2)), 0.0)) ∘ split-256")


def test_a_map_of_scalars_maps_float4s_padded_to_whole_work_groups(examples):
    scal = examples["scal"].kernels["scal"]
    vectors = "asScalar ∘ map-global(λ xi. vectorize-4(mult)(a, xi)) ∘ asVector-4"
    assert paper(lower(scal, {"N": 1 << 20})) == f"λ a, x. {vectors}(x)"
    assert paper(lower(scal, {"N": 1000})) == f"λ a, x. take-(N) ∘ {vectors} ∘ pad-to-multiple-256(0.0)(x)"
    assert paper(lower(scal, {"N": 1000}, vector_width=1)) == \
        "λ a, x. take-(N) ∘ map-global(λ xi. mult(a, xi)) ∘ pad-to-multiple-64(0.0)(x)"
    blackscholes = examples["blackscholes"].kernels["blackscholes"]
    assert paper(lower(blackscholes, {"N": 1000})) == \
        "take-(N) ∘ map-global(bs_computation) ∘ pad-to-multiple-64(0.0)"


def test_matmul_lowers_to_two_dimensions():
    lowered = default_lowering(matmul, {"M": 33, "K": 17, "N": 5}).replay(matmul)
    assert "map-global[1](λ a. map-global(" in paper(lowered) and is_lowered(lowered)


def test_matmul_is_register_blocked_where_the_blocks_divide():
    lowered = default_lowering(matmul, {"M": 64, "K": 32, "N": 48}).replay(matmul)
    shown = paper(lowered)
    assert shown.startswith("λ A, B. join ∘ map-global[1](")
    assert shown.endswith("∘ map(split-16)(B)) ∘ split-4(A)")
    unblocked = paper(lower(matmul, {"M": 64}))                   # any K, N: naive, over the rows of a copy of Bᵀ
    assert unblocked.startswith("λ A, B. (λ t_0. map-global[1](λ a. map-global(")
    assert unblocked.endswith("∘ map-global[1](map-global(id)) ∘ transpose(B)")
    assert "toPrivate(reduce-seq(" in shown and is_lowered(lowered)


@needs_device
@pytest.mark.parametrize("stem, sizes", [("asum", {"N": 4096}), ("asum", {"N": 1000}), ("asum", {"N": 7}),
                                         ("dot", {"N": 8192}), ("scal", {"N": 1000})])
def test_blas_level_1(examples, stem, sizes):
    pf = examples[stem]
    inputs = pf.inputs(stem, sizes, seed=1)
    got = lift.compile(pf.kernels[stem])(*inputs)
    want = {"asum": lambda x: [np.abs(x).sum(dtype=np.float64)],
            "dot": lambda x, y: [np.dot(x.astype(np.float64), y)],
            "scal": lambda a, x: a * x}[stem](*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@needs_device
@pytest.mark.parametrize("sizes", [{"M": 8, "N": 64}, {"M": 37, "N": 100}])
def test_gemv(examples, sizes):
    A, x, y, a, b = examples["gemv"].inputs("gemv", sizes, seed=2)
    got = lift.compile(examples["gemv"].kernels["gemv"], lowering="default")(A, x, y, a, b)
    np.testing.assert_allclose(got, a * (A.astype(np.float64) @ x) + b * y, rtol=1e-4, atol=1e-3)


@needs_device
def test_blackscholes(examples):
    (s,) = examples["blackscholes"].inputs("blackscholes", {"N": 1000}, seed=3)
    got = lift.compile(examples["blackscholes"].kernels["blackscholes"])(s)
    call, put = black_scholes(s)
    np.testing.assert_allclose(got["_0"], call, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got["_1"], put, rtol=1e-3, atol=1e-3)


@needs_device
def testmd(examples):
    positions, neighbours, cutoff = examples["md"].inputs("md", {"P": 256, "K": 16}, seed=4)
    got = lift.compile(examples["md"].kernels["md"])(positions, neighbours, cutoff)
    np.testing.assert_allclose(got, md(positions, neighbours, cutoff), rtol=1e-3, atol=1e-3)


@needs_device
@pytest.mark.parametrize("m, k, n", [(16, 8, 12), (33, 17, 5), (12, 8, 32), (64, 32, 48)])
def test_matmul(m, k, n):
    A, B = _f32(m, k), _f32(k, n)
    np.testing.assert_allclose(lift.compile(matmul)(A, B), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


@needs_device
def test_all_pairs():
    x = _f32(300)
    d = x[None, :].astype(np.float64) - x[:, None]
    want = (d / (1.0 + d * d)).sum(axis=1)
    np.testing.assert_allclose(lift.compile(all_pairs)(x), want, rtol=1e-4, atol=1e-4)


def test_normalisation_reduces_once_then_maps_on_global_work_items():
    """The sum is let-bound outside the map (issue 17, item 7), computed once in two kernels of chunks; the map
    reading it runs on global work-items (issue 18). The sum, a reduction of no map, reduces float4 lanes of
    `map(id)` of its input (`reduce-map-id`)."""
    def reduced(a, x):
        return (f" ∘ reduce-seq(add, 0.0) ∘ asScalar ∘ reduce-seq(vectorize-4(add), vectorize-4(0.0)) ∘ join ∘ "
                f"map-global(reduce-seq(λ {a}, {x}. vectorize-4(add)({a}, vectorize-4(id)({x})), vectorize-4(0.0))) "
                "∘ split-4 ∘ asVector-4(x)")
    assert paper(default_lowering(normalised, {"N": 4096}).replay(normalised)) == \
        "λ x. (λ s_0. map-global(λ xi. divide_by(xi, s_0))(x))" + reduced("acc_2", "x_3")
    assert paper(default_lowering(normalised_let, {"N": 4096}).replay(normalised_let)) == \
        "λ x. (λ s. map-global(λ v. divide_by(v, s))(x))" + reduced("acc_1", "x_2")


@needs_device
@pytest.mark.parametrize("n", [200, 4096, 4099])
def test_normalisation(n):
    x = RNG.uniform(0.5, 1.0, n).astype(np.float32)
    want = x / x.sum(dtype=np.float64)
    np.testing.assert_allclose(lift.compile(normalised)(x), want, rtol=1e-4)
    np.testing.assert_allclose(lift.compile(normalised_let)(x), want, rtol=1e-4)
    np.testing.assert_allclose(lift.interpret(normalised_let, x), want, rtol=1e-4)
    np.testing.assert_allclose(lift.interpret(normalised, x), want, rtol=1e-4)


@needs_device
def test_explicit_derivation_and_derivation_file(examples, tmp_path):
    program = examples["asum"].kernels["asum"]
    derivation = default_lowering(program, {"N": 2048})
    (tmp_path / "asum.derivation.json").write_text(derivation.to_json())
    x = _f32(2048)
    for lowering in (derivation, tmp_path, str(tmp_path / "asum.derivation.json")):
        got = lift.compile(program, name="asum", lowering=lowering)(x)
        np.testing.assert_allclose(got, [np.abs(x).sum(dtype=np.float64)], rtol=1e-4)


def test_tuned_without_a_winner_is_one_clear_error(examples, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LoweringError, match="no derivation for kernel 'asum' at lift-out/asum/asum.derivation.json"):
        lift.compile(examples["asum"].kernels["asum"], name="asum", lowering="tuned")


def test_a_derivation_of_another_program_is_one_clear_error(examples):
    derivation = default_lowering(examples["asum"].kernels["asum"], {"N": 2048})
    with pytest.raises(LoweringError, match="does not apply to this program"):
        lift.compile(examples["scal"].kernels["scal"], lowering=derivation)


@needs_device
def test_cli_compiles_the_high_level_asum_and_its_kernel_runs(tmp_path):
    out = tmp_path / "asum.cl"
    done = subprocess.run([sys.executable, "-m", "lift.cli", "compile", "examples/asum.py", "--size", "N=16384",
                           "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(json.loads((tmp_path / "asum.json").read_text())["kernels"]) >= 2, "a reduction in several kernels"
    x = _f32(1 << 14)
    np.savez(tmp_path / "inputs.npz", x=x)
    subprocess.run([sys.executable, str(MANIFEST_HOST), str(out), str(tmp_path / "asum.json"),
                    str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")], capture_output=True, text=True, check=True)
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_allclose(got["out"], [np.abs(x).sum(dtype=np.float64)], rtol=1e-4)


def test_cli_lowering_option_names_a_missing_winner(tmp_path):
    done = subprocess.run([sys.executable, "-m", "lift.cli", "compile", str(EXAMPLES / "asum.py"), "--lowering", "tuned",
                           "-o", str(tmp_path / "asum.cl")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("error: no derivation for kernel 'asum'"), done.stderr


def test_asum_at_a_prime_size_lowers_to_two_kernels_of_padded_chunks(examples):
    program = examples["asum"].kernels["asum"]
    lowered = default_lowering(program, {"N": 16_777_213}).replay(program)
    assert paper(lowered).endswith("vectorize-4(0.0))) ∘ split-1024 ∘ asVector-4 ∘ pad-to-multiple-4096(0.0)")
    lowered = default_lowering(program, {"N": 16_777_213}, vector_width=1).replay(program)
    assert paper(lowered) == ("reduce-seq(add, 0.0) ∘ join ∘ map-global(reduce-seq(λ acc_1, x_2. add(acc_1, "
                              "absf(x_2)), 0.0)) ∘ split-4096 ∘ pad-to-multiple-4096(0.0)")


@needs_device
def test_a_high_level_stencil_keeps_its_maps_of_views(examples):
    """`pad2d` and `slide2d` map views over rows (`map(pad)`, `map(slide)`): views in N dimensions, left as they
    are; only the neighbourhood function's maps run on work-items."""
    pf = examples["stencils"]
    program = pf.kernels["conv2d_high"]
    sizes = {"N": 45, "M": 67}
    a, k = pf.inputs("conv2d_high", sizes, seed=1)
    lowered = lower(program, sizes)
    assert "map(pad(1, 1, clamp))" in lift.paper(lowered) and "map(slide(3, 1))" in lift.paper(lowered)
    np.testing.assert_allclose(lift.compile(program)(a, k), interpret(program, a, k, numpy_shapes=True), rtol=1e-5,
                               atol=1e-6)


def test_a_2d_stencil_whose_rows_are_joined_runs_on_two_dimensions(examples):
    """`map(join ∘ map(f) ∘ transpose)` (a 2-D stencil's rows of windows, joined): the map under the views is the
    second dimension of global work-items, not a sequential loop in a work-item per row (its windows in blocks
    of vectors, `_stencil`)."""
    jacobi2d = examples["stencils"].kernels["jacobi2d_high"]
    sizes = {"M": 9, "N": 11}
    lowered = default_lowering(jacobi2d, sizes).replay(jacobi2d, RewriteEngine(sizes=sizes))
    assert paper(lowered).startswith("λ a, k. map-global[1](join ∘ take-(N) ∘ join ∘ map-global(")
    a = RNG.uniform(-1, 1, (9, 11)).astype(np.float32)
    k = (np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]]) / 5).astype(np.float32)
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    want = sum(k[i, j] * p[i:i + 9, j:j + 11] for i in range(3) for j in range(3))
    np.testing.assert_allclose(interpret(lowered, a, k), want, rtol=1e-5, atol=1e-6)


STENCIL_BOUNDARIES = ["clamp", "mirror", "wrap", 0.0]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["jacobi1d_high", "conv2d_high", "jacobi3d_high"]), st.sampled_from(STENCIL_BOUNDARIES),
       st.integers(1, 70), st.integers(1, 4), st.integers(0, 1 << 16))
def test_a_stencil_lowers_to_blocks_of_vector_windows_at_any_size(examples, kernel, boundary, n, m, seed):
    """A high-level stencil (1-D, 2-D or 3-D) at any row length: each window's fold unrolled, 16 windows (fewer
    in rows shorter than 16) to a vector, in blocks padded where they do not divide the row; the interpreter
    gives what it gives for the program as written."""
    program = examples["stencils"].namespace[f"{kernel}_program"](boundary)
    sizes = {"N": n, "M": m, "O": 2}
    shape = {"jacobi1d_high": (n,), "conv2d_high": (m, n), "jacobi3d_high": (2, m, n)}[kernel]
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, shape).astype(np.float32) / 2
    k = rng.integers(-4, 5, (3, 3) if kernel == "conv2d_high" else (3 ** len(shape),)).astype(np.float32) / 4
    lowered = lower(program, sizes)
    text = paper(lowered)
    assert "reduce-seq-unroll(" in text and "vectorize-" in text and "map-global(" in text, text
    assert ("pad-to-multiple" in text) == (n % min(64, 1 << max(n - 1, 1).bit_length()) != 0), text
    np.testing.assert_allclose(np.ravel(interpret(lowered, a, k)), np.ravel(interpret(program, a, k)), rtol=1e-5)
