"""What the explorer leaves behind: the ranking table, the winner's files, and a throughput plot.

The winner is written to the output folder whenever a candidate beats the best so far, so that the
folder always holds the best kernel found, even after a kill: `<kernel>.cl` and its manifest
`<kernel>.json` (`lift.opencl_gen.manifest.write_cl`), `<kernel>.derivation.json` (the derivation's
steps as the search gave them, with the measurements) and `<kernel>.derivation.txt` (the steps, then
the winner's expression in the paper's notation).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Optional, Sequence

from lift.errors import LiftError
from lift.explore.candidate import Candidate
from lift.explore.log import Record
from lift.files import check_name, replace_with
from lift.ir.nodes import Lambda
from lift.ir.printer import paper, python_source
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.manifest import write_cl
from lift.rules.derivation import Derivation

EXPRESSION_WIDTH = 72


def winner_paths(out_dir: Path, kernel: str) -> dict:
    """The files the winner is written to, by role."""
    check_name(kernel)
    return {"cl": out_dir / f"{kernel}.cl", "manifest": out_dir / f"{kernel}.json",
            "derivation": out_dir / f"{kernel}.derivation.json", "notation": out_dir / f"{kernel}.derivation.txt"}


def write_winner(out_dir: Path, kernel: str, candidate: Candidate, generated: GeneratedProgram,
                 record: Record, source: Lambda) -> dict:
    """Write the winner's files (each replaced whole, never left half-written); return their paths.

    The derivation's JSON is what `lift derive --steps` replays (its `steps` and `sizes`, with the
    measurements beside them); its text is the derivation from `source` printed as the paper's Figure 8
    when its steps are rules, else the steps as given.
    """
    paths = winner_paths(out_dir, kernel)
    expression = paper(candidate.program)
    derivation = {"kernel": kernel, "key": record.key, "device": record.device, "sizes": dict(record.sizes),
                  "time_ms": record.time_ms, "gbps": record.gbps, "expression": expression,
                  "python_source": python_source(candidate.program), "params": dict(candidate.params),
                  "steps": list(candidate.derivation)}
    try:
        if not candidate.derivation:
            raise ValueError("no steps")
        notation = Derivation.from_json(json.dumps(derivation, default=str)).format_figure8(source) + "\n"
    except (LiftError, KeyError, TypeError, ValueError):
        steps = [f"{i + 1}. {json.dumps(step, ensure_ascii=False, default=str)}"
                 for i, step in enumerate(candidate.derivation)]
        notation = "\n".join([f"{kernel}: {len(steps)} steps", *steps, "", "result:", f"  {expression}", ""])
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".winner-") as tmp:
        staged = {role: Path(tmp) / path.name for role, path in paths.items()}
        write_cl(generated, staged["cl"])
        staged["derivation"].write_text(json.dumps(derivation, indent=2, ensure_ascii=False, default=str) + "\n")
        staged["notation"].write_text(notation)
        for role, path in paths.items():
            os.replace(staged[role], path)
    return paths


def table(ranked: Sequence[Record], streaming_gbps: float, baseline: Optional[Record] = None, top: int = 10,
          remeasured: int = 0):
    """A rich table of the `top` fastest candidates (and the baseline), failures counted by class below it;
    the title says how many of the first were measured again side by side (they rank ahead of the rest, in a section
    of their own).

    Columns: the median time (the final round's, for those measured again) and the inter-quartile half-width
    relative to it, the time in the search (comparable down the column: the final round's candidates ran at another
    moment, under another load, than the rest), the throughput and its share of the streaming bandwidth, the cost
    model's prediction, the derivation's length, and the expression (cut short, and wrapped on a narrow terminal).
    """
    from rich import box
    from rich.table import Table

    rows = [(str(i + 1), r) for i, r in enumerate(r for r in ranked if r.ok)][:top]
    if baseline is not None and baseline.ok:
        rows.append(("base", baseline))
    cells = [[label, f"{r.time_ms:.4f}", f"{50 * (r.q3_ms - r.q1_ms) / r.time_ms:.1f}%",
              "-" if r.search_ms is None else f"{r.search_ms:.4f}", f"{r.gbps:.2f}",
              f"{100 * r.gbps / streaming_gbps:.0f}%", "-" if r.predicted_ms is None else f"{r.predicted_ms:.4f}",
              str(len(r.derivation)), _truncate(r.expression)] for label, r in rows]
    title = f"fastest of {sum(r.ok for r in ranked)} working candidates"
    if remeasured:
        title += (f" (#1-#{remeasured} measured again side by side at the end, ranked ahead of the others: ms, the"
                  " median of those rounds, ± their spread; where it overlaps the fastest median's, the model's"
                  " prediction decides #1. The rest ran once in the search, at other moments: compare \"search ms\")")
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for i, name in enumerate(("#", "ms", "±", "search ms", "GB/s", "% bw", "model ms", "steps")):
        t.add_column(name, justify="right", no_wrap=True, min_width=max([len(name)] + [len(c[i]) for c in cells]))
    t.add_column("expression", overflow="fold")
    for i, row in enumerate(cells):
        t.add_row(*row, end_section=i + 1 == remeasured < len(cells))
    failures = Counter(r.status for r in ranked if not r.ok)
    if failures:
        t.caption = "failed: " + ", ".join(f"{n} {status}" for status, n in sorted(failures.items()))
    return t


def _truncate(text: str, width: int = EXPRESSION_WIDTH) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def plot(ranked: Sequence[Record], path: Path, streaming_gbps: float, baseline: Optional[Record] = None) -> Path:
    """A PNG of every working candidate's throughput, best first, with the streaming bandwidth and the
    hand-written baseline's throughput as reference lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    gbps = [r.gbps for r in ranked if r.ok]
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.bar(range(1, len(gbps) + 1), gbps, color="tab:blue", label="candidates")
    ax.axhline(streaming_gbps, color="tab:gray", linestyle="--", label=f"streaming bandwidth {streaming_gbps:.1f} GB/s")
    if baseline is not None and baseline.ok:
        ax.axhline(baseline.gbps, color="tab:red", label=f"hand-written {baseline.gbps:.1f} GB/s")
    failed = sum(not r.ok for r in ranked)
    ax.set_title(f"{len(gbps)} candidates by throughput" + (f" ({failed} failed, not shown)" if failed else ""))
    ax.set_xlabel("candidate rank")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("GB/s")
    ax.legend(loc="best")
    return replace_with(path, lambda f: fig.savefig(f, format="png", dpi=120))
