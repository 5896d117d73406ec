"""Checking and timing contenders: lift's programs, hand-written and library kernels, and numpy.

A contender is prepared into a *run*: `upload()` (ms), `launch()` (the kernels' ms, one per kernel) and
`download()` (the output in the reference's layout, and ms). lift's `PreparedRun` is one; `DeviceRun`
here holds hand-written or library kernels on device arrays; `HostRun` holds a numpy call.

`measure_all` runs each contender once and compares its output with the reference
(`lift.explore.evaluation.check_output`: every element within 1e-3 of the output's magnitude, since
re-associated float sums round differently); a wrong one is reported as wrong and never timed. The
correct ones are then timed: the kernel time is the median of launches back to back (transfers
excluded and the caches warm, as in the paper's 7.2, whose medians are of repeated runs), the total
the median of runs each uploading the inputs, launching and downloading the output. The contenders
are timed in interleaved rounds (`ROUNDS` unless told), so that the machine's drift hits all of them alike and the
ratios of one run hold; the yardsticks (the streaming kernels) take part in the rounds. Each round
prepares a fresh run, so that only one contender holds device memory at a time, and so that the
median spans several placements of the buffers in memory: on a CPU (PoCL in a VM) a buffer's
placement alone can halve its streaming rate.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from lift.errors import LiftDeviceError, LiftSizeError
from lift.explore.evaluation import check_output
from lift.opencl_gen import runtime

OK, WRONG, FAILED, SKIPPED = "ok", "wrong", "failed", "skipped"
ROUNDS = 5
WARMUP_S = 0.1


class Unavailable(Exception):
    """A contender that cannot run here: a missing library, or sizes its kernels do not take.

    It is reported as skipped, as are lift's size and device errors (a program whose splits do not divide
    the sizes, or whose launch the device cannot take); any other error while preparing or running a
    contender is reported as failed."""


@dataclass(frozen=True)
class Measurement:
    """How a contender fared: `ok` with its median times (ms), its best kernel time and its best in each round
    (`round_best_ms`), or wrong, failed or skipped with the reason."""

    status: str
    kernel_ms: Optional[float] = None
    total_ms: Optional[float] = None
    reason: str = ""
    best_ms: Optional[float] = None
    round_best_ms: tuple = ()

    @property
    def ok(self) -> bool:
        return self.status == OK


@dataclass(frozen=True)
class Contender:
    """A named implementation of one benchmark: `prepare()` gives its run (or raises `Unavailable`)."""

    name: str
    kind: str
    prepare: Callable[[], object]


def elapsed_ms(event) -> float:
    return (event.profile.end - event.profile.start) * 1e-6


class DeviceRun:
    """Hand-written or library kernels on device arrays: the inputs are uploaded before each run and the
    outputs downloaded after it, then `collect`ed into the reference's layout.

    Declare the arrays with `input`, `output` and `scratch` (the run holds them all while its kernels
    may use them), then say how to launch with `kernels` or `library`.
    """

    def __init__(self, device):
        self.context, self.queue = runtime.context_and_queue(device)
        self.uploads: list = []
        self.downloads: list = []
        self.restores: list = []
        self.arrays: list = []
        self.steps: Callable[[], list] = lambda: []
        self.collect: Callable[[list], np.ndarray] = lambda outputs: outputs[0]

    def _array(self, shape, dtype, host: Optional[np.ndarray] = None) -> cla.Array:
        """A device array, created with the data of `host` where given: as lift's prepared runs create their
        inputs, since PoCL places such buffers better (and placement can halve a CPU's streaming rate)."""
        if host is None:
            array = cla.empty(self.queue, shape, dtype)
        else:
            flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
            array = cla.Array(self.queue, shape, dtype, data=cl.Buffer(self.context, flags, hostbuf=host))
        self.arrays.append(array)
        return array

    def input(self, host: np.ndarray, in_place: bool = False) -> cla.Array:
        """A device copy of `host`, uploaded before each run. `in_place`: the kernels overwrite it with the
        output (as BLAS routines do), so it is downloaded after each run and, before each launch,
        restored from a device copy (untimed), so that every launch computes the benchmark."""
        host = np.ascontiguousarray(host)
        array = self._array(host.shape, host.dtype, host)
        self.uploads.append((array, host))
        if in_place:
            self.restores.append((array, self._array(host.shape, host.dtype, host)))
            self.downloads.append(array)
        return array

    def output(self, shape, dtype=np.float32) -> cla.Array:
        array = self._array(shape, dtype)
        self.downloads.append(array)
        return array

    def scratch(self, shape, dtype=np.float32) -> cla.Array:
        return self._array(shape, dtype)

    def kernels(self, launches: list, collect: Optional[Callable] = None) -> "DeviceRun":
        """Launch `(kernel, global size, local size)` in order, timed by their profiling events."""
        def steps() -> list:
            events = [cl.enqueue_nd_range_kernel(self.queue, k, g, l) for k, g, l in launches]
            cl.wait_for_events(events)
            return [elapsed_ms(e) for e in events]
        return self._finish(steps, collect)

    def library(self, call: Callable[[], object], collect: Optional[Callable] = None) -> "DeviceRun":
        """Launch a library routine, timed from a marker before it to a marker after it (a library such as
        CLBlast returns only its last kernel's event, so that the span is the nearest to its kernel time)."""
        def steps() -> list:
            before = cl.enqueue_marker(self.queue)
            call()
            after = cl.enqueue_marker(self.queue)
            after.wait()
            return [(after.profile.end - before.profile.end) * 1e-6]
        return self._finish(steps, collect)

    def _finish(self, steps: Callable[[], list], collect: Optional[Callable]) -> "DeviceRun":
        self.steps = steps
        if collect is not None:
            self.collect = collect
        return self

    def upload(self) -> float:
        events = [cl.enqueue_copy(self.queue, array.data, host, is_blocking=False) for array, host in self.uploads]
        cl.wait_for_events(events)
        return sum(elapsed_ms(e) for e in events)

    def launch(self) -> list:
        if self.restores:
            cl.wait_for_events([cl.enqueue_copy(self.queue, a.data, p.data) for a, p in self.restores])
        return self.steps()

    def download(self) -> tuple:
        hosts = [np.empty(a.shape, a.dtype) for a in self.downloads]
        events = [cl.enqueue_copy(self.queue, h, a.data, is_blocking=False) for h, a in zip(hosts, self.downloads)]
        cl.wait_for_events(events)
        return self.collect(hosts), sum(elapsed_ms(e) for e in events)


class InPlaceRun:
    """A lift run whose result overwrites its input `name` (`compile(..., in_place=name)`), restored before
    each launch from a pristine device copy (untimed), as `DeviceRun` restores a BLAS routine's in-place
    argument: every launch computes the benchmark on the same data."""

    def __init__(self, run, name: str, host: np.ndarray):
        self.run = run
        self.target = run.buffers[name]
        self.queue = cl.CommandQueue(run.buffers[name].context, run.device)
        flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
        self.pristine = cl.Buffer(self.target.context, flags, hostbuf=np.ascontiguousarray(host))

    def upload(self) -> float:
        return self.run.upload()

    def launch(self) -> list:
        cl.enqueue_copy(self.queue, self.target, self.pristine).wait()
        return self.run.launch()

    def download(self) -> tuple:
        return self.run.download()


@dataclass
class HostRun:
    """A host implementation as a run: nothing to transfer; each launch calls `fn()`, timed by the wall clock,
    and the download `collect`s its last result into the reference's layout."""

    fn: Callable[[], object]
    collect: Callable[[object], np.ndarray] = np.asarray
    result: object = field(default=None, init=False)

    def upload(self) -> float:
        return 0.0

    def launch(self) -> list:
        start = time.perf_counter()
        self.result = self.fn()
        return [(time.perf_counter() - start) * 1e3]

    def download(self) -> tuple:
        return self.collect(self.result), 0.0


def kernel(program, name: str, *args):
    """The kernel `name` of a built program with its arguments set (device arrays by their buffers)."""
    k = cl.Kernel(program, name)
    k.set_args(*(a.data if isinstance(a, cla.Array) else a for a in args))
    return k


def measure_all(contenders: list, reference: np.ndarray, runs: int, yardsticks: Optional[dict] = None,
                log: Callable[[str], None] = print, transfers: bool = True, rounds: int = ROUNDS) -> tuple:
    """Check then time every contender (see the module docstring) in `rounds` interleaved rounds of about
    `runs / rounds` launches each, and time the `yardsticks` (name: a function giving a run whose kernels are
    timed, its output unchecked) in the same rounds; `transfers=False` times the kernels only (the total is
    then the kernel time). Returns `({contender name: Measurement}, {yardstick name: Measurement})`: a
    yardstick is timed as a contender is, so that a share of it compares best with best, median with median,
    and round with round (`Measurement.round_best_ms`)."""
    results, timings = {}, {}
    for c in contenders:
        failure = _check(c, reference)
        log(f"  {c.name}: " + ("verified" if failure is None else f"{failure.status}: {failure.reason}"))
        if failure is not None:
            results[c.name] = failure
        else:
            timings[c.name] = _Timing(c.prepare, transfers)
    gauges = {name: _Timing(prepare, transfers=False) for name, prepare in (yardsticks or {}).items()}
    for _ in range(rounds):
        for timing in [*timings.values(), *gauges.values()]:
            timing.round(-(-runs // rounds))
    results.update({name: timing.measurement() for name, timing in timings.items()})
    return ({c.name: results[c.name] for c in contenders},
            {name: timing.measurement() for name, timing in gauges.items()})


def check_outputs(got, reference: tuple) -> Optional[str]:
    """None when every output of `got` (one array or a tuple) matches its reference (`check_output`), else why not."""
    got = got if isinstance(got, tuple) else (got,)
    for k, (g, w) in enumerate(zip(got, reference)):
        reason = check_output(np.reshape(np.asarray(g), np.shape(w)), np.asarray(w))
        if reason is not None:
            return f"output {k}: {reason}"
    return None


def interleaved(prepares: Mapping, rounds: int, runs: int) -> dict:
    """The kernel ms of `runs` launches per round of every run (key: a function giving a run), timed in
    `rounds` interleaved rounds, each on a fresh run warmed up first (see `_Timing.round`): `{key: [ms]}`."""
    timings = {k: _Timing(prepare, transfers=False) for k, prepare in prepares.items()}
    for _ in range(rounds):
        for timing in timings.values():
            timing.round(runs)
    return {k: [ms for r in timing.rounds for ms in r] for k, timing in timings.items()}


class _Timing:
    """The samples of one contender or yardstick, gathered round by round, each round on a fresh run."""

    def __init__(self, prepare: Callable[[], object], transfers: bool = True):
        self.prepare, self.transfers = prepare, transfers
        self.rounds: list = []
        self.total: list = []

    def round(self, k: int) -> None:
        """Prepare and upload a fresh run; launch it for `WARMUP_S` (at least once), then `k` times back to
        back, then `k` times with its transfers (a host run has none). After another contender's round the
        caches hold its data, and on a CPU the first launches run slow for some 20 ms besides, as if the
        cores had to wake up (and spinning BLAS threads left by numpy take the cores for a while)."""
        run = self.prepare()
        run.upload()
        deadline = time.perf_counter() + WARMUP_S
        run.launch()
        while time.perf_counter() < deadline:
            run.launch()
        self.rounds.append([sum(run.launch()) for _ in range(k)])
        if self.transfers and not isinstance(run, HostRun):
            self.total += [_with_transfers(run) for _ in range(k)]

    def measurement(self) -> Measurement:
        kernel = [ms for r in self.rounds for ms in r]
        return Measurement(OK, statistics.median(kernel), statistics.median(self.total or kernel),
                           best_ms=min(kernel), round_best_ms=tuple(min(r) for r in self.rounds))



def checked_and_timed(calls: Mapping, want, rounds: int, indent: str = "", yardsticks: Optional[Mapping] = None
                      ) -> dict:
    """Each call `name: (run, result)` run once and checked against `want` (relative error at most 1e-3, shapes
    aside), then timed once per round, rounds interleaved: name → times (ms). A wrong one is reported, not timed.
    `yardsticks` (`name: run`, a streaming copy) compute something else: timed in the same rounds, unchecked."""
    yardsticks = yardsticks or {}
    times = {name: [] for name in yardsticks}
    calls = {**{name: (run, None) for name, run in yardsticks.items()}, **calls}
    for name, (run, result) in calls.items():
        run()
        if name in yardsticks:
            continue
        err = float(np.max(np.abs(np.ravel(result()) - np.ravel(want))) / max(1.0, float(np.max(np.abs(want)))))
        if err > 1e-3:
            print(f"{indent}{name}: WRONG (relative error {err:.2g}), not timed")
            continue
        times[name] = []
    for _ in range(rounds):
        for name in times:
            t = time.perf_counter()
            calls[name][0]()
            times[name].append((time.perf_counter() - t) * 1e3)
    return times


def _check(c: Contender, reference: np.ndarray) -> Optional[Measurement]:
    """None when the contender's first run gives the reference's output, else a `Measurement` saying why not."""
    try:
        run = c.prepare()
        run.upload()
        run.launch()
        output, _ = run.download()
    except (Unavailable, LiftSizeError, LiftDeviceError) as e:
        return Measurement(SKIPPED, reason=_one_line(e))
    except Exception as e:  # noqa: BLE001 (a contender's library may raise anything: it is reported)
        return Measurement(FAILED, reason=f"{type(e).__name__}: {_one_line(e)}")
    output = np.asarray(output)
    reason = check_output(output.reshape(reference.shape) if output.size == reference.size else output, reference)
    return None if reason is None else Measurement(WRONG, reason=reason)


def _with_transfers(run) -> float:
    """One upload, launch and download: their summed ms."""
    up = run.upload()
    kernels = sum(run.launch())
    _, down = run.download()
    return up + kernels + down


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 300 else text[:299] + "…"
