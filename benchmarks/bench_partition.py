"""Speed of the kernel partitioner on program graphs of 10 to 10,000 calls, and what it predicts.

    python -m benchmarks.bench_partition

Builds random program graphs shaped like linear-algebra scripts (mostly chains of calls, each reading the
previous result and now and then a recent one or a fresh input; three iteration spaces; some full
reductions; footprints that let a handful of calls share a kernel) of 10, 100, 1,000 and 10,000 ops, and
prints for each size the time of `optimal_partition` (default window; the mean over three graphs, each
the best of a few runs), the fitted exponent of time against size (the log-log slope: near-linear is
1.0 to 1.2, DPMPP measured 1.15), and the predicted totals of the dynamic programme, greedy maximal
fusion and no fusion (summed over the three graphs).
"""

from __future__ import annotations

import math
import random
import time

from lift.explore.partition import DeviceLimits, Footprint, FusionCostModel, FusionGraph, Op
from lift.explore.partition_search import fuse_all_legal, fuse_nothing, optimal_partition

SIZES = (10, 100, 1000, 10000)
SEEDS = (0, 1, 2)
N, M = 1 << 20, 1 << 12
SPACES = (("vector", N), ("rows", M, N // M), ("cols", N // M, M))


def random_program(n: int, seed: int = 0) -> FusionGraph:
    """A random script of `n` calls: 70% continue the previous call's chain, 20% also read a result of the
    last eight calls, 10% start from fresh inputs; a sixth are full reductions."""
    rng = random.Random(seed)
    ops = []
    space = SPACES[0]
    for i in range(n):
        if rng.random() < 0.15:
            space = rng.choice(SPACES)
        reads = {}
        recent = [o for o in ops[-8:] if o.space == space]
        if ops and rng.random() < 0.9:
            prev = ops[-1]
            reads.update(prev.writes)
            if recent and rng.random() < 0.2:
                reads.update(rng.choice(recent).writes)
        if not reads or rng.random() < 0.3:
            reads[f"in{i}"] = 4 * N
        reduction = rng.random() < 1 / 6
        out = 4 * (N // 1024 if reduction else N)
        fp = Footprint(local_bytes=rng.choice((0, 0, 4096, 8192)), registers=rng.randint(16, 48), work_group=256)
        ops.append(Op(f"op{i}", space, reads, {f"a{i}": out}, flops=2.0 * N, reduction=reduction, footprint=fp))
    read = {a for op in ops for a, _ in op.reads}
    outputs = {a for op in ops for a, _ in op.writes if a not in read or rng.random() < 0.05}
    return FusionGraph(tuple(ops), frozenset(outputs))


def best_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def slope(xs, ys) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def main() -> None:
    limits, model = DeviceLimits(), FusionCostModel()
    print(f"{'ops':>6} {'DP s':>9} {'us/op':>7} {'kernels':>8} {'DP ms':>9} {'fuse-all ms':>12} "
          f"{'fuse-none ms':>13} {'DP/all':>7} {'DP/none':>8}")
    times = []
    for n in SIZES:
        total_s, kernels, dp_ms, all_ms, none_ms = 0.0, 0, 0.0, 0.0, 0.0
        for seed in SEEDS:
            g = random_program(n, seed=n + seed)
            repeat = 5 if n <= 100 else 2 if n <= 1000 else 1
            result = {}
            total_s += best_s(lambda: result.setdefault("p", optimal_partition(g, limits, model)), repeat)
            dp = result["p"]
            kernels += len(dp.kernels)
            dp_ms += dp.time_ms
            all_ms += fuse_all_legal(g, limits, model).time_ms
            none_ms += fuse_nothing(g, limits, model).time_ms
        t = total_s / len(SEEDS)
        times.append(t)
        print(f"{n:6} {t:9.4f} {t / n * 1e6:7.1f} {kernels / len(SEEDS):8.0f} {dp_ms:9.3f} {all_ms:12.3f} "
              f"{none_ms:13.3f} {dp_ms / all_ms:7.3f} {dp_ms / none_ms:8.3f}")
    print(f"fitted exponent (log-log slope of DP time against ops): {slope(SIZES, times):.2f}")
    print(f"  from 100 ops on: {slope(SIZES[1:], times[1:]):.2f}")


if __name__ == "__main__":
    main()
