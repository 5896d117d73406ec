"""Matrix multiply: the kernel `lift explore` derives with the macro rules against numpy, CLBlast and a
hand-written OpenCL kernel, timed interleaved in one run.

    python -m benchmarks.bench_matmul [--shape 1024x1024x1024] [--budget 600] [--rounds 7] [--replay]
                                      [--block h,w,vector,dims[,packed]]

For each shape `MxNxK` (C = A B with A of M×K, B of K×N): the explored winner of `examples/matmul.py`
(explored within `--budget` seconds into `lift-out/matmul-<shape>/`, resuming its log; with `--replay` the
winner stored there is replayed, exploring only where there is none; with `--block` the register blocking
given is derived without a search), then `--rounds` interleaved rounds
each timing every contender once (wall clock around a synchronous call, inputs already on the device for
the OpenCL ones): lift's winner at its work-group size, numpy's `A @ B` (OpenBLAS), CLBlast's sgemm through
pyclblast (skipped with a line saying why where it is not installed: `apt-get install libclblast-dev`, `pip
install pyclblast`), and a hand-written kernel (`matmul_4x16` of `handwritten.cl`: 4×16 results per work-item
in eight float8 registers). Every contender's output is checked against numpy first. Prints best and median times, GFLOP/s,
the ratios to lift's winner, the issue's floors (≥ 1.0x CLBlast, ≥ 0.25x numpy), and the cost model's
Spearman rank correlation over the candidates measured in this run's explore.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Optional

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from lift.explore import explore
from lift.explore.candidate import program_key
from lift.explore.report import winner_paths
from lift.explore.rewrite_search import RewriteSearch
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram
from lift.opencl_gen.launch import local_size_overrides
from lift.ir.printer import paper
from lift.rules import Derivation
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import derive

from benchmarks.applications import handwritten_program
from benchmarks.measure import checked_and_timed

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "matmul.py"



def winner(sizes: dict, budget_s: float, replay: bool, root: Path) -> tuple:
    """The explored winner's program and local size, how it was found, and the run's rank correlation."""
    pf = load_program_file(EXAMPLE)
    program = pf.kernels["matmul"]
    folder = root / f"matmul-{sizes['M']}x{sizes['N']}x{sizes['K']}"
    path = winner_paths(folder, "matmul")["derivation"]
    rho, note = None, "replayed"
    if not (replay and path.is_file()):
        result = explore(pf, "matmul", sizes, RewriteSearch(program, sizes), budget_s=budget_s, out_dir=folder,
                         progress=False)
        rho = result.rank_correlation
        note = f"explored: {result.evaluated} candidates evaluated now, {len(result.ranked)} ranked ({result.stopped})"
    stored = json.loads(path.read_text())
    lowered = Derivation.from_json(json.dumps(stored)).replay(program)
    local_size = stored["params"].get("local_size")
    assert program_key(lowered, local_size) == stored["key"], "the replayed winner is not the program measured"
    return lowered, local_size, stored, note, rho


def blocked(sizes: dict, block: str) -> tuple:
    """The register-blocked lowering `h,w,vector,dims[,packed]` (`vector` 1: scalars; `dims` "10" or "01"; `packed`:
    the blocks of columns of B packed, `pack-copy`) derived now, without a search: to time the parameters a search
    found at one shape at another."""
    h, w, vector, dims, *packed = block.split(",")
    program = load_program_file(EXAMPLE).kernels["matmul"]
    strategy = register_blocked(int(h), int(w), int(vector) if int(vector) > 1 else None,
                                (int(dims[0]), int(dims[1])), packed=packed == ["packed"])
    lowered = derive(strategy, program, sizes).replay(program)
    stored = {"params": {"register-blocked": block}, "expression": paper(lowered)}
    return lowered, None, stored, "derived with the given parameters, not explored", None


def contenders(sizes: dict, a: np.ndarray, b: np.ndarray, lowered, local_size: Optional[int]) -> dict:
    """Name → a synchronous call giving the result (numpy), for every contender available here."""
    device = runtime.select_device(None)
    _, queue = runtime.context_and_queue(device)
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    out: dict = {}

    generated = CompiledProgram(lowered, device, sizes).generated(sizes)
    launch = local_size_overrides(generated.kernels, local_size) if local_size else None
    prepared = CompiledProgram(lowered, device, sizes, launch=launch).prepare(a, b)
    prepared.upload()
    out["lift"] = (lambda: prepared.launch(), lambda: np.asarray(prepared.download()[0]).reshape(m, n))
    out["numpy A @ B"] = (lambda: a @ b, lambda: a @ b)

    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    dc = cla.zeros(queue, (m, n), np.float32)
    try:
        import pyclblast

        def sgemm():
            pyclblast.gemm(queue, m, n, k, da, db, dc, a_ld=k, b_ld=n, c_ld=n)
            queue.finish()

        out["CLBlast sgemm"] = (sgemm, lambda: dc.get())
    except ImportError as e:
        print(f"CLBlast: skipped ({e}; apt-get install libclblast-dev, then pip install pyclblast)")
    if m % 4 == 0 and n % 16 == 0:
        kernel = cl.Kernel(handwritten_program(device), "matmul_4x16")
        hc = cla.zeros(queue, (m, n), np.float32)

        def hand():
            kernel(queue, (n // 16, m // 4), None, da.data, db.data, hc.data, np.int32(k), np.int32(n)).wait()

        out["hand-written OpenCL"] = (hand, lambda: hc.get())
    return out


def report(sizes: dict, times: dict, stored: dict, note: str, rho: Optional[float]) -> None:
    flops = 2.0 * sizes["M"] * sizes["N"] * sizes["K"]
    print(f"\nmatmul M={sizes['M']} N={sizes['N']} K={sizes['K']}: lift's winner {stored['params']} ({note})")
    print(f"  {stored['expression']}")
    lift_best = min(times.get("lift", [float("nan")]))
    print(f"{'contender':<22}{'best ms':>10}{'median ms':>11}{'GFLOP/s':>9}{'lift/them':>11}")
    for name, ts in times.items():
        best, median = min(ts), statistics.median(ts)
        print(f"{name:<22}{best:>10.2f}{median:>11.2f}{flops / best / 1e6:>9.1f}{best / lift_best:>10.2f}x")
    floors = [("CLBlast sgemm", 1.0), ("numpy A @ B", 0.25)]
    for name, floor in floors:
        if name in times and "lift" in times:
            ratio = min(times[name]) / lift_best
            print(f"floor: lift ≥ {floor}x {name}: {ratio:.2f}x ({'met' if ratio >= floor else 'MISSED'})")
    if rho is not None:
        print(f"cost model: Spearman rank correlation with the measured times {rho:+.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable; default 1024x1024x1024)")
    parser.add_argument("--budget", type=float, default=600.0, help="explore budget per shape, seconds")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--replay", action="store_true", help="replay a stored winner where there is one")
    parser.add_argument("--out", type=Path, default=Path("lift-out"))
    parser.add_argument("--block", help="h,w,vector,dims[,packed]: time this register blocking instead of exploring")
    args = parser.parse_args()
    for shape in args.shape or ["1024x1024x1024"]:
        m, n, k = (int(x) for x in shape.split("x"))
        sizes = {"M": m, "K": k, "N": n}
        rng = np.random.default_rng(0)
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        lowered, local_size, stored, note, rho = blocked(sizes, args.block) if args.block else \
            winner(sizes, args.budget, args.replay, args.out)
        times = checked_and_timed(contenders(sizes, a, b, lowered, local_size), a.astype(np.float64) @ b, args.rounds)
        report(sizes, times, stored, note, rho)


if __name__ == "__main__":
    main()
