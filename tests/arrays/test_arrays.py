"""lift arrays against numpy on the OpenCL device and on the host: element-wise chains, reductions with
`axis`, matrix products, stencils and shifts, gathers, the compiled-program cache, `lift.explain`, and the
placement forced both ways."""

import io
import math
import re

import numpy as np
import pytest

import lift
from lift.arrays.evaluation import COUNTS
from lift.errors import LiftError, LiftTypeError

RNG = np.random.default_rng(7)
X = RNG.random((64, 48), dtype=np.float32)
Y = RNG.random((64, 48), dtype=np.float32)
V = RNG.random(48, dtype=np.float32)


def _close(got, want, tol=1e-4):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got.shape, got.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.fixture(params=["device", "host"])
def placement(request):
    """Each test on the OpenCL device (skipped where there is none) and with numpy on the host."""
    device = request.getfixturevalue("device") if request.param == "device" else None
    with lift.config(placement=request.param, device=device):
        yield request.param


CASES = {
    "chain": (lambda a, b, v: ((a * 2.0 + b) * (a - 1.0) / (b + 1.0)) ** 2 - abs(a - b),
              lambda a, b, v: ((a * 2 + b) * (a - 1) / (b + 1)) ** 2 - abs(a - b)),
    "broadcast": (lambda a, b, v: a * v + 1.0, lambda a, b, v: a * v + 1),
    "math": (lambda a, b, v: lift.sqrt(a) + np.exp(b) - lift.maximum(a, 0.5),
             lambda a, b, v: np.sqrt(a) + np.exp(b) - np.maximum(a, 0.5)),
    "where": (lambda a, b, v: lift.where(a > b, a, b * 2.0), lambda a, b, v: np.where(a > b, a, b * 2)),
    "comparison": (lambda a, b, v: a <= b, lambda a, b, v: a <= b),
    "sum_all": (lambda a, b, v: (a * b).sum(), lambda a, b, v: (a * b).sum()),
    "sum_axis0": (lambda a, b, v: (a - b).sum(axis=0), lambda a, b, v: (a - b).sum(axis=0)),
    "sum_axis1": (lambda a, b, v: (a + b).sum(axis=1), lambda a, b, v: (a + b).sum(axis=1)),
    "max_axis1": (lambda a, b, v: (a - b).max(axis=1), lambda a, b, v: (a - b).max(axis=1)),
    "min": (lambda a, b, v: a.min(), lambda a, b, v: a.min()),
    "mean_axis0": (lambda a, b, v: a.mean(axis=0), lambda a, b, v: a.mean(axis=0)),
    "normalise": (lambda a, b, v: a / a.sum(), lambda a, b, v: a / a.sum()),
    "dot": (lambda a, b, v: v @ v, lambda a, b, v: v @ v),
    "gemv": (lambda a, b, v: a @ v, lambda a, b, v: a @ v),
    "vecmat": (lambda a, b, v: v @ b.T, lambda a, b, v: v @ b.T),
    "matmul": (lambda a, b, v: a @ b.T, lambda a, b, v: a @ b.T),
    "transpose_reshape": (lambda a, b, v: a.T.reshape(16, 192) * 2.0, lambda a, b, v: a.T.reshape(16, 192) * 2),
    "shift": (lambda a, b, v: a.shift((1, -2)) - a, lambda a, b, v: np.pad(a, ((1, 0), (0, 2)), "edge")[:64, 2:] - a),
    "shift_constant": (lambda a, b, v: a.shift((-3, 0), 0.0), lambda a, b, v: np.pad(a, ((0, 3), (0, 0)))[3:]),
    "rotate": (lambda a, b, v: v.rotate(5) * v, lambda a, b, v: np.roll(v, 5) * v),
    "pad": (lambda a, b, v: a.pad(1, 2, "mirror") + 1.0, lambda a, b, v: np.pad(a, ((1, 2), (1, 2)), "symmetric") + 1),
    "stencil": (lambda a, b, v: a.stencil(lambda w: (w[0, 1] + w[1, 0] + w[1, 1] + w[1, 2] + w[2, 1]) * 0.2, (3, 3),
                                          "wrap"),
                lambda a, b, v: sum(np.roll(a, s, (0, 1)) for s in ((1, 0), (0, 1), (0, 0), (0, -1), (-1, 0)))
                * np.float32(0.2)),
    "slice_rows": (lambda a, b, v: a[3:40] * 2.0, lambda a, b, v: a[3:40] * 2),
    "slice_columns": (lambda a, b, v: a[:, 5:17] + b[:, 0:12], lambda a, b, v: a[:, 5:17] + b[:, 0:12]),
    "slice_computed": (lambda a, b, v: (a * b)[1:-1, 2:] - 1.0, lambda a, b, v: (a * b)[1:-1, 2:] - 1),
    "slice_differences": (lambda a, b, v: v[1:] - v[:-1], lambda a, b, v: v[1:] - v[:-1]),
    "slice_sum": (lambda a, b, v: v[2:30].sum(), lambda a, b, v: v[2:30].sum()),
    "slice_gradient_mean": (lambda a, b, v: lift.sqrt((a[1:-1, 2:] - a[1:-1, :-2]) ** 2
                                                      + (a[2:, 1:-1] - a[:-2, 1:-1]) ** 2).mean(),
                            lambda a, b, v: np.sqrt((a[1:-1, 2:] - a[1:-1, :-2]) ** 2
                                                    + (a[2:, 1:-1] - a[:-2, 1:-1]) ** 2).mean()),
    "slice_of_reduced": (lambda a, b, v: (a - a.sum(axis=0))[10:20, 3:9],
                         lambda a, b, v: (a - a.sum(axis=0))[10:20, 3:9]),
    "slice_matmul": (lambda a, b, v: a[:16, :8] @ b[8:16, 4:20], lambda a, b, v: a[:16, :8] @ b[8:16, 4:20]),
    "slice_shifted": (lambda a, b, v: a[4:30, 2:40].shift((1, 0)) * 0.5,
                      lambda a, b, v: np.pad(a[4:30, 2:40], ((1, 0), (0, 0)), "edge")[:26] * 0.5),
    "logical": (lambda a, b, v: lift.where((a > 0.5) & ~(b > 0.9) | (a < 0.1), 1.0, 0.0),
                lambda a, b, v: np.where((a > 0.5) & ~(b > 0.9) | (a < 0.1), 1.0, 0.0)),
    "count": (lambda a, b, v: (a > b).sum(axis=0), lambda a, b, v: (a > b).sum(axis=0).astype(np.int32)),
    "power": (lambda a, b, v: a ** b, lambda a, b, v: a ** b),
    "scalar_chain": (lambda a, b, v: a.sum() * 2.0 + a.max(), lambda a, b, v: a.sum() * 2 + a.max()),
    "view_of_reduction": (lambda a, b, v: a.sum(axis=1).reshape(8, 8) * 2.0,
                          lambda a, b, v: a.sum(axis=1).reshape(8, 8) * 2),
    "transposed_product": (lambda a, b, v: (a.T @ b).T + 1.0, lambda a, b, v: (a.T @ b).T + 1),
    "shifted_product": (lambda a, b, v: (a @ b.T).shift((1, 1), 0.0),
                        lambda a, b, v: np.pad(a @ b.T, ((1, 0), (1, 0)))[:64, :64]),
    "padded_expression": (lambda a, b, v: (a * 2.0).pad(1, 1, "clamp"), lambda a, b, v: np.pad(a * 2, 1, "edge")),
    "keepdims_softmax": (lambda a, b, v: lift.exp(a - a.max(axis=1, keepdims=True))
                         / lift.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True),
                         lambda a, b, v: np.exp(a - a.max(axis=1, keepdims=True))
                         / np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)),
    "keepdims_columns": (lambda a, b, v: (a - a.mean(axis=0, keepdims=True)) * b.min(axis=(0, 1), keepdims=True),
                         lambda a, b, v: (a - a.mean(axis=0, keepdims=True)) * b.min(axis=(0, 1), keepdims=True)),
    "keepdims_all": (lambda a, b, v: a.sum(keepdims=True), lambda a, b, v: a.sum(keepdims=True)),
    "attention": (lambda a, b, v: ATTENTION(a[:16], b[:24], a[24:48]),
                  lambda a, b, v: ATTENTION(a[:16], b[:24], a[24:48])),
}


