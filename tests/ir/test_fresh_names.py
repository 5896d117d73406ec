"""Fresh parameter names are generated per program (lift.ir.names): a rewrite names the parameters it
creates after the program it rewrites, so the same rewrite of the same program gives the same program,
whatever was built before; names never clash with the program's own."""

import numpy as np

from lift import ArrayType, Float, Map, MapGlb, MapSeq, Pad, Param, Reduce, ReduceSeq, UserFun, fun, interpret, paper
from lift.ir.names import highest_number, program_names
from lift.ir.nodes import fresh_param
from lift.opencl_gen.kernels import generate
from lift.rules import Derivation, RewriteEngine
from lift.types.arith import SizeVar

N = SizeVar("N")
absf = UserFun("absf", ("x",), "return fabs(x);", (Float,), Float, python=np.abs)
add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
ENGINE = RewriteEngine()


def _sum_of_abs():
    return fun([ArrayType(Float, N)], lambda x_41: (ReduceSeq(add, 0.0) @ MapSeq(absf))(x_41))


def _fuse(program):
    (rw,) = [rw for rw in ENGINE.rewrites(program) if rw.rule == "reduce-seq-map-seq-fusion"]
    return ENGINE.apply(program, rw)


def test_one_rewrite_of_one_program_gives_one_program_whatever_ran_before():
    program = _sum_of_abs()
    first = _fuse(program)
    for _ in range(7):
        fresh_param("acc")
    _fuse(fun([ArrayType(Float, N)], lambda z_90: (ReduceSeq(add, 0.0) @ MapSeq(absf))(z_90)))
    again = _fuse(program)
    assert again == first and paper(again) == paper(first)
    assert "acc_42" in paper(first) and "x_43" in paper(first)
    x = np.float32([1, -2, 3, -4])
    np.testing.assert_allclose(interpret(first, x, sizes={"N": 4}), interpret(program, x, sizes={"N": 4}))
    np.testing.assert_allclose(interpret(first, x, sizes={"N": 4}), [10.0])


def test_replaying_a_derivation_twice_gives_equal_programs():
    steps = (Derivation().then("map-to-seq", "body.args0").then("reduce-to-seq", "body")
             .then("reduce-seq-map-seq-fusion", "body"))
    source = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
    assert steps.replay(source) == steps.replay(source)


def test_names_in_a_program_scope_continue_above_the_programs_numbered_names():
    program = fun([ArrayType(Float, N)] * 2, lambda a_7, b_12: a_7)
    assert highest_number(program) == 12
    with program_names(program):
        assert [fresh_param(h).name for h in ("acc", "x", "acc")] == ["acc_13", "x_14", "acc_15"]
        with program_names(Param("x_99")):
            assert fresh_param().name == "x_100"
        assert fresh_param().name == "x_16"
    assert highest_number(Param("x_h0badf00d")) == -1


def test_outside_a_scope_names_never_repeat():
    names = {fresh_param("x").name for _ in range(100)}
    assert len(names) == 100


def test_a_programs_kernel_source_does_not_depend_on_what_was_generated_before():
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(absf)(Pad(1, 1, "clamp")(x)))
    first = generate(program).source
    generate(fun([ArrayType(Float, N)], lambda y: MapGlb(absf)(Pad(2, 2, "wrap")(y))))
    fresh_param("pad")
    assert generate(program).source == first
    assert "int pad_0 = clamp(g_0 - 1, 0, (N) - 1);" in first
