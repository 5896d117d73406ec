"""lift's explored kernels against what a user would pick instead (issue 18's floors), timed interleaved in one run.

    python -m benchmarks.bench_contenders [--only asum,nbody,...] [--budget 300] [--runs 21] [--rounds 7] [--quick]
                                          [--nbody-n 4096] [--tuning-db temp|user] [--max-candidates N]
                                          [--no-peers]

For each program of `benchmarks.contender_cases` (asum, dot, scal, gemv 4096², BlackScholes 4M options, MD,
1-D 3-point and 2-D 5-point Jacobi (the 2-D one with its weights an input, and as the user function `jacobi5`
of each neighbourhood: jacobi2d5), all-pairs N-body at N = 16,384, matrix multiply 1024³, 4096×4096×64 and
64×4096×4096): `lift explore` searches the high-level program for `--budget` seconds (the explore API, its
records in a temporary tuning database, or in the user's with `--tuning-db user`; with `--budget 0`, no
search: `lift.compile` takes the user's tuning database's winner, else the default lowering), then the
winner, the paper's hand-derived lowerings where the program has them, and the contenders (numpy, scipy's
OpenBLAS wrappers and `ndimage`, numba `prange` loops, JAX `jit`, loopy and CLBlast and hand-written OpenCL
on lift's device) are each checked against numpy's output, then timed in `--rounds` interleaved rounds of
`--runs` / `--rounds` launches each (`benchmarks.measure`; kernel times from OpenCL's profiling events, inputs
already on the device; the host contenders by the wall clock around a call that waits for its result) beside
the hand-written streaming copy over as many bytes as the program reads. A contender whose package is missing
is "skipped (not installed)". With `--no-peers`, only lift's kernels are timed, the winner and the
hand-derived lowerings: the no-regression check (`python -m benchmarks.bench_contenders --only
asum,dot,scal,gemv,blackscholes,md --no-peers`).

Prints per program each contender's best and median time, its rates (GB/s of useful bytes: inputs read
once, output written once; % of the streaming copy's rate, best to best), lift's speed over it (`lift ×`:
its best time over lift's), the ratio of lift to the best contender, and the issue's floors (met or
MISSED; speeds and shares compare best times, the ratio of medians follows, and for a share of the copy
the median and range of its shares round by round, each round's best against the copy's best in the same
round: on a shared machine the load and the buffers' placement change from round to round, and a share of
one round compares lift with the copy under the same ones); then one table of all programs.
`--quick` runs tiny sizes (the test's mode: correctness of the harness, never timing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from lift.errors import LiftError
from lift.explore import explore
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuned_compile import compile as tuned_compile
from lift.explore.tuning_database import TuningDatabase
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram, compile
from lift.opencl_gen.launch import local_size_overrides
from lift.rules import Derivation

from benchmarks import array_libraries, numba_loops, opencl_peers
from benchmarks.contender_cases import CASES, STREAMING, Case, Instance
from benchmarks.measure import Contender, HostRun, Measurement, Unavailable, measure_all

LIFT, DERIVED, NUMPY = "lift", "lift hand-derived", "numpy"
HOST = (("scipy", array_libraries.SCIPY), ("numba", numba_loops.BUILDERS), ("jax", array_libraries.JAX))
DEVICE = (("loopy", opencl_peers.LOOPY_BUILDERS), ("CLBlast", opencl_peers.CLBLAST),
          ("hand-written OpenCL", opencl_peers.HANDWRITTEN),
          ("hand-written float8 lanes", opencl_peers.HANDWRITTEN_LANES))


@dataclass(frozen=True)
class Settings:
    """The search's budget per program (0: no search), its candidates' bound, where its records go (None: a
    temporary tuning database), the timed runs per contender and the interleaved rounds they are spread over,
    the seed of the inputs and the search, the device as `lift devices` names it (None: the default), and
    whether contenders other than lift's are timed."""

    budget_s: float = 300.0
    max_candidates: Optional[int] = None
    tuning_db: Optional[TuningDatabase] = None
    runs: int = 21
    seed: int = 0
    device: Optional[str] = None
    peers: bool = True
    rounds: int = 7


