"""Transposition: which dimension of a matrix the threads walk (beyond the paper's figures).

    map(map(f)) → transpose ∘ map(map(f)) ∘ transpose

A map of maps applies `f` to every element of a matrix independently, so the two loops may be
interchanged: transposing, mapping over the other dimension and transposing back gives the same
matrix. This is the choice behind coalesced matrix code such as gemv (Figure 5): lowered to
`map-global(map-seq(f))`, work-item `i` walks row `i` and neighbouring work-items read addresses a row
apart; after the interchange the outer map runs over columns, so at each step neighbouring work-items
read neighbouring elements of one row. The transpositions are views: the code generator only changes
its index expressions (and `transpose ∘ transpose → id` in `lift.rules.simplification` removes a pair).

    map(f)(X[transpose(A)]) → (λt. map(f)(X[t]))(map(map(id))(transpose(A)))      (transpose-copy)

A map over the columns of a row-major matrix whose function walks each column (a transposed gemv's
`map(λcol. reduce(+)(map(*)(zip(col, y))))(transpose(A))`, the `Bᵀ` of a matrix product `map(λa. map(λb.
dot(a, b))(transpose(B)))(A)`, a covariance's `Xᵀ X`) reads one element per row of `A` at each step: on a CPU
a cache line and a page per element. Let-binding a copy of the transposition (β-reduction read right to left,
as `hoist-invariant`) computes `Aᵀ` once, in a kernel of its own, and the map then walks its rows. Every
occurrence of `transpose(A)` in the call is replaced, in the function too; `A` reads no parameter bound in it.

    map(f)(X)[B in f] → (λt. map(f[B := transpose(t)])(X))(map(map(id))(transpose(B)))      (transpose-copy-rows)

A map whose function walks the rows of a matrix `B` once per element (`A Bᵀ`, `map(λa. map(λb. dot(a, b))(B))(A)`:
PolyBench's syrk `A Aᵀ`) walks the columns of `Bᵀ`, a matrix product's `transpose(Bᵀ)`; `transpose ∘ transpose =
id` (Figure 3(e)) with `Bᵀ` let-bound as a copy gives the function the product shape the register blocking
matches (`lift.rules.macro_rules`), its blocks of columns read as vectors of a row of the copy. Only the function's
occurrences of `B` are replaced (the map's own argument keeps reading `B` by rows); `B` reads no parameter bound in
the call and is not itself a transposition (`transpose-copy` is that case).

    map(f)(transpose(A)) → (λt. map(f)(t))(map(map(id))(transpose(A)))             (transpose-copy-argument)

copies only the map's argument, where its function walks each of its elements, the columns of `A`: a covariance's
`map(λci. map(λcj. dot(ci, cj))(transpose(X)))(transpose(X))`, whose left operand a register-blocked product
reads a few columns at a time, one row of `X` (a cache line) per step, becomes the product `map(λa. map(λb. dot(a,
b))(transpose(X)))(t)` of a matrix multiply, whose left operand it reads along rows of `t`, and whose right one,
`transpose(X)`, it reads as a matrix multiply reads `Bᵀ`.

    map(f)(X[B]) → (λt. map(f)(X[transpose(t)]))(map(map(id))(transpose(B)))      (transpose-copy-walked-rows)

is `transpose-copy`'s converse: a map whose function walks its element of `B`, a row (MD's fold over the
neighbour indices of its atom, `map(λ(p, ns). fold(..)(ns))(zip(particles, neighbours))`), walks it as a
column of a copy of `Bᵀ`. It is SHOC's layout of MD's neighbour list, chosen for a GPU: at each step,
neighbouring work-items read neighbouring indices (coalesced); on a CPU each work-item reads one element per
row of the copy, a cache line each (`benchmarks/bench_md_variants.py`: 2-3 times slower on PoCL), which a
search's cost model has to know. `B` (the map's argument, or a component of a zip there) is a matrix of scalars
reading no parameter bound in the call, and not itself a transposition (a walked transposition is
`transpose-copy`'s).
"""

from __future__ import annotations

from typing import Iterator, Optional

from lift.ir.nodes import Expr, FunCall, Lambda, free_params
from lift.ir.patterns import AbstractMap, AbstractReduce, Map, Transpose, Zip
from lift.rules.let_floating import let_copied, replaced
from lift.rules.rule import requires, rule
from lift.types.types import ArrayType, ScalarType


@rule("map-interchange", figure="5", description="map over the other dimension of a matrix, between two transpositions",
      equation="map(map(f)) → transpose ∘ map(map(f)) ∘ transpose", heads=Map,
      match=lambda call: requires(isinstance(call.f.f, Map), "expects a map of maps"))
def map_interchange(call):
    return Transpose()(call.f(Transpose()(*call.args)))


