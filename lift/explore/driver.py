"""The explore loop: evaluate a stream of candidates on one device within a time budget, and rank them.

`explore` computes the reference output once (the interpreter on the high-level program; at a smaller
size of it when the explored size would take too long, `lift.explore.reference`), starts the
device worker with the inputs, and measures (or reads from the output folder) the device's streaming
bandwidth. It then pulls candidates from the search, skipping those already in the log, generates
their code and predicts their time with the cost model; within a window of `2 * jobs` candidates the
ones predicted fastest go first, the default lowering's candidate before all. A candidate whose program has
kernels that the generator leaves to the driver to size (`map-global` kernels) is evaluated at each work-group
size of `work_group_sizes` the device can run (`Candidate.local_size`; `BALANCED` stands for the candidate's
`lift.explore.balanced_groups` size), these evaluations one after the other; the search hears the best of them.
`jobs` build workers compile ahead while the single device worker runs, checks and times one candidate at
a time. Every evaluation is logged at once, and a new best candidate is written out at once. The loop
stops when the candidates run out, after `max_candidates`, or at the budget less the final round's share
(the candidate in flight then is dropped, not logged); the final round (`lift.explore.final_round`) then
times the fastest again side by side and writes the winner.
"""

from __future__ import annotations

import heapq
import math
import re
import time
from collections import deque
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Optional, Sequence

from lift.errors import LiftError
from lift.explore import report
from lift.explore.balanced_groups import BALANCED, balanced_group_size
from lift.explore.bandwidth import StreamingBandwidth, cached
from lift.explore.candidate import DEFAULT_LOWERING, LOCAL_SIZE, Candidate
from lift.explore.evaluation import RTOL, TIMEOUT, Outcome, TimingPolicy
from lift.explore.log import BASELINE, CANDIDATE, Record, ResultLog
from lift.explore.builder import Builder, Prepared
from lift.explore.database import Database
from lift.explore.problem import Problem
from lift.explore.rank_correlation import spearman
from lift.explore.reference import SmallerCheck, reference_limit
from lift.explore.callbacks import Counts, Measured, MeasureCallback, ShowProgress, WriteWinner
from lift.explore.final_round import FinalRound, by_round, final_round
from lift.explore.prediction import AnalyticCostModel
from lift.explore.progress import ExploreProgress
from lift.explore.search_strategy import SearchStrategy, as_strategy
from lift.explore.worker import DEVICE, BuildPool, Worker, evaluate, measure_streaming
from lift.explore.tuning_database import SharedLog, TuningDatabase
from lift.ir.printer import paper
from lift.ir.program_file import ProgramFile, load_program_file
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.launch import fitting_overrides

# The work-group sizes tried for kernels whose local size the generator leaves to the driver (None: the
# driver's choice). The driver's choice is the reference and often right on a GPU; one work-item per group
# is what a CPU driver such as PoCL runs best when each work-item already loops over a chunk (its own choice
# halved a fused BiCGK kernel's speed); 64 is a multiple of an NVIDIA warp (32) and an AMD wavefront (64),
# small enough for any device, and lets a CPU driver vectorise across work-items. `BALANCED` (opt-in: it helped
# in one of three loaded runs and costs a measurement per candidate) deals a kernel out in many groups.
WORK_GROUP_SIZES = (None, 1, 64)

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}
EXHAUSTED, MAX_CANDIDATES, BUDGET = "candidates exhausted", "max candidates reached", "budget used up"


class ExploreError(LiftError):
    """The explorer cannot run as asked: a bad budget or limit, or nothing evaluated."""


