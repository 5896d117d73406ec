"""Pass `check-lowered`: a program the generator can emit uses OpenCL-level patterns only, each OpenCL map
where the thread hierarchy allows it (`lift.rules.hierarchy.placement_error`, the check the rules use), each
host loop (`iterate-host`) a whole kernel of one computation.

It walks the expression as the emitter will (arguments, then the function applied to them; a pattern's
function inside the pattern, a fold's initial value outside it) and raises `LiftCodegenError` at the
first violation, naming the pattern and its place (`body.f.f`: the function of the pattern applied at
`body`).
"""

from __future__ import annotations

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda
from lift.ir.printer import paper
from lift.rules.hierarchy import PARALLEL_MAPS, placement_error
from lift.rules.iterate import one_kernel_step


def check_lowered(body: Expr) -> Expr:
    """`body` itself, after checking it (see the module docstring)."""
    _Check().expr(body, (), "body")
    return body


class _Check(Mapper):
    """Dispatch on the function applied: `map_<Pattern>(f, enclosing, path)`."""

    def expr(self, e: Expr, enclosing: tuple, path: str) -> None:
        if isinstance(e, FunCall):
            for i, a in enumerate(e.args):
                self.expr(a, enclosing, f"{path}.args{i}")
            self(e.f, enclosing, f"{path}.f")

    def map_Lambda(self, f: Lambda, enclosing: tuple, path: str) -> None:
        self.expr(f.body, enclosing, f"{path}.body")

    def map_UserFun(self, f: FunDecl, enclosing: tuple, path: str) -> None:
        pass

    def map_IterateHost(self, f: P.IterateHost, enclosing: tuple, path: str) -> None:
        """A host loop is a whole kernel: outside every map, of a step that is one kernel (`one_kernel_step`)."""
        if enclosing:
            raise LiftCodegenError(f"{paper(f)} at {path}: a host loop is a whole kernel; it cannot be inside "
                                   f"{paper(enclosing[-1])}")
        if not one_kernel_step(f):
            raise LiftCodegenError(f"{paper(f)} at {path}: the step must be one kernel, a computation of views of "
                                   "its input (unroll the iteration into kernels instead: iterate-decomposition, "
                                   "iterate-once)")
        self.map_Pattern(f, enclosing, path)

    def map_Pattern(self, f: P.Pattern, enclosing: tuple, path: str) -> None:
        if P.is_high_level(f):
            raise LiftCodegenError(
                f"{paper(f)} at {path} is a high-level pattern: lower it first (for example map -> map-global, "
                "reduce -> reduce-seq, reorder -> id)")
        if isinstance(f, PARALLEL_MAPS):
            reason = placement_error(type(f), f.dim, enclosing)
            if reason:
                raise LiftCodegenError(f"{paper(f)} at {path}: {reason}")
        if isinstance(f, P.Fold):
            self.expr(f.init, enclosing, f"{path}.init")
        inner = enclosing + (f,) if isinstance(f, (P.AbstractMap, P.MapSeqSlide, P.Fold)) else enclosing
        for name in f.funs:
            self(getattr(f, name), inner, f"{path}.{name}")
