"""The BLAS sequences of the kernel-fusion paper's Table 1 (from BTO BLAS), as programs of routine calls.

Each sequence is written as a BLAS user writes it: calls of the routines of `blas_routines.py` on the
program's inputs and on earlier calls' results (a Python variable shares a result), returning every
result the sequence defines (a `Tuple` when there are several). Single precision, as in the paper.

The calls are those of the paper's CUBLAS baseline (its Tables 1-2): BLAS's `axpy`, `scal` and `ger`
update their last argument in place, so a sequence whose result must not overwrite an input copies it
first (`copy`, `matcopy`; the paper's tag S, "requires memory copy ... because of the in-place
implementation of some CUBLAS kernels"). A fused kernel computes the copy where it uses it; one kernel per
call moves it through memory, as the library does.

| sequence | operation                                               | calls                                   |
|----------|---------------------------------------------------------|-----------------------------------------|
| AXPYDOT  | `z = w - αv`, `r = zᵀu`                                 | copy, axpy(-α, v, z), dot               |
| ATAX     | `y = Aᵀ(Ax)`                                            | gemv, gemvt                             |
| BiCGK    | `q = Ap`, `s = Aᵀr`                                     | gemv, gemvt                             |
| SGEMV    | `z = αAx + βy`                                          | gemv, axpby                             |
| SGEMVT   | `x = βAᵀy + z`, `w = αAx`                               | gemvt, axpy, gemv, scal                 |
| SSCAL    | `x = αx`                                                | scal                                    |
| GEMVER   | `B = A + u1v1ᵀ + u2v2ᵀ`, `x = βBᵀy + z`, `w = αBx`      | matcopy, ger, ger, gemvt, axpy, gemv, scal |
| GESUMMV  | `y = αAx + βBx`                                         | gemv, gemv, axpby                       |
| MADD     | `C = A + B`                                             | matadd                                  |
| VADD     | `x = w + y + z`                                         | copy, axpy(1, y, x), axpy(1, z, x)      |
| WAXPBY   | `w = αx + βy`                                           | copy, scal(β, w), axpy(α, x, w)         |

Vectors of the BLAS-1 sequences have `K` elements; matrices have `M` rows of `N` elements (`Float[N][M]`).
`NUMPY` holds each sequence's numpy reference, taking the kernel's inputs in order.
"""

import numpy as np

from lift import ArrayType, Float, SizeVar, Tuple, fun

from blas import neg
from blas_routines import axpby, axpy, copy, dot, gemv, gemvt, ger, matadd, matcopy, scal

K = SizeVar("K")
M = SizeVar("M")
N = SizeVar("N")
SIZES = {"K": 1 << 22, "M": 4096, "N": 4096}

Vec = ArrayType(Float, K)
VecM = ArrayType(Float, M)
VecN = ArrayType(Float, N)
Mat = ArrayType(ArrayType(Float, N), M)


def _axpydot(a, w, v, u):
    z = axpy(neg(a), v, copy(w))
    return Tuple(z, dot(z, u))


def _sgemvt(a, b, A, y, z):
    x = axpy(b, gemvt(A, y), z)
    return Tuple(x, scal(a, gemv(A, x)))


def _gemver(a, b, A, u1, v1, u2, v2, y, z):
    B = ger(ger(matcopy(A), u1, v1), u2, v2)
    x = axpy(b, gemvt(B, y), z)
    return Tuple(B, x, scal(a, gemv(B, x)))


axpydot = fun([Float, Vec, Vec, Vec], _axpydot)
atax = fun([Mat, VecN], lambda A, x: gemvt(A, gemv(A, x)))
bicgk = fun([Mat, VecN, VecM], lambda A, p, r: Tuple(gemv(A, p), gemvt(A, r)))
sgemv = fun([Float, Mat, VecN, Float, VecM], lambda a, A, x, b, y: axpby(a, gemv(A, x), b, y))
sgemvt = fun([Float, Float, Mat, VecM, VecN], _sgemvt)
sscal = fun([Float, Vec], lambda a, x: scal(a, x))
gemver = fun([Float, Float, Mat, VecM, VecN, VecM, VecN, VecM, VecN], _gemver)
gesummv = fun([Float, Mat, Float, Mat, VecN], lambda a, A, b, B, x: axpby(a, gemv(A, x), b, gemv(B, x)))
madd = fun([Mat, Mat], lambda A, B: matadd(A, B))
vadd = fun([Vec, Vec, Vec], lambda w, y, z: axpy(1.0, z, axpy(1.0, y, copy(w))))
waxpby = fun([Float, Vec, Float, Vec], lambda a, x, b, y: axpy(a, x, scal(b, copy(y))))


def _axpydot_numpy(a, w, v, u):
    z = w - a * v
    return z, np.atleast_1d(z @ u)


def _sgemvt_numpy(a, b, A, y, z):
    x = b * (A.T @ y) + z
    return x, a * (A @ x)


def _gemver_numpy(a, b, A, u1, v1, u2, v2, y, z):
    B = A + np.outer(u1, v1) + np.outer(u2, v2)
    x = b * (B.T @ y) + z
    return B, x, a * (B @ x)


NUMPY = {
    "axpydot": _axpydot_numpy,
    "atax": lambda A, x: A.T @ (A @ x),
    "bicgk": lambda A, p, r: (A @ p, A.T @ r),
    "sgemv": lambda a, A, x, b, y: a * (A @ x) + b * y,
    "sgemvt": _sgemvt_numpy,
    "sscal": lambda a, x: a * x,
    "gemver": _gemver_numpy,
    "gesummv": lambda a, A, b, B, x: a * (A @ x) + b * (B @ x),
    "madd": lambda A, B: A + B,
    "vadd": lambda w, y, z: w + y + z,
    "waxpby": lambda a, x, b, y: a * x + b * y,
}
