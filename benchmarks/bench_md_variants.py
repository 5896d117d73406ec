"""MD's algorithm written several ways by hand, against lift's kernels, timed interleaved in one run: which ways of
computing it differ on the device, so that a search's candidates could differ as much.

    python -m benchmarks.bench_md_variants [--atoms 12288] [--neighbours 128] [--runs 10] [--device NAME]

The variants (`md_variants.cl`, and `handwritten.cl`'s SHOC kernel and float8 lanes): one work-item per atom
reading its neighbour list along its row (lift's layout) or down a column of the transposed list (SHOC's);
SHOC's kernel (the transposed list, the cutoff a branch); 2, 4 or 8 atoms per work-item, their rows folded at
once (row blocking); 8 atoms per work-item in float8 lanes, each lane gathering one float4 per neighbour, or
three floats from the positions as a struct of arrays (what `struct-of-arrays` would make of them); beside
lift's default lowering of `examples/md.py` and its hand-derived `md_global`. Each is checked against numpy's
forces, then timed (`benchmarks.measure.measure_all`: kernel times from profiling events, best and median over
`ROUNDS` interleaved rounds). Prints each one's best and median time and its speed against lift's default.

Measured on PoCL (AMD EPYC, 2 cores shared, load 4-6; P = 12288, K = 128, best (median) ms over 9-21 interleaved
rounds, several runs): lift's default 1.96-3.99 (3.1-4.7); rows as lift's; columns (the transposed list) 2-3x
slower, SHOC's kernel as slow (its branch costs nothing: the same kernel with a select on the transposed list is as
slow); row blocks of 2, 4, 8 atoms 0.45-0.86x of lift's; float8 lanes gathering float4s 1.0-1.6x lift's best time
and 0.9-1.2x its median; float8 lanes from a struct of arrays 0.8-0.95x. So MD's atoms on lanes are not worth
gathers in user functions on this CPU, and the layout of the neighbour list is what changes its time.
"""

from __future__ import annotations

import argparse
import os
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile

from benchmarks import applications as apps
from benchmarks.contender_cases import CASES, Instance
from benchmarks.measure import Contender, DeviceRun, kernel, measure_all
from benchmarks.opencl_peers import HANDWRITTEN_LANES

VARIANTS = Path(__file__).resolve().parent / "md_variants.cl"
DEFAULT = "lift (default lowering)"


@lru_cache(maxsize=None)
def _program(device):
    return runtime.build(VARIANTS.read_text(), device)


def _hand(inst: Instance, device, name: str, arrays: list, items: int, local=None, program=_program) -> DeviceRun:
    """Kernel `name` over `items` work-items (in groups of `local`): the `arrays` read, the forces written."""
    count, cutoff = inst.inputs[1].shape[1], inst.inputs[2]
    run = DeviceRun(device)
    inputs = [run.input(a) for a in arrays]
    force = run.output(inst.inputs[0].shape)
    k = kernel(program(device), name, *inputs, force, np.int32(count), np.float32(cutoff), inst.constant("LJ1"),
               inst.constant("LJ2"))
    return run.kernels([(k, (items,), local)], lambda out: inst.case.layout(out[0]))


def contenders(inst: Instance, device) -> list:
    """lift's default lowering and hand derivation, then the hand-written variants (module docstring)."""
    positions, neighbours, _ = inst.inputs
    atoms = len(positions)
    rows = [positions, neighbours]
    columns = [positions, np.ascontiguousarray(neighbours.T)]
    soa = [np.ascontiguousarray(positions[:, c]) for c in range(3)] + [neighbours]
    out = [Contender(DEFAULT, "lift", partial(compile(inst.program, device, inst.sizes).prepare, *inst.inputs))]
    for name in inst.case.derived:
        compiled = compile(inst.program_file.kernels[name], device, inst.sizes, name=name)
        out.append(Contender(f"lift {name}", "lift", partial(compiled.prepare, *inst.inputs)))
    hand = [("rows", "md_rows", rows, atoms, None), ("columns", "md_columns", columns, atoms, None)]
    hand += [(f"row blocks of {h}", f"md_row_blocks{h}", rows, atoms // h, None) for h in (2, 4, 8) if atoms % h == 0]
    if atoms % 8 == 0:
        hand += [("float8 lanes, struct of arrays", "md_soa_lanes8", soa, atoms // 8, None),
                 ("float8 lanes, groups of 8", "md_lanes8", rows, atoms // 8, (8,), apps.handwritten_program)]
    out += [Contender(name, "hand", partial(_hand, inst, device, *rest)) for name, *rest in hand]
    out.append(Contender("SHOC (transposed list, branch)", "hand", partial(apps.md_shoc, inst, device)))
    if atoms % 8 == 0:
        out.append(Contender("float8 lanes", "hand", partial(HANDWRITTEN_LANES["md"], inst, device)))
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atoms", type=int, default=12288)
    parser.add_argument("--neighbours", type=int, default=128)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    device = runtime.select_device(args.device)
    case = next(c for c in CASES if c.name == "md")
    inst = Instance.make(case, {"P": args.atoms, "K": args.neighbours})
    print(f"device: {runtime.device_label(device)}; MD P={args.atoms} K={args.neighbours}")
    measured, _ = measure_all(contenders(inst, device), inst.reference, args.runs, transfers=False)
    base = measured[DEFAULT].best_ms if measured[DEFAULT].ok else None
    print(f"  {'variant':34s} {'best ms':>8s} {'median ms':>10s}  lift's default ÷ it (best)")
    for name, m in measured.items():
        if not m.ok:
            print(f"  {name:34s} {m.status}: {m.reason}")
            continue
        ratio = f"{base / m.best_ms:.2f}x" if base else ""
        print(f"  {name:34s} {m.best_ms:8.3f} {m.kernel_ms:10.3f}  {ratio}")
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    return measured


if __name__ == "__main__":
    main()
