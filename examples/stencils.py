"""Stencils as Lift writes them (Hagedorn et al., CGO 2018): `pad` and `slide` are views, in any dimension.

`slide2d = map(transpose) ∘ slide(3,1) ∘ map(slide(3,1))` gives the 3x3 neighbourhood of every point and
`pad2d = pad(1,1) ∘ map(pad(1,1))` the boundary (clamp, wrap, mirror or a constant); only the neighbourhood
function computes. The programs are hand-lowered: one `map-global` per dimension of the grid (`map-seq`
inside for the third dimension of `jacobi3d`); the neighbourhood function is a sequential reduction over the
window, or a user function that reads the window as an array (`w[i]`) after a private copy of it. The
`*_high` programs are the same stencils as a user writes them, with high-level patterns only (a weighted sum
`reduce(+, 0) ∘ map(*) ∘ zip(window, weights)` of every neighbourhood, the weights an input): `lift.compile`
lowers them with the default lowering, `lift explore` searches their lowerings.

Each `*_program(boundary)` builds the program for one boundary; the kernels below use `clamp`.
"""

from lift import (ArrayType, Float, Get, Join, Map, MapGlb, MapSeq, Pad, Reduce, ReduceSeq, SizeVar, Slide, ToPrivate,
                  Transpose, Zip, fun, userfun)

N = SizeVar("N")
M = SizeVar("M")
O = SizeVar("O")
SIZES = {"N": 1024, "M": 1024, "O": 64}


@userfun
def add(x: Float, y: Float) -> Float:
    return x + y


@userfun
def identity(x: Float) -> Float:
    return x


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


@userfun
def multiply_and_add(acc: Float, x: Float, w: Float) -> Float:
    return acc + x * w


@userfun
def jacobi3(w: ArrayType(Float, 3)) -> Float:
    return 0.25 * w[0] + 0.5 * w[1] + 0.25 * w[2]


@userfun
def jacobi5(w: ArrayType(Float, 9)) -> Float:
    return 0.2 * (w[1] + w[3] + w[4] + w[5] + w[7])


def slide2d(size, step):
    """`map(transpose) ∘ slide ∘ map(slide)`: the `size x size` neighbourhoods of a 2-D grid."""
    return lambda a: Map(Transpose())(Slide(size, step)(Map(Slide(size, step))(a)))


def pad2d(left, right, boundary):
    """`pad ∘ map(pad)`: both dimensions of a 2-D grid padded."""
    return lambda a: Pad(left, right, boundary)(Map(Pad(left, right, boundary))(a))


def slide3d(size, step):
    """The `size^3` neighbourhoods of a 3-D grid: slide each dimension, then move the window dimensions in."""
    return lambda a: Map(Map(Transpose()))(Map(Transpose())(Slide(size, step)(Map(slide2d(size, step))(a))))


def pad3d(left, right, boundary):
    return lambda a: Pad(left, right, boundary)(Map(pad2d(left, right, boundary))(a))


def _private_copy(window):
    return ToPrivate(MapSeq(identity))(window)


def _weighted_sum(window, weights):
    return ReduceSeq(lambda acc, p: multiply_and_add(acc, Get(p, 0), Get(p, 1)), 0.0)(Zip(window, weights))


def jacobi1d_program(boundary="clamp"):
    """1-D 3-point Jacobi: `map-global(jacobi3) ∘ slide(3,1) ∘ pad(1,1)`, the window copied to private memory."""
    return fun([ArrayType(Float, N)], lambda a: MapGlb(lambda w: jacobi3(_private_copy(w)))(
        Slide(3, 1)(Pad(1, 1, boundary)(a))))


def jacobi1d_sum_program(boundary="clamp"):
    """1-D 3-point sum: a sequential reduction over each window."""
    return fun([ArrayType(Float, N)], lambda a: Join()(MapGlb(ReduceSeq(add, 0.0))(
        Slide(3, 1)(Pad(1, 1, boundary)(a)))))


def jacobi2d_program(boundary="clamp"):
    """2-D 5-point Jacobi over slide2d ∘ pad2d: `jacobi5` reads the 3x3 window joined to 9 values."""
    return fun([ArrayType(ArrayType(Float, N), M)], lambda a: MapGlb(1)(MapGlb(0)(
        lambda nb: jacobi5(_private_copy(Join()(nb)))))(slide2d(3, 1)(pad2d(1, 1, boundary)(a))))


