"""The contenders on the same OpenCL device as lift: loopy, CLBlast and hand-written OpenCL.

loopy: each program as a loopy kernel (the loop nest and its parallel loops stated, loopy writing the
OpenCL): maps with a work-item per element in work-groups of `GROUP`; the reductions in two kernels (a
work-item per contiguous chunk, then one work-item summing the partial sums); matrix multiply with 16
results of a row per work-item, accumulated in private memory over rows of B read contiguously (unrolled). CLBlast (through `pyclblast`): the BLAS routines it has.
Hand-written: the kernels of `handwritten.cl` (those of `benchmarks.applications`, and the Jacobi stencils,
the one-work-item-per-body N-body and the register-blocked matrix multiply).

A builder takes an `Instance` (`benchmarks.contender_cases`) and the device and returns a `DeviceRun`
whose output is in lift's layout, or raises `Unavailable` (a missing package: "not installed").
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from benchmarks import applications as apps
from benchmarks.measure import DeviceRun, Unavailable, kernel

GROUP = 128
TILE = 16
PARTIALS = 1024  # the work-items of a reduction's first kernel


# --- loopy ----------------------------------------------------------------------------------------------


def _lp():
    try:
        import loopy
    except ImportError:
        raise Unavailable("not installed (pip install loopy)") from None
    return loopy


F = "float32"
BLACKSCHOLES = """
<> sqrt_t = sqrt(years)
<> d1 = (log(s[i] / strike) + (rate + 0.5f * volatility * volatility) * years) / (volatility * sqrt_t)
<> d2 = d1 - volatility * sqrt_t
<> k1 = 1.0f / (1.0f + 0.2316419f * fabs(d1))
<> k2 = 1.0f / (1.0f + 0.2316419f * fabs(d2))
<> p1 = 0.31938153f + k1 * (-0.356563782f + k1 * (1.781477937f + k1 * (-1.821255978f + k1 * 1.330274429f)))
<> p2 = 0.31938153f + k2 * (-0.356563782f + k2 * (1.781477937f + k2 * (-1.821255978f + k2 * 1.330274429f)))
<> c1 = 0.3989422804014327f * exp(-0.5f * d1 * d1) * k1 * p1
<> c2 = 0.3989422804014327f * exp(-0.5f * d2 * d2) * k2 * p2
<> n1 = (1.0f - c1) if d1 > 0.0f else c1
<> n2 = (1.0f - c2) if d2 > 0.0f else c2
<> discounted = strike * exp(-rate * years)
call[i] = s[i] * n1 - discounted * n2
put[i] = discounted * (1.0f - n2) - s[i] * (1.0f - n1)
"""
MD = """
for i
    <> fx = 0.0f {id=fx0}
    <> fy = 0.0f {id=fy0}
    <> fz = 0.0f {id=fz0}
    for k
        <> j = neighbours[i, k]
        <> dx = positions[i, 0] - positions[j, 0]
        <> dy = positions[i, 1] - positions[j, 1]
        <> dz = positions[i, 2] - positions[j, 2]
        <> r2 = dx * dx + dy * dy + dz * dz
        <> r2inv = 1.0f / r2
        <> r6inv = r2inv * r2inv * r2inv
        <> c = (r2inv * r6inv * (lj1 * r6inv - lj2)) if r2 < cutoff else 0.0f
        fx = fx + dx * c {id=fx, dep=fx0}
        fy = fy + dy * c {id=fy, dep=fy0}
        fz = fz + dz * c {id=fz, dep=fz0}
    end
    force[i, 0] = fx {dep=fx}
    force[i, 1] = fy {dep=fy}
    force[i, 2] = fz {dep=fz}
    force[i, 3] = 0.0f
end
"""
NBODY = """
for i
    <> ax = 0.0f {id=ax0}
    <> ay = 0.0f {id=ay0}
    <> az = 0.0f {id=az0}
    for j
        <> dx = pos[j, 0] - pos[i, 0]
        <> dy = pos[j, 1] - pos[i, 1]
        <> dz = pos[j, 2] - pos[i, 2]
        <> inv = rsqrt(dx * dx + dy * dy + dz * dz + eps2)
        <> s = pos[j, 3] * inv * inv * inv
        ax = ax + dx * s {id=ax, dep=ax0}
        ay = ay + dy * s {id=ay, dep=ay0}
        az = az + dz * s {id=az, dep=az0}
    end
    new_pos[i, 0] = pos[i, 0] + vel[i, 0] * dt + 0.5f * ax * dt * dt {dep=ax}
    new_pos[i, 1] = pos[i, 1] + vel[i, 1] * dt + 0.5f * ay * dt * dt {dep=ay}
    new_pos[i, 2] = pos[i, 2] + vel[i, 2] * dt + 0.5f * az * dt * dt {dep=az}
    new_pos[i, 3] = pos[i, 3]
    new_vel[i, 0] = vel[i, 0] + ax * dt {dep=ax}
    new_vel[i, 1] = vel[i, 1] + ay * dt {dep=ay}
    new_vel[i, 2] = vel[i, 2] + az * dt {dep=az}
    new_vel[i, 3] = vel[i, 3]
