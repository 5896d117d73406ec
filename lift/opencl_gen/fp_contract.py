"""Floating-point contraction: whether the OpenCL compiler may fuse `a*b + c` into one multiply-add.

OpenCL C lets a compiler contract an expression such as `a*b + c` into a fused multiply-add, rounded once
instead of twice (`FP_CONTRACT` is on by default, OpenCL C 6.10). The reference interpreter computes with
numpy, which never contracts, so on a chaotic computation (Mandelbrot's escape counts) a contracted kernel and
the reference part ways. `#pragma OPENCL FP_CONTRACT OFF` at the top of the source (after its first line, the
comment that the kernel files replace by their header) forbids contraction in the whole program: the kernel
then rounds as the reference does (`lift explore --fp-contract off`).
"""

from __future__ import annotations

from dataclasses import replace

from lift.opencl_gen.program import GeneratedProgram

FP_CONTRACT_OFF = "#pragma OPENCL FP_CONTRACT OFF\n"


def with_fp_contract(g: GeneratedProgram, on: bool) -> GeneratedProgram:
    """`g` as generated where `on` (contraction left to the compiler), else with contraction forbidden."""
    if on or FP_CONTRACT_OFF in g.source:
        return g
    comment, rest = g.source.split("\n", 1)
    return replace(g, source=f"{comment}\n{FP_CONTRACT_OFF}{rest}")
