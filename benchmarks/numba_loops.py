"""numba's contenders: each program as the loop a user would write, its outer loop a `prange` across the cores.

Compiled with `njit(parallel=True, fastmath=True, cache=True)` on the first call (the untimed check), so
that the timed calls run machine code; without numba each builder raises `Unavailable`. A builder takes
an `Instance` (`benchmarks.contender_cases`) and returns a `HostRun` whose output is in lift's layout.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.measure import HostRun, Unavailable

try:
    import numba
except ImportError:
    numba = None

prange = numba.prange if numba is not None else range


def _jit(f):
    return numba.njit(parallel=True, fastmath=True, cache=True)(f) if numba is not None else f


@_jit
def asum(x):
    s = np.float32(0.0)
    for i in prange(x.size):
        s += abs(x[i])
    return s


@_jit
def dot(x, y):
    s = np.float32(0.0)
    for i in prange(x.size):
        s += x[i] * y[i]
    return s


@_jit
def scal(a, x, out):
    for i in prange(x.size):
        out[i] = a * x[i]
    return out


@_jit
def gemv(A, x, y, a, b, out):
    for r in prange(A.shape[0]):
        s = np.float32(0.0)
        for c in range(A.shape[1]):
            s += A[r, c] * x[c]
        out[r] = a * s + b * y[r]
    return out


@_jit
def _cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    c = 0.3989422804014327 * math.exp(-0.5 * d * d) * k * (
        0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    return 1.0 - c if d > 0.0 else c


@_jit
def blackscholes(s, strike, rate, volatility, years, call, put):
    sqrt_t = math.sqrt(years)
    discounted = strike * math.exp(-rate * years)
    for i in prange(s.size):
        d1 = (math.log(s[i] / strike) + (rate + 0.5 * volatility * volatility) * years) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        cnd_d1, cnd_d2 = _cnd(d1), _cnd(d2)
        call[i] = s[i] * cnd_d1 - discounted * cnd_d2
        put[i] = discounted * (1.0 - cnd_d2) - s[i] * (1.0 - cnd_d1)
    return call, put


@_jit
def md(positions, neighbours, cutoff, lj1, lj2, out):
    for i in prange(positions.shape[0]):
        fx = fy = fz = np.float32(0.0)
        for k in range(neighbours.shape[1]):
            j = neighbours[i, k]
            dx = positions[i, 0] - positions[j, 0]
            dy = positions[i, 1] - positions[j, 1]
            dz = positions[i, 2] - positions[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < cutoff:
                r2inv = np.float32(1.0) / r2
                r6inv = r2inv * r2inv * r2inv
                c = r2inv * r6inv * (lj1 * r6inv - lj2)
                fx += dx * c
                fy += dy * c
                fz += dz * c
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = fx, fy, fz, 0.0
    return out


@_jit
def jacobi1d(a, out):
    n = a.size
    for i in prange(n):
        out[i] = 0.25 * a[max(i - 1, 0)] + 0.5 * a[i] + 0.25 * a[min(i + 1, n - 1)]
    return out


@_jit
def jacobi2d(a, out):
    m, n = a.shape
    for i in prange(m):
        up, down = max(i - 1, 0), min(i + 1, m - 1)
        for j in range(n):
            out[i, j] = 0.2 * (a[up, j] + a[i, max(j - 1, 0)] + a[i, j] + a[i, min(j + 1, n - 1)] + a[down, j])
    return out


@_jit
def nbody(pos, vel, eps2, dt, new_pos, new_vel):
    n = pos.shape[0]
    for i in prange(n):
        ax = ay = az = np.float32(0.0)
        for j in range(n):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            inv = np.float32(1.0) / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        new_pos[i, 0] = pos[i, 0] + vel[i, 0] * dt + 0.5 * ax * dt * dt
        new_pos[i, 1] = pos[i, 1] + vel[i, 1] * dt + 0.5 * ay * dt * dt
        new_pos[i, 2] = pos[i, 2] + vel[i, 2] * dt + 0.5 * az * dt * dt
        new_pos[i, 3] = pos[i, 3]
        new_vel[i, 0], new_vel[i, 1], new_vel[i, 2] = vel[i, 0] + ax * dt, vel[i, 1] + ay * dt, vel[i, 2] + az * dt
        new_vel[i, 3] = vel[i, 3]
    return new_pos, new_vel


@_jit
def matmul(A, B, C):
    m, k = A.shape
    for i in prange(m):
        C[i, :] = 0.0
        for p in range(k):
            a = A[i, p]
            for j in range(B.shape[1]):
                C[i, j] += a * B[p, j]
    return C


def _run(p, fn, *args) -> HostRun:
    if numba is None:
        raise Unavailable("not installed (pip install numba)")
    return HostRun(lambda: fn(*args), p.case.layout)


def _outputs(*shapes) -> list:
    return [np.empty(s, np.float32) for s in shapes]


def _blackscholes(p):
    (s,) = p.inputs
    options = [p.constant(k) for k in ("STRIKE", "RATE", "VOLATILITY", "YEARS")]
    return _run(p, blackscholes, s, *options, *_outputs(s.shape, s.shape))


def _nbody(p):
    pos, vel, eps2, dt = p.inputs
    return _run(p, nbody, pos, vel, eps2, dt, *_outputs(pos.shape, vel.shape))


def _matmul(p):
    A, B = p.inputs
    return _run(p, matmul, A, B, *_outputs((A.shape[0], B.shape[1])))


BUILDERS = {
    "asum": lambda p: _run(p, asum, *p.inputs),
    "dot": lambda p: _run(p, dot, *p.inputs),
    "scal": lambda p: _run(p, scal, *p.inputs, *_outputs(p.inputs[1].shape)),
    "gemv": lambda p: _run(p, gemv, *p.inputs, *_outputs(p.inputs[0].shape[:1])),
    "blackscholes": _blackscholes,
    "md": lambda p: _run(p, md, *p.inputs, p.constant("LJ1"), p.constant("LJ2"), *_outputs(p.inputs[0].shape)),
    "jacobi1d": lambda p: _run(p, jacobi1d, p.inputs[0], *_outputs(p.inputs[0].shape)),
    "jacobi2d": lambda p: _run(p, jacobi2d, p.inputs[0], *_outputs(p.inputs[0].shape)),
    "nbody": _nbody,
    "matmul": _matmul,
}