def parse_budget(text: str) -> float:
    """A duration such as `90s`, `10m`, `1.5h` (or a bare number of seconds) in seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([smh]?)\s*", str(text).lower())
    if m is None:
        raise ExploreError(f"a budget is a duration such as 90s, 10m or 1h, got {text!r}")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if seconds <= 0:
        raise ExploreError(f"a budget must be positive, got {text!r}")
    return seconds


@dataclass
class ExploreResult:
    """The outcome of `explore`: every logged evaluation of this kernel, sizes and device, ranked."""

    kernel: str
    sizes: dict
    device: str
    bandwidth: StreamingBandwidth
    ranked: list
    baseline: Optional[Record]
    evaluated: int
    skipped: int
    stopped: str
    out_dir: Path
    files: dict = field(default_factory=dict)
    remeasured: int = 0  # the first `remeasured` of `ranked` were measured again side by side at the end
    verified: Optional[str] = None  # where candidates were checked, when not at `sizes` (`Problem.verified`)
    requeued: int = 0  # evaluations given back to the queue when a cluster's device was lost (`lift.explore.cluster`)

    @property
    def winner(self) -> Optional[Record]:
        return self.ranked[0] if self.ranked and self.ranked[0].ok else None

    @property
    def rank_correlation(self) -> Optional[float]:
        """Spearman's correlation of predicted and measured times over the working candidates (None if < 2), their
        times in the search: a final round's medians were taken at another moment, under another load."""
        timed = [r for r in self.ranked if r.ok and r.predicted_ms is not None and r.search_ms is not None]
        if len(timed) < 2:
            return None
        return spearman([r.predicted_ms for r in timed], [r.search_ms for r in timed])

    def table(self, top: int = 10):
        """The ranking as a rich table (see `lift.explore.report.table`)."""
        return report.table(self.ranked, self.bandwidth.gbps, self.baseline, top, self.remeasured)

    def summary(self) -> list:
        """Lines saying what was explored where, how it went, and how well the cost model ranked."""
        failed = sum(not r.ok for r in self.ranked)
        lines = [f"{self.kernel} ({', '.join(f'{k}={v}' for k, v in self.sizes.items())}) on {self.device}",
                 f"streaming bandwidth {self.bandwidth.gbps:.2f} GB/s; {len(self.ranked)} candidates logged "
                 f"({failed} failed), {self.evaluated} evaluated now, {self.skipped} from earlier runs; "
                 f"stopped: {self.stopped}"]
        if self.verified is not None:
            lines.append(self.verified)
        if self.requeued:
            lines.append(f"{self.requeued} evaluations went back to the queue when a device of the cluster was lost")
        if self.rank_correlation is not None:
            lines.append(f"cost model: rank correlation with the measured times {self.rank_correlation:+.2f}")
        if self.winner is not None:
            lines.append(f"winner: {self.winner.time_ms:.4f} ms, {self.winner.gbps:.2f} GB/s, written to "
                         f"{self.files['cl']}")
            if LOCAL_SIZE in self.winner.params:
                local = self.winner.params[LOCAL_SIZE]
                lines.append("winner's work-group size (kernels the driver would size): "
                             + ("the driver's choice" if local is None else str(local)))
        return lines


@dataclass(frozen=True)
class ExploreOptions:
    """How a search runs, beside its program, candidates, budget, folder and device (`explore` says what each
    does); `callbacks` are `MeasureCallback`s called after each record, beside the winner's files and the
    progress line."""

    max_candidates: Optional[int] = None
    jobs: int = 1
    plot: bool = False
    baseline: Optional[str] = None
    bandwidth: Optional[StreamingBandwidth] = None
    timeout_s: float = 60.0
    seed: int = 0
    timing: TimingPolicy = TimingPolicy()
    progress: bool = True
    work_group_sizes: Sequence[Optional[int]] = WORK_GROUP_SIZES
    retry_failed: bool = False
    tuning_database: Optional[TuningDatabase] = None
    reference_limit_s: Optional[float] = None
    rtol: Optional[float] = None
    atol: Optional[float] = None
    fp_contract: bool = True
    callbacks: tuple = ()
    final: FinalRound = FinalRound()


