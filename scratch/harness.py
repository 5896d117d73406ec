"""Check a program file's kernel (default lowering, or a derivation) against its numpy reference and time the
kernels against numpy, interleaved: python scratch/harness.py FILE [--kernel K] [--lowering PATH] [--rounds 7]."""
import argparse, statistics, sys, time, traceback
import numpy as np
import lift
from lift.ir.program_file import load_program_file

ap = argparse.ArgumentParser()
ap.add_argument("file"); ap.add_argument("--kernel"); ap.add_argument("--lowering", default="default")
ap.add_argument("--rounds", type=int, default=7); ap.add_argument("--size", action="append", default=[])
ap.add_argument("--interp", action="store_true")
a = ap.parse_args()
pf = load_program_file(a.file)
name, expr = pf.kernel(a.kernel)
sizes = pf.bind({k: int(v) for k, v in (s.split("=") for s in a.size)})
xs = pf.inputs(name, sizes)
ref = pf.namespace.get("REFERENCES", {}).get(name) or pf.namespace["reference"]
want = ref(*xs)
t0 = time.perf_counter()
prog = lift.compile(expr, sizes=sizes, name=name, lowering=a.lowering)
got = prog(*xs)
print(f"{name} {sizes}: compile+first call {time.perf_counter() - t0:.1f}s")
def err(g, w):
    g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
    return np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)
print("  rel err vs numpy:", err(got, want))
if a.interp:
    print("  rel err interp vs numpy:", err(lift.interpret(expr, *xs), want))
run = prog.prepare(*xs); run.upload()
lt, nt = [], []
for r in range(a.rounds):
    lt.append(min(sum(run.launch()) for _ in range(3)))
    t = time.perf_counter(); ref(*xs); nt.append((time.perf_counter() - t) * 1e3)
b, m = min, statistics.median
print(f"  lift kernels ms best {b(lt):.3f} median {m(lt):.3f}; numpy ms best {b(nt):.3f} median {m(nt):.3f};"
      f" numpy/lift best {b(nt)/b(lt):.2f} median {m(nt)/m(lt):.2f}")
print("  kernels:", len(run.plan.kernels))
