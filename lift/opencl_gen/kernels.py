"""The OpenCL C generator: a lowered expression becomes kernels, deciding nothing (paper Section 3).

Every choice was made by the rewrite rules and is in the expression. Code generation is a pipeline of
named passes (`lift.opencl_gen.pipeline`), each a function from one `Compilation` to the next:

1. `inline-lets` (`lift.opencl_gen.inline_lets`): lambdas applied outside every map are β-reduced;
2. `check-lowered` (`lift.opencl_gen.lowered`): OpenCL-level patterns only, each map where the thread
   hierarchy allows it (`lift.rules.hierarchy`, the check the rules use);
3. `infer-address-spaces` (`lift.opencl_gen.space_inference`): every result that needs new memory and has
   no cast gets the one the memory model gives (private inside a work-item, else global);
4. `choose-index-width` (`lift.opencl_gen.index_width`): `int` indices, counters and size arguments, or
   `long` where an array or a size may exceed 2^31 - 1;
5. `allocate-io`: the memories of the inputs and outputs (one per component of a tuple of arrays, or
   the input the result overwrites, `lift.opencl_gen.in_place`);
6. `plan-kernels` (`lift.opencl_gen.destinations`): the destinations the outputs reach top-level
   computations at, each computed once, in a kernel of its own;
7. `allocate-memory` (`lift.opencl_gen.allocation`): the temporaries, local and private memories of the
   results that reach no destination, where the casts say, sized for the work-items that each need one;
8. `emit` (`lift.opencl_gen.emit`): kernels of C statements (`lift.opencl_gen.c_ast`);
9. `place-barriers` (`lift.opencl_gen.barriers`): barriers where work-items hand memory to each other;
10. `check-in-place`: a result written over an input keeps the program's meaning;
11. `render` (`lift.opencl_gen.render`): the OpenCL C source.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from lift.errors import LiftCodegenError, LiftError
from lift.ir import patterns as P
from lift.ir.c_names import check_c_name
from lift.ir.names import program_names
from lift.ir.nodes import Expr, FunCall, Lambda, bind_sizes_in
from lift.ir.source_location import locate
from lift.ir.typecheck import TypedProgram, infer
from lift.opencl_gen import c_ast as C
from lift.opencl_gen import views as V
from lift.opencl_gen.allocation import allocate_memory
from lift.opencl_gen.barriers import place_barriers
from lift.opencl_gen.destinations import plan_destinations
from lift.opencl_gen.emit import Emitter, check_storable
from lift.opencl_gen.in_place import check_in_place
from lift.opencl_gen.index_width import INT, array_lengths, index_type
from lift.opencl_gen.inline_lets import inline_lets
from lift.opencl_gen.launch import Launch
from lift.opencl_gen.lowered import check_lowered
from lift.opencl_gen.memory import INPUT, OUTPUT, PRIVATE, Memory, element_count, output_types
from lift.opencl_gen.pipeline import Pass, Pipeline
from lift.opencl_gen.program import GeneratedProgram, Kernel
from lift.opencl_gen.render import render_program
from lift.opencl_gen.space_inference import infer_address_spaces
from lift.opencl_gen.userfuns import UserFunctions
from lift.types.arith import Cst
from lift.types.types import ArrayType, TupleType, Type, bind_type, element_type

__all__ = ["Compilation", "GeneratedProgram", "Kernel", "PIPELINE", "generate", "specialise"]


@dataclass(frozen=True)
class Compilation:
    """The state the passes hand on: the typed program and what the passes have made of it so far."""

    name: str
    typed: TypedProgram
    sizes: dict
    launches: dict
    in_place: Optional[str]
    body: Optional[Expr] = None
    inputs: tuple = ()
    outputs: tuple = ()
    out: Optional[V.View] = None
    planned: Optional[dict] = None
    allocations: Optional[dict] = None
    kernels: Optional[tuple] = None
    temporaries: tuple = ()
    sites: tuple = ()
    userfuns: Optional[UserFunctions] = None
    source: Optional[str] = None
    index: str = INT

    @property
    def free_sizes(self) -> tuple:
        lam = self.typed.expr
        return tuple(sorted({v.name for p in lam.params for v in _type_vars(p.t)} - set(self.sizes)))


def generate(program: Lambda, name: str = "lift", sizes: Optional[Mapping[str, int]] = None,
             launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
             debug: Optional[bool] = None) -> GeneratedProgram:
    """Generate the kernels of a lowered program; `sizes` become constants, `launch` overrides kernel launches,
    `in_place` names an input array that the result overwrites (`lift.opencl_gen.in_place`), `debug` validates
    the program after every pass (`lift.opencl_gen.pipeline`)."""
    if not name.isidentifier():
        raise LiftCodegenError(f"the kernel name {name!r} is not a C identifier")
    try:
        typed = specialise(program, sizes or {})
        with program_names(program):  # the names views make (`pad_n`) follow the program, not the process
            c = PIPELINE.run(Compilation(name, typed, dict(sizes or {}), dict(launch or {}), in_place), debug)
    except LiftError as e:
        raise locate(e, program)
    return GeneratedProgram(name, c.source, list(c.kernels), list(c.inputs), list(c.outputs),
                            list(c.temporaries), typed, c.sizes, c.free_sizes, c.index)


def specialise(program: Lambda, sizes: Mapping[str, int]) -> TypedProgram:
    """The program typed with bound sizes replaced by constants, so that indices simplify."""
    base = infer(program)
    if not sizes:
        return base
    types = tuple(bind_type(t, sizes) for t in base.param_types)
    return infer(bind_sizes_in(program, dict(sizes)), types)


# --- passes ------------------------------------------------------------------------------------------------


def _inline_lets(c: Compilation) -> Compilation:
    lam = c.typed.expr
    body = inline_lets(lam.body)
    if body is not lam.body:
        body = infer(Lambda(lam.params, body)).expr.body
    return replace(c, body=body)


def _check_lowered(c: Compilation) -> Compilation:
    return replace(c, body=check_lowered(c.body))


def _infer_address_spaces(c: Compilation) -> Compilation:
    return replace(c, body=infer_address_spaces(c.body))


def _choose_index_width(c: Compilation) -> Compilation:
    lam = Lambda(c.typed.expr.params, c.body)
    return replace(c, index=index_type(array_lengths(lam), c.sizes, f"program {c.name}"))


def _allocate_io(c: Compilation) -> Compilation:
    inputs = []
    for name in [p.name for p in c.typed.expr.params] + list(c.free_sizes):
        check_c_name(name, lambda message: LiftCodegenError(f"program parameter or size {name!r}: {message}"),
                     generated=True)
    for p in c.typed.expr.params:
        if isinstance(p.t, ArrayType):
            check_storable(p.t, f"input {p.name}")
            inputs.append(Memory(p.name, "global", element_type(p.t), element_count(p.t), INPUT,
                                 readonly=p.name != c.in_place))
        else:
            inputs.append(Memory(p.name, PRIVATE, p.t, Cst(1), INPUT, scalar_variable=True, readonly=True))
    outputs: list = []
    out = _output_view(c.typed.type, outputs, inputs, c.in_place)
    return replace(c, inputs=tuple(inputs), outputs=tuple(outputs), out=out)


def _plan_kernels(c: Compilation) -> Compilation:
    return replace(c, planned=plan_destinations(c.body, c.out))


def _allocate_memory(c: Compilation) -> Compilation:
    return replace(c, allocations=allocate_memory(c.body, c.out, c.planned))


def _emit(c: Compilation) -> Compilation:
    watched = [m for m in c.inputs if c.in_place is not None and m.name == c.in_place]
    e = Emitter(c.name, c.launches, c.allocations, watched, c.index)
    e.planned = dict(c.planned)
    for p, mem in zip(c.typed.expr.params, c.inputs):
        e.env[p.name] = V.MemView(mem, p.t)
    e.emit(c.body, c.out, "body")
    kernels = tuple(replace(k, size_params=c.free_sizes) for k in e.kernels)
    return replace(c, kernels=kernels, temporaries=tuple(e.out.temporaries), sites=tuple(e.out.sites),
                   userfuns=e.userfuns)


def _place_barriers(c: Compilation) -> Compilation:
    return replace(c, kernels=tuple(replace(k, body=place_barriers(k.body)) for k in c.kernels))


def _check_in_place(c: Compilation) -> Compilation:
    if c.in_place is not None:
        (mem,) = [m for m in c.inputs if m.name == c.in_place]
        check_in_place(c.in_place, [s for m, s in c.sites if m is mem])
    return c


def _render(c: Compilation) -> Compilation:
    return replace(c, source=render_program(c.typed.expr, list(c.kernels), c.userfuns, c.free_sizes, c.index))


def validate(c: Compilation, after: str) -> None:
    """The invariants of a compilation state, as far as the passes have got (see `PIPELINE`)."""
    if after in ("inline-lets", "infer-address-spaces"):
        if infer(Lambda(c.typed.expr.params, c.body)).type != c.typed.type:
            raise LiftCodegenError(f"the program's type changed: {c.typed.type}")
    if after != "inline-lets" and c.body is not None:
        for n in c.body.subterms():
            if isinstance(n, P.Pattern) and P.is_high_level(n):
                raise LiftCodegenError(f"high-level pattern {n.paper} left")
    if c.out is not None and len(c.outputs) != len(output_types(c.typed.type)):
        raise LiftCodegenError(f"{len(c.outputs)} output memories for {len(output_types(c.typed.type))} outputs")
    if c.planned is not None:
        calls = set()
        stack = [c.body]
        while stack:
            n = stack.pop()
            if isinstance(n, FunCall):
                calls.add(n)
                stack.extend(n.args)
                if isinstance(n.f, Lambda):
                    stack.append(n.f.body)
        if any(e not in calls for e in c.planned):
            raise LiftCodegenError("a planned computation is not a top-level call of the program (outside every map)")
    if c.kernels is not None:
        known = set(map(id, c.inputs + c.outputs + c.temporaries))
        names = [k.name for k in c.kernels]
        if len(set(names)) != len(names):
            raise LiftCodegenError(f"kernel names repeat: {names}")
        for k in c.kernels:
            if any(id(m) not in known for m in k.buffers):
                raise LiftCodegenError(f"kernel {k.name} uses a memory the program does not have")
            if not all(isinstance(s, C.Stmt) for s in C.walk(k.body)):
                raise LiftCodegenError(f"kernel {k.name} has a body that is not C statements")
            declared = [s.name for s in C.walk(k.body) if isinstance(s, C.Decl)]
            if len(set(declared)) != len(declared):
                raise LiftCodegenError(f"kernel {k.name} declares a name twice")
    if c.source is not None and any(f"kernel void {k.name}(" not in c.source for k in c.kernels):
        raise LiftCodegenError("a kernel is missing from the source")


PIPELINE = Pipeline((
    Pass("inline-lets", _inline_lets),
    Pass("check-lowered", _check_lowered),
    Pass("infer-address-spaces", _infer_address_spaces),
    Pass("choose-index-width", _choose_index_width),
    Pass("allocate-io", _allocate_io),
    Pass("plan-kernels", _plan_kernels),
    Pass("allocate-memory", _allocate_memory),
    Pass("emit", _emit),
    Pass("place-barriers", _place_barriers),
    Pass("check-in-place", _check_in_place),
    Pass("render", _render),
), validate)


def _output_view(t: Type, outputs: list, inputs: list, in_place: Optional[str]) -> V.View:
    """The destination of the result: one output memory, or one per component of a tuple of arrays, or
    the input the result overwrites."""
    if in_place is not None:
        return _in_place_view(t, outputs, inputs, in_place)
    if len(output_types(t)) == 1:
        check_storable(t, "the result")
        mem = Memory("out", "global", element_type(t), element_count(t), OUTPUT)
        outputs.append(mem)
        return V.MemView(mem, t)

    def component(u: Type) -> V.View:
        if isinstance(u, TupleType) and len(output_types(u)) > 1:
            return V.TupleView(tuple(component(e) for e in u.elems), u)
        check_storable(u, f"component {len(outputs)} of the result")
        mem = Memory(f"out{len(outputs)}", "global", element_type(u), element_count(u), OUTPUT)
        outputs.append(mem)
        return V.MemView(mem, u)

    return component(t)


def _in_place_view(t: Type, outputs: list, inputs: list, in_place: str) -> V.View:
    mem = next((m for m in inputs if m.name == in_place), None)
    if mem is None or mem.scalar_variable:
        arrays = [m.name for m in inputs if not m.scalar_variable]
        raise LiftCodegenError(f"the result cannot overwrite {in_place!r}: it is not an input array of the "
                               f"program (those are {', '.join(arrays) or 'none'})")
    if len(output_types(t)) != 1 or (element_type(t), element_count(t)) != (mem.elem, mem.size):
        raise LiftCodegenError(f"the result cannot overwrite input {mem.name}: the result has type {t}, "
                               f"{mem.name} holds {mem.size} elements of {mem.elem}")
    outputs.append(mem)
    return V.MemView(mem, t)


def _type_vars(t: Type) -> set:
    out = set()
    while isinstance(t, ArrayType):
        out |= set(t.length.free_vars())
        t = t.elem
    return out
