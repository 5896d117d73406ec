"""Stencils of any dimension (Hagedorn et al., CGO 2018): `slide` and `pad` as views nested in maps, under
transpose, composed; the hand-lowered programs of `examples/stencils.py` against numpy (`np.pad` and slicing,
written independently of the views) and the reference interpreter, at sizes that are and are not multiples of
anything, for every boundary."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Map, MapGlb, MapSeq, Pad, ReduceSeq, SizeVar, Slide, Transpose, fun, interpret
from lift.opencl_gen.compiled import compile
from lift.rules.default_lowering import default_lowering

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

RNG = np.random.default_rng(17)
BOUNDARIES = ["clamp", "wrap", "mirror", 0.0, 1.5]
NUMPY_MODE = {"clamp": "edge", "wrap": "wrap", "mirror": "symmetric"}


def _grid(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _padded(a, boundary):
    """`a` padded by one element on both sides of every axis."""
    if isinstance(boundary, str):
        return np.pad(a, 1, mode=NUMPY_MODE[boundary])
    return np.pad(a, 1, mode="constant", constant_values=boundary)


def _shifts(p, shape):
    """`{offset: p[offset : offset + shape]}` for every offset in {0, 1, 2}^ndim (the neighbours)."""
    out = {}
    for offset in np.ndindex(*(3,) * len(shape)):
        out[offset] = p[tuple(slice(o, o + n) for o, n in zip(offset, shape))]
    return out


def _stencil(a, boundary, weights):
    """The weighted sum of every point's 3^ndim neighbourhood (`weights` indexed by offset)."""
    s = _shifts(_padded(a.astype(np.float64), boundary), a.shape)
    return sum(w * s[offset] for offset, w in np.ndenumerate(weights))


JACOBI3 = np.array([0.25, 0.5, 0.25])
SUM3 = np.ones(3)
JACOBI5 = np.array([[0, 0.2, 0], [0.2, 0.2, 0.2], [0, 0.2, 0]])
JACOBI7 = np.zeros((3, 3, 3))
JACOBI7[1, 1, 1] = 0.4
for _o in ((0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)):
    JACOBI7[_o] = 0.1


def _check(got, want, rtol=1e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5)


def _run(program, sizes, *inputs):
    return compile(program, sizes=sizes)(*inputs)


@pytest.fixture(scope="module")
def S(examples):
    return examples["stencils"].namespace


# --- the numpy reference itself -------------------------------------------------------------------------


def test_numpy_reference_is_the_stencil_written_by_hand():
    a = np.arange(5.0)
    want = [0.25 * a[max(i - 1, 0)] + 0.5 * a[i] + 0.25 * a[min(i + 1, 4)] for i in range(5)]
    np.testing.assert_allclose(_stencil(a, "clamp", JACOBI3), want)
    np.testing.assert_allclose(_stencil(a, "wrap", SUM3), [a[i - 1] + a[i] + a[(i + 1) % 5] for i in range(5)])
    np.testing.assert_allclose(_stencil(a, 0.0, SUM3)[[0, 4]], [a[0] + a[1], a[3] + a[4]])


# --- 1-D ------------------------------------------------------------------------------------------------


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("n", [1000, 1023])
def test_jacobi1d_user_function_reads_the_window(S, n, boundary):
    """The window copied to private memory and passed to a user function that indexes it (`w[i]`)."""
    a = _grid(n)
    _check(_run(S["jacobi1d_program"](boundary), {"N": n}, a), _stencil(a, boundary, JACOBI3))


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("n", [1000, 1023])
def test_jacobi1d_reduction_over_the_window(S, n, boundary):
    a = _grid(n)
    program = S["jacobi1d_sum_program"](boundary)
    got = _run(program, {"N": n}, a)
    _check(got, _stencil(a, boundary, SUM3))
    _check(got, interpret(program, a))


