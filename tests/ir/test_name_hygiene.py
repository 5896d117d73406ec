"""Name hygiene: no user name can change what a kernel computes. Each program of issue 17 either computes
numpy's answer or is refused with one clear error before the OpenCL compiler sees it."""

import numpy as np
import pytest

from lift import ArrayType, Float, LiftError, LiftTypeError, MapGlb, ReduceSeq, SizeVar, UserFun, compile
from lift.errors import LiftCodegenError
from lift.ir.nodes import Lambda, Param

N = SizeVar("N")
A = np.linspace(0.0, 1.0, 19).astype(np.float32)


def _scale(name: str, size=N):
    p = Param(name, ArrayType(Float, size))
    return Lambda((p,), MapGlb(lambda v: v * 2.0)(p))


@pytest.mark.parametrize("name", ["tmp_0", "g_0", "acc_2", "i_5", "pmem_3", "out", "out1", "lift_k0"])
def test_program_parameters_shaped_like_generated_names_are_refused(name):
    with pytest.raises(LiftCodegenError, match=f"'{name}'.*form of a name the code generator makes"):
        compile(_scale(name))(A)


@pytest.mark.parametrize("name", ["kernel", "float", "int", "get_global_id", "sizeof", "float4"])
def test_program_parameters_that_are_c_words_are_refused(name):
    with pytest.raises(LiftCodegenError, match=f"`{name}` is a keyword or built-in of OpenCL C"):
        compile(_scale(name))(A)


def test_a_size_variable_named_like_a_c_type_computes_or_is_refused():
    try:
        got = compile(_scale("x", SizeVar("int")))(A)
    except LiftError as e:
        assert "int" in str(e) and "OpenCL compiler" not in str(e)
    else:
        np.testing.assert_allclose(got, A * 2.0, rtol=1e-6)


def test_ordinary_names_compute_numpys_answer():
    for name in ("x", "tmp", "acc", "g0x", "input_1"):
        np.testing.assert_allclose(compile(_scale(name))(A), A * 2.0, rtol=1e-6)


def test_raw_userfun_parameter_names_must_be_c_identifiers():
    with pytest.raises(LiftTypeError, match="not a C identifier"):
        UserFun("g", ("x) { return 42.0f; } float g(float y",), "return x;", (Float,), Float)
    with pytest.raises(LiftTypeError, match="`float` is a keyword"):
        UserFun("g", ("float",), "return 1.0f;", (Float,), Float)


def test_userfun_names_that_collide_with_generated_or_c_names_are_refused_at_definition():
    with pytest.raises(LiftTypeError, match="`out` has the form of a name the code generator makes"):
        UserFun("out", ("x",), "return x;", (Float,), Float)
    with pytest.raises(LiftTypeError, match="`kernel` is a keyword"):
        UserFun("kernel", ("x",), "return x;", (Float,), Float)


def test_a_reduction_with_a_user_named_accumulator_parameter_is_right():
    add = UserFun("add2", ("acc", "x"), "return acc + x;", (Float, Float), Float, python=np.add)
    p = Param("acc", ArrayType(Float, N))
    program = Lambda((p,), ReduceSeq(add, 0.0)(p))
    np.testing.assert_allclose(compile(program)(A), [A.sum()], rtol=1e-5)
