"""Programs of several routine calls: the BLAS sequences of the kernel-fusion paper's Table 1.

Each sequence is interpreted at small, non-square sizes and compared with numpy; call graphs, inlining,
sharing of results, printing and the errors of ill-typed calls are checked on them.
"""

import numpy as np
import pytest

import lift
from lift import (ArrayType, CallGraph, Float, FunCall, LiftTypeError, Map, Routine, SizeVar, Transpose, Tuple,
                  UserFun, fun, infer, inline_routines, interpret, paper, python_source, routine)
from routine_sequences import SEQUENCES, assert_matches, has_routine

SMALL = {"K": 64, "M": 32, "N": 48}
N = SizeVar("N")
M = SizeVar("M")


def test_every_sequence_of_table_1_is_a_kernel(seq):
    assert sorted(seq.kernels) == sorted(SEQUENCES)
    assert sorted(seq.namespace["NUMPY"]) == sorted(SEQUENCES)
    assert not any(isinstance(k, Routine) for k in seq.kernels.values())


@pytest.mark.parametrize("name", SEQUENCES)
def test_sequence_matches_numpy(seq, name):
    inputs = seq.inputs(name, SMALL, seed=3)
    assert_matches(interpret(seq.kernels[name], *inputs), seq.namespace["NUMPY"][name](*inputs))


@pytest.mark.parametrize("name", SEQUENCES)
def test_inlining_routines_preserves_meaning(seq, name):
    program = seq.kernels[name]
    inlined = inline_routines(program)
    assert not has_routine(inlined)
    inputs = seq.inputs(name, SMALL, seed=4)
    assert_matches(interpret(inlined, *inputs), interpret(program, *inputs))
    assert infer(inlined).type == infer(program).type


def test_inlining_only_some_routines(seq):
    program = seq.kernels["sgemvt"]
    inlined = inline_routines(program, only=["axpy", seq.namespace["scal"]])
    assert [n.name for n in CallGraph.of(inlined).nodes] == ["gemvt", "gemv"]
    inputs = seq.inputs("sgemvt", SMALL, seed=5)
    assert_matches(interpret(inlined, *inputs), interpret(program, *inputs))
    assert inline_routines(program, only=[]) == program


def test_inlining_renames_binders_that_would_capture_arguments():
    vec = ArrayType(Float, N)
    mult = UserFun("mul", ("x", "y"), "return x * y;", (Float, Float), Float, python=lambda x, y: x * y)
    scale = routine("scale", [Float, vec], lambda a, v: Map(lambda x: mult(a, x))(v))
    program = fun([Float, vec], lambda x, v: scale(x, v))
    a, v = np.float32(3.0), np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(interpret(inline_routines(program), a, v), 3.0 * v)
    assert inline_routines(program) == inline_routines(program)


def test_a_routine_call_is_never_inlined(seq):
    scal = seq.namespace["scal"]
    assert isinstance(scal, Routine) and scal.name == "scal"
    a, x = lift.Param("a", Float), lift.Param("x", ArrayType(Float, N))
    call = scal(a, x)
    assert isinstance(call, FunCall) and call.f is scal and call.args == (a, x)
    assert scal.lam(a, x) != call


def test_routine_declared_as_function_or_decorator():
    vec = ArrayType(Float, N)
    add = UserFun("plus", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
    by_call = routine("twice", [vec], lambda x: Map(lambda e: add(e, e))(x))

    @routine([vec])
    def twice(x):
        return Map(lambda e: add(e, e))(x)

    assert by_call == twice and hash(by_call) == hash(twice)
    assert twice.signature() == "twice(x: Float[N])"
    assert twice != routine("twice", [ArrayType(Float, 4)], lambda x: Map(lambda e: add(e, e))(x))


def test_a_routine_must_not_close_over_outer_parameters():
    outer = lift.Param("a", Float)
    with pytest.raises(LiftTypeError, match="routine scale refers to a"):
        Routine("scale", (ArrayType(Float, N),), fun(lambda x: Map(lambda e: UserFun(
            "mul", ("x", "y"), "return x * y;", (Float, Float), Float)(outer, e))(x)))


def test_one_routine_at_several_sizes(seq):
    gemv = seq.namespace["gemv"]
    mat = ArrayType(ArrayType(Float, N), M)
    program = fun([mat, ArrayType(Float, N), ArrayType(Float, M)],
                  lambda A, x, y: Tuple(gemv(A, x), gemv(Transpose()(A), y)))
    assert str(infer(program).type) == "<Float[M], Float[N]>"
    rng = np.random.default_rng(1)
    A, x, y = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((32, 48), (48,), (32,)))
    assert_matches(interpret(program, A, x, y), (A @ x, A.T @ y))


def test_wrong_vector_length_names_the_routine_and_the_types(seq):
    axpy = seq.namespace["axpy"]
    with pytest.raises(LiftTypeError) as info:
        fun([Float, ArrayType(Float, N), ArrayType(Float, M)], lambda a, x, y: axpy(a, x, y))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("routine axpy(a: Float, x: Float[N], y: Float[N]) applied to (Float, Float[N], Float[M])")
    assert "y should be Float[N], got Float[M]" in message


def test_wrong_matrix_shape_names_the_routine(seq):
    gemv = seq.namespace["gemv"]
    mat = ArrayType(ArrayType(Float, N), M)
    with pytest.raises(LiftTypeError, match=r"routine gemv\(A: Float\[M\]\[N\], x: Float\[N\]\) .*"
                                            r"x should be Float\[N\], got Float\[M\]"):
        fun([mat, ArrayType(Float, M)], lambda A, x: gemv(A, x))


