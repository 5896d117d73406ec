"""The user's source line of the nodes a program builds (`lift.ir.source_location`): recorded outside
structural equality, kept through rewrites, and named by errors of type checking and code generation."""

import inspect

import pytest

from lift import ArrayType, Float, LiftCodegenError, LiftTypeError, Map, MapGlb, Reduce, Split, ToLocal, compile, fun
from lift.ir.source_location import location_at
from lift.rules import Rewrite, RewriteEngine
from lift.types.arith import SizeVar

from userfuns import absf, add

N = SizeVar("N")
HERE = "test_source_locations.py"


def line() -> int:
    """The line of the caller."""
    return inspect.currentframe().f_back.f_lineno


def test_calls_record_the_line_that_built_them_outside_equality_and_hashing():
    first = fun([ArrayType(Float, N)], lambda x: Map(absf)(x)); first_line = line()
    second = fun([ArrayType(Float, N)],
                 lambda x: Map(absf)(x)); second_line = line()
    assert first.body.written_at.endswith(f"{HERE}:{first_line}")
    assert second.body.written_at.endswith(f"{HERE}:{second_line}")
    assert first.written_at.endswith(f"{HERE}:{first_line}")
    assert first == second and hash(first) == hash(second)
    assert "written_at" not in repr(first.body)


def test_composition_and_operators_record_the_users_line():
    program = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(lambda v: v * 2.0))(x)); at = line()
    assert program.body.written_at.endswith(f"{HERE}:{at}")
    scale = program.body.args[0].f.f
    assert scale.body.written_at.endswith(f"{HERE}:{at}")


def test_rewrites_keep_the_place_of_the_node_they_replace():
    program = fun([ArrayType(Float, 8)], lambda x: Map(absf)(x)); at = line()
    rewritten = RewriteEngine().apply(program, Rewrite.of("split-join", "body", {"n": 4}))
    assert rewritten.body != program.body
    assert rewritten.body.written_at == program.body.written_at
    inner = rewritten.body.args[0]
    assert inner.written_at is None  # built by the rule
    assert location_at(rewritten, "body.args0.f").endswith(f"{HERE}:{at}")  # the innermost placed node


def test_type_errors_name_the_file_and_line():
    with pytest.raises(LiftTypeError) as error:
        fun([ArrayType(Float, N)],
            lambda x: Reduce(add, 0.0)(
                Map(absf)(Split(4)(x))))
    at = line() - 1
    assert str(error.value).startswith("absf expects argument 1 (x) of type Float, got Float[4] (at body.args0.f.f), "
                                       "written at ")
    assert str(error.value).endswith(f"{HERE}:{at}")


def test_code_generation_errors_name_the_file_and_line():
    program = fun([ArrayType(Float, N)],
                  lambda x: MapGlb(absf)(
                      ToLocal(MapGlb(absf))(x)))
    at = line() - 1
    with pytest.raises(LiftCodegenError) as error:
        compile(program).generated({"N": 64})
    message = str(error.value)
    assert message.startswith("toLocal(map-global(absf)) at body.args0.f: local memory exists only inside a "
                              "map-workgroup, written at ")
    assert message.endswith(f"{HERE}:{at}")


def test_messages_without_paths_are_left_alone():
    from lift.ir.source_location import locate

    program = fun([ArrayType(Float, N)], lambda x: Map(absf)(x)); program_line = line()
    error = locate(LiftTypeError("needs at least 2 arguments, at most 3"), program)
    assert str(error) == "needs at least 2 arguments, at most 3"
    root = locate(LiftTypeError("wrong (at the root)"), program)
    assert str(root).startswith("wrong (at the root), written at ")
    assert str(root).endswith(f"{HERE}:{program_line}")
    assert str(locate(root, program)) == str(root)


def test_replaying_a_rewrite_that_does_not_apply_names_the_place_once():
    from lift.rules import RuleNotApplicable

    program = fun([ArrayType(Float, 8)], lambda x: Map(absf)(x)); at = line()
    with pytest.raises(RuleNotApplicable) as error:
        RewriteEngine().apply(program, Rewrite.of("split-join", "body", {"n": 3}))
    assert str(error.value).endswith(f"{HERE}:{at}") and str(error.value).count("written at") == 1
