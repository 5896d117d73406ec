"""`lift.explain(x)`: how an array would be evaluated, without evaluating it.

The lift program the graph becomes (paper notation) with the user functions generated for its element-wise
regions, its lowered form and kernels with their launches,
and the cost model's prediction with the placement it leads to (`lift.arrays.placement`); `source=True`
adds the OpenCL C.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lift.arrays.config import config
from lift.arrays.evaluation import plan
from lift.arrays.graph import SOURCES
from lift.ir.printer import paper


@dataclass(frozen=True)
class Explanation:
    """The text `lift.explain` prints, and the figures it shows."""

    text: str
    placement: str
    prediction: object

    def __str__(self) -> str:
        return self.text


def explain(*arrays, source: bool = False, file=None) -> Explanation:
    """Print (to `file`, stdout by default) and return how `arrays` would be evaluated now."""
    p = plan(*arrays, predict_always=True)
    lines = [f"lift arrays: {len(p.targets)} array(s) to compute, {len(p.structure.inputs)} input(s), "
             f"structure {p.structure.key}"]
    if not p.targets:
        lines.append("nothing to compute: every array is evaluated")
    elif p.compiled is None:
        lines.append("no OpenCL device: numpy on the host")
    else:
        g = p.compiled.generated()
        text = paper(p.program)
        lines += [f"program:  {text}"]
        for name in dict.fromkeys(re.findall(r"\bew_[0-9a-f]{12}\b", text)):
            lines.append("  " + " ".join(SOURCES.get(name, name).replace("def ", "").split()))
        lines += [f"lowered:  {paper(g.typed.expr)}", f"kernels ({len(g.kernels)}):"]
        for k in g.kernels:
            glb, loc = k.launch.evaluate(g.sizes)
            lines.append(f"  {k.name}: global {glb}, local {loc if loc is not None else 'driver'}")
        f = p.prediction
        lines += [f"prediction on {p.device.name.strip()}: transfers {f.transfer_ms:.3f} ms + kernels "
                  f"{f.kernel_ms:.3f} ms = {f.device_ms:.3f} ms; numpy on the host {f.host_ms:.3f} ms",
                  f"placement: {p.placement}" + (" (cost model)" if config.placement == "auto" else " (lift.config)")]
        if source:
            lines += ["", g.source]
    text = "\n".join(lines)
    print(text, file=file)
    return Explanation(text, p.placement, p.prediction)
