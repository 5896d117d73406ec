"""Padding: reductions and maps over any length, by computing over a padded view (Brook's virtualised sizes).

A split needs the chunk to divide the length. Rather than peel a remainder into code of its own, the
rules make the length a multiple of the chunk with a view, `pad-to-multiple-k(v)`, that reads the array's
elements and then the constant `v` up to the next multiple of `k`; every chunked derivation (Figures 8
and 9) then applies unchanged, at any size, symbolic or concrete:

    reduce(f, z)         → reduce(f, z) ∘ pad-to-multiple-k(z)
                                (z a tuple over a zip: zip(pad-to-multiple-k(z1) x1, ...), argmax's pairs)
    reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(v)       where g(v) = z
                                (over a zip, each array padded: zip(pad-to-multiple-k(v1) x1, ...))

Both hold where `f` is associative and commutative and `f(z, z) = z`, as the partial reduction (Figure 3(d))
requires too (`lift.rules.reduction.requires_absorbing`): the padded elements contribute more copies of `z`,
`reduce(f, z)(x ++ [z]*m) = f(f(z, .., z), reduce(f, z)(x)) = reduce(f, z)(x)`. So a product pads with 1 and a
`max` from `-inf` with `-inf`, each reduction with its own `z`, not with 0. The second is the first with the
padding pushed through the map (`pad(g(v)) ∘ map(g) = map(g) ∘ pad(v)`): the padded elements are read as `v`,
the zero of their type, or else `z` itself where the map reads elements of `z`'s type, and `g(v) = z` is
checked by evaluating `g` with the reference interpreter (so `asum`'s `abs(0) = 0`, `dot`'s `0 * 0 = 0` and a
product's `id(1) = 1` qualify). The map stays next to the reduction, which lets the chunks' sequential
reductions fuse it (`reduce-seq-map-seq-fusion`). Where no `v` is known, as for `max(abs(x - y))` from `-inf`,
a reduction by an idempotent operator (`max`, `min`, `and`, `or`: `f(a, a) = a`,
`lift.ir.associativity.is_idempotent`) reads its input padded with copies of its last element instead, which
change nothing:

    reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(clamp)          (pad-reduction-repeat)

and a reduction by any operator with a neutral `z` reads the map's results padded with `z` itself, the first
equation with `map(g)(x)` for `x` (a Monte-Carlo count, `g` an `inside` test of a hashed index that sends no
value to 0). The map then computes its results into memory, no longer fused into the reduction's chunks:

    reduce(f, z) ∘ map(g) → reduce(f, z) ∘ pad-to-multiple-k(z) ∘ map(g)                  (pad-reduction-result)

A map computes its padded elements too, and drops their results:

    map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(v)         (n the length; any v: here the zero of its scalars)

`take-n` is a view whose destination drops the writes past `n` (`lift.opencl_gen.views.DroppingView`), so
the output holds the `n` results; the split map moves (Figure 2) then apply at every size. Padded with copies of
the last element instead, the padded elements' reads need no test, only an index clamped to the array (a loop
reading the same padded element at every step clamps its index once, outside the loop):

    map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(clamp)                                    (pad-map-repeat)

A map over the columns of a matrix padded so (matrix multiply's, a column reduction's) pads the rows instead:

    pad-to-multiple-k(v) ∘ transpose → transpose ∘ map(pad-to-multiple-k(v))              (pad-transpose)

the padded columns are the rows' padded elements (`v` in every element, or, clamped, a copy of the last column),
so that `split-k ∘ transpose` (`split-transpose`, `lift.rules.tiling`) meets it and the columns are blocked at
every size. The first `n` of each row of results, `map(take-n)`, are the first `n` columns:

    map(take-n) → transpose ∘ take-n ∘ transpose                                            (map-take-transpose)

so that they are written through `take`'s destination, which drops the padded columns' writes. A matrix whose
padded rows a map reads again and again (matrix multiply's `B`, once per row of `A`) is padded once, into a
let-bound copy (as `transpose-copy`, `lift.rules.transposition`):

    map(f)(X[map(pad-to-multiple-k(v))(B)]) → (λt. map(f)(X[t]))(map(map(id))(map(pad-to-multiple-k(v))(B)))
                                                                                              (pad-copy)

so that the map reads rows of a multiple of `k` elements, with no test of the padding in its loops: `k`
adjacent elements of a row are adjacent in memory, and read as vectors.
"""

