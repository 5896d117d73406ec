"""The programs of the contenders benchmark (`benchmarks.bench_contenders`): sizes, inputs, numpy, floors.

A `Case` names a high-level kernel of `examples/` that `lift explore` searches, its sizes (issue 18's, and
tiny ones for `--quick`), how to make its inputs, numpy's version of it (what a user would write; its
output is the reference every contender is checked against), the lift layout of that output, the paper's
hand-derived lowerings of it (the no-regression floor), and its floors: a contender kind that lift's
winner must be at least so fast as (`speed over`), or the share of the device's streaming copy rate.

numpy's functions return the output in a natural form (a scalar, an array, a tuple of arrays); `layout`
turns that into the layout of lift's output (a one-element array for a reduction, a `(call, put)` record
array for BlackScholes, ...), so that every contender's `collect` ends in the same layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np

from lift.ir.program_file import ProgramFile, load_program_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
STREAMING = "streaming copy"
NBODY_BLOCK = 256  # bodies per numpy step: a block's pairwise differences fit in the caches


@dataclass(frozen=True)
class Floor:
    """lift's winner must be at least `least` times as fast as the best contender of `kind` (or reach that
    share of the streaming copy rate, for `STREAMING`)."""

    kind: str
    least: float


@dataclass(frozen=True)
class Case:
    """One program of the benchmark (see the module docstring)."""

    name: str
    file: str
    kernel: str
    sizes: Mapping[str, int]
    quick: Mapping[str, int]
    numpy: Callable
    layout: Callable = np.asarray
    inputs: Optional[Callable] = None
    derived: tuple = ()
    floors: tuple = ()
    flops: Optional[Callable[[Mapping[str, int]], float]] = None
    peers_of: Optional[str] = None

    @property
    def family(self) -> str:
        """The program, without the shape that tells the matrix multiplies apart."""
        return self.name.split()[0]

    @property
    def peers(self) -> str:
        """The program whose contenders (numba, JAX, loopy, hand-written OpenCL, ...) compute this one: its own, or
        `peers_of`'s (jacobi2d5, the user-function form of jacobi2d, has jacobi2d's)."""
        return self.peers_of or self.family

    def label(self, sizes: Mapping[str, int]) -> str:
        return f"{self.family} {' '.join(f'{k}={v}' for k, v in sizes.items())}"


@dataclass(frozen=True)
class Instance:
    """A case at one size binding: its program file, inputs and reference output (numpy's, in lift's layout).

    It answers the builders of `benchmarks.applications` as their `Problem` does (`inputs`, `reference`,
    `constant`)."""

    case: Case
    sizes: Mapping[str, int]
    program_file: ProgramFile
    inputs: tuple
    reference: np.ndarray = field(repr=False)

    @classmethod
    def make(cls, case: Case, sizes: Mapping[str, int], seed: int = 0) -> "Instance":
        pf = load_program_file(EXAMPLES / case.file)
        if case.inputs is None:
            inputs = tuple(pf.inputs(case.kernel, sizes, seed))
        else:
            inputs = tuple(case.inputs(sizes, np.random.default_rng(seed)))
        return cls(case, dict(sizes), pf, inputs, case.layout(case.numpy(*inputs)))

    @property
    def program(self):
        return self.program_file.kernels[self.case.kernel]

    @property
    def useful_bytes(self) -> int:
        """The inputs read once and the output written once."""
        return sum(np.asarray(a).nbytes for a in self.inputs) + self.reference.nbytes

    @property
    def input_bytes(self) -> int:
        return sum(np.asarray(a).nbytes for a in self.inputs)

    def constant(self, name: str):
        """A module-level constant of the program file (BlackScholes' strike, MD's Lennard-Jones factors)."""
        return np.float32(self.program_file.namespace[name])


def scalar(x) -> np.ndarray:
    """A reduction's result as lift writes it: a one-element array."""
    return np.asarray(x, np.float32).reshape(1)


