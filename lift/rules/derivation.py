"""Derivations: sequences of rule applications, saved as JSON, replayed, and printed as in Figure 8.

A derivation is a list of rewrites (rule name, location, parameters). It is replayed on a source
program, each step checked to apply, and printed one line per step with the rule beside the equals
sign and the whole expression in the paper's notation:

                                         reduce(add, 0.0) ∘ map(absf)   (1)
    =[3(d) partial-reduction(chunk=128)] reduce(add, 0.0) ∘ part-red(add, 0.0, (N/128)) ∘ map(absf)   (2)
      =[3(d) part-red-split-join(n=128)] reduce(add, 0.0) ∘ join ∘ map(part-red(add, 0.0, 1)) ∘ ...   (3)

As JSON: `{"sizes": {...}, "steps": [{"rule": "split-join", "at": "body.args0", "params": {"n": 128}}]}`,
`sizes` being the size binding the parameters were chosen under, which replay checks them against. A
derivation `lift explore` measured at a work-group size for the kernels the generator leaves to the driver
also has `"params": {"local_size": 64}` (`local_size`): not a rewrite, the launch its program was fastest at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from lift.ir.nodes import Lambda
from lift.ir.printer import paper
from lift.rules.engine import Rewrite, RewriteEngine
from lift.rules.rule import RuleNotApplicable


@dataclass(frozen=True)
class Derivation:
    """The steps of a derivation, and the size binding its parameters were chosen under."""

    steps: tuple = ()
    sizes: tuple = ()
    local_size: Optional[int] = None

    def then(self, rule: str, location: str, **params) -> "Derivation":
        """This derivation followed by one more step."""
        return Derivation(self.steps + (Rewrite.of(rule, location, params),), self.sizes, self.local_size)

    def __add__(self, other: "Derivation") -> "Derivation":
        local_size = other.local_size if other.local_size is not None else self.local_size
        return Derivation(self.steps + other.steps, self.sizes or other.sizes, local_size)

    def engine(self) -> RewriteEngine:
        return RewriteEngine(sizes=dict(self.sizes))

    def trace(self, program: Lambda, engine: Optional[RewriteEngine] = None) -> list:
        """The source program and the program after each step; `RuleNotApplicable` names a failing step."""
        engine = engine or self.engine()
        programs = [program]
        for i, step in enumerate(self.steps, 1):
            try:
                programs.append(engine.apply(programs[-1], step))
            except RuleNotApplicable as e:
                raise RuleNotApplicable(f"step {i} ({step}): {e}") from None
        return programs

    def replay(self, program: Lambda, engine: Optional[RewriteEngine] = None) -> Lambda:
        """The program the derivation leads to from `program`."""
        return self.trace(program, engine)[-1]

    def format_figure8(self, program: Lambda, engine: Optional[RewriteEngine] = None) -> str:
        """The derivation as Figure 8 prints it: one numbered line per expression, the rule beside `=`."""
        engine = engine or self.engine()
        labels = [""] + [f"=[{engine.rule(s.rule).figure} {s.label}]" for s in self.steps]
        width = max(len(label) for label in labels)
        return "\n".join(f"{label:>{width}} {paper(p)}   ({i})"
                         for i, (label, p) in enumerate(zip(labels, self.trace(program, engine)), 1))

    def to_json(self) -> str:
        steps = [{"rule": s.rule, "at": s.location, "params": s.param_dict} for s in self.steps]
        launch = {} if self.local_size is None else {"params": {"local_size": self.local_size}}
        return json.dumps({"sizes": dict(self.sizes), "steps": steps, **launch}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Derivation":
        data = json.loads(text)
        steps = tuple(Rewrite.of(s["rule"], s["at"], s.get("params")) for s in data["steps"])
        local_size = (data.get("params") or {}).get("local_size")
        return cls(steps, tuple(sorted(data.get("sizes", {}).items())), local_size)