def ATTENTION(q, k, v):
    """softmax(Q Kᵀ / sqrt(d)) V as numpy users write it (`examples/arrays/attention.py`), numpy or lift arrays."""
    xp = lift if isinstance(q, lift.arrays.LiftArray) else np
    s = (q @ k.T) * (1.0 / math.sqrt(q.shape[1]))
    e = xp.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


@pytest.mark.parametrize("name", sorted(CASES))
def test_operations_agree_with_numpy(name, placement):
    lifted, numpy = CASES[name]
    got = lifted(lift.asarray(X), lift.asarray(Y), lift.asarray(V))
    _close(got.get(), numpy(X, Y, V), tol=1e-3)


def test_gather_clips_indices(placement):
    rows = lift.asarray(np.arange(70, dtype=np.int32)[::-1] - 3)
    cols = lift.asarray((np.arange(70, dtype=np.int32) * 7) % 48)
    want = X[np.clip(np.arange(70)[::-1] - 3, 0, 63), (np.arange(70) * 7) % 48]
    _close(lift.asarray(X)[rows, cols].get(), want)


def _np_shift(x, offsets, mode, **constant):
    """numpy's `r[i] = x[i - s]` per axis, reads outside given by np.pad's `mode`."""
    p = np.pad(x, [(max(s, 0), max(-s, 0)) for s in offsets], mode=mode, **constant)
    return p[tuple(slice(max(-s, 0), max(-s, 0) + n) for s, n in zip(offsets, x.shape))]


