"""The cost model's walk: what one kernel does, independent of the device (`KernelProfile`).

`profile` reads the kernels
the code generator planned (`Kernel.expr`, the computation of each, its launch and local memories) and
walks each kernel's computation, one method per pattern class (`lift.ir.mapper.Mapper`). It reads where
results go as the emitter does: into their destination, or where their cast says (the generator's pass
`infer-address-spaces` casts every result that needs new memory, `lift.opencl_gen.space_inference`);
work-group level is the generator's rule (`lift.opencl_gen.barriers`):

- global and local memory traffic: every user-function argument read from, and every result written to, global or
  local memory, times the number of times it runs (values in views are not copied), and the elements a user function
  reads of an array argument (`lift.explore.userfun_cost.array_reads`): at constant indices or its loops' counters
  as any value, at indices computed from data (a gather: MD's `particles[nid]`) a load per lane of the index, and a
  cache line from the level its array fits in (`lift.explore.cache_levels.gathered_lines`). A value is read once
  per iteration of the sequential loops it varies with, as a compiler hoists a load out of a loop that does not
  change it (unless that
  loop encloses a rolled one that does: N-body's chunk of bodies per work-item reads every body again for each of
  its own), or shares it between the copies of an unrolled loop (register blocking: a work-item's `h × w` block
  reads `h + w` values per step, not `2 h w`). A private array indexed by a loop counter, or read as vectors of its
  scalars, lives in memory, not registers: each access counts as an operation, a read of a reduction's
  accumulator there `SPILL_OPS` (it waits for the previous step's store). A value the
  consecutive work-items of a group (along dimension 0) all read, one that does not vary with their index, is read
  from memory once per group and from the cache by the others (a CPU runs them one after another on one core: the
  block of B's columns shared by the work-items of a column of blocks, or the rows of A by those of a row), unless
  what a work-item reads in its loops overflows its core's own cache (`lift.explore.cache_levels.spills`). Each
  read of a program's input array is counted against that array: on a device with a cache (`cache_bytes`), its
  reads beyond its size pass through the cache, at the compute units' local-memory bandwidth (a CPU's local memory
  is its cache), and where the array fits in it (with the smaller inputs) they come from the cache alone, not from
  memory: a 1024³ matrix multiplication re-reads B (4 MB) once per row of blocks, and PoCL runs it from its 32 MB
  cache. Reads through overlapping windows (`slide`: a stencil's neighbourhoods, at constant offsets from one
  index) stream the array from memory once, whatever its size; the cache serves the others (`overlaps`). A
  sequential loop over the elements of `reorder-stride-s` (a tree reduction's work-item walking its chunk), or of a
  row of a transposed matrix (MD's neighbour list walked as columns), reads each from its own cache line, up to the
  stride wide: the cache passes the whole line (`stride_bytes`); not the copies of an unrolled loop that each walk
  their own row, side by side, as an enclosing loop steps along the rows (gemv's block of rows): each row's line
  serves its next steps;
- operations: each user-function application counts the operations of its body, by the lanes they work on
  (`lift.explore.userfun_cost.operations`: a division, a `sqrt` and a transcendental math call weigh more;
  BlackScholes' `exp` and `log` dominate its time), a `vectorize-n` one once per native vector; a sequential
  reduction's steps wait on the chain from its accumulator to the next (`KernelProfile.chains`: `dot`'s
  multiply-add chain, not its issue slots, sets the pace of a work-item summing its chunk; the accumulators of a
  block of rows, updated by an unrolled map, step side by side, each on its own chain); every load and
  store of global or local memory counts one (a load of a window's element through a boundary, in the naive
  stencils, costs as much as the multiply-add that uses it). The scalar operations of the `n` iterations of an
  unrolled map (`map-seq-unroll`) count as one `n` lanes wide, and their loads of consecutive elements as one
  load (a compiler packs them into vectors, SLP: `KernelProfile.slp`); their vector operations count one each.
  A loop a CPU compiler vectorises, a rolled sequential map or the loop over a group's work-items whose body is
  straight-line code (`_straight`: no loop, no transcendental call, no read through a boundary), runs its scalar
  operations side by side in the vector lanes (`KernelProfile.packed`, `item_packed`); a sequential reduction
  does not (its steps depend on each other);
- parallelism: work-groups and work-items from the launch (where the generator leaves the group size to
  the driver, the driver's choice: `driver_group_size`), barriers from the expression;
- local memory per work-group, against the device's.

`lift.explore.cost_model.predict` turns the profiles into milliseconds on a device.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Optional

from lift.explore.cost_spaces import (Space, element_space, gathers, spilled_space, top_level_space, view_space,
                                      with_changes)
from lift.explore.userfun_cost import array_reads, chain, operations, transcendental
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunDecl, Lambda, Literal, Node, Param, free_params
from lift.ir.opencl_patterns import AddressSpaceCast, AsScalar, AsVector, Vectorize
from lift.ir.typecheck import infer_fun, length_ratio
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import counter_indexed_reads
from lift.opencl_gen.address_spaces import GLOBAL, PRIVATE
from lift.opencl_gen.barriers import at_workgroup_level
from lift.opencl_gen.destinations import is_layout, is_tuple_of_arrays
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.launch import SEQUENTIAL, derive_launch
from lift.opencl_gen.memory import element_bytes, memory_bytes, value_bytes
from lift.rules.hierarchy import is_sequential_safe
from lift.types.arith import UnboundSize
from lift.types.types import ArrayType, TupleType, Type, VectorType


@dataclass
class KernelProfile:
    """What one kernel does, independent of the device (see the module docstring)."""

    name: str
    global_bytes: float = 0.0
    written_bytes: float = 0.0  # of `global_bytes`: the bytes written
    local_bytes: float = 0.0
    calls: Counter = field(default_factory=Counter)
    barriers: float = 0.0
    work_items: int = 1
    group_size: Optional[int] = 1  # None: the driver chooses
    local_mem_bytes: int = 0
    shared_bytes: float = 0.0  # of `global_bytes`: reads shared by consecutive work-items
    items_in_row: int = 1  # consecutive work-items (dimension 0) in a group
    accesses: Counter = field(default_factory=Counter)  # loads and stores of global and local memory, by width
    global_sizes: tuple = ()  # work-items in each dimension
    packed: Counter = field(default_factory=Counter)  # scalar operations of loops a CPU compiler vectorises
    item_packed: Counter = field(default_factory=Counter)  # scalar operations of straight-line work-items
    straight_items: bool = False  # the work-items (dimension 0) run straight-line code: `item_packed` holds it
    array_bytes: dict = field(default_factory=dict)  # the size of each input array read
    array_reads: Counter = field(default_factory=Counter)  # of `global_bytes`: the reads of each input array
    array_shared: Counter = field(default_factory=Counter)  # of `shared_bytes`: the same, by array
    array_windowed: Counter = field(default_factory=Counter)  # of `array_reads`: unshared reads through windows
    strided: Counter = field(default_factory=Counter)  # reads of global memory along a stride: (bytes, stride) -> count
    slp: Counter = field(default_factory=Counter)  # scalar operations, loads and stores of the copies of an unrolled
    # loop, by copies (a compiler packs them into vectors, SLP)
    chains: list = field(default_factory=list)  # sequential reductions: (steps, chain of a step, ops, packed ops,
    # SLP-packed ops)
    gathers: Counter = field(default_factory=Counter)  # loads from global memory at data-computed addresses, by the
    # bytes of the array they gather from
    item_span: float = 0.0  # bytes of global memory a work-item reads in its sequential loops
    streams: Counter = field(default_factory=Counter)  # walks of global memory a loop or the work-items step:
    # (input array or None, how many side by side) -> the bytes they move
    row_walks: Counter = field(default_factory=Counter)  # reads of global memory by a rolled loop of more than
    # `PREFETCH_STREAMS` steps from one row of a matrix to the next (`Space.row_walk`): input array -> bytes


def profile(g: GeneratedProgram) -> list:
    """The profiles of a generated program's kernels, in launch order: each planned kernel's computation
    (`Kernel.expr`), launch and local memories; an array an earlier kernel wrote (a let-bound copy: a packed or
    transposed matrix) read as an input array of its size, so that its re-reads come from the cache where it fits."""
    lam = g.typed.expr
    params = {p.name: Space(GLOBAL, array=p.name) if isinstance(p.t, ArrayType) else PRIVATE for p in lam.params}
    sizes = {p.name: value_bytes(p.t, g.sizes) for p in lam.params if isinstance(p.t, ArrayType)}
    profiles = []
    for k in g.kernels:
        e = k.expr
        temporaries = {p.name: p for p in free_params(e) if p.name not in params and isinstance(p.t, ArrayType)}
        prof = KernelProfile(k.name, array_bytes={**sizes, **{name: value_bytes(p.t, g.sizes)
                                                              for name, p in temporaries.items()}})
        walk = CostWalk(prof, g.sizes)
        arrays = {**params, **{name: Space(GLOBAL, array=name) for name in temporaries}}
        spaces = [top_level_space(a, arrays) for a in e.args]
        kinds = ("seq-kernel",) if derive_launch(e) is SEQUENTIAL else ()
        walk.call(e.f, spaces, [a.t for a in e.args], e.t, GLOBAL, _Scope(1.0, kinds), arrays)
        glb, loc = k.launch.evaluate(g.sizes)
        prof.work_items = math.prod(glb)
        prof.global_sizes = tuple(glb)
        prof.group_size = None if loc is None else math.prod(loc)
        prof.items_in_row = glb[0] if loc is None else loc[0]
        prof.local_mem_bytes = sum(memory_bytes(m, g.sizes) for m in k.locals)
        profiles.append(prof)
    return profiles


@dataclass(frozen=True)
class _Scope:
    """Where the walk is: how often the current code runs in all, the enclosing patterns' kinds, the
    enclosing sequential loops (`(id, n, rolled)`, outermost first), the iterations of the innermost loop if it
    is unrolled (1 otherwise), whether the code runs on consecutive work-items (a map on dimension 0), and
    whether the innermost loop is one a CPU compiler vectorises (`LOOP`, `ITEMS` or "": see `_straight`)."""

    times: float = 1.0
    kinds: tuple = ()
    loops: tuple = ()
    unrolled: int = 1
    items: bool = False
    packed: str = ""

    def inside(self, kind: str, n: float = 1.0, unrolled: bool = False, dim: int = 0, packed: str = "") -> "_Scope":
        loops = self.loops + ((len(self.loops), n, not unrolled),) if kind in ("seq", "reduce") else self.loops
        items = self.items or (kind in ("glb", "lcl") and dim == 0)
        return _Scope(self.times * n, self.kinds + (kind,), loops, int(n) if unrolled else 1, items, packed)

    def shared(self, space) -> bool:
        """Whether a value in `space` read here is the same for consecutive work-items."""
        return self.items and ITEM not in getattr(space, "varies", {ITEM})

    def span(self, space) -> float:
        """How many values a work-item reads from `space` here in all: one for each iteration of the sequential
        loops it varies with."""
        varies = getattr(space, "varies", frozenset())
        return math.prod(n for i, n, _ in self.loops if i in varies)

    def streamed(self, space=None) -> bool:
        """Whether a value in `space` read here (None: a result written here) changes with the steps of a sequential
        loop or with consecutive work-items, a stream through its array, not a value read once."""
        if space is None:
            return bool(self.loops) or self.items
        varies = getattr(space, "varies", frozenset())
        return any(i in varies for i, _, _ in self.loops) or self.items and ITEM in varies

    @property
    def loop(self) -> Optional[int]:
        """The id of the innermost sequential loop, if any."""
        return self.loops[-1][0] if self.loops else None

    def reads(self, space) -> float:
        """How often a value in `space` is read here (every time, where what it varies with is not known): not
        again in the iterations of a loop it does not vary with, as a compiler hoists its load out of that loop,
        unless that loop encloses a rolled one it varies with (N-body's chunk of bodies per work-item, a loop
        around the loop over all bodies, reads each body again for each of its own); an unrolled loop is
        straight-line code, whose copies share their loads of one value wherever they are."""
        varies = getattr(space, "varies", None)
        if varies is None:
            return self.times
        inner = max((k for k, (i, _, rolled) in enumerate(self.loops) if i in varies and rolled), default=-1)
        return self.times / math.prod(n for k, (i, n, rolled) in enumerate(self.loops)
                                      if i not in varies and (k > inner or not rolled))

    @property
    def at_workgroup_level(self) -> bool:
        return at_workgroup_level(self.kinds)


def _space(dest, f: P.Pattern) -> object:
    """The space of the result of `f`: its destination's, or its cast's where it needed new memory."""
    if dest is None:
        raise ValueError(f"the result of {f.paper} has no destination and no cast (the generator's pass "
                         "infer-address-spaces casts every result that needs memory)")
    return dest


ITEM = "item"
"""In `Space.varies`: the value changes with the index of consecutive work-items (dimension 0)."""

LOOP, ITEMS = "loop", "items"
"""In `_Scope.packed`: the code is the body of a rolled sequential map, or of the loop over the consecutive
work-items of a group (on a CPU), whose iterations a compiler runs side by side in vector lanes."""


def _straight(f: Node) -> bool:
    """Whether `f` is straight-line code that a compiler vectorises across the iterations of a loop around it:
    it has no loop of its own (a lowered map, a reduction, an iteration) and calls no transcendental math
    function (the OpenCL compiler has no vector versions of them to call). A reduction is no such loop: its
    steps depend on each other, and floating-point additions may not be reordered."""
    return not any((isinstance(n, (P.AbstractMap, P.Fold, P.Iterate)) and not P.is_view(n))
                   or (isinstance(n, UserFun) and transcendental(n)) for n in f.subterms())


PREFETCH_STREAMS = 32
"""How many rows a CPU core's hardware prefetcher follows at once (its L2 streamer tracks one stream per 4 KB page, 32
pages on Intel cores): a work-item that walks more rows of a matrix than this, a line of each at a time while the
next work-items walk the lines beside them (a column strip of a stencil's grid or of a matrix product's right
operand, `Space.row_walk`), reads each line at memory's latency. Measured on the 2-core Xeon, 16 MB read in strips of
16 floats by work-items each walking `R` rows (stride 2-16 KB): 2.1-2.4 ns a line on each core for R up to 32,
2.6-3.0 for 64, 4.2-4.4 for 128, 4.7-5.1 for 256, 5.5-5.8 for 1024 (`lift.explore.cost_model.ROW_LINE_NS`)."""

SPILL_OPS = 3
"""The operations of a read of a reduction's accumulator that lives in memory (`Space.spilled`): the load waits for
the previous step's store to the stack (matrix multiplication's accumulators read as vectors of private scalars
measure 2-10x slower than in registers)."""


class CostWalk(Mapper):
    """Counts what one kernel's computation does; `call` dispatches on the function's class.

    A value's space is a string, or a tuple of spaces for the components of a zip or a tuple.
    """

    def __init__(self, kernel: KernelProfile, sizes: Mapping):
        self.kernel = kernel
        self.sizes = sizes

    def value(self, e: Expr, dest: Optional[str], scope: _Scope, env: Mapping) -> object:
        """Walk `e`, whose result goes to `dest` (None: none given); return its space.

        A destination reaches a layout pattern's argument through the pattern's inverse (a program the
        generator accepts has one wherever a destination is given), and each component of a tuple of arrays.
        """
        if isinstance(e, Param):
            return env.get(e.name, GLOBAL)
        if isinstance(e, Literal):
            return PRIVATE
        f = e.f
        if is_tuple_of_arrays(e):
            return tuple(self.value(a, dest[k] if isinstance(dest, tuple) else dest, scope, env)
                         for k, a in enumerate(e.args))
        if is_layout(e):
            inner = spilled_space(dest) if isinstance(f, (AsVector, AsScalar)) and dest is not None else dest
            spaces = [self.value(a, inner, scope, env) for a in e.args]
            return self.map_Pattern(f, spaces, [a.t for a in e.args], None, dest, scope, env)
        spaces = [self.value(a, None, scope, env) for a in e.args]
        return self.call(f, spaces, [a.t for a in e.args], e.t, dest, scope, env)

    def call(self, f: FunDecl, spaces: list, types: list, out: Type, dest: Optional[str], scope: _Scope,
             env: Mapping) -> object:
        if f.arity > 1 and len(types) == 1 and isinstance(types[0], TupleType):
            spaces = list(spaces[0]) if isinstance(spaces[0], tuple) else [spaces[0]] * f.arity
            types = list(types[0].elems)
        return self(f, spaces, types, out, dest, scope, env)

    def map_default(self, f, *args):
        raise ValueError(f"the cost model has no rule for {type(f).__name__}")

    def map_Lambda(self, f: Lambda, spaces, types, out, dest, scope, env):
        inner = dict(env)
        inner.update({p.name: s for p, s in zip(f.params, spaces)})
        return self.value(f.body, dest, scope, inner)

    def map_UserFun(self, f: FunDecl, spaces, types, out, dest, scope, env):
        """An application: its arguments read, its result written, where they are in memory."""
        for s, t in zip(spaces, types):
            self.read(s, t, scope)
        self.counter_indexed(f, spaces, types, scope)
        self.array_arguments(f, spaces, types, scope)
        if isinstance(f, (P.Id, P.Tuple)) or isinstance(f, Vectorize) and isinstance(f.f, P.Id):
            carried = [s.chain for s in spaces if getattr(s, "chain", None) is not None]
        else:
            for lanes, ops in operations(f).items():
                self._count(self.kernel.calls, lanes, scope.times * ops, scope.packed, scope.unrolled)
            carried = [s.chain + chain(f, k) for k, s in enumerate(spaces) if getattr(s, "chain", None) is not None]
        target = dest or PRIVATE  # with no destination, a value in a private variable
        self.traffic(target, out, scope.times, packed=scope.packed, write=True)
        self.stream(target, out, scope.times, scope.streamed())
        return with_changes(target, chain=max(carried)) if carried and isinstance(target, str) else target

    map_Vectorize = map_Id = map_Tuple = map_UserFun

    def counter_indexed(self, f: FunDecl, spaces, types, scope: _Scope) -> None:
        """The reads of a private array argument that the loops of a user function written in Python make at
        indices their counters vary (`counter_indexed_reads`): the array lives in memory, each read an operation.
        Unrolled (`userfun-loop-unroll`), its indices are constants and it is registers."""
        inner = f.f if isinstance(f, Vectorize) else f
        if not isinstance(inner, UserFun) or inner.origin is None:
            return
        reads = counter_indexed_reads(inner.origin.body)
        for name, s, t in zip(inner.param_names, spaces, types):
            if reads.get(name) and isinstance(t, ArrayType) and s == PRIVATE:
                while isinstance(t, ArrayType):
                    t = t.elem
                self.traffic(spilled_space(s), t, scope.times * reads[name], packed=scope.packed)

    def array_arguments(self, f: FunDecl, spaces, types, scope: _Scope) -> None:
        """The reads that a user function written in Python makes of the elements of its array arguments in global
        or local memory (`array_reads`; a private one is `counter_indexed`'s): one read at constant indices or loop
        counters (a window, a row) as any read of a value there, a gather (`particles[nid]`, `x[col]`) a load per
        lane of its index at every application, priced by where its array lives (`KernelProfile.gathers`)."""
        reads = array_reads(f)
        if not reads:
            return
        inner = f.f if isinstance(f, Vectorize) else f
        for name, s, t in zip(inner.param_names, spaces, types):
            if s == PRIVATE or isinstance(s, tuple):
                continue
            for read, n in reads.items():
                if read.param != name:
                    continue
                if read.gathered:
                    self.gather(s, t, read.elem, scope.times * n * read.loads)
                else:
                    self.traffic(s, read.elem, scope.reads(s) * n * read.loads, scope.shared(s), packed=scope.packed)

    def gather(self, space, array: Type, t: Type, loads: float) -> None:
        """Count `loads` loads of an element of type `t` at addresses computed from data, in an array of type `array`
        in `space`: each an access, and in global memory a cache line of that array (`KernelProfile.gathers`)."""
        self._count(self.kernel.accesses, t.width if isinstance(t, VectorType) else 1, loads, "")
        if space == GLOBAL:
            try:
                nbytes = value_bytes(array, self.sizes)
            except UnboundSize:
                nbytes = None
            self.kernel.gathers[nbytes] += loads

    def map_Pattern(self, f: P.Pattern, spaces, types, out, dest, scope, env):
        """A high-level pattern (the rules lower it first), or a data-layout pattern as a function: a view."""
        if P.is_high_level(f):
            raise ValueError(f"{f.paper} is a high-level pattern")
        if isinstance(f, (P.Zip, P.Tuple)):
            return tuple(spaces)
        if isinstance(f, P.Get) and isinstance(spaces[0], tuple):
            return spaces[0][f.i]
        if isinstance(f, (AsVector, AsScalar)):
            return spilled_space(spaces[0])
        return view_space(f, spaces[0], types[0])

    def map_AbstractMap(self, f: P.AbstractMap, spaces, types, out, dest, scope, env):
        if P.is_high_level(f):
            return self.map_Pattern(f, spaces, types, out, dest, scope, env)
        n = types[0].length.value
        target = _space(dest, f)
        unrolled = isinstance(f, P.MapSeqUnroll)
        rolled = f.thread_level == "seq" and not unrolled
        straight = _straight(f.f) and not gathers(spaces[0])
        packed = LOOP if rolled and straight else \
            ITEMS if f.thread_level in ("glb", "lcl") and f.dim == 0 and straight else ""
        self.kernel.straight_items |= packed == ITEMS
        inner = scope.inside(f.thread_level, n, unrolled, f.dim, packed)
        loop = inner.loop if f.thread_level == "seq" else ITEM if f.thread_level in ("glb", "lcl") and f.dim == 0 \
            else None
        element = element_space(spaces[0], loop, rolled, types[0].elem)
        result = self.call(f.f, [element], [types[0].elem], out.elem, element_space(target, None, rolled, out.elem),
                           inner, env)
        carried = getattr(result, "chain", None)
        return with_changes(target, chain=carried) if unrolled and carried is not None and isinstance(target, str) \
            else target

    def map_MapSeqSlide(self, f: P.MapSeqSlide, spaces, types, out, dest, scope, env):
        """Each element of the input read once, into the window, by a rolled loop over the input; `f` applied at
        every step to the window, private and in registers (its indices are constants)."""
        target = _space(dest, f)
        loads = scope.inside("seq", types[0].length.value)
        self.read_whole(element_space(spaces[0], loads.loop, True, types[0].elem), types[0].elem, loads)
        self.call(f.f, [PRIVATE], [ArrayType(types[0].elem, f.size)], out.elem,
                  element_space(target, None, True, out.elem), scope.inside("seq", out.length.value), env)
        return target

    def map_ReduceSeq(self, f: P.ReduceSeq, spaces, types, out, dest, scope, env):
        """A fold at work-group level with map-locals in its operator waits at the end of each step
        (`lift.opencl_gen.barriers`)."""
        n = types[0].length.value
        acc = f.init.t
        inner = scope.inside("reduce", n)
        if scope.at_workgroup_level and not is_sequential_safe(f.f):
            self.kernel.barriers += scope.times * n
        before = self.kernel.calls + self.kernel.accesses, self.kernel.packed.copy(), self.kernel.slp.copy()
        step = self.call(f.f, [Space(PRIVATE, frozenset({inner.loop}), chain=0.0),
                               element_space(spaces[0], inner.loop, False, types[0].elem)], [acc, types[0].elem], acc,
                         PRIVATE, inner, env)
        if getattr(step, "chain", None):
            self.kernel.chains.append((inner.times, step.chain, self.kernel.calls + self.kernel.accesses - before[0],
                                       self.kernel.packed - before[1], self.kernel.slp - before[2]))
        target = dest or PRIVATE  # with no destination, the private accumulator is the result
        self.traffic(target, acc, scope.times, write=True)
        self.stream(target, acc, scope.times, scope.streamed())
        return target

    def map_MapAccumSeq(self, f: P.MapAccumSeq, spaces, types, out, dest, scope, env):
        """One loop: each step writes its element to the result's first component and updates the
        accumulator (private, or where the result's second component goes for an array), stored once."""
        n = types[0].length.value
        target = _space(dest, f)
        elems, result = target if isinstance(target, tuple) else (target, target)
        acc_t = f.init.t
        acc = result if isinstance(acc_t, ArrayType) else PRIVATE
        step = TupleType(out.elems[0].elem, acc_t)
        inner = scope.inside("reduce", n)
        varying = Space(acc, frozenset({inner.loop}))
        element = element_space(spaces[0], inner.loop, False, types[0].elem)
        self.call(f.f, [varying, element], [acc_t, types[0].elem], step, (elems, acc), inner, env)
        if acc == PRIVATE:
            self.traffic(result, acc_t, scope.times, write=True)
        return target

    def map_AddressSpaceCast(self, f: AddressSpaceCast, spaces, types, out, dest, scope, env):
        """New memory in `f`'s space where no destination is given: a `map-local` filling it at work-group
        level is followed by a barrier (`lift.opencl_gen.barriers`)."""
        inner = f.f
        while isinstance(inner, AddressSpaceCast):
            inner = inner.f
        if dest is None and isinstance(inner, P.MapLcl) and scope.at_workgroup_level:
            self.kernel.barriers += scope.times
        return self.call(f.f, spaces, types, out, f.space, scope, env)

    def map_Iterate(self, f: P.Iterate, spaces, types, out, dest, scope, env):
        step, step_out = infer_fun(f.f, [types[0]])
        p, q = length_ratio(step_out.length, types[0].length)
        steps = f.n.value
        repeated = sum((p / q) ** i for i in range(steps))
        if scope.at_workgroup_level:
            self.kernel.barriers += scope.times * steps
        self.call(step, spaces, types, step_out, spaces[0], _Scope(scope.times * repeated, scope.kinds), env)
        return spaces[0]

    map_IterateHost = map_Iterate

    def read(self, space, t: Type, scope: _Scope) -> None:
        """Count reading a value of type `t` in `space` here: as often as it changes (`_Scope.reads`), from the
        cache where consecutive work-items share it; the loads of the copies of an unrolled loop that it varies
        with as one load as wide as all of them (a compiler packs them, SLP)."""
        if isinstance(space, tuple) and isinstance(t, TupleType):
            for s, c in zip(space, t.elems):
                self.read(s, c, scope)
        else:
            lanes = scope.unrolled if scope.loop in getattr(space, "varies", ()) else 1
            self.traffic(space, t, scope.reads(space), scope.shared(space), lanes, scope.packed)
            if space == GLOBAL:
                self.kernel.item_span += element_bytes(t) * scope.span(space)
                rows = scope.unrolled if scope.unrolled > 1 and getattr(space, "walk", None) == scope.loop else 1
                self.stream(space, t, scope.reads(space), scope.streamed(space), rows)
                if scope.loop is not None and scope.loop == getattr(space, "walk", None) and rows == 1:
                    self.kernel.strided[element_bytes(t), space.stride * element_bytes(t)] += scope.reads(space)
                walked = next((n for i, n, rolled in scope.loops if i == getattr(space, "row_walk", None) and rolled), 0)
                if walked > PREFETCH_STREAMS:
                    self.kernel.row_walks[getattr(space, "array", None)] += element_bytes(t) * scope.reads(space)

    def read_whole(self, space, t: Type, scope: _Scope) -> None:
        """Count reading a whole value of type `t` in `space` here: each element of an array of constant length (a
        window's row of a 2-D stencil, which `map-seq-slide` loads into its window), as the copies of an unrolled
        loop over it."""
        if isinstance(t, ArrayType) and t.length.is_constant:
            inner = scope.inside("seq", t.length.value, unrolled=True)
            self.read_whole(element_space(space, inner.loop, False, t.elem), t.elem, inner)
        else:
            self.read(space, t, scope)

    def stream(self, space, t: Type, times: float, streamed: bool, rows: int = 1) -> None:
        """Count reading or writing `times` values of type `t` in `space`, where `streamed` (`_Scope.streamed`), as a
        stream through global memory (`rows` of them side by side: the copies of an unrolled loop that each walk their
        own row of a transposed matrix, gemv's block of rows), in `KernelProfile.streams`."""
        if streamed and space == GLOBAL and not isinstance(t, (ArrayType, TupleType)):
            self.kernel.streams[getattr(space, "array", None), rows] += element_bytes(t) * times

    def traffic(self, space, t: Type, times: float, shared: bool = False, lanes: int = 1, packed: str = "",
                write: bool = False) -> None:
        """Count reading (or, `write`, writing) a value of type `t` in `space`, `times` times (`shared`: a read that
        consecutive work-items share), the loads or stores of `lanes` of them as one, in a loop `packed` says how a
        compiler vectorises (`_Scope.packed`)."""
        if isinstance(space, tuple) and isinstance(t, TupleType):
            for s, c in zip(space, t.elems):
                self.traffic(s, c, times, shared, lanes, packed, write)
        elif isinstance(t, TupleType) and any(isinstance(c, ArrayType) for c in t.elems):
            for c in t.elems:  # a tuple of arrays (one map writing several outputs): its parts wrote their arrays
                self.traffic(space, c, times, write=write)
        elif isinstance(space, str) and not isinstance(t, ArrayType):
            nbytes, width = element_bytes(t) * times, t.width if isinstance(t, VectorType) else 1
            if space == GLOBAL:
                self.kernel.global_bytes += nbytes
                self.kernel.written_bytes += nbytes if write else 0.0
                self.kernel.shared_bytes += nbytes if shared else 0.0
                array = getattr(space, "array", None)
                if array is not None:
                    self.kernel.array_reads[array] += nbytes
                    self.kernel.array_shared[array] += nbytes if shared else 0.0
                    self.kernel.array_windowed[array] += nbytes if getattr(space, "windowed", False) and not shared \
                        else 0.0
                self._count(self.kernel.accesses, width, times, packed, lanes)
            elif getattr(space, "spilled", False):
                carried = getattr(space, "chain", None) is not None
                self._count(self.kernel.calls, width, times * (SPILL_OPS if carried else 1), packed)
            elif space != PRIVATE:
                self.kernel.local_bytes += nbytes
                self._count(self.kernel.accesses, width, times, packed, lanes)

    def _count(self, counts: Counter, width: int, n: float, packed: str, copies: int = 1) -> None:
        """Count `n` operations `width` lanes wide in `counts`, or, scalar ones in a loop a compiler vectorises, in
        the kernel's `packed` or `item_packed`, or, scalar ones of `copies` side by side (an unrolled loop's), in its
        `slp`, one for all copies. A vector operation's copies stay one instruction each: the compiler packs
        scalars, not vectors, into wider vectors (a 1x32 block of matrix multiplication in `float2` issues sixteen
        128-bit `vmulps` a step on this Xeon's PoCL, a row of sixteen scalars two 256-bit ones; re-timed at 512³,
        blocks of 32 results take 13.5-27 ms in `float2`, 5.1-8.8 in `float16`, blocks of 64 4.8-13.7 in `float4`,
        3.2-8.4 in scalars, 2.9-6.2 in `float16`)."""
        if width == 1 and copies > 1:
            self.kernel.slp[copies] += n / copies
            return
        if packed and width == 1:
            counts = self.kernel.packed if packed == LOOP else self.kernel.item_packed
        counts[width] += n
