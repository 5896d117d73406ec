"""PyOpenCL interop: a user's context, queue and device arrays in and out of compiled programs, `out=`, the
memory pool, numpy's result shapes; host transfers counted by wrapping `pyopencl.enqueue_copy`."""

import re

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, interpret, userfun
from lift.errors import LiftDeviceError, LiftTypeError

from userfuns import absf, add

cl = pytest.importorskip("pyopencl")
cla = pytest.importorskip("pyopencl.array")

N, R = SizeVar("N"), SizeVar("R")


@userfun
def axpy(a: Float, x: Float, y: Float) -> Float:
    return a * x + y


saxpy = fun([Float, ArrayType(Float, N), ArrayType(Float, N)],
            lambda a, x, y: Map(lambda p: axpy(a, Get(p, 0), Get(p, 1)))(Zip(x, y)))
asum = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
row_sums = fun([ArrayType(ArrayType(Float, N), R)], lambda m: Map(Reduce(add, 0.0))(m))


@pytest.fixture
def user(device):
    """A user's own context and in-order queue (without profiling)."""
    ctx = cl.Context([device])
    return ctx, cl.CommandQueue(ctx)


@pytest.fixture
def transfers(monkeypatch):
    """The host transfers made: each `pyopencl.enqueue_copy` with a numpy array at either end."""
    made = []
    copy = cl.enqueue_copy

    def counted(queue, dest, src, **kwargs):
        if isinstance(dest, np.ndarray) or isinstance(src, np.ndarray):
            made.append((type(dest).__name__, type(src).__name__))
        return copy(queue, dest, src, **kwargs)

    monkeypatch.setattr(cl, "enqueue_copy", counted)
    return made


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)


