"""Matrix multiply with the reduction dimension staged in local memory (`register_blocked(.., staged=tk)`) against
the same tiles unstaged (`register_blocked(.., tiles=..)`), timed interleaved in one run.

    python -m benchmarks.bench_staged_tiles [--shape 1024x1024x1024] [--rounds 5]

For each tiling (`h × w` scalar blocks per work-item, work-groups of `rows × cols` work-items, tiles `tk` deep),
the staged kernel and the unstaged one are derived, checked against numpy and timed in interleaved rounds (inputs
already on the device), with numpy's `A @ B` as the yardstick. Prints best and median times, each staged kernel's
ratio to its unstaged twin, the staged winner's to the unstaged winner, and the load (`os.getloadavg`) before and
after: a ratio, not a claim; the machine's other work shows in the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import derive

from benchmarks.measure import checked_and_timed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from matmul import matmul  # noqa: E402

TILINGS = ((8, 8, (4, 4), 8), (4, 16, (4, 4), 16), (4, 4, (8, 8), 8), (8, 8, (8, 1), 8))
"""`(h, w, (rows, cols), tk)`."""


def _call(lowered, sizes, a, b, device):
    prepared = CompiledProgram(lowered, device, sizes).prepare(a, b)
    prepared.upload()
    m, n = sizes["M"], sizes["N"]
    return lambda: prepared.launch(), lambda: np.asarray(prepared.download()[0]).reshape(m, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="1024x1024x1024", help="MxNxK")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    m, n, k = (int(x) for x in args.shape.split("x"))
    sizes = {"M": m, "K": k, "N": n}
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((m, k), (k, n)))
    device = runtime.select_device(None)
    calls = {"numpy A @ B": (lambda: a @ b, lambda: a @ b)}
    for h, w, tiles, tk in TILINGS:
        name = f"h={h} w={w} tiles={tiles[0]}x{tiles[1]}"
        for label, strategy in ((f"{name} staged tk={tk}", register_blocked(h, w, tiles=tiles, staged=tk)),
                                (f"{name} unstaged", register_blocked(h, w, tiles=tiles))):
            calls[label] = _call(derive(strategy, matmul, sizes).replay(matmul), sizes, a, b, device)
    load = os.getloadavg()[0]
    times = checked_and_timed(calls, a.astype(np.float64) @ b, args.rounds)
    print(f"\nmatmul {args.shape} on {runtime.device_label(device)}, {args.rounds} interleaved rounds, "
          f"load {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'kernel':<40}{'best ms':>10}{'median ms':>11}{'staged/unstaged':>17}")
    best = {name: min(ts) for name, ts in times.items()}
    for name, ts in times.items():
        twin = name.split(" staged")[0] + " unstaged"
        ratio = f"{best[name] / best[twin]:>16.2f}x" if " staged" in name and twin in best else ""
        print(f"{name:<40}{best[name]:>10.1f}{statistics.median(ts):>11.1f}{ratio}")
    staged = {name: t for name, t in best.items() if " staged" in name}
    unstaged = {name: t for name, t in best.items() if name.endswith("unstaged")}
    if staged and unstaged:
        s, u = min(staged, key=staged.get), min(unstaged, key=unstaged.get)
        print(f"staged winner {s}: {staged[s]:.1f} ms; unstaged winner {u}: {unstaged[u]:.1f} ms; "
              f"staged/unstaged {staged[s] / unstaged[u]:.2f}x; numpy {best['numpy A @ B']:.1f} ms")


if __name__ == "__main__":
    main()
