"""Matrix multiply `C = A B`: each element of C is the dot product of a row of A and a column of B,

    map(λa. map(λb. reduce(+, 0) ∘ map(*) ∘ zip(a, b)) ∘ transpose(B))(A),

written as a new user would; `lift explore` derives its tiled, register-blocked lowerings with the macro
rules (`lift.rules.register_blocking`, `lift.rules.tiling`, `lift.rules.interchange`)."""

from lift import (ArrayType, Float, Get, Id, Join, Literal, Map, MapLcl, MapSeq, MapWrg, Reduce, ReduceSeq, SizeVar, Split,
                  ToLocal, ToPrivate, Transpose, Zip, fun)

from blas import add, mult

M = SizeVar("M")
K = SizeVar("K")
N = SizeVar("N")
SIZES = {"M": 1024, "K": 1024, "N": 1024}

matmul = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
             lambda A, B: Map(lambda a: Map(lambda b: (Reduce(add, 0.0) @ Map(mult))(Zip(a, b)))(Transpose()(B)))(A))


def matmul_staged(h: int, w: int, rows: int, cols: int, tk: int, accumulator=ToPrivate):
    """The CASES 2016 matrix multiply with the reduction dimension tiled and staged in local memory, written out by
    hand: work-groups of `rows × cols` work-items (`map-workgroup[1] ∘ map-workgroup[0]`), each computing a block of
    `h × w` results in private accumulators; a work-group's fold over `K` runs in all its work-items together, each
    step copying a `tk`-deep tile of its rows of A and of its columns of B into local memory
    (`toLocal(map-local[1](map-local[0](id)))`), then every work-item folding its block on over the tile
    (`map-local[1](map-local[0](reduce-seq(..., acc)))`). `tk` must divide `K`, `h · rows` divide `M`, `w · cols`
    divide `N`. `accumulator`: the cast of the work-group's accumulators (`ToPrivate`; the code generator refuses
    any other)."""
    copy = MapLcl(MapLcl(Id(), 0), 1)
    zeros = Literal(0.0, ArrayType(ArrayType(ArrayType(ArrayType(Float, w), h), cols), rows))

    def update(acc, r):
        return MapSeq(lambda e: MapSeq(lambda x: add(Get(0)(x), mult(Get(1)(e), Get(1)(x))))(
            Zip(Get(0)(e), Get(1)(r))))(Zip(acc, Get(0)(r)))

    def step(acc, t):
        a_tile = (Split(h) @ ToLocal(copy) @ Join())(Get(0)(t))
        b_tile = (Transpose() @ Map(Split(w)) @ ToLocal(copy) @ Map(Join()) @ Transpose())(Get(1)(t))
        return fun(lambda la, lb: MapLcl(lambda q: MapLcl(lambda p: Join()(ReduceSeq(update, Get(0)(p))(
            Zip(Transpose()(Get(1)(q)), Get(1)(p)))), 0)(Zip(Get(0)(q), lb)), 1)(Zip(acc, la)))(a_tile, b_tile)

    def group(ag, bg):
        a_tiles = (Transpose() @ Map(Transpose()) @ Map(Map(Split(tk))))(ag)
        b_tiles = (Transpose() @ Map(Split(tk)))(bg)
        acc = accumulator(ReduceSeq(step, MapLcl(MapLcl(MapSeq(MapSeq(Id())), 0), 1)(zeros)))(Zip(a_tiles, b_tiles))
        return MapLcl(MapLcl(MapSeq(MapSeq(Id())), 0), 1)(Join()(acc))

    def group_row(ag, B):
        x = MapWrg(lambda bg: group(ag, bg), 0)((Split(cols) @ Transpose() @ Map(Split(w)))(B))
        return (Join() @ Map(Map(Join())) @ Map(Transpose()) @ Transpose() @ Map(Map(Map(Join())))
                @ Map(Map(Transpose())))(x)

    return fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
               lambda A, B: Join()(MapWrg(lambda ag: group_row(ag, B), 1)((Split(rows) @ Split(h))(A))))
