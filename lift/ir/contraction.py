"""Sums on batched values: `reduce(+) ∘ map(*) ∘ zip(a, b)` as one tensor contraction (BLAS where numpy can),
and a sum along one axis.

Inside nested maps, the interpreter's values carry batch axes (`lift.ir.interpreter`), and a value from an
enclosing map is broadcast over the inner maps' axes: a stride-0 view. Matrix multiply's row `a` (batch
`(M, N)`, stride 0 along `N`) and column `b` (stride 0 along `M`) are then `A` and `B^T`, and the sum over
`k` of `a[i, j, k] * b[i, j, k]` is the einsum `ik,jk->ij`, which numpy hands to BLAS: a product that would
otherwise make an `M x N x K` array. Only the order of the additions differs from the element-wise product
and sum, as it does between the reference and a kernel.
"""

from __future__ import annotations

import numpy as np

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def contract(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """`sum(a * b, axis)` for arrays of one shape and dtype, reading each only along the axes it varies on."""
    if a.shape != b.shape or a.dtype != b.dtype or a.ndim > len(_LETTERS):
        raise ValueError(f"contract: operands of shapes {a.shape} and {b.shape}, types {a.dtype} and {b.dtype}")
    out_axes = [i for i in range(a.ndim) if i != axis]
    views, subscripts = [], []
    for x in (a, b):
        kept = [i for i in range(x.ndim) if i == axis or x.strides[i] != 0 or x.shape[i] == 1]
        views.append(x[tuple(slice(None) if i in kept else 0 for i in range(x.ndim))])
        subscripts.append("".join(_LETTERS[i] for i in kept))
    present = [i for i in out_axes if any(_LETTERS[i] in s for s in subscripts)]
    spec = f"{subscripts[0]},{subscripts[1]}->{''.join(_LETTERS[i] for i in present)}"
    result = np.einsum(spec, *views, optimize=True)
    shape = tuple(a.shape[i] if i in present else 1 for i in out_axes)
    return np.broadcast_to(result.reshape(shape), tuple(a.shape[i] for i in out_axes)).astype(a.dtype, copy=False)


def reduce_axis(u: np.ufunc, a: np.ndarray, axis: int) -> np.ndarray:
    """`u.reduce(a, axis)`; a sum of numbers along an axis that is not the last as an einsum, several times
    faster (the N-body's sum over bodies of `float4` accelerations). Along the last axis, `np.add.reduce`
    is as fast and sums pairwise, which rounds less."""
    if u is np.add and a.dtype.kind in "iuf" and axis != a.ndim - 1 and a.ndim <= len(_LETTERS):
        subscripts = _LETTERS[:a.ndim]
        return np.einsum(f"{subscripts}->{subscripts.replace(subscripts[axis], '')}", a)
    return u.reduce(a, axis=axis)
