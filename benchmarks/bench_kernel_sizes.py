"""The default lowering's kernels of every example program: their size (bytes of OpenCL C) and build time.

    python -m benchmarks.bench_kernel_sizes [--only conv1d,jacobi] [--timeout 300]

For each kernel of `examples/*.py` at the file's sizes: the bytes of C the default lowering generates
(`lift.compile(..., lowering="default")`, a lowered kernel as it is), the time from calling the program to its
result the first time (the driver's build: PoCL builds at `clBuildProgram` and again, per work-group size, at the
first launch) less the time of the second call, and the second call's time. Each kernel runs in a process of
its own with the driver's and PyOpenCL's binary caches off, so that every build is a fresh one (a first
`lift explore` of a program pays it before it measures anything). Kernels over `--bytes` or building longer
than `--seconds` are marked `*`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LIBRARIES = ("blas", "blas_routines")


def measure(path: str, kernel: str) -> dict:
    """One kernel's source size, build time and run time (run in a process of its own)."""
    from lift.ir.program_file import load_program_file
    from lift.opencl_gen.compiled import compile
    from lift.rules.lowering_choice import is_lowered

    pf = load_program_file(Path(path))
    name, expr = pf.kernel(kernel)
    sizes = pf.bind()
    program = compile(expr, name=name, lowering=None if is_lowered(expr) else "default")
    return first_calls(program, pf.inputs(name, sizes))


def first_calls(program, inputs) -> dict:
    """A compiled program's bytes of OpenCL C, its build time (its first call less its second, in a fresh process
    with PyOpenCL's cache off) and its run time (the second call)."""
    source = program.generated_for(*inputs).source
    start = time.perf_counter()
    program(*inputs)
    first = time.perf_counter() - start
    start = time.perf_counter()
    program(*inputs)
    second = time.perf_counter() - start
    return {"bytes": len(source.encode()), "build_s": first - second, "run_s": second}


def kernels(only: set) -> list:
    """`(file, kernel)` of every example program (those named in `only` where it is not empty)."""
    from lift.ir.program_file import load_program_file

    found = []
    for path in sorted(EXAMPLES.glob("*.py")):
        if path.stem in LIBRARIES or (only and path.stem not in only):
            continue
        found.extend((str(path), name) for name in load_program_file(path).kernels)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated program files (stems) to measure")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one kernel may take")
    parser.add_argument("--bytes", type=int, default=30_000, help="the size over which a kernel is marked")
    parser.add_argument("--seconds", type=float, default=5.0, help="the build time over which a kernel is marked")
    parser.add_argument("--measure", nargs=2, metavar=("FILE", "KERNEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    env = dict(os.environ, PYOPENCL_NO_CACHE="1", POCL_KERNEL_CACHE="0")
    print(f"{'program':<22}{'kernel':<28}{'bytes':>10}{'build s':>10}{'run s':>10}")
    for path, name in kernels({s for s in args.only.split(",") if s}):
        stem = Path(path).stem
        try:
            done = subprocess.run([sys.executable, "-m", "benchmarks.bench_kernel_sizes", "--measure", path, name],
                                  capture_output=True, text=True, timeout=args.timeout, env=env)
        except subprocess.TimeoutExpired:
            print(f"{stem:<22}{name:<28}{'timed out':>30}", flush=True)
            continue
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            error = (done.stderr.strip().splitlines() or ["failed"])[-1][:60]
            print(f"{stem:<22}{name:<28}  {error}", flush=True)
            continue
        m = json.loads(lines[-1])
        mark = " *" if m["bytes"] > args.bytes or m["build_s"] > args.seconds else ""
        print(f"{stem:<22}{name:<28}{m['bytes']:>10}{m['build_s']:>10.2f}{m['run_s']:>10.3f}{mark}", flush=True)


if __name__ == "__main__":
    main()
