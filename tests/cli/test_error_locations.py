"""Errors of `lift compile` on a broken program file name the user's file and line (`lift.ir.source_location`)."""

import subprocess
import sys
import textwrap


def lift_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "lift.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


PROGRAM = textwrap.dedent('''
    from lift import *
    N = SizeVar("N")

    @userfun
    def absf(x: Float) -> Float:
        return x if x >= 0.0 else -x

    @userfun
    def add(x: Float, y: Float) -> Float:
        return x + y

    ill_typed = fun([ArrayType(Float, N)],
                    lambda x: Reduce(add, 0.0)(
                        Map(absf)(Split(4)(x))))
''')

LOWERED = textwrap.dedent('''
    from lift import *
    N = SizeVar("N")

    @userfun
    def absf(x: Float) -> Float:
        return x if x >= 0.0 else -x

    local_outside_a_workgroup = fun([ArrayType(Float, N)],
                                    lambda x: MapGlb(absf)(
                                        ToLocal(MapGlb(absf))(x)))
''')


def test_a_type_error_names_the_file_line_and_pattern(tmp_path):
    (tmp_path / "ill_typed.py").write_text(PROGRAM)
    result = lift_cli("compile", "ill_typed.py", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("error: ill_typed.py: absf expects argument 1 (x) of type Float, got Float[4] "
                                     "(at body.args0.f.f), written at ill_typed.py:15")


def test_a_code_generation_error_names_the_file_line_and_pattern(tmp_path):
    (tmp_path / "local_outside_a_workgroup.py").write_text(LOWERED)
    result = lift_cli("compile", "local_outside_a_workgroup.py", "--size", "N=1024", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("toLocal(map-global(absf)) at body.args0.f: local memory exists only inside a map-workgroup, written at "
            "local_outside_a_workgroup.py:11") in result.stderr
