"""Speed of the rewrite engine: enumerating every applicable rewrite, and applying one.

    python -m benchmarks.bench_rules

On the programs of a derivation (the steps of Figure 9(b) from asum, and gemv's work-group-per-row
derivation), picks the ones closest to 50 nodes and prints, in milliseconds:

- `enumerate`: every (rule, location, parameters) that applies, typing included (`infer` run afresh);
- `apply`: one rewrite, averaged over every rewrite of the program, type-checking the result included;
- `typecheck`: the part of `apply` spent in `infer` on the result.

The floors: enumerating under 10 ms, applying (type-checking included) under 1 ms.
"""

from __future__ import annotations

import time

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, UserFun, Zip, fun, infer
from lift.ir import typecheck
from lift.rules import RewriteEngine
from lift.rules import paper_derivations as pd

F = Float
N, M = SizeVar("N"), SizeVar("M")
absf = UserFun("absf", ("x",), "return fabs(x);", (F,), F, python=np.abs)
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (F, F), F, python=lambda x, y: x * y)

ASUM = fun([ArrayType(F, N)], lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
GEMV = fun([ArrayType(ArrayType(F, N), M), ArrayType(F, N), ArrayType(F, M), F, F],
           lambda A, x, y, a, b: Map(add)(Zip(
               Join()(Map(lambda row: Map(lambda v: mult(a, v))((Reduce(add, 0.0) @ Map(mult))(Zip(x, row))))(A)),
               Map(lambda v: mult(b, v))(y))))


def nodes(node) -> int:
    return 1 + sum(nodes(c) for _, c in node.children())


def best_ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def measure(name: str, program, engine: RewriteEngine) -> None:
    def enumerate_cold():
        typecheck._infer_cached.cache_clear()
        return engine.rewrites(program)

    rewrites = enumerate_cold()
    enum_ms = best_ms(enumerate_cold)
    infer(program)
    apply_s, check_s = 0.0, 0.0
    for rw in rewrites:
        start = time.perf_counter()
        result = engine.apply(program, rw)
        apply_s += time.perf_counter() - start
        typecheck._infer_cached.cache_clear()
        start = time.perf_counter()
        infer(result)
        check_s += time.perf_counter() - start
        infer(program)
    n = len(rewrites)
    print(f"{name:34} {nodes(program):5} {n:8} {enum_ms:10.2f} {apply_s / n * 1e3:9.3f} {check_s / n * 1e3:10.3f}")


def closest(trace, size: int):
    return min(trace, key=lambda p: abs(nodes(p) - size))


def main() -> None:
    engine = RewriteEngine()
    print(f"{'program':34} {'nodes':>5} {'rewrites':>8} {'enumerate':>10} {'apply':>9} {'typecheck':>10}   (ms)")
    asum_trace = pd.FIGURE_9B.trace(ASUM)
    gemv_trace = pd.GEMV_WORKGROUP_PER_ROW.trace(GEMV)
    measure("asum (Figure 5)", ASUM, engine)
    measure("Figure 9(b), step nearest 50 nodes", closest(asum_trace, 50), engine)
    measure("Figure 9(b), final", asum_trace[-1], engine)
    measure("gemv (Figure 5)", GEMV, engine)
    measure("gemv per row, step nearest 50 nodes", closest(gemv_trace, 50), engine)
    print("floors: enumerate < 10 ms, apply (typecheck included) < 1 ms")


if __name__ == "__main__":
    main()
