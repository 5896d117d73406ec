"""The Table 1 sequences fused, unfused and in numpy: the kernel-fusion paper's Tables 2-3 on our device.

    python -m benchmarks.bench_sequences [--only axpydot,vadd] [--size K=4194304 --size M=4096 --size N=4096]

For each sequence of `examples/sequences.py`: the partition the dynamic programme chooses (`fused`) and
one kernel group per call (`unfused`), each lowered by `lift.explore.fusion_lowering.lower` at the chunk
sizes of `--chunks`, vector widths of `--widths` and work-group sizes of `--locals` for the `map-global`
kernels (0 leaves them to the driver, whose choice can halve a kernel's speed on PoCL) (both get the same
search: every lowering, checked first, timed in interleaved rounds, the fastest kept), and numpy's
`NUMPY[name]`. Every output is checked against `lift.interpret` of the high-level sequence first. Then the
three are timed in `ROUNDS` interleaved rounds so that the machine's drift hits them alike: kernel times from profiling events (transfers
excluded). The machine is shared: other work only ever adds time, so the table gives the best time of
each (its speed) and the median (what a run sees), and the ratios of both. GFLOP/s counts the calls' operations; GB/s
the global bytes each implementation moves by the partition model's count (inputs read once per kernel,
intermediates kept on chip not counted), as the paper's Table 3 counts "data really transferred".

The issue's floors: AXPYDOT, VADD, WAXPBY, GEMVER and BiCGK at least 1.5x faster fused than unfused.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from benchmarks.measure import HostRun, check_outputs, interleaved
from lift import CallGraph, interpret
from lift.explore.fusion_graph import fusion_graph
from lift.explore.fusion_lowering import lower
from lift.explore import partition as part
from lift.explore import partition_search as search
from lift.ir.program_file import load_program_file
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.launch import local_size_overrides

SEQUENCES = Path(__file__).resolve().parent.parent / "examples" / "sequences.py"
NAMES = ("axpydot", "atax", "bicgk", "sgemv", "sgemvt", "sscal", "gemver", "gesummv", "madd", "vadd", "waxpby")
FLOORS = {"axpydot": 1.5, "vadd": 1.5, "waxpby": 1.5, "gemver": 1.5, "bicgk": 1.5}
ROUNDS, SEARCH_ROUNDS, RUNS = 15, 3, 4


def _best_lowering(name: str, cg: CallGraph, blocks: tuple, chunks: tuple, widths: tuple, locals_: tuple,
                   inputs: list, reference: tuple, sizes: dict):
    """The lowering of `blocks` whose chunk size, width and work-group size run fastest (each checked first,
    all timed in interleaved rounds): `(compiled, (chunk, width, local), kernels)`."""
    lowered = {}
    for chunk in chunks:
        for width in widths:
            program = lower(cg, blocks, chunk, sizes, width).program
            for local in locals_:
                compiled = compile(program, sizes=sizes, name=name)
                if local:
                    compiled = compile(program, sizes=sizes, name=name,
                                       launch=local_size_overrides(compiled.generated().kernels, local))
                if check_outputs(compiled(*inputs), reference) is not None:
                    raise AssertionError(f"{name} {blocks} chunk {chunk} width {width}: wrong output")
                lowered[chunk, width, local] = compiled
    times = interleaved({k: partial(c.prepare, *inputs) for k, c in lowered.items()}, SEARCH_ROUNDS, RUNS)
    best = min(times, key=lambda k: min(times[k]))
    compiled = lowered[best]
    return compiled, best, len(compiled.generated().kernels)


def measure(name: str, pf, sizes: dict, chunks: tuple, widths: tuple, locals_: tuple) -> dict:
    program = pf.kernels[name]
    inputs = pf.inputs(name, sizes, 0)
    reference = interpret(program, *inputs, sizes=sizes)
    reference = reference if isinstance(reference, tuple) else (reference,)
    if check_outputs(pf.namespace["NUMPY"][name](*inputs), reference) is not None:
        raise AssertionError(f"{name}: numpy's reference differs from lift.interpret")
    cg = CallGraph.of(program)
    graph = fusion_graph(cg, sizes)
    limits, model = part.DeviceLimits(), part.FusionCostModel()
    chosen = {"fused": search.optimal_partition(graph, limits, model, window=max(len(graph.ops), 1)),
              "unfused": search.fuse_nothing(graph, limits, model)}
    row = {"sequence": name, "flops": sum(op.flops for op in graph.ops)}
    runs = {}
    for kind, p in chosen.items():
        blocks = tuple(tuple(graph.index[op] for op in k.ops) for k in p.kernels)
        compiled, (chunk, width, local), kernels = _best_lowering(name, cg, blocks, chunks, widths, locals_, inputs,
                                                                  reference, sizes)
        runs[kind] = partial(compiled.prepare, *inputs)
        row[kind] = {"chunk": chunk, "width": width, "local": local or "-", "kernels": kernels,
                     "bytes": p.global_bytes}
    runs["numpy"] = lambda: HostRun(lambda: pf.namespace["NUMPY"][name](*inputs))
    for kind, ms in interleaved(runs, ROUNDS, RUNS).items():
        row.setdefault(kind, {}).update(best=min(ms), median=statistics.median(ms))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated sequences")
    parser.add_argument("--size", action="append", default=[], help="K=..., M=..., N=... (default: the file's SIZES)")
    parser.add_argument("--chunks", default="16,64,256", help="chunk sizes tried for fused and unfused alike")
    parser.add_argument("--widths", default="1,4,8", help="vector widths tried for fused and unfused alike")
    parser.add_argument("--locals", default="0,1", help="work-group sizes of map-global kernels tried for fused and "
                        "unfused alike (0: the driver's choice)")
    args = parser.parse_args()
    pf = load_program_file(SEQUENCES)
    sizes = dict(pf.sizes)
    sizes.update({k: int(v) for k, v in (s.split("=") for s in args.size)})
    chunks = tuple(int(c) for c in args.chunks.split(","))
    widths = tuple(int(w) for w in args.widths.split(","))
    locals_ = tuple(int(w) for w in args.locals.split(","))
    print(f"sizes {sizes}; chunks {chunks}; widths {widths}; work-group sizes {locals_}; {ROUNDS} interleaved "
          f"rounds of {RUNS} runs; kernel times, transfers excluded\n")
    print("Times in ms, best / median of the rounds; GFLOP/s and GB/s of the best times.\n")
    print("| sequence | fused ms | unfused ms | numpy ms | fused/unfused best (median) | fused/numpy best "
          "| kernels fused/unfused | chunk, width, work-group fused/unfused "
          "| fused GFLOP/s | fused GB/s | unfused GB/s | floor |")
    print("|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|---|")
    for name in (args.only.split(",") if args.only else NAMES):
        r = measure(name, pf, sizes, chunks, widths, locals_)
        f, u, n = r["fused"], r["unfused"], r["numpy"]
        speedup, median = u["best"] / f["best"], u["median"] / f["median"]
        floor = FLOORS.get(name)
        verdict = "" if floor is None else f"{'met' if speedup >= floor else 'MISSED'} (≥ {floor})"
        print(f"| {name} | {f['best']:.3f} / {f['median']:.3f} | {u['best']:.3f} / {u['median']:.3f} "
              f"| {n['best']:.3f} / {n['median']:.3f} | {speedup:.2f}x ({median:.2f}x) | {n['best'] / f['best']:.2f}x "
              f"| {f['kernels']}/{u['kernels']} | {f['chunk']}, {f['width']}, {f['local']} / "
              f"{u['chunk']}, {u['width']}, {u['local']} "
              f"| {r['flops'] / f['best'] / 1e6:.1f} | {f['bytes'] / f['best'] / 1e6:.1f} "
              f"| {u['bytes'] / u['best'] / 1e6:.1f} | {verdict} |", flush=True)


if __name__ == "__main__":
    main()