end
"""
MATMUL = """
for i, jo
    for z
        <float32> acc[z] = 0.0f {id=init}
    end
    for k, ji
        acc[ji] = acc[ji] + a[i, k] * b[k, jo * 16 + ji] {id=update, dep=init}
    end
    for s
        c[i, jo * 16 + s] = acc[s] {dep=update}
    end
end
"""
LOOPY = {
    # name: (domain, instructions, arrays' types, inames split into work-groups (name, dimension, size))
    "scal": ("{[i]: 0<=i<n}", "out[i] = a * x[i]", {"x": F, "a": F}, (("i", 0, GROUP),)),
    "asum": ("{[g, j]: 0<=g<groups and 0<=j<chunk}", "partial[g] = sum(j, fabs(x[g * chunk + j]))", {"x": F},
             (("g", 0, None),)),
    "dot": ("{[g, j]: 0<=g<groups and 0<=j<chunk}", "partial[g] = sum(j, x[g * chunk + j] * y[g * chunk + j])",
            {"x": F, "y": F}, (("g", 0, None),)),
    "partials": ("{[g]: 0<=g<groups}", "out[0] = sum(g, partial[g])", {"partial": F}, ()),
    "gemv": ("{[r, c]: 0<=r<m and 0<=c<n}", "out[r] = a * sum(c, A[r, c] * x[c]) + b * y[r]",
             {"A": F, "x": F, "y": F, "a": F, "b": F}, (("r", 0, GROUP),)),
    "blackscholes": ("{[i]: 0<=i<n}", BLACKSCHOLES,
                     {"s": F, "strike": F, "rate": F, "volatility": F, "years": F}, (("i", 0, GROUP),)),
    "md": ("{[i, k]: 0<=i<atoms and 0<=k<count}", MD,
           {"positions": F, "neighbours": "int32", "cutoff": F, "lj1": F, "lj2": F}, (("i", 0, GROUP),)),
    "jacobi1d": ("{[i]: 0<=i<n}", "out[i] = 0.25f * (a[i - 1] if i > 0 else a[i]) + 0.5f * a[i]"
                 " + 0.25f * (a[i + 1] if i < n - 1 else a[i])", {"a": F}, (("i", 0, GROUP),)),
    "jacobi2d": ("{[i, j]: 0<=i<m and 0<=j<n}",
                 "out[i, j] = 0.2f * ((a[i - 1, j] if i > 0 else a[i, j]) + (a[i, j - 1] if j > 0 else a[i, j]) + a[i, j]"
                 " + (a[i, j + 1] if j < n - 1 else a[i, j]) + (a[i + 1, j] if i < m - 1 else a[i, j]))",
                 {"a": F}, (("j", 0, GROUP), ("i", 1, 1))),
    "nbody": ("{[i, j]: 0<=i<n and 0<=j<n}", NBODY, {"pos": F, "vel": F, "eps2": F, "dt": F}, (("i", 0, GROUP),)),
    "matmul": ("{[i, jo, ji, z, s, k]: 0<=i<m and 0<=jo<blocks and 0<=ji, z, s<16 and 0<=k<l}", MATMUL, {"a": F, "b": F, "n": "int32"},
               (("jo", 0, TILE), ("i", 1, 1))),
}

SHAPES = {"md": {"positions": ("atoms", 4), "neighbours": ("atoms", "count")},  # those loopy cannot infer
          "matmul": {"a": ("m", "l"), "b": ("l", "n"), "c": ("m", "n")},
          "jacobi1d": {"a": ("n",), "out": ("n",)}, "jacobi2d": {"a": ("m", "n"), "out": ("m", "n")}}


@lru_cache(maxsize=None)
def _loopy_kernel(name: str, context):
    """The executor of the loopy kernel `name` of `LOOPY` on `context`, its parallel inames split and tagged
    (the stencils' neighbours guarded by conditionals, which loopy's bounds check cannot read)."""
    lp = _lp()
    domain, instructions, types, parallel = LOOPY[name]
    warnings.filterwarnings("ignore", category=lp.LoopyWarning)
    shapes = SHAPES.get(name, {})
    arguments = [lp.GlobalArg(k, np.dtype(types.get(k, F)), shape=shape) for k, shape in shapes.items()]
    knl = lp.make_kernel(domain, instructions, [*arguments, "..."], lang_version=(2018, 2), name=f"loopy_{name}")
    types = {k: v for k, v in types.items() if k not in shapes}
    knl = lp.add_and_infer_dtypes(knl, {k: np.dtype(v) for k, v in types.items()})
    for iname, dim, size in parallel:
        if size is None or size == 1:
            knl = lp.tag_inames(knl, {iname: f"g.{dim}"})
        else:
            knl = lp.split_iname(knl, iname, size, outer_tag=f"g.{dim}", inner_tag=f"l.{dim}")
    if name == "matmul":
        knl = lp.tag_inames(lp.prioritize_loops(knl, "k,ji"), {"ji": "unr", "z": "unr", "s": "unr"})
    knl = lp.add_inames_for_unused_hw_axes(knl)
    if name.startswith("jacobi"):
        knl = lp.set_options(knl, enforce_array_accesses_within_bounds="no_check")
    return knl.executor(context)


def _loopy_call(run: DeviceRun, name: str, **arguments):
    executor = _loopy_kernel(name, run.context)
    return lambda: executor(run.queue, **arguments)


def _loopy_reduction(p, device, name: str) -> DeviceRun:
    """`name` in two kernels: `PARTIALS` work-items each sum a chunk, then one sums their partial sums."""
    run = DeviceRun(device)
    vectors = {k: run.input(v) for k, v in zip("xy", p.inputs)}
    n = p.inputs[0].size
    groups = min(PARTIALS, n)
    partial, out = run.scratch((groups,)), run.output((1,))
    first = _loopy_call(run, name, partial=partial, chunk=np.int32(n // groups), groups=np.int32(groups), **vectors)
    second = _loopy_call(run, "partials", partial=partial, out=out, groups=np.int32(groups))
    return run.library(lambda: (first(), second()), lambda outputs: p.case.layout(outputs[0]))


def _loopy_map(p, device, name: str, inputs: dict, outputs: dict, **scalars) -> DeviceRun:
    """A loopy kernel over device copies of `inputs` into `outputs` (name: shape), collected in lift's layout."""
    run = DeviceRun(device)
    arrays = {k: run.input(v) for k, v in inputs.items()}
    arrays.update({k: run.output(shape) for k, shape in outputs.items()})
    call = _loopy_call(run, name, **arrays, **scalars)
    collect = (lambda out: p.case.layout(out[0])) if len(outputs) == 1 else (lambda out: p.case.layout(tuple(out)))
    return run.library(call, collect)


