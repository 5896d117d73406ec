"""Accelerator's benchmarks written with lift arrays, against numpy and hand-written OpenCL, in one run.

    python -m benchmarks.bench_arrays [--scale 1.0] [--only saxpy,life]

Each program is one function of lift arrays and the same function of numpy arrays (the operators are
numpy's): saxpy, sum and a chain of 5 element-wise operations with a sum on 16M floats, matrix-vector and
matrix-matrix products, and Accelerator's image programs on 1000x1000 images (a separable 5x5 Gaussian
convolution as two 5-tap passes of shifts, one step of Conway's life, a 3x3 box blur as a stencil, and a
rotation by 10 degrees with bilinear interpolation: a gather of four neighbours per pixel). lift's output is
checked against numpy's first. Times are medians of `RUNS` runs: lift's kernels alone (profiling events),
an evaluation on device arrays (`lift.asarray` of `pyopencl.array.Array`s: graph, cache look-up, kernels,
the result left on the device), lift's whole evaluation from numpy arrays to numpy (transfers too), numpy,
and a hand-written kernel where one is easy (saxpy, the chain and sum). The floor the issue sets, the chain
and sum on device arrays at least 0.8x the streaming bound (its bytes streamed by `lift.explore.bandwidth`'s
kernels) and at least 3x numpy, is measured in `FLOOR_ROUNDS` interleaved rounds, best and median ratios.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import pyopencl.array as cla

import lift
from lift.arrays.evaluation import plan
from lift.explore import bandwidth
from lift.opencl_gen import runtime

RUNS = 5
FLOOR_ROUNDS = 7
HAND = """
kernel void saxpy(const float a, const global float* restrict x, const global float* restrict y,
                  global float* restrict out) {
    size_t i = get_global_id(0);
    out[i] = a * x[i] + y[i];
}

kernel void chain_sum(const global float* restrict x, const global float* restrict y, global float* partial,
                      const int chunk) {
    size_t g = get_global_id(0);
    float acc = 0.0f;
    for (int i = g * chunk; i < (g + 1) * chunk; i++) {
        acc += ((x[i] * 1.5f + y[i]) * x[i] - 0.5f) * y[i];
    }
    partial[g] = acc;
}
"""


def saxpy(x, y):
    return 2.5 * x + y


def total(x):
    return x.sum()


def chain_sum(x, y):
    return (((x * 1.5 + y) * x - 0.5) * y).sum()


def matvec(a, v):
    return a @ v


def matmul(a, b):
    return a @ b


GAUSS = (0.0625, 0.25, 0.375, 0.25, 0.0625)


def _shift(x, offsets, boundary="clamp"):
    """Accelerator's Shift on numpy arrays (`r[i] = x[i - s]`), for the numpy versions of the programs."""
    if isinstance(x, lift.LiftArray):
        return x.shift(offsets, boundary)
    mode = {"clamp": "edge", "wrap": "wrap"}[boundary]
    p = np.pad(x, [(max(s, 0), max(-s, 0)) for s in offsets], mode=mode)
    return p[tuple(slice(max(-s, 0), max(-s, 0) + n) for s, n in zip(offsets, x.shape))]


def convolve(img):
    """Accelerator's Figure 2: the image blurred along x, then along y, each a sum of shifted copies."""
    rows = sum(_shift(img, (0, 2 - i)) * w for i, w in enumerate(GAUSS))
    return sum(_shift(rows, (2 - i, 0)) * w for i, w in enumerate(GAUSS))


def life(cells):
    """One step of Conway's life on a torus; cells are 0.0 or 1.0."""
    where = lift.where if isinstance(cells, lift.LiftArray) else np.where
    n = sum(_shift(cells, (di, dj), "wrap") for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0))
    return where(n == 3.0, 1.0, where(n == 2.0, cells, 0.0))


def blur(img):
    """A 3x3 box blur: lift's stencil, numpy's nine shifted copies."""
    if isinstance(img, lift.LiftArray):
        return img.stencil(lambda w: sum(w[i, j] for i in range(3) for j in range(3)) * (1.0 / 9.0), (3, 3))
    return sum(_shift(img, (1 - i, 1 - j)) for i in range(3) for j in range(3)) * np.float32(1.0 / 9.0)