def _walked_matrices(call: FunCall, repeatedly: bool) -> Iterator[Expr]:
    """The matrices of scalars in the map call `call`, reading no parameter bound in it, that a map in it walks:
    its argument (or a component of a zip there), the map's function reducing; with `repeatedly`, the maps in
    `call`'s function, which walk them once per element of `call`."""
    bound = frozenset(p for n in call.subterms() if isinstance(n, Lambda) for p in n.params)
    for n in (call.f.f if repeatedly else call).subterms():
        if isinstance(n, FunCall) and isinstance(n.f, AbstractMap) and _reduces(n.f.f):
            arg = n.args[0]
            for t in (arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else (arg,)):
                if (not free_params(t) & bound and isinstance(t.t, ArrayType) and isinstance(t.t.elem, ArrayType)
                        and isinstance(t.t.elem.elem, ScalarType)):
                    yield t


def _is_transposition(e: Expr) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, Transpose)


def walked_transposition(call: FunCall, repeatedly: bool = False) -> Optional[FunCall]:
    """The first `transpose(A)` that a map in the map call `call` walks (`_walked_matrices`; with `repeatedly`, a
    map in `call`'s function, once per element of `call`: `Bᵀ` in a product)."""
    return next((t for t in _walked_matrices(call, repeatedly) if _is_transposition(t)), None)


def walked_rows(call: FunCall) -> Optional[Expr]:
    """The first matrix other than a transposition whose rows a map in the function of the map call `call` walks
    (`_walked_matrices`): the `B` of `A Bᵀ`, `map(λa. map(λb. dot(a, b))(B))(A)`."""
    return next((t for t in _walked_matrices(call, True) if not _is_transposition(t)), None)


def _reduces(f) -> bool:
    return any(isinstance(n, AbstractReduce) for n in f.subterms())


def _walked(call: FunCall) -> tuple:
    t = walked_transposition(call)
    requires(t is not None, "no map in it walks the columns of a matrix it does not compute")
    return (t,)


@rule("transpose-copy", figure="let", heads=AbstractMap, on_functions=False, match=_walked,
      description="the columns of a matrix that a map walks are the rows of a copy of its transposition, let-bound",
      equation="map(f)(X[transpose(A)]) → (λt. map(f)(X[t]))(map(map(id))(transpose(A)))")
def transpose_copy(call: FunCall, transposed: FunCall):
    return let_copied(transposed, lambda t: replaced(call, transposed, t))


def _walked_rows(call: FunCall) -> tuple:
    rows = walked_rows(call)
    requires(rows is not None, "no map in its function walks the rows of a matrix it does not compute")
    return (rows,)


@rule("transpose-copy-rows", figure="let", heads=AbstractMap, on_functions=False, match=_walked_rows,
      description="the rows of a matrix that a map's function walks are the columns of a copy of its transposition, "
                  "let-bound",
      equation="map(f)(X)[B in f] → (λt. map(f[B := transpose(t)])(X))(map(map(id))(transpose(B)))")
def transpose_copy_rows(call: FunCall, rows: Expr):
    return let_copied(Transpose()(rows), lambda t: FunCall(replaced(call.f, rows, Transpose()(t)), call.args))


def _walked_argument(call: FunCall) -> None:
    t = call.args[0]
    requires(isinstance(t, FunCall) and isinstance(t.f, Transpose) and isinstance(t.t.elem.elem, ScalarType),
             "does not map over the columns of a matrix of scalars")
    requires(_reduces(call.f.f), "its function does not walk the columns (reduces nothing)")


@rule("transpose-copy-argument", figure="let", heads=Map, on_functions=False, match=_walked_argument,
      description="the columns of a matrix that a map maps over are the rows of a copy of its transposition, "
                  "let-bound",
      equation="map(f)(transpose(A)) → (λt. map(f)(t))(map(map(id))(transpose(A)))")
def transpose_copy_argument(call: FunCall):
    return let_copied(call.args[0], call.f)


def walked_argument_rows(call: FunCall) -> Optional[Expr]:
    """The first matrix other than a transposition that the map call `call` maps over (its argument, or a component
    of a zip there) and whose rows its function walks (`_walked_matrices`): MD's neighbour list."""
    arg = call.args[0]
    own = arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else (arg,)
    return next((t for t in _walked_matrices(call, False) if any(t is a for a in own) and not _is_transposition(t)),
                None)


def _walked_argument_rows(call: FunCall) -> tuple:
    rows = walked_argument_rows(call)
    requires(rows is not None,
             "its function walks no row of a matrix of scalars it maps over (other than a transposition)")
    return (rows,)


@rule("transpose-copy-walked-rows", figure="let", heads=Map, on_functions=False, match=_walked_argument_rows,
      description="the rows of a matrix a map maps over and walks are the columns of a copy of its transposition, "
                  "let-bound",
      equation="map(f)(X[B]) → (λt. map(f)(X[transpose(t)]))(map(map(id))(transpose(B)))")
def transpose_copy_walked_rows(call: FunCall, rows: Expr):
    return let_copied(Transpose()(rows),
                      lambda t: FunCall(call.f, tuple(replaced(a, rows, Transpose()(t)) for a in call.args)))


RULES = (map_interchange, transpose_copy, transpose_copy_rows, transpose_copy_argument, transpose_copy_walked_rows)
