"""Launch configurations: the global and local sizes of a kernel, read off its expression.

The generator decides nothing, so the sizes come from the expression: a kernel whose outermost pattern is
`map-workgroup` over `n` chunks runs `n` work-groups of as many work-items as its longest `map-local`
(the split factors fix both); a `map-global` over `n` elements runs `n` work-items and leaves the
work-group size to the driver; a sequential kernel runs one work-item. A user may override them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

from lift.errors import LiftDeviceError, LiftError
from lift.ir import patterns as P
from lift.ir.footprint import check_fits
from lift.ir.nodes import FunCall, FunDecl, Lambda, Node
from lift.ir.opencl_patterns import AddressSpaceCast
from lift.rules.iterate import host_step
from lift.types.arith import ArithExpr, Cst, as_arith
from lift.types.types import ArrayType


@dataclass(frozen=True)
class Launch:
    """Global and local sizes per dimension (size expressions); `local` None lets the driver choose."""

    global_size: tuple
    local_size: Optional[tuple]

    def evaluate(self, sizes: Mapping[str, int]) -> tuple:
        """Concrete `(global, local)` tuples of ints under a size binding."""
        g = tuple(int(as_arith(n).eval(sizes)) for n in self.global_size)
        l = None if self.local_size is None else tuple(int(as_arith(n).eval(sizes)) for n in self.local_size)
        return g, l

    def to_json(self) -> dict:
        return {"global_size": [str(n) for n in self.global_size],
                "local_size": None if self.local_size is None else [str(n) for n in self.local_size]}


SEQUENTIAL = Launch((Cst(1),), (Cst(1),))


def derive_launch(call: FunCall) -> Launch:
    """The launch of the kernel computing `call` (its outermost pattern decides the kind; an `iterate-host`'s is
    its step's, `lift.rules.iterate.host_step`)."""
    f = _unwrap(call.f)
    if isinstance(f, P.IterateHost) and host_step(call) is not None:
        return derive_launch(host_step(call))
    if isinstance(f, P.MapWrg):
        groups = _nested(call, P.MapWrg)
        local = {}
        for m, n in _all_maps(f, [call.args[0].t], P.MapLcl):
            local[m.dim] = n if m.dim not in local else _larger(local[m.dim], n)
        dims = max([d for d in groups] + [d for d in local]) + 1
        loc = tuple(local.get(d, Cst(1)) for d in range(dims))
        glb = tuple(groups.get(d, Cst(1)) * loc[d] for d in range(dims))
        return Launch(glb, loc)
    if isinstance(f, P.MapGlb):
        glb = _nested(call, P.MapGlb)
        dims = max(glb) + 1
        return Launch(tuple(glb.get(d, Cst(1)) for d in range(dims)), None)
    return SEQUENTIAL


def local_size_overrides(kernels, local_size: int) -> dict:
    """Launch overrides (kernel index to launch, as `generate(..., launch=...)` takes them) giving every kernel
    whose local size the generator leaves to the driver (a `map-global` kernel) work-groups of `local_size`
    work-items.

    The generator decides nothing, so a search picks `local_size` (`lift explore`, the benchmarks) and this
    only spells it out: the global sizes stay, the work-group is `local_size` work-items along dimension 0
    (the innermost map's, whose neighbouring work-items read neighbouring elements) and one along the others,
    so that it holds `local_size` work-items whatever the kernel's dimensions. Whether a device can run the
    result is `check_launch`'s to say. `kernels` are a generated program's, in launch order.
    """
    return {i: Launch(k.launch.global_size, (Cst(local_size),) + (Cst(1),) * (len(k.launch.global_size) - 1))
            for i, k in enumerate(kernels) if k.launch.local_size is None}


def fitting_overrides(kernels, local_size: Optional[int], sizes: Mapping[str, int], max_work_group: int,
                      max_item_sizes: tuple) -> Optional[dict]:
    """`local_size_overrides` where the device can run every one of them at `sizes` (`check_launch`: the size
    divides the global sizes, within the device's limits), `{}` for `local_size` None (the driver's choice), else
    None: the rule by which `lift explore` keeps a work-group size for a candidate, and `lift.compile` a tuned
    winner's for the sizes of a call."""
    if local_size is None:
        return {}
    overrides = local_size_overrides(kernels, local_size)
    try:
        for i, launch in overrides.items():
            check_launch(launch, sizes, max_work_group, max_item_sizes, kernels[i].name)
    except LiftError:
        return None
    return overrides


MAX_PRIVATE_GROUP_BYTES = 4 << 20
"""The most private memory the work-items of one group may declare together where the driver picks the group.
PoCL 3.1 runs a group's work-items in one thread whose frame holds all their private arrays, and reports 4096 as
every kernel's largest group (`CL_KERNEL_WORK_GROUP_SIZE`) whatever they declare: log-sum-exp rows of 1001 floats in
private memory (4 KB a work-item) over 4001 rows (a prime, so the driver's group is all 4001) crashed the process,
as groups of 3000 do; groups of 2048 (8 MB) ran."""


def private_group(global_size: tuple, private_bytes: int) -> Optional[tuple]:
    """The work-group for a launch that leaves it to the driver, where the kernel's work-items declare `private_bytes`
    of private arrays each: the driver's choice (None) where all the work-items together stay within
    `MAX_PRIVATE_GROUP_BYTES`, else the largest group along dimension 0 that does (a divisor of its global size)."""
    if private_bytes * math.prod(global_size) <= MAX_PRIVATE_GROUP_BYTES:
        return None
    most = max(MAX_PRIVATE_GROUP_BYTES // private_bytes, 1)
    first = next(d for d in range(min(global_size[0], most), 0, -1) if global_size[0] % d == 0)
    return (first,) + (1,) * (len(global_size) - 1)


def check_launch(launch: Launch, sizes: Mapping[str, int], max_work_group: int, max_item_sizes: tuple,
                 where: str) -> None:
    """Reject a launch the device cannot run, before it is attempted."""
    glb, loc = launch.evaluate(sizes)
    if loc is None:
        return
    total = 1
    for d, n in enumerate(loc):
        total *= n
        if d < len(max_item_sizes) and n > max_item_sizes[d]:
            raise LiftDeviceError(f"{where}: local size {n} in dimension {d} exceeds the device's maximum "
                                  f"{max_item_sizes[d]}")
    if total > max_work_group:
        raise LiftDeviceError(f"{where}: a work-group of {total} work-items exceeds the device's maximum "
                              f"{max_work_group}; split the data into smaller chunks")
    for d, (g, l) in enumerate(zip(glb, loc)):
        if g % l:
            raise LiftDeviceError(f"{where}: global size {g} is not a multiple of local size {l} in dimension {d}")


def check_allocation(arrays, max_alloc: int) -> None:
    """Reject an array the device cannot hold in one buffer (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`), before anything is
    allocated: `arrays` are `(name, bytes)` pairs."""
    for name, nbytes in arrays:
        if nbytes > max_alloc:
            raise LiftDeviceError(f"the array {name} needs {nbytes} bytes ({nbytes / 2**30:.2f} GiB), more than the "
                                  f"device's largest allocation, CL_DEVICE_MAX_MEM_ALLOC_SIZE = {max_alloc} bytes "
                                  f"({max_alloc / 2**30:.2f} GiB); use a smaller size")


def check_global_memory(arrays, global_mem_size: int) -> None:
    """Reject arrays that together outgrow the device's global memory (`CL_DEVICE_GLOBAL_MEM_SIZE`), before
    anything is allocated: `arrays` are `(name, bytes)` pairs."""
    check_fits(arrays, global_mem_size, "the device's global memory, CL_DEVICE_GLOBAL_MEM_SIZE", error=LiftDeviceError)


def _unwrap(f: FunDecl) -> FunDecl:
    while isinstance(f, AddressSpaceCast):
        f = f.f
    return f


def _nested(call: FunCall, kind) -> dict:
    """Trip counts of the maps of `kind` from the outermost one in, by dimension: `MapWrg(1)(MapWrg(0)(...))`,
    or an inner one anywhere in the outer one's function (`map-global[1](λ r. join(map-global(g)(f(r))))`)."""
    f, t = _unwrap(call.f), call.args[0].t
    out = {f.dim: t.length}
    for m, n in _all_maps(f.f, [t.elem], kind):
        out[m.dim] = n if m.dim not in out else _larger(out[m.dim], n)
    return out


def _all_maps(f: FunDecl, arg_types: list, kind) -> list:
    """Every map of `kind` in `f` applied to `arg_types`, with its trip count, found by a typed walk."""
    f = _unwrap(f)
    found = []
    if isinstance(f, P.AbstractMap):
        a = arg_types[0]
        if isinstance(f, kind):
            found.append((f, a.length))
        found += _all_maps(f.f, [a.elem], kind)
    elif isinstance(f, P.MapSeqSlide):
        found += _all_maps(f.f, [ArrayType(arg_types[0].elem, f.size)], kind)
    elif isinstance(f, P.Fold):
        found += _all_maps(f.f, [f.init.t, arg_types[0].elem], kind)
    elif isinstance(f, (P.Iterate, P.IterateHost)):
        found += _all_maps(f.f, arg_types, kind)
    elif isinstance(f, Lambda):
        found += _maps_in_expr(f.body, kind)
    return found


def _maps_in_expr(e: Node, kind) -> list:
    if not isinstance(e, FunCall):
        return []
    found = _all_maps(e.f, [a.t for a in e.args], kind)
    for a in e.args:
        found += _maps_in_expr(a, kind)
    return found


def _larger(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    if a.is_constant and b.is_constant:
        return a if a.value >= b.value else b
    return a
