"""User functions the tests share (paper Figure 5, lines 1-3), written in Python so that the interpreter, the
code generator and `vectorize-userfun` all read the same body. A test that needs a function of its own (a C body,
an unusual shape, a deliberately non-associative operator) defines it where it is used."""

from lift import ArrayType, Float, userfun


@userfun
def add(x: Float, y: Float) -> Float:
    return x + y


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


@userfun
def neg(x: Float) -> Float:
    return -x


@userfun
def absf(x: Float) -> Float:
    return x if x >= 0.0 else -x


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