def test_three_dimensional_shifts_and_stencils(placement):
    """A 3-D array's shifts read one window of it, as 1-D and 2-D ones do: a 3x3x3 box and a 7-point Laplacian."""
    cube = RNG.random((6, 7, 9), dtype=np.float32)
    x = lift.asarray(cube)
    box = x.stencil(lambda w: sum(w[i, j, k] for i in range(3) for j in range(3) for k in range(3)) * (1 / 27), 3)
    want = sum(_np_shift(cube, (1 - i, 1 - j, 1 - k), "edge") for i in range(3) for j in range(3) for k in range(3))
    _close(box.get(), want / np.float32(27))
    faces = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    laplacian = sum(x.shift(s, "wrap") for s in faces) - 6.0 * x
    _close(laplacian.get(), sum(_np_shift(cube, s, "wrap") for s in faces) - 6 * cube)
    _close((x.shift((2, 0, -3), 0.5) * x).get(),
           _np_shift(cube, (2, 0, -3), "constant", constant_values=0.5) * cube)


def test_integer_arrays_and_casts(placement):
    n = lift.asarray(np.arange(10))                                       # int64 held as int32
    _close((n * 3 - 1).get(), np.arange(10, dtype=np.int32) * 3 - 1)
    _close((lift.asarray(X) * 10.0).astype(np.int32).get(), (X * 10).astype(np.int32))
    _close((n / 4).get(), np.arange(10, dtype=np.int32) / 4)             # true division, as numpy: float64


def test_evaluate_computes_several_arrays_in_one_program(device):
    with lift.config(placement="device", device=device):
        a = lift.asarray(X) * 2.0
        total, shifted = lift.evaluate(a.sum(), a + 1.0)
    _close(total, (X * 2).sum(), tol=1e-3)
    _close(shifted, X * 2 + 1)
    assert np.asarray(total).shape == ()


