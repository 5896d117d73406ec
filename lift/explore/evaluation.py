"""Evaluating one candidate on a device: build, launch, check against the reference, time adaptively.

`DeviceSession` runs in the device worker process (`lift.explore.worker`): it holds the OpenCL context
and the program's inputs on the device across candidates, and the reference output, computed once by
the interpreter on the high-level program. An evaluation ends in an `Outcome`: `ok` with its times, or
one of the failure classes below with the reason.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from lift.errors import LiftCodegenError, LiftDeviceError
from lift.opencl_gen import runtime
from lift.opencl_gen.launch import check_allocation, check_global_memory
from lift.opencl_gen.runner import Run, RunPlan, allocate, check_device, kernels_of

OK = "ok"
GENERATE, COMPILE, LAUNCH, CRASH, TIMEOUT, WRONG = "generate", "compile", "launch", "crash", "timeout", "wrong"
FAILURES = {
    GENERATE: "the code generator cannot emit the candidate",
    COMPILE: "the OpenCL compiler rejected the generated code",
    LAUNCH: "the device cannot run the kernels' launch configuration, or a launch failed",
    CRASH: "the worker process died (a driver or kernel crash)",
    TIMEOUT: "the evaluation ran past its time limit",
    WRONG: "the result differs from the reference interpreter's",
}

RTOL = 1e-3


@dataclass(frozen=True)
class TimingPolicy:
    """When adaptive timing stops: the inter-quartile range is within `rel_iqr` of the median
    (half-width over median), after at least `min_runs` runs; or at `max_runs` runs or `max_s` seconds."""

    min_runs: int = 5
    max_runs: int = 200
    max_s: float = 2.0
    rel_iqr: float = 0.02

    def __post_init__(self):
        if not 2 <= self.min_runs <= self.max_runs:
            raise ValueError(f"TimingPolicy needs 2 <= min_runs <= max_runs (quartiles of the runs' times), "
                             f"got min_runs={self.min_runs}, max_runs={self.max_runs}")


@dataclass(frozen=True)
class TimingStats:
    """Kernel times in milliseconds from profiling events: median and quartiles of `runs` runs."""

    median_ms: float
    q1_ms: float
    q3_ms: float
    runs: int
    per_kernel_ms: tuple
    stable: bool


@dataclass(frozen=True)
class Outcome:
    """How an evaluation ended: `status` is `ok` or a failure class; `broken` asks for a fresh worker."""

    status: str
    reason: str = ""
    timing: Optional[TimingStats] = None
    broken: bool = False

    @property
    def ok(self) -> bool:
        return self.status == OK


def measure(run: Callable[[], tuple], policy: TimingPolicy) -> TimingStats:
    """Time `run` (one run's per-kernel milliseconds) in rounds until the median is stable (see `TimingPolicy`)."""
    runs, start = [], time.perf_counter()
    while True:
        runs += [run() for _ in range(policy.min_runs)]
        totals = [sum(r) for r in runs]
        q1, median, q3 = statistics.quantiles(totals, n=4, method="inclusive")
        stable = (q3 - q1) / 2 <= policy.rel_iqr * median
        if stable or len(runs) >= policy.max_runs or time.perf_counter() - start >= policy.max_s:
            per_kernel = tuple(statistics.median(r[i] for r in runs) for i in range(len(runs[0])))
            return TimingStats(median, q1, q3, len(runs), per_kernel, stable)


def check_output(got: np.ndarray, want: np.ndarray, rtol: float = RTOL, atol: float = 0.0) -> Optional[str]:
    """Why `got` is not the reference `want`, or None when it matches.

    Each element may differ by `rtol` times the output's magnitude (its largest finite absolute
    value), not its own: candidates re-associate floating-point sums, whose rounding error grows with
    the magnitudes summed rather than with the result; and by `atol` more (a program file's `TOLERANCE`,
    `lift explore --rtol/--atol`). NaNs and infinities must match exactly.
    """
    if got.shape != want.shape:
        return f"the result has shape {got.shape}, the reference {want.shape}"
    if got.dtype.names != want.dtype.names:
        return f"the result has type {got.dtype}, the reference {want.dtype}"
    if want.dtype.fields is not None:
        for name in want.dtype.fields:
            reason = check_output(got[name], want[name], rtol, atol)
            if reason is not None:
                return f"component {name}: {reason}"
        return None
    g, w = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(w)
    scale = float(np.max(np.abs(w[finite]))) if finite.any() else 0.0
    tolerance = rtol * scale + atol
    with np.errstate(invalid="ignore"):
        error = np.abs(g - w)
        bad = ~((error <= tolerance) | (g == w) | (np.isnan(g) & np.isnan(w)))
    if not bad.any():
        return None
    worst = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(error, nan=np.inf), -1.0)), w.shape)
    at = ", ".join(map(str, worst))
    return (f"{int(bad.sum())} of {w.size} elements differ; at [{at}] got {g[worst]:.6g}, expected {w[worst]:.6g} "
            f"(tolerance {tolerance:.3g}: {rtol:g} of the output's magnitude {scale:.3g}"
            + (f", plus {atol:g})" if atol else ")"))


class DeviceSession:
    """A device with the program's inputs resident and the reference output, evaluating run plans through the
    host runner (`lift.opencl_gen.runner`); without a reference, it only times them (they are checked at a
    smaller size, `lift.explore.reference`)."""

    def __init__(self, device, inputs: list, reference: np.ndarray, policy: TimingPolicy,
                 tolerance: tuple = (RTOL, 0.0)):
        import pyopencl as cl

        self.cl = cl
        self.device = device
        self.reference = reference
        self.policy = policy
        self.rtol, self.atol = tolerance
        arrays = [(f"input {i}", a.nbytes) for i, a in enumerate(inputs) if a.ndim]
        check_allocation(arrays, device.max_mem_alloc_size)
        check_global_memory(arrays, device.global_mem_size)
        self.context, self.queue = runtime.context_and_queue(device)
        flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
        self.inputs = [cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(a)) if a.ndim else a[()]
                       for a in inputs]

    def evaluate(self, plan: RunPlan) -> Outcome:
        """Build, check the launches against the device, run once and compare, then time."""
        try:
            program = runtime.build(plan.source, self.device)
        except LiftCodegenError as e:
            return Outcome(COMPILE, str(e))
        try:
            check_device(plan, self.device)
        except LiftDeviceError as e:
            return Outcome(LAUNCH, str(e))
        cl = self.cl
        try:
            run = Run(plan, kernels_of(program), self.queue, self.inputs,
                      *allocate(plan, lambda n: cl.Buffer(self.context, cl.mem_flags.READ_WRITE, n), self.inputs))
            try:
                run.launch()
                references = () if self.reference is None else \
                    self.reference if isinstance(self.reference, tuple) else (self.reference,)
                results = run.download()[0] if references else ()
                for k, (result, want) in enumerate(zip(results, references)):
                    reason = check_output(result, want, self.rtol, self.atol)
                    if reason is not None:
                        return Outcome(WRONG, reason if len(plan.outputs) == 1 else f"output {k}: {reason}")
                return Outcome(OK, timing=measure(run.launch, self.policy))
            finally:
                run.release()
        except cl.Error as e:
            return Outcome(LAUNCH, f"the OpenCL runtime failed to run the kernels: {e}", broken=True)
