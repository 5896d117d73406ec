"""Padding: reductions and maps over any length, by computing over a padded view (Brook's virtualised sizes).

A split needs the chunk to divide the length. Rather than peel a remainder into code of its own, the
rules make the length a multiple of the chunk with a view, `pad-to-multiple-k(v)`, that reads the array's
elements and then the constant `v` up to the next multiple of `k`; every chunked derivation (Figures 8
and 9) then applies unchanged, at any size, symbolic or concrete:

    reduce(f, z)         → reduce(f, z) ∘ pad-to-multiple-k(z)
    reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(v)       where g(v) = z
                                (over a zip, each array padded: zip(pad-to-multiple-k(v1) x1, ...))

Both hold where `f(z, z) = z`, as the partial reduction (Figure 3(d)) requires too
(`lift.rules.reduction.requires_absorbing`): the padded elements contribute more copies of `z`, which the
reduction's own `z` absorbs (a neutral `z` contributes `f(a, z) = a`). The second is the first with
the padding pushed through the map (`pad(g(v)) ∘ map(g) = map(g) ∘ pad(v)`): the padded elements are
read as `v`, the zero of their type, and `g(v) = z` is checked by evaluating `g` with the reference
interpreter (so `asum`'s `abs(0) = 0` and `dot`'s `0 * 0 = 0` qualify). The map stays next to the
reduction, which lets the chunks' sequential reductions fuse it (`reduce-seq-map-seq-fusion`). Where no
`v` is known, as for `max(abs(x - y))` from `-inf`, a reduction by an idempotent operator (`max`, `min`:
`f(a, a) = a`) reads its input padded with copies of its last element instead, which change nothing:

    reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(clamp)          (pad-reduction-repeat)

A map computes its padded elements too, and drops their results:

    map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(v)         (n the length; any v: here the zero of its scalars)

`take-n` is a view whose destination drops the writes past `n` (`lift.opencl_gen.views.DroppingView`), so
the output holds the `n` results; the split map moves (Figure 2) then apply at every size.
"""

from __future__ import annotations

import numpy as np

from lift.errors import LiftError
from lift.ir.nodes import FunCall, Lambda, Literal, Param
from lift.ir.patterns import Map, PadToMultiple, Reduce, Take, Tuple, Zip
from lift.ir.ufuncs import ufunc_of
from lift.rules.reduction import requires_absorbing
from lift.rules.rule import requires, rule
from lift.types.types import ArrayType, ScalarType

IDEMPOTENT = (np.fmax, np.fmin, np.maximum, np.minimum)
"""The reductions `f(a, a) = a`, which a repeated element leaves unchanged."""

def _multiples(call, ctx) -> list:
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
    argument rebuilt over the padded arrays."""
    r, arg = call.f, call.args[0]
    requires(isinstance(r.init, Literal) and isinstance(r.init.t, ScalarType),
             f"needs a scalar constant as the neutral element, got {r.init}")
    requires_absorbing(r)
    if not (isinstance(arg, FunCall) and isinstance(arg.f, Map)):
        requires(arg.t.elem == r.init.t, f"needs an array of {r.init.t} (the neutral element's type), got {arg.t}")
        return (arg,), (r.init,), lambda xs: xs[0]
    arrays, zeros, rebuild = _arrays(arg.args[0])
    requires(_maps_to(arg.f.f, zeros, r.init),
             f"the mapped function does not send {', '.join(map(str, zeros))} to the neutral element {r.init}")
    return arrays, zeros, lambda xs: arg.f(rebuild(xs))


def _maps_to(g, values: tuple, z: Literal) -> bool:
    """Whether `g(values)` (a tuple of several) is exactly `z` (the reference interpreter's value)."""
    from lift.ir.interpreter import interpret

    try:
        xs = tuple(Param(f"v{i}", v.t) for i, v in enumerate(values))
        program = Lambda(xs, g(Tuple(*xs)) if len(xs) > 1 else g(xs[0]))
        got = np.asarray(interpret(program, *(v.value for v in values)))
    except (LiftError, TypeError, ValueError):
        return False
    return got.shape == () and got.dtype.kind in "fiub" and got.item() == z.value


def _padded(arrays: tuple, values: tuple, k) -> tuple:
    requires(isinstance(k, int) and not isinstance(k, bool) and k >= 1, f"needs a positive multiple, got {k!r}")
    return tuple(PadToMultiple(k, v)(a) for a, v in zip(arrays, values))


def _reduction_multiples(call, ctx) -> list:
    _reduction_padding(call)
    return _multiples(call, ctx)


def _map_multiples(call, ctx) -> list:
    _arrays(call.args[0])
    return _multiples(call, ctx)


@rule("pad-reduction", figure="any-size", heads=Reduce, sized=True, choices=_reduction_multiples,
      description="a reduction reduces its input padded with its neutral element up to a multiple of k",
      equation="reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(v)    (g(v) = z)")
def pad_reduction(call, k):
    arrays, values, rebuild = _reduction_padding(call)
    return call.f(rebuild(_padded(arrays, values, k)))


def _repeated_padding(call: FunCall):
    """`(arrays, rebuild)` for `pad-reduction-repeat`: the arrays the reduction reads (through its map and zip)."""
    requires(ufunc_of(call.f.f) in IDEMPOTENT, f"the operator is not known to be idempotent (max, min): "
             f"a repeated element would count twice")
    arg = call.args[0]
    if isinstance(arg, FunCall) and isinstance(arg.f, Map):
        arrays, _, rebuild = _arrays(arg.args[0])
        return arrays, lambda xs: arg.f(rebuild(xs))
    return (arg,), lambda xs: xs[0]


def _repeated_multiples(call, ctx) -> list:
    _repeated_padding(call)
    return _multiples(call, ctx)


@rule("pad-reduction-repeat", figure="any-size", heads=Reduce, sized=True, choices=_repeated_multiples,
      description="a reduction by max or min reduces its input padded with copies of its last element up to a "
                  "multiple of k",
      equation="reduce(f, z) ∘ map(g) → reduce(f, z) ∘ map(g) ∘ pad-to-multiple-k(clamp)    (f(a, a) = a)")
def pad_reduction_repeat(call, k):
    arrays, rebuild = _repeated_padding(call)
    return call.f(rebuild(_padded(arrays, ("clamp",) * len(arrays), k)))


@rule("pad-map", figure="any-size", heads=Map, on_functions=False, sized=True, choices=_map_multiples,
      description="a map computes over its input padded up to a multiple of k and keeps the first n results",
      equation="map(f) → take-n ∘ map(f) ∘ pad-to-multiple-k(v)")
def pad_map(call, k):
    arrays, values, rebuild = _arrays(call.args[0])
    return Take(call.t.length)(call.f(rebuild(_padded(arrays, values, k))))


RULES = (pad_reduction, pad_reduction_repeat, pad_map)
