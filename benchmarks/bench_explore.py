"""What `lift explore` finds, against the paper's hand-derived expressions and hand-written OpenCL.

    python -m benchmarks.bench_explore [--budget 10m] [--device cpu] [--only asum,dot]

For asum, dot, scal and gemv: explore the high-level program within the budget (resuming from
`lift-out/bench-explore/<device>/<kernel>/` if an earlier run left results there), then measure, in
one run and interleaved so that the machine's drift hits every contender alike, the explored winner,
every hand-derived lowered kernel of the program file (Figure 9's asum expressions, Figure 2's scal,
...), and a hand-written OpenCL kernel. Every contender's output is checked against the reference
interpreter first. The issue's floor: the winner at least 90% as fast as the best of the others.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

import numpy as np
import pyopencl as cl

from lift import interpret
from lift.explore import explore, parse_budget
from lift.explore.rewrite_search import RewriteSearch
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile
from lift.rules import Derivation

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"asum": {"N": 1 << 24}, "dot": {"N": 1 << 24}, "scal": {"N": 1 << 24}, "gemv": {"M": 4096, "N": 4096}}
HAND_LOWERED = {"asum": ("asum_nvidia", "asum_amd", "asum_intel", "asum_cpu"), "dot": ("dot_cpu",),
                "scal": ("scal_vectorised", "scal_vectorised_global", "scal_global"),
                "gemv": ("gemv_workgroup", "gemv_coalesced")}

HAND_WRITTEN = """
kernel void hand_asum(global const float4* x, global float4* partial, const int chunk) {
    int g = get_global_id(0);
    float4 acc = (float4)(0.0f);
    for (int i = 0; i < chunk; i++) acc += fabs(x[g * chunk + i]);
    partial[g] = acc;
}
kernel void hand_dot(global const float4* x, global const float4* y, global float4* partial, const int chunk) {
    int g = get_global_id(0);
    float4 acc = (float4)(0.0f);
    for (int i = 0; i < chunk; i++) acc += x[g * chunk + i] * y[g * chunk + i];
    partial[g] = acc;
}
kernel void sum4(global const float* partial, global float* out, const int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += partial[i];
    out[0] = acc;
}
kernel void hand_scal(const float a, global const float4* x, global float4* out) {
    int g = get_global_id(0);
    out[g] = a * x[g];
}
kernel void hand_gemv(global const float4* A, global const float4* x, global const float* y, global float* out,
                 const int n4, const float alpha, const float beta) {
    int row = get_global_id(0);
    float4 acc = (float4)(0.0f);
    for (int j = 0; j < n4; j++) acc += A[row * n4 + j] * x[j];
    out[row] = alpha * (acc.x + acc.y + acc.z + acc.w) + beta * y[row];
}
"""


class HandWritten:
    """The hand-written kernels of one benchmark, bound to its inputs."""

    def __init__(self, device, stem: str, inputs: list, sizes: dict):
        ctx, self.queue = runtime.context_and_queue(device)
        program = runtime.build(HAND_WRITTEN, device)
        mf = cl.mem_flags
        buf = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
               for a in inputs if isinstance(a, np.ndarray) and a.ndim]
        self.out = np.empty(1 if stem in ("asum", "dot") else next(iter(sizes.values())), np.float32)
        out = cl.Buffer(ctx, mf.READ_WRITE, max(self.out.nbytes, 4 * sizes.get("N", 1)))
        self.out_buf = out

        def kernel(name, *args):
            k = cl.Kernel(program, name)
            k.set_args(*args)
            return k

        if stem in ("asum", "dot"):
            n = sizes["N"]
            chunk, items = 8192, n // (4 * 8192)
            partial = cl.Buffer(ctx, mf.READ_WRITE, 16 * items)
            first = kernel("hand_asum", buf[0], partial, np.int32(chunk)) if stem == "asum" else \
                kernel("hand_dot", buf[0], buf[1], partial, np.int32(chunk))
            self.launches = [(first, (items,), None), (kernel("sum4", partial, out, np.int32(4 * items)), (1,), (1,))]
            self.buffers = buf + [partial, out]
        elif stem == "scal":
            self.launches = [(kernel("hand_scal", np.float32(inputs[0]), buf[0], out), (sizes["N"] // 4,), None)]
            self.buffers = buf + [out]
        else:
            self.launches = [(kernel("hand_gemv", buf[0], buf[1], buf[2], out, np.int32(sizes["N"] // 4),
                                     np.float32(inputs[3]), np.float32(inputs[4])), (sizes["M"],), None)]
            self.buffers = buf + [out]

    def launch(self) -> list:
        events = [cl.enqueue_nd_range_kernel(self.queue, k, g, l) for k, g, l in self.launches]
        cl.wait_for_events(events)
        return [(e.profile.end - e.profile.start) * 1e-6 for e in events]

    def result(self) -> np.ndarray:
        cl.enqueue_copy(self.queue, self.out, self.out_buf)
        return self.out


def winner(out_dir: Path, stem: str, program):
    """The explored winner, replayed from its derivation."""
    saved = json.loads((out_dir / f"{stem}.derivation.json").read_text())
    return Derivation.from_json(json.dumps(saved)).replay(program), saved


def bench(stem: str, device_spec, budget_s: float, runs: int, jobs: int) -> dict:
    device = runtime.select_device(device_spec)
    pf = load_program_file(ROOT / "examples" / f"{stem}.py")
    program, sizes = pf.kernels[stem], SIZES[stem]
    slug = re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")
    out_dir = ROOT / "lift-out" / "bench-explore" / slug / stem
    result = explore(pf, stem, sizes, RewriteSearch(program, sizes), budget_s=budget_s, out_dir=out_dir,
                     device=device_spec, jobs=jobs, progress=False)
    inputs = pf.inputs(stem, sizes)
    reference = interpret(program, *inputs)
    explored, saved = winner(out_dir, stem, program)
    contenders = {f"explored ({len(saved['steps'])} steps)": explored}
    contenders.update({name: pf.kernels[name] for name in HAND_LOWERED[stem]})
    prepared = {}
    for name, p in contenders.items():
        run = compile(p, device, sizes=sizes, name=name.split(" ")[0]).prepare(*inputs)
        run.upload()
        run.launch()
        got, _ = run.download()
        assert np.allclose(got, reference, rtol=1e-3, atol=1e-2 * max(1.0, float(np.abs(reference).max()))), name
        prepared[name] = run
    hand = HandWritten(device, stem, inputs, sizes)
    hand.launch()
    assert np.allclose(hand.result(), reference, rtol=1e-3, atol=1e-2 * max(1.0, float(np.abs(reference).max())))
    times = {name: [] for name in [*prepared, "hand-written OpenCL"]}
    for _ in range(runs + 1):
        for name, run in prepared.items():
            times[name].append(sum(run.launch()))
        times["hand-written OpenCL"].append(sum(hand.launch()))
    medians = {name: statistics.median(t[1:]) for name, t in times.items()}
    return {"stem": stem, "sizes": sizes, "medians": medians, "evaluated": len(result.ranked),
            "expression": saved["expression"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", default="10m", help="explore budget per benchmark")
    parser.add_argument("--device", default=None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", default="asum,dot,scal,gemv")
    args = parser.parse_args(argv)
    device = runtime.select_device(args.device)
    budget_s = parse_budget(args.budget)
    print(f"device: {runtime.device_label(device)}; explore budget {args.budget} per benchmark; "
          f"median of {args.runs} interleaved runs")
    print("\n| benchmark | contender | time (ms) | vs explored |")
    print("|---|---|---:|---:|")
    floors = []
    for stem in args.only.split(","):
        row = bench(stem, args.device, budget_s, args.runs, args.jobs)
        medians = row["medians"]
        explored_name = next(n for n in medians if n.startswith("explored"))
        for name, ms in sorted(medians.items(), key=lambda kv: kv[1]):
            print(f"| {stem} | {name} | {ms:.3f} | {ms / medians[explored_name]:.2f}x |")
        best_other = min(ms for n, ms in medians.items() if n != explored_name)
        floors.append((stem, best_other / medians[explored_name], row["evaluated"], row["expression"]))
    print("\nfloor: explored at least 90% as fast as the best hand-derived expression or hand-written kernel")
    for stem, ratio, evaluated, expression in floors:
        print(f"  {stem}: {ratio:.2f} ({'met' if ratio >= 0.9 else 'MISSED'}; {evaluated} candidates logged) "
              f"winner: {expression}")


if __name__ == "__main__":
    main()