def rotate(img, rows, cols):
    """The image rotated by 10 degrees about its centre, bilinear between the four source neighbours,
    black outside (cropped). `rows` and `cols` are the pixel coordinates (float32)."""
    lifted = isinstance(img, lift.LiftArray)
    floor, where = (lift.floor, lift.where) if lifted else (np.floor, np.where)
    h, w = img.shape
    c, s = math.cos(math.radians(10)), math.sin(math.radians(10))
    y = (rows - h / 2) * c - (cols - w / 2) * s + h / 2
    x = (rows - h / 2) * s + (cols - w / 2) * c + w / 2
    y0, x0 = floor(y), floor(x)
    fy, fx = y - y0, x - x0
    i, j = y0.astype(np.int32), x0.astype(np.int32)

    def at(a, b):
        return img[a, b] if lifted else img[np.clip(a, 0, h - 1), np.clip(b, 0, w - 1)]
    top = at(i, j) * (1.0 - fx) + at(i, j + 1) * fx
    bottom = at(i + 1, j) * (1.0 - fx) + at(i + 1, j + 1) * fx
    inside = (y >= 0.0) & (y <= h - 1.0) & (x >= 0.0) & (x <= w - 1.0)
    return where(inside, top * (1.0 - fy) + bottom * fy, 0.0)


def _inputs(name: str, scale: float, rng) -> tuple:
    n = max(int(16_777_216 * scale), 1024)
    side = max(int(1000 * math.sqrt(scale)), 16)
    vec = lambda k: rng.random(k, dtype=np.float32)
    if name in ("saxpy", "chain_sum"):
        return vec(n), vec(n)
    if name == "total":
        return (vec(n),)
    if name == "matvec":
        m = max(int(4096 * math.sqrt(scale)), 16)
        return rng.random((m, m), dtype=np.float32), vec(m)
    if name == "matmul":
        m = max(int(512 * scale ** (1 / 3)), 16)
        return rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    if name == "life":
        return ((rng.random((side, side)) < 0.3).astype(np.float32),)
    if name == "rotate":
        rows, cols = np.indices((side, side), dtype=np.float32)
        return rng.random((side, side), dtype=np.float32), rows, cols
    return (rng.random((side, side), dtype=np.float32),)


PROGRAMS = {"saxpy": saxpy, "total": total, "chain_sum": chain_sum, "matvec": matvec, "matmul": matmul,
            "convolve": convolve, "life": life, "blur": blur, "rotate": rotate}


def _median_ms(f, runs: int = RUNS) -> float:
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _hand(name: str, device, inputs: tuple):
    """The hand-written kernel's median time (ms, profiling events) and its output, or None."""
    if name not in ("saxpy", "chain_sum"):
        return None
    import pyopencl as cl

    ctx, queue = runtime.context_and_queue(device)
    program = runtime.build(HAND, device)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in inputs]
    n = inputs[0].size
    if name == "saxpy":
        out = np.empty_like(inputs[0])
        kernel, glb = cl.Kernel(program, "saxpy"), (n,)
        obuf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        kernel.set_args(np.float32(2.5), *bufs, obuf)
    else:
        groups = device.max_compute_units * 64
        while n % groups:
            groups //= 2
        out = np.empty(groups, np.float32)
        kernel, glb = cl.Kernel(program, "chain_sum"), (groups,)
        obuf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        kernel.set_args(*bufs, obuf, np.int32(n // groups))
    times = []
    for _ in range(RUNS + 1):
        event = cl.enqueue_nd_range_kernel(queue, kernel, glb, None)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-6)
    cl.enqueue_copy(queue, out, obuf)
    return statistics.median(times[1:]), (out if name == "saxpy" else out.sum(dtype=np.float64))


def measure(name: str, scale: float, device, rng) -> dict:
    f, inputs = PROGRAMS[name], _inputs(name, scale, rng)
    want = np.asarray(f(*inputs))
    with lift.config(placement="device", device=device):
        lazy = f(*(lift.asarray(a) for a in inputs))
        p = plan(lazy)
        got = lazy.get()
        tol = 1e-3 * max(float(np.abs(want).max()), 1.0) * (10 if want.ndim == 0 else 1)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=tol):
            raise AssertionError(f"{name}: lift's output differs from numpy's")
        kernel_ms = p.compiled.time(*(n.host_value().reshape(n.shape or (1,)) for n in p.structure.inputs),
                                    repeat=RUNS).kernels_ms
        whole_ms = _median_ms(lambda: f(*(lift.asarray(a) for a in inputs)).get())
        queue = p.compiled.queue
        resident = [lift.asarray(cla.to_device(queue, a)) for a in inputs]
        resident_ms = _median_ms(lambda: (lift.evaluate(f(*resident)), queue.finish()))
    row = {"program": name, "shape": " ".join(str(a.shape) for a in inputs),
           "kernels": len(p.compiled.generated().kernels), "lift_kernels_ms": kernel_ms, "lift_whole_ms": whole_ms,
           "lift_resident_ms": resident_ms, "numpy_ms": _median_ms(lambda: f(*inputs))}
    hand = _hand(name, device, inputs)
    if hand is not None:
        if not np.allclose(hand[1], want, rtol=1e-3, atol=tol):
            raise AssertionError(f"{name}: the hand-written kernel's output differs from numpy's")
        row["hand_ms"] = hand[0]
    if name == "chain_sum":
        row.update(_floor_rounds(f, inputs, resident, p, device))
    return row


