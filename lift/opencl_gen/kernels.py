"""The OpenCL C generator: a lowered expression becomes kernels, deciding nothing (paper Section 3).

Every choice was made by the rewrite rules and is in the expression: which map runs on work-groups,
work-items or sequentially, where results are stored, what is vectorised. The generator walks the
expression once. Data-layout patterns become views (`lift.opencl_gen.views`); `map-workgroup`,
`map-local`, `map-global` and `map-seq` become loops over group, local, global or loop ids (Figure 2(c));
`reduce-seq` a loop over a private accumulator; `iterate` a loop over two buffers whose pointers swap
(paper 3.1); `toLocal`, `toGlobal`, `toPrivate` choose the memory of a result.

A fold with an array accumulator (`reduce-seq`, `map-accum-seq`) keeps it where its result goes and writes
each step's new accumulator over the old one, where each element of the new one is computed from the same
element of the old (`lift.opencl_gen.in_place.misalignment`, as for a result written over an input); a
step that reads the accumulator elsewhere is emitted into a fresh buffer, copied back after it.

A computation at the program's top level, outside every map, needs all of its input before it starts:
each one becomes its own kernel, with a temporary buffer between it and the next (Brook's multi-pass
reductions: asum's final `reduce-seq ∘ join ∘ map-workgroup(...)` is two kernels).

A program may have several outputs: a result that is a tuple of arrays has one output memory per
component. A tuple of arrays is computed component by component, each into its part of the destination;
`unzip` lets one map write several arrays (its inverse view is the tuple of the component destinations).
A top-level computation is computed once however often it occurs (structurally equal subterms, or a
parameter of a top-level lambda used several times), into the destinations the outputs push down to it
through `get`, `join` and the other layout patterns: the fused kernel of AXPYDOT writes `z` straight into
its output and the partial sums into a temporary. Inside a kernel, a computation that several components
of a tuple of arrays read (the two results of a `map-accum-seq`) is computed once the same way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping, Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.names import program_names
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param, bind_sizes_in, count_uses, substitute
from lift.ir.printer import paper
from lift.ir.typecheck import TypedProgram, infer, infer_fun, length_ratio
from lift.ir.userfun import UserFun
from lift.opencl_gen import views as V
from lift.opencl_gen.c_arith import c_arith
from lift.opencl_gen.c_types import c_type_name
from lift.opencl_gen.in_place import Site, check_in_place, misalignment
from lift.opencl_gen.launch import SEQUENTIAL, Launch, derive_launch
from lift.opencl_gen.memory import (INPUT, LOCAL, OUTPUT, PRIVATE, TEMPORARY, Memory, element_count, element_type,
                                    is_storable, output_types)
from lift.opencl_gen.userfuns import UserFunctions, c_literal
from lift.types.arith import ArithExpr, Cst, Var, prove_le, prove_lt
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, bind_type, tuple_field

_ID_NAMES = {"wrg": ("get_group_id", "get_num_groups"), "lcl": ("get_local_id", "get_local_size"),
             "glb": ("get_global_id", "get_global_size")}


@dataclass
class Kernel:
    """One generated kernel: its name, parameters (memories in order), body lines and launch."""

    name: str
    launch: Launch
    lines: list = field(default_factory=list)
    memories: dict = field(default_factory=dict)
    locals: list = field(default_factory=list)
    size_params: tuple = ()

    @property
    def params(self) -> list:
        order = {INPUT: 0, OUTPUT: 1, TEMPORARY: 2}
        mems = [m for m in self.memories.values() if m.kind in order]
        return sorted(mems, key=lambda m: (order[m.kind], m.serial))


@dataclass
class GeneratedProgram:
    """The OpenCL C of a program, its kernels in launch order and the buffers between them.

    `outputs` has one memory per component of a result that is a tuple of arrays (in order, depth
    first), else the result's one memory (`lift.opencl_gen.memory.output_types`).
    """

    name: str
    source: str
    kernels: list
    inputs: list
    outputs: list
    temporaries: list
    typed: TypedProgram
    sizes: dict
    free_sizes: tuple


def generate(program: Lambda, name: str = "lift", sizes: Optional[Mapping[str, int]] = None,
             launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None) -> GeneratedProgram:
    """Generate the kernels of a lowered program; `sizes` become constants, `launch` overrides kernel launches,
    `in_place` names an input array that the result overwrites (`lift.opencl_gen.in_place`)."""
    if not name.isidentifier():
        raise LiftCodegenError(f"the kernel name {name!r} is not a C identifier")
    typed = specialise(program, sizes or {})
    with program_names(program):  # the names views make (`pad_n`) follow the program, not the process
        return _Generator(name, typed, dict(sizes or {}), dict(launch or {}), in_place).run()


def specialise(program: Lambda, sizes: Mapping[str, int]) -> TypedProgram:
    """The program typed with bound sizes replaced by constants, so that indices simplify."""
    base = infer(program)
    if not sizes:
        return base
    types = tuple(bind_type(t, sizes) for t in base.param_types)
    return infer(bind_sizes_in(program, dict(sizes)), types)


class _Generator:
    def __init__(self, name: str, typed: TypedProgram, sizes: dict, launches: dict, in_place: Optional[str] = None):
        self.name = name
        self.in_place = in_place
        self.in_place_mem: Optional[Memory] = None
        self.sites: list = []
        self.watches: list = []
        self.typed = typed
        self.sizes = sizes
        self.launches = launches
        self.kernels: list = []
        self.kernel: Optional[Kernel] = None
        self.temporaries: list = []
        self.scope: list = []
        self.env: dict = {}
        self.userfuns = UserFunctions()
        self.names = itertools.count()
        self.lines: list = []
        self.depth = 1
        self.planned: dict = {}
        self.computed: dict = {}
        self.shared: dict = {}
        self.shared_values: dict = {}

    # --- driver ----------------------------------------------------------------------------------------

    def run(self) -> GeneratedProgram:
        lam = self.typed.expr
        inputs = []
        for p in lam.params:
            if isinstance(p.t, ArrayType):
                mem = Memory(p.name, "global", element_type(p.t), element_count(p.t), INPUT,
                             readonly=p.name != self.in_place)
                self.check_storable(p.t, f"input {p.name}")
            else:
                mem = Memory(p.name, PRIVATE, p.t, Cst(1), INPUT, scalar_variable=True, readonly=True)
            inputs.append(mem)
            self.env[p.name] = V.MemView(mem, p.t)
        outputs = []
        out = self.output_view(self.typed.type, outputs, inputs)
        body = _inline_top_level_lets(lam.body)
        if body is not lam.body:
            body = infer(Lambda(lam.params, body)).expr.body
        self.plan(body, out, "body")
        self.emit(body, out, "body")
        if self.in_place_mem is not None:
            check_in_place(self.in_place, self.sites)
        free = tuple(sorted({v.name for p in lam.params for v in _type_vars(p.t)} - set(self.sizes)))
        for k in self.kernels:
            k.size_params = free
        source = self.render(free)
        return GeneratedProgram(self.name, source, self.kernels, inputs, outputs, self.temporaries, self.typed,
                                self.sizes, free)

    def output_view(self, t: Type, outputs: list, inputs: list) -> V.View:
        """The destination of the result: one output memory, or one per component of a tuple of arrays, or
        the input the result overwrites."""
        if self.in_place is not None:
            return self.in_place_view(t, outputs, inputs)
        if len(output_types(t)) == 1:
            self.check_storable(t, "the result")
            mem = Memory("out", "global", element_type(t), element_count(t), OUTPUT)
            outputs.append(mem)
            return V.MemView(mem, t)

        def component(u: Type) -> V.View:
            if isinstance(u, TupleType) and len(output_types(u)) > 1:
                return V.TupleView(tuple(component(e) for e in u.elems), u)
            self.check_storable(u, f"component {len(outputs)} of the result")
            mem = Memory(f"out{len(outputs)}", "global", element_type(u), element_count(u), OUTPUT)
            outputs.append(mem)
            return V.MemView(mem, u)

        return component(t)

    def in_place_view(self, t: Type, outputs: list, inputs: list) -> V.View:
        mem = next((m for m in inputs if m.name == self.in_place), None)
        if mem is None or mem.scalar_variable:
            arrays = [m.name for m in inputs if not m.scalar_variable]
            raise LiftCodegenError(f"the result cannot overwrite {self.in_place!r}: it is not an input array of the "
                                   f"program (those are {', '.join(arrays) or 'none'})")
        if len(output_types(t)) != 1 or (element_type(t), element_count(t)) != (mem.elem, mem.size):
            raise LiftCodegenError(f"the result cannot overwrite input {mem.name}: the result has type {t}, "
                                   f"{mem.name} holds {mem.size} elements of {mem.elem}")
        self.in_place_mem = mem
        self.watches.append((mem, self.sites))
        outputs.append(mem)
        return V.MemView(mem, t)

    def check_storable(self, t: Type, what: str) -> None:
        if not is_storable(t):
            raise LiftCodegenError(f"{what} has type {t}, which has no flat memory layout")

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self.names)}"

    # --- emission helpers ------------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def record(self, access: V.Access, write: bool = False) -> None:
        if self.kernel is None:
            return
        if isinstance(access, V.MemAccess):
            if access.mem.kind in (INPUT, OUTPUT, TEMPORARY):
                self.kernel.memories[access.mem.name] = access.mem
            self.site(access.mem, write, access.index, access.width)
        for part in getattr(access, "parts", ()) or ():
            self.record(part, write)
        if isinstance(access, V.GuardedAccess):
            self.record(access.inner, write)

    def site(self, mem: Memory, write: bool, index: Optional[ArithExpr], width: int = 1) -> None:
        """Record an access to `mem` where it is watched: `self.watches` pairs a memory with the list of its
        `Site`s (the input the result overwrites, a fold's array accumulator during one step)."""
        for watched, sites in self.watches:
            if watched is mem:
                sites.append(Site(len(self.kernels), write, index, width, len(self.scope)))

    def mark(self) -> tuple:
        """The state of emission that `rewind` goes back to: the code, memories and sites so far."""
        return (len(self.lines), len(self.temporaries), len(self.kernel.locals), dict(self.kernel.memories),
                [(sites, len(sites)) for _, sites in self.watches])

    def rewind(self, mark: tuple) -> None:
        """Take back what was emitted since `mark` (user functions declared meanwhile stay, unused)."""
        lines, temporaries, local_mems, memories, watched = mark
        del self.lines[lines:], self.temporaries[temporaries:], self.kernel.locals[local_mems:]
        self.kernel.memories = memories
        for sites, n in watched:
            del sites[n:]

    def lets(self, lets: tuple) -> None:
        for var, text in dict.fromkeys(lets):
            self.line(f"int {var.name} = {text};")

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
            self.line(f"{c_type_name(out.type)} {name} = {value};")
            for k in range(len(out.type.elems)):
                self.store(out.get(k), f"{name}.{tuple_field(k)}")
            return
        statement, lets = V.write(out, value)
        self.lets(lets)
        self.record(out.access(()), write=True)
        self.line(statement)

    # --- expressions ---------------------------------------------------------------------------------------

    def emit(self, e: Expr, out: Optional[V.View], path: str) -> V.View:
        """Emit the code of `e`; its value is returned as a view, stored into `out` when one is given."""
        if isinstance(e, Param):
            return self.deliver(self.env[e.name], out, path)
        if isinstance(e, Literal) and isinstance(e.t, ArrayType):
            return self.fill(e, out, path)
        if isinstance(e, Literal):
            return self.deliver(V.ValueView(c_literal(e), e.t), out, path)
        if isinstance(e, FunCall):
            f = e.f
            if _is_tuple_of_arrays(e):
                shared = self.share(e, out, path) if out is not None and self.kernel is not None else ()
                parts = tuple(self.emit(a, None if out is None else out.get(k), f"{path}.args{k}")
                              for k, a in enumerate(e.args))
                for c in shared:
                    del self.shared[c]
                    self.shared_values.pop(c, None)
                return out if out is not None else V.TupleView(parts, e.t)
            if P.is_view(f) or (isinstance(f, (P.Id, P.Tuple)) and isinstance(e.t, ArrayType)):
                return self.layout(e, out, path)
            if self.kernel is None and not isinstance(f, Lambda):
                return self.kernel_call(e, out, path)
            if e in self.shared:
                return self.shared_call(e, path)
            args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
            if out is not None and _has_holes(out):
                out = self.complete(out, self.default_space(), path)
            return self.call(f, args, e.t, out, f"{path}.f")
        raise LiftCodegenError(f"cannot generate code for {e!r} (at {path})")

    def deliver(self, view: V.View, out: Optional[V.View], path: str) -> V.View:
        """`view` itself, or copied into `out` when the consumer asked for the value there."""
        if out is None:
            return view
        if isinstance(view.type, ArrayType):
            raise LiftCodegenError(
                f"the array at {path} must be written by a map to reach its destination (add map(id))")
        self.store(out, self.read(view))
        return out

    def fill(self, lit: Literal, out: Optional[V.View], path: str) -> V.View:
        """An array literal: its value stored in every element of `out` (new memory where none is given)."""
        if out is None:
            out = self.allocate(lit.t, self.default_space(), path)
        value = c_literal(Literal(lit.value, element_type(lit.t)))

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
        inverse = self.inverse(e, out)
        args = [self.emit(a, inverse, f"{path}.args{i}") for i, a in enumerate(e.args)]
        view = self.view_of(f, args, e)
        if out is not None and inverse is None:
            raise LiftCodegenError(
                f"the result of {paper(f)} at {path} cannot be written in place: "
                "compute it with a map into memory first (for example map(id))")
        return out if out is not None else view

    def inverse(self, e: FunCall, out: Optional[V.View]) -> Optional[V.View]:
        """Where the argument of the layout call `e` goes so that `e` lands in `out` (None: nowhere in place).

        `get-i` pushes `out` into component `i` of its tuple at the top level, leaving the others open
        (`None` parts, filled with temporaries where the tuple is computed).
        """
        if out is None or len(e.args) != 1:
            return None
        f, arg_type = e.f, e.args[0].t
        if isinstance(f, P.Split):
            return V.JoinView(out, f.n, arg_type)
        if isinstance(f, P.Join):
            return V.SplitView(out, arg_type.elem.length, arg_type)
        if isinstance(f, P.AsVector):
            return V.AsScalarView(out, f.n, arg_type)
        if isinstance(f, P.AsScalar):
            return V.AsVectorView(out, element_type(arg_type).width, arg_type)
        if isinstance(f, P.Transpose):
            return V.TransposeView(out, arg_type)
        if isinstance(f, P.Id):
            return out
        if isinstance(f, P.Unzip):
            return V.TupleView(tuple(out.get(k) for k in range(len(arg_type.elem.elems))), arg_type)
        if isinstance(f, P.Get) and isinstance(arg_type, TupleType) and (self.kernel is None or _computes(e.args[0])):
            return V.TupleView(tuple(out if k == f.i else None for k in range(len(arg_type.elems))), arg_type)
        return None

    def view_of(self, f: FunDecl, args: list, e: FunCall) -> V.View:
        t = e.t
        a = args[0]
        if isinstance(f, P.Split):
            return V.SplitView(a, f.n, t)
        if isinstance(f, P.Join):
            return V.JoinView(a, a.type.elem.length, t)
        if isinstance(f, P.Transpose):
            return V.TransposeView(a, t)
        if isinstance(f, P.ReorderStride):
            return V.ReorderStrideView(a, f.s, a.type.length, t)
        if isinstance(f, P.AsVector):
            return V.AsVectorView(a, f.n, t)
        if isinstance(f, P.AsScalar):
            return V.AsScalarView(a, element_type(a.type).width, t)
        if isinstance(f, (P.Zip, P.Tuple)):
            return V.TupleView(tuple(args), t)
        if isinstance(f, P.Unzip):
            return V.TupleView(tuple(a.get(k) for k in range(len(t.elems))), t)
        if isinstance(f, P.Get):
            return a.get(f.i)
        if isinstance(f, P.Slide):
            return V.SlideView(a, f.step, t)
        if isinstance(f, P.Pad):
            boundary = f.boundary if isinstance(f.boundary, str) else c_literal(f.boundary)
            return V.PadView(a, f.left, a.type.length, boundary, t)
        if isinstance(f, P.Id):
            return a
        raise LiftCodegenError(f"no view for {paper(f)}")

    # --- kernels ---------------------------------------------------------------------------------------------

    def plan(self, e: Expr, out: Optional[V.View], path: str) -> None:
        """Before any code: record the destinations the outputs reach top-level computations at.

        It follows what `emit` does outside every kernel (tuples of arrays, layout patterns and their
        inverses), so that a computation occurring several times is computed once, into every
        destination pushed to it, whichever occurrence comes first.
        """
        for c, dest, where in self.destinations(e, out, path):
            self.planned[c] = _merge(self.planned.get(c), dest, where)

    def destinations(self, e: Expr, out: Optional[V.View], path: str):
        """`(computation, destination, where)` for every computation the destination `out` of `e` reaches
        through tuples of arrays, layout patterns and their inverses."""
        if out is None or not isinstance(e, FunCall):
            return
        f = e.f
        if _is_tuple_of_arrays(e):
            for k, a in enumerate(e.args):
                yield from self.destinations(a, out.get(k), f"{path}.args{k}")
        elif P.is_view(f) or (isinstance(f, (P.Id, P.Tuple)) and isinstance(e.t, ArrayType)):
            yield from self.destinations(e.args[0], self.inverse(e, out), f"{path}.args0")
        elif isinstance(f, Lambda):
            yield from self.destinations(f.body, out, f"{path}.f.body")
        else:
            yield e, out, f"{paper(f)} at {path}"

    def share(self, e: FunCall, out: V.View, path: str) -> list:
        """Inside a kernel, before the components of the tuple of arrays `e`: a computation that occurs in
        several components (`tuple(get-0(m), join(get-1(m)))`, reached through arguments) is computed once,
        into the destinations they push to it together. The computations shared, for the tuple to forget
        after."""
        found: dict = {}
        for c, dest, where in self.destinations(e, out, path):
            found.setdefault(c, []).append((dest, where))
        added = []
        for c, n in _occurrences(e.args).items():
            if n < 2 or c in self.shared:
                continue
            merged = None
            try:
                for dest, where in found.get(c, ()):
                    merged = _merge(merged, dest, where)
            except LiftCodegenError:
                continue
            self.shared[c] = merged
            added.append(c)
        return added

    def shared_call(self, e: FunCall, path: str) -> V.View:
        """A computation `share` found: computed the first time it is met, into its merged destination."""
        if e not in self.shared_values:
            out = self.shared[e]
            out = None if out is None else self.complete(out, self.default_space(), path)
            args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
            self.shared_values[e] = self.call(e.f, args, e.t, out, f"{path}.f")
        return self.shared_values[e]

    def complete(self, out: Optional[V.View], space: str, path: str) -> V.View:
        """`out` with its open tuple components (`None`) given new memory in `space`."""
        if not isinstance(out, V.TupleView):
            return out
        parts = tuple(self.allocate(V.component_type(out.type, k), space, path) if p is None
                      else self.complete(p, space, path) for k, p in enumerate(out.parts))
        return V.TupleView(parts, out.type)

    def kernel_call(self, e: FunCall, out: Optional[V.View], path: str) -> V.View:
        """A computation outside every map: one kernel of its own, after the kernels of its inputs.

        It runs once however often it occurs, into the destinations `plan` found for it.
        """
        if e in self.computed:
            return self.computed[e]
        args = [self.emit(a, None, f"{path}.args{i}") for i, a in enumerate(e.args)]
        out = self.planned.get(e, out)
        if out is None:
            out = self.allocate(e.t, "global", path)
        out = self.complete(out, "global", path)
        index = len(self.kernels)
        launch = self.launches.get(index) or derive_launch(e)
        self.kernel = Kernel(f"{self.name}_k{index}", launch)
        self.lines, self.depth = self.kernel.lines, 1
        try:
            if derive_launch(e) is SEQUENTIAL:
                self.scope.append(("seq-kernel", 0, None, None))
            result = self.call(e.f, args, e.t, out, f"{path}.f")
        finally:
            self.scope = []
        self.kernels.append(self.kernel)
        self.kernel = None
        self.computed[e] = result
        return result

    # --- functions -------------------------------------------------------------------------------------------

    def call(self, f: FunDecl, args: list, t: Type, out: Optional[V.View], path: str) -> V.View:
        if f.arity > 1 and len(args) == 1 and isinstance(args[0].type, TupleType):
            args = [args[0].get(k) for k in range(f.arity)]
        if P.is_high_level(f):
            raise LiftCodegenError(
                f"{paper(f)} at {path} is a high-level pattern: lower it first (for example map -> map-global, "
                "reduce -> reduce-seq, reorder -> id)")
        method = getattr(self, "call_" + type(f).__name__, None)
        if method is None:
            raise LiftCodegenError(f"the code generator has no rule for {type(f).__name__} (at {path})")
        return method(f, args, t, out, path)

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
        self.line(f"{c_type_name(t)} {name} = {text};")
        return V.ValueView(name, t)

    def call_UserFun(self, f: UserFun, args: list, t: Type, out, path: str, width: int = 0) -> V.View:
        name = self.userfuns.declare(f, width)
        values = []
        for a, want in zip(args, f.in_types):
            if isinstance(want, ArrayType):
                mem = a.memory
                if mem is None or mem.space != "global":
                    raise LiftCodegenError(f"user function {f.name} at {path}: its array argument must be a "
                                           "global buffer (an input or a toGlobal result)")
                if self.kernel is not None and mem.kind in (INPUT, OUTPUT, TEMPORARY):
                    self.kernel.memories[mem.name] = mem
                self.site(mem, False, None)
                values.append(mem.name)
            else:
                text = self.read(a)
                if width and isinstance(a.type, ScalarType):
                    text = f"({c_type_name(VectorType(a.type, width))})({text})"
                values.append(text)
        return self.value(f"{name}({', '.join(values)})", t, out)

    def call_Vectorize(self, f: P.Vectorize, args: list, t: Type, out, path: str) -> V.View:
        if isinstance(f.f, P.Id):
            return self.value(self.read(args[0]), t, out)
        return self.call_UserFun(f.f, args, t, out, path, width=f.n)

    def call_Id(self, f: P.Id, args: list, t: Type, out, path: str) -> V.View:
        return self.value(self.read(args[0]), t, out)

    def call_Tuple(self, f: P.Tuple, args: list, t: Type, out, path: str) -> V.View:
        return self.value(f"({c_type_name(t)}){{{', '.join(self.read(a) for a in args)}}}", t, out)

    # --- maps ---------------------------------------------------------------------------------------------

    def check_nesting(self, f: FunDecl, path: str) -> None:
        kinds = [(k, d) for k, d, _, _ in self.scope]
        sequential = any(k in ("seq", "reduce") for k, _ in kinds)
        where = f"{paper(f)} at {path}"
        if isinstance(f, P.MapWrg):
            if any(k != "wrg" or d == f.dim for k, d in kinds):
                raise LiftCodegenError(f"{where}: map-workgroup must be outermost (only inside map-workgroups "
                                       "of other dimensions)")
        elif isinstance(f, P.MapGlb):
            if any(k != "glb" or d == f.dim for k, d in kinds):
                raise LiftCodegenError(f"{where}: map-global must be outermost (only inside map-globals of "
                                       "other dimensions)")
        elif isinstance(f, P.MapLcl):
            if not any(k == "wrg" for k, _ in kinds):
                raise LiftCodegenError(f"{where}: map-local must be inside a map-workgroup")
            if sequential or any(k == "lcl" and d == f.dim for k, d in kinds):
                raise LiftCodegenError(f"{where}: map-local cannot be inside a sequential pattern or a "
                                       "map-local of the same dimension")

    def loop(self, kind: str, dim: int, n: ArithExpr, body, label: str) -> None:
        """A loop over `n` iterations spread over `kind` ids (Figure 2(c)); `body(i)` emits one iteration.

        Where the launch gives exactly `n` ids the loop is straight-line code; where it gives more, a guard.
        """
        i = Var(self.fresh({"wrg": "wg", "lcl": "l", "glb": "g", "seq": "i"}[kind]), 0, n)
        index = Cst(0) if n == Cst(1) else i
        if kind == "seq" and n == Cst(1):
            header, close = f"{{ /* {label}: one iteration */", "}"
        elif kind == "seq":
            header, close = f"for (int {i.name} = 0; {i.name} < {c_arith(n)}; {i.name} += 1) {{", "}"
        else:
            get_id, get_size = _ID_NAMES[kind]
            size, first = self.launch_size(kind, dim), f"{get_id}({dim})"
            if size is not None and size == n:
                header, close = f"{{ int {i.name} = {first}; /* {label} */", "}"
            elif size is not None and prove_lt(n, size):
                header, close = f"{{ int {i.name} = {first}; if ({i.name} < {c_arith(n)}) {{ /* {label} */", "} }"
            else:
                header = (f"for (int {i.name} = {first}; {i.name} < {c_arith(n)}; "
                          f"{i.name} += {get_size}({dim})) {{ /* {label} */")
                close = "}"
        self.line(header)
        self.depth += 1
        self.scope.append((kind, dim, index, n))
        try:
            body(index)
        finally:
            self.scope.pop()
        self.depth -= 1
        self.line(close)

    def launch_size(self, kind: str, dim: int) -> Optional[ArithExpr]:
        launch = self.kernel.launch
        if kind == "glb":
            return launch.global_size[dim] if dim < len(launch.global_size) else None
        if launch.local_size is None or dim >= len(launch.local_size):
            return None
        if kind == "lcl":
            return launch.local_size[dim]
        return launch.global_size[dim] / launch.local_size[dim]

    def map(self, f: P.AbstractMap, args: list, t: Type, out, path: str) -> V.View:
        self.check_nesting(f, path)
        (a,) = args
        allocated = out is None
        if out is None:
            out = self.allocate(t, self.default_space(), path)
        kind = f.thread_level
        n = a.type.length

        def body(i):
            self.call(f.f, [a.index(i)], t.elem, out.index(i), f"{path}.f")

        self.loop(kind, getattr(f, "dim", 0), n, body, f.paper)
        if isinstance(f, P.MapLcl) and allocated and self.at_workgroup_level():
            self.barrier(out)
        return out

    call_MapWrg = call_MapLcl = call_MapGlb = call_MapSeq = map

    def at_workgroup_level(self) -> bool:
        return any(k == "wrg" for k, *_ in self.scope) and not any(k in ("lcl", "seq", "reduce")
                                                                    for k, *_ in self.scope)

    def barrier(self, out: V.View) -> None:
        space = _space_of(out)
        fence = "CLK_LOCAL_MEM_FENCE" if space == "local" else "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"
        self.line(f"barrier({fence});")

    # --- reductions ---------------------------------------------------------------------------------------

    def call_ReduceSeq(self, f: P.ReduceSeq, args: list, t: Type, out, path: str) -> V.View:
        if isinstance(f.init.t, ArrayType):
            return self.reduce_arrays(f, args, t, out, path)
        (a,) = args
        acc_t = f.init.t
        acc_view = self.private_accumulator(f, path)
        acc = acc_view.mem

        def body(i):
            self.call(f.f, [acc_view, a.index(i)], acc_t, acc_view, f"{path}.f")

        self.fold_loop(a.type.length, body, "reduce-seq")
        result = V.MemView(acc, ArrayType(acc_t, Cst(1)))
        if out is None:
            return result
        self.store(out.index(Cst(0)), acc.name)
        return out

    def private_accumulator(self, f: P.Fold, path: str) -> V.MemView:
        """A fold's scalar accumulator: a private variable holding its initial value."""
        mem = Memory(self.fresh("acc"), PRIVATE, f.init.t, Cst(1), PRIVATE, scalar_variable=True)
        self.line(f"{c_type_name(f.init.t)} {mem.name} = {self.read(self.emit(f.init, None, f'{path}.init'))};")
        return V.MemView(mem, f.init.t)

    def fold_loop(self, n: ArithExpr, body, label: str) -> None:
        """The sequential loop of a fold; what it contains nests as inside a sequential pattern."""
        self.scope.append(("reduce", 0, None, None))
        try:
            self.loop("seq", 0, n, body, label)
        finally:
            self.scope.pop()

    def reduce_arrays(self, f: P.ReduceSeq, args: list, t: Type, out, path: str) -> V.View:
        """`reduce-seq` with an array accumulator: it lives where the result goes, initialised there and
        updated by each step of `f` (`fold_step`: in place where that is sound)."""
        (a,) = args
        if out is None:
            out = self.allocate(t, self.default_space(), path)
        acc = out.index(Cst(0))
        self.emit(f.init, acc, f"{path}.init")

        def body(i):
            self.fold_step(f, acc, a.index(i), f.init.t, lambda new: new, f"{path}.f")

        self.fold_loop(a.type.length, body, "reduce-seq")
        return out

    def fold_step(self, f: P.Fold, acc: V.View, x: V.View, t: Type, out, path: str) -> None:
        """One step `f(acc, x)` of a fold with the array accumulator `acc`, stored into `out(new)`, the
        step's destination when its new accumulator goes to `new`.

        The new accumulator is first written over the old one. That is sound when, within the step, the
        accumulator is written at one site and read at most at one, at the same element
        (`lift.opencl_gen.in_place.misalignment`): every fold the rewrite rules build,
        `map(add)(zip(acc, row))`, is so. A step that reads other elements than it writes (a reordered
        accumulator, `acc[0]` in every element, the whole array handed to a user function) would read
        elements it has already overwritten: its code is taken back and emitted again into a fresh buffer,
        copied over the accumulator after the step.
        """
        watches = [(m, []) for m in _memories(acc)]
        mark = self.mark()
        self.watches += watches
        try:
            self.call(f.f, [acc, x], t, out(acc), path)
        finally:
            del self.watches[len(self.watches) - len(watches):]
        if all(misalignment(m.name, sites) is None for m, sites in watches):
            return
        self.rewind(mark)
        new = self.allocate(f.init.t, _space_of(acc), path)
        self.call(f.f, [acc, x], t, out(new), path)
        self.copy(new, acc)

    def copy(self, src: V.View, dst: V.View) -> None:
        """`dst := src`, element by element in sequential loops."""
        if isinstance(dst.type, ArrayType):
            self.loop("seq", 0, dst.type.length, lambda i: self.copy(src.index(i), dst.index(i)), "copy")
        else:
            self.store(dst, self.read(src))

    def call_MapAccumSeq(self, f: P.MapAccumSeq, args: list, t: Type, out, path: str) -> V.View:
        """`map-accum-seq(f, z)`: one loop; step `i` stores its element at `i` of the first component of `out`
        and its accumulator over the last one. An array accumulator lives where the result's goes (as in
        `reduce_arrays`, updated by `fold_step`), a scalar one in a private variable, stored after the loop."""
        (a,) = args
        if out is None:
            out = self.allocate(t, self.default_space(), path)
        elems, result = out.get(0), out.get(1)
        acc_t = f.init.t
        if isinstance(acc_t, ArrayType):
            acc = result.index(Cst(0))
            self.emit(f.init, acc, f"{path}.init")
        else:
            acc = self.private_accumulator(f, path)
        step_t = TupleType(t.elems[0].elem, acc_t)

        def body(i):
            if isinstance(acc_t, ArrayType):
                self.fold_step(f, acc, a.index(i), step_t, lambda new: V.TupleView((elems.index(i), new), step_t),
                               f"{path}.f")
            else:
                self.call(f.f, [acc, a.index(i)], step_t, V.TupleView((elems.index(i), acc), step_t), f"{path}.f")

        self.fold_loop(a.type.length, body, "map-accum-seq")
        if not isinstance(acc_t, ArrayType):
            self.store(result.index(Cst(0)), self.read(acc))
        return out

    # --- memory ---------------------------------------------------------------------------------------------

    def default_space(self) -> str:
        """Where a result goes when the expression does not say: private inside a work-item, else global."""
        threaded = any(k in ("lcl", "glb", "seq", "reduce", "seq-kernel") for k, *_ in self.scope)
        return PRIVATE if threaded else "global"

    def allocate(self, t: Type, space: str, path: str) -> V.View:
        """New memory for a value of `t` in `space`, one slice per concurrent work-item or work-group.

        A value with no flat layout (a tuple of arrays, or an array of them) gets one memory per component.
        """
        if not is_storable(t) and isinstance(element_type(t), TupleType):
            return V.TupleView(tuple(self.allocate(V.component_type(t, k), space, path)
                                     for k in range(len(element_type(t).elems))), t)
        self.check_storable(t, f"the result at {path}")
        replicate = {"global": ("wrg", "lcl", "glb"), "local": ("lcl",), PRIVATE: ()}[space]
        prefix = tuple((i, n) for k, _, i, n in self.scope if k in replicate)
        size = element_count(t)
        for _, n in prefix:
            size = size * n
        elem = element_type(t)
        name = self.fresh({"global": "tmp", "local": "lmem", PRIVATE: "pmem"}[space])
        if space == "global":
            mem = Memory(name, "global", elem, size, TEMPORARY)
            self.temporaries.append(mem)
        elif space == "local":
            mem = Memory(name, "local", elem, size, LOCAL)
            self.kernel.locals.append(mem)
        else:
            if not size.is_constant:
                raise LiftCodegenError(f"the private array at {path} has the symbolic size {size}: private "
                                       "memory needs a constant size (use toGlobal, or bind the sizes)")
            mem = Memory(name, PRIVATE, elem, size, PRIVATE)
            self.line(f"{c_type_name(elem)} {name}[{size.value}];")
        return V.MemView(mem, t, prefix)

    def address_space(self, f: P.AddressSpaceCast, args: list, t: Type, out, path: str) -> V.View:
        space = f.space
        if space == "local" and not any(k == "wrg" for k, *_ in self.scope):
            raise LiftCodegenError(f"{paper(f)} at {path}: local memory exists only inside a map-workgroup")
        if out is not None and _space_of(out) == space:
            return self.call(f.f, args, t, out, f"{path}.f")
        if out is not None:
            raise LiftCodegenError(
                f"{paper(f)} at {path} stores its result in {space} memory, but it is needed in "
                f"{_space_of(out)} memory: copy it there (for example toGlobal(map-local(id)))")
        target = self.allocate(t, space, path)
        inner = _unwrap_cast(f.f)
        self.call(f.f, args, t, target, f"{path}.f")
        if isinstance(inner, P.MapLcl) and self.at_workgroup_level():
            self.barrier(target)
        return target

    call_ToGlobal = call_ToLocal = call_ToPrivate = address_space

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
        other = self.allocate(ArrayType(in_t.elem, step_out), mem.space, path)
        ptr_t = f"{mem.space} {c_type_name(mem.elem)}*"
        src, dst = self.fresh("in"), self.fresh("out")
        self.line(f"{ptr_t} {src} = {mem.name};")
        self.line(f"{ptr_t} {dst} = {other.mem.name};")
        self.line(f"int {length.name} = {c_arith(in_t.length)};")
        it = self.fresh("it")
        self.line(f"for (int {it} = 0; {it} < {c_arith(f.n)}; {it} += 1) {{")
        self.depth += 1
        src_mem = Memory(src, mem.space, mem.elem, in_t.length, mem.kind)
        dst_mem = Memory(dst, mem.space, mem.elem, in_t.length, mem.kind)
        self.call(body_f, [V.MemView(src_mem, ArrayType(in_t.elem, length))], body_t,
                  V.MemView(dst_mem, body_t), f"{path}.f")
        if self.at_workgroup_level():
            self.barrier(V.MemView(src_mem, in_t))
        self.line(f"{{ {ptr_t} swap = {src}; {src} = {dst}; {dst} = swap; }}")
        self.line(f"{length.name} = {c_arith(length * p / q)};")
        self.depth -= 1
        self.line("}")
        result = V.MemView(Memory(src, mem.space, mem.elem, in_t.length, mem.kind), t)
        return self.deliver_array(result, out, path)

    def deliver_array(self, view: V.View, out, path: str) -> V.View:
        if out is not None:
            raise LiftCodegenError(f"the result at {path} must be copied to its destination by a map (map(id))")
        return view

    # --- rendering ------------------------------------------------------------------------------------------

    def render(self, free: tuple) -> str:
        for k in self.kernels:
            for m in k.params + k.locals:
                self.userfuns.require_type(m.elem)
        parts = ["// Generated by lift: " + paper(self.typed.expr).replace("\n", " ")]
        parts += self.userfuns.definitions()
        for k in self.kernels:
            params = []
            for m in k.params:
                if m.scalar_variable:
                    params.append(f"const {c_type_name(m.elem)} {m.name}")
                else:
                    const = "const " if m.readonly else ""
                    restrict = " restrict" if m.readonly else ""
                    params.append(f"{const}global {c_type_name(m.elem)}*{restrict} {m.name}")
            params += [f"const int {s}" for s in free]
            body = [f"    local {c_type_name(m.elem)} {m.name}[{_const_size(m, k)}];" for m in k.locals]
            parts.append(f"kernel void {k.name}({', '.join(params)}) {{\n" + "\n".join(body + k.lines) + "\n}")
        return "\n\n".join(parts) + "\n"


def _const_size(m: Memory, k: Kernel) -> int:
    if not m.size.is_constant:
        raise LiftCodegenError(f"the local memory {m.name} of kernel {k.name} has the symbolic size {m.size}: "
                               "bind the sizes (local memory needs a constant size)")
    return m.size.value


def _space_of(view: V.View) -> str:
    if isinstance(view, V.TupleView):
        spaces = {_space_of(p) for p in view.parts if p is not None}
        return spaces.pop() if len(spaces) == 1 else "private"
    while not isinstance(view, V.MemView):
        view = getattr(view, "inner", None) or getattr(view, "parent", None)
        if view is None:
            return "private"
    return view.mem.space


def _memories(view: V.View) -> list:
    """The memories holding the elements of `view` (one per component of an array of tuples held apart).

    A view maps all its elements into the same memories, so its first element tells them."""
    t, depth = view.type, 0
    while isinstance(t, ArrayType):
        t, depth = t.elem, depth + 1
    try:
        access = view.access((Cst(0),) * depth)
    except LiftCodegenError:
        if not isinstance(t, TupleType):
            raise
        return list(dict.fromkeys(m for k in range(len(t.elems)) for m in _memories(view.get(k))))
    return list(dict.fromkeys(_accessed(access)))


def _accessed(access: V.Access) -> list:
    """The memories an access reads or writes."""
    inner = (access.inner,) if isinstance(access, V.GuardedAccess) else ()
    own = [access.mem] if isinstance(access, V.MemAccess) else []
    return own + [m for a in (getattr(access, "parts", ()) or ()) + inner for m in _accessed(a)]


def _is_tuple_of_arrays(e: FunCall) -> bool:
    """A `tuple` call with an array component: computed component by component, never as one value."""
    return isinstance(e.f, P.Tuple) and isinstance(e.t, TupleType) and not is_storable(e.t)


def _occurrences(exprs) -> dict:
    """How often each computation (`_computes`) occurs in `exprs`, reached through arguments only."""
    counts: dict = {}
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, FunCall):
            if _computes(e):
                counts[e] = counts.get(e, 0) + 1
            stack.extend(e.args)
    return counts