# --- 2-D ------------------------------------------------------------------------------------------------


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("m, n", [(37, 53), (32, 64)])
def test_jacobi2d(S, m, n, boundary):
    a = _grid(m, n)
    _check(_run(S["jacobi2d_program"](boundary), {"M": m, "N": n}, a), _stencil(a, boundary, JACOBI5))


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("m, n", [(37, 53), (32, 64), (3, 1)])
def test_conv2d(S, m, n, boundary):
    a, k = _grid(m, n), _grid(3, 3)
    program = S["conv2d_program"](boundary)
    got = _run(program, {"M": m, "N": n}, a, k)
    _check(got, _stencil(a, boundary, k))
    _check(got, interpret(program, a, k))


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_jacobi2d_as_a_convolution_matches_the_interpreter(S, boundary):
    a, k = _grid(37, 53), JACOBI5.astype(np.float32)
    program = S["conv2d_program"](boundary)
    got = _run(program, {"M": 37, "N": 53}, a, k)
    _check(got, _stencil(a, boundary, JACOBI5))
    _check(got, interpret(program, a, k))


# --- 3-D ------------------------------------------------------------------------------------------------


@needs_device
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("o, m, n", [(9, 10, 11), (8, 8, 8)])
def test_jacobi3d(S, o, m, n, boundary):
    a, k = _grid(o, m, n), JACOBI7.astype(np.float32).reshape(27)
    program = S["jacobi3d_program"](boundary)
    got = _run(program, {"O": o, "M": m, "N": n}, a, k)
    _check(got, _stencil(a, boundary, JACOBI7))
    _check(got, interpret(program, a, k))


def test_the_high_level_convolution_is_the_convolution(S):
    """`map(map(dot with k)) ∘ slide2d ∘ pad2d` as a user writes it, in the interpreter."""
    a, k = _grid(37, 53), _grid(3, 3)
    _check(interpret(S["conv2d_high"], a, k)[..., 0], _stencil(a, "clamp", k))


# --- high-level stencils, lowered by the default lowering -----------------------------------------------

HIGH_LEVEL = {  # kernel: (weights, sizes that are multiples of any chunk, sizes that are not)
    "jacobi1d_high": (JACOBI3, {"N": 1024}, {"N": 1021}),
    "conv2d_high": (JACOBI5, {"M": 32, "N": 64}, {"M": 37, "N": 53}),
    "jacobi3d_high": (JACOBI7, {"O": 8, "M": 8, "N": 16}, {"O": 9, "M": 10, "N": 11}),
}


def _grid_of(sizes):
    return _grid(*(sizes[k] for k in ("O", "M", "N") if k in sizes))


def _weights(kernel, weights):
    return (weights if kernel == "conv2d_high" else weights.reshape(-1)).astype(np.float32)


@needs_device
@pytest.mark.parametrize("boundary", ["clamp", "mirror", 0.0])
@pytest.mark.parametrize("multiple", [True, False])
@pytest.mark.parametrize("kernel", HIGH_LEVEL)
def test_high_level_stencils_compile_with_the_default_lowering(S, kernel, multiple, boundary):
    """`lift.compile` of the stencil as a user writes it (no lowering given): numpy and the interpreter agree."""
    weights, even, odd = HIGH_LEVEL[kernel]
    sizes = even if multiple else odd
    program = S[f"{kernel}_program"](boundary)
    a, k = _grid_of(sizes), _weights(kernel, weights)
    got = lift.compile(program)(a, k)
    _check(got, _stencil(a, boundary, weights))
    _check(got, interpret(program, a, k, numpy_shapes=True))


@needs_device
@pytest.mark.parametrize("boundary", ["clamp", "mirror", "wrap"])
@pytest.mark.parametrize("kernel", HIGH_LEVEL)
def test_the_default_lowering_reads_windows_as_vectors(S, kernel, boundary):
    """A high-level stencil under the default lowering: each window's fold unrolled, 16 windows to a vector
    (unaligned vector loads of the grid, tested once for its edges per vector), at sizes that are no multiple of
    the block or of 16 (the windows padded, the padding's results dropped), against numpy."""
    weights, _, sizes = HIGH_LEVEL[kernel]
    program = S[f"{kernel}_program"](boundary)
    a, k = _grid_of(sizes), _weights(kernel, weights)
    derivation = default_lowering(program, sizes, vector_width=8)  # as on a device where vectors pay, on any device
    compiled = lift.compile(program, sizes=sizes, lowering=derivation)
    lowered = lift.paper(compiled.lowered())
    assert "reduce-seq-unroll" in lowered and "asVector-16" in lowered, lowered
    assert "vload16(" in compiled.source and "/* the clamped vector reads in bounds */" in compiled.source
    _check(compiled(a, k), _stencil(a, boundary, weights))