from __future__ import annotations

from lift.errors import LiftError
from lift.ir.associativity import constant_parts, is_constant, is_idempotent
from lift.ir.nodes import FunCall, Lambda, Literal, Param, free_params
from lift.ir.patterns import AbstractMap, Map, PadToMultiple, Reduce, Take, Transpose, Tuple, Zip
from lift.ir.userfun import UserFun
from lift.rules.let_floating import let_copied, replaced
from lift.rules.reduction import requires_absorbing
from lift.rules.rule import requires, requires_arg_call, rule
from lift.types.types import ArrayType, ScalarType

def multiples(call, ctx) -> list:
    """The powers of two up to the length's next one (up to the engine's largest factor where the length is
    unknown) that do not divide the length: where one does, no padding is needed."""
    n = ctx.choices.value(call.args[0].t.length)
    top = ctx.choices.max_factor if n is None else 1 << max(n - 1, 1).bit_length()
    return [{"k": 1 << i} for i in range(1, top.bit_length()) if n is None or n % (1 << i)]


def _zero(t) -> Literal:
    """The zero of the scalars of `t`: a scalar, or an array (of arrays) of them, every element of a padded row
    being the constant (a map over the windows of a stencil pads them so)."""
    scalar = t
    while isinstance(scalar, ArrayType):
        scalar = scalar.elem
    requires(isinstance(scalar, ScalarType), f"pads arrays of scalars or of arrays of them, not of {t}")
    return Literal(0, scalar)


def _arrays(e):
    """The arrays `e` reads (a zip's, or `e` itself), the zero of each, and `e` rebuilt over other arrays."""
    zipped = isinstance(e, FunCall) and isinstance(e.f, Zip)
    arrays = tuple(e.args) if zipped else (e,)
    return arrays, tuple(_zero(a.t.elem) for a in arrays), lambda xs: Zip(*xs) if zipped else xs[0]


def _reduction_padding(call: FunCall):
    """`(arrays, values, rebuild)`: the arrays to pad, the constant each is padded with, and the reduction's
    argument rebuilt over the padded arrays. A reduction of no map pads with `z` (a tuple `z` over a zip: each
    array with its component); one of a map with `v`, the zero of each array's scalars or else `z` itself, the
    first the map sends to `z` (`abs(0) = 0` for a sum, `id(1.0) = 1.0` for a product, whose zero would not do)."""
    r, arg = call.f, call.args[0]
    z = constant_parts(r.init)
    requires(z is not None and all(isinstance(p.t, ScalarType) for p in z),
             f"needs a constant of scalars (or a tuple of them) as the neutral element, got {r.init}")
    requires_absorbing(r)
    if not (isinstance(arg, FunCall) and isinstance(arg.f, Map)):
        requires(arg.t.elem == r.init.t, f"needs an array of {r.init.t} (the neutral element's type), got {arg.t}")
        if len(z) == 1:
            return (arg,), z, lambda xs: xs[0]
        requires(isinstance(arg, FunCall) and isinstance(arg.f, Zip), f"pads tuples only as a zip of arrays, not {arg}")
        return tuple(arg.args), z, lambda xs: Zip(*xs)
    arrays, zeros, rebuild = _arrays(arg.args[0])
    candidates = [zeros] + [z] * (z != zeros and tuple(p.t for p in z) == tuple(a.t.elem for a in arrays))
    values = next((v for v in candidates if _maps_to(arg.f.f, v, z)), None)
    requires(values is not None, f"the mapped function does not send "
             f"{' or '.join(', '.join(map(str, v)) for v in candidates)} to the neutral element {r.init}")
    return arrays, values, lambda xs: arg.f(rebuild(xs))


