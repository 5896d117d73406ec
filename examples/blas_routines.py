"""BLAS routines as lift routines: each one library call, the kernel-fusion paper's elementary functions.

Filipovič et al. (Section 3.3) express BLAS-1 routines as maps and reductions over vectors and BLAS-2
routines as maps of them over the rows of a matrix (their equation (1)). Every routine here is written
over high-level patterns, generic in its sizes: a matrix is `Float[N][M]`, `M` rows of `N` elements.
Programs of several calls (`sequences.py`) apply them; a call stays a call until `inline_routines`.
"""

from lift import ArrayType, Float, Get, Join, Map, Reduce, SizeVar, Transpose, Zip, routine

from blas import add, idf, mult

M = SizeVar("M")
N = SizeVar("N")
VecN = ArrayType(Float, N)
VecM = ArrayType(Float, M)
Mat = ArrayType(ArrayType(Float, N), M)


@routine([Float, VecN])
def scal(a, x):
    """`αx`."""
    return Map(lambda xi: mult(a, xi))(x)


@routine([VecN])
def copy(x):
    """`x`, copied."""
    return Map(idf)(x)


@routine([Mat])
def matcopy(A):
    """`A`, copied."""
    return Map(Map(idf))(A)


@routine([Float, VecN, VecN])
def axpy(a, x, y):
    """`αx + y`."""
    return Map(lambda xy: add(mult(a, Get(xy, 0)), Get(xy, 1)))(Zip(x, y))


@routine([Float, VecN, Float, VecN])
def axpby(a, x, b, y):
    """`αx + βy`, out of place (the updated BLAS's WAXPBY)."""
    return Map(lambda xy: add(mult(a, Get(xy, 0)), mult(b, Get(xy, 1))))(Zip(x, y))


@routine([VecN, VecN])
def dot(x, y):
    """`xᵀy = reduce(+, 0) ∘ map(×) ∘ zip(x, y)`, a `Float[1]`."""
    return (Reduce(add, 0.0) @ Map(mult))(Zip(x, y))


@routine([VecN, VecN])
def vecadd(x, y):
    """`x + y`."""
    return Map(add)(Zip(x, y))


@routine([Mat, Mat])
def matadd(A, B):
    """`A + B`, row by row."""
    return Map(lambda rows: Map(add)(Zip(Get(rows, 0), Get(rows, 1))))(Zip(A, B))


@routine([Mat, VecN])
def gemv(A, x):
    """`Ax`: each row's dot product with `x`, `y_i = dot(A_i, x)` (fusion paper, equation (1))."""
    return Join()(Map(lambda row: dot(row, x))(A))


@routine([Mat, VecM])
def gemvt(A, y):
    """`Aᵀy`: each column's dot product with `y`, `map(dot(·, y)) ∘ transpose(A)`.

    Its reductions run down the columns, across the rows of `A`: `transpose-partial-reduction` turns
    them into per-chunk-of-rows column sums, so that a fused BiCGK kernel reads each chunk of rows of `A`
    once for both `Ap` and `Aᵀr` (fusion paper, Section 4.4), and the partial sums are added after it.
    """
    return Join()(Map(lambda col: dot(col, y))(Transpose()(A)))


@routine([Mat, VecM, VecN])
def ger(A, u, v):
    """`A + uvᵀ`, the rank-1 update: `B_ij = A_ij + u_i v_j`."""
    return Map(lambda ua: Map(lambda av: add(Get(av, 0), mult(Get(ua, 0), Get(av, 1))))(Zip(Get(ua, 1), v)))(
        Zip(u, A))
