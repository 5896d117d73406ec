"""Tiles of the reduction dimension, staged in local memory (Steuwer, Remmelg, Dubach, CASES 2016):

    reduce-seq(f, z)(x) → reduce-seq(λacc, t. join(reduce-seq(f, acc)(t)), z)(split-k(x))          (reduce-seq-split)
    map(λr. reduce-seq(f, z)(g(r)))(R)                                                   (map-fold-interchange)
        → transpose(reduce-seq(λaccs, t. map(λe. f(get-0 e, get-1 e))(zip(accs, t)), [z, .., z])
                    (transpose(map(g)(R))))
    reduce-seq(λacc, t. b, z)(zip(x1, .., xn))                                                   (tile-copy)
        → reduce-seq(λacc, t. (λc1, .., cn. b[get-i t := ci])(map(..(map(id)))(get-1 t), ..), z)(zip(x1, .., xn))
    reduce-seq(f, z) → split-n ∘ copy ∘ join ∘ toPrivate(reduce-seq(f, copy(z)))    (workgroup-private-accumulator)
        copy = map-local[d1](..(map-local[dk](map-seq(..(map-seq(id))))))

The first folds `x` tile by tile, each tile from the accumulator the tiles before it left: the same steps in the
same order (exact for any `f`); for an array accumulator (a fold's result is an array of one accumulator,
joined back: `join` of `[[..]]1`). A zip's arrays are split each, the tile zipped back, so that the tiles of each
array stay arrays of their own (`zip(split-k(a), split-k(b))`, not `split-k(zip(a, b))`).

The second is the interchange of a map and a fold of Figure 3(d) in general (`map-reduce-seq-interchange`,
`lift.rules.interchange`, is the case `g(r) = zip(.., r, ..)` of a high-level map with a constant `z`): the `n`
folds of the map, one per element `r` of `R`, become one fold whose accumulator holds `n` values; step `k`
updates accumulator `i` with `f(acc_i, g(R[i])[k])`, exactly the `i`-th fold's step `k` (exact for any `f`). `g`
may be any function of `r` (a zip with arrays independent of `r` keeps them zipped: `zip(.., transpose(map(g)(R)),
..)`), the map a `map-local` (the fold then runs in all work-items of the work-group together, each step a
`map-local` over the accumulators: `lift.rules.hierarchy`), and `z` any value independent of `r` (replicated by
the map: `map(λr. z)(R)`).

The third copies each array of a fold's step into new memory (a `map(id)` per dimension), which the lowering then
places in local memory (`toLocal(map-local(map-local(id)))`): a work-group's tile of each operand, copied by all its
work-items once per step and read by all of them (CASES 2016's local memory tiles). It is the identity.

The fourth keeps the accumulators of a fold at work-group level (the second's, of `map-local`s) private: the
`map-local[d1] .. map-local[dk]` over the accumulator that its step updates it by copy its initial value in and its
result out, so that each work-item reads and writes only the elements of its own ids, all it holds of the private
array (`lift.opencl_gen.views.OwnedView`). It is the identity (Figure 4(d)'s `private-accumulator` at work-group
level).
"""

from __future__ import annotations

from lift.ir.nodes import FunCall, Lambda, Literal, Param, fresh_param, free_params
from lift.ir.patterns import Get, Id, Join, Map, MapLcl, ReduceSeq, Split, Transpose, Tuple, Zip
from lift.ir.opencl_patterns import ToPrivate, Vectorize
from lift.rules import simplification
from lift.rules.call_fusion import applied
from lift.rules.hierarchy import at_workgroup_level
from lift.rules.memory import identity_copy, private_size
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer
from lift.types.types import ArrayType


def _plain_fold(call, ctx) -> None:
    requires(type(call.f) is ReduceSeq, "not a plain reduce-seq")
    requires(isinstance(call.f.init.t, ArrayType), "the accumulator is not an array (a tile's fold gives [acc]1)")


@rule("reduce-seq-split", figure="CASES16", heads=ReduceSeq, param="k", allowed=_plain_fold,
      description="a sequential fold over tiles of k elements, each tile folded on from the accumulator",
      equation="reduce-seq(f, z)(x) → reduce-seq(λacc, t. join(reduce-seq(f, acc)(t)), z)(split-k(x)) (an array "
               "accumulator; a zip's arrays split each)")