def pairs(fields: tuple) -> np.ndarray:
    """Two arrays of one length as lift writes an array of pairs: a record array of fields `_0` and `_1`."""
    first, second = (np.asarray(f, np.float32) for f in fields)
    out = np.empty(len(first), [("_0", np.float32, first.shape[1:]), ("_1", np.float32, second.shape[1:])])
    out["_0"], out["_1"] = first, second
    return out


# --- numpy, as a user would write each program --------------------------------------------------------------


def asum(x):
    return np.abs(x).sum()


def dot(x, y):
    return np.dot(x, y)


def scal(a, x):
    return a * x


def gemv(A, x, y, a, b):
    return a * (A @ x) + b * y


BS = {"STRIKE": 50.0, "RATE": 0.02, "VOLATILITY": 0.30, "YEARS": 1.0}  # as examples/blackscholes.py


def _cnd(d):
    """The cumulative normal distribution by the polynomial of NVIDIA's SDK (Abramowitz and Stegun 26.2.17)."""
    k = 1.0 / (1.0 + np.float32(0.2316419) * np.abs(d))
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    c = np.float32(0.3989422804014327) * np.exp(np.float32(-0.5) * d * d) * poly
    return np.where(d > 0, 1.0 - c, c)


def blackscholes(s):
    strike, rate, volatility, years = (np.float32(BS[k]) for k in ("STRIKE", "RATE", "VOLATILITY", "YEARS"))
    sqrt_t = np.sqrt(years)
    d1 = (np.log(s / strike) + (rate + np.float32(0.5) * volatility * volatility) * years) / (volatility * sqrt_t)
    d2 = d1 - volatility * sqrt_t
    cnd_d1, cnd_d2 = _cnd(d1), _cnd(d2)
    discounted = strike * np.exp(-rate * years)
    return s * cnd_d1 - discounted * cnd_d2, discounted * (1.0 - cnd_d2) - s * (1.0 - cnd_d1)


LJ1, LJ2 = np.float32(1.5), np.float32(2.0)  # as examples/md.py


def md(positions, neighbours, cutoff):
    d = positions[:, None, :3] - positions[neighbours, :3]
    r2 = np.einsum("pkc,pkc->pk", d, d)
    r2inv = 1.0 / r2
    r6inv = r2inv * r2inv * r2inv
    c = np.where(r2 < cutoff, r2inv * r6inv * (LJ1 * r6inv - LJ2), np.float32(0.0))
    out = np.zeros((len(positions), 4), np.float32)
    out[:, :3] = np.einsum("pk,pkc->pc", c, d)
    return out


def jacobi1d(a, k):
    p = np.pad(a, 1, mode="edge")
    return 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]


def jacobi2d(a, k=None):
    p = np.pad(a, 1, mode="edge")
    return np.float32(0.2) * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])


def nbody(pos, vel, eps2, dt):
    """One all-pairs step, `NBODY_BLOCK` bodies at a time."""
    acc = np.empty((len(pos), 3), np.float32)
    for start in range(0, len(pos), NBODY_BLOCK):
        d = pos[None, :, :3] - pos[start:start + NBODY_BLOCK, None, :3]
        inv = 1.0 / np.sqrt(np.einsum("ijk,ijk->ij", d, d) + eps2)
        acc[start:start + NBODY_BLOCK] = np.einsum("ij,ijk->ik", pos[None, :, 3] * inv * inv * inv, d)
    new_pos, new_vel = pos.copy(), vel.copy()
    new_pos[:, :3] += vel[:, :3] * dt + 0.5 * acc * dt * dt
    new_vel[:, :3] += acc * dt
    return new_pos, new_vel


def matmul(A, B):
    return A @ B


# --- inputs where the program file's would not do ------------------------------------------------------------

JACOBI3 = np.array([0.25, 0.5, 0.25], np.float32)
JACOBI5 = np.array([[0.0, 0.2, 0.0], [0.2, 0.2, 0.2], [0.0, 0.2, 0.0]], np.float32)


def jacobi1d_inputs(sizes, rng):
    return [rng.uniform(-1, 1, sizes["N"]).astype(np.float32), JACOBI3]


