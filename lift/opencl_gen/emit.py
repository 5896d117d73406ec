"""Pass `emit`: a lowered, planned program becomes kernels of C statements (`lift.opencl_gen.c_ast`).

Every choice was made by the rewrite rules and is in the expression: which map runs on work-groups,
work-items or sequentially, where results are stored, what is vectorised. The emitter walks the
expression once, dispatching on each function's class (`lift.ir.mapper.Mapper`, methods `call_<Class>`).
Data-layout patterns become views (`lift.opencl_gen.views`); `map-workgroup`, `map-local`, `map-global`
and `map-seq` become loops over group, local, global or loop ids (Figure 2(c)); folds loops over an
accumulator (`lift.opencl_gen.folds`); `map-seq-unswitch` and `map-seq-slide` loops whose iterations are
written out specially (`lift.opencl_gen.sequential_maps`); `iterate` a loop over two buffers whose pointers swap
(paper 3.1), `iterate-host` a kernel the host launches repeatedly (`lift.opencl_gen.host_loops`);
`toLocal`, `toGlobal`, `toPrivate` choose the memory of a result: every result that needs new memory has
one (`lift.opencl_gen.space_inference` casts those the rules left uncast), and a result without is an
internal error. The fixed conventions it follows are rules of their own: the kernels and destinations
(`lift.opencl_gen.destinations`); barriers are placed after it, from the facts it states on its loops
(`lift.opencl_gen.barriers`).

Memory was allocated before, by the pass `allocate-memory` (`lift.opencl_gen.allocation`); the emitter
looks each allocation up by the path it meets it at, and names the memory there (`provide`). Only the
second buffers of `iterate` and of a fold step that cannot update its accumulator in place are twins of a
memory met during emission, allocated in its space (`twin`).
"""

from __future__ import annotations

import itertools
from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param
from lift.ir.opencl_patterns import AddressSpaceCast, Vectorize
from lift.ir.printer import paper
from lift.ir.typecheck import infer_fun, length_ratio
from lift.ir.userfun import UserFun
from lift.opencl_gen import accesses as A
from lift.opencl_gen import c_ast as C
from lift.opencl_gen import destinations as D
from lift.opencl_gen import views as V
from lift.opencl_gen.address_spaces import space_of
from lift.opencl_gen.allocation import REPLICATED, Allocation, allocation
from lift.opencl_gen.c_arith import c_arith
from lift.opencl_gen.c_types import c_type_name
from lift.opencl_gen.emission import Emission
from lift.opencl_gen.folds import FoldEmission
from lift.opencl_gen.host_loops import HostLoopEmission
from lift.opencl_gen.sequential_maps import SequentialMapEmission
from lift.opencl_gen.in_place import Site
from lift.opencl_gen.launch import SEQUENTIAL, Launch, derive_launch
from lift.opencl_gen.memory import INPUT, LOCAL, OUTPUT, PRIVATE, TEMPORARY, Memory, is_storable
from lift.opencl_gen.pattern_views import view_of
from lift.opencl_gen.program import Kernel
from lift.opencl_gen.space_inference import has_holes, no_space
from lift.opencl_gen.userfun_c import length_params
from lift.opencl_gen.userfuns import UserFunctions, c_literal
from lift.types.arith import ArithExpr, Cst, Var, prove_le, prove_lt
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, element_type, tuple_field

_ID_NAMES = {"wrg": ("get_group_id", "get_num_groups"), "lcl": ("get_local_id", "get_local_size"),
             "glb": ("get_global_id", "get_global_size")}


