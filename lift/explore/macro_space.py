"""The macro-rule search space: register-blocked lowerings wherever the macro rules match.

`lift.rules.macro_rules.register_blocked(h, w, vector, dims)` finds its places by selectors (a map over the
columns of a matrix inside a map over rows: matrix multiply, and any program of that shape), at every product
outside every map (`blocked_products`: a user function of its results split off first, 2mm's and covariance's; a
transposed left operand, covariance's `Xᵀ`, copied first or not, `left_rows_copied`),
after what the default lowering does first (iterations unrolled, elements named, invariants hoisted), the rest
lowered by the default lowering; so this space only enumerates its parameters, constrained:

- `w` (columns per work-item) and `h` (rows per work-item) divide the lengths they block, or these are padded
  to a multiple of them where that adds at most an eighth (`lift.rules.macro_rules.MAX_PADDING`; the padded
  results dropped), and their product, the private accumulators a work-item holds, stays within
  `MAX_ACCUMULATORS` (an estimate of what stays in registers; more spill);
- the vector width (2-16 lanes, Figure 4(e)) divides `w` and is smaller, or is None (scalars); the accumulators of
  a vectorised block are vectors (`vector-accumulator`), one register each;
- the two dimensions of global work-items are (rows, columns) = (1, 0) or (0, 1), or the blocks are tiled
  into work-groups of `TILES` work-items (rows × columns; the explorer checks the device's work-group limit;
  nothing is staged in local memory, so its size does not constrain them); `(8, 1)` groups the blocks of rows of
  one block of columns, which share its strip of the right operand in the core's cache;
- the blocks of columns of the right operand are read where they lie, or packed: copied once, each block
  contiguous (`pack-copy`, `lift.rules.packing`), which a CPU's prefetcher streams;
- tiles of scalar blocks may stage the reduction dimension in local memory (`("staged", rows, cols, tk)`:
  `register_blocked(.., staged=tk)`, `lift.rules.fold_tiling`), `tk` of `STAGED` (it must divide the reduction's
  length: the strategy fails otherwise), the two tiles, `(rows·h + cols·w)·tk` floats, within the device's local
  memory. On a GPU they come before the unstaged tiles of the same shape (the CASES 2016 kernels); on a CPU after
  every other choice (PoCL's work-group loops and barriers made them the slowest, 0.11-0.47x numpy at
  64×4096×4096 by hand).

Every combination is tried by its strategy; one that does not apply (a padding that adds too much, a program
of another shape) yields nothing. The work-group sizes are tuned by the explorer (`work_group_sizes`). The
order (`parameters`) puts the device's own vector width first and blocks of about `TARGET_REGISTERS` vector
registers (`TARGET_ACCUMULATORS` scalars), so that a short budget measures the likely winners; the explorer
measures them all given time. On a CPU (a native vector width above 1) each choice is followed by its packed
version (packed, in tiles of `(8, 1)`, the winners took 0.4x and 0.6x the time of the unpacked ones at 1024³ and
64×4096×4096 on PoCL's AVX-512 Xeon, interleaved in one run), so that a short budget measures today's likely winners
and their packed versions first; on a GPU, whose neighbouring work-items read neighbouring columns where they lie
(coalesced), packed versions come after every unpacked one.
"""

from __future__ import annotations

import math
from typing import Iterator, Mapping, Optional

from lift.errors import LiftError
from lift.ir.nodes import Lambda
from lift.rules.default_lowering import LANES, default_strategy, hoist_invariants, named_elements, unrolled_iterations
from lift.rules.engine import RewriteEngine
from lift.rules.macro_rules import blocked_products, column_map, left_rows_copied, register_blocked, zipped_columns
from lift.rules.strategy import Focus, progress, topdown, where

ROWS = (1, 2, 4, 8)
COLUMNS = (4, 8, 16, 32, 64)
VECTORS = (None, 2, 4, 8, 16)
DIMS = ((1, 0), (0, 1))
TILES = ((4, 4), (8, 1), (8, 8), (1, 32))
STAGED = (8, 16)
LOCAL_MEM_BYTES = 32768
"""OpenCL's least local memory of a device of the full profile, where the device's is not known."""
MAX_ACCUMULATORS = 256
TARGET_ACCUMULATORS = 64
TARGET_REGISTERS = 16


