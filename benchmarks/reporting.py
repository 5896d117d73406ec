"""What a run of the suite leaves behind: the table (markdown and CSV), the speedup chart, and the floors.

Rates count each problem's useful bytes (inputs read once, output written once) and, for gemv and
MD, its floating-point operations; "% of streaming" is the rate over the device's streaming rate at
the problem's size (copy or read, as the application says); speedups compare kernel times with
numpy's time and with CLBlast's. The streaming row of each problem is the time a kernel moving the
useful bytes at the streaming rate would take: the bound of a memory-bound kernel.

The floors hold the explored kernel to: a share of the streaming rate (the memory-bound routines, as
`Application.stream_floor` says), at least 90% of the speed of the best of the hand-derived paper
expressions and the hand-written kernel (the BLAS routines: what `lift explore` must find, issue 5),
at least the speed of the faster of the best hand-written kernel and CLBlast (the BLAS routines), and
more than numpy's speed (every application).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from benchmarks.suite import DERIVED, EXPLORED, HANDWRITTEN, LIBRARY, NUMPY

BOUND = "streaming bound"
COLUMNS = ("benchmark", "sizes", "contender", "kind", "status", "verified", "kernel_ms", "total_ms", "gbps",
           "gflops", "percent_of_streaming", "speedup_vs_numpy", "speedup_vs_clblast", "streaming", "copy_gbps",
           "read_gbps", "useful_bytes", "reason")
CHART_KINDS = (EXPLORED, DERIVED, HANDWRITTEN, LIBRARY, BOUND)


def rows(results: list) -> list:
    """One dict of `COLUMNS` per contender of each problem, then its streaming bound."""
    out = []
    for r in results:
        common = {"benchmark": r.label, "sizes": " ".join(f"{k}={v}" for k, v in r.sizes.items()),
                  "streaming": r.app.stream, "copy_gbps": r.copy_gbps, "read_gbps": r.read_gbps,
                  "useful_bytes": r.useful_bytes}
        for name, m in r.measurements.items():
            out.append({**common, "contender": name, "kind": r.kinds[name], "status": m.status, "verified": m.ok,
                        "kernel_ms": m.kernel_ms, "total_ms": m.total_ms, "gbps": r.gbps(m),
                        "gflops": r.flops / (m.kernel_ms * 1e6) if m.ok and r.flops else None,
                        "percent_of_streaming": 100 * r.gbps(m) / r.stream_gbps if m.ok else None,
                        "speedup_vs_numpy": r.speedup(m, NUMPY),
                        "speedup_vs_clblast": r.speedup(m, LIBRARY),
                        "reason": m.reason})
        numpy = r.best(NUMPY)
        out.append({**common, "contender": f"{BOUND} ({r.app.stream})", "kind": BOUND, "status": "", "verified": None,
                    "kernel_ms": r.bound_ms, "total_ms": None, "gbps": r.stream_gbps,
                    "gflops": r.flops / (r.bound_ms * 1e6) if r.flops else None, "percent_of_streaming": 100.0,
                    "speedup_vs_numpy": numpy.kernel_ms / r.bound_ms if numpy else None,
                    "speedup_vs_clblast": None, "reason": ""})
    return out


def write_csv(table: list, path: Path) -> Path:
    """The rows as CSV (empty cells where a value does not apply)."""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for row in table:
            writer.writerow({k: "" if row[k] is None else row[k] for k in COLUMNS})
    return path


def markdown(table: list, header: list, floors: list, results: list) -> str:
    """The results page: `header` lines, the table, what was not timed and why, the floors, the explored kernels."""
    lines = [*header, "",
             "| benchmark | contender | status | kernel ms | with transfers ms | GB/s | GFLOP/s | % of streaming "
             "| × numpy | × CLBlast |",
             "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for row in table:
        status = "verified" if row["verified"] else row["status"] or "bound"
        lines.append(f"| {row['benchmark']} | {row['contender']} | {status} | {_num(row['kernel_ms'])} "
                     f"| {_num(row['total_ms'])} | {_num(row['gbps'], 1)} | {_num(row['gflops'], 1)} "
                     f"| {_num(row['percent_of_streaming'], 0)} | {_times(row['speedup_vs_numpy'])} "
                     f"| {_times(row['speedup_vs_clblast'])} |")
    lines += ["", "GB/s counts each problem's useful bytes (inputs read once, output written once); % of streaming "
              "is against the device's rate named in the problem's streaming-bound row (copy or read), measured "
              "with streaming kernels (lift's float4 copy and read-reduce, and the hand-written chunked float4 "
              "reduction) over as many bytes as the problem reads; the bound is the time to move the useful bytes "
              "at that rate; speedups compare kernel times."]
    untimed = [row for row in table if row["reason"]]
    if untimed:
        lines += ["", "Not timed:", ""]
        lines += [f"- {row['benchmark']}, {row['contender']}: {row['status']}: {row['reason']}" for row in untimed]
    lines += ["", "Floors (the explored kernel):", ""] + [f"- {floor.line()}" for floor in floors]
    lines += ["", "Explored kernels:", ""]
    for r in results:
        if r.winner is None:
            lines.append(f"- {r.label}: none ({r.explore_note})")
        else:
            lines.append(f"- {r.label} ({r.winner.note}; from `{r.winner.folder}`): `{r.winner.expression}`")
    return "\n".join(lines) + "\n"


def _num(x: Optional[float], digits: Optional[int] = None) -> str:
    if x is None:
        return ""
    return f"{x:.{digits}f}" if digits is not None else f"{x:.4g}"


def _times(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.2f}×"


def chart(results: list, path: Path, title: str) -> Path:
    """Bars of speedup over numpy (log scale) per problem: the explored kernel, the best hand-derived one,
    the best hand-written one, CLBlast and the streaming bound, as the paper's Figures 10 and 11."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(6.0, 1.6 * len(results) + 2), 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    width = 0.8 / len(CHART_KINDS)
    for i, kind in enumerate(CHART_KINDS):
        xs, ys = [], []
        for j, r in enumerate(results):
            numpy = r.best(NUMPY)
            if numpy is None:
                continue
            ms = r.bound_ms if kind == BOUND else getattr(r.best(kind), "kernel_ms", None)
            if ms is not None:
                xs.append(j + (i - (len(CHART_KINDS) - 1) / 2) * width)
                ys.append(numpy.kernel_ms / ms)
        ax.bar(xs, ys, width, label=kind, hatch="//" if kind == BOUND else None,
               color="none" if kind == BOUND else None, edgecolor="black" if kind == BOUND else None)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(results)), [r.label for r in results], rotation=20, ha="right")
    ax.set_ylabel("speedup over numpy (kernel time)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="best")
    fig.savefig(path, dpi=120)
    return path


@dataclass(frozen=True)
class Floor:
    """One floor of one problem: the explored kernel's ratio and the least it must be (above it, if strict)."""

    problem: str
    what: str
    ratio: Optional[float]
    least: float
    strict: bool = False
    missing: str = ""

    @property
    def met(self) -> bool:
        return self.ratio is not None and (self.ratio > self.least if self.strict else self.ratio >= self.least)

    def line(self) -> str:
        floor = f"floor {'>' if self.strict else '≥'} {self.least:g}"
        if self.ratio is None:
            return f"{self.problem}: {self.what}: MISSED: {self.missing} ({floor})"
        return f"{self.problem}: {self.what}: {'met' if self.met else 'MISSED'} ({self.ratio:.2f}, {floor})"


def floors(results: list) -> list:
    """The floors of every problem (see the module docstring)."""
    out = []
    for r in results:
        explored = r.best(EXPLORED)
        missing = "no explored kernel"
        if r.app.stream_floor is not None:
            share = r.gbps(explored) / r.stream_gbps if explored else None
            out.append(Floor(r.label, f"share of the streaming {r.app.stream} rate", share, r.app.stream_floor,
                             missing=missing))
        if r.app.blas:
            by_hand = [m.kernel_ms for m in (r.best(DERIVED), r.best(HANDWRITTEN)) if m is not None]
            share = min(by_hand) / explored.kernel_ms if explored and by_hand else None
            out.append(Floor(r.label, "speed over the best hand-derived or hand-written kernel", share, 0.9,
                             missing=missing if explored is None else "no hand-derived or hand-written time"))
            rivals = [m.kernel_ms for m in (r.best(HANDWRITTEN), r.best(LIBRARY)) if m is not None]
            faster = min(rivals) / explored.kernel_ms if explored and rivals else None
            out.append(Floor(r.label, "speed over the faster of hand-written and CLBlast", faster, 1.0,
                             missing=missing if explored is None else "no hand-written or CLBlast time"))
        out.append(Floor(r.label, "speed over numpy", r.speedup(explored, NUMPY) if explored else None, 1.0,
                         strict=True, missing=missing if explored is None else "no numpy time"))
    return out