@dataclass
class CaseResult:
    """One program's measurements (by contender name), their kinds, the streaming copy, and how lift's kernel came."""

    label: str
    instance: Instance
    kinds: dict
    measurements: dict
    copy: Measurement
    copy_bytes: int
    note: str
    floors: list = field(default_factory=list)

    def best(self, kind: str) -> Optional[Measurement]:
        timed = [m for name, m in self.measurements.items() if self.kinds[name] == kind and m.ok]
        return min(timed, key=lambda m: m.best_ms, default=None)

    @property
    def lift(self) -> Optional[Measurement]:
        return self.best(LIFT)

    @property
    def rival(self) -> Optional[tuple]:
        """The fastest contender that is not lift's: (name, measurement)."""
        timed = [(n, m) for n, m in self.measurements.items() if m.ok and not self.kinds[n].startswith(LIFT)]
        return min(timed, key=lambda nm: nm[1].best_ms, default=None)

    def streaming_share(self, m: Measurement, medians: bool = False) -> float:
        """`m`'s rate over the streaming copy's timed in the same rounds (useful bytes per second; the copy reads
        and writes its bytes): best time to best time, or median to median."""
        ms, copy_ms = (m.kernel_ms, self.copy.kernel_ms) if medians else (m.best_ms, self.copy.best_ms)
        return self._share(ms, copy_ms)

    def round_shares(self, m: Measurement) -> list:
        """`m`'s streaming share in each round: its best time there against the copy's best in the same round."""
        return [self._share(ms, copy_ms) for ms, copy_ms in zip(m.round_best_ms, self.copy.round_best_ms)]

    def _share(self, ms: float, copy_ms: float) -> float:
        return (self.instance.useful_bytes / ms) / (2 * self.copy_bytes / copy_ms)

    def floor_ratio(self, kind: str, medians: bool = False) -> Optional[float]:
        """lift's speed over the best contender of `kind` (best times, or `medians`), or its streaming share."""
        lift = self.lift
        if lift is None:
            return None
        if kind == STREAMING:
            return self.streaming_share(lift, medians)
        them = self.best(kind)
        if them is None:
            return None
        return them.kernel_ms / lift.kernel_ms if medians else them.best_ms / lift.best_ms


def explored_winner(inst: Instance, device, settings: Settings, folder: Path, log: Callable) -> tuple:
    """lift's program for `inst`: `(compiled program, note)` (see the module docstring)."""
    if settings.budget_s <= 0:
        return tuned_compile(inst.program, device, inst.sizes), "no search: lift.compile (tuned, else default)"
    log(f"  exploring {inst.case.kernel} for up to {settings.budget_s:g} s ...")
    try:
        result = explore(inst.program_file, inst.case.kernel, inst.sizes,
                         RewriteSearch(inst.program, inst.sizes, settings.seed), budget_s=settings.budget_s,
                         out_dir=folder, device=settings.device, max_candidates=settings.max_candidates,
                         seed=settings.seed, progress=False,
                         tuning_database=settings.tuning_db or TuningDatabase(folder / "tuning"))
    except LiftError as e:
        raise Unavailable(f"lift explore found nothing: {e}") from None
    winner = result.winner
    if winner is None:
        raise Unavailable(f"lift explore found no working candidate ({result.stopped})")
    program = Derivation.from_json(json.dumps({"sizes": dict(winner.sizes), "steps": list(winner.derivation)})
                                   ).replay(inst.program)
    local_size = winner.params.get("local_size")
    launch = None
    if local_size:
        launch = local_size_overrides(CompiledProgram(program, device, inst.sizes).generated(inst.sizes).kernels,
                                      local_size)
    rho = result.rank_correlation
    note = (f"explored: {len(result.ranked)} candidates ({result.stopped}), cost model's Spearman "
            f"{'n/a' if rho is None else f'{rho:+.2f}'}; winner {winner.time_ms:.4g} ms when explored "
            f"({f'work-groups of {local_size}' if local_size else 'work-groups sized by the driver'}): "
            f"{winner.expression}")
    return compile(program, device, inst.sizes, name=inst.case.kernel, launch=launch), note


