"""One run of the suite: every application at every size of a size set, every contender checked and timed.

For each problem (an application at one size binding) the suite computes the reference output with
lift's interpreter on the high-level program, finds the explored kernel (`benchmarks.explored`), then
checks and times (`benchmarks.measure`): the explored kernel, the hand-derived kernels of the program
file, the hand-written OpenCL kernels, CLBlast where it has the routine, and numpy; and alongside them
the device's streaming kernels (lift's float4 copy and read-reduce kernels of
`lift.explore.bandwidth.SOURCE`, and the hand-written chunked float4 reduction) over as many bytes as
the problem reads; the read rate is the best reader's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Optional

import numpy as np

from lift.errors import LiftError
from lift.explore.bandwidth import SOURCE as STREAMING_SOURCE
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile

from benchmarks.applications import CHUNK, COPY, Application, Problem, handwritten_program
from benchmarks.explored import ExploreSettings, Winner, explored
from benchmarks.measure import Contender, DeviceRun, InPlaceRun, Measurement, Unavailable, kernel, measure_all

# The kinds of contender (the explored one is also named so).
EXPLORED, DERIVED, HANDWRITTEN, LIBRARY, NUMPY = ("lift explored", "lift hand-derived", "hand-written", "CLBlast",
                                                  "numpy")
COPY_KERNEL, LIFT_READS, HANDWRITTEN_READ = "copy4", ("read_chunked", "read_strided"), "asum_chunks"
READ_KERNELS = (*LIFT_READS, HANDWRITTEN_READ)


@dataclass
class ProblemResult:
    """The measurements of one problem, with what rates and speedups are computed from."""

    app: Application
    label: str
    sizes: dict
    useful_bytes: int
    flops: Optional[float]
    copy_gbps: float
    read_gbps: float
    kinds: dict = field(default_factory=dict)
    measurements: dict = field(default_factory=dict)
    winner: Optional[Winner] = None
    explore_note: str = ""

    @property
    def stream_gbps(self) -> float:
        """The streaming rate this problem's kernels are held to (see `Application.stream`)."""
        return self.copy_gbps if self.app.stream == COPY else self.read_gbps

    def gbps(self, m: Measurement) -> Optional[float]:
        """The useful bytes per second of a correct measurement, in GB/s."""
        return self.useful_bytes / (m.kernel_ms * 1e6) if m.ok else None

    def best(self, kind: str) -> Optional[Measurement]:
        """The fastest correct measurement of a kind of contender."""
        timed = [m for name, m in self.measurements.items() if self.kinds[name] == kind and m.ok]
        return min(timed, key=lambda m: m.kernel_ms, default=None)

    def speedup(self, m: Measurement, over: str) -> Optional[float]:
        """How many times faster `m` is than the best contender of kind `over` (kernel times)."""
        base = self.best(over)
        return base.kernel_ms / m.kernel_ms if m.ok and base is not None else None

    @property
    def bound_ms(self) -> float:
        """The time a kernel moving the problem's useful bytes at the streaming rate would take."""
        return self.useful_bytes / (self.stream_gbps * 1e6)


@dataclass(frozen=True)
class Settings:
    """How to run the suite: the device (a `lift devices` name, or None for the default), timed runs per
    contender, and the explore settings."""

    device: Optional[str] = None
    runs: int = 20
    explore: ExploreSettings = ExploreSettings()
    seed: int = 0


def run_suite(apps: list, size_set: str, settings: Settings, log: Callable[[str], None] = print) -> list:
    """Every problem of `apps` at the sizes named `size_set` (`default`, `paper`, `smoke`), measured."""
    device = runtime.select_device(settings.device)
    results = []
    for app in apps:
        for sizes in app.sizes[size_set]:
            results.append(run_problem(app, sizes, device, settings, log))
    return results