def preferred_vector(vector_width: int) -> Optional[int]:
    """The widest of `VECTORS` within the device's native vector width (None, scalars, on a GPU's width 1)."""
    return max((v for v in VECTORS if v is not None and v <= vector_width), default=None)


def parameters(vector_width: int = LANES, local_mem_bytes: int = LOCAL_MEM_BYTES) -> list:
    """Every `(h, w, vector, mapping, packed)` within the constraints that do not depend on the program, likely
    first; `mapping` is global work-items' dimensions `(rows, columns)`, `("tiles", rows, cols)` (work-groups) or
    `("staged", rows, cols, tk)` (work-groups staging tiles of `tk` of the reduction dimension in local memory, of
    `local_mem_bytes`); `packed` whether the blocks of columns are packed (`pack-copy`).

    Likely first: vectors of the device's native width (`preferred_vector`), then blocks whose accumulators fill
    about `TARGET_REGISTERS` vector registers (`TARGET_ACCUMULATORS` scalars, a GPU's many registers, where the
    width is None), rows on dimension 1 and taller blocks (more rows share each vector of the right operand) first."""
    mappings = list(DIMS) + [("tiles", *t) for t in TILES]
    preferred = preferred_vector(vector_width)

    def target(v):
        return TARGET_ACCUMULATORS if v is None else TARGET_REGISTERS * v

    staged = [("staged", *t, tk) for t in TILES for tk in STAGED]
    out = [(h, w, v, m, packed) for h in ROWS for w in COLUMNS for v in VECTORS for m in mappings + staged
           for packed in (False, True) if h * w <= MAX_ACCUMULATORS and (v is None or (v < w and w % v == 0))
           and (m[0] != "staged" or (v is None and (m[1] * h + m[2] * w) * m[3] * 4 <= local_mem_bytes))]
    gpu = preferred is None

    def order(m):
        if m[0] == "staged":
            return mappings.index(("tiles", *m[1:3])) - (0.5 if gpu else 0)
        return mappings.index(m) if m != (0, 1) else len(mappings)

    return sorted(out, key=lambda p: (not gpu and p[3][0] == "staged", gpu and p[4], p[2] != preferred,
                                      abs(math.log2(p[0] * p[1] / target(p[2]))), order(p[3]), -p[0], p[4]))


def macro_derivations(program: Lambda, sizes: Mapping[str, int], vector_width: int = LANES,
                      local_mem_bytes: int = LOCAL_MEM_BYTES) -> Iterator[tuple]:
    """`(lowered program, derivation, params)` for each parameter choice whose strategy applies to `program`: its
    products blocked (one at least), the rest the default lowering's for a device of native vector width
    `vector_width` and `local_mem_bytes` of local memory."""
    engine = RewriteEngine(sizes=dict(sizes))
    start = Focus(program, engine)
    if topdown(where(column_map | zipped_columns))(start) is None:
        return
    start = (unrolled_iterations >> named_elements >> hoist_invariants(sizes))(start)
    rest = default_strategy(sizes, vector_width)
    for h, w, vector, mapping, packed in parameters(vector_width, local_mem_bytes):
        tiles = mapping[1:3] if mapping[0] in ("tiles", "staged") else None
        staged = mapping[3] if mapping[0] == "staged" else None
        blocked = register_blocked(h, w, vector, (1, 0) if tiles else mapping, tiles, padded=True, packed=packed,
                                   staged=staged)
        found = set()
        for products in (left_rows_copied(blocked), blocked):
            try:
                focus = (progress(blocked_products(products)) >> rest)(start)
            except LiftError:
                focus = None
            if focus is not None and focus.program not in found:
                found.add(focus.program)
                derivation = focus.derivation()
                copied = any(s.rule == "transpose-copy-argument" for s in derivation.steps)
                mapped_on = f"tiles={tiles[0]}x{tiles[1]}" if tiles else f"dims={mapping[0]}{mapping[1]}"
                mapped_on += f", staged tk={staged}" if staged else ""
                params = {"register-blocked": f"h={h}, w={w}, vector={vector or 1}, {mapped_on}"
                                              f"{', left rows copied' if copied else ''}{', packed' if packed else ''}"}
                yield focus.program, derivation, params
