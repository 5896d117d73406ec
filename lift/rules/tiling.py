"""Tiling: cutting both dimensions of a matrix into tiles (Steuwer, Remmelg, Dubach, CASES 2016).

    split-n ∘ transpose → map(transpose) ∘ transpose ∘ map(split-n)

Splitting the columns of a matrix `X` (the rows of `transpose(X)`) into groups of `n` is the same as
splitting every row of `X` into chunks of `n`, gathering the `j`-th chunk of every row (a transposition) and
transposing each gathered `K × n` block back into `n` columns: element `[j][c][k]` is `X[k][j·n + c]` on both
sides. It lets a map over chunks of columns (after `split-join`) see each chunk as a matrix, the form the
register-blocking rules (`lift.rules.register_blocking`) rewrite.
"""

from __future__ import annotations

from lift.ir.patterns import Map, Split, Transpose
from lift.rules.rule import requires, requires_arg_call, rule


def _split_of_transpose(call) -> None:
    requires_arg_call(call, Transpose, "transpose")
    requires(call.args[0].args[0].t.elem.length is not None, "the transposed matrix has no rows of known length")


@rule("split-transpose", figure="CASES16", heads=Split, on_functions=False, match=_split_of_transpose,
      description="split the columns of a matrix: split each row, gather the chunks, transpose each block back",
      equation="split-n ∘ transpose → map(transpose) ∘ transpose ∘ map(split-n)")
def split_transpose(call):
    x = call.args[0].args[0]
    return Map(Transpose())(Transpose()(Map(Split(call.f.n))(x)))


RULES = (split_transpose,)
