"""The command line's error contract, replayed over a corpus of bad inputs.

Every bad input, whatever the command, option or program file, is one line on stderr starting `error:`,
exit status 1, and no traceback (README, "Errors"). Most cases fail before any OpenCL work and run in
process with click's `CliRunner`; a few run as real subprocesses to show that no traceback reaches stderr.
"""

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lift.cli import main
from lift.rules import paper_derivations

from opencl_device import needs_device

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ASUM, DOT, SCAL = EXAMPLES / "asum.py", EXAMPLES / "dot.py", EXAMPLES / "scal.py"
HEADER = "from lift import *\nN = SizeVar('N')\n"
KERNEL = "k = fun([ArrayType(Float, N)], lambda x: MapGlb(Id())(x))\n"

# Program files that go wrong at import, in their SIZES or in their inputs(), by name: (source, fragment).
PROGRAMS = {
    "raises": ("raise RuntimeError('boom')\n", "line 1: RuntimeError: boom"),
    "exits": ("import sys\nsys.exit(3)\n", "line 2: exits while loading"),
    "exits_zero": ("import sys\nsys.exit()\n", "exits while loading"),
    "prints_then_nothing": ("print('hello from the program file')\n", "defines no lift program"),
    "syntax": ("x = (\n", "syntax error"),
    "name_error": ("y = undefined + 1\n", "line 1: NameError"),
    "import_error": ("import no_such_module_for_lift\n", "ModuleNotFoundError"),
    "empty": ("", "defines no lift program"),
    "ill_typed": (HEADER + "bad = fun([ArrayType(Float, N)], lambda x: Join()(x))\n", "join expects an array"),
    "untyped_only": ("from lift import *\nf = fun(lambda x: x)\n", "defines no lift program"),
    "path_name": (HEADER + "globals()['../../escape'] = fun([ArrayType(Float, N)], lambda x: MapGlb(Id())(x))\n",
                  "defines no lift program"),
    "negative_sizes": (HEADER + KERNEL + "SIZES = {'N': -4}\n", "SIZES must be a dict of size names to positive"),
    "zero_sizes": (HEADER + KERNEL + "SIZES = {'N': 0}\n", "positive integers"),
    "float_sizes": (HEADER + KERNEL + "SIZES = {'N': 4.5}\n", "positive integers"),
    "bool_sizes": (HEADER + KERNEL + "SIZES = {'N': True}\n", "positive integers"),
    "list_sizes": (HEADER + KERNEL + "SIZES = [1024]\n", "SIZES must be a dict"),
    "inputs_raise": (HEADER + KERNEL + "SIZES = {'N': 64}\ndef inputs(k, s, rng):\n    raise ValueError('no data')\n",
                     "inputs() raised ValueError: no data"),
    "inputs_none": (HEADER + KERNEL + "SIZES = {'N': 64}\ndef inputs(k, s, rng):\n    pass\n",
                    "must return a list of 1 value(s)"),
    "inputs_too_many": (HEADER + KERNEL + "SIZES = {'N': 64}\ndef inputs(k, s, rng):\n    return [1, 2]\n",
                        "got 2 values"),
    "inputs_exit": (HEADER + KERNEL + "SIZES = {'N': 64}\ndef inputs(k, s, rng):\n    return 5\n",
                    "got int"),
    "inputs_memory": (HEADER + KERNEL + "SIZES = {'N': 64}\ndef inputs(k, s, rng):\n    raise MemoryError()\n",
                      "do not fit in memory"),
    "negative_tolerance": (HEADER + KERNEL + "TOLERANCE = {'rtol': -1}\n", "TOLERANCE must be {'rtol': r"),
    "tolerance_of_no_kernel": (HEADER + KERNEL + "TOLERANCE = {'j': {'atol': 1}}\n", "or such a dict per kernel"),
    "binary": (None, "program.py"),
}

