"""Issue 18's programs written as a new user would, at odd sizes, and a second user's eight (min-plus product, moving
average, axis permutation, grayscale, bilinear form and Frobenius norm, 27-point stencil, Monte-Carlo hashing,
batched gemv) and a third's eight (syrk, doitgen, quaternion product, RGB to HSV, 3x3 median, softmax of columns,
Vandermonde matrix, an fdtd-2d step) and a fourth's eight (a naive DFT, correlation, 3mm, a 31-tap convolution,
nearest centroids, a bilateral filter, a dense GELU layer, a cross-entropy loss), against numpy: the default lowering and, where `lift explore` wrote a winner under
`--explored DIR/<kernel>/`, that winner.

    python -m benchmarks.bench_new_user [--rounds 7] [--explored DIR] [--program attention ...]

Each program's kernel is compiled (`lift.compile`, the default lowering; the winner replayed from its derivation),
checked against the file's numpy `reference` (relative to the output's magnitude), then timed in `--rounds`
interleaved rounds: the kernels' time (the best of 3 launches, inputs on the device) and numpy's `reference` on the
host. Prints best and median times and the ratios numpy / lift (above 1: lift is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import lift
from lift.ir.program_file import load_program_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PROGRAMS = ("attention", "logreg_grad", "sobel", "life", "spmv_ell", "gauss_sep", "maxpool", "lse_outer",
            "batched_matmul", "minplus", "moving_average", "permute3d", "grayscale", "bilinear", "frobenius", "box27",
            "montecarlo", "batched_gemv", "syrk", "doitgen", "quaternion", "rgb2hsv", "median9", "softmax_cols",
            "vandermonde", "fdtd2d", "dft", "correlation", "threemm", "conv1d", "nearest_centroid", "bilateral",
            "dense_gelu", "cross_entropy", "conv2d")


def as_float64(a) -> np.ndarray:
    """`a` as float64; an array of tuples (structs) with a last axis of its fields."""
    a = np.asarray(a)
    return (np.stack([a[f] for f in a.dtype.names], axis=-1) if a.dtype.fields else a).astype(np.float64)


def relative_error(got, want) -> float:
    got = as_float64(got)
    want = np.asarray(want, np.float64).reshape(got.shape)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def kernel_ms(run) -> float:
    return min(sum(run.launch()) for _ in range(3))


def host_ms(f, inputs) -> float:
    start = time.perf_counter()
    f(*inputs)
    return (time.perf_counter() - start) * 1e3


def timed_lowerings(program, sizes: dict, name: str, lowerings: dict, inputs: list, reference, want,
                    rounds: int) -> tuple:
    """`({label: relative error}, {label: kernel ms per round, "numpy": ms per round})` of `program` compiled with
    each of `lowerings` (label: a `lift.compile` lowering), checked against `want`, timed with `reference` in
    `rounds` interleaved rounds."""
    runs, errors = {}, {}
    for label, lowering in lowerings.items():
        compiled = lift.compile(program, sizes=sizes, name=name, lowering=lowering)
        errors[label] = relative_error(compiled(*inputs), want)
        runs[label] = compiled.prepare(*inputs)
        runs[label].upload()
    times = {label: [] for label in (*runs, "numpy")}
    for _ in range(rounds):
        for label, run in runs.items():
            times[label].append(kernel_ms(run))
        times["numpy"].append(host_ms(reference, inputs))
    return errors, times


def bench(name: str, rounds: int, explored) -> list:
    """Rows `(program, contender, sizes, error, best ms, median ms, numpy best / best, numpy median / median)`."""
    pf = load_program_file(EXAMPLES / f"{name}.py")
    program, sizes = pf.kernels[name], pf.bind()
    inputs, reference = pf.inputs(name, sizes), pf.namespace["reference"]
    want = reference(*inputs)
    lowerings = {"default": "default"}
    if explored is not None and (explored / name).is_dir():
        lowerings["explored"] = explored / name
    errors, times = timed_lowerings(program, sizes, name, lowerings, inputs, reference, want, rounds)
    best, median = min(times["numpy"]), statistics.median(times["numpy"])
    text = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return [(name, label, text, errors[label], min(times[label]), statistics.median(times[label]),
             best / min(times[label]), median / statistics.median(times[label])) for label in errors] + \
        [(name, "numpy", text, 0.0, best, median, 1.0, 1.0)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--explored", type=Path, default=None, help="folder of `lift explore --out` folders by kernel")
    parser.add_argument("--program", nargs="*", default=list(PROGRAMS), choices=PROGRAMS)
    args = parser.parse_args(argv)
    print(f"{'program':15} {'contender':9} {'sizes':20} {'rel. error':>10} {'best ms':>9} {'median ms':>9} "
          f"{'numpy/lift best':>15} {'median':>7}")
    for name in args.program:
        for row in bench(name, args.rounds, args.explored):
            print(f"{row[0]:15} {row[1]:9} {row[2]:20} {row[3]:10.1e} {row[4]:9.3f} {row[5]:9.3f} {row[6]:15.2f} "
                  f"{row[7]:7.2f}")


if __name__ == "__main__":
    main()