# --- views: nested, transposed, composed ----------------------------------------------------------------


@needs_device
@pytest.mark.parametrize("boundary", ["clamp", "mirror", 2.0])
def test_pad_of_a_grid_under_transpose_is_a_view(boundary):
    """`map-global(map-seq(id)) ∘ transpose ∘ pad2d`: the padded grid itself, read column by column."""
    M, N = SizeVar("M"), SizeVar("N")
    from lift import userfun

    @userfun
    def copy(x: Float) -> Float:
        return x

    program = fun([ArrayType(ArrayType(Float, N), M)], lambda a: MapGlb(MapSeq(copy))(Transpose()(
        Pad(1, 2, boundary)(Map(Pad(2, 1, boundary))(a)))))
    a = _grid(5, 7)
    widths = ((1, 2), (2, 1))
    want = (np.pad(a, widths, mode=NUMPY_MODE[boundary]) if isinstance(boundary, str)
            else np.pad(a, widths, mode="constant", constant_values=boundary)).T
    got = _run(program, {"M": 5, "N": 7}, a)
    _check(got, want)
    _check(got, interpret(program, a))


@needs_device
def test_slide_with_a_step_in_two_dimensions():
    """Windows of 3 with step 2 in both dimensions, each summed (`reduce-seq` over the joined window)."""
    from lift import Join, userfun

    @userfun
    def add(x: Float, y: Float) -> Float:
        return x + y

    M, N = SizeVar("M"), SizeVar("N")
    program = fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(Join())(MapGlb(1)(MapGlb(0)(
        lambda w: ReduceSeq(add, 0.0)(Join()(w))))(Map(Transpose())(Slide(3, 2)(Map(Slide(3, 2))(a))))))
    a = _grid(9, 11)
    want = np.array([[a[2 * i:2 * i + 3, 2 * j:2 * j + 3].sum() for j in range(5)] for i in range(4)])
    got = _run(program, {"M": 9, "N": 11}, a)
    _check(got, want)
    _check(got, interpret(program, a))


def test_a_map_of_views_is_a_view_and_a_map_of_a_copy_is_not():
    from lift.ir import patterns as P

    assert P.is_view(Map(Transpose())) and P.is_view(Map(Map(Pad(1, 1, "clamp"))))
    assert P.is_view(Map(lambda r: Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(r)))))
    assert not P.is_high_level(Map(Slide(3, 1)))
    assert not P.is_view(Map(P.Id())) and P.is_high_level(Map(P.Id()))
    assert not P.is_view(Map(lambda x: MapSeq(P.Id())(x))) and not P.is_view(Map(lambda x: x))


def test_a_window_not_in_memory_given_to_a_user_function_is_one_clear_error(S):
    from lift import Join

    jacobi5 = S["jacobi5"]
    M, N = SizeVar("M"), SizeVar("N")
    slide2d, pad2d = S["slide2d"], S["pad2d"]
    program = fun([ArrayType(ArrayType(Float, N), M)], lambda a: MapGlb(1)(MapGlb(0)(
        lambda nb: jacobi5(Join()(nb))))(slide2d(3, 1)(pad2d(1, 1, "clamp")(a))))
    with pytest.raises(lift.LiftCodegenError, match="jacobi5 .*must be in memory.*toPrivate"):
        compile(program, sizes={"M": 8, "N": 8}).source


# --- the program file, the CLI and oclgrind -------------------------------------------------------------


