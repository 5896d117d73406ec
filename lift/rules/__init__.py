"""Rewrite rules (paper Section 4): deriving OpenCL-level expressions from high-level ones.

Each rule is a proven equation of Figure 3 (algorithmic choices) or Figure 4 (OpenCL lowering), or
one of the few further rules the paper's derivations need, justified in its module:

- `iterate`, `reorder`, `split_join`, `reduction`, `simplification`, `fusion`: Figure 3 (a) to (f),
  with map fission in `fusion`;
- `map_lowering`, `reduce_lowering`, `memory`, `vectorization`: Figure 4 (a) to (e), with copies
  through `id` in `memory` and the vectorised reduction of Figure 9(b) in `vectorization`;
- `transposition`: interchanging the maps over a matrix (coalesced gemv);
- `call_fusion`: fusing the calls of a program of several outputs (the kernel-fusion paper's Section 3.2),
  with `fused_derivations` deriving a group's fused, lowered expression (`fuse`, `lower_unfused`);
- `hierarchy`, `order_flow`, `vectorize_function`, `sizes`: the conditions and helpers rules share.

`RewriteEngine` (`engine`) enumerates every rule, location and parameter that applies to a program
(`location` defines locations and contexts) and applies one; strategies (`strategy`, as ELEVATE composes
them) say where and in which order rules apply, finding places by selectors; a `Derivation`
(`derivation`) is the trace a strategy records: steps that replay, save as JSON and print as Figure 8;
`alpha` compares expressions up to parameter names; `paper_derivations` holds the paper's derivations as
strategies, recorded on the programs of `paper_programs`. `catalogue()` describes every rule (`lift rules`).
"""

from lift.rules.alpha import alpha_equal, canonical
from lift.rules.derivation import Derivation
from lift.rules.engine import IllTypedRewrite, Rewrite, RewriteEngine
from lift.rules.registry import RULES, catalogue, rule_named
from lift.rules.rule import Rule, RuleNotApplicable

__all__ = ["RULES", "Derivation", "IllTypedRewrite", "Rewrite", "RewriteEngine", "Rule", "RuleNotApplicable",
           "alpha_equal", "canonical", "catalogue", "rule_named"]