# Derivation files that are not derivations of the kernel, by name: (text, fragment).
DERIVATIONS = {
    "not_json": ("{steps: oops", "is not a derivation"),
    "a_list": ("[1, 2]", "is not a derivation"),
    "no_steps": ('{"sizes": {}}', "is not a derivation"),
    "steps_not_list": ('{"steps": 5}', "is not a derivation"),
    "step_not_object": ('{"steps": [5]}', "is not a derivation"),
    "unknown_rule": ('{"steps": [{"rule": "no-such-rule", "at": "body"}]}', "no-such-rule"),
    "bad_location": ('{"steps": [{"rule": "split-join", "at": "nowhere.x", "params": {"n": 2}}]}', "step 1"),
    "empty_file": ("", "is not a derivation"),
    "other_kernel": (json.dumps({"kernel": "dot", **json.loads(paper_derivations.FIGURE_8.to_json())}),
                     "a derivation of kernel 'dot', not of 'asum'"),
}


def _cases(tmp: Path) -> list:
    """(id, argv, fragment of the one error line) for every bad input of the corpus."""
    folder, a_file = tmp / "folder", tmp / "plain.txt"
    cases = []
    for name, (_, fragment) in PROGRAMS.items():
        program = tmp / f"program_{name}.py" if name != "binary" else tmp / "program.py"
        for command in ("eval",) if name.startswith("inputs") else ("eval", "compile", "explore"):
            cases.append((f"{command}-program-{name}", [command, program], fragment))
    for name, (_, fragment) in DERIVATIONS.items():
        cases.append((f"derive-{name}", ["derive", ASUM, "--steps", tmp / f"steps_{name}.json"], fragment))
    sizes = [("N:10", "--size takes NAME=VALUE"), ("=5", "--size takes NAME=VALUE"), ("N=", "is not an integer"),
             ("N=abc", "is not an integer"), ("N=-1", "must be positive"), ("N=0", "must be positive"),
             ("n=1024", "has no size variable 'n'; its sizes are: N"), ("M=4", "has no size variable 'M'"),
             ("N=1099511627776", "more than the host's available memory")]
    for value, fragment in sizes:
        for command in ("eval", "explore"):
            cases.append((f"{command}-size-{value}", [command, ASUM, "--size", value], fragment))
    cases.append(("compile-size-typo", ["compile", ASUM, "--kernel", "asum_intel", "--size", "n=1024", "-o",
                                        tmp / "x.cl"], "no size variable 'n'"))
    for command in ("eval", "compile", "explore", "derive"):
        extra = ["--steps", tmp / "steps_ok.json"] if command == "derive" else []
        cases += [
            (f"{command}-missing-program", [command, tmp / "missing.py", *extra], "no such program file"),
            (f"{command}-empty-program", [command, "", *extra], "PROGRAM is an empty path"),
            (f"{command}-program-is-folder", [command, folder, *extra], "is a directory"),
            (f"{command}-unknown-kernel", [command, ASUM, "--kernel", "nope", *extra], "has no kernel 'nope'"),
            (f"{command}-bad-kernel-name", [command, ASUM, "--kernel", "../x", *extra], "has no kernel '../x'"),
            (f"{command}-several-kernels", [command, EXAMPLES / "sequences.py", *extra], "choose one with --kernel"),
            (f"{command}-unknown-option", [command, ASUM, "--bogus", *extra], "No such option '--bogus'"),
            (f"{command}-no-program", [command], "Missing argument 'PROGRAM'"),
            (f"{command}-two-programs", [command, ASUM, DOT, *extra], "unexpected extra argument"),
        ]
    cases += [
        ("eval-seed-negative", ["eval", ASUM, "--seed", "-1"], "-1 is not in the range"),
        ("eval-seed-text", ["eval", ASUM, "--seed", "abc"], "'abc' is not a valid integer"),
        ("eval-seed-float", ["eval", ASUM, "--seed", "1.5"], "is not a valid integer"),
        ("eval-size-too-large", ["eval", ASUM, "--size", "N=1099511627776"], "choose smaller sizes"),
        ("eval-size-not-multiple", ["eval", ASUM, "--kernel", "asum_intel", "--size", "N=1000"],
         "needs N to be a multiple of 32768"),
        ("compile-output-empty", ["compile", ASUM, "--kernel", "asum_intel", "-o", ""], "-o is an empty path"),
        ("compile-output-folder", ["compile", ASUM, "--kernel", "asum_intel", "-o", folder], "is a directory"),
        ("compile-output-manifest", ["compile", ASUM, "--kernel", "asum_intel", "-o", tmp / "K.json"],
         "the manifest is written beside"),
        ("compile-output-no-folder", ["compile", ASUM, "--kernel", "asum_intel", "--size", "N=32768", "--no-check",
                                      "-o", tmp / "no" / "such" / "K.cl"], f"{tmp / 'no' / 'such'}: No such file"),
        ("compile-output-hidden", ["compile", ASUM, "--kernel", "asum_intel", "--size", "N=32768", "--no-check",
                                   "-o", tmp / ".json"], "needs a name other than its manifest's"),
        ("compile-missing-derivation", ["compile", ASUM, "--lowering", tmp / "none.derivation.json", "-o", tmp / "x.cl"],
         "no derivation for kernel 'asum'"),
        ("compile-no-check-flag-value", ["compile", ASUM, "--check", "yes"], "unexpected extra argument"),
        ("explore-jobs-zero", ["explore", ASUM, "--jobs", "0"], "0 is not in the range 1<=x<=256"),
        ("explore-jobs-huge", ["explore", ASUM, "--jobs", "100000"], "is not in the range 1<=x<=256"),
        ("explore-jobs-text", ["explore", ASUM, "--jobs", "many"], "'many' is not a valid integer"),
        ("explore-max-candidates-zero", ["explore", ASUM, "--max-candidates", "0"], "0 is not in the range x>=1"),
        ("explore-max-candidates-negative", ["explore", ASUM, "--max-candidates", "-3"], "not in the range x>=1"),
        ("explore-timeout-zero", ["explore", ASUM, "--timeout", "0"], "0 is not in the range 0<x<=86400"),
        ("explore-timeout-negative", ["explore", ASUM, "--timeout", "-1"], "not in the range 0<x<=86400"),
        ("explore-timeout-nan", ["explore", ASUM, "--timeout", "nan"], "nan is not a number"),
        ("explore-timeout-inf", ["explore", ASUM, "--timeout", "inf"], "not in the range 0<x<=86400"),
        ("explore-timeout-text", ["explore", ASUM, "--timeout", "soon"], "'soon' is not a valid float"),
        ("explore-rtol-negative", ["explore", ASUM, "--rtol", "-0.1"], "not in the range x>=0"),
        ("explore-atol-nan", ["explore", ASUM, "--atol", "nan"], "nan is not a number"),
        ("explore-fp-contract-bad", ["explore", ASUM, "--fp-contract", "fast"], "'fast' is not one of 'on', 'off'"),
        ("explore-seed-negative", ["explore", ASUM, "--seed", "-1"], "-1 is not in the range"),
        ("explore-seed-text", ["explore", ASUM, "--seed", "abc"], "'abc' is not a valid integer"),
        ("explore-budget-text", ["explore", ASUM, "--budget", "soon"], "a budget is a duration"),
        ("explore-budget-zero", ["explore", ASUM, "--budget", "0"], "a budget must be positive"),
        ("explore-budget-negative", ["explore", ASUM, "--budget", "-5m"], "a budget is a duration"),
        ("explore-budget-empty", ["explore", ASUM, "--budget", ""], "a budget is a duration"),
        ("explore-budget-unit", ["explore", ASUM, "--budget", "5d"], "a budget is a duration"),
        ("explore-out-empty", ["explore", ASUM, "--out", ""], "--out is an empty path"),
        ("explore-out-file", ["explore", ASUM, "--out", a_file], "is a file"),
        ("explore-baseline-unknown", ["explore", ASUM, "--baseline", "nope"], "has no kernel 'nope'"),
        ("explore-wgs-letters", ["explore", ASUM, "--work-group-sizes", "a,b"], "is not a comma-separated list"),
        ("explore-wgs-empty", ["explore", ASUM, "--work-group-sizes", ""], "is not a comma-separated list"),
        ("explore-wgs-repeated", ["explore", ASUM, "--work-group-sizes", "1,1"], "must be distinct"),
        ("explore-wgs-negative", ["explore", ASUM, "--work-group-sizes", "-1"], "must be distinct and not negative"),
        ("explore-wgs-separator", ["explore", ASUM, "--work-group-sizes", "64;1"], "is not a comma-separated list"),
        ("explore-sizes-not-multiple", ["explore", ASUM, "--kernel", "asum_intel", "--size", "N=1000"],
         "needs N to be a multiple of 32768"),
        ("explore-option-without-value", ["explore", ASUM, "--jobs"], "Option '--jobs' requires an argument"),
        ("explore-flag-with-value", ["explore", ASUM, "--retry-failed=yes"],
         "Option '--retry-failed' does not take a value"),
        ("explore-plot-with-value", ["explore", ASUM, "--plot=no"], "Option '--plot' does not take a value"),
        ("explore-unknown-device", ["explore", ASUM, "--size", "N=65536", "--device", "no-such-gpu"], "OpenCL"),
        ("explore-device-bad-index", ["explore", ASUM, "--size", "N=65536", "--device", "#99"], "OpenCL"),
        ("explore-devices-without-cluster", ["explore", ASUM, "--size", "N=4096", "--device", "cpu", "--device", "gpu"],
         "several --device need --cluster"),
        ("compile-unknown-device", ["compile", ASUM, "--kernel", "asum_intel", "--size", "N=32768", "--device",
                                    "no-such-gpu", "-o", tmp / "dev.cl"], "OpenCL"),
        ("derive-python-with-value", ["derive", ASUM, "--steps", tmp / "steps_ok.json", "--python=1"],
         "Option '--python' does not take a value"),
        ("derive-steps-missing-option", ["derive", ASUM], "Missing option '--steps'"),
        ("derive-steps-empty", ["derive", ASUM, "--steps", ""], "--steps is an empty path"),
        ("derive-steps-folder", ["derive", ASUM, "--steps", folder], "is a directory"),
        ("derive-steps-missing-file", ["derive", ASUM, "--steps", tmp / "none.json"], "No such file or directory"),
        ("derive-other-program", ["derive", DOT, "--steps", tmp / "steps_ok.json"],
         "a derivation of kernel 'asum', not of 'dot'"),
        ("rules-extra-argument", ["rules", "all"], "unexpected extra argument"),
        ("rules-unknown-option", ["rules", "--all"], "lift rules: No such option '--all'"),
        ("devices-extra-argument", ["devices", "gpu"], "unexpected extra argument"),
        ("unknown-command", ["evaluate", ASUM], "No such command 'evaluate'"),
        ("unknown-global-option", ["--verbose", "eval", ASUM], "lift: No such option '--verbose'"),
    ]
    return cases


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    (tmp / "folder").mkdir()
    (tmp / "plain.txt").write_text("not a folder\n")
    for name, (source, _) in PROGRAMS.items():
        if source is None:
            (tmp / "program.py").write_bytes(b"\x00\xff\xfe binary \x00")
        else:
            (tmp / f"program_{name}.py").write_text(source)
    for name, (text, _) in DERIVATIONS.items():
        (tmp / f"steps_{name}.json").write_text(text)
    (tmp / "steps_ok.json").write_text(json.dumps({"kernel": "asum",
                                                   **json.loads(paper_derivations.FIGURE_8.to_json())}))
    return tmp, {case[0]: case for case in _cases(tmp)}