def test_a_second_evaluation_of_an_equal_graph_is_not_compiled_again(device):
    with lift.config(placement="device", device=device):
        first = (lift.asarray(X) * 3.0 + lift.asarray(Y)).sum(axis=1)
        before = dict(COUNTS)
        first.get()
        assert COUNTS["compiled"] == before["compiled"] + 1
        other = RNG.random((64, 48), dtype=np.float32)
        second = (lift.asarray(other) * 3.0 + lift.asarray(Y)).sum(axis=1)
        _close(second.get(), (other * 3 + Y).sum(axis=1))
        assert COUNTS["compiled"] == before["compiled"] + 1 and COUNTS["reused"] == before["reused"] + 1


def test_an_array_used_twice_is_one_parameter_and_a_shared_result_is_computed_once(device):
    from lift.arrays.graph import build, structure

    a = lift.asarray(X)
    s = a.sum(axis=1)
    r = (a.T * s).T + s.reshape(64, 1)
    st = structure([r])
    assert len(st.inputs) == 1
    assert "λ let0" in lift.paper(build([r], st))
    with lift.config(placement="device", device=device):
        _close(r.get(), X * X.sum(axis=1)[:, None] + X.sum(axis=1)[:, None], tol=1e-3)


def test_forced_placement_runs_where_it_says(device):
    for placement in ("device", "host"):
        before = dict(COUNTS)
        with lift.config(placement=placement, device=device):
            _close((lift.asarray(V) * 2.0).get(), V * 2)
        assert COUNTS[placement] == before[placement] + 1
        assert sum(COUNTS[p] for p in ("device", "host")) == sum(before[p] for p in ("device", "host")) + 1


def test_auto_placement_follows_the_cost_model(device):
    with lift.config(placement="auto", device=device):
        x = lift.asarray(V) + 1.0
        e = lift.explain(x, file=io.StringIO())
        assert e.placement == e.prediction.choice
        before = dict(COUNTS)
        _close(x.get(), V + 1)
        assert COUNTS[e.placement] == before[e.placement] + 1


def test_explain_prints_program_kernels_and_prediction(device):
    with lift.config(placement="device", device=device):
        out = io.StringIO()
        e = lift.explain((lift.asarray(X) * 2.0).sum(), file=out, source=True)
    text = out.getvalue()
    assert text == e.text + "\n"
    assert "program:  reduce(add_float32, 0.0)" in text
    assert "(e0: Float) -> Float: return (e0 * 2.0)" in text            # the region's user function
    count = int(re.search(r"kernels \((\d+)\):", text).group(1))
    assert count == text.count("  lift_arrays_k") == text.count("kernel void") >= 1
    assert "prediction on" in text and "placement: device (lift.config)" in text
    assert e.prediction.kernel_ms > 0 and e.prediction.host_ms > 0 and e.prediction.transfer_ms > 0


def test_numpy_interop():
    a = lift.asarray(X)
    assert isinstance(np.add(a, 1.0), lift.LiftArray) and isinstance(X + a, lift.LiftArray)
    assert lift.sqrt(4.0) == 2.0                        # lift's math functions still take numbers
    with lift.config(placement="host"):
        _close(np.asarray(np.sqrt(a) * Y), np.sqrt(X) * Y)


def test_bad_input_is_one_clear_error():
    a = lift.asarray(X)
    with pytest.raises(LiftTypeError, match="shapes"):
        a + lift.asarray(V[:5])
    with pytest.raises(LiftTypeError, match="matmul"):
        a @ a
    with pytest.raises(LiftTypeError, match="int64|float32"):
        lift.asarray(np.ones(3, np.complex64))
    with pytest.raises(LiftTypeError, match="step 1"):
        a[::2]
    with pytest.raises(LiftTypeError, match="non-empty"):
        a[5:5]
    with pytest.raises(LiftError, match="placement"):
        lift.config.placement = "gpu"


