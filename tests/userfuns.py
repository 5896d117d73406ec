"""User functions the tests share (paper Figure 5, lines 1-3), written in Python so that the interpreter, the
code generator and `vectorize-userfun` all read the same body: `add`, `mult`, `absf` and `neg` are the BLAS
examples' own (`examples/blas.py`), the others the tests'. A test that needs a function of its own (a C body, an
unusual shape, a deliberately non-associative operator) defines it where it is used."""

import sys
from pathlib import Path

from lift import ArrayType, Float, userfun

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from blas import absf, add, mult, neg  # noqa: E402,F401  (re-exported)


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def divide_by(x: Float, total: ArrayType(Float, 1)) -> Float:
    """`x` over a total computed once (a reduction's result, a one-element array: the `let` tests)."""
    return x / total[0]


@userfun
def pair_force(p: Float, q: Float) -> Float:
    """N-body's shape: the pull of `q` on `p`, summed over every `q` (not associative itself)."""
    return (q - p) / (1.0 + (q - p) * (q - p))


@userfun
def avg3(w: ArrayType(Float, 3)) -> Float:
    return (w[0] + w[1] + w[2]) / 3.0


@userfun
def halve(x: Float) -> Float:
    return 0.5 * x


@userfun
def shifted(x: Float) -> Float:
    return x * 0.5 + 1.0


@userfun
def diff(x: Float, y: Float) -> Float:
    return x - y
