"""The `lift` command line: each command's job, and one clear line with a non-zero exit for bad input."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lift
from lift.rules import paper_derivations

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

from opencl_device import needs_device


def lift_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "lift.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def assert_one_line_error(result, *fragments):
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_version():
    result = lift_cli("--version")
    assert result.returncode == 0 and lift.__version__ in result.stdout


@needs_device
def test_devices_lists_the_default_device():
    result = lift_cli("devices")
    assert result.returncode == 0
    assert result.stdout.startswith("* #0")


def test_eval_prints_type_and_result():
    result = lift_cli("eval", EXAMPLES / "asum.py", "--size", "N=4096")
    assert result.returncode == 0, result.stderr
    assert "type: Float[1]" in result.stdout and "result shape (1,)" in result.stdout


def test_compile_writes_a_cl_file_and_its_manifest(tmp_path):
    result = lift_cli("compile", EXAMPLES / "asum.py", "--kernel", "asum_intel", "-o", tmp_path / "a.cl",
                      "--size", "N=65536")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "a.json").read_text())
    assert manifest["sizes"] == {"N": 65536} and len(manifest["kernels"]) == 2
    assert "kernel void asum_intel_k0" in (tmp_path / "a.cl").read_text()


def test_rules_lists_every_rule():
    result = lift_cli("rules")
    assert result.returncode == 0
    for name in ("split-join", "partial-reduction", "map-to-workgroup", "vectorize-map", "reorder-to-stride"):
        assert name in result.stdout


def test_derive_prints_figure_8(tmp_path):
    steps = tmp_path / "figure8.json"
    steps.write_text(paper_derivations.FIGURE_8.to_json())
    result = lift_cli("derive", EXAMPLES / "asum.py", "--steps", steps)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].strip() == "reduce(add, 0.0) ∘ map(absf)   (1)"
    assert "=[3(f) reduce-seq-map-seq-fusion]" in lines[-1]


@needs_device
def test_explore_finds_a_kernel_and_resumes(tmp_path):
    args = ("explore", EXAMPLES / "asum.py", "--size", "N=65536", "--budget", "5m", "--max-candidates", "3",
            "--out", tmp_path)
    first = lift_cli(*args)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "asum.cl").is_file() and (tmp_path / "asum.derivation.json").is_file()
    evaluated = re.search(r"(\d+) evaluated now", first.stdout)
    assert evaluated and int(evaluated.group(1)) >= 3, "three candidates, some at several work-group sizes"
    again = lift_cli(*args)
    assert again.returncode == 0, again.stderr
    assert f"0 evaluated now, {evaluated.group(1)} from earlier runs" in again.stdout
    replay = lift_cli("derive", EXAMPLES / "asum.py", "--steps", tmp_path / "asum.derivation.json")
    assert replay.returncode == 0, replay.stderr


def test_missing_file():
    assert_one_line_error(lift_cli("eval", "no/such/file.py"), "no such program file: no/such/file.py")


def test_file_with_a_syntax_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from lift import *\nx = fun([Float], lambda a: a\n")
    assert_one_line_error(lift_cli("eval", broken), "broken.py, line 2: syntax error")


def test_file_with_a_python_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from lift import *\nx = undefined_name + 1\n")
    assert_one_line_error(lift_cli("eval", broken), "broken.py, line 2: NameError")


def test_file_with_an_ill_typed_program(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from lift import *\nN = SizeVar('N')\nbad = fun([ArrayType(Float, N)], lambda x: Join()(x))\n")
    assert_one_line_error(lift_cli("eval", broken), "join expects an array of arrays, got Float[N]")


def test_file_without_a_program(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert_one_line_error(lift_cli("eval", empty), "defines no lift program")


def test_unknown_kernel_lists_the_kernels():
    assert_one_line_error(lift_cli("eval", EXAMPLES / "asum.py", "--kernel", "nope"),
                          "has no kernel 'nope'", "asum, asum_nvidia")


@needs_device
def test_unknown_device_lists_the_devices():
    assert_one_line_error(lift_cli("explore", EXAMPLES / "asum.py", "--device", "no-such-gpu"),
                          "no OpenCL device matches 'no-such-gpu'", "#0")


def test_sizes_the_expression_cannot_take():
    assert_one_line_error(lift_cli("eval", EXAMPLES / "asum.py", "--kernel", "asum_intel", "--size", "N=1000"),
                          "needs N to be a multiple of 32768")


def test_malformed_size_option():
    assert_one_line_error(lift_cli("eval", EXAMPLES / "asum.py", "--size", "N:10"), "--size takes NAME=VALUE")


def test_compiling_a_high_level_kernel_with_a_missing_derivation_says_so(tmp_path):
    assert_one_line_error(lift_cli("compile", EXAMPLES / "asum.py", "--lowering", tmp_path / "none.derivation.json",
                                   "-o", tmp_path / "x.cl"), "no derivation for kernel 'asum'")


@needs_device
def test_a_budget_too_small_to_evaluate_anything(tmp_path):
    assert_one_line_error(lift_cli("explore", EXAMPLES / "asum.py", "--size", "N=65536", "--budget", "0.01s",
                                   "--out", tmp_path), "budget")


@pytest.mark.parametrize("value", ["", "0,x", "1,1", "-1", "64;1"])
def test_malformed_work_group_sizes(value):
    assert_one_line_error(lift_cli("explore", EXAMPLES / "asum.py", "--work-group-sizes", value),
                          "Invalid value for '--work-group-sizes'")


def test_a_malformed_budget():
    assert_one_line_error(lift_cli("explore", EXAMPLES / "asum.py", "--budget", "soon"), "budget")


def test_explore_refuses_sizes_beyond_the_hosts_memory(tmp_path):
    assert_one_line_error(lift_cli("explore", EXAMPLES / "jacobi.py", "--kernel", "jacobi2d", "--size", f"N={1 << 40}",
                                   "--out", tmp_path), "the arrays a (8388608.00 GiB", "host's available memory")