class Emitter(Mapper, FoldEmission, SequentialMapEmission, HostLoopEmission):
    """The emitter's state while it walks one program; `self(f, args, t, out, path)` emits a call of `f`."""

    prefix = "call_"

    def __init__(self, name: str, launches: dict, allocations: dict, watched: tuple = (), index: str = "int"):
        self.name = name
        self.allocations = allocations
        self.index = index  # the C type of indices and counters (`lift.opencl_gen.index_width`)
        self.launches = launches
        self.watched: list = list(watched)
        self.kernels: list = []
        self.launch: Optional[Launch] = None
        self.out = Emission()
        self.scope: list = []
        self.env: dict = {}
        self.userfuns = UserFunctions()
        self.names = itertools.count()
        self.planned: dict = {}
        self.computed: dict = {}
        self.shared: dict = {}
        self.shared_values: dict = {}
        self.cast_target: Optional[V.View] = None  # the new memory a cast gives the map-local it applies to
        self.guards: Optional[list] = None  # the hoistable bounds checks read in a `map-seq-unswitch` iteration
        self.bound: Optional[dict] = None  # the variables declared in that iteration: a loop's count, a let's None
        self.unswitching = False  # emitting an iteration of a `map-seq-unswitch` (`unrolled_steps`)
        self.rolling = False  # emitting the checked copy of a `map-seq-unswitch(f, rolled)` iteration: no unrolling

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self.names)}"

    @property
    def kinds(self) -> tuple:
        return tuple(k for k, *_ in self.scope)

    # --- statements and accesses ---------------------------------------------------------------------------

    def add(self, stmt: C.Stmt) -> None:
        self.out.stmts.append(stmt)

    def nested(self, body) -> tuple:
        """The statements `body()` emits, as a tuple (the body of a loop or block)."""
        saved, self.out.stmts = self.out.stmts, []
        try:
            body()
            return tuple(self.out.stmts)
        finally:
            self.out.stmts = saved

    def record(self, access: A.Access, write: bool = False) -> None:
        guarded = access
        while self.guards is not None and isinstance(guarded, A.GuardedAccess):
            if guarded.bounds is not None:
                self.guards.append(guarded)
            guarded = guarded.inner
        if self.launch is None:
            return
        if isinstance(access, A.MemAccess):
            if access.mem.kind in (INPUT, OUTPUT, TEMPORARY):
                self.out.memories[access.mem.name] = access.mem
            self.site(access.mem, write, access.index, access.width)
        for part in getattr(access, "parts", ()) or ():
            self.record(part, write)
        if isinstance(access, A.GuardedAccess):
            self.record(access.inner, write)

    def site(self, mem: Memory, write: bool, index: Optional[ArithExpr], width: int = 1) -> None:
        """Record an access to `mem` where it is watched (the input the result overwrites, a fold's array
        accumulator during one step)."""
        if any(m is mem for m in self.watched):
            self.out.sites.append((mem, Site(len(self.kernels), write, index, width, len(self.scope))))

    def lets(self, lets: tuple) -> None:
        if self.bound is not None:
            self.bound.update((var.name, None) for var, _ in lets)
        for var, text in dict.fromkeys(lets):
            self.add(C.Decl(self.index, var.name, text))

    def read(self, view: V.View) -> str:
        text, lets = V.read(view)
        self.lets(lets)
        self._record_view(view)
        return text

    def _record_view(self, view: V.View) -> None:
        try:
            self.record(view.access(()))
        except LiftCodegenError:
            for k in range(len(view.type.elems)):
                self._record_view(view.get(k))

    def store(self, out: V.View, value: str) -> None:
        """Store a value; a tuple whose components go to different memories (`unzip`) is stored by parts."""
        if isinstance(out.type, TupleType) and not _is_whole(out):
            self.userfuns.require_type(out.type)
            name = self.fresh("v")
            self.add(C.Decl(c_type_name(out.type), name, value))
            for k in range(len(out.type.elems)):
                self.store(out.get(k), f"{name}.{tuple_field(k)}")
            return
        statement, lets = V.write(out, value)
        self.lets(lets)
        self.record(out.access(()), write=True)
        self.add(statement)

    # --- expressions ---------------------------------------------------------------------------------------

    def emit(self, e: Expr, out: Optional[V.View], path: str) -> V.View:
        """Emit the code of `e`; its value is returned as a view, stored into `out` when one is given."""
        if isinstance(e, Param):
            return self.deliver(self.env[e.name], out, path)
        if isinstance(e, Literal) and isinstance(e.t, ArrayType):
            return self.fill(e, out, path) if out is not None else V.ValueView(c_literal(_element_literal(e)), e.t)
        if isinstance(e, Literal):
            return self.deliver(V.ValueView(c_literal(e), e.t), out, path)
        if isinstance(e, FunCall):
            f = e.f
            if D.is_tuple_of_arrays(e):
                return self.tuple_of_arrays(e, out, path)
            if D.is_layout(e):
                return self.layout(e, out, path)
            if self.launch is None and not isinstance(f, Lambda):
                return self.kernel_call(e, out, path)
            if e in self.shared:
                return self.shared_call(e, path)
            args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
            f, out = self.destination(f, out, path)
            return self.call(f, args, e.t, out, f"{path}.f")
        raise LiftCodegenError(f"cannot generate code for {e!r} (at {path})")

    def tuple_of_arrays(self, e: FunCall, out: Optional[V.View], path: str) -> V.View:
        """Component by component, a computation several components read computed once (`D.shared`)."""
        shared = D.shared(e, out, path, self.shared) if out is not None and self.launch is not None else {}
        self.shared.update(shared)
        parts = tuple(self.emit(a, None if out is None else out.get(k), f"{path}.args{k}")
                      for k, a in enumerate(e.args))
        for c in shared:
            del self.shared[c]
            self.shared_values.pop(c, None)
        return out if out is not None else V.TupleView(parts, e.t)

    def deliver(self, view: V.View, out: Optional[V.View], path: str) -> V.View:
        """`view` itself, or copied into `out` when the consumer asked for the value there."""
        if out is None:
            return view
        if isinstance(view.type, ArrayType):
            raise LiftCodegenError(
                f"the array at {path} must be written by a map to reach its destination (add map(id))")
        self.store(out, self.read(view))
        return out

    def fill(self, lit: Literal, out: V.View, path: str) -> V.View:
        """An array literal stored into `out`: its value in every element. (Where no destination is given, it
        is a view whose every element reads the value: `emit`.)"""
        value = c_literal(_element_literal(lit))

        def store(view: V.View, t: Type) -> None:
            if isinstance(t, ArrayType):
                self.loop("seq", 0, t.length, lambda i: store(view.index(i), t.elem), "fill")
            else:
                self.store(view, value)

        store(out, lit.t)
        return out

    def layout(self, e: FunCall, out: Optional[V.View], path: str) -> V.View:
        """A data-layout pattern: a view of its input; an output view is passed down through its inverse."""
        f = e.f
        inverses = D.argument_destinations(e, out, self.launch is None)
        args = [self.emit(a, inverse, f"{path}.args{i}") for i, (a, inverse) in enumerate(zip(e.args, inverses))]
        view = view_of(f, args, e.t)
        if out is not None and None in inverses:
            raise LiftCodegenError(
                f"the result of {paper(f)} at {path} cannot be written in place: "
                "compute it with a map into memory first (for example map(id))")
        return out if out is not None else view

    # --- kernels ---------------------------------------------------------------------------------------------

    def shared_call(self, e: FunCall, path: str) -> V.View:
        """A computation `D.shared` found: computed the first time it is met, into its merged destination."""
        if e not in self.shared_values:
            f, out = self.destination(e.f, self.shared[e], path)
            args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
            self.shared_values[e] = self.call(f, args, e.t, out, f"{path}.f")
        return self.shared_values[e]

    def destination(self, f: FunDecl, out: Optional[V.View], path: str) -> tuple:
        """`(f, out)` for a call of `f` into `out`, where `out` may leave tuple components open (`get-0` of
        a `map-accum-seq`): those get new memory in the space of `f`'s cast, whose work is then done."""
        if not has_holes(out):
            return f, out
        if not isinstance(f, AddressSpaceCast):
            raise no_space(path)
        return f.f, self.provide(out, self.allocated(path), out.type)

    def kernel_call(self, e: FunCall, out: Optional[V.View], path: str) -> V.View:
        """A computation outside every map: one kernel of its own, after the kernels of its inputs.

        It runs once however often it occurs, into the destinations `D.plan_destinations` found for it.
        """
        if e in self.computed:
            return self.computed[e]
        args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
        out = self.planned.get(e, out)
        if out is None or has_holes(out):
            out = self.provide(out, self.allocated(path), e.t)
        index = len(self.kernels)
        self.launch = self.launches.get(index) or derive_launch(e)
        program, self.out = self.out, Emission()
        try:
            if derive_launch(e) is SEQUENTIAL:
                self.scope.append(("seq-kernel", 0, None, None))
            result = self.call(e.f, args, e.t, out, f"{path}.f")
        finally:
            self.scope = []
            kernel, self.out = self.out, program
        self.kernels.append(Kernel(f"{self.name}_k{index}", self.launch, tuple(kernel.stmts), kernel.memories,
                                   kernel.locals, expr=e, loop=kernel.loop, privates=kernel.privates))
        program.temporaries += kernel.temporaries
        program.sites += kernel.sites
        self.launch = None
        self.computed[e] = result
        return result

    # --- functions -------------------------------------------------------------------------------------------

    def call(self, f: FunDecl, args: list, t: Type, out: Optional[V.View], path: str) -> V.View:
        if f.arity > 1 and len(args) == 1 and isinstance(args[0].type, TupleType):
            args = [args[0].get(k) for k in range(f.arity)]
        return self(f, args, t, out, path)

    def map_default(self, f: FunDecl, args, t, out, path: str):
        raise LiftCodegenError(f"the code generator has no rule for {type(f).__name__} (at {path})")

    def call_Lambda(self, f: Lambda, args: list, t: Type, out, path: str) -> V.View:
        saved = dict(self.env)
        for p, a in zip(f.params, args):
            self.env[p.name] = a
        try:
            return self.emit(f.body, out, f"{path}.body")
        finally:
            self.env = saved

    def value(self, text: str, t: Type, out: Optional[V.View]) -> V.View:
        """A computed scalar, vector or struct: stored into `out`, or held in a new private variable."""
        if out is not None:
            self.store(out, text)
            return out
        name = self.fresh("v")
        self.add(C.Decl(c_type_name(t), name, text))
        return V.ValueView(name, t)

    def call_UserFun(self, f: UserFun, args: list, t: Type, out, path: str, width: int = 0) -> V.View:
        values, spaces = [], []
        for a, want in zip(args, f.in_types):
            if isinstance(want, ArrayType):
                found = V.memory_row(a)
                if found is None:
                    raise LiftCodegenError(f"user function {f.name} at {path}: its array argument must be in "
                                           "memory: an input or a row of one, or a copy (toPrivate(map-seq(id)) of "
                                           "a window)")
                mem, first, lets = found
                self.lets(lets)
                spaces.append(mem.space)
                if self.launch is not None and mem.kind in (INPUT, OUTPUT, TEMPORARY):
                    self.out.memories[mem.name] = mem
                self.site(mem, False, None)
                pointer = f"&{mem.name}" if mem.scalar_variable else mem.name
                values.append(pointer if first == Cst(0) else f"{pointer} + {c_arith(first)}")
            else:
                text = self.read(a)
                if width and isinstance(a.type, ScalarType):
                    text = f"({c_type_name(VectorType(a.type, width))})({text})"
                values.append(text)
        name = self.userfuns.declare(f, width, tuple(spaces), tuple(a.type for a in args))
        values += [c_arith(args[f.param_names.index(a)].type.length) for a, _ in length_params(f.origin)]
        return self.value(f"{name}({', '.join(values)})", t, out)

    def call_Vectorize(self, f: Vectorize, args: list, t: Type, out, path: str) -> V.View:
        if isinstance(f.f, P.Id):
            return self.value(self.read(args[0]), t, out)
        return self.call_UserFun(f.f, args, t, out, path, width=f.n)

    def call_Id(self, f: P.Id, args: list, t: Type, out, path: str) -> V.View:
        return self.value(self.read(args[0]), t, out)

    def call_Tuple(self, f: P.Tuple, args: list, t: Type, out, path: str) -> V.View:
        return self.value(f"({c_type_name(t)}){{{', '.join(self.read(a) for a in args)}}}", t, out)

    def call_Pattern(self, f: P.Pattern, args: list, t: Type, out, path: str) -> V.View:
        """A data-layout pattern applied as a function (its value is a view of its arguments)."""
        if not P.is_view(f):
            raise LiftCodegenError(f"{paper(f)} at {path} is a high-level pattern: lower it first (for example "
                                   "map -> map-global, reduce -> reduce-seq, reorder -> id)")
        return self.deliver(view_of(f, args, t), out, path)

    # --- maps ---------------------------------------------------------------------------------------------

    def loop(self, kind: str, dim: int, n: ArithExpr, body, label: str, fresh: Optional[str] = None,
             unroll: bool = False) -> None:
        """A loop over `n` iterations spread over `kind` ids (Figure 2(c)); `body(i)` emits one iteration.

        Where the launch gives exactly `n` ids the loop is straight-line code; where it gives more, a guard.
        `fresh`: the space of new memory the loop fills (`C.For.fresh`); `unroll`: a sequential loop unrolled,
        by `#pragma unroll`, or, in an iteration of a `map-seq-unswitch`, into its steps (`unrolled_steps`); a loop
        in the copy of such an iteration that checks its reads where the unswitch is `rolled`.
        """
        unroll = unroll and not self.rolling
        if unroll and kind == "seq" and self.unswitching and n.is_constant:
            self.unrolled_steps(dim, n, body, label, fresh)
            return
        i = Var(self.fresh({"wrg": "wg", "lcl": "l", "glb": "g", "seq": "i"}[kind]), 0, n)
        index = Cst(0) if n == Cst(1) else i
        if self.bound is not None:
            self.bound[i.name] = n if kind == "seq" else None

        def iteration():
            self.scope.append((kind, dim, index, n))
            try:
                body(index)
            finally:
                self.scope.pop()

        stmts = self.nested(iteration)
        facts = dict(kind=kind, fresh=fresh)
        if kind == "seq" and n == Cst(1):
            self.add(C.Block(stmts, comment=f"{label}: one iteration", **facts))
        elif kind == "seq":
            self.add(C.For(i.name, "0", c_arith(n), "1", stmts, index=self.index, unroll=unroll, **facts))
        else:
            get_id, get_size = _ID_NAMES[kind]
            size, first = self.launch_size(kind, dim), f"{get_id}({dim})"
            if size is not None and size == n:
                self.add(C.Block(stmts, C.Decl(self.index, i.name, first), label, **facts))
            elif size is not None and prove_lt(n, size):
                self.add(C.Block(stmts, C.Decl(self.index, i.name, first), label, guard=f"{i.name} < {c_arith(n)}",
                                 **facts))
            else:
                self.add(C.For(i.name, first, c_arith(n), f"{get_size}({dim})", stmts, label, index=self.index, **facts))

    def launch_size(self, kind: str, dim: int) -> Optional[ArithExpr]:
        launch = self.launch
        if kind == "glb":
            return launch.global_size[dim] if dim < len(launch.global_size) else None
        if launch.local_size is None or dim >= len(launch.local_size):
            return None
        if kind == "lcl":
            return launch.local_size[dim]
        return launch.global_size[dim] / launch.local_size[dim]

    def call_AbstractMap(self, f: P.AbstractMap, args: list, t: Type, out, path: str) -> V.View:
        (a,) = args
        if out is None:
            raise no_space(path)

        def body(i):
            def iteration():
                self.call(f.f, [a.index(i)], t.elem, out.index(i), f"{path}.f")

            if isinstance(f, P.MapSeqUnswitch):
                self.unswitched(iteration, f.rolled)
            else:
                iteration()

        self.loop(f.thread_level, getattr(f, "dim", 0), a.type.length, body, f.paper,
                  space_of(out) if out is self.cast_target else None, unroll=isinstance(f, P.MapSeqUnroll))
        return out

    # --- memory ---------------------------------------------------------------------------------------------

    def allocated(self, path: str):
        """The allocation the pass `allocate-memory` made for the result at `path`."""
        if path not in self.allocations:
            raise LiftCodegenError(f"internal error: the result at {path} needs memory and the pass allocate-memory "
                                   "gave it none")
        return self.allocations[path]

    def provide(self, out: Optional[V.View], found, t: Type) -> V.View:
        """`out` (None: nothing yet) with memory where `found` (`lift.opencl_gen.allocation`) has an allocation:
        the whole value, or the open components of a tuple."""
        if isinstance(found, Allocation):
            return self.new_memory(found)
        if found is None:
            return out
        parts = tuple(self.provide(None if out is None else out.parts[k], sub, V.component_type(t, k))
                      for k, sub in enumerate(found))
        return V.TupleView(parts, t)

    def new_memory(self, a: Allocation) -> V.MemView:
        """The memory of the allocation `a`, named here, sliced by the ids of the maps that replicate it."""
        prefix = tuple((i, n) for k, _, i, n in self.scope if k in REPLICATED[a.space])
        name = self.fresh({"global": "tmp", "local": "lmem", PRIVATE: "pmem"}[a.space])
        if a.space == "global":
            mem = Memory(name, "global", a.elem, a.size, TEMPORARY)
            self.out.temporaries.append(mem)
        elif a.space == "local":
            mem = Memory(name, "local", a.elem, a.size, LOCAL)
            self.out.locals.append(mem)
        else:
            mem = Memory(name, PRIVATE, a.elem, a.size, PRIVATE)
            self.out.privates.append(mem)
            self.add(C.Decl(c_type_name(a.elem), name, size=a.size.value))
            if a.owned:
                self.check_owners(a, name)
                return V.OwnedView(mem, a.type, prefix, owned=a.owned, scope=self.scope)
        return V.MemView(mem, a.type, prefix)

    def check_owners(self, a: Allocation, name: str) -> None:
        """A private memory each work-item holds only its part of (`Allocation.owned`) needs one work-item per
        element of each dimension it owns: a work-item running two iterations of the `map-local` would hold two
        parts in one."""
        t = a.type
        for p in range(max(p for p, _ in a.owned) + 1):
            dim = dict(a.owned).get(p)
            size = None if dim is None else self.launch_size("lcl", dim)
            if dim is not None and (size is None or not (size == t.length or prove_lt(t.length, size))):
                raise LiftCodegenError(
                    f"the private memory {name} of {a.type} is held in parts by the work-items of map-local[{dim}], "
                    f"one element of its dimension {p} each: it needs a launch of at least {t.length} work-items in "
                    f"local dimension {dim} (it has {size})")
            t = t.elem

    def twin(self, t: Type, space: str, path: str) -> V.View:
        """New memory for a value of `t` in `space`, the space of the memory it pairs with."""
        lengths = tuple((k, n) for k, _, _, n in self.scope)
        return self.provide(None, allocation(t, space, lengths, path), t)

    def call_AddressSpaceCast(self, f: AddressSpaceCast, args: list, t: Type, out, path: str) -> V.View:
        space = f.space
        if space == "local" and "wrg" not in self.kinds:
            raise LiftCodegenError(f"{paper(f)} at {path}: local memory exists only inside a map-workgroup")
        if out is not None and space_of(out) == space:
            return self.call(f.f, args, t, out, f"{path}.f")
        if out is not None:
            raise LiftCodegenError(
                f"{paper(f)} at {path} stores its result in {space} memory, but it is needed in "
                f"{space_of(out)} memory: copy it there (for example toGlobal(map-local(id)))")
        target = self.provide(None, self.allocated(path), t)
        inner = f.f
        while isinstance(inner, AddressSpaceCast):
            inner = inner.f
        self.cast_target = target if isinstance(inner, P.MapLcl) else None
        self.call(f.f, args, t, target, f"{path}.f")
        return target

    # --- iterate --------------------------------------------------------------------------------------------

    def call_Iterate(self, f: P.Iterate, args: list, t: Type, out, path: str) -> V.View:
        """`iterate-n(f)`: a loop over two buffers; each step reads one and writes the other, then they swap."""
        (a,) = args
        mem = a.memory
        if mem is None or mem.kind == INPUT:
            raise LiftCodegenError(f"{paper(f)} at {path}: iterate needs its input in a buffer of its own "
                                   "(store it with a map first)")
        in_t = a.type
        length = Var(self.fresh("len"), 1, None)
        body_f, body_t = infer_fun(f.f, [ArrayType(in_t.elem, length)])
        p, q = length_ratio(body_t.length, length)
        step_out = in_t.length * p / q
        if not prove_le(step_out, in_t.length):
            raise LiftCodegenError(f"{paper(f)} at {path}: iterate over two buffers needs a function that does "
                                   "not grow the array")
        other = self.twin(ArrayType(in_t.elem, step_out), mem.space, path)
        ptr_t = f"{mem.space} {c_type_name(mem.elem)}*"
        src, dst = self.fresh("in"), self.fresh("out")
        self.add(C.Decl(ptr_t, src, mem.name))
        self.add(C.Decl(ptr_t, dst, other.mem.name))
        self.add(C.Decl(self.index, length.name, c_arith(in_t.length)))
        it = self.fresh("it")
        src_mem = Memory(src, mem.space, mem.elem, in_t.length, mem.kind)
        dst_mem = Memory(dst, mem.space, mem.elem, in_t.length, mem.kind)

        def step():
            self.call(body_f, [V.MemView(src_mem, ArrayType(in_t.elem, length))], body_t,
                      V.MemView(dst_mem, body_t), f"{path}.f")
            self.add(C.Swap(ptr_t, src, dst))
            self.add(C.Assign(length.name, c_arith(length * p / q)))

        self.add(C.For(it, "0", c_arith(f.n), "1", self.nested(step), kind="iterate", fresh=mem.space,
                           index=self.index))
        result = V.MemView(Memory(src, mem.space, mem.elem, in_t.length, mem.kind), t)
        if out is not None:
            raise LiftCodegenError(f"the result at {path} must be copied to its destination by a map (map(id))")
        return result


def _element_literal(lit: Literal) -> Literal:
    """The scalar (or vector) literal every element of an array literal holds."""
    return Literal(lit.value, element_type(lit.t))


def check_storable(t: Type, what: str) -> None:
    if not is_storable(t):
        raise LiftCodegenError(f"{what} has type {t}, which has no flat memory layout")


def _is_whole(view: V.View) -> bool:
    """Whether a tuple-typed view is one memory element (else its components are stored apart)."""
    try:
        view.access(())
    except LiftCodegenError:
        return False
    return True