def contenders(inst: Instance, device, lift_run: Optional[Callable], peers: bool = True) -> list:
    """Every contender of `inst`: lift's (when there is one), the hand-derived lowerings, and with `peers` numpy
    and the libraries."""
    family = inst.case.peers
    out = [] if lift_run is None else [Contender(LIFT, LIFT, lift_run)]
    for kernel_name in inst.case.derived:
        compiled = compile(inst.program_file.kernels[kernel_name], device, inst.sizes, name=kernel_name)
        out.append(Contender(f"lift {kernel_name}", DERIVED, partial(compiled.prepare, *inst.inputs)))
    if not peers:
        return out
    out.append(Contender(NUMPY, NUMPY, lambda: HostRun(lambda: inst.case.numpy(*inst.inputs), inst.case.layout)))
    for kind, builders in HOST:
        out.append(Contender(kind, kind, partial(_build, builders, family, kind, inst)))
    for kind, builders in DEVICE:
        out.append(Contender(kind, kind, partial(_build, builders, family, kind, inst, device)))
    return out


def _build(builders: dict, family: str, kind: str, *arguments):
    if family not in builders:
        raise Unavailable(f"no {kind} version of {family}")
    return builders[family](*arguments)


def run_case(case: Case, sizes: dict, device, settings: Settings, folder: Path, log: Callable = print) -> CaseResult:
    """One program: its lift kernel found, every contender checked, then all timed interleaved."""
    start = time.perf_counter()
    inst = Instance.make(case, sizes, settings.seed)
    label = case.label(sizes)
    log(f"{label}: numpy's reference in {time.perf_counter() - start:.1f} s")
    lift_run = None
    try:
        compiled, note = explored_winner(inst, device, settings, folder, log)
        lift_run = partial(compiled.prepare, *inst.inputs)
    except (Unavailable, LiftError) as e:
        note = f"no lift kernel: {e}"
    log(f"  {note}")
    copy, copy_bytes = opencl_peers.streaming_copy(device, inst.input_bytes)
    entrants = contenders(inst, device, lift_run, settings.peers)
    measured, ticks = measure_all(entrants, inst.reference, settings.runs, {STREAMING: copy}, log, transfers=False,
                                  rounds=settings.rounds)
    result = CaseResult(label, inst, {c.name: c.kind for c in entrants}, measured, ticks[STREAMING], copy_bytes, note)
    result.floors = [(floor, result.floor_ratio(floor.kind)) for floor in case.floors]
    log(f"  {time.perf_counter() - start:.0f} s in all")
    return result


def report(r: CaseResult) -> list:
    """The lines of one program's table, the ratio of lift to the best contender, and its floors."""
    lift = r.lift
    flops = r.instance.case.flops(r.instance.sizes) if r.instance.case.flops else None
    lines = [f"\n{r.label}  ({r.note})",
             f"  {'contender':<28}{'best ms':>10}{'median ms':>11}{'GB/s':>8}{'GFLOP/s':>9}{'% copy':>8}"
             f"{'lift ×':>8}"]
    for name, m in r.measurements.items():
        if not m.ok:
            lines.append(f"  {name:<28}{m.status} ({m.reason})")
            continue
        gbps = r.instance.useful_bytes / (m.best_ms * 1e6)
        speed = f"{m.best_ms / lift.best_ms:.2f}" if lift else "-"
        gflops = f"{flops / (m.best_ms * 1e6):.1f}" if flops else ""
        lines.append(f"  {name:<28}{m.best_ms:>10.3f}{m.kernel_ms:>11.3f}{gbps:>8.1f}{gflops:>9}"
                     f"{100 * r.streaming_share(m):>7.0f}%{speed:>8}")
    lines.append(f"  {STREAMING + ' (hand-written)':<28}{r.copy.best_ms:>10.3f}{r.copy.kernel_ms:>11.3f}"
                 f"{2 * r.copy_bytes / (r.copy.best_ms * 1e6):>8.1f}")
    rival = r.rival
    if lift is not None and rival is not None:
        lines.append(f"  lift ÷ best contender ({rival[0]}): {rival[1].best_ms / lift.best_ms:.2f}x "
                     "(speed; best times)")
    for floor, ratio in r.floors:
        streaming = floor.kind == STREAMING
        what = f"{floor.least:.0%} of the streaming copy" if streaming else f"{floor.least:g}x {floor.kind}"
        medians = "" if ratio is None else \
            f"; medians {r.floor_ratio(floor.kind, medians=True):.2f}{'' if streaming else 'x'}" + \
            (f"; {_spread(r.round_shares(r.lift))} round by round" if streaming else "")
        verdict = "MISSED (not measured)" if ratio is None else \
            f"{'met' if ratio >= floor.least else 'MISSED'} ({ratio:.2f}{'' if streaming else 'x'}{medians})"
        lines.append(f"  floor: lift ≥ {what}: {verdict}")
    return lines


