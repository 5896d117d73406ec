"""User functions shared by the BLAS examples (paper Figure 5, lines 1-3)."""

from lift import Float, userfun


@userfun
def add(x: Float, y: Float) -> Float:
    return x + y


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


@userfun
def absf(x: Float) -> Float:
    return x if x >= 0.0 else -x


@userfun
def abs_and_add(acc: Float, x: Float) -> Float:
    return acc + (x if x >= 0.0 else -x)


@userfun
def idf(x: Float) -> Float:
    return x


@userfun
def neg(x: Float) -> Float:
    return -x
