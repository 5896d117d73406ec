"""The work of a program (`lift.ir.work`): user-function applications at bound sizes."""

import pytest

from lift import ArrayType, Float, Iterate, Join, Map, Reduce, SizeVar, Split, fun, userfun
from lift.ir.work import work

from userfuns import add

N = SizeVar("N")


@userfun
def twice(x: Float) -> Float:
    return x + x


@pytest.mark.parametrize("stem, sizes, expected", [
    ("asum", {"N": 10}, 20),  # map(absf) and reduce(add) over 10 elements
    ("matmul", {"M": 2, "K": 3, "N": 5}, 60),  # 2 * 5 dot products of 3 products and 3 sums
    ("md", {"P": 10, "K": 7}, 70),  # 10 particles, 7 neighbours
    ("gemv", {"M": 4, "N": 8}, 76),  # 4 rows: 8 products, 8 sums, a scaling; then 4 scalings, 4 sums
    ("nbody", {"N": 100}, 100 * (100 + 100 + 1)),  # per body: 100 accelerations, 100 sums, a move
])
def test_work_of_the_examples(examples, stem, sizes, expected):
    assert work(examples[stem].kernels[stem], sizes) == expected


def test_views_cost_nothing_and_iterations_repeat():
    program = fun([ArrayType(Float, N)], lambda x: Iterate(3, Join() @ Map(Map(twice)) @ Split(2))(x))
    assert work(program, {"N": 8}) == 3 * 8
    assert work(fun([ArrayType(Float, N)], lambda x: Join()(Split(4)(x))), {"N": 8}) == 0
    assert work(fun([ArrayType(Float, N)], lambda x: Reduce(add, 0.0)(x)), {"N": 8}) == 8
