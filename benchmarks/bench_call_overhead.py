"""The cost of calling a compiled program against its kernel time: saxpy at 4M floats (issue 19).

    python -m benchmarks.bench_call_overhead [--size N] [--calls 100]

One program, `lift.compile(saxpy)` (the default lowering), called on `pyopencl.array.Array`s already on the
device (no transfer; the call returns a device array, waited for) and on numpy arrays (each call uploads x
and y and downloads the result); the same saxpy evaluated through lift arrays over the same device arrays
(`2.5 * x + y` built, its structure keyed, the cached program found, placed and run, the result left on the
device, waited for); and numpy's `a * x + y` for scale; interleaved `--calls` times. The kernel time of a
device-array call or evaluation is its own kernel's, timed by its profiling event, so that each is compared
with its own kernel (on a shared machine the load drifts); the table gives medians and the ratios call time /
kernel time (issue 19 asks at most 1.2 with device-resident inputs).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyopencl.array as cla

import lift
from lift import ArrayType, Float, Get, Map, SizeVar, Zip, fun, userfun
from lift.arrays.evaluation import plan
from lift.opencl_gen import runtime
from lift.opencl_gen.runner import elapsed_ms

N = SizeVar("N")


@userfun
def axpy(a: Float, x: Float, y: Float) -> Float:
    return a * x + y


SAXPY = fun([Float, ArrayType(Float, N), ArrayType(Float, N)],
            lambda a, x, y: Map(lambda p: axpy(a, Get(p, 0), Get(p, 1)))(Zip(x, y)))


def _wall_ms(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1 << 22)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    target = runtime.target(args.device)
    queue = target.queue
    rng = np.random.default_rng(0)
    a = np.float32(2.5)
    x, y = rng.uniform(-1, 1, args.size).astype(np.float32), rng.uniform(-1, 1, args.size).astype(np.float32)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    f = lift.compile(SAXPY, target.device, lowering="default")
    np.testing.assert_allclose(f(a, dx, dy).get(), a * x + y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f(a, x, y), a * x + y, rtol=1e-5, atol=1e-6)

    lx, ly = lift.asarray(dx), lift.asarray(dy)
    with lift.config(placement="device"):
        evaluated = lift.evaluate(2.5 * lx + ly)
        if len(plan(2.5 * lx + ly).compiled.generated().kernels) != 1:
            raise AssertionError("saxpy through lift arrays should be one kernel")
    np.testing.assert_allclose(evaluated.get(), a * x + y, rtol=1e-5, atol=1e-6)
    results = []

    def on_device():
        results.append(f(a, dx, dy))
        queue.finish()

    def through_arrays():
        with lift.config(placement="device"):
            results.append(lift.evaluate(2.5 * lx + ly).on_device)
        queue.finish()

    kernel, device_call, numpy_call, numpy_ms, array_kernel, array_call = [], [], [], [], [], []
    for _ in range(args.calls):
        device_call.append(_wall_ms(on_device))
        kernel.append(elapsed_ms(results.pop().events))
        array_call.append(_wall_ms(through_arrays))
        array_kernel.append(elapsed_ms(results.pop().events[-1:]))
        numpy_call.append(_wall_ms(lambda: f(a, x, y)))
        numpy_ms.append(_wall_ms(lambda: a * x + y))
    median = statistics.median
    print(f"device: {runtime.device_label(target.device)}; saxpy, N = {args.size} floats; medians of {args.calls} "
          f"interleaved calls")
    print(f"{'':24} {'ms':>8} {'/ kernel':>9}")
    print(f"{'kernel':24} {median(kernel):8.3f} {1:9.2f}")
    print(f"{'call, device arrays':24} {median(device_call):8.3f} "
          f"{median(c / k for c, k in zip(device_call, kernel)):9.2f}   (each call over its own kernel)")
    print(f"{'lift arrays, on device':24} {median(array_call):8.3f} "
          f"{median(c / k for c, k in zip(array_call, array_kernel)):9.2f}   (each evaluation over its own kernel)")
    for name, times in (("call, numpy arrays", numpy_call), ("numpy a * x + y", numpy_ms)):
        print(f"{name:24} {median(times):8.3f} {median(times) / median(kernel):9.2f}")


if __name__ == "__main__":
    main()