def test_call_graph_of_axpydot(seq):
    g = CallGraph.of(seq.kernels["axpydot"])
    assert g.input_names == ("a", "w", "v", "u")
    assert [(n.id, n.name) for n in g.nodes] == [(0, "copy"), (1, "axpy"), (2, "dot")]
    copy, axpy, dot = g.nodes
    assert [a.source for a in copy.args] == ["w"]
    assert axpy.args[0].sources == ("a",) and paper(axpy.args[0].expr) == "neg(a)"
    assert [a.source for a in axpy.args[1:]] == ["v", 0]
    assert [a.source for a in dot.args] == [1, "u"]
    assert g.edges == ((0, 1), (1, 2))
    assert [o.source for o in g.outputs] == [1, 2]
    assert str(dot.type) == "Float[1]"


def test_call_graph_of_bicgk(seq):
    g = CallGraph.of(seq.kernels["bicgk"])
    assert [(n.name, tuple(a.source for a in n.args)) for n in g.nodes] == [
        ("gemv", ("A", "p")), ("gemvt", ("A", "r"))]
    assert g.edges == ()
    assert [o.source for o in g.outputs] == [0, 1]


def test_call_graph_of_gemver(seq):
    g = CallGraph.of(seq.kernels["gemver"])
    assert [n.name for n in g.nodes] == ["matcopy", "ger", "ger", "gemvt", "axpy", "gemv", "scal"]
    assert g.edges == ((0, 1), (1, 2), (2, 3), (2, 5), (3, 4), (4, 5), (5, 6))
    assert [o.source for o in g.outputs] == [2, 4, 6]
    assert g.consumers(2) == (3, 5) and g.producers(5) == (2, 4)
    assert [a.source for a in g.nodes[5].args] == [2, 4]


def test_call_graph_nodes_are_top_level_calls_only(seq):
    dot = seq.namespace["dot"]
    mat = ArrayType(ArrayType(Float, N), M)
    program = fun([mat, ArrayType(Float, N)], lambda A, x: Map(lambda row: dot(row, x))(A))
    g = CallGraph.of(program)
    assert g.nodes == () and g.edges == ()
    assert g.outputs[0].sources == ("A", "x")


def test_call_graph_argument_expressions(seq):
    gemv = seq.namespace["gemv"]
    mat = ArrayType(ArrayType(Float, N), M)
    program = fun([mat, ArrayType(Float, N)], lambda A, x: gemv(Transpose()(A), gemv(A, x)))
    g = CallGraph.of(program)
    outer = g.nodes[1]
    assert outer.args[0].sources == ("A",) and outer.args[0].source is None
    assert paper(outer.args[0].expr) == "transpose(A)"
    assert outer.args[1].source == 0


def test_call_graph_sees_through_a_let_lambda(seq):
    axpy, copy, dot, neg = (seq.namespace[n] for n in ("axpy", "copy", "dot", "neg"))
    vec = ArrayType(Float, SizeVar("K"))
    program = fun([Float, vec, vec, vec],
                  lambda a, w, v, u: fun(lambda z: Tuple(z, dot(z, u)))(axpy(neg(a), v, copy(w))))
    assert isinstance(program.body.f, lift.Lambda)
    g, expected = CallGraph.of(program), CallGraph.of(seq.kernels["axpydot"])
    assert g.nodes == expected.nodes and g.edges == expected.edges and g.outputs == expected.outputs


def test_a_shared_call_is_computed_once():
    calls = []

    def counted(x, y):
        calls.append(1)
        return x * y

    vec = ArrayType(Float, N)
    mul = UserFun("counted_mul", ("x", "y"), "return x * y;", (Float, Float), Float, python=counted)
    add = UserFun("plus", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
    scale = routine("scale", [Float, vec], lambda a, x: Map(lambda e: mul(a, e))(x))
    vadd = routine("vadd", [vec, vec], lambda x, y: Map(lambda xy: add(lift.Get(xy, 0), lift.Get(xy, 1)))(
        lift.Zip(x, y)))

    def body(a, x):
        z = scale(a, x)
        return Tuple(vadd(z, z), vadd(z, scale(a, x)), z)

    program = fun([Float, vec], body)
    x = np.arange(16, dtype=np.float32)
    twice, again, z = interpret(program, np.float32(2.0), x)
    assert len(calls) == 1
    np.testing.assert_allclose(z, 2 * x)
    np.testing.assert_allclose(twice, 4 * x)
    np.testing.assert_allclose(again, 4 * x)
    g = CallGraph.of(program)
    assert [n.name for n in g.nodes] == ["scale", "vadd"]
    assert [o.source for o in g.outputs] == [1, 1, 0]
    interpret(program, np.float32(2.0), x)
    assert len(calls) == 2


def test_notation_and_source_of_a_sequence(seq):
    assert paper(seq.kernels["bicgk"]) == "λ A, p, r. tuple(gemv(A, p), gemvt(A, r))"
    assert paper(seq.kernels["vadd"]) == "λ w, y, z. axpy(1.0, z, axpy(1.0, y, copy(w)))"
    namespace = {**vars(lift), **seq.namespace}
    for name in SEQUENCES:
        program = seq.kernels[name]
        source = python_source(program)
        assert eval(source, namespace) == program, name
    assert python_source(seq.kernels["waxpby"]).endswith("lambda a, x, b, y: axpy(a, x, scal(b, copy(y))))")