CASE_IDS = [case[0] for case in _cases(Path("/corpus"))]


def assert_contract(exit_code, stderr, fragment, exception=None):
    assert "Traceback" not in stderr, stderr
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    lines = stderr.strip().splitlines()
    assert exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), (exit_code, stderr)
    assert fragment in lines[0], lines[0]


def test_the_corpus_is_large():
    assert len(CASE_IDS) >= 100 and len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize("case", CASE_IDS)
def test_bad_input_is_one_error_line_and_status_1(corpus, case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is written to the checkout when a case goes wrong
    _, argv, fragment = corpus[1][case]
    result = CliRunner().invoke(main, [str(a) for a in argv])
    assert_contract(result.exit_code, result.stderr, fragment, result.exception)
    assert list(tmp_path.iterdir()) == [], "a refused command writes nothing"


@pytest.mark.parametrize("case", ["eval-program-raises", "explore-jobs-zero", "derive-other_kernel",
                                  "unknown-command", "eval-size-N=1099511627776"])
def test_no_traceback_reaches_stderr_of_a_real_process(corpus, case, tmp_path):
    _, argv, fragment = corpus[1][case]
    result = subprocess.run([sys.executable, "-m", "lift.cli", *map(str, argv)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert_contract(result.returncode, result.stderr, fragment)


def test_explore_plot_without_matplotlib_is_one_line(monkeypatch, tmp_path):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    result = CliRunner().invoke(main, ["explore", str(ASUM), "--plot", "--out", str(tmp_path / "out")])
    assert_contract(result.exit_code, result.stderr, "--plot needs matplotlib", result.exception)


def test_an_unexpected_exception_is_one_line_naming_an_internal_error(monkeypatch):
    import lift.rules
    monkeypatch.setattr(lift.rules, "catalogue", lambda: 1 / 0)
    result = CliRunner().invoke(main, ["rules"])
    assert_contract(result.exit_code, result.stderr, "internal error: ZeroDivisionError", result.exception)


def test_a_closed_pipe_ends_quietly():
    shell = f"{sys.executable} -m lift.cli rules | head -1"
    result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=300)
    assert result.stdout.count("\n") == 1 and result.stderr == "", result.stderr


def test_help_and_version_still_exit_0():
    alone = CliRunner().invoke(main, [])
    assert alone.exit_code == 0 and "Usage: lift [OPTIONS] COMMAND" in alone.stdout
    assert CliRunner().invoke(main, ["--help"]).exit_code == 0
    assert CliRunner().invoke(main, ["explore", "--help"]).exit_code == 0
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0


USERFUNS = HEADER + """from lift.ir.userfun import UserFun
SIZES = {"N": 4096}
bad_c = UserFun("bad_c", ("x",), "return x +;", (Float,), Float, python=lambda x: x)
off_by_one = UserFun("off_by_one", ("x",), "return x + 2.0f;", (Float,), Float, python=lambda x: x + 1)
broken = fun([ArrayType(Float, N)], lambda x: MapGlb(bad_c)(x))
wrong = fun([ArrayType(Float, N)], lambda x: Map(off_by_one)(x))
"""


@needs_device
def test_a_build_error_is_one_line_without_the_compilers_noise(tmp_path):
    (tmp_path / "userfuns.py").write_text(USERFUNS)
    result = subprocess.run([sys.executable, "-m", "lift.cli", "compile", "userfuns.py", "--kernel", "broken"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert_contract(result.returncode, result.stderr, "the OpenCL compiler rejected the generated code")
    assert "error" in result.stderr.split("rejected the generated code", 1)[1], "the compiler's first error"
    assert not (tmp_path / "broken.cl").exists()


@needs_device
def test_explore_in_which_no_candidate_works_exits_1(tmp_path):
    (tmp_path / "userfuns.py").write_text(USERFUNS)
    result = subprocess.run([sys.executable, "-m", "lift.cli", "explore", "userfuns.py", "--kernel", "wrong",
                             "--max-candidates", "1", "--work-group-sizes", "0", "--out", "out"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert_contract(result.returncode, result.stderr, "no candidate of wrong worked (1 failed")
    assert "failed: 1 wrong" in result.stdout


@pytest.mark.parametrize("case", ["no-ray", "no-cluster"])
def test_a_cluster_that_cannot_be_used_is_one_line(tmp_path, case):
    """Without Ray (its import blocked) or with nothing at the cluster's address: one line, at once."""
    if case == "no-cluster" and importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'lift[cluster]')")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    block = "sys.modules['ray'] = None; " if case == "no-ray" else ""
    result = subprocess.run([sys.executable, "-c", f"import sys; {block}from lift.cli import main; main()", "explore",
                             ASUM, "--size", "N=4096", "--cluster", f"127.0.0.1:{port}", "--out", tmp_path / "out"],
                            capture_output=True, text=True, timeout=120)
    fragment = "--cluster needs Ray" if case == "no-ray" else f"cannot connect to the Ray cluster at '127.0.0.1:{port}'"
    assert_contract(result.returncode, result.stderr, fragment)