def reduce_seq_split(call, k):
    fold, (x,) = call.f, call.args
    acc, t = fresh_param("acc"), fresh_param("t")
    if isinstance(x, FunCall) and isinstance(x.f, Zip):
        tiles, tile = Zip(*(Split(k)(a) for a in x.args)), Zip(*(Get(i)(t) for i in range(len(x.args))))
    else:
        tiles, tile = Split(k)(x), t
    return ReduceSeq(Lambda((acc, t), Join()(ReduceSeq(fold.f, acc)(tile))), fold.init)(tiles)


def _map_of_fold(call) -> tuple:
    f = call.f.f
    requires(type(call.f) in (Map, MapLcl), "not a map or a map-local")
    requires(isinstance(f, Lambda) and len(f.params) == 1, "the mapped function is not a lambda of one element")
    (r,) = f.params
    fold = f.body
    requires(isinstance(fold, FunCall) and type(fold.f) is ReduceSeq, "the mapped function is not a reduce-seq")
    requires(r not in free_params(fold.f.f) and r not in free_params(fold.f.init),
             "the operator or the initial value depends on the element")
    arg = fold.args[0]
    parts = arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else (arg,)
    at = [i for i, x in enumerate(parts) if r in free_params(x)]
    requires(len(at) == 1, "not exactly one array of the fold depends on the element")
    n = integer(call.args[0].t.length)
    requires(n is not None, "the number of elements is not a constant")
    return fold.f, r, parts, at[0], len(parts) > 1 or parts[0] is not arg, n


def _fold_placeable(call, ctx) -> None:
    if isinstance(call.f, MapLcl):
        requires(at_workgroup_level(tuple(ctx.enclosing())[::-1]),
                 "the fold of map-locals would not run at work-group level (inside map-workgroups and such folds)")


@rule("map-fold-interchange", figure="CASES16", heads=(Map, MapLcl), sized=True, match=_map_of_fold,
      allowed=_fold_placeable,
      description="the sequential folds of a map's elements become one fold of a map over their accumulators",
      equation="map(λr. reduce-seq(f, z)(g(r)))(R) → transpose(reduce-seq(λaccs, t. map(λe. f(get-0 e, get-1 e))"
               "(zip(accs, t)), map(λr. z)(R))(transpose(map(g)(R)))")
def map_fold_interchange(call, fold, r, parts, at, zipped, n):
    m, (rows,) = call.f, call.args
    acc, t, e = fresh_param("acc"), fresh_param("t"), fresh_param("e")
    init = fold.init
    if isinstance(init, Literal):
        inits = Literal(init.value, ArrayType(init.t, n))
    else:
        inits = m.__class__(Lambda((fresh_param("r"),), init), *_dim(m))(rows)
    g = parts[at]
    column = Transpose()(rows if g == r else Map(Lambda((r,), g))(rows))
    if zipped:
        element = Tuple(*(Get(1)(e) if i == at else Get(i)(t) for i in range(len(parts))))
        own, array = Get(at)(t), Zip(*(column if i == at else x for i, x in enumerate(parts)))
    else:
        element, own, array = Get(1)(e), t, column
    step = Lambda((e,), applied(fold.f, Tuple(Get(0)(e), element)))
    update = Lambda((acc, t), m.__class__(step, *_dim(m))(Zip(acc, own)))
    return Transpose()(ReduceSeq(update, inits)(array))


def _dim(m) -> tuple:
    return (m.dim,) if isinstance(m, MapLcl) else ()


def _zipped_step(call) -> tuple:
    fold, (x,) = call.f, call.args
    requires(type(fold) is ReduceSeq, "not a plain reduce-seq")
    requires(isinstance(x, FunCall) and isinstance(x.f, Zip), "the fold's array is not a zip")
    step = fold.f
    requires(isinstance(step, Lambda) and len(step.params) == 2, "the operator is not a lambda of two parameters")
    requires(all(isinstance(a.t.elem, ArrayType) for a in x.args), "an array of the zip holds no arrays")
    requires(not _copied(step.body), "the step's arrays are already copied")
    return (step,)


def _copied(body) -> bool:
    return (isinstance(body, FunCall) and isinstance(body.f, Lambda) and all(
        isinstance(a, FunCall) and _is_identity_copy(a.f) for a in body.args))


def _is_identity_copy(f) -> bool:
    """Whether `f` is `simplification.identity_copy`'s `map^d(id)` (of vectors: `map^d(vectorize-n(id))`)."""
    while isinstance(f, Map):
        f = f.f
    return isinstance(f, Id) or isinstance(f, Vectorize) and isinstance(f.f, Id)