def _computes(e: Expr) -> bool:
    """Whether `e` is a call that computes its value (not a parameter, nor a view of one)."""
    return isinstance(e, FunCall) and not (P.is_view(e.f) or isinstance(e.f, (P.Id, P.Tuple)))


def _has_holes(view: V.View) -> bool:
    return isinstance(view, V.TupleView) and any(p is None or _has_holes(p) for p in view.parts)


def _is_whole(view: V.View) -> bool:
    """Whether a tuple-typed view is one memory element (else its components are stored apart)."""
    try:
        view.access(())
    except LiftCodegenError:
        return False
    return True


def _merge(a: Optional[V.View], b: V.View, where: str) -> V.View:
    """Two destinations of one computation: the components of open tuples combine; anything else clashes."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, V.TupleView) and isinstance(b, V.TupleView):
        return V.TupleView(tuple(_merge(p, q, where) for p, q in zip(a.parts, b.parts)), a.type)
    raise LiftCodegenError(f"the result of {where} is needed in two places of the output: copy it to the "
                           "second with a map (map(id))")


def _inline_top_level_lets(e: Expr) -> Expr:
    """`e` with each lambda applied outside every map replaced by its body on the arguments (β-reduction).

    A top-level `(λt. ... t ... t ...)(x)` then means what writing `x` twice means: the generator
    computes `x` once either way. A lambda whose parameters are also used inside some function (inside
    a kernel) stays: its arguments are computed first and passed in memory.
    """
    if not isinstance(e, FunCall):
        return e
    args = tuple(_inline_top_level_lets(a) for a in e.args)
    f = e.f
    if (isinstance(f, Lambda) and len(args) == len(f.params)
            and all(count_uses(f.body, p) == _top_level_uses(f.body, p) for p in f.params)):
        return _inline_top_level_lets(substitute(f.body, dict(zip(f.params, args))))
    if all(a is b for a, b in zip(args, e.args)):
        return e
    return FunCall(f, args)


def _top_level_uses(e: Expr, p: Param) -> int:
    """How often `p` occurs in `e` outside every function (as an argument of calls only)."""
    if isinstance(e, Param):
        return int(e == p)
    if isinstance(e, FunCall):
        return sum(_top_level_uses(a, p) for a in e.args)
    return 0


def _unwrap_cast(f: FunDecl) -> FunDecl:
    while isinstance(f, P.AddressSpaceCast):
        f = f.f
    return f


def _type_vars(t: Type) -> set:
    out = set()
    while isinstance(t, ArrayType):
        out |= set(t.length.free_vars())
        t = t.elem
    return out