def run_problem(app: Application, sizes: dict, device, settings: Settings, log: Callable[[str], None] = print
                ) -> ProblemResult:
    """One application at one size binding on `device`: every contender checked and timed."""
    start = time.perf_counter()
    problem = Problem.make(app, sizes, settings.seed)
    log(f"{problem.label} ({', '.join(f'{k}={v}' for k, v in sizes.items())}): reference by lift.interpret in "
        f"{time.perf_counter() - start:.1f} s")
    contenders, winner, note = [], None, ""
    try:
        winner = explored(problem, runtime.device_label(device), settings.device, settings.explore, log)
        contenders.append(_lift(EXPLORED, EXPLORED, winner.program, problem, device))
        note = winner.note
    except (Unavailable, LiftError) as e:
        note = str(e)
        log(f"  {EXPLORED}: skipped: {note}")
    contenders += [_lift(f"lift {name}", DERIVED, problem.program_file.kernels[name], problem, device)
                   for name in app.derived]
    contenders += [Contender(name, HANDWRITTEN, partial(build, problem, device))
                   for name, build in app.handwritten.items()]
    contenders += [Contender(name, LIBRARY, partial(build, problem, device)) for name, build in app.clblast.items()]
    contenders.append(Contender("numpy", NUMPY, partial(app.numpy, problem)))
    yardsticks, nbytes = _streaming(device, problem.read_bytes)
    measured, ticks = measure_all(contenders, problem.reference, settings.runs, yardsticks, log)
    result = ProblemResult(app, problem.label, dict(sizes), problem.useful_bytes,
                           app.flops(problem) if app.flops else None,
                           2 * nbytes / (ticks[COPY_KERNEL].best_ms * 1e6),
                           nbytes / (min(ticks[k].best_ms for k in READ_KERNELS) * 1e6),
                           {c.name: c.kind for c in contenders}, measured, winner, note)
    log(f"  streaming over {_size(nbytes)}: copy {result.copy_gbps:.1f} GB/s, read {result.read_gbps:.1f} GB/s; "
        f"{time.perf_counter() - start:.0f} s in all")
    return result


def _size(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.0f} MiB" if nbytes >= 1 << 20 else f"{nbytes / 1024:.0f} KiB"


def _lift(name: str, kind: str, program, problem: Problem, device) -> Contender:
    """A lift program compiled for the problem; in place where the application's routine works in place."""
    target = problem.app.in_place
    compiled = compile(program, device, sizes=problem.sizes, name=name.split()[-1], in_place=target)
    if target is None:
        return Contender(name, kind, partial(compiled.prepare, *problem.inputs))
    host = problem.inputs[[p.name for p in program.params].index(target)]
    return Contender(name, kind, lambda: InPlaceRun(compiled.prepare(*problem.inputs), target, host))


def _streaming(device, nbytes: int) -> tuple:
    """The streaming kernels over a float4 buffer of about `nbytes` (at most an eighth of the device's
    memory): lift's copy and its two read-reduce layouts, and the hand-written chunked reduction, which
    on PoCL reads some sizes faster than those. Returns `({kernel name: function giving its run}, bytes)`."""
    items = device.max_compute_units * 1024
    whole = math.lcm(items, CHUNK)  # float4s: every reader's work-items get equal, whole chunks
    limit = min(nbytes, device.global_mem_size // 8, device.max_mem_alloc_size // 2)
    n = max(limit // (16 * whole), 1) * whole
    ones = np.ones((n, 4), np.float32)
    lift_kernels = runtime.build(STREAMING_SOURCE, device)

    def yardstick(program, name: str, size: int, *scalars):
        def prepare() -> DeviceRun:
            run = DeviceRun(device)
            src, dst = run.input(ones), run.scratch((n, 4))
            return run.kernels([(kernel(program, name, src, dst, *scalars), (size,), None)])
        return prepare

    return {COPY_KERNEL: yardstick(lift_kernels, COPY_KERNEL, n),
            HANDWRITTEN_READ: yardstick(handwritten_program(device), HANDWRITTEN_READ, -(-n // CHUNK), np.int32(n),
                                        np.int32(CHUNK)),
            **{name: yardstick(lift_kernels, name, items, np.int32(n)) for name in LIFT_READS}}, 16 * n