def test_device_arrays_stay_on_the_device(device):
    """A user's context, queue and pyopencl arrays end to end: results stay on the device (nothing is
    downloaded until `get`), a numpy input is uploaded once and kept, and programs run on the user's queue."""
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla

    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    x = lift.asarray(cla.to_device(queue, X))
    y = lift.asarray(Y)
    with lift.config(placement="device"):
        b = lift.evaluate(x * 2.0 + y)
        assert b.value is None and b.on_device.context == ctx and y.on_device.context == ctx
        uploaded = y.on_device
        total = lift.evaluate((b * y).sum())
        assert total.value is None and y.on_device is uploaded and b.value is None
    _close(total.get(), ((X * 2 + Y) * Y).sum(), tol=1e-3)
    _close(b.get(), X * 2 + Y)


def test_a_dropped_result_returns_its_buffer_at_once(device):
    """Evaluation leaves no reference cycle: a result dropped is freed without the garbage collector, so its
    buffer goes back to the program's pool and the next evaluation reuses it (a fresh buffer per evaluation
    costs first-touch page faults on a CPU device)."""
    import gc
    import weakref

    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla

    context = cl.Context([device])  # kept alive: Intel's CPU runtime reports a collected queue's context invalid
    queue = cl.CommandQueue(context)
    x = lift.asarray(cla.to_device(queue, X))
    gc.disable()
    try:
        with lift.config(placement="device"):
            r = lift.evaluate(2.5 * x + 1.0)
            buffers = [r.on_device.data.int_ptr]
            dropped = weakref.ref(r)
            del r
            assert dropped() is None
            for _ in range(3):
                r = lift.evaluate(2.5 * x + 1.0)
                buffers.append(r.on_device.data.int_ptr)
                _close(r.get(), 2.5 * X + 1)
                del r
    finally:
        gc.enable()
    assert len(set(buffers)) == 1


def test_the_cost_model_runs_once_per_structure(device, monkeypatch):
    """The auto placement's model (the kernels' and numpy's predicted times) depends on the structure alone: a
    second evaluation of an equal graph reuses it; only the transfers are figured again."""
    from lift.arrays import evaluation
    from lift.arrays.placement import model

    calls = []
    monkeypatch.setattr(evaluation, "model", lambda *args: calls.append(args) or model(*args))

    with lift.config(placement="auto", device=device):
        shape = (33, 17)                                         # a shape of this test's own
        first, second = (RNG.random(shape, dtype=np.float32) for _ in range(2))
        _close((lift.asarray(first) * 3.0 - 1.0).get(), first * 3 - 1)
        _close((lift.asarray(second) * 3.0 - 1.0).get(), second * 3 - 1)
    assert len(calls) == 1


def test_a_slice_is_a_view_in_the_kernel_that_reads_it(device):
    """`x[a:b, c:d]` of an input is `take ∘ drop` on each axis, read in place by the one kernel of its
    region: no copy of the slice is made."""
    with lift.config(placement="device", device=device):
        lazy = lift.asarray(X)[3:40, 5:17] * 2.0
        text = lift.explain(lazy, file=io.StringIO()).text
        _close(lazy.get(), X[3:40, 5:17] * 2)
    assert "map(take-12) ∘ map(drop-5) ∘ take-37 ∘ drop-3" in text and "kernels (1):" in text


def test_an_expression_a_matrix_product_broadcasts_is_computed_once(device):
    """`(exp(a) / s) @ b`: the product reads its left operand once per column of `b`; an element-wise operand
    is computed once into an array of its own (let-bound), not fused into the product's multiply, where its
    `exp` would run once per column (attention through lift arrays: 300 ms to 32 ms at 257x61)."""
    a, b = X[:16, :24], Y[:24, :20]
    with lift.config(placement="device", device=device):
        lazy = (lift.exp(lift.asarray(a)) / 3.0) @ lift.asarray(b)
        text = lift.explain(lazy, file=io.StringIO()).text
        _close(lazy.get(), (np.exp(a) / np.float32(3.0)) @ b)
    exps = re.findall(r"(ew_\w+)\([^)]*\) -> Float: return .*math\.exp", text)
    assert exps and not any(re.search(rf"reduce\(add_float32, 0\.0\) ∘ map\(λ \w+\. {f}\(", text) for f in exps), text
