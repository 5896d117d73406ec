"""User functions without a source file (a REPL, a notebook, `exec`): `userfun(source=...)` translates the
text; a function that has no source gets one clear error that says so."""

import numpy as np
import pytest

from lift import ArrayType, Float, LiftTypeError, MapGlb, SizeVar, compile, fun, interpret, userfun

N = SizeVar("N")


def test_a_function_defined_by_exec_is_refused_with_the_way_out():
    scope = {"Float": Float}
    exec("def twice(x: Float) -> Float:\n    return x * 2.0\n", scope)
    with pytest.raises(LiftTypeError, match=r"twice: its source code is not available .*userfun\(source="):
        userfun(scope["twice"])


def test_userfun_from_source_runs_in_the_interpreter_and_the_kernel():
    scale = 3.0
    f = userfun(source="""
def affine(x: Float) -> Float:
    y = x * SCALE
    return y + math.sqrt(4.0) if y > 0.5 else -y
""", names={"SCALE": scale})
    a = np.linspace(-1, 1, 33).astype(np.float32)
    y = a * np.float32(scale)
    want = np.where(y > 0.5, y + 2.0, -y)
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(f)(x))
    np.testing.assert_allclose(interpret(program, a), want, rtol=1e-6)
    np.testing.assert_allclose(compile(program)(a), want, rtol=1e-6)


def test_source_errors_name_the_line_and_the_shape():
    with pytest.raises(LiftTypeError, match="exactly one function"):
        userfun(source="x = 1")
    with pytest.raises(LiftTypeError, match="line 2: `while` loops"):
        userfun(source="def f(x: Float) -> Float:\n    while x:\n        x = x\n    return x\n")