@rule("tile-copy", figure="CASES16", heads=ReduceSeq, on_functions=False, match=_zipped_step,
      description="each array of a fold's step copied into new memory (a work-group's tile, once lowered)",
      equation="reduce-seq(λacc, t. b, z)(zip(x1, .., xn)) → reduce-seq(λacc, t. (λc1, .., cn. b[get-i t := ci])"
               "(map(..(map(id)))(get-1 t), ..), z)(zip(x1, .., xn))")
def tile_copy(call, step):
    acc, t = step.params
    x = call.args[0]
    copies = tuple(fresh_param("tile") for _ in x.args)
    body = _replace_components(step.body, t, copies)
    values = tuple(simplification.identity_copy(a.t.elem)(Get(i)(t)) for i, a in enumerate(x.args))
    return ReduceSeq(Lambda((acc, t), Lambda(copies, body)(*values)), call.f.init)(x)


def _replace_components(body, t, copies):
    """`body` with each `get-i(t)` replaced by `copies[i]`; `t` must occur in no other way."""
    def walk(e):
        if isinstance(e, FunCall) and isinstance(e.f, Get) and e.args == (t,):
            return copies[e.f.i]
        return e.map_children(walk) if not isinstance(e, Param) else e

    replaced = walk(body)
    requires(t not in free_params(replaced), "the step reads its element other than by its components")
    return replaced


def _workgroup_accumulator(call, ctx) -> tuple:
    fold = call.f
    requires(type(fold) is ReduceSeq and isinstance(fold.init.t, ArrayType), "not a reduce-seq of an array")
    requires(at_workgroup_level(tuple(ctx.enclosing())[::-1]), "not at work-group level")
    requires(not (ctx.is_function and isinstance(ctx.parent.node, ToPrivate)), "the result is already private")
    step = fold.f
    requires(isinstance(step, Lambda) and len(step.params) == 2, "the operator is not a lambda of two parameters")
    dims = _accumulator_dims(step.body, step.params[0])
    requires(bool(dims), "the step updates its accumulator with no map-local")
    t = fold.init.t
    for _ in dims:
        t = t.elem
    requires(private_size(t) is not None, "a work-item's part of the accumulator has no constant size")
    return (dims,)


def _accumulator_dims(e, acc) -> tuple:
    """The dimensions of the `map-local`s, outermost first, over the accumulator `acc` and, in their functions, over
    its elements (`map-local[1](λe. map-local[0](..)(zip(get-0 e, ..)))(zip(acc, ..))`) that `e` computes."""
    for node in e.subterms():
        if isinstance(node, FunCall) and isinstance(node.f, MapLcl) and _over(node.args[0], acc):
            f = node.f.f
            inner = (_accumulator_dims(f.body, Get(0)(f.params[0])) if isinstance(f, Lambda) and len(f.params) == 1
                     else ())
            return (node.f.dim,) + inner
    return ()


def _over(x, acc) -> bool:
    return x == acc or (isinstance(x, FunCall) and isinstance(x.f, Zip) and x.args[0] == acc)


def _local_copy(t, dims):
    """`map-local[d1](..(map-local[dk](map-seq(..(map-seq(id))))))` over `t`."""
    inner = t
    for _ in dims:
        inner = inner.elem
    copy = identity_copy(inner)
    for d in reversed(dims):
        copy = MapLcl(copy, d)
    return copy


@rule("workgroup-private-accumulator", figure="4(d)", heads=ReduceSeq, on_functions=False, sized=True,
      choices=lambda call, ctx: [{"dims": _workgroup_accumulator(call, ctx)[0]}],
      description="a work-group's array accumulator in private memory, each work-item holding the elements of its "
                  "map-local ids, copied in and out by them",
      equation="reduce-seq(f, z) → split-n ∘ copy ∘ join ∘ toPrivate(reduce-seq(f, copy(z))), z: [..]n, "
               "copy = map-local[d1](..map-local[dk](map-seq(..(map-seq(id)))))")
def workgroup_private_accumulator(call, dims):
    fold = call.f
    init = ReduceSeq(fold.f, _local_copy(fold.init.t, dims)(fold.init))
    return Split(fold.init.t.length)(_local_copy(fold.init.t, dims)(Join()(ToPrivate(init)(*call.args))))


RULES = (reduce_seq_split, map_fold_interchange, tile_copy, workgroup_private_accumulator)
