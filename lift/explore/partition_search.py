"""The search over a fusion graph's partitions (`lift.explore.partition`): every legal one, the cheapest, and
the baselines.

`enumerate_partitions` lists every legal partition with its time (the fusion paper's Table 4 count, for
our model's partitions); `optimal_partition` finds the cheapest by dynamic programming over schedules,
as DPMPP (Heirich, *Optimal automatic multipass shader partitioning by dynamic programming*) does for
shader passes; `fuse_nothing` and `fuse_all_legal` are the baselines.
"""

from __future__ import annotations

import bisect
from typing import Dict, FrozenSet, Hashable, List, Optional, Sequence, Tuple

from lift.explore.partition import (DeviceLimits, Footprint, FusionCostModel, FusionGraph, Partition, check_singletons,
                                    fits, kernel, kernel_time_ms, launch_order, legal_kernel, ops_footprint,
                                    predict)

# --- exhaustive enumeration ----------------------------------------------------------------------------


def enumerate_partitions(graph: FusionGraph, limits: DeviceLimits = DeviceLimits(),
                         model: FusionCostModel = FusionCostModel()) -> List[Partition]:
    """Every legal partition with its predicted time, fastest first (the fusion paper's "number of
    implementations", Table 4, for this model's partitions). Exponential: for small graphs."""
    check_singletons(graph, limits)
    n = len(graph.ops)
    found: List[Partition] = []
    blocks: List[List[int]] = []

    def place(i: int) -> None:
        if i == n:
            if launch_order(graph, blocks) is not None and all(legal_kernel(graph, b, limits) for b in blocks):
                found.append(predict(graph, [[graph.ops[j].name for j in b] for b in blocks], limits, model))
            return
        op = graph.ops[i]
        for b in blocks:
            first = graph.ops[b[0]]
            if first.space != op.space or any(graph.barrier(p, i) for p in graph.preds[i] if p in b):
                continue
            b.append(i)
            if fits(ops_footprint([graph.ops[j] for j in b]), limits):
                place(i + 1)
            b.pop()
        blocks.append([i])
        place(i + 1)
        blocks.pop()

    place(0)
    return sorted(found, key=lambda p: (p.time_ms, sorted(sorted(b) for b in p.blocks)))


# --- baselines -----------------------------------------------------------------------------------------


def fuse_nothing(graph: FusionGraph, limits: DeviceLimits = DeviceLimits(),
                 model: FusionCostModel = FusionCostModel()) -> Partition:
    """One kernel per op, in graph order."""
    check_singletons(graph, limits)
    return Partition(tuple(kernel(graph, [i], limits, model) for i in range(len(graph.ops))))


def fuse_all_legal(graph: FusionGraph, limits: DeviceLimits = DeviceLimits(),
                   model: FusionCostModel = FusionCostModel()) -> Partition:
    """Greedy maximal fusion, blind to cost: each op in graph order joins the most recently opened kernel of
    its space that it can legally join (the kernels of its producers first), else opens one."""
    check_singletons(graph, limits)
    blocks: List[List[int]] = []
    fps: List[Footprint] = []
    of: List[int] = []
    latest: Dict[Hashable, int] = {}
    out: List[set] = []  # quotient successors of each block
    for i, op in enumerate(graph.ops):
        pred_blocks = {of[p] for p in graph.preds[i]}
        candidates = sorted((b for b in pred_blocks if graph.ops[blocks[b][0]].space == op.space), reverse=True)
        if op.space in latest and latest[op.space] not in candidates:
            candidates.append(latest[op.space])
        chosen = None
        for b in candidates:
            if any(of[p] == b and graph.barrier(p, i) for p in graph.preds[i]):
                continue
            if not fits(fps[b] + op.footprint, limits):
                continue
            if _reaches_any(out, b, pred_blocks - {b}):
                continue
            chosen = b
            break
        if chosen is None:
            chosen = len(blocks)
            blocks.append([])
            fps.append(op.footprint)
            out.append(set())
            latest[op.space] = chosen
        else:
            fps[chosen] = fps[chosen] + op.footprint
        blocks[chosen].append(i)
        of.append(chosen)
        for b in pred_blocks - {chosen}:
            out[b].add(chosen)
    return predict(graph, [[graph.ops[i].name for i in b] for b in blocks], limits, model)