def jacobi2d_inputs(sizes, rng):
    return [rng.uniform(-1, 1, (sizes["M"], sizes["N"])).astype(np.float32), JACOBI5]


def grid_inputs(sizes, rng):
    return [rng.uniform(-1, 1, (sizes["M"], sizes["N"])).astype(np.float32)]


def matmul_inputs(sizes, rng):
    return [rng.uniform(-1, 1, (sizes["M"], sizes["K"])).astype(np.float32),
            rng.uniform(-1, 1, (sizes["K"], sizes["N"])).astype(np.float32)]


def matmul_flops(sizes) -> float:
    return 2.0 * sizes["M"] * sizes["N"] * sizes["K"]


def _matmul(shape: str, floors: tuple = ()) -> Case:
    m, n, k = (int(v) for v in shape.split("x"))
    return Case(f"matmul {shape}", "matmul.py", "matmul", {"M": m, "N": n, "K": k},
                {"M": max(m // 64, 16), "N": max(n // 64, 16), "K": max(k // 64, 16)}, matmul,
                lambda c: np.asarray(c, np.float32)[..., None], matmul_inputs, floors=floors, flops=matmul_flops)


NO_REGRESSION = Floor("lift hand-derived", 0.95)

CASES = (
    Case("asum", "asum.py", "asum", {"N": 1 << 24}, {"N": 1 << 16}, asum, scalar,
         derived=("asum_intel", "asum_cpu"), floors=(NO_REGRESSION,)),
    Case("dot", "dot.py", "dot", {"N": 1 << 24}, {"N": 1 << 16}, dot, scalar, derived=("dot_cpu",),
         floors=(NO_REGRESSION,)),
    Case("scal", "scal.py", "scal", {"N": 1 << 24}, {"N": 1 << 16}, scal,
         derived=("scal_vectorised_global", "scal_global"), floors=(NO_REGRESSION,)),
    Case("gemv", "gemv.py", "gemv", {"M": 4096, "N": 4096}, {"M": 128, "N": 256}, gemv,
         derived=("gemv_workgroup", "gemv_coalesced"), floors=(Floor("numpy", 1.0), NO_REGRESSION),
         flops=lambda s: 2.0 * s["M"] * s["N"]),
    Case("blackscholes", "blackscholes.py", "blackscholes", {"N": 1 << 22}, {"N": 1 << 12}, blackscholes, pairs,
         derived=("blackscholes_global",), floors=(Floor("numba", 1.0), NO_REGRESSION)),
    Case("md", "md.py", "md", {"P": 12288, "K": 128}, {"P": 512, "K": 16}, md,
         lambda f: np.asarray(f, np.float32)[:, None, :], derived=("md_global",), floors=(NO_REGRESSION,)),
    Case("jacobi1d", "stencils.py", "jacobi1d_high", {"N": 1 << 22}, {"N": 1 << 12}, jacobi1d,
         inputs=jacobi1d_inputs, floors=(Floor(STREAMING, 0.8),)),
    Case("jacobi2d", "stencils.py", "jacobi2d_high", {"M": 2048, "N": 2048}, {"M": 64, "N": 64}, jacobi2d,
         inputs=jacobi2d_inputs, floors=(Floor(STREAMING, 0.8),)),
    Case("jacobi2d5", "stencils.py", "jacobi2d5_high", {"M": 2048, "N": 2048}, {"M": 64, "N": 64}, jacobi2d,
         inputs=grid_inputs, floors=(Floor(STREAMING, 0.8),), peers_of="jacobi2d"),
    Case("nbody", "nbody.py", "nbody", {"N": 16384}, {"N": 256}, nbody, pairs,
         floors=(Floor("numpy", 2.0), Floor("hand-written OpenCL", 0.9)), flops=lambda s: 20.0 * s["N"] ** 2),
    _matmul("1024x1024x1024", (Floor("CLBlast", 1.0), Floor("numpy", 0.25))),
    _matmul("4096x4096x64"),
    _matmul("64x4096x4096"),
)
