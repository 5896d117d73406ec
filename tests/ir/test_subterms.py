"""`Node.subterms()`: every node of a tree, pre-order, checked against the recursive definition over
`Node.children()` on hand-built programs and on every example kernel."""

from lift import ArrayType, Float, FunCall, Map, Reduce, SizeVar, Zip, fun, infer
from lift.ir.nodes import Lambda, Literal, Param
from userfuns import add, mult

N = SizeVar("N")


def _pre_order(node) -> list:
    return [node] + [n for _, c in node.children() for n in _pre_order(c)]


def test_a_node_then_its_children_in_order():
    x = Param("x", ArrayType(Float, N))
    call = FunCall(Map(mult), (x,))
    zero = Literal(0.0, Float)
    program = Lambda((x,), FunCall(Reduce(add, zero), (call,)))
    got = list(program.subterms())
    assert [type(n).__name__ for n in got] == ["Lambda", "Param", "FunCall", "Reduce", "UserFun", "Literal",
                                               "FunCall", "Map", "UserFun", "Param"]
    assert got[0] is program and got[1] is x and got[4] is add and got[5] is zero and got[6] is call
    assert got[8] is mult and got[9] is x


def test_a_leaf_is_its_only_subterm():
    x = Param("x", Float)
    assert list(x.subterms()) == [x]


def test_a_shared_subtree_is_visited_once_per_occurrence():
    x = Param("x", ArrayType(Float, N))
    shared = FunCall(Map(add), (x,))
    pair = FunCall(add, (shared, shared))
    got = list(pair.subterms())
    assert sum(n is shared for n in got) == 2
    assert len(got) == 2 * len(list(shared.subterms())) + 2


def test_a_typed_program_is_walked_like_the_recursive_definition():
    program = infer(fun([ArrayType(Float, N)] * 2, lambda a, b: Reduce(add, 0.0)(Map(mult)(Zip(a, b))))).expr
    assert [id(n) for n in program.subterms()] == [id(n) for n in _pre_order(program)]


def test_every_example_kernel_is_walked_like_the_recursive_definition(examples):
    kernels = [k for file in examples.values() for k in file.kernels.values()]
    assert kernels
    for kernel in kernels:
        assert [id(n) for n in kernel.subterms()] == [id(n) for n in _pre_order(kernel)]
