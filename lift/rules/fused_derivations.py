"""Derivations of fused kernels: a group of calls, inlined into one expression, to one OpenCL-level expression.

`fuse(program, chunk)` gives the rule steps from a kernel group's expression (the tuple of its outputs,
or one output) to one `map-global` over chunks of `chunk` elements of a zip of the inputs, computing
every output's chunk, followed by the final reductions of the partial results; `lower_unfused` lowers
one call the same way, so that fused and unfused kernels compare. Both search for the locations with
the rewrite engine, phase by phase (the rules are in `lift.rules.call_fusion`), and return a
`Derivation`, replayable and printable as Figure 8.
"""

from __future__ import annotations

from typing import Callable, Optional

from lift.errors import LiftError
from lift.ir.nodes import FunCall, Lambda, Param
from lift.ir.patterns import Get, Map, Reduce, Split
from lift.rules.call_fusion import is_call, zipped_arrays, zipped_inputs
from lift.rules.derivation import Derivation
from lift.rules.engine import Rewrite, RewriteEngine
from lift.rules.location import node_at
from lift.rules.paper_derivations import chunked, step
from lift.types.arith import as_arith


def fuse(program: Lambda, chunk: int, sizes: Optional[dict] = None, width: int = 1) -> Derivation:
    """The rule steps from the inlined expression of one kernel group (a tuple of outputs, or one output)
    to one fused, lowered expression: one `map-global` over `split-chunk` of a zip of the inputs computing
    every output's chunk (maps as `map-seq`, each reduction's partial result as `reduce-seq`), then the
    final reductions of the partial results (their own kernels).

    Transposed gemvs become column partial reductions of chunks of rows, folded row by row (`columns`),
    producers are fused into their consumers (`map-zip-fusion`, `map-zip-flatten`, `zip-map`, map fusion),
    the outputs' maps meet over one zip (`zip-union`), go over `width`-lane vectors where `width > 1`
    (`vectorized`), are chunked (split-join, partial reduction), lowered, and fused (`tuple-fusion`); a
    chunk's sequential maps and folds over the same arrays then become one loop (`map-accum-fusion`).
    """
    run = _Run(program, chunk, sizes)
    run.columns(chunk)
    run.producers()
    run.exhaust(("zip-union",), _top)
    run.vectorized(width)
    run.chunked()
    run.exhaust(("zip-union",), _top)
    run.lowered()
    run.exhaust(("tuple-fusion",), lambda loc: loc == "body")
    run.exhaust(("map-accum-fusion",), _anywhere)
    return run.derivation()


def lower_unfused(program: Lambda, chunk: int, sizes: Optional[dict] = None, width: int = 1) -> Derivation:
    """The rule steps that lower one call as `fuse` lowers a group: a transposed gemv as column partial
    reductions folded row by row, maps over `width`-lane vectors, its map or reduction over chunks of
    `chunk` elements on `map-global`, `map-seq` and `reduce-seq` inside, the final reduction after it."""
    run = _Run(program, chunk, sizes)
    run.columns(chunk)
    run.vectorized(width)
    run.chunked()
    run.lowered()
    return run.derivation()


