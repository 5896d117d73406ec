"""Alpha-equivalence: expressions equal up to the names of their lambdas' parameters.

Rules create parameters with fresh names (`acc_17`) and programs written by hand use their own, so
derivations are compared, and the search deduplicates, on a canonical form: every binder renamed
after its position, de Bruijn style, as `_b{depth}_{index}` (the depth of lambdas around it and its
index among its lambda's parameters). Free parameters keep their names; parameter types are kept.
"""

from __future__ import annotations

from lift.ir.nodes import Lambda, Node, Param


def canonical(e: Node) -> Node:
    """`e` with every lambda parameter renamed after its position."""
    return _canonical(e, {}, 0)


def alpha_equal(a: Node, b: Node) -> bool:
    """Whether `a` and `b` are equal up to the names of bound parameters."""
    return canonical(a) == canonical(b)


def _canonical(e: Node, names: dict, depth: int) -> Node:
    if isinstance(e, Param):
        name = names.get(e.name)
        return e if name is None else Param(name, e.t)
    if isinstance(e, Lambda):
        inner = dict(names)
        params = []
        for i, p in enumerate(e.params):
            inner[p.name] = f"_b{depth}_{i}"
            params.append(Param(inner[p.name], p.t))
        return Lambda(tuple(params), _canonical(e.body, inner, depth + 1))
    return e.map_children(lambda child: _canonical(child, names, depth))
