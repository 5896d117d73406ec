"""The kernel-fusion paper's Table 4 for the Table 1 sequences on the default OpenCL device.

For each sequence: the implementations (legal partitions of its calls × chunk sizes × vector widths), measured in the
partition model's predicted order (with the device's figures, as `lift explore` predicts) up to a budget (the DP's choice, fuse-all-legal and fuse-nothing always),
each checked against `lift.interpret` of the high-level sequence before it is timed. Prints the number of
implementations, timed in interleaved rounds (best time of each), the rank of the fastest measured, the first choice's quality (fastest / first choice),
the worst (fastest / slowest), and the DP's, fuse-all-legal's and fuse-nothing's times.

    python -m benchmarks.bench_kernel_fusion [--budget 6] [--size K=1048576 --size M=1024 --size N=1024]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from benchmarks.measure import check_outputs, interleaved
from lift import CallGraph, interpret
from lift.explore import partition as part
from lift.explore.bandwidth import measure_bandwidth
from lift.explore.fusion_graph import KernelFusionError
from lift.explore.fusion_lowering import Lowered
from lift.explore.sequence_search import DP, FUSE_ALL, FUSE_NOTHING, implementations
from lift.explore.worker import device_facts
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile

SEQUENCES = Path(__file__).resolve().parent.parent / "examples" / "sequences.py"
ROUNDS, RUNS = 5, 4
NAMES = ("axpydot", "atax", "bicgk", "sgemv", "sgemvt", "sscal", "gemver", "gesummv", "madd", "vadd", "waxpby")



@dataclass(frozen=True)
class Table4Row:
    """The fusion paper's Table 4 for one sequence: how many implementations, the rank (in predicted
    order, from 1) of the fastest measured, the first choice's quality (fastest time / first choice's
    time) and the worst's (fastest / slowest measured), and the measured times of the DP's choice,
    fuse-all-legal and fuse-nothing (ms; None when not measured)."""

    sequence: str
    implementations: int
    measured: int
    best_rank: int
    first_quality: float
    worst: float
    dp_ms: Optional[float]
    fuse_all_ms: Optional[float]
    fuse_nothing_ms: Optional[float]
    times: tuple = ()


def table4(name: str, call_graph: CallGraph, sizes: Mapping[str, int],
           measure: Callable[[Sequence[Lowered]], Sequence[Optional[float]]], budget: int,
           chunks: Sequence[int] = (64,), limits: part.DeviceLimits = part.DeviceLimits(),
           model: part.FusionCostModel = part.FusionCostModel(), widths: Sequence[int] = (1,)) -> Table4Row:
    """Measure the first `budget` implementations that lower, in predicted order, and the first that lowers
    of each of the DP's, fuse-all-legal's and fuse-nothing's partitions if none is among them, with
    `measure` (the lowered programs, all at once so that it may time them interleaved, to their ms after
    checking their outputs, None for one that fails), and summarise them as Table 4 does."""
    impls = implementations(call_graph, sizes, chunks, limits, model, widths)
    lowered: dict = {}

    def lower(i: int) -> None:
        try:
            lowered[i] = impls[i].lower(call_graph, sizes)
        except KernelFusionError:  # a chunk that does not divide a width's vectors: not an implementation here
            pass

    for i in range(len(impls)):
        if len(lowered) == budget:
            break
        lower(i)
    for role in (DP, FUSE_ALL, FUSE_NOTHING):
        for i, im in enumerate(impls):
            if any(role in impls[j].roles for j in lowered):
                break
            if role in im.roles:
                lower(i)
    chosen = sorted(lowered)
    measured = measure([lowered[i] for i in chosen])
    times = {i: t for i, t in zip(chosen, measured) if t is not None and math.isfinite(t)}
    if not times:
        raise KernelFusionError(f"{name}: no implementation ran")
    fastest = min(times, key=times.get)
    first = min(times)

    def role(r):
        return next((times[i] for i in sorted(times) if r in impls[i].roles), None)

    return Table4Row(name, len(impls), len(times), fastest + 1, times[fastest] / times[first],
                     times[fastest] / max(times.values()), role(DP), role(FUSE_ALL), role(FUSE_NOTHING),
                     tuple((impls[i].label(call_graph), impls[i].predicted_ms, times[i]) for i in sorted(times)))


def measurer(name: str, inputs: list, reference: tuple, sizes: dict):
    """The lowered programs to their kernel times (ms, the best of `ROUNDS` interleaved rounds of `RUNS`
    launches: the machine is shared, and other work only ever adds time), None for one that fails or
    whose outputs differ from the reference."""
    def measure(lowered: list) -> list:
        checked = {}
        for i, low in enumerate(lowered):
            try:
                compiled = compile(low.program, sizes=sizes, name=name)
                got = compiled(*inputs)
            except Exception as e:  # a failing implementation is reported, not fatal
                print(f"  {name}: {type(e).__name__}: {str(e)[:120]}")
                continue
            reason = check_outputs(got, reference)
            if reason is None:
                checked[i] = partial(compiled.prepare, *inputs)
            else:
                print(f"  {name}: implementation {i} is wrong: {reason}")
        times = interleaved(checked, ROUNDS, RUNS)
        return [min(times[i]) if i in times else None for i in range(len(lowered))]
    return measure


def device_cost_model(sizes: dict) -> part.FusionCostModel:
    """The partition cost model of the default OpenCL device, as `lift explore` makes it: the device's
    facts and its streaming bandwidth measured over as many bytes as a vector and a matrix of `sizes`."""
    device = runtime.select_device()
    nbytes = 4 * (sizes["K"] + sizes["M"] * sizes["N"])
    return part.FusionCostModel.from_device_model(device_facts(device).model(measure_bandwidth(device, nbytes)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=6, help="implementations measured per sequence")
    parser.add_argument("--size", action="append", default=[], help="K=..., M=..., N=...")
    parser.add_argument("--chunks", default="16,64,256")
    parser.add_argument("--widths", default="1,4,8")
    parser.add_argument("--only", default=None, help="comma-separated sequences")
    args = parser.parse_args()
    pf = load_program_file(SEQUENCES)
    sizes = {"K": 1 << 20, "M": 1024, "N": 1024}
    sizes.update({k: int(v) for k, v in (s.split("=") for s in args.size)})
    chunks = tuple(int(c) for c in args.chunks.split(","))
    widths = tuple(int(w) for w in args.widths.split(","))
    model = device_cost_model(sizes)
    print(f"cost model: {model}")
    rows = []
    for name in (args.only.split(",") if args.only else NAMES):
        program = pf.kernels[name]
        inputs = pf.inputs(name, sizes, 0)
        reference = interpret(program, *inputs, sizes=sizes)
        reference = reference if isinstance(reference, tuple) else (reference,)
        row = table4(name, CallGraph.of(program), sizes, measurer(name, inputs, reference, sizes), args.budget,
                        chunks, model=model, widths=widths)
        rows.append(row)
        print(_line(row), flush=True)
    print()
    print("| sequence | impl. | measured | best rank | first choice | worst | DP ms | fuse-all ms | fuse-nothing ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(_line(r))


def _line(r: Table4Row) -> str:
    def ms(t):
        return "-" if t is None else f"{t:.4f}"
    return (f"| {r.sequence} | {r.implementations} | {r.measured} | {r.best_rank} | {r.first_quality:.2f} | "
            f"{r.worst:.2f} | {ms(r.dp_ms)} | {ms(r.fuse_all_ms)} | {ms(r.fuse_nothing_ms)} |")


if __name__ == "__main__":
    main()
