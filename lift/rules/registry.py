"""Every rewrite rule, in the order of the paper's figures (3(a) to 4(e), then the rules of Figures 5 and 9, then
the kernel-fusion paper's Section 3.2, "KF 3.2", then let floating, "let", routine inlining, "KF 4.2", and the
loops and the sines and cosines inside user functions, "userfun")."""

from __future__ import annotations

from lift.rules import (call_fusion, fold_tiling, fusion, interchange, iterate, join_folding, let_floating,
                        map_lowering, map_tail, memory, overlapped_tiling, packing, padding, reduce_lowering, reduction,
                        reduction_tail, register_blocking, reorder, routine_inlining, scalar_argument, simplification,
                        sliding_window, split_join, struct_of_arrays, subterm_fission, tiling, transposition,
                        unrolling, userfun_composition, userfun_sincos, userfun_unrolling, vector_accumulators,
                        vectorization, window_vectorization)

_MODULES = (iterate, reorder, split_join, reduction, simplification, fusion, map_lowering, reduce_lowering, memory,
            vectorization, vector_accumulators, transposition, call_fusion, padding, reduction_tail, map_tail,
            let_floating, tiling, interchange, register_blocking, unrolling, join_folding, window_vectorization,
            routine_inlining, subterm_fission, userfun_unrolling, userfun_sincos, userfun_composition, scalar_argument,
            struct_of_arrays, sliding_window, overlapped_tiling, packing, fold_tiling)
RULES = tuple(sorted((r for m in _MODULES for r in m.RULES), key=lambda r: r.figure))

BY_NAME = {r.name: r for r in RULES}


def catalogue() -> list:
    """Every rule as a dict of `name`, `figure`, `description` and `equation` (for `lift rules`)."""
    return [{"name": r.name, "figure": r.figure, "description": r.description, "equation": r.equation}
            for r in RULES]


def rule_named(name: str):
    """The rule called `name`; KeyError listing the names otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no rule named {name!r}; the rules are: {', '.join(BY_NAME)}") from None
