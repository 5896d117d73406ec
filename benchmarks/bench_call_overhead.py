"""The cost of calling a compiled program against its kernel time: saxpy at 4M floats (issue 19).

    python -m benchmarks.bench_call_overhead [--size N] [--rounds 7] [--calls 20]

One program, `lift.compile(saxpy)` (the default lowering), called on numpy arrays (each call uploads x and
y and downloads the result) and on `pyopencl.array.Array`s already on the device (no transfer; the call
returns a device array, waited for). In each of `--rounds` interleaved rounds, the kernel time is the
median of `--calls` launches timed by profiling events (`CompiledProgram.time`), and each call time the
median wall-clock time of `--calls` calls; the table gives the medians over the rounds and the ratios call
time / kernel time (issue 19 asks at most 1.2 with device-resident inputs), with numpy's `a * x + y` for
scale.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyopencl.array as cla

import lift
from lift import ArrayType, Float, Get, Map, SizeVar, Zip, fun, userfun
from lift.opencl_gen import runtime

N = SizeVar("N")


@userfun
def axpy(a: Float, x: Float, y: Float) -> Float:
    return a * x + y


SAXPY = fun([Float, ArrayType(Float, N), ArrayType(Float, N)],
            lambda a, x, y: Map(lambda p: axpy(a, Get(p, 0), Get(p, 1)))(Zip(x, y)))


def _wall_ms(call, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1 << 22)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
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

    def on_device():
        f(a, dx, dy)
        queue.finish()

    rows = {"kernel": [], "call, device arrays": [], "call, numpy arrays": [], "numpy a * x + y": []}
    for _ in range(args.rounds):
        rows["kernel"].append(f.time(a, dx, dy, repeat=args.calls).kernels_ms)
        rows["call, device arrays"].append(_wall_ms(on_device, args.calls))
        rows["call, numpy arrays"].append(_wall_ms(lambda: f(a, x, y), args.calls))
        rows["numpy a * x + y"].append(_wall_ms(lambda: a * x + y, args.calls))
    kernel = statistics.median(rows["kernel"])
    print(f"device: {runtime.device_label(target.device)}; saxpy, N = {args.size} floats; medians of {args.rounds} "
          f"rounds of {args.calls}")
    print(f"{'':24} {'ms':>8} {'/ kernel':>9}")
    for name, times in rows.items():
        ms = statistics.median(times)
        print(f"{name:24} {ms:8.3f} {ms / kernel:9.2f}")


if __name__ == "__main__":
    main()