def _maps_to(g, values: tuple, z: tuple) -> bool:
    """Whether `g(values)` (a tuple of several) is exactly the constant `z` (the reference interpreter's value)."""
    from lift.ir.interpreter import interpret

    try:
        xs = tuple(Param(f"v{i}", v.t) for i, v in enumerate(values))
        program = Lambda(xs, g(Tuple(*xs)) if len(xs) > 1 else g(xs[0]))
        return is_constant(interpret(program, *(v.value for v in values)), z)
    except (LiftError, TypeError, ValueError):
        return False


def _padded(arrays: tuple, values: tuple, k) -> tuple:
    requires(isinstance(k, int) and not isinstance(k, bool) and k >= 1, f"needs a positive multiple, got {k!r}")
    return tuple(PadToMultiple(k, v)(a) for a, v in zip(arrays, values))


def _reduction_multiples(call, ctx) -> list:
    _reduction_padding(call)
    return multiples(call, ctx)


def _map_multiples(call, ctx) -> list:
    _arrays(call.args[0])
    return multiples(call, ctx)


@rule("pad-reduction", figure="any-size", heads=Reduce, sized=True, choices=_reduction_multiples,
      description="a reduction reduces its input padded with its neutral element up to a multiple of k",
      equation="reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(v)    (g(v) = z)")
def pad_reduction(call, k):
    arrays, values, rebuild = _reduction_padding(call)
    return call.f(rebuild(_padded(arrays, values, k)))


def _result_padding(call: FunCall) -> Literal:
    """The scalar neutral element `z` that `pad-reduction-result` pads the results of the reduction's map with."""
    r, arg = call.f, call.args[0]
    requires(isinstance(arg, FunCall) and isinstance(arg.f, Map), "reduces no map (`pad-reduction` pads its input)")
    z = constant_parts(r.init)
    requires(z is not None and len(z) == 1 and isinstance(z[0].t, ScalarType) and arg.t.elem == z[0].t,
             f"needs a scalar constant neutral element of the map's result type {arg.t.elem}, got {r.init}")
    requires_absorbing(r)
    return z[0]


def _result_multiples(call, ctx) -> list:
    _result_padding(call)
    return multiples(call, ctx)


@rule("pad-reduction-result", figure="any-size", heads=Reduce, sized=True, choices=_result_multiples,
      description="a reduction of a map reduces the map's results padded with its neutral element up to a multiple "
                  "of k",
      equation="reduce(f, z) ∘ map(g) → reduce(f, z) ∘ pad-to-multiple-k(z) ∘ map(g)")
def pad_reduction_result(call, k):
    return call.f(_padded((call.args[0],), (_result_padding(call),), k)[0])


def _repeated_padding(call: FunCall):
    """`(arrays, rebuild)` for `pad-reduction-repeat`: the arrays the reduction reads (through its map and zip)."""
    requires(is_idempotent(call.f.f), "the operator is not known to be idempotent (max, min, and, or): "
                                      "a repeated element would count twice")
    arg = call.args[0]
    if isinstance(arg, FunCall) and isinstance(arg.f, Map):
        arrays, _, rebuild = _arrays(arg.args[0])
        return arrays, lambda xs: arg.f(rebuild(xs))
    return (arg,), lambda xs: xs[0]


def _repeated_multiples(call, ctx) -> list:
    _repeated_padding(call)
    return multiples(call, ctx)


@rule("pad-reduction-repeat", figure="any-size", heads=Reduce, sized=True, choices=_repeated_multiples,
      description="a reduction by max or min reduces its input padded with copies of its last element up to a "
                  "multiple of k",
      equation="reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(clamp)    (f(a, a) = a)")