def test_device_arrays_in_and_out_on_a_users_context_without_host_transfers(user, transfers):
    ctx, queue = user
    x, y = _data(4096)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    f = lift.compile(saxpy, context=ctx, queue=queue)
    transfers.clear()
    got = f(np.float32(2.0), dx, dy)
    again = f(np.float32(-1.0), got, dy)  # a result fed back in stays on the device
    assert transfers == []
    assert isinstance(got, cla.Array) and got.shape == (4096,) and got.context == ctx
    np.testing.assert_allclose(got.get(), interpret(saxpy, np.float32(2.0), x, y), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(again.get(), -(2 * x + y) + y, rtol=1e-5, atol=1e-6)


def test_numpy_inputs_upload_once_and_download_once(device, transfers):
    x, y = _data(1000)
    got = lift.compile(saxpy, device)(np.float32(0.5), x, y)
    assert isinstance(got, np.ndarray)
    assert sorted(transfers) == [("PooledBuffer", "ndarray")] * 2 + [("ndarray", "PooledBuffer")]
    np.testing.assert_allclose(got, interpret(saxpy, np.float32(0.5), x, y), rtol=1e-6, atol=1e-6)


def test_results_have_numpys_shapes(device, user):
    x = np.random.default_rng(2).uniform(-1, 1, (37, 300)).astype(np.float32)
    total = lift.compile(asum, device)(x.ravel())
    assert total.shape == () and interpret(asum, x.ravel()).shape == (1,)
    np.testing.assert_allclose(total, np.abs(x).sum(), rtol=1e-4)
    rows = lift.compile(row_sums, device)(x)
    assert rows.shape == (37,)
    np.testing.assert_allclose(rows, x.sum(axis=1), rtol=1e-4, atol=1e-5)
    ctx, queue = user
    on_device = lift.compile(asum, context=ctx, queue=queue)(cla.to_device(queue, x.ravel()))
    assert isinstance(on_device, cla.Array) and on_device.shape == ()
    np.testing.assert_allclose(on_device.get(), np.abs(x).sum(), rtol=1e-4)


def test_out_receives_the_result(user, transfers):
    ctx, queue = user
    x, y = _data(512)
    f = lift.compile(saxpy, context=ctx, queue=queue)
    out = cla.empty(queue, 512, np.float32)
    transfers.clear()
    assert f(np.float32(3.0), cla.to_device(queue, x), cla.to_device(queue, y), out=out) is out
    assert len(transfers) == 2  # the two to_device calls: none for out
    np.testing.assert_allclose(out.get(), 3 * x + y, rtol=1e-6, atol=1e-6)
    host = np.empty(512, np.float32)
    assert f(np.float32(3.0), x, y, out=host) is host
    np.testing.assert_allclose(host, 3 * x + y, rtol=1e-6, atol=1e-6)
    total = np.empty((), np.float32)
    assert lift.compile(asum, context=ctx, queue=queue)(x, out=total) is total
    np.testing.assert_allclose(total, np.abs(x).sum(), rtol=1e-4)


@pytest.mark.parametrize("out, message", [
    (np.empty(511, np.float32), r"out should have shape \(512,\) and dtype float32, got shape \(511,\)"),
    (np.empty(512, np.float64), r"out should have shape \(512,\) and dtype float32, got .* dtype float64"),
    (np.empty(1024, np.float32)[::2], "out should be a writeable C-contiguous"),
    ([0.0] * 512, "out should be a writeable C-contiguous numpy or pyopencl array, got list"),
])
def test_a_bad_out_is_one_clear_error(device, out, message):
    x, y = _data(512)
    with pytest.raises(LiftTypeError, match=message):
        lift.compile(saxpy, device)(np.float32(1.0), x, y, out=out)


def test_bad_device_arrays_are_clear_errors(device, user):
    ctx, queue = user
    x, y = _data(256)
    f = lift.compile(saxpy, context=ctx, queue=queue)
    with pytest.raises(LiftTypeError, match="input x should have dtype float32, got a pyopencl array of dtype float64"):
        f(np.float32(1.0), cla.to_device(queue, x.astype(np.float64)), cla.to_device(queue, y))
    other_context = cl.Context([device])  # kept alive: Intel's runtime frees a context only its queue holds
    other = cl.CommandQueue(other_context)
    with pytest.raises(LiftDeviceError, match="input y is a pyopencl array of another context"):
        f(np.float32(1.0), cla.to_device(queue, x), cla.to_device(other, y))


def test_a_context_as_device_and_clear_errors_for_other_objects(device, user):
    ctx, queue = user
    x, y = _data(300)
    got = lift.compile(saxpy, ctx)(np.float32(2.0), x, y)
    np.testing.assert_allclose(got, 2 * x + y, rtol=1e-6, atol=1e-6)
    with pytest.raises(LiftDeviceError, match="device= takes a pyopencl.Device, a pyopencl.Context or a device "
                                              "name, got CommandQueue; a queue goes to queue="):
        lift.compile(saxpy, queue)
    with pytest.raises(LiftDeviceError, match="the queue given belongs to another context"):
        lift.compile(saxpy, context=cl.Context([device]), queue=queue)


def test_temporaries_come_from_a_pool_kept_across_calls(user):
    from pyopencl.tools import ImmediateAllocator, MemoryPool

    ctx, queue = user
    pool = MemoryPool(ImmediateAllocator(queue))
    f = lift.compile(asum, context=ctx, queue=queue, allocator=pool)
    x = cla.to_device(queue, _data(1 << 16)[0])
    assert len(f.generated({"N": 1 << 16}).kernels) >= 2  # temporaries between the kernels
    first = f(x).get()
    held = pool.managed_bytes
    assert held > 0 and pool.held_blocks > 0  # the temporary went back to the pool
    for _ in range(3):
        assert f(x).get() == pytest.approx(first)
    assert pool.managed_bytes == held  # the same blocks again: nothing new allocated


def test_in_place_on_a_device_array_overwrites_it(user, transfers):
    ctx, queue = user
    x, y = _data(1024)
    dy = cla.to_device(queue, y)
    transfers.clear()
    got = lift.compile(saxpy, context=ctx, queue=queue, in_place="y")(np.float32(2.0), cla.to_device(queue, x), dy)
    assert got.data == dy.data and len(transfers) == 1
    np.testing.assert_allclose(dy.get(), 2 * x + y, rtol=1e-6, atol=1e-6)


def test_time_needs_a_profiling_queue(user):
    ctx, queue = user
    with pytest.raises(LiftDeviceError, match="profiling"):
        lift.compile(saxpy, context=ctx, queue=queue).time(np.float32(1.0), *_data(64))


def test_a_users_device_is_named_for_another_process(device, user):
    """`device_spec` names the device of a user's context as `select_device` takes it (`lift explore`'s workers
    open it by that name)."""
    from lift.opencl_gen import runtime

    ctx, queue = user
    assert runtime.select_device(runtime.device_spec(queue.device)) == device == ctx.devices[0]


def test_a_device_is_found_by_its_platforms_vendor(device):
    """`--device pocl` finds PoCL, whose platform is named "Portable Computing Language" but whose vendor is
    "The pocl project"; any device is found by its platform's vendor."""
    from lift.opencl_gen import runtime

    assert runtime.select_device(device.platform.vendor).platform == device.platform
    if "pocl" in device.platform.vendor.lower():
        assert runtime.select_device("POCL").platform == device.platform


def test_a_context_the_driver_refuses_is_one_device_error(device, monkeypatch):
    """A driver out of memory for one more context (NVIDIA's `OUT_OF_HOST_MEMORY` with many processes on one GPU) is
    a `LiftDeviceError` naming the device, which the CLI and the explorer's workers print as one line."""
    from lift.opencl_gen import runtime

    def refuse(*args, **kwargs):
        raise cl.RuntimeError("clCreateContext failed: OUT_OF_HOST_MEMORY")

    monkeypatch.setattr(cl, "Context", refuse)
    with pytest.raises(LiftDeviceError, match=f"refused a context on {re.escape(device.name.strip())}: "
                                              "clCreateContext failed: OUT_OF_HOST_MEMORY"):
        runtime.context_and_queue.__wrapped__(device)
