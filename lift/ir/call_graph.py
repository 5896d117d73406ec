"""The call graph of a program of several routine calls: the kernel-fusion paper's data-dependency graph.

Filipovič et al. (Section 4.2) parse the script of library calls into a *data dependency graph*:
"vertices represent elementary function calls and edges represent data dependency between functions";
fusions are its fusible subgraphs. Here the script is a lift program whose body applies routines
(`lift.ir.routine`) to its parameters and to other calls' results, and returns one value or a `Tuple` of
several. `CallGraph.of(program)` reads the graph off the program:

- nodes are the distinct routine calls at the program's top level (equal calls are one call; calls
  nested inside a map's function are part of the computation, not nodes), in topological order;
- each argument of a call, and each output of the program, is a `Value`: the program inputs and node
  results it reads (`sources`), and the expression over them when it is more than one of them
  (`transpose(A)`, `neg(a)`), in which node results are written `%i`;
- edges go from producer to consumer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from lift.ir import patterns as P
from lift.ir.nodes import Expr, FunCall, Lambda, Node, Param, substitute
from lift.ir.routine import Routine
from lift.types.types import Type


def result_param(node_id: int, t: Optional[Type] = None) -> Param:
    """The placeholder `%i` for the result of node `i` in the expressions of a call graph."""
    return Param(f"%{node_id}", t)


@dataclass(frozen=True)
class Value:
    """A value a call reads or the program returns: its sources, and the expression over them.

    `sources` are program input names (`str`) and producing node ids (`int`), in order of first use.
    `expr` is None when the value is exactly its one source; otherwise it is the expression computing the
    value, with node results as placeholders `%i` (`transpose(A)`, or `neg(a)` for the `-α` of AXPYDOT).
    """

    sources: tuple
    expr: Optional[Expr] = None

    @property
    def source(self) -> Union[str, int, None]:
        """The one input or node this value is, or None when it is an expression."""
        return self.sources[0] if self.expr is None else None

    @property
    def nodes(self) -> tuple:
        """The ids of the nodes it reads."""
        return tuple(s for s in self.sources if isinstance(s, int))

    @property
    def inputs(self) -> tuple:
        """The names of the program inputs it reads."""
        return tuple(s for s in self.sources if isinstance(s, str))

    def __str__(self) -> str:
        from lift.ir.printer import paper

        if self.expr is not None:
            return paper(self.expr)
        s = self.sources[0]
        return f"%{s}" if isinstance(s, int) else s


@dataclass(frozen=True)
class CallNode:
    """One routine call of the program: `%id = routine(args)`, with its result type."""

    id: int
    routine: Routine
    args: tuple
    call: FunCall
    type: Type

    @property
    def name(self) -> str:
        return self.routine.name

    @property
    def producers(self) -> tuple:
        """The ids of the nodes whose results it reads, without repeats."""
        return tuple(dict.fromkeys(i for a in self.args for i in a.nodes))

    def __str__(self) -> str:
        return f"%{self.id} = {self.name}({', '.join(str(a) for a in self.args)}) : {self.type}"


@dataclass(frozen=True)
class CallGraph:
    """The data-dependency graph of a program of routine calls (fusion paper, Section 4.2).

    `inputs` are the program's typed parameters; `nodes` its distinct top-level routine calls in
    topological order (producers first, then in the order the program writes them); `edges` the
    `(producer, consumer)` pairs; `outputs` one `Value` per result component (one for a single result).
    """

    program: Lambda
    inputs: tuple
    nodes: tuple
    edges: tuple
    outputs: tuple

    @classmethod
    def of(cls, program: Lambda) -> "CallGraph":
        """The call graph of `program` (type checked first: nodes carry their result types)."""
        from lift.ir.typecheck import infer

        typed = infer(Lambda(program.params, _beta_reduce_top(program.body))).expr
        body = typed.body
        ids: dict = {}
        calls: list = []

        def visit(e: Expr) -> None:
            if isinstance(e, FunCall):
                for a in e.args:
                    visit(a)
                if isinstance(e.f, Routine) and e not in ids:
                    ids[e] = len(calls)
                    calls.append(e)

        visit(body)
        nodes = tuple(CallNode(i, c.f, tuple(_value(a, ids) for a in c.args), c, c.t) for i, c in enumerate(calls))
        edges = tuple(sorted({(p, n.id) for n in nodes for p in n.producers}))
        results = body.args if isinstance(body, FunCall) and isinstance(body.f, P.Tuple) else (body,)
        return cls(program, typed.params, nodes, edges, tuple(_value(r, ids) for r in results))

    @property
    def input_names(self) -> tuple:
        return tuple(p.name for p in self.inputs)

    def consumers(self, node_id: int) -> tuple:
        """The ids of the nodes that read node `node_id`'s result."""
        return tuple(c for p, c in self.edges if p == node_id)

    def producers(self, node_id: int) -> tuple:
        """The ids of the nodes whose results node `node_id` reads."""
        return tuple(p for p, c in self.edges if c == node_id)

    def output_nodes(self) -> tuple:
        """The ids of the nodes whose results the program returns (directly or inside an output expression)."""
        return tuple(dict.fromkeys(i for o in self.outputs for i in o.nodes))

    def __str__(self) -> str:
        lines = [f"inputs {', '.join(f'{p.name}: {p.t}' for p in self.inputs)}"]
        lines += [str(n) for n in self.nodes]
        lines.append(f"outputs {', '.join(str(o) for o in self.outputs)}")
        return "\n".join(lines)


def _beta_reduce_top(e: Expr) -> Expr:
    """`(λz. body)(arg)` at the top level (a shared result bound by a lambda) becomes `body[z := arg]`."""
    if not isinstance(e, FunCall):
        return e
    e = e.map_children(_beta_reduce_top)
    if isinstance(e.f, Lambda) and len(e.args) == len(e.f.params):
        return _beta_reduce_top(substitute(e.f.body, dict(zip(e.f.params, e.args))))
    return e


def _value(e: Expr, ids: dict) -> Value:
    """`e` as a `Value`: node calls in it replaced by their placeholders, and the sources it reads."""
    abstracted = _abstract(e, ids)
    sources = tuple(_source(name) for name in dict.fromkeys(_free_names(abstracted, frozenset())))
    if isinstance(abstracted, Param):
        return Value(sources)
    return Value(sources, abstracted)


def _abstract(e: Node, ids: dict) -> Node:
    if isinstance(e, FunCall) and e in ids:
        return result_param(ids[e], e.t)
    return e.map_children(lambda c: _abstract(c, ids))


def _free_names(e: Node, bound: frozenset):
    """The names of the free parameters of `e`, in order of occurrence (with repeats), a call's arguments
    before its function."""
    if isinstance(e, Param):
        if e.name not in bound:
            yield e.name
        return
    if isinstance(e, Lambda):
        bound = bound | {p.name for p in e.params}
    children = [c for _, c in e.children()]
    if isinstance(e, FunCall):
        children = list(e.args) + [e.f]
    for c in children:
        yield from _free_names(c, bound)


def _source(name: str) -> Union[str, int]:
    return int(name[1:]) if name.startswith("%") else name
