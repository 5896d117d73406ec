"""scipy's and JAX's contenders: each program as a user of those libraries would write it, on the host.

scipy: the BLAS wrappers of OpenBLAS (`scipy.linalg.blas.sasum/sdot/sscal/sgemv/sgemm`), `ndimage`'s
correlations with a clamped boundary (`mode="nearest"`) for the stencils, and `special.ndtr` (the exact
normal distribution) for BlackScholes. sgemm is called on the transposes (`C^T = B^T A^T`), which are
Fortran-ordered views of the row-major arrays, so that no call copies its operands. sscal scales in place:
its calls alternate `a` and `1/a`, so that every call does the same work on the same data, and the first
(the checked one) gives `a x`.

JAX: `jax.jit` of the numpy formula (the inputs on JAX's device before the timed calls, each call
waiting for its result); N-body maps over blocks of bodies (`lax.map`), so that no N x N array is made.

A builder takes an `Instance` (`benchmarks.contender_cases`) and returns a `HostRun` whose output is in
lift's layout, or raises `Unavailable` ("not installed") without the library.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from benchmarks.contender_cases import JACOBI3, JACOBI5, NBODY_BLOCK
from benchmarks.measure import HostRun, Unavailable


def _import(name: str, pip: str):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        raise Unavailable(f"not installed (pip install {pip})") from None


# --- scipy ------------------------------------------------------------------------------------------------


def _blas():
    return _import("scipy.linalg.blas", "scipy")


def _call(p, f, *arguments) -> HostRun:
    return HostRun(lambda: f(*arguments), p.case.layout)


def _scipy_scal(p) -> HostRun:
    a, x = p.inputs
    sscal, work = _blas().sscal, x.copy()
    factors = [np.float32(a), np.float32(1 / a)]

    def step():
        factors.reverse()
        return sscal(factors[1], work)
    return HostRun(step, p.case.layout)


def _scipy_gemv(p) -> HostRun:
    A, x, y, a, b = p.inputs
    sgemv = _blas().sgemv
    return HostRun(lambda: sgemv(a, A, x, beta=b, y=y), p.case.layout)


def _scipy_matmul(p) -> HostRun:
    A, B = p.inputs
    sgemm = _blas().sgemm
    return HostRun(lambda: sgemm(1.0, B.T, A.T).T, p.case.layout)


def _scipy_blackscholes(p) -> HostRun:
    ndtr = _import("scipy.special", "scipy").ndtr
    (s,) = p.inputs
    strike, rate, volatility, years = (p.constant(k) for k in ("STRIKE", "RATE", "VOLATILITY", "YEARS"))
    sqrt_t = np.sqrt(years)
    discounted = strike * np.exp(-rate * years)

    def prices():
        d1 = (np.log(s / strike) + (rate + np.float32(0.5) * volatility * volatility) * years) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        return s * ndtr(d1) - discounted * ndtr(d2), discounted * ndtr(-d2) - s * ndtr(-d1)
    return HostRun(prices, p.case.layout)


def _scipy_stencil(p) -> HostRun:
    ndimage = _import("scipy.ndimage", "scipy")
    a = p.inputs[0]
    weights = p.inputs[1] if len(p.inputs) > 1 else (JACOBI3 if a.ndim == 1 else JACOBI5)
    out = np.empty_like(a)
    if a.ndim == 1:
        return HostRun(lambda: ndimage.correlate1d(a, weights, mode="nearest", output=out), p.case.layout)
    return HostRun(lambda: ndimage.correlate(a, weights, mode="nearest", output=out), p.case.layout)


SCIPY = {
    "asum": lambda p: _call(p, _blas().sasum, *p.inputs),
    "dot": lambda p: _call(p, _blas().sdot, *p.inputs),
    "scal": _scipy_scal,
    "gemv": _scipy_gemv,
    "blackscholes": _scipy_blackscholes,
    "jacobi1d": _scipy_stencil,
    "jacobi2d": _scipy_stencil,
    "matmul": _scipy_matmul,
}


# --- JAX --------------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _jax_functions() -> dict:
    """The jitted functions, by program (made once: jit caches its compilations per function)."""
    jax = _import("jax", "jax")
    jnp = jax.numpy

    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * jnp.abs(d))
        c = 0.3989422804014327 * jnp.exp(-0.5 * d * d) * k * (
            0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
        return jnp.where(d > 0, 1.0 - c, c)

    def blackscholes(s, strike, rate, volatility, years):
        sqrt_t = jnp.sqrt(years)
        d1 = (jnp.log(s / strike) + (rate + 0.5 * volatility * volatility) * years) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        discounted = strike * jnp.exp(-rate * years)
        return s * cnd(d1) - discounted * cnd(d2), discounted * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))

    def md(positions, neighbours, cutoff, lj1, lj2):
        d = positions[:, None, :3] - positions[neighbours, :3]
        r2 = jnp.sum(d * d, axis=-1)
        r2inv = 1.0 / r2
        r6inv = r2inv * r2inv * r2inv
        c = jnp.where(r2 < cutoff, r2inv * r6inv * (lj1 * r6inv - lj2), 0.0)
        force = jnp.sum(c[..., None] * d, axis=1)
        return jnp.concatenate([force, jnp.zeros_like(force[:, :1])], axis=1)

    def jacobi1d(a):
        p = jnp.pad(a, 1, mode="edge")
        return 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]

    def jacobi2d(a):
        p = jnp.pad(a, 1, mode="edge")
        return 0.2 * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])

    def nbody(pos, vel, eps2, dt):
        def block(p):
            d = pos[None, :, :3] - p[:, None, :3]
            inv = jax.lax.rsqrt(jnp.sum(d * d, axis=-1) + eps2)
            return jnp.einsum("ij,ijk->ik", pos[None, :, 3] * inv * inv * inv, d)
        blocks = pos.reshape(-1, min(NBODY_BLOCK, len(pos)), 4)
        acc = jax.lax.map(block, blocks).reshape(-1, 3)
        new_pos = pos.at[:, :3].add(vel[:, :3] * dt + 0.5 * acc * dt * dt)
        return new_pos, vel.at[:, :3].add(acc * dt)

    return {name: jax.jit(f) for name, f in {
        "asum": lambda x: jnp.sum(jnp.abs(x)), "dot": jnp.dot, "scal": lambda a, x: a * x,
        "gemv": lambda A, x, y, a, b: a * (A @ x) + b * y, "blackscholes": blackscholes, "md": md,
        "jacobi1d": jacobi1d, "jacobi2d": jacobi2d, "nbody": nbody, "matmul": jnp.matmul}.items()}


def _jax_run(name: str, p, arguments: tuple) -> HostRun:
    functions = _jax_functions()
    import jax

    f, arguments = functions[name], [jax.device_put(a) for a in arguments]

    def call():
        return jax.block_until_ready(f(*arguments))
    return HostRun(call, lambda out: p.case.layout(jax.tree_util.tree_map(np.asarray, out)))


def _jax_arguments(name: str, p) -> tuple:
    if name == "blackscholes":
        return (*p.inputs, *(p.constant(k) for k in ("STRIKE", "RATE", "VOLATILITY", "YEARS")))
    if name == "md":
        return (*p.inputs, p.constant("LJ1"), p.constant("LJ2"))
    if name.startswith("jacobi"):
        return p.inputs[:1]
    return p.inputs


JAX = {name: (lambda p, name=name: _jax_run(name, p, _jax_arguments(name, p)))
       for name in ("asum", "dot", "scal", "gemv", "blackscholes", "md", "jacobi1d", "jacobi2d", "nbody", "matmul")}
