"""A stencil's vectors at the grid's edges, which check each read, with their windows' folds unrolled or rolled
(`map-seq-unswitch(f, rolled)`): kernel size, build time and run time of both, in one run.

    python -m benchmarks.bench_unswitch_checks [--only conv5x5,box27] [--sizes '{"N": 1024}'] [--builds 2] [--rounds 7]

For each program of `CASES` at its example file's sizes, the default lowering with every window's checked copy
unrolled and rolled (`checked_copies` of `default_lowering`): the bytes of OpenCL C, the build time (as
`benchmarks.bench_kernel_sizes`: a process of its own with the binary caches off, its first call less its
second), builds interleaved A, B, A, B; then both checked against the example's reference and timed in interleaved
rounds (wall clock around a synchronous launch, the inputs already on the device). Prints best and median of each
and unrolled/rolled (above 1: rolled is faster), with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.bench_default_stencils import shifted_sum
from benchmarks.bench_kernel_sizes import first_calls
from benchmarks.measure import checked_and_timed

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CASES = (("conv5x5", "conv5x5"), ("box27", "box27"), ("stencils", "jacobi3d_high"), ("heat3d", "heat3d"))
REFERENCES = {"jacobi3d_high": lambda a, k: shifted_sum(a.astype(np.float64), k.reshape(3, 3, 3).astype(np.float64),
                                                        "clamp")}
"""numpy's result of the kernels whose example file has no `reference`."""
FORMS = ("unrolled", "rolled")
"""The checked copies' forms: `checked_copies` of `lift.rules.default_lowering.default_lowering`."""


def lowered(stem: str, kernel: str, form: str, sizes: dict):
    """The example file, the kernel's name, its sizes (the file's, updated by `sizes`) and its default lowering
    with its checked copies in `form`."""
    from lift.ir.program_file import load_program_file
    from lift.rules.default_lowering import default_lowering
    from lift.rules.engine import RewriteEngine

    pf = load_program_file(EXAMPLES / f"{stem}.py")
    name, expr = pf.kernel(kernel)
    sizes = {**pf.bind(), **sizes}
    derivation = default_lowering(expr, sizes, checked_copies=form)
    return pf, name, sizes, derivation.replay(expr, RewriteEngine(sizes=dict(sizes)))


def build(stem: str, kernel: str, form: str, sizes: dict) -> dict:
    """One form's source size and build time (run in a process of its own, the caches off)."""
    from lift.opencl_gen.compiled import compile

    pf, name, sizes, program = lowered(stem, kernel, form, sizes)
    return first_calls(compile(program, name=name), pf.inputs(name, sizes))


def builds(stem: str, kernel: str, n: int, sizes: dict) -> dict:
    """form → [build dicts], `n` of each, interleaved."""
    env = dict(os.environ, PYOPENCL_NO_CACHE="1", POCL_KERNEL_CACHE="0")
    found = {form: [] for form in FORMS}
    for _ in range(n):
        for form in FORMS:
            done = subprocess.run([sys.executable, "-m", "benchmarks.bench_unswitch_checks", "--build", stem, kernel,
                                   form, json.dumps(sizes)], stdout=subprocess.PIPE, text=True, env=env, check=True)
            found[form].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return found


def run_times(stem: str, kernel: str, rounds: int, sizes: dict) -> dict:
    """form → kernel ms per round (both checked against the example's reference first)."""
    from lift.opencl_gen import runtime
    from lift.opencl_gen.compiled import CompiledProgram

    device = runtime.select_device(None)
    calls, want = {}, None
    for form in FORMS:
        pf, name, bound, program = lowered(stem, kernel, form, sizes)
        inputs = pf.inputs(name, bound, seed=1)
        want = REFERENCES.get(kernel, pf.namespace.get("reference"))(*inputs)
        prepared = CompiledProgram(program, device, bound, name=name).prepare(*inputs)
        prepared.upload()
        calls[form] = (lambda p=prepared: sum(p.launch()), lambda p=prepared: np.asarray(p.download()[0]))
    return checked_and_timed(calls, want, rounds, indent="  ")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated kernels to measure (conv5x5, jacobi3d_high)")
    parser.add_argument("--builds", type=int, default=2, help="builds of each form")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    parser.add_argument("--sizes", default="{}", help='JSON sizes over the files\' (\'{"N": 1024}\')')
    parser.add_argument("--build", nargs=4, metavar=("FILE", "KERNEL", "FORM", "SIZES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print(json.dumps(build(*args.build[:3], json.loads(args.build[3]))))
        return
    only = {s for s in args.only.split(",") if s}
    sizes = json.loads(args.sizes)
    for stem, kernel in CASES:
        if only and kernel not in only:
            continue
        print(f"{kernel} {sizes or ''} (load {_load()})", flush=True)
        made = builds(stem, kernel, args.builds, sizes)
        for form, found in made.items():
            seconds = [b["build_s"] for b in found]
            print(f"  {form:9} {found[0]['bytes']:>8} bytes  build best {min(seconds):.2f} median "
                  f"{statistics.median(seconds):.2f} s", flush=True)
        times = run_times(stem, kernel, args.rounds, sizes)
        for form, ms in times.items():
            print(f"  {form:9} run best {min(ms):.3f} median {statistics.median(ms):.3f} ms", flush=True)
        if len(times) == 2:
            u, r = times["unrolled"], times["rolled"]
            built = {form: statistics.median(b["build_s"] for b in found) for form, found in made.items()}
            print(f"  unrolled/rolled: build {built['unrolled'] / built['rolled']:.2f}x, "
                  f"run best {min(u) / min(r):.2f}x median {statistics.median(u) / statistics.median(r):.2f}x "
                  f"(load {_load()})", flush=True)


if __name__ == "__main__":
    main()