def _loopy_blackscholes(p, device) -> DeviceRun:
    (s,) = p.inputs
    options = {k.lower(): p.constant(k) for k in ("STRIKE", "RATE", "VOLATILITY", "YEARS")}
    return _loopy_map(p, device, "blackscholes", {"s": s}, {"call": s.shape, "put": s.shape}, **options)


def _loopy_md(p, device) -> DeviceRun:
    positions, neighbours, cutoff = p.inputs
    return _loopy_map(p, device, "md", {"positions": positions, "neighbours": neighbours},
                      {"force": positions.shape}, cutoff=cutoff, lj1=p.constant("LJ1"), lj2=p.constant("LJ2"))


def _loopy_nbody(p, device) -> DeviceRun:
    pos, vel, eps2, dt = p.inputs
    return _loopy_map(p, device, "nbody", {"pos": pos, "vel": vel}, {"new_pos": pos.shape, "new_vel": vel.shape},
                      eps2=eps2, dt=dt)


def _loopy_gemv(p, device) -> DeviceRun:
    A, x, y, a, b = p.inputs
    return _loopy_map(p, device, "gemv", {"A": A, "x": x, "y": y}, {"out": A.shape[:1]}, a=a, b=b)


def _loopy_matmul(p, device) -> DeviceRun:
    A, B = p.inputs
    if B.shape[1] % 16:
        raise Unavailable("the loopy kernel takes N a multiple of 16")
    return _loopy_map(p, device, "matmul", {"a": A, "b": B}, {"c": (A.shape[0], B.shape[1])},
                      blocks=np.int32(B.shape[1] // 16), n=np.int32(B.shape[1]))


LOOPY_BUILDERS = {
    "scal": lambda p, d: _loopy_map(p, d, "scal", {"x": p.inputs[1]}, {"out": p.inputs[1].shape}, a=p.inputs[0]),
    "asum": lambda p, d: _loopy_reduction(p, d, "asum"),
    "dot": lambda p, d: _loopy_reduction(p, d, "dot"),
    "gemv": _loopy_gemv,
    "blackscholes": _loopy_blackscholes,
    "md": _loopy_md,
    "jacobi1d": lambda p, d: _loopy_map(p, d, "jacobi1d", {"a": p.inputs[0]}, {"out": p.inputs[0].shape}),
    "jacobi2d": lambda p, d: _loopy_map(p, d, "jacobi2d", {"a": p.inputs[0]}, {"out": p.inputs[0].shape}),
    "nbody": _loopy_nbody,
    "matmul": _loopy_matmul,
}


# --- CLBlast ------------------------------------------------------------------------------------------------


def _clblast_gemm(p, device) -> DeviceRun:
    clblast = apps.load_pyclblast()
    A, B = p.inputs
    (m, k), n = A.shape, B.shape[1]
    run = DeviceRun(device)
    a, b, c = run.input(A), run.input(B), run.output((m, n))
    return run.library(lambda: clblast.gemm(run.queue, m, n, k, a, b, c, a_ld=k, b_ld=n, c_ld=n),
                       lambda out: p.case.layout(out[0]))


CLBLAST = {"asum": apps.asum_clblast, "dot": apps.dot_clblast, "scal": apps.scal_clblast,
           "gemv": apps.gemv_clblast, "matmul": _clblast_gemm}


# --- hand-written OpenCL -------------------------------------------------------------------------------------


def _hand(p, device, name: str, inputs: list, outputs: list, scalars: tuple, size: tuple) -> DeviceRun:
    """The hand-written kernel `name` (arguments: inputs, outputs, scalars) over `size` work-items."""
    run = DeviceRun(device)
    arrays = [run.input(a) for a in inputs] + [run.output(s) for s in outputs]
    k = kernel(apps.handwritten_program(device), name, *arrays, *scalars)
    collect = (lambda out: p.case.layout(out[0])) if len(outputs) == 1 else (lambda out: p.case.layout(tuple(out)))
    return run.kernels([(k, size, None)], collect)


def _hand_jacobi(p, device) -> DeviceRun:
    a = p.inputs[0]
    if a.ndim == 1:
        return _hand(p, device, "jacobi1d", [a], [a.shape], (np.int32(a.size),), a.shape)
    m, n = a.shape
    return _hand(p, device, "jacobi2d", [a], [a.shape], (np.int32(m), np.int32(n)), (-(-n // 16), m))


def _hand_nbody(p, device) -> DeviceRun:
    pos, vel, eps2, dt = p.inputs
    return _hand(p, device, "nbody_body", [pos, vel], [pos.shape, vel.shape], (np.int32(len(pos)), eps2, dt),
                 (len(pos),))


def _hand_nbody_lanes(p, device) -> DeviceRun:
    pos, vel, eps2, dt = p.inputs
    if len(pos) % 8:
        raise Unavailable("nbody_lanes8 takes N a multiple of 8")
    return _hand(p, device, "nbody_lanes8", [pos, vel], [pos.shape, vel.shape], (np.int32(len(pos)), eps2, dt),
                 (len(pos) // 8,))


def _hand_md_lanes(p, device) -> DeviceRun:
    positions, neighbours, cutoff = p.inputs
    atoms, count = neighbours.shape
    if atoms % 8:
        raise Unavailable("md_lanes8 takes a multiple of 8 atoms")
    return _hand(p, device, "md_lanes8", [positions, neighbours], [positions.shape],
                 (np.int32(count), np.float32(cutoff), p.constant("LJ1"), p.constant("LJ2")), (atoms // 8,))


def _hand_matmul(p, device) -> DeviceRun:
    A, B = p.inputs
    (m, k), n = A.shape, B.shape[1]
    if m % 4 or n % 16:
        raise Unavailable("matmul_4x16 takes M a multiple of 4 and N of 16")
    return _hand(p, device, "matmul_4x16", [A, B], [(m, n)], (np.int32(k), np.int32(n)), (n // 16, m // 4))


HANDWRITTEN = {"asum": apps.asum_chunks, "dot": apps.dot_chunks, "scal": apps.scal_float4,
               "gemv": apps.gemv_rows, "blackscholes": apps.blackscholes_nvidia, "md": apps.md_shoc,
               "jacobi1d": _hand_jacobi, "jacobi2d": _hand_jacobi, "nbody": _hand_nbody, "matmul": _hand_matmul}
HANDWRITTEN_LANES = {"nbody": _hand_nbody_lanes, "md": _hand_md_lanes}
"""Hand-written kernels of another algorithm than the contender of `HANDWRITTEN`: 8 bodies (N-body) or atoms (MD,
its neighbours' positions gathered lane by lane) per work-item."""


def streaming_copy(device, nbytes: int):
    """A function giving a run of the hand-written streaming copy over about `nbytes` (float4s, at least one)."""
    n = max(nbytes // 16, 1)
    ones = np.ones((n, 4), np.float32)

    def prepare() -> DeviceRun:
        run = DeviceRun(device)
        src, dst = run.input(ones), run.scratch((n, 4))
        return run.kernels([(kernel(apps.handwritten_program(device), "stream_copy4", src, dst), (n,), None)])
    return prepare, 16 * n