def explore(program_file, kernel: Optional[str], sizes: Optional[Mapping[str, int]], candidates: Iterable[Candidate],
            *, budget_s: float, out_dir, device: Optional[str] = None, **options) -> ExploreResult:
    """Explore `candidates` for `kernel` of a program file (a path or a loaded `ProgramFile`) on `device`.

    See the module docstring. The `options` are `ExploreOptions`: `max_candidates` bounds the distinct
    candidates taken from the search, those already logged included, so that a resumed run goes on with the
    same ones; `baseline` names a hand-written lowered kernel of the same file, measured alongside for the
    table and the plot's reference line; `bandwidth` replaces the streaming-bandwidth measurement; `timeout_s`
    limits each build and each evaluation; `timing` says when a candidate's time is stable; `work_group_sizes`
    are the work-group sizes tried for kernels the driver would size (None: the driver's choice);
    `retry_failed` evaluates every logged failure again (`ResultLog`); `reference_limit_s` is how long the
    reference may take at `sizes` before candidates are checked at smaller sizes (`lift.explore.reference`; by
    default a share of the budget, which the reference counts in); `rtol` and `atol` replace the tolerance of
    the check (`Problem.prepare`); `fp_contract=False` forbids the OpenCL compiler to contract `a*b + c`
    (`lift.opencl_gen.fp_contract`); `final` sets the final round (`FinalRound`). The output folder receives
    the log, the inputs, the bandwidth, the winner's files and, with `plot`, the plot; the log's lock keeps a
    second explorer out.
    Every record also goes to `tuning_database` (the user's by default, `lift.explore.tuning_database`), and
    an evaluation it holds from another search of the same program, device and sizes is not measured again;
    a search whose check is not the default one (a tolerance, contraction off) leaves the database alone.
    """
    deadline = time.monotonic() + budget_s
    settings = ExploreOptions(**options)
    pf, problem = prepare(program_file, kernel, sizes, budget_s, settings)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with ResultLog(out_dir / "log.jsonl", settings.retry_failed) as folder_log, \
            Worker(DEVICE, device, problem.save(out_dir / "inputs.npz"), settings.timing) as worker, \
            BuildPool(settings.jobs, device) as builds, \
            _smaller_check(problem, out_dir, device, settings.fp_contract) as check, \
            open_search(pf, problem, folder_log, worker, builds, check, candidates, deadline, budget_s, out_dir,
                        settings) as search:
        stopped = search.run()
    return search.result(stopped, budget_s, settings.plot)


def prepare(program_file, kernel: Optional[str], sizes: Optional[Mapping[str, int]], budget_s: float,
            options: ExploreOptions) -> tuple:
    """The options checked, the `ProgramFile` and the `Problem` of `kernel` at `sizes` (its reference computed)."""
    _check_settings(budget_s, options.jobs, options.max_candidates, options.work_group_sizes)
    pf = program_file if isinstance(program_file, ProgramFile) else load_program_file(program_file)
    if options.baseline is not None:
        pf.kernel(options.baseline)
    limit = reference_limit(budget_s) if options.reference_limit_s is None else options.reference_limit_s
    return pf, Problem.prepare(pf, kernel, sizes, options.seed, limit, options.rtol, options.atol)


