"""Interchange: the loops of a map of maps, and of a map of sequential folds, in the other order.

    map(λa. map(λb. e)(Y))(X) → transpose(map(λb. map(λa. e)(X))(Y))               (Y independent of a)
    map(λr. reduce-seq(f, z)(zip(.., r, ..)))(R)                 (or of r itself: map(reduce-seq(f, z))(R))
        → transpose(reduce-seq(λacc, t. map(λe. f(get-0 e, tuple(.., get-1 e, ..)))(zip(acc, t_r)), [z, .., z])
                    (zip(.., transpose(R), ..)))                                      (f, z, .. independent of r)

The first is the map-map interchange of Steuwer, Remmelg, Dubach (CASES 2016): element `[i][j]` of the left
side is `e[a := X[i], b := Y[j]]`, element `[j][i]` of the inner right side is the same, and the
transposition puts it back at `[i][j]`. Unlike `map-interchange` (`lift.rules.transposition`), the inner
map's array may be any array not depending on the outer element: the interchange of the two loops of
matrix multiply (rows of A, columns of B).

The second turns the `n` folds of a map, one per row `r` of `R`, into one fold whose accumulator holds
`n` values, one per row: step `k` updates accumulator `i` with `f(acc_i, (.., R[i][k], ..))`, exactly the
step the `i`-th fold takes, so accumulator `i` ends as the `i`-th fold's result (the sequential order of
each fold is kept: exact for any `f`). It is Figure 3(d)'s map-reduce interchange
(`map-reduce-interchange`, `lift.rules.call_fusion`) for a fold already lowered, whose accumulator may
itself be an array: applied twice, the accumulators of a work-item form a block of `h × w` results (register
blocking, `lift.rules.register_blocking`).
"""

from __future__ import annotations

from lift.ir.nodes import FunCall, Lambda, Literal, fresh_param, free_params
from lift.ir.patterns import Get, Map, ReduceSeq, Transpose, Tuple, Zip
from lift.rules.call_fusion import applied
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer
from lift.types.types import ArrayType


def _map_of_map(call) -> tuple:
    f = call.f.f
    requires(isinstance(f, Lambda) and len(f.params) == 1, "the mapped function is not a lambda of one element")
    inner = f.body
    requires(isinstance(inner, FunCall) and type(inner.f) is Map and len(inner.args) == 1,
             "the mapped function's body is not a map")
    requires(f.params[0] not in free_params(inner.args[0]), "the inner map's array depends on the outer element")
    return f.params[0], inner.f.f, inner.args[0]


@rule("map-map-interchange", figure="CASES16", heads=Map, match=_map_of_map,
      description="the two loops of a map of maps in the other order, the result transposed back",
      equation="map(λa. map(λb. e)(Y))(X) → transpose(map(λb. map(λa. e)(X))(Y))")
def map_map_interchange(call, a, g, ys):
    if isinstance(g, Lambda) and len(g.params) == 1:
        b, e = g.params[0], g.body
    else:
        b = fresh_param("b")
        e = g(b)
    return Transpose()(Map(Lambda((b,), Map(Lambda((a,), e))(call.args[0])))(ys))


def _map_of_fold(call) -> tuple:
    f = call.f.f
    if isinstance(f, ReduceSeq):
        r = fresh_param("r")
        fold = f(r)
    else:
        requires(isinstance(f, Lambda) and len(f.params) == 1, "the mapped function is not a lambda of one row")
        (r,) = f.params
        fold = f.body
    requires(isinstance(fold, FunCall) and isinstance(fold.f, ReduceSeq),
             "the mapped function is not a reduce-seq of the row (or of a zip with it)")
    arg = fold.args[0]
    zipped = arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else None
    at = [i for i, x in enumerate(zipped) if x == r] if zipped is not None else [None] if arg == r else []
    others = [x for x in zipped if x != r] if zipped is not None else []
    requires(len(at) == 1 and r not in free_params(Tuple(*others)) if others else len(at) == 1,
             "the row is not exactly the fold's array or one array of its zip, the others independent of it")
    requires(r not in free_params(fold.f.f) and isinstance(fold.f.init, Literal),
             "the operator depends on the row, or the initial value is not a constant")
    n = integer(call.args[0].t.length)
    requires(n is not None, "the number of rows is not a constant")
    return fold.f, at[0], zipped, n


@rule("map-reduce-seq-interchange", figure="CASES16", heads=Map, sized=True, match=_map_of_fold,
      description="the sequential folds of a map's rows become one fold over their columns into a row of accumulators",
      equation=("map(λr. reduce-seq(f, z)(zip(.., r, ..)))(R) → transpose(reduce-seq(λacc, t. map(λe. f(get-0 e, "
                "tuple(.., get-1 e, ..)))(zip(acc, get-i t)), [z, .., z])(zip(.., transpose(R), ..)))"))
def map_reduce_seq_interchange(call, fold, at, zipped, n):
    acc, t, e = fresh_param("acc"), fresh_param("t"), fresh_param("e")
    init = Literal(fold.init.value, ArrayType(fold.init.t, n))
    if zipped is None:
        step = Lambda((e,), applied(fold.f, Tuple(Get(0)(e), Get(1)(e))))
        return Transpose()(ReduceSeq(Lambda((acc, t), Map(step)(Zip(acc, t))), init)(Transpose()(call.args[0])))
    element = Tuple(*(Get(1)(e) if i == at else Get(i)(t) for i in range(len(zipped))))
    step = Lambda((e,), applied(fold.f, Tuple(Get(0)(e), element)))
    update = Lambda((acc, t), Map(step)(Zip(acc, Get(at)(t))))
    columns = tuple(Transpose()(call.args[0]) if i == at else x for i, x in enumerate(zipped))
    return Transpose()(ReduceSeq(update, init)(Zip(*columns)))


RULES = (map_map_interchange, map_reduce_seq_interchange)
