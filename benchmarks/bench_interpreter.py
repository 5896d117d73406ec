"""The reference interpreter's speed on the paper's BLAS programs (issue target: each under 1 s here).

    python -m benchmarks.bench_interpreter
"""

import time
from pathlib import Path


from lift import interpret
from lift.ir.program_file import load_program_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CASES = [("asum", {"N": 1 << 22}), ("dot", {"N": 1 << 22}), ("scal", {"N": 1 << 22}),
         ("gemv", {"M": 4096, "N": 4096}), ("blackscholes", {"N": 1 << 22}), ("md", {"P": 12288, "K": 128})]


def main():
    print(f"{'program':<14}{'sizes':<22}{'seconds':>9}")
    for stem, sizes in CASES:
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        inputs = pf.inputs(stem, sizes)
        interpret(pf.kernels[stem], *inputs)
        start = time.perf_counter()
        interpret(pf.kernels[stem], *inputs)
        elapsed = time.perf_counter() - start
        print(f"{stem:<14}{', '.join(f'{k}={v}' for k, v in sizes.items()):<22}{elapsed:>9.3f}")


if __name__ == "__main__":
    main()