def test_cli_compiles_jacobi2d(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples" / "stencils.py"
    out = tmp_path / "jacobi2d.cl"
    result = subprocess.run([sys.executable, "-m", "lift.cli", "compile", str(examples), "--kernel", "jacobi2d",
                             "--size", "M=37", "--size", "N=53", "--no-check", "-o", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    source = out.read_text()
    assert "jacobi5_private(" in source and "clamp(" in source


@needs_oclgrind
@pytest.mark.parametrize("kernel, sizes", [
    ("jacobi1d", {"N": 37}), ("jacobi1d_sum", {"N": 37}), ("jacobi2d", {"M": 7, "N": 9}),
    ("conv2d", {"M": 7, "N": 9}), ("conv2d_zero", {"M": 6, "N": 5}), ("jacobi3d", {"O": 4, "M": 5, "N": 3}),
    ("jacobi1d_high", {"N": 37}), ("jacobi1d_high", {"N": 64}), ("conv2d_high", {"M": 7, "N": 9}),
    ("conv2d_high", {"M": 8, "N": 8}), ("jacobi3d_high", {"O": 4, "M": 5, "N": 3}),
    ("jacobi3d_high", {"O": 4, "M": 4, "N": 4}),
])
def test_stencils_under_oclgrind(examples, tmp_path, kernel, sizes):
    pf = examples["stencils"]
    shape = tuple(sizes[k] for k in ("O", "M", "N") if k in sizes)
    a = _grid(*shape)
    weights = {"conv2d": _grid(3, 3), "conv2d_zero": _grid(3, 3), "jacobi3d": JACOBI7.astype(np.float32).reshape(27),
               **{k: _weights(k, w) for k, (w, _, _) in HIGH_LEVEL.items()}}
    inputs = [a] + ([weights[kernel]] if kernel in weights else [])
    (got,) = run_under_oclgrind(pf.path, kernel, sizes, inputs, tmp_path, unoptimised=True)
    reference = {"jacobi1d": JACOBI3, "jacobi1d_sum": SUM3, "jacobi2d": JACOBI5, "conv2d": weights.get("conv2d"),
                 "conv2d_zero": weights.get("conv2d_zero"), "jacobi3d": JACOBI7,
                 **{k: w for k, (w, _, _) in HIGH_LEVEL.items()}}[kernel]
    got = got.reshape(a.shape)  # the high-level stencils end in a literal-1 axis, except jacobi1d_high (joined)
    _check(got, _stencil(a, 0.0 if kernel == "conv2d_zero" else "clamp", reference))


@needs_device
@pytest.mark.parametrize("left, right, n", [(1, 1, 7), (2, 3, 3), (1, 0, 1), (4, 5, 3), (3, 3, 2), (0, 2, 2)])
def test_wrapped_reads_at_every_pad_width(left, right, n):
    """`pad(l, r, wrap)` read by a kernel: one comparison each way where neither pad is longer than the array,
    C's `%` where one is (a pad of 4 around 3 elements wraps more than once), both numpy's `wrap`."""
    N = SizeVar("N")
    from lift import userfun

    @userfun
    def copy(x: Float) -> Float:
        return x

    program = fun([ArrayType(Float, N)], lambda a: MapGlb(copy)(Pad(left, right, "wrap")(a)))
    a = _grid(n)
    compiled = compile(program, sizes={"N": n})
    assert ("%" in compiled.source) == (max(left, right) > n)
    _check(compiled(a), np.pad(a, (left, right), mode="wrap"))


@needs_device
@pytest.mark.parametrize("kernel", ["conv2d", "conv2d_channels"])
@pytest.mark.parametrize("sizes", [{"C": 3, "K": 5, "H": 7, "W": 37}, {"C": 16, "K": 2, "H": 16, "W": 64}])
def test_a_convolution_over_channels_is_lowered_as_a_stencil(examples, kernel, sizes):
    """A CNN layer's convolution (`examples/conv2d.py`: a map over filters of a 2-D stencil whose windows hold a
    3x3 neighbourhood of every channel, their number a size variable): the default lowering vectorises the windows
    across a row (their fold a loop: no unrolling fixes a window of `C` channels), the rows on dimension 1, the
    filters on dimension 2; against numpy at sizes no block divides."""
    pf = examples["conv2d"]
    program = pf.kernels[kernel]
    lowered = default_lowering(program, sizes, 16)
    assert {"vectorize-windows", "map-seq-unswitch"} <= {s.rule for s in lowered.steps}
    assert "map-global[2](" in lift.paper(lowered.replay(program))
    x, wts = pf.inputs(kernel, sizes, seed=5)
    got = np.asarray(compile(program, sizes=sizes, name=kernel)(x, wts)).reshape(sizes["K"], sizes["H"], sizes["W"])
    np.testing.assert_allclose(got, pf.namespace["reference"](x, wts), rtol=1e-4, atol=1e-4)
