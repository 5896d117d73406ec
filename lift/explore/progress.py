"""The explorer's live progress line (rich, on stderr): budget used, candidates done, failures, best so far."""

from __future__ import annotations

from typing import Optional


class ExploreProgress:
    """A progress bar over the time budget; `update` refreshes the counts. Silent when not `enabled`."""

    def __init__(self, budget_s: float, streaming_gbps: float, enabled: bool = True):
        self.budget_s, self.streaming_gbps = budget_s, streaming_gbps
        self.progress = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("[bold]explore"), BarColumn(), TimeElapsedColumn(),
                                     TextColumn("{task.fields[status]}"), console=Console(stderr=True))
            self.task = self.progress.add_task("explore", total=budget_s, status="starting")

    def update(self, elapsed_s: float, evaluated: int, failed: int, skipped: int, best_gbps: Optional[float]) -> None:
        if self.progress is None:
            return
        status = f"{evaluated} evaluated, {failed} failed"
        if skipped:
            status += f", {skipped} already logged"
        if best_gbps is not None:
            status += f"; best {best_gbps:.2f} GB/s ({100 * best_gbps / self.streaming_gbps:.0f}% of streaming)"
        self.progress.update(self.task, completed=min(elapsed_s, self.budget_s), status=status)

    def __enter__(self) -> "ExploreProgress":
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()