@contextmanager
def open_search(pf: ProgramFile, problem: Problem, folder_log: ResultLog, worker: Worker, builds: BuildPool,
                check: Optional[SmallerCheck], candidates: Iterable[Candidate], deadline: float, budget_s: float,
                out_dir: Path, options: ExploreOptions) -> Iterator["_Search"]:
    """The search of `candidates` on the device `worker` serves, ready to run (its baseline measured), for as
    long as the context lasts (the progress line's). `worker` and `builds` may be anything that serves their
    requests: the cluster's device actors do (`lift.explore.cluster`)."""
    shared = (problem.rtol, problem.atol, options.fp_contract) == (RTOL, 0.0, True)
    log = SharedLog(folder_log, options.tuning_database or TuningDatabase(), problem.program) if shared else folder_log
    facts = worker.start()
    bandwidth = options.bandwidth
    if bandwidth is None:
        nbytes = max(problem.useful_bytes // 2, 1 << 20)
        bandwidth = cached(out_dir / "bandwidth.json", f"{facts.label} @ {nbytes} bytes",
                           lambda: measure_streaming(worker, nbytes))
    strategy = as_strategy(candidates)
    strategy.use_device(facts.model(bandwidth))
    with ExploreProgress(budget_s, bandwidth.gbps, options.progress) as shown:
        settings = SearchSettings(deadline - options.final.reserve(budget_s), options.timeout_s, options.jobs,
                                  options.max_candidates, tuple(options.work_group_sizes), facts.max_work_group_size,
                                  facts.max_item_sizes, deadline, options.final, facts.compute_units)
        callbacks = [WriteWinner(out_dir, problem.kernel, problem.program), ShowProgress(shown), *options.callbacks]
        builder = Builder(problem.kernel, problem.sizes, problem.param_types, builds,
                          AnalyticCostModel(facts.model(bandwidth)), options.fp_contract)
        search = _Search(problem, log, worker, builder, facts.label, settings, callbacks, check, strategy,
                         bandwidth, out_dir)
        if options.baseline is not None:
            search.baseline(Candidate(pf.kernels[options.baseline], params={"baseline": options.baseline}))
        yield search


def _smaller_check(problem: Problem, out_dir: Path, device: Optional[str], fp_contract: bool):
    """The check of candidates at the smaller sizes of `problem.check`, or nothing to check there."""
    if problem.check is None:
        return nullcontext()
    return SmallerCheck(problem.kernel, problem.check.sizes, problem.check.save(out_dir / "check_inputs.npz"), device,
                        fp_contract)


def _check_settings(budget_s: float, jobs: int, max_candidates: Optional[int], work_group_sizes: Sequence) -> None:
    if budget_s <= 0:
        raise ExploreError(f"the budget must be positive, got {budget_s} s")
    if jobs < 1:
        raise ExploreError(f"jobs must be at least 1, got {jobs}")
    if max_candidates is not None and max_candidates < 1:
        raise ExploreError(f"max_candidates must be at least 1, got {max_candidates}")
    if not work_group_sizes or len(set(work_group_sizes)) != len(work_group_sizes) or \
            any(n is not None and n != BALANCED and (not isinstance(n, int) or isinstance(n, bool) or n < 1)
                for n in work_group_sizes):
        raise ExploreError("work_group_sizes must be distinct positive work-group sizes, None (the driver's "
                           f"choice) or {BALANCED!r}, at least one, got {work_group_sizes!r}")


@dataclass(frozen=True)
class SearchSettings:
    """The limits of one explore loop: its deadline (`time.monotonic()`), the time limit of each build and
    evaluation, the build workers, the most candidates taken, the work-group sizes tried for kernels the
    driver would size, the device's largest work-group and work-item sizes, the final round's end (the
    budget's) and settings, and the device's compute units (for the `BALANCED` size)."""

    deadline: float
    timeout_s: float
    jobs: int
    max_candidates: Optional[int]
    work_group_sizes: tuple
    max_work_group_size: int
    max_item_sizes: tuple
    end: float = math.inf
    final: FinalRound = FinalRound()
    compute_units: int = 1


@dataclass
class _Tally:
    """The evaluations of a candidate at several work-group sizes still to come, and the best so far: the
    search hears of the candidate once, at the best of them, as if it had been measured once."""

    origin: Candidate
    left: int
    best: Optional[Record] = None


class _Search:
    """The state of one explore loop, which ties the roles together: it takes candidates from a
    `SearchStrategy`, has the `Builder` prepare and compile them, runs them on the device `Worker`, stores
    the records in the `Database` (skipping what it holds), tells the strategy the times, and calls the
    `MeasureCallback`s after each record. Its limits are one `SearchSettings`. With a `SmallerCheck`,
    candidates are checked by it and only timed by the worker."""

    def __init__(self, problem: Problem, log: Database, worker: Worker, builder: Builder, device: str,
                 settings: SearchSettings, callbacks: Sequence[MeasureCallback], check: Optional[SmallerCheck],
                 strategy: SearchStrategy, bandwidth: StreamingBandwidth, out_dir: Path):
        self.problem, self.log, self.worker, self.builder, self.check = problem, log, worker, builder, check
        self.device, self.settings, self.callbacks = device, settings, list(callbacks)
        self.strategy, self.bandwidth, self.out_dir = strategy, bandwidth, out_dir
        self.tallies: dict = {}
        self.started = time.monotonic()
        self.seen: set = set()
        self.evaluated = self.failed = self.skipped = 0
        self.end = EXHAUSTED
        self.kept: dict = {}
        self.remeasured: set = set()  # keys of the final round's candidates
        self.evaluation_s: list = []  # how long each evaluation took (the final round fits its candidates by them)
        self.offered: dict = {}
        self.baseline_name: Optional[str] = None
        logged = [r for r in log.matching(device, problem.kernel, problem.sizes) if r.role == CANDIDATE and r.ok]
        self.best: Optional[Record] = min(logged, key=lambda r: r.time_ms, default=None)

    def remaining(self) -> float:
        return self.settings.deadline - time.monotonic()

    def limit(self) -> float:
        """The time limit of the next build or evaluation: the timeout, or what is left of the budget."""
        return max(min(self.settings.timeout_s, self.remaining()), 0.01)

    def baseline(self, candidate: Candidate) -> None:
        """Measure the hand-written baseline, unless the log has it."""
        self.baseline_name = candidate.params["baseline"]
        if self._logged(candidate, BASELINE):
            return
        item = self._prepare(candidate, BASELINE)
        if item is not None:
            self._finish(item, self.builder.build(item, self.limit()))

    def run(self) -> str:
        """Evaluate candidates until they run out or the budget does; say which ended the loop.

        While the device worker runs one candidate, the next `jobs` build (the builds queue for the workers).
        """
        ordered = self.evaluations()
        building: deque = deque()
        self._build_ahead(building, ordered)
        while building:
            item, build = building.popleft()
            self._build_ahead(building, ordered)
            if not self._finish(item, build):
                break
        return self.finish()

    def evaluations(self) -> Iterator[Prepared]:
        """The evaluations of the strategy's new candidates, generated and in the order to run them (`_ordered`);
        they end with the candidates, `max_candidates` or the budget."""
        return self._ordered(self._prepared(iter(self.strategy)))

    def finish(self) -> str:
        """The final round (`lift.explore.final_round`) once the evaluations are done; what ended the search."""
        complete = final_round(self, self.settings.final, self.settings.end)
        return BUDGET if self.remaining() <= 0 or not complete else self.end

    def result(self, stopped: str, budget_s: float, plot: bool) -> ExploreResult:
        """Every logged evaluation of this search's problem and device, ranked, with the winner's files (and the
        plot); an `ExploreError` when there is none."""
        problem, kernel, baseline = self.problem, self.problem.kernel, self.baseline_name
        records = self.log.matching(self.device, kernel, problem.sizes)
        found = [r for r in records if r.role == CANDIDATE]
        if not found:
            if stopped == BUDGET:
                setup_s = budget_s - (self.settings.end - self.started)
                first = (f"; the first candidate's build and run took the {budget_s - setup_s:.0f} s left (the "
                         "OpenCL compiler can take tens of seconds over a large kernel)") if self.offered else ""
                raise ExploreError(f"the budget of {budget_s:g} s ran out before any candidate was evaluated: "
                                   f"setting up took {setup_s:.0f} s (the reference interpreter, the device worker "
                                   f"and the bandwidth measurement){first}: give a larger budget")
            raise ExploreError("the search gave no candidates to evaluate")
        ranked = by_round([r for r in found if r.ok and r.key in self.remeasured]) + \
            sorted((r for r in found if r.ok and r.key not in self.remeasured), key=lambda r: r.time_ms) + \
            sorted((r for r in found if not r.ok), key=lambda r: r.status)
        base = next((r for r in records if r.role == BASELINE and r.params.get("baseline") == baseline), None)
        result = ExploreResult(kernel, dict(problem.sizes), self.device, self.bandwidth, ranked, base, self.evaluated,
                               self.skipped, stopped, self.out_dir, remeasured=len(self.remeasured),
                               verified=problem.verified)
        if result.winner is not None:
            result.files.update({role: p for role, p in report.winner_paths(self.out_dir, kernel).items()
                                 if p.exists()})
            if plot:
                result.files["plot"] = report.plot(ranked, self.out_dir / f"{kernel}.throughput.png",
                                                   self.bandwidth.gbps, base)
        return result

    def prepared(self, record: Record) -> Optional[Prepared]:
        """The evaluation of a logged candidate of this search, generated again unless this run kept it."""
        return self.kept[record.key][0] if record.key in self.kept else \
            self._prepare(self.offered[record.key], CANDIDATE)

    def record_final(self, item: Prepared, outcome: Outcome, mark: str, searched_ms: Optional[float]) -> Record:
        """Log `outcome`, a median of the final round `mark`, of a candidate the search timed at `searched_ms`; the
        search has heard of the candidate already."""
        return self._record(item, outcome, mark, searched_ms)

    def crown(self, record: Record) -> None:
        """Make `record` (a working candidate of this search) the best, and tell the callbacks: its files are
        written (`WriteWinner`) whether this run measured it or found it logged."""
        item = self.prepared(record)
        if item is not None:
            self.best = record
            self._notify(Measured(record, item.candidate, item.generated, True))

    def _build_ahead(self, building: deque, ordered: Iterator[Prepared]) -> None:
        while len(building) < self.settings.jobs and self.remaining() > 0:
            item = next(ordered, None)
            if item is None:
                return
            building.append((item, self.builder.build(item, self.limit())))

    def _finish(self, item: Prepared, build) -> bool:
        """Wait for the build, evaluate, record; False when the budget ran out first (nothing recorded)."""
        outcome = build.result()
        if outcome.ok:
            if self.remaining() <= 0:
                return False
            started = time.monotonic()
            outcome = self.checked(item) or evaluate(self.worker, item.plan, self.limit())
            self.evaluation_s.append(time.monotonic() - started)
        return self.conclude(item, outcome)

    def checked(self, item: Prepared) -> Optional[Outcome]:
        """Why a built candidate fails at the smaller sizes of the check, or None (and None without a check)."""
        return self.check.failure(item.candidate, self.limit()) if self.check is not None else None

    def conclude(self, item: Prepared, outcome: Outcome) -> bool:
        """Record `outcome`; False when it is a timeout that the budget's end caused (nothing recorded)."""
        if outcome.status == TIMEOUT and self.remaining() <= 0:
            return False
        self._record(item, outcome)
        return True

    def _prepared(self, candidates: Iterator[Candidate]) -> Iterator[list]:
        """The new evaluations of each new candidate (`_variants`), one list per candidate that has any."""
        taken = 0
        while self.settings.max_candidates is None or taken < self.settings.max_candidates:
            candidate = next(candidates, None) if self.remaining() > 0 else None
            if candidate is None:
                return
            if candidate.key in self.seen:
                continue
            self.seen.add(candidate.key)
            taken += 1
            group = self._variants(candidate)
            if group:
                yield group
            else:
                self._notify()
        self.end = MAX_CANDIDATES

    def _variants(self, candidate: Candidate) -> list:
        """The evaluations `candidate` needs, generated and predicted, in the order of `work_group_sizes`.

        A program with no kernel the driver would size is evaluated once, as it is. Otherwise it is
        evaluated at each work-group size the device can run (`_fits`; a size it cannot is dropped, not
        logged, and a program it can run at none is left out); `BALANCED` adds the program's balanced size
        where the others miss it. Evaluations the log holds are skipped, and a failure to generate is
        recorded. The log says without generating anything whether an earlier run found the program
        tunable: its record at the driver's choice notes the local size (a program measured before
        work-group sizes were searched is not measured again); whether it holds every size needs the
        program generated where `BALANCED` is asked for, its size depending on the program's kernels.
        """
        self.offered[candidate.key] = candidate
        base = self._find(candidate)
        if base is not None and LOCAL_SIZE not in base.params:
            return self._skip(candidate, [base])
        variants = [candidate.with_local_size(n) for n in self.settings.work_group_sizes if n != BALANCED]
        logged = {v.key: self._find(v) for v in variants}
        if BALANCED not in self.settings.work_group_sizes and all(r is not None for r in logged.values()):
            self.offered.update({v.key: v for v in variants})
            return self._skip(candidate, list(logged.values()))
        item = self._prepare(candidate, CANDIDATE)
        if item is None or all(k.launch.local_size is not None for k in item.generated.kernels):
            return [] if item is None else [item]
        balanced = self._balanced(item.generated)
        if balanced is not None and balanced not in self.settings.work_group_sizes:
            variants.append(candidate.with_local_size(balanced))
            logged[variants[-1].key] = self._find(variants[-1])
        self.offered.update({v.key: v for v in variants})
        todo = [v for v in variants if logged[v.key] is None and self._fits(item.generated, v.local_size)]
        done = [r for r in logged.values() if r is not None]
        if not todo:
            return self._skip(candidate, done) if done else []
        self.tallies[candidate.key] = _Tally(candidate, len(todo) + len(done))
        for record in done:
            self.skipped += 1
            self._settle(candidate.key, candidate, record)
        group = []
        for v in todo:
            prepared = replace(item, candidate=v, origin=candidate.key) if v.local_size is None else \
                self._prepare(v, CANDIDATE, candidate.key)
            if prepared is not None:
                group.append(prepared)
        return group

    def _balanced(self, generated: GeneratedProgram) -> Optional[int]:
        """The balanced work-group size of `generated`'s driver-sized kernels, where `work_group_sizes` asks for it."""
        if BALANCED not in self.settings.work_group_sizes:
            return None
        s = self.settings
        return balanced_group_size(generated.kernels, self.problem.sizes, s.compute_units, s.max_work_group_size,
                                   s.max_item_sizes)

    def _fits(self, generated: GeneratedProgram, local_size: Optional[int]) -> bool:
        """Whether the device can run `generated` with `local_size` work-items per work-group in its kernels
        the driver would size: the size divides their global sizes and the device's limits allow it."""
        return fitting_overrides(generated.kernels, local_size, self.problem.sizes, self.settings.max_work_group_size,
                                 self.settings.max_item_sizes) is not None

    def _skip(self, candidate: Candidate, records: list) -> list:
        """Count the logged evaluations of `candidate` as skipped and tell the search the best of them."""
        self.skipped += len(records)
        working = [r for r in records if r.ok]
        self._tell(candidate, min(working, key=lambda r: r.time_ms) if working else records[0])
        return []

    def _ordered(self, groups: Iterator[list]) -> Iterator[Prepared]:
        """The evaluations of `groups` (one per candidate), the candidates reordered by predicted time within
        a window of `2 * jobs` (unknown predictions last, the default lowering's candidate first); a candidate's
        evaluations stay together, in their order, placed by the fastest of their predictions."""
        window: list = []
        for i, group in enumerate(groups):
            predicted = min((item.predicted_ms for item in group if item.predicted_ms is not None), default=math.inf)
            if any(DEFAULT_LOWERING in item.candidate.params for item in group):
                predicted = -math.inf
            heapq.heappush(window, (predicted, i, group))
            if len(window) >= 2 * self.settings.jobs:
                yield from heapq.heappop(window)[2]
        while window:
            yield from heapq.heappop(window)[2]

    def _find(self, candidate: Candidate) -> Optional[Record]:
        return self.log.settled(candidate.key, self.device, self.problem.kernel, self.problem.sizes, CANDIDATE)

    def _logged(self, candidate: Candidate, role: str) -> bool:
        return self.log.settled(candidate.key, self.device, self.problem.kernel, self.problem.sizes, role) is not None

    def _prepare(self, candidate: Candidate, role: str, origin: Optional[str] = None) -> Optional[Prepared]:
        """The builder's preparation of the candidate (`Builder.prepare`); a failure is recorded, giving None.
        `origin` is the key of the search's candidate that `candidate` evaluates at a work-group size."""
        item = self.builder.prepare(candidate, role, origin)
        if item.failure is not None:
            self._record(item, item.failure)
            return None
        return item

    def _record(self, item: Prepared, outcome: Outcome, final: str = "", searched_ms: Optional[float] = None) -> Record:
        c, t = item.candidate, outcome.timing
        times = {} if t is None else dict(time_ms=t.median_ms, q1_ms=t.q1_ms, q3_ms=t.q3_ms, runs=t.runs,
                                          per_kernel_ms=t.per_kernel_ms,
                                          gbps=self.problem.useful_bytes / (t.median_ms * 1e6))
        record = Record(c.key, self.device, self.problem.kernel, dict(self.problem.sizes), outcome.status,
                        outcome.reason, predicted_ms=item.predicted_ms, expression=paper(c.program),
                        derivation=c.derivation, params=dict(c.params), role=item.role, final=final,
                        searched_ms=searched_ms, **times)
        self.log.append(record)
        new_best = False
        if item.role == CANDIDATE:
            if record.ok:
                self.kept[c.key] = (item, record)
                self.offered[c.key] = c
            if not final:  # the final round's medians come after the search has given its candidates
                self._settle(item.origin or c.key, c, record)
                self.evaluated += 1
                self.failed += not record.ok
                new_best = record.ok and (self.best is None or record.time_ms < self.best.time_ms)
                self.best = record if new_best else self.best
        self._notify(Measured(record, c, item.generated, new_best))
        return record

    def _settle(self, origin: str, candidate: Candidate, record: Record) -> None:
        """Count `record` (of `candidate`) towards the evaluations of the search's candidate `origin`; tell the
        search when it has them all (at once for a candidate evaluated once)."""
        tally = self.tallies.get(origin)
        if tally is None:
            self._tell(candidate, record)
            return
        tally.left -= 1
        if record.ok and (tally.best is None or record.time_ms < tally.best.time_ms):
            tally.best = record
        if tally.left <= 0:
            del self.tallies[origin]
            self._tell(tally.origin, tally.best or record)

    def _tell(self, candidate: Candidate, record: Record) -> None:
        """Feed a result back to the search strategy (a learning search steers by them)."""
        if self.strategy is not None:
            self.strategy.observe(candidate, record.time_ms if record.ok else None)

    def _notify(self, measured: Optional[Measured] = None) -> None:
        """Call the measure callbacks with the counts and what was just logged (None: only the counts changed)."""
        counts = Counts(time.monotonic() - self.started, self.evaluated, self.failed, self.skipped, self.best)
        for callback in self.callbacks:
            callback(counts, measured)
