"""Fusing calls (issue 7): one pass over the inputs for a program of several calls, inlined into one
expression whose result is the tuple of its outputs (the kernel-fusion paper's Section 3.2, "KF 3.2").

    tuple(C1[map(f1)(x)], ..., Cn[map(fn)(x)])                                                (tuple-fusion)
        → tuple(C1[get-0(u)], ..., Cn[get-(n-1)(u)]),  u = unzip(map(λe. tuple(f1(e), ..., fn(e)))(x))
    get-i(unzip(map(λe. tuple(f0(e), ..., fn(e)))(x))) → map(fi)(x)                         (unzip-fission)
    map(f)(zip(x0, .., map(g)(y), .., xn))                                                  (map-zip-fusion)
        → map(λt. f(tuple(get-0 t, .., g(get-i t), .., get-n t)))(zip(x0, .., y, .., xn))
    map(f)(zip(x0, .., zip(y0, .., ym), .., xn))                                           (map-zip-flatten)
        → map(λt. f(tuple(.., tuple(get-i t, .., get-(i+m) t), ..)))(zip(x0, .., y0, .., ym, .., xn))
    zip(x0, .., map(g)(y), .., xn)                                                                (zip-map)
        → map(λt. tuple(get-0 t, .., g(get-i t), .., get-n t))(zip(x0, .., y, .., xn))
    tuple(C1[map(f1)(s(x1))], ..) → tuple(C1[map(f1 ∘ π1)(s(zip(x)))], ..),  x = x1 ∪ ..        (zip-union)
    map(λcol. reduce(f, z)(map(g)(zip(col, y))))(transpose(A))                  (transpose-partial-reduction)
        → map(reduce(f, z))(transpose(map(λc. join(map(λcol. reduce(f, z)(map(g)(zip(col, get-1(unzip c)))))
                                                   (transpose(get-0(unzip c)))))(split-k(zip(A, y)))))
    map(λcol. reduce(f, z)(map(g)(zip(col, y))))(transpose(A))                       (map-reduce-interchange)
        → transpose(reduce-seq(λacc, t. map(λe. f(get-0 e, g(tuple(get-1 e, get-1 t))))(zip(acc, get-0 t)),
                               [z, .., z])(zip(A, y)))
    tuple(C1[map-seq(g)(x)], C2[reduce-seq(h, z)(y)])                                      (map-accum-fusion)
        → tuple(C1[get-0(m)], C2[get-1(m)]),  m = map-accum-seq(λacc, t. tuple(g(πx t), h(acc, πy t)), z)(zip(x ∪ y))

`C[e]` is a context of calls around `e` that binds nothing (no function in between), so that equal
expressions there have equal values: fusing the maps over `x` of several outputs replaces each by its
component of one map computing all of them (KF 3.2.1: maps with one thread-to-data mapping fuse). The
computation `u` then occurs once per output, structurally equal: it is computed once.

A consumer fuses with its producer as map fusion does (Figure 3(f)) where the producer is one of the
arrays a map zips: the produced element is computed where it is consumed. Outputs over different zips of
the same inputs meet by zip-union: every map reads the components it needs (`π`) of one zip of all the
inputs, or, for maps over `split-k` chunks, of the chunks of that zip (`zip(get-i(unzip c), ..)`).

A reduction cannot be used in the kernel that computes it (KF 3.2.2): it fuses through Figure 3(d)'s
partial reduction, each chunk reduced in the fused map and the partial results reduced after it. The
last rule is that partial reduction for the columns of a matrix (`Aᵀ·y`): each chunk of rows gives its
column sums, read row by row with the other outputs over the rows of `A` (BiCGK's `q = A p`, `s = Aᵀ r`
read `A` once); it re-associates the column sums. Map-reduce interchange then folds a chunk's rows into
one row of accumulators, `[z, .., z]` (an array literal) to start: the matrix is read row after row, as it
lies in memory, and a row's update is a map over it that vectorises (Figure 4(e)), where a column at a
time reads the chunk with a stride of a row.

Where a chunk's outputs are a map and a fold over the same rows (BiCGK's `A p` and the row-by-row
column sums of `Aᵀ r`), map-accum fusion computes both in one loop (`map-accum-seq`), each row read once;
inside that loop, the row's dot and its update of the accumulators fuse the same way, element by element.

Functions are applied by substituting their parameters where that duplicates no work (`λe. f(e)` of a
lambda is its body, a tuple spread over a user function's parameters, `get-i(tuple(..))` its component).
`lift.rules.fused_derivations` derives the lowered forms of a group of calls and of one call with them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from lift.ir.associativity import is_associative
from lift.ir.nodes import (Expr, FunCall, Lambda, Literal, Param, count_uses, fresh_param, free_params,
                           param_named_after, substitute)
from lift.ir.opencl_patterns import AsVector
from lift.ir.patterns import (AbstractMap, Get, Join, Map, MapAccumSeq, MapSeq, Reduce, ReduceSeq, Split, Transpose,
                              Tuple, Unzip, Zip)
from lift.types.types import ArrayType, ScalarType
from lift.rules.location import abstract
from lift.rules.reduction import requires_absorbing
from lift.rules.rule import Rule, SizedRule, expect, requires, rule


def _map_group(call) -> tuple:
    groups = _top_maps_by(call, lambda m: (m.args[0], type(m.f), getattr(m.f, "dim", 0)))
    group = next((g for g in groups.values() if len(set(g)) > 1), None)
    requires(group is not None, "no two maps of one kind over one array among the components")
    return (list(dict.fromkeys(group)),)


@rule("tuple-fusion", figure="KF 3.2", heads=Tuple, on_functions=False, match=_map_group,
      description="the maps of several outputs over one array become one map computing a tuple, unzipped",
      equation=("tuple(C1[map(f1)(x)], ..., Cn[map(fn)(x)]) → tuple(C1[get-0(u)], ..., Cn[get-(n-1)(u)]), "
                "u = unzip(map(λe. tuple(f1(e), ..., fn(e)))(x))"))
def tuple_fusion(call, group):
    e = fresh_param("e")
    fused = replace(group[0].f, f=Lambda((e,), Tuple(*(applied(m.f.f, e) for m in group))))
    u = Unzip()(fused(group[0].args[0]))
    outputs = {m: Get(i)(u) for i, m in enumerate(group)}
    return Tuple(*(_replaced(c, outputs) for c in call.args))


def _unzipped_component(call) -> tuple:
    unzip = call.args[0]
    requires(isinstance(unzip, FunCall) and isinstance(unzip.f, Unzip), "expects unzip applied to the argument")
    m = unzip.args[0]
    requires(isinstance(m, FunCall) and isinstance(m.f, AbstractMap), "the unzipped array is not a map")
    f = m.f.f
    requires(isinstance(f, Lambda) and len(f.params) == 1 and is_call(f.body, Tuple),
             "the mapped function does not build a tuple")
    return (m, f.params, f.body.args[call.f.i])


@rule("unzip-fission", figure="KF 3.2", heads=Get, on_functions=False, match=_unzipped_component,
      description="a component of an unzipped map of tuples is the map of that component (tuple fusion, reversed)",
      equation="get-i(unzip(map(λe. tuple(f0(e), ..., fn(e)))(x))) → map(fi)(x)")
def unzip_fission(call, m, params, component):
    return replace(m.f, f=abstract(params, component))(m.args[0])


class _ZipArgument(Rule):
    """A rule at a zip whose `i`-th array is built by a pattern of class `kind`."""

    kind: type = Map
    what: str = ""

    def zip_of(self, call) -> FunCall:
        return call

    def choices(self, call, ctx):
        self.head(call)
        found = [{"i": i} for i, a in enumerate(self.zip_of(call).args) if is_call(a, self.kind)]
        expect(bool(found), self, f"no array of the zip is {self.what}")
        return found

    def apply(self, call, params):
        self.head(call)
        z, i = self.zip_of(call), params.get("i")
        expect(isinstance(i, int) and 0 <= i < len(z.args) and is_call(z.args[i], self.kind), self,
               f"array {i} of the zip is not {self.what}")
        t = fresh_param("t")
        inner = z.args[i]
        if self.kind is Zip:
            m = len(inner.args)
            parts = [Get(j)(t) for j in range(i)] + [Tuple(*(Get(i + j)(t) for j in range(m)))] + \
                    [Get(j + m - 1)(t) for j in range(i + 1, len(z.args))]
            arrays = z.args[:i] + inner.args + z.args[i + 1:]
        else:
            parts = [Get(j)(t) if j != i else applied(inner.f.f, Get(i)(t)) for j in range(len(z.args))]
            arrays = z.args[:i] + (inner.args[0],) + z.args[i + 1:]
        return self.combine(call, t, Tuple(*parts), Zip(*arrays))

    def combine(self, call, t, element, zipped) -> Expr:
        return Map(Lambda((t,), element))(zipped)


class ZipMap(_ZipArgument):
    name = "zip-map"
    figure = "3(f)"
    description = "a zip of a map is a map of the zip of the map's input (the map applied to its component)"
    equation = ("zip(x0, .., map(g)(y), .., xn) → "
                "map(λt. tuple(get-0 t, .., g(get-i t), .., get-n t))(zip(x0, .., y, .., xn))")
    heads = (Zip,)
    on_functions = False
    what = "a map"


class MapZipFusion(_ZipArgument):
    name = "map-zip-fusion"
    figure = "3(f)"
    description = "a map over a zip of a map computes the mapped array's elements where it consumes them"
    equation = ("map(f)(zip(x0, .., map(g)(y), .., xn)) → "
                "map(λt. f(tuple(get-0 t, .., g(get-i t), .., get-n t)))(zip(x0, .., y, .., xn))")
    heads = (Map,)
    on_functions = False
    what = "a map"

    def zip_of(self, call):
        z = call.args[0]
        expect(is_call(z, Zip), self, "the map's input is not a zip")
        return z

    def combine(self, call, t, element, zipped):
        return Map(Lambda((t,), applied(call.f.f, element)))(zipped)


class MapZipFlatten(MapZipFusion):
    name = "map-zip-flatten"
    figure = "3(f)"
    description = "a map over a zip of a zip maps over one zip of all the arrays"
    equation = ("map(f)(zip(x0, .., zip(y0, .., ym), .., xn)) → "
                "map(λt. f(tuple(.., tuple(get-i t, .., get-(i+m) t), ..)))(zip(x0, .., y0, .., ym, .., xn))")
    heads = (AbstractMap,)
    kind = Zip
    what = "a zip"

    def combine(self, call, t, element, zipped):
        return replace(call.f, f=Lambda((t,), applied(call.f.f, element)))(zipped)


def _zips_to_unite(call) -> tuple:
    inputs = {m: zipped_inputs(m.args[0]) for m in _top_maps(call.args)}
    groups = _top_maps_by(call, lambda m: inputs[m] and (inputs[m][0], inputs[m][1][0].t.length))
    for (chunk, _), maps in groups.items():
        members = [(m, chunk, inputs[m][1]) for m in maps]
        union = tuple(dict.fromkeys(a for _, _, arrays in members for a in arrays))
        if len(union) > 1 and any(arrays != union for _, _, arrays in members):
            return (chunk, union, members)
    requires(False, "no two maps over different zips of inputs of one length (or their chunks)")


@rule("zip-union", figure="KF 3.2", heads=Tuple, on_functions=False, match=_zips_to_unite,
      description="maps over zips of some inputs (or their chunks) read them from one zip of all those inputs",
      equation=("tuple(C1[map(f1)(s(x1))], ..., Cn[map(fn)(s(xn))]) → "
                "tuple(C1[map(f1 ∘ π1)(s(zip(x)))], ...), x = x1 ∪ ... ∪ xn"))
def zip_union(call, chunk, union, members):
    zipped = Zip(*union)
    source = zipped if chunk is None else Split(chunk)(zipped)
    new = {}
    for m, _, arrays in members:
        if arrays == union:
            continue
        e = fresh_param("c" if chunk is not None else "t")
        picks = [Get(union.index(a))(e if chunk is None else Unzip()(e)) for a in arrays]
        single = m.args[0].args[0] if chunk is not None else m.args[0]
        value = picks[0] if not is_call(single, Zip) else (Tuple if chunk is None else Zip)(*picks)
        new[m] = replace(m.f, f=Lambda((e,), applied(m.f.f, value)))(source)
    return Tuple(*(_replaced(c, new) for c in call.args))


class TransposePartialReduction(SizedRule):
    name = "transpose-partial-reduction"
    figure = "3(d)"
    description = "the column reductions of a matrix are reductions of each chunk of rows' column reductions"
    equation = ("map(λcol. reduce(f, z)(map(g)(zip(col, y))))(transpose(A)) → map(reduce(f, z))(transpose("
                "map(λc. join(map(λcol. reduce(f, z)(map(g)(zip(col, get-1(unzip c)))))(transpose(get-0(unzip c)))))"
                "(split-k(zip(A, y)))))")
    heads = (Map,)
    on_functions = False
    param = "chunk"
    reassociates = True

    def allowed(self, call, ctx):
        requires_absorbing(column_reduction(self, call)[1])

    def length(self, call):
        return column_reduction(self, call)[0].t.length

    def rewrite(self, call, k):
        a, reduction, g, at, others = column_reduction(self, call)
        c, col = fresh_param("c"), fresh_param("col")
        if others is None:
            sums = Map(Lambda((col,), reduction(g(col))))(Transpose()(c))
            rows = a
        else:
            vectors = [Get(1 + i)(Unzip()(c)) for i in range(len(others))]
            zipped = vectors[:at] + [col] + vectors[at:]
            sums = Map(Lambda((col,), reduction(g(Zip(*zipped)))))(Transpose()(Get(0)(Unzip()(c))))
            rows = Zip(a, *others)
        partial = Map(Lambda((c,), Join()(sums)))(Split(k)(rows))
        return Map(reduction)(Transpose()(partial))


def _column_reduction_with_constant(call) -> tuple:
    a, reduction, g, at, others = column_reduction(map_reduce_interchange, call)
    requires(isinstance(reduction.init, Literal) and isinstance(reduction.init.t, ScalarType),
             "needs a constant scalar initial value")
    return a, reduction, g, at, others


@rule("map-reduce-interchange", figure="3(d)", heads=Map, reassociates=True, sized=True, match=_column_reduction_with_constant,
      description="the column reductions of a matrix are one fold over its rows into a row of accumulators",
      equation=("map(λcol. reduce(f, z)(map(g)(zip(col, y))))(transpose(A)) → "
                "transpose(reduce-seq(λacc, t. map(λe. f(get-0 e, g(tuple(get-1 e, get-1 t))))(zip(acc, get-0 t)), "
                "[z, .., z])(zip(A, y)))"))
def map_reduce_interchange(call, a, reduction, g, at, others):
    acc, t, e = fresh_param("acc"), fresh_param("t"), fresh_param("e")
    if others is None:
        element, row, rows = Get(1)(e), t, a
    else:
        scalars = [Get(1 + i)(t) for i in range(len(others))]
        element, row, rows = Tuple(*(scalars[:at] + [Get(1)(e)] + scalars[at:])), Get(0)(t), Zip(a, *others)
    step = Lambda((e,), applied(reduction.f, Tuple(Get(0)(e), applied(g.f, element))))
    update = Lambda((acc, t), Map(step)(Zip(acc, row)))
    init = Literal(reduction.init.value, ArrayType(reduction.init.t, a.t.elem.length))
    return Transpose()(ReduceSeq(update, init)(rows))


def _map_and_fold_sharing_an_array(call) -> tuple:
    calls = _top_calls(call.args, (MapSeq, ReduceSeq))
    for m in (c for c in calls if is_call(c, MapSeq)):
        for r in (c for c in calls if is_call(c, ReduceSeq)):
            x, y = m.args[0], r.args[0]
            if set(zipped_arrays(x)) & set(zipped_arrays(y)) and not _occurs(m, r) and not _occurs(r, m):
                return m, r
    requires(False, "no map-seq and reduce-seq among the components over arrays sharing one (so of one length)")


@rule("map-accum-fusion", figure="KF 3.2", heads=Tuple, on_functions=False, match=_map_and_fold_sharing_an_array,
      description="a sequential map and a sequential fold over arrays of one length sharing one are one loop",
      equation=("tuple(C1[map-seq(g)(x)], C2[reduce-seq(h, z)(y)]) → tuple(C1[get-0(m)], C2[get-1(m)]), "
                "m = map-accum-seq(λacc, t. tuple(g(πx t), h(acc, πy t)), z)(zip(x ∪ y))"))
def map_accum_fusion(call, m, r):
    x, y = m.args[0], r.args[0]
    union = tuple(dict.fromkeys(zipped_arrays(x) + zipped_arrays(y)))
    acc, t = param_named_after(call, "acc"), param_named_after(call, "t")

    def picked(z):
        if len(union) == 1:
            return t
        picks = [Get(union.index(a))(t) for a in zipped_arrays(z)]
        return Tuple(*picks) if is_call(z, Zip) else picks[0]

    step = Lambda((acc, t), Tuple(applied(m.f.f, picked(x)), applied(r.f.f, Tuple(acc, picked(y)))))
    fused = MapAccumSeq(step, r.f.init)(union[0] if len(union) == 1 else Zip(*union))
    return Tuple(*(_replaced(c, {m: Get(0)(fused), r: Get(1)(fused)}) for c in call.args))


def column_reduction(rule, call) -> tuple:
    """`(A, reduce(f, z), map(g), i, ys)` for `map(λcol. reduce(f, z)(map(g)(zip(.., col, ..))))(transpose(A))`,
    the column at position `i` of the zip, the other arrays `ys` independent of it; `(A, reduce(f, z), map(g), 0,
    None)` for `map(λcol. reduce(f, z)(map(g)(col)))(transpose(A))` (column sums, `reduce-map-id` giving the map)."""
    rule.head(call)
    t = call.args[0]
    expect(is_call(t, Transpose), rule, "the map's input is not a transposed matrix")
    f = call.f.f
    expect(isinstance(f, Lambda) and len(f.params) == 1, rule, "the mapped function is not a lambda of a column")
    (col,) = f.params
    r = f.body
    expect(is_call(r, Reduce) and is_call(r.args[0], Map)
           and (r.args[0].args[0] == col or is_call(r.args[0].args[0], Zip)), rule,
           "the mapped function is not reduce(f, z) ∘ map(g) of the column or of a zip with it")
    if r.args[0].args[0] == col:
        where, others = [0], None
    else:
        zipped = r.args[0].args[0].args
        where = [i for i, a in enumerate(zipped) if a == col]
        others = [a for a in zipped if a != col]
        expect(len(where) == 1 and col not in free_params(Tuple(*others)), rule,
               "the column is not exactly one array of the zip, the others independent of it")
    expect(col not in free_params(r.f) | free_params(r.args[0].f), rule, "the operator or g depends on the column")
    expect(r.args[0].t.elem == r.f.init.t, rule, "needs an operator of type (T, T) -> T")
    expect(is_associative(r.f.f), rule, f"the operator {r.f.f} is not known to be associative and commutative")
    return t.args[0], r.f, r.args[0].f, where[0], others


def is_call(e, cls) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, cls)


def _top_maps(exprs) -> list:
    """The map calls in `exprs` reached through arguments only (no function in between), outermost first."""
    return _top_calls(exprs, AbstractMap)


def _top_calls(exprs, kinds) -> list:
    """The calls of patterns of `kinds` in `exprs` reached through arguments only, outermost first."""
    out, stack = [], list(reversed(exprs))
    while stack:
        e = stack.pop()
        if isinstance(e, FunCall):
            if isinstance(e.f, kinds):
                out.append(e)
            stack.extend(reversed(e.args))
    return out


def _occurs(e, within) -> bool:
    """Whether `e` is a subexpression of `within`."""
    return e in within.subterms()


def _top_maps_by(call, key) -> dict:
    """The map calls among a tuple's components (`_top_maps`) grouped by `key(map)`, those it gives None
    for left out."""
    groups = {}
    for m in _top_maps(call.args):
        k = key(m)
        if k is not None:
            groups.setdefault(k, []).append(m)
    return groups


def zipped_inputs(x) -> Optional[tuple]:
    """`(k, arrays)` for `split-k(zip(arrays))` or `split-k(a)` of parameters (or of their `asVector-n`),
    `(None, arrays)` without the split."""
    chunk = None
    if is_call(x, Split):
        chunk, x = x.f.n, x.args[0]
    arrays = zipped_arrays(x)
    return (chunk, arrays) if all(_is_input(a) for a in arrays) else None


def zipped_arrays(x) -> tuple:
    """The arrays of `zip(arrays)`, or `(x,)` for any other array."""
    return tuple(x.args) if is_call(x, Zip) else (x,)


def _is_input(a) -> bool:
    return isinstance(a, Param) or (is_call(a, AsVector) and isinstance(a.args[0], Param))


def _replaced(e, new: dict):
    """`e` with the calls that are keys of `new`, reached through arguments only, replaced."""
    if e in new:
        return new[e]
    if not isinstance(e, FunCall):
        return e
    args = tuple(_replaced(a, new) for a in e.args)
    return e if all(a is b for a, b in zip(args, e.args)) else FunCall(e.f, args)


def _cheap(e) -> bool:
    """Whether `e` only names or regroups values (duplicating it duplicates no work)."""
    if isinstance(e, (Param, Literal)):
        return True
    return isinstance(e, FunCall) and isinstance(e.f, (Get, Tuple, Zip, Unzip)) and all(_cheap(a) for a in e.args)


def applied(f, value: Expr) -> Expr:
    """`f(value)`: a lambda's body with its parameters substituted where that duplicates no work, a tuple
    spread over the parameters of a function of several."""
    parts = value.args if is_call(value, Tuple) else None
    spread = parts is not None and f.arity == len(parts) > 1
    if isinstance(f, Lambda):
        binding = dict(zip(f.params, parts)) if spread else dict(zip(f.params, (value,))) if f.arity == 1 else None
        if binding and all(_cheap(v) or count_uses(f.body, p) <= 1 or _used_once(f.body, p, v)
                           for p, v in binding.items()):
            return _simplified(substitute(f.body, binding))
    return FunCall(f, tuple(parts) if spread else (value,))


def _used_once(body, p: Param, value) -> bool:
    """Whether every component of the tuple `value` that is not cheap is used at most once as `get-j(p)`."""
    return is_call(value, Tuple) and all(_cheap(c) or _component_uses(body, p, j) <= 1
                                         for j, c in enumerate(value.args))


def _component_uses(e, p: Param, j: int) -> int:
    """How often `get-j(p)`, or `p` itself, occurs free in `e`."""
    if is_call(e, Get) and e.args[0] == p:
        return int(e.f.i == j)
    if isinstance(e, Param):
        return int(e == p)
    if isinstance(e, Lambda) and p in e.params:
        return 0
    return sum(_component_uses(c, p, j) for _, c in e.children())


def _simplified(e):
    """`e` with every `get-i(tuple(a0, ..))` replaced by `ai`, a tuple spread over a function of as many
    parameters (`f(tuple(a, b))` is `f(a, b)`), and a lambda of one parameter applied to a tuple where that
    duplicates no work (`(λe. f(get-0 e, get-1 e))(tuple(a, b))` is `f(a, b)`)."""
    e = e.map_children(_simplified)
    if is_call(e, Get) and is_call(e.args[0], Tuple):
        return e.args[0].args[e.f.i]
    spread = isinstance(e, FunCall) and len(e.args) == 1 and is_call(e.args[0], Tuple)
    if spread and (e.f.arity == len(e.args[0].args) > 1 or isinstance(e.f, Lambda) and e.f.arity == 1):
        return applied(e.f, e.args[0])
    return e


RULES = (tuple_fusion, unzip_fission, ZipMap(), MapZipFusion(), MapZipFlatten(), zip_union,
         TransposePartialReduction(), map_reduce_interchange, map_accum_fusion)