def _streaming(device, nbytes: int):
    """A function timing one pass of `lift.explore.bandwidth`'s streaming kernels over `nbytes`: the time to
    stream them at that pass's best rate (its float4 copy moves twice its bytes, its reads once), in ms."""
    import pyopencl as cl

    ctx, queue = runtime.context_and_queue(device)
    program = runtime.build(bandwidth.SOURCE, device)
    n = nbytes // 16
    items = device.max_compute_units * 1024
    while n % items:
        items //= 2
    src, dst = (cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * n) for _ in range(2))
    cl.enqueue_fill_buffer(queue, src, np.float32(1), 0, 16 * n).wait()
    runs = [(cl.Kernel(program, "copy4"), n, (src, dst), 0.5)] + \
        [(cl.Kernel(program, name), items, (src, dst, np.int32(n)), 1.0) for name in ("read_chunked", "read_strided")]

    def once() -> float:
        times = []
        for kernel, size, args, share in runs:
            kernel.set_args(*args)
            event = cl.enqueue_nd_range_kernel(queue, kernel, (size,), None)
            event.wait()
            times.append((event.profile.end - event.profile.start) * 1e-6 * share)
        return min(times) * nbytes / (16 * n)
    return once


def _spread(numerator: list, denominator: list) -> str:
    """Two sides' times of the same rounds compared: best over best, median over median."""
    median = statistics.median
    return f"best {min(numerator) / min(denominator):.2f}x, median {median(numerator) / median(denominator):.2f}x"


def _floor_rounds(f, inputs: tuple, resident: list, p, device) -> dict:
    """The issue's floor, measured in `FLOOR_ROUNDS` interleaved rounds (so that the shared machine's load
    weighs on every side alike): per round, an evaluation on device arrays (graph, cache, kernels, waited
    for), lift's kernels alone, the streaming bound of the inputs' bytes, and numpy; their times (ms)."""
    queue = p.compiled.queue
    stream = _streaming(device, sum(a.nbytes for a in inputs))
    prepared = p.compiled.prepare(*inputs)
    prepared.upload()
    rounds = {"floor_evaluation": [], "floor_kernels": [], "floor_bound": [], "floor_numpy": []}
    for _ in range(FLOOR_ROUNDS):
        rounds["floor_evaluation"].append(_median_ms(lambda: (lift.evaluate(f(*resident)), queue.finish()), 1))
        rounds["floor_kernels"].append(sum(prepared.launch()))
        rounds["floor_bound"].append(stream())
        rounds["floor_numpy"].append(_median_ms(lambda: f(*inputs), 1))
    return rounds


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="problem sizes times this (elements)")
    parser.add_argument("--only", default=",".join(PROGRAMS), help="comma-separated programs")
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    names = args.only.split(",")
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program {', '.join(unknown)}; choose from {', '.join(PROGRAMS)}")
    device = runtime.select_device(args.device)
    rng = np.random.default_rng(0)
    rows = [measure(name, args.scale, device, rng) for name in names]
    print(f"lift arrays on {device.name.strip()} (medians of {RUNS} runs, ms; ratios: numpy's time over lift's)")
    print("  kern: lift's kernels; resident: an evaluation on device arrays (graph, cache, kernels); whole: from "
          "numpy to numpy")
    print(f"{'program':10} {'kernels':>7} {'kern':>9} {'resident':>9} {'whole':>9} {'numpy':>9} {'hand':>9} "
          f"{'np/kern':>8} {'np/resid':>8} {'np/whole':>8} {'hand/kern':>9}")
    nan = float("nan")
    for r in rows:
        hand = r.get("hand_ms")
        print(f"{r['program']:10} {r['kernels']:7d} {r['lift_kernels_ms']:9.3f} {r['lift_resident_ms']:9.3f} "
              f"{r['lift_whole_ms']:9.3f} {r['numpy_ms']:9.3f} {hand if hand is not None else nan:9.3f} "
              f"{r['numpy_ms'] / r['lift_kernels_ms']:7.2f}x {r['numpy_ms'] / r['lift_resident_ms']:7.2f}x "
              f"{r['numpy_ms'] / r['lift_whole_ms']:7.2f}x "
              f"{(hand / r['lift_kernels_ms']) if hand is not None else nan:8.2f}x")
    for r in rows:
        if "floor_bound" in r:
            evaluation = r["floor_evaluation"]
            print(f"floor, chain of 5 element-wise operations and a sum ({r['shape']}) on device arrays, "
                  f"{FLOOR_ROUNDS} interleaved rounds: {_spread(r['floor_bound'], evaluation)} the streaming bound "
                  f"(floor 0.8x); {_spread(r['floor_numpy'], evaluation)} numpy (floor 3x); kernels alone "
                  f"{_spread(r['floor_bound'], r['floor_kernels'])} the streaming bound")
    return rows


if __name__ == "__main__":
    main()