def _reaches_any(out: Sequence[set], start: int, targets: set) -> bool:
    if not targets:
        return False
    seen = {start}
    stack = [start]
    while stack:
        for c in out[stack.pop()]:
            if c in targets:
                return True
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return False


# --- dynamic programming -------------------------------------------------------------------------------


def optimal_partition(graph: FusionGraph, limits: DeviceLimits = DeviceLimits(), model: FusionCostModel = FusionCostModel(),
                      window: int = 8) -> Partition:
    """The cheapest legal partition reachable by a windowed schedule, by dynamic programming (DPMPP).

    The DP builds a schedule op by op, breadth first, as DPMPP does for shader passes; each step either adds
    a ready op to the open kernel (when legal) or closes it (its cost is now known) and opens a new one with
    that op. A state is the set of scheduled ops and the open kernel's Markov summary: its space, the arrays
    it holds that unscheduled ops still read (for the barrier, and for reads that stay on chip or inputs
    already read), its work-group size, and the traffic, flops, footprint and reduced bytes accumulated.
    The open kernel is the last segment of the schedule, so it is convex and orderable by construction;
    every legal partition is the kernel sequence of some schedule (its kernels in a launch order, each
    one's ops in graph order). Of the states with the same scheduled set and the same interface (space,
    held arrays, work-group size) only the Pareto-minimal ones in (closed cost, traffic, flops, local memory,
    registers, reduced bytes) are kept: a kernel's cost at closing is monotone in each, and a smaller
    footprint admits every join a larger one does, so a dominated state cannot lead to a cheaper partition.

    The guarantee: let pi be the graph's op order and, for a set S of scheduled ops, lo(S) the position in
    pi of the first op not in S. The DP visits exactly the sets S with pi[:lo(S)] in S and S in
    pi[:lo(S) + window] (no op is scheduled `window` or more places ahead of the earliest unscheduled one).
    The result is a partition of least predicted time among the legal partitions that have a schedule, each
    kernel a contiguous run of it, all of whose prefixes are such sets. Hence:

    - with `window >= len(graph.ops)` every schedule qualifies: the result is optimal among all legal
      partitions (the first of `enumerate_partitions`, tested on random graphs);
    - with `window == 1` it is optimal among the partitions whose kernels are contiguous runs of pi (DPMPP
      over one fixed schedule);
    - the optimum found never gets worse as the window grows.

    There are at most window * 2**(window-1) such sets per step (far fewer on chain-like graphs), and the
    open kernels per set are few when the limits bound a kernel's size (registers and local memory add up),
    so for a fixed window the time grows linearly with the number of ops (`benchmarks.bench_partition`).
    """
    check_singletons(graph, limits)
    if window < 1:
        raise ValueError("window must be at least 1")
    n = len(graph.ops)
    if n == 0:
        return Partition(())
    names = sorted(graph.nbytes)
    aid = {a: k for k, a in enumerate(names)}
    size = [graph.nbytes[a] for a in names]
    output = [a in graph.outputs for a in names]
    readers = [graph.readers.get(a, ()) for a in names]
    ops = graph.ops
    reads = [tuple(aid[a] for a in dict(op.reads)) for op in ops]
    writes = [tuple(aid[a] for a in dict(op.writes)) for op in ops]
    whole = [tuple(aid[a] for a in op.whole if a in aid) for op in ops]
    preds = graph.preds
    empty: FrozenSet[int] = frozenset()

    def live(a: int, lo: int, mask: int) -> bool:
        rs = readers[a]
        for k in range(bisect.bisect_left(rs, lo), len(rs)):
            if not mask >> (rs[k] - lo) & 1:
                return True
        return False

    def close(iface: tuple, acc: tuple) -> float:
        pending = sum(size[a] for a in iface[2] if not output[a])
        fp = Footprint(acc[2], acc[3], iface[4])
        return kernel_time_ms(acc[0] + pending, acc[1], fp, acc[4], limits, model)

    def extend(iface: Optional[tuple], acc: tuple, v: int, lo: int, mask: int) -> Tuple[tuple, tuple]:
        """The open kernel (`iface`, `acc`; None: a new one) with op `v` added, `lo`, `mask` after it."""
        op = ops[v]
        fp = op.footprint
        if iface is None:
            space, rd, wr, red, wg = op.space, empty, empty, empty, fp.work_group
            fixed, flops, local, regs, red_bytes = 0, 0.0, 0, 0, 0
        else:
            space, rd, wr, red, wg = iface
            fixed, flops, local, regs, red_bytes = acc
        for a in reads[v]:
            if a in wr:
                if not live(a, lo, mask):
                    wr = wr - {a}
            elif a in rd:
                if not live(a, lo, mask):
                    rd = rd - {a}
            else:
                fixed += size[a]
                if live(a, lo, mask):
                    rd = rd | {a}
        for a in writes[v]:
            if op.reduction:
                red_bytes += size[a]
                if readers[a]:
                    red = red | {a}
                continue
            if output[a]:
                fixed += size[a]
            if readers[a]:
                wr = wr | {a}
        return ((space, rd, wr, red, max(wg, fp.work_group)),
                (fixed, flops + op.flops, local + fp.local_bytes, regs + fp.registers, red_bytes))

    # a layer maps (lo, mask, interface) to its Pareto front of entries (g, acc, interface, back), where
    # back = (previous entry, op, joined)
    layer: Dict[tuple, list] = {(0, 0, None): [(0.0, None, None, None)]}
    for _ in range(n):
        nxt: Dict[tuple, list] = {}
        for (lo, mask, _), front in layer.items():
            for v in range(lo, min(lo + window, n)):
                if mask >> (v - lo) & 1:
                    continue
                if any(p >= lo and not mask >> (p - lo) & 1 for p in preds[v]):
                    continue
                nlo, nmask = lo, mask | 1 << (v - lo)
                while nmask & 1:
                    nmask >>= 1
                    nlo += 1
                op = ops[v]
                fp = op.footprint
                joins = front[0][2] is not None and front[0][2][0] == op.space and \
                    not any(a in front[0][2][3] for a in reads[v]) and not any(a in front[0][2][2] for a in whole[v])
                for entry in front:
                    g, acc, iface, _ = entry
                    if joins and fits(Footprint(acc[2] + fp.local_bytes, acc[3] + fp.registers,
                                                max(iface[4], fp.work_group)), limits):
                        _offer(nxt, nlo, nmask, g, *extend(iface, acc, v, nlo, nmask), (entry, v, True))
                    closed = g + close(iface, acc) if iface is not None else g
                    _offer(nxt, nlo, nmask, closed, *extend(None, None, v, nlo, nmask), (entry, v, False))
        layer = nxt
    best = min((entry[0] + close(entry[2], entry[1]), i, entry)
               for i, entry in enumerate(e for front in layer.values() for e in front))[2]
    blocks: List[List[int]] = []
    current: List[int] = []
    while best[3] is not None:
        best, v, joined = best[3]
        current.append(v)
        if not joined:
            blocks.append(sorted(current))
            current = []
    blocks.reverse()
    return predict(graph, [[ops[i].name for i in b] for b in blocks], limits, model)


def _offer(layer: Dict[tuple, list], lo: int, mask: int, g: float, iface: tuple, acc: tuple, back: tuple) -> None:
    """Add a state to its Pareto front, unless one there is at least as good in every measure."""
    key = (lo, mask, iface)
    front = layer.get(key)
    if front is None:
        layer[key] = [(g, acc, iface, back)]
        return
    f0, f1, f2, f3, f4 = acc
    kept = []
    for entry in front:
        h, (e0, e1, e2, e3, e4) = entry[0], entry[1]
        if h <= g and e0 <= f0 and e1 <= f1 and e2 <= f2 and e3 <= f3 and e4 <= f4:
            return
        if not (g <= h and f0 <= e0 and f1 <= e1 and f2 <= e2 and f3 <= e3 and f4 <= e4):
            kept.append(entry)
    kept.append((g, acc, iface, back))
    layer[key] = kept
