"""The paper's six applications (Section 5) as benchmarks: sizes, and every contender but lift's own.

Each `Application` names its program file in `examples/` (the high-level kernel is named after it),
the hand-derived lowered kernels of that file, its sizes (the machine-scaled default, the paper's
sizes of 7.2, and tiny ones for the smoke test), and builders of its other contenders on a `Problem`:
numpy (what a user would write; vectorised for BlackScholes and MD), the hand-written OpenCL kernels
of `handwritten.cl`, and CLBlast where it has the routine. A builder returns a run (see
`benchmarks.measure`) whose output is in the reference's layout, or raises `Unavailable`.

The throughput of every contender counts the problem's useful bytes: its inputs read once and its
output written once. `stream` names the streaming rate a kernel moving those bytes is held to: the
copy rate where the output is as large as the inputs or larger (scal, BlackScholes), else the read
rate (the reductions, gemv, MD).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np
import pyopencl as cl

from lift.ir.interpreter import interpret
from lift.ir.program_file import ProgramFile, load_program_file
from lift.opencl_gen import runtime

from benchmarks.measure import DeviceRun, HostRun, Unavailable, kernel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HANDWRITTEN = Path(__file__).resolve().parent / "handwritten.cl"
COPY, READ = "copy", "read"
CHUNK = 8192          # float4s per work-item in the hand-written reductions (128 KiB)
GROUP = 64            # work-items per row in the work-group-per-row gemv
NVIDIA_LAUNCH = (60 * 1024, 128)  # the global and local sizes of NVIDIA's SDK BlackScholes


@dataclass(frozen=True)
class Problem:
    """One application at one size binding: its inputs (as the program file makes them) and the reference
    output (the interpreter on the high-level program)."""

    app: "Application"
    program_file: ProgramFile
    sizes: Mapping[str, int]
    inputs: tuple
    reference: np.ndarray

    @classmethod
    def make(cls, app: "Application", sizes: Mapping[str, int], seed: int = 0) -> "Problem":
        pf = load_program_file(EXAMPLES / f"{app.name}.py")
        inputs = tuple(pf.inputs(app.name, sizes, seed))
        reference = np.asarray(interpret(pf.kernels[app.name], *inputs, sizes=dict(sizes)))
        return cls(app, pf, dict(sizes), inputs, reference)

    @property
    def label(self) -> str:
        return f"{self.app.name} {'×'.join(_short(v) for v in self.sizes.values())}"

    @property
    def read_bytes(self) -> int:
        return sum(np.asarray(a).nbytes for a in self.inputs)

    @property
    def useful_bytes(self) -> int:
        return self.read_bytes + self.reference.nbytes

    def constant(self, name: str):
        """A module-level constant of the program file (BlackScholes' strike, MD's Lennard-Jones factors)."""
        return np.float32(self.program_file.namespace[name])


@dataclass(frozen=True)
class Application:
    """A benchmark: see the module docstring. `handwritten` and `clblast` map contender names to builders
    `(problem, device) -> run`; `flops` counts a problem's floating-point operations; `stream_floor` is
    the share of the streaming rate the explored kernel must reach, for the memory-bound routines;
    `in_place` names the input that the result overwrites, as the BLAS routine does (scal's `x := a x`):
    lift's kernels are compiled so and the hand-written ones written so, for a like comparison with CLBlast."""

    name: str
    stream: str
    derived: tuple
    sizes: Mapping[str, tuple]
    numpy: Callable[[Problem], HostRun]
    handwritten: Mapping[str, Callable]
    clblast: Mapping[str, Callable] = field(default_factory=dict)
    flops: Optional[Callable[[Problem], float]] = None
    stream_floor: Optional[float] = None
    in_place: Optional[str] = None

    @property
    def blas(self) -> bool:
        return bool(self.clblast)


def _short(n: int) -> str:
    """4096 as 4K, 16777216 as 16M (exact powers of 1024 only)."""
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


@lru_cache(maxsize=None)
def handwritten_program(device):
    return runtime.build(HANDWRITTEN.read_text(), device)


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise Unavailable(reason)


def load_pyclblast():
    try:
        import pyclblast
    except ImportError as e:
        raise Unavailable(f"pyclblast is not installed ({e}): apt-get install libclblast-dev, then "
                          "pip install pyclblast") from None
    return pyclblast


def _scalar(p: Problem) -> Callable[[object], np.ndarray]:
    """Collect a one-element result into the reference's layout."""
    return lambda outputs: np.asarray(outputs[0] if isinstance(outputs, list) else outputs,
                                      np.float32).reshape(p.reference.shape)


# --- scal: a * x -----------------------------------------------------------------------------------------


def scal_numpy(p: Problem) -> HostRun:
    a, x = p.inputs
    out = np.empty_like(x)
    return HostRun(lambda: np.multiply(a, x, out=out))


def scal_float4(p: Problem, device) -> DeviceRun:
    """The float4 kernel, scaling x in place as sscal does."""
    a, x = p.inputs
    _require(x.size % 4 == 0, "scal4 takes float4s: N must be a multiple of 4")
    run = DeviceRun(device)
    xs = run.input(x, in_place=True)
    return run.kernels([(kernel(handwritten_program(device), "scal4", np.float32(a), xs, xs), (x.size // 4,), None)])


def scal_clblast(p: Problem, device) -> DeviceRun:
    """CLBlast's sscal scales x in place."""
    clblast = load_pyclblast()
    a, x = p.inputs
    run = DeviceRun(device)
    xs = run.input(x, in_place=True)
    return run.library(lambda: clblast.scal(run.queue, x.size, xs, alpha=float(a)))


# --- asum and dot: chunked float4 reductions -------------------------------------------------------------


def _chunked_reduction(p: Problem, device, name: str, vectors: tuple) -> DeviceRun:
    """A `name` kernel summing chunks of `CHUNK` float4s per work-item, then one work-item summing those."""
    n = vectors[0].size
    _require(n % 4 == 0, f"{name} takes float4s: N must be a multiple of 4")
    n4 = n // 4
    chunk = min(CHUNK, n4)
    items = -(-n4 // chunk)
    run = DeviceRun(device)
    program = handwritten_program(device)
    arrays = [run.input(v) for v in vectors]
    partial, out = run.scratch((4 * items,)), run.output((1,))
    return run.kernels([(kernel(program, name, *arrays, partial, np.int32(n4), np.int32(chunk)), (items,), None),
                        (kernel(program, "sum_partials", partial, out, np.int32(4 * items)), (1,), (1,))],
                       _scalar(p))


def asum_numpy(p: Problem) -> HostRun:
    (x,) = p.inputs
    return HostRun(lambda: np.abs(x).sum(), _scalar(p))


def asum_chunks(p: Problem, device) -> DeviceRun:
    return _chunked_reduction(p, device, "asum_chunks", p.inputs)


def asum_clblast(p: Problem, device) -> DeviceRun:
    clblast = load_pyclblast()
    (x,) = p.inputs
    run = DeviceRun(device)
    xs, out = run.input(x), run.output((1, 1))
    return run.library(lambda: clblast.asum(run.queue, x.size, xs, out), _scalar(p))


def dot_numpy(p: Problem) -> HostRun:
    x, y = p.inputs
    return HostRun(lambda: np.dot(x, y), _scalar(p))


def dot_chunks(p: Problem, device) -> DeviceRun:
    return _chunked_reduction(p, device, "dot_chunks", p.inputs)


def dot_clblast(p: Problem, device) -> DeviceRun:
    clblast = load_pyclblast()
    x, y = p.inputs
    run = DeviceRun(device)
    xs, ys, out = run.input(x), run.input(y), run.output((1, 1))
    return run.library(lambda: clblast.dot(run.queue, x.size, xs, ys, out), _scalar(p))


# --- gemv: a * A x + b * y ---------------------------------------------------------------------------------


def gemv_numpy(p: Problem) -> HostRun:
    A, x, y, a, b = p.inputs
    return HostRun(lambda: a * (A @ x) + b * y)


def _gemv(p: Problem, device, group: Optional[int]) -> DeviceRun:
    """`gemv_rows` (a row per work-item) or, with a `group` size, `gemv_groups` (a work-group per row)."""
    A, x, y, a, b = p.inputs
    m, n = A.shape
    _require(n % 4 == 0, "the gemv kernels read rows as float4s: N must be a multiple of 4")
    run = DeviceRun(device)
    args = (run.input(A), run.input(x), run.input(y), run.output((m,)), np.float32(a), np.float32(b), np.int32(n // 4))
    program = handwritten_program(device)
    if group is None:
        return run.kernels([(kernel(program, "gemv_rows", *args), (m,), None)])
    group = min(group, device.max_work_group_size)
    return run.kernels([(kernel(program, "gemv_groups", *args, cl.LocalMemory(4 * group)), (m * group,), (group,))])


def gemv_rows(p: Problem, device) -> DeviceRun:
    return _gemv(p, device, None)


def gemv_groups(p: Problem, device) -> DeviceRun:
    return _gemv(p, device, GROUP)


def gemv_clblast(p: Problem, device) -> DeviceRun:
    """CLBlast's sgemv updates y in place."""
    clblast = load_pyclblast()
    A, x, y, a, b = p.inputs
    m, n = A.shape
    run = DeviceRun(device)
    As, xs, ys = run.input(A), run.input(x), run.input(y, in_place=True)
    return run.library(lambda: clblast.gemv(run.queue, m, n, As, xs, ys, a_ld=n, alpha=float(a), beta=float(b)))


def gemv_flops(p: Problem) -> float:
    m, n = p.inputs[0].shape
    return 2.0 * m * n + 3.0 * m


# --- BlackScholes --------------------------------------------------------------------------------------------


def _cnd(d: np.ndarray) -> np.ndarray:
    """The cumulative normal distribution by the polynomial of NVIDIA's SDK (Abramowitz and Stegun 26.2.17)."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    c = 0.3989422804014327 * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1.0 - c, c)


def _options(p: Problem) -> tuple:
    return tuple(p.constant(name) for name in ("STRIKE", "YEARS", "RATE", "VOLATILITY"))


def _call_put(p: Problem) -> Callable[[list], np.ndarray]:
    """Collect separate call and put arrays into the reference's array of (call, put) pairs."""
    def collect(outputs) -> np.ndarray:
        out = np.empty(p.reference.shape, p.reference.dtype)
        out["_0"], out["_1"] = outputs
        return out
    return collect


def blackscholes_numpy(p: Problem) -> HostRun:
    (s,) = p.inputs
    strike, years, rate, volatility = _options(p)
    sqrt_t = np.sqrt(years)
    discounted = strike * np.exp(-rate * years)

    def prices() -> list:
        d1 = (np.log(s / strike) + (rate + 0.5 * volatility * volatility) * years) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        cnd_d1, cnd_d2 = _cnd(d1), _cnd(d2)
        return [s * cnd_d1 - discounted * cnd_d2, discounted * (1.0 - cnd_d2) - s * (1.0 - cnd_d1)]
    return HostRun(prices, _call_put(p))


def blackscholes_nvidia(p: Problem, device) -> DeviceRun:
    (s,) = p.inputs
    run = DeviceRun(device)
    prices, call, put = run.input(s), run.output(s.shape), run.output(s.shape)
    k = kernel(handwritten_program(device), "black_scholes", call, put, prices, *_options(p), np.int32(s.size))
    glb, loc = NVIDIA_LAUNCH
    loc = min(loc, device.max_work_group_size)
    return run.kernels([(k, (glb - glb % loc,), (loc,))], _call_put(p))


# --- MD ----------------------------------------------------------------------------------------------------


def md_numpy(p: Problem) -> HostRun:
    positions, neighbours, cutoff = p.inputs
    lj1, lj2 = p.constant("LJ1"), p.constant("LJ2")

    def forces() -> np.ndarray:
        d = positions[:, None, :3] - positions[neighbours, :3]
        r2 = np.einsum("pkc,pkc->pk", d, d)
        r2inv = 1.0 / r2
        r6inv = r2inv * r2inv * r2inv
        c = np.where(r2 < cutoff, r2inv * r6inv * (lj1 * r6inv - lj2), np.float32(0.0))
        out = np.zeros((len(positions), 4), np.float32)
        out[:, :3] = np.einsum("pk,pkc->pc", c, d)
        return out
    return HostRun(forces, lambda out: out.reshape(p.reference.shape))


def md_shoc(p: Problem, device) -> DeviceRun:
    """SHOC's kernel on SHOC's data layout: the neighbour list transposed on the host (once, untimed)."""
    positions, neighbours, cutoff = p.inputs
    atoms, count = neighbours.shape
    run = DeviceRun(device)
    pos, nbr = run.input(positions), run.input(np.ascontiguousarray(neighbours.T))
    force = run.output(positions.shape)
    k = kernel(handwritten_program(device), "md_lj_force", force, pos, nbr, np.int32(count), np.int32(atoms),
               np.float32(cutoff), p.constant("LJ1"), p.constant("LJ2"))
    return run.kernels([(k, (atoms,), None)], lambda outputs: outputs[0].reshape(p.reference.shape))


def md_flops(p: Problem) -> float:
    """SHOC's count: 8 flops per neighbour pair for the distance, 13 more per pair within the cutoff."""
    positions, neighbours, cutoff = p.inputs
    d = positions[:, None, :3] - positions[neighbours, :3]
    within = int(np.count_nonzero(np.einsum("pkc,pkc->pk", d, d) < cutoff))
    return 8.0 * neighbours.size + 13.0 * within


APPLICATIONS = (
    Application("scal", COPY, ("scal_vectorised", "scal_vectorised_global", "scal_global"),
                {"default": ({"N": 1 << 24},), "paper": ({"N": 1 << 24}, {"N": 1 << 27}), "smoke": ({"N": 1 << 16},)},
                scal_numpy, {"hand-written float4": scal_float4}, {"CLBlast sscal": scal_clblast},
                lambda p: float(p.inputs[1].size), stream_floor=0.8, in_place="x"),
    Application("asum", READ, ("asum_nvidia", "asum_amd", "asum_intel", "asum_cpu"),
                {"default": ({"N": 1 << 24},), "paper": ({"N": 1 << 24}, {"N": 1 << 27}), "smoke": ({"N": 1 << 18},)},
                asum_numpy, {"hand-written float4 chunks": asum_chunks}, {"CLBlast sasum": asum_clblast},
                lambda p: 2.0 * p.inputs[0].size, stream_floor=0.9),
    Application("dot", READ, ("dot_cpu",),
                {"default": ({"N": 1 << 24},), "paper": ({"N": 1 << 24}, {"N": 1 << 27}), "smoke": ({"N": 1 << 16},)},
                dot_numpy, {"hand-written float4 chunks": dot_chunks}, {"CLBlast sdot": dot_clblast},
                lambda p: 2.0 * p.inputs[0].size, stream_floor=0.9),
    Application("gemv", READ, ("gemv_workgroup", "gemv_coalesced"),
                {"default": ({"M": 4096, "N": 4096},), "paper": ({"M": 4096, "N": 4096}, {"M": 16384, "N": 8192}),
                 "smoke": ({"M": 256, "N": 256},)},
                gemv_numpy, {"hand-written row per work-item": gemv_rows,
                             "hand-written work-group per row": gemv_groups},
                {"CLBlast sgemv": gemv_clblast}, gemv_flops),
    Application("blackscholes", COPY, ("blackscholes_global",),
                {"default": ({"N": 1 << 22},), "paper": ({"N": 1 << 22},), "smoke": ({"N": 1 << 14},)},
                blackscholes_numpy, {"hand-written (NVIDIA SDK)": blackscholes_nvidia}),
    Application("md", READ, ("md_global",),
                {"default": ({"P": 12288, "K": 128},), "paper": ({"P": 12288, "K": 128},),
                 "smoke": ({"P": 1024, "K": 16},)},
                md_numpy, {"hand-written (SHOC)": md_shoc}, flops=md_flops),
)
