"""Explored kernels at a prime size against a power of two: asum, dot and scal at N = 16,777,213 and N = 2^24.

    python -m benchmarks.bench_odd_sizes [--budget 60] [--rounds 5] [--out DIR]

For each program, `lift explore` searches both sizes in this one run (`--budget` seconds each, one
streaming-bandwidth measurement shared), then the two winners are timed again in turn, `--rounds` times
on the same device (each with its explored work-group size), so that both see the same load. The table gives
each winner's kernel time as explore measured it and as timed again (the median and the best of the rounds; on a
shared machine the best is the least disturbed), its time per element, and the ratios of per-element speeds
(prime / power of two; 1 is as fast per element, issue 17 asks for at least 0.9). At the prime size no chunk divides the
length: the chunked candidates read their input padded with the reduction's neutral element
(`lift.rules.padding`). Every search starts afresh: its output folders and tuning database are under `--out`
(a new temporary folder by default), so that nothing measured earlier is reused.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import lift
from lift.explore import explore
from lift.explore.candidate import LOCAL_SIZE
from lift.explore.report import winner_paths
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import load_program_file
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.launch import local_size_overrides
from lift.rules import Derivation

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PRIME, POW2 = 16_777_213, 1 << 24
PROGRAMS = ("asum", "dot", "scal")


def explored_winner(pf, name: str, sizes: dict, folder: Path, budget_s: float, bandwidth, store: TuningDatabase):
    """Explore `name` at `sizes`; the winner as a compiled program, its expression, and the bandwidth measured."""
    program = pf.kernels[name]
    result = explore(pf, name, sizes, RewriteSearch(program, sizes), budget_s=budget_s, out_dir=folder,
                     bandwidth=bandwidth, progress=False, tuning_database=store)
    if result.winner is None:
        raise SystemExit(f"{name} at {sizes}: no working candidate in {budget_s:g} s")
    stored = json.loads(winner_paths(folder, name)["derivation"].read_text())
    lowered = Derivation.from_json(json.dumps(stored)).replay(program)
    local = result.winner.params.get(LOCAL_SIZE)
    launch = None if local is None else local_size_overrides(generate(lowered, name, sizes).kernels, local)
    compiled = lift.compile(lowered, sizes=sizes, name=name, launch=launch)
    return compiled, result.winner, result.bandwidth, len(result.ranked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of search per program and size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None, help="where the searches write (default: a new temporary "
                        "folder)")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="lift-odd-sizes-"))
    store = TuningDatabase(out / "tuning")
    bandwidth = None
    rows = []
    for name in args.programs.split(","):
        pf = load_program_file(EXAMPLES / f"{name}.py")
        found = {}
        for n in (POW2, PRIME):
            sizes = {"N": n}
            compiled, record, bandwidth, tried = explored_winner(pf, name, sizes, out / f"{name}-N{n}",
                                                                 args.budget, bandwidth, store)
            found[n] = (compiled, pf.inputs(name, sizes, seed=0), record, tried)
        times = {n: [] for n in found}
        for _ in range(args.rounds):
            for n, (compiled, inputs, _, _) in found.items():
                times[n].append(compiled.time(*inputs, repeat=args.repeat).kernels_ms)
        rows.append((name, times, {n: found[n][2] for n in found}, {n: found[n][3] for n in found}))
    print(f"{'program':<8}{'N':>11}{'explore ms':>11}{'median ms':>10}{'best ms':>9}{'ns/elem':>9}{'tried':>6}  winner")
    for name, times, records, tried in rows:
        ms = {"explore": {n: records[n].time_ms for n in records}, "median": {}, "best": {}}
        for n in (POW2, PRIME):
            ms["median"][n], ms["best"][n] = statistics.median(times[n]), min(times[n])
            print(f"{name:<8}{n:>11}{ms['explore'][n]:>11.3f}{ms['median'][n]:>10.3f}{ms['best'][n]:>9.3f}"
                  f"{ms['median'][n] * 1e6 / n:>9.4f}{tried[n]:>6}  {records[n].expression}")
        ratios = ", ".join(f"{k} {(m[POW2] / POW2) / (m[PRIME] / PRIME):.3f}" for k, m in ms.items())
        print(f"{name:<8}per-element speed, prime / 2^24: {ratios}")


if __name__ == "__main__":
    main()