def _spread(shares: list) -> str:
    """Shares of several rounds: their median and range."""
    return f"{statistics.median(shares):.2f} ({min(shares):.2f}-{max(shares):.2f})"


def summary(results: list) -> list:
    """One markdown row per program: lift's best and median, the best contender, the ratio, lift's share of the
    copy (best to best, and the median of its rounds' shares), the floors."""
    lines = ["", "| program | lift best ms | lift median ms | best contender | its best ms | lift ÷ it "
             "| lift % of copy | per round | floors |", "|---|--:|--:|---|--:|--:|--:|--:|---|"]
    for r in results:
        lift, rival = r.lift, r.rival
        floors = "; ".join(f"{f.kind} ≥ {f.least:g}: {'-' if x is None else f'{x:.2f}'}"
                           f" {'met' if x is not None and x >= f.least else 'MISSED'}" for f, x in r.floors)
        cells = [r.label, f"{lift.best_ms:.3f}" if lift else "-", f"{lift.kernel_ms:.3f}" if lift else "-",
                 rival[0] if rival else "-", f"{rival[1].best_ms:.3f}" if rival else "-",
                 f"{rival[1].best_ms / lift.best_ms:.2f}x" if lift and rival else "-",
                 f"{100 * r.streaming_share(lift):.0f}%" if lift else "-",
                 f"{100 * statistics.median(r.round_shares(lift)):.0f}%" if lift else "-", floors]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_contenders",
                                     description=__doc__.split("\n")[0])
    families = ", ".join(dict.fromkeys(c.family for c in CASES))
    parser.add_argument("--only", help=f"comma-separated programs ({families})")
    parser.add_argument("--budget", type=float, default=300.0, help="explore seconds per program (0: no search)")
    parser.add_argument("--max-candidates", type=int, default=None, help="stop each search after this many")
    parser.add_argument("--runs", type=int, default=21, help="timed runs per contender, over all rounds")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds the runs are spread over")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the harness in a minute")
    parser.add_argument("--nbody-n", type=int, default=None, help="the N-body's N (default 16384)")
    parser.add_argument("--tuning-db", choices=("temp", "user"), default="temp",
                        help="the search's records: a temporary tuning database, or the user's")
    parser.add_argument("--device", default=None, help="OpenCL device: a name substring or #index (lift devices)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-peers", action="store_true",
                        help="time lift's kernels only (the winner and the hand-derived lowerings)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.runs < 1:
        raise LiftError(f"--runs and --rounds must be at least 1, got --runs {args.runs} --rounds {args.rounds}")
    return args


def selected(args) -> list:
    """The `(case, sizes)` pairs to run."""
    names = None if args.only is None else {n.strip() for n in args.only.split(",") if n.strip()}
    known = {c.family for c in CASES}
    if names is not None and not names <= known:
        raise LiftError(f"--only: no program {', '.join(sorted(names - known))}; there are {', '.join(sorted(known))}")
    out = []
    for case in CASES:
        if names is not None and case.family not in names:
            continue
        sizes = dict(case.quick if args.quick else case.sizes)
        if args.nbody_n and case.name == "nbody":
            sizes["N"] = args.nbody_n
        out.append((case, sizes))
    return out


def main(argv=None, log: Callable = print) -> list:
    """Run the benchmark; return its `CaseResult`s (the test reads them)."""
    args = parse_args(argv)
    device = runtime.select_device(args.device)
    cases = selected(args)
    db = TuningDatabase() if args.tuning_db == "user" else None
    settings = Settings(args.budget, args.max_candidates, db, args.runs, args.seed, args.device, not args.no_peers,
                        args.rounds)
    log(f"device: {runtime.device_label(device)}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    results = []
    with tempfile.TemporaryDirectory(prefix="lift-contenders-") as tmp:
        for case, sizes in cases:
            folder = Path(tmp) / case.name.replace(" ", "-")
            results.append(run_case(case, sizes, device, settings, folder, log))
            for line in report(results[-1]):
                log(line)
    for line in summary(results):
        log(line)
    log(f"\nload average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    return results


if __name__ == "__main__":
    try:
        main()
    except LiftError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