class _Run:
    """A derivation being built: the program so far and the steps that led to it."""

    def __init__(self, program: Lambda, chunk: int, sizes: Optional[dict]):
        self.program, self.chunk, self.steps = program, chunk, []
        self.sizes = tuple(sorted((sizes or {}).items()))
        self.engine = RewriteEngine(sizes=dict(sizes or {}))

    def derivation(self) -> Derivation:
        return Derivation(tuple(self.steps), self.sizes)

    def apply(self, rw: Rewrite) -> None:
        self.program = self.engine.apply(self.program, rw)
        self.steps.append(rw)

    def exhaust(self, rules: tuple, where: Callable, accept: Callable = lambda rw, node: True,
                params: Optional[dict] = None) -> None:
        """Apply the first rewrite of the first of `rules` that has one at a location `where` accepts (with
        `params` where given), until there is none."""
        engine = RewriteEngine([self.engine.rule(r) for r in rules], sizes=self.engine.sizes)
        for _ in range(1000):
            found = engine.rewrites(self.program)
            rw = next((rw for name in rules for rw in found
                       if rw.rule == name and where(rw.location) and accept(rw, node_at(self.program, rw.location))),
                      None)
            if rw is None:
                return
            self.apply(rw if params is None else Rewrite.of(rw.rule, rw.location, params))
        raise LiftError(f"{', '.join(rules)} did not finish")

    def columns(self, chunk: int) -> None:
        """Column reductions (a transposed gemv) → partial column sums of chunks of rows, each chunk folded
        row after row (`map-reduce-interchange`); the partial sums are reduced after."""
        self.exhaust(("transpose-partial-reduction",), _top, params={"chunk": chunk})
        self.exhaust(("map-reduce-interchange",), lambda loc: not _top(loc))

    def producers(self) -> None:
        """Fuse every producer into its consumers, and move maps under `split-chunk` into the chunks."""
        for _ in range(1000):
            before = len(self.steps)
            self.exhaust(("map-zip-fusion", "map-zip-flatten", "map-fusion", "zip-map"), _anywhere,
                         lambda rw, node: rw.rule != "map-fusion" or isinstance(node.f, Map))
            self.exhaust(("split-join",), _top, self._under_chunk_split, params={"n": self.chunk})
            self.exhaust(("split-join-id",), _top)
            if len(self.steps) == before:
                return
        raise LiftError("producer fusion did not finish")

    def _under_chunk_split(self, rw: Rewrite, node) -> bool:
        parent = node_at(self.program, rw.location.rpartition(".")[0])
        return is_call(parent, Split) and parent.f.n == as_arith(self.chunk)

    def chunked(self) -> None:
        """Every output's map or reduction over inputs → its computation over `split-chunk` of them."""
        k = self.chunk
        for _ in range(1000):
            at = next((path for path, node in _top_calls(self.program.body, "body") if _reduces_inputs(node)), None)
            if at is None:
                break
            if is_call(node_at(self.program, at).args[0], Map):
                steps = step("partial-reduction", at, chunk=k) + chunked(f"{at}.args0", k)
            else:
                steps = step("partial-reduction", at, chunk=k) + step("part-red-split-join", f"{at}.args0", n=k)
            for rw in steps.steps:
                self.apply(rw)
        self.exhaust(("split-join",), _top, lambda rw, node: isinstance(node.f, Map) and _over_inputs(node.args[0]),
                     params={"n": k})

    def vectorized(self, width: int) -> None:
        """Every map of scalars of parameters (the program's, or a function's such as a row) → over
        `width`-lane vectors (Figure 4(e)), a reduction of its scalarised result → lanes first (9(b))."""
        if width == 1:
            return
        self.exhaust(("vectorize-zip-map", "vectorize-map"), _anywhere,
                     lambda rw, node: isinstance(node, FunCall) and _of_parameters(node.args[0]), params={"n": width})
        self.exhaust(("reduce-lanes",), _anywhere,
                     lambda rw, node: isinstance(node, FunCall) and is_call(node.args[0].args[0], Map))

    def lowered(self) -> None:
        """Maps outside functions → `map-global`, inside → `map-seq`, reductions → `reduce-seq`, fused with
        the sequential maps they reduce."""
        def accept(rw, node):
            if rw.rule == "map-to-global":
                return _top(rw.location) and rw.param_dict == {"dim": 0}
            return rw.rule != "map-to-seq" or not _top(rw.location)

        self.exhaust(("map-to-global", "map-to-seq", "part-red-to-reduce", "reduce-to-seq"), _anywhere, accept)
        self.exhaust(("reduce-seq-map-seq-fusion",), _anywhere)


def _reduces_inputs(node) -> bool:
    """Whether `node` is a reduction of parameters (or of a zip of them), or of a map of them."""
    if not is_call(node, Reduce):
        return False
    x = node.args[0]
    return _over_inputs(x.args[0] if is_call(x, Map) else x)


def _of_parameters(x) -> bool:
    """Whether `x` is a parameter, a component of one (`get-i(t)`: a row of a zipped matrix), or a zip of
    those: arrays laid out in memory as they are, whose vectors are vector loads."""
    return all(isinstance(a, Param) or (is_call(a, Get) and isinstance(a.args[0], Param)) for a in zipped_arrays(x))


def _over_inputs(x) -> bool:
    """Whether `x` is a parameter or a zip of parameters (not their chunks)."""
    found = zipped_inputs(x)
    return found is not None and found[0] is None


def _top_calls(e, path: str):
    """`(location, call)` for every call reached from `e` through arguments only, outermost first."""
    if isinstance(e, FunCall):
        yield path, e
        for i, a in enumerate(e.args):
            yield from _top_calls(a, f"{path}.args{i}")


def _top(location: str) -> bool:
    """Whether a location is a call reached from the program's body through arguments only."""
    steps = location.split(".")
    return steps[0] == "body" and all(s.startswith("args") for s in steps[1:])


def _anywhere(location: str) -> bool:
    return True