def conv2d_program(boundary="clamp"):
    """2-D 3x3 convolution: a sequential reduction over each window zipped with the weights `k`."""
    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 3), 3)], lambda a, k: Map(Join())(
        MapGlb(1)(MapGlb(0)(lambda nb: _weighted_sum(Join()(nb), Join()(k))))(
            slide2d(3, 1)(pad2d(1, 1, boundary)(a)))))


def jacobi3d_program(boundary="clamp"):
    """3-D 7-point Jacobi: `map-global(1)(map-global(0)(map-seq(...)))` over slide3d ∘ pad3d; the 3x3x3 window
    (joined to 27 values) is zipped with the 7-point weights `k`."""
    return fun([ArrayType(ArrayType(ArrayType(Float, N), M), O), ArrayType(Float, 27)], lambda a, k: Map(Map(Join()))(
        MapGlb(1)(MapGlb(0)(MapSeq(lambda nb: _weighted_sum(Join()(Join()(nb)), k))))(
            slide3d(3, 1)(pad3d(1, 1, boundary)(a)))))


def _dot(window, weights):
    return Reduce(add, 0.0)(Map(mult)(Zip(window, weights)))


def jacobi1d_high_program(boundary="clamp"):
    """The 1-D 3-point Jacobi as a user writes it, for `lift explore`: each window's dot product with the weights
    `k` (0.25, 0.5, 0.25 in `benchmarks.bench_contenders`), `join ∘ map(reduce(+, 0) ∘ map(*) ∘ zip(k)) ∘
    slide(3,1) ∘ pad(1,1)`."""
    return fun([ArrayType(Float, N), ArrayType(Float, 3)], lambda a, k: Join()(Map(lambda w: _dot(w, k))(
        Slide(3, 1)(Pad(1, 1, boundary)(a)))))


def jacobi2d_high_program(boundary="clamp"):
    """The 2-D 5-point Jacobi as a user writes it, for `lift explore`: `conv2d_high` whose 3x3 weights `k` are
    the 5-point cross (0.2 at the centre and its four neighbours, 0 at the corners)."""
    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 3), 3)], lambda a, k: Map(Join())(
        Map(Map(lambda nb: _dot(Join()(nb), Join()(k))))(
            slide2d(3, 1)(pad2d(1, 1, boundary)(a)))))


def jacobi2d5_high_program(boundary="clamp"):
    """The 2-D 5-point Jacobi as the stencil paper writes it (CGO 2018), for `lift explore`: the user function
    `jacobi5` reads the 5 points of the cross from each 3x3 neighbourhood, `map(map(jacobi5 ∘ join)) ∘ slide2d ∘
    pad2d`."""
    return fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(Map(lambda nb: jacobi5(Join()(nb))))(
        slide2d(3, 1)(pad2d(1, 1, boundary)(a))))


def conv2d_high_program(boundary="clamp"):
    """The 3x3 convolution (a 2-D Jacobi with 5-point weights) as a user writes it: `map(map(dot with k)) ∘
    slide2d ∘ pad2d`."""
    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 3), 3)], lambda a, k: Map(Map(
        lambda nb: _dot(Join()(nb), Join()(k))))(slide2d(3, 1)(pad2d(1, 1, boundary)(a))))


def jacobi3d_high_program(boundary="clamp"):
    """3-D 27-point stencil (a 7-point Jacobi with its weights) as a user writes it: `map(map(map(dot with k)))
    ∘ slide3d ∘ pad3d`."""
    return fun([ArrayType(ArrayType(ArrayType(Float, N), M), O), ArrayType(Float, 27)], lambda a, k: Map(Map(Map(
        lambda nb: _dot(Join()(Join()(nb)), k))))(slide3d(3, 1)(pad3d(1, 1, boundary)(a))))


jacobi1d = jacobi1d_program()
jacobi1d_sum = jacobi1d_sum_program()
jacobi2d = jacobi2d_program()
conv2d = conv2d_program()
jacobi3d = jacobi3d_program()
conv2d_zero = conv2d_program(0.0)
conv2d_high = conv2d_high_program()
jacobi1d_high = jacobi1d_high_program()
jacobi2d_high = jacobi2d_high_program()
jacobi2d5_high = jacobi2d5_high_program()
jacobi3d_high = jacobi3d_high_program()