def pad_reduction_repeat(call, k):
    arrays, rebuild = _repeated_padding(call)
    return call.f(rebuild(_padded(arrays, ("clamp",) * len(arrays), k)))


def _constant_map_multiples(call, ctx) -> list:
    """`_map_multiples`, where no padded element is a row that the mapped function passes to a user function: such
    a row of a length not constant is passed as a pointer into its memory, and a padded row of constants is in none
    (`pad-map-repeat` pads with copies of the last row, which is)."""
    arrays, _, _ = _arrays(call.args[0])
    rows = any(isinstance(a.t.elem, ArrayType) for a in arrays)
    requires(not (rows and any(isinstance(n, FunCall) and isinstance(n.f, UserFun) and any(
        isinstance(a.t, ArrayType) and not a.t.length.is_constant for a in n.args) for n in call.f.f.subterms())),
             "the mapped function passes rows to a user function: a padded row of constants is in no memory")
    return _map_multiples(call, ctx)


@rule("pad-map", figure="any-size", heads=Map, on_functions=False, sized=True, choices=_constant_map_multiples,
      description="a map computes over its input padded up to a multiple of k and keeps the first n results",
      equation="map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(v)")
def pad_map(call, k):
    arrays, values, rebuild = _arrays(call.args[0])
    return Take(call.t.length)(call.f(rebuild(_padded(arrays, values, k))))


@rule("pad-map-repeat", figure="any-size", heads=Map, on_functions=False, sized=True, choices=_map_multiples,
      description="a map computes over its input padded with copies of its last element up to a multiple of k and "
                  "keeps the first n results",
      equation="map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(clamp)")
def pad_map_repeat(call, k):
    arrays, _, rebuild = _arrays(call.args[0])
    return Take(call.t.length)(call.f(rebuild(_padded(arrays, ("clamp",) * len(arrays), k))))


@rule("pad-transpose", figure="any-size", heads=PadToMultiple, on_functions=False,
      match=lambda call: requires_arg_call(call, Transpose, "transpose"),
      description="padding the columns of a matrix pads each of its rows",
      equation="pad-to-multiple-k(v) ∘ transpose → transpose ∘ map(pad-to-multiple-k(v))")
def pad_transpose(call):
    return Transpose()(Map(call.f)(call.args[0].args[0]))


@rule("map-take-transpose", figure="any-size", heads=Map, on_functions=False,
      match=lambda call: requires(isinstance(call.f.f, Take), "the mapped function is not a take"),
      description="the first n elements of every row are the first n columns",
      equation="map(take-n) → transpose ∘ take-n ∘ transpose")
def map_take_transpose(call):
    return Transpose()(call.f.f(Transpose()(call.args[0])))


def _padded_rows(call: FunCall) -> tuple:
    """The first `map(pad-to-multiple-k(v))(B)` in the map call, `B` a matrix of scalars reading no parameter bound
    in the call."""
    bound = frozenset(p for n in call.subterms() if isinstance(n, Lambda) for p in n.params)
    for n in call.subterms():
        if (isinstance(n, FunCall) and isinstance(n.f, Map) and isinstance(n.f.f, PadToMultiple)
                and not free_params(n) & bound and isinstance(n.t.elem.elem, ScalarType)):
            return (n,)
    requires(False, "reads no matrix whose rows it pads")


@rule("pad-copy", figure="let", heads=AbstractMap, on_functions=False, match=_padded_rows,
      description="a matrix whose rows a map reads padded is padded once, into a let-bound copy",
      equation="map(f)(X[map(pad-to-multiple-k(v))(B)]) → "
               "(λt. map(f)(X[t]))(map(map(id))(map(pad-to-multiple-k(v))(B)))")
def pad_copy(call: FunCall, padded: FunCall):
    return let_copied(padded, lambda t: replaced(call, padded, t))


RULES = (pad_reduction, pad_reduction_result, pad_reduction_repeat, pad_map, pad_map_repeat, pad_transpose,
         map_take_transpose, pad_copy)
