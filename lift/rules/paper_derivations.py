"""The paper's derivations as data: Figures 2, 8 and 9, gemv, and a two-kernel sum.

Each is a `Derivation` from a high-level program of Figure 5 (`scal`, `asum = reduce(add, 0) ∘ map(abs)`,
`gemv`), replayable with `Derivation.replay` and printable with `Derivation.format_figure8`. They are
built from a few recurring sub-derivations, each named after what it does, with locations relative
to where it starts.
"""

from __future__ import annotations

from lift.rules.derivation import Derivation

_ROOT = "body"


def step(rule: str, at: str, **params) -> Derivation:
    """A derivation of one step."""
    return Derivation().then(rule, at, **params)


def chunked(at: str, n) -> Derivation:
    """`part-red ∘ map(g)` at `at` → `join ∘ map(part-red ∘ map(g)) ∘ split-n` (Figure 8, (2) to (5)).

    The mapped function's body is then at `at + ".args0.f.f.body"`.
    """
    return (Derivation()
            .then("part-red-split-join", at, n=n)
            .then("split-join", f"{at}.args0.args0.args0", n=n)
            .then("split-join-id", f"{at}.args0.args0")
            .then("map-fusion", f"{at}.args0"))


def fused_sequential(at: str) -> Derivation:
    """`part-red(f, z, 1) ∘ map(g)` at `at` → `reduce-seq(λ acc, x. f(acc, g(x)), z)` (Figure 8, (5) to (8))."""
    return (Derivation()
            .then("map-to-seq", f"{at}.args0")
            .then("part-red-to-reduce", at)
            .then("reduce-to-seq", at)
            .then("reduce-seq-map-seq-fusion", at))


def local_tree(at: str, stride: int, chunk, iterations: int) -> Derivation:
    """`part-red(f, z, 1) ∘ map(g)` at `at`, inside a work-group, → Figure 9(a)'s reduction tree:

        iterate-k(join ∘ map(part-red(f, z, 1)) ∘ split-2) ∘ join ∘ map(reduce-seq(f ∘ g)) ∘ split-chunk
            ∘ reorder-stride-s

    Each work-item reduces `chunk` elements read with stride `stride` (coalesced), then `iterations`
    halving steps reduce the work-item's results to one.
    """
    return (Derivation()
            .then("part-red-reorder", at)
            .then("reorder-map", f"{at}.args0")
            .then("reorder-to-stride", f"{at}.args0.args0", s=stride)
            .then("part-red-to-reduce", at)
            .then("partial-reduction", at, chunk=chunk)
            .then("reduce-to-part-red", at)
            .then("part-red-iterate", at, n=iterations)
            + chunked(f"{at}.args0", chunk)
            + fused_sequential(f"{at}.args0.args0.f.f.body"))


def local_tree_lowered(at: str) -> Derivation:
    """`local_tree`'s result at `at`, inside a `map-workgroup` → work-items and local memory:
    `iterate-k(join ∘ map-local(reduce-seq(f, z)) ∘ split-2) ∘ join ∘ toLocal(map-local(...)) ∘ ...`."""
    step = f"{at}.f.f.body.args0"
    return (Derivation()
            .then("map-to-local", f"{at}.args0.args0", dim=0)
            .then("to-local", f"{at}.args0.args0")
            .then("part-red-to-reduce", f"{step}.f.f")
            .then("reduce-to-seq", f"{step}.f.f")
            .then("map-to-local", step, dim=0))


def copied_to_global(at: str) -> Derivation:
    """The array computed at `at` in a `map-workgroup` → `join ∘ toGlobal(map-local(map-seq(id))) ∘ split-1`
    of it: each work-item copies one element from local back to global memory (Figure 9(a))."""
    return (Derivation()
            .then("copy", at)
            .then("split-join", at, n=1)
            .then("map-to-local", f"{at}.args0", dim=0)
            .then("map-to-seq", f"{at}.args0.f.f")
            .then("to-global", f"{at}.args0"))


def lanes(at: str, vectorised: str) -> Derivation:
    """`part-red(f, z, 4) ∘ map(g)` at `at`, in the map at `vectorised` → `asScalar ∘ map(reduce(vect-4(f),
    vect-4(z)) ∘ map(vect-4(g))) ∘ asVector-4`: the chunk reduced as float4 lanes (Figure 9(b), (c))."""
    return (Derivation()
            .then("part-red-reorder", at)
            .then("reorder-to-stride", f"{at}.args0", s=4)
            .then("vectorize-reduction", at)
            .then("vectorize-map", f"{at}.args0.args0.args0", n=4)
            .then("asVector-asScalar-id", f"{at}.args0.args0")
            .then("map-fission", vectorised, at=1)
            .then("map-fission", f"{vectorised}.args0", at=2)
            .then("map-asScalar", vectorised)
            .then("map-asVector", f"{vectorised}.args0.args0"))


def _work_groups(chunk, n) -> Derivation:
    """asum's reduction → `reduce ∘ join ∘ map(part-red ∘ map(abs)) ∘ split-n`, each part-red result
    reducing `chunk` elements."""
    return step("partial-reduction", _ROOT, chunk=chunk) + chunked(f"{_ROOT}.args0", n)


# Figure 2(b): map(mult(a)) to
# join ∘ map-workgroup(asScalar ∘ map-local(vectorize-4(mult(a))) ∘ asVector-4) ∘ split-1024.
FIGURE_2 = (Derivation()
            .then("split-join", _ROOT, n=1024)
            .then("map-to-workgroup", f"{_ROOT}.args0", dim=0)
            .then("vectorize-map", f"{_ROOT}.args0.f.f", n=4)
            .then("map-to-local", f"{_ROOT}.args0.f.f.body.args0", dim=0))

_GROUPS = f"{_ROOT}.args0.args0"
_GROUP = f"{_GROUPS}.f.f.body"

# Figure 8: reduce(+, 0) ∘ map(abs) to
# reduce(+, 0) ∘ join ∘ map(reduce-seq(λ acc, a. acc + abs(a), 0)) ∘ split-n, with n = 128.
# Its expressions after steps 0, 2, 3, 4, 5, 6, 8 and 9 are the figure's lines (1) to (8).
FIGURE_8 = _work_groups(128, 128) + fused_sequential(_GROUP)
FIGURE_8_LINES = (0, 2, 3, 4, 5, 6, 8, 9)

# Figure 9(a), Nvidia: work-groups of 262144 elements, 128 work-items each reducing 2048 with stride 128.
FIGURE_9A = (_work_groups(262144, 262144) + local_tree(_GROUP, 128, 2048, 7)
             + step("map-to-workgroup", _GROUPS, dim=0) + local_tree_lowered(_GROUP) + copied_to_global(_GROUP)
             + step("reduce-to-seq", _ROOT))

_VECTOR_GROUPS = f"{_GROUPS}.args0"
_VECTOR_GROUP = f"{_VECTOR_GROUPS}.f.f.body"

# Figure 9(b), AMD: as (a), on float4: work-groups of 2048 floats, 256 work-items reducing 2 float4 each.
FIGURE_9B = (_work_groups(512, 2048) + lanes(_GROUP, _GROUPS)
             + step("reduce-to-part-red", _VECTOR_GROUP) + local_tree(_VECTOR_GROUP, 256, 2, 8)
             + step("map-to-workgroup", _VECTOR_GROUPS, dim=0) + local_tree_lowered(_VECTOR_GROUP)
             + copied_to_global(_VECTOR_GROUP)
             + step("reduce-to-seq", _ROOT))

# Figure 9(c), Intel: one work-item per work-group reduces 8192 float4 sequentially.
FIGURE_9C = (_work_groups(8192, 32768) + lanes(_GROUP, _GROUPS)
             + step("reduce-to-part-red", _VECTOR_GROUP)
             + chunked(_VECTOR_GROUP, 8192) + fused_sequential(f"{_VECTOR_GROUP}.args0.f.f.body")
             + step("map-to-workgroup", _VECTOR_GROUPS, dim=0) + step("map-to-local", f"{_VECTOR_GROUP}.args0", dim=0)
             + step("reduce-to-seq", _ROOT))

# A sum in two kernels: work-groups of 1024 elements leave 4 partial sums each (4 work-items of 256),
# and a final sequential reduction sums them: reduce-seq ∘ join ∘ map-workgroup(...) ∘ split-1024.
TWO_KERNEL_SUM = (_work_groups(256, 1024) + chunked(_GROUP, 256) + fused_sequential(f"{_GROUP}.args0.f.f.body")
                  + step("map-to-workgroup", _GROUPS, dim=0) + step("map-to-local", f"{_GROUP}.args0", dim=0)
                  + step("reduce-to-seq", _ROOT))

_ROWS = f"{_ROOT}.args0.args0.args0"
_ROW = f"{_ROWS}.f.f.body"
_DOT = f"{_ROW}.args0"

# gemv (Figure 5) with one work-group per row of A: 64 work-items each reduce N/64 products of the
# dot product (coalesced), a local tree sums them, one work-item scales the sum; map-global elsewhere.
GEMV_WORKGROUP_PER_ROW = (step("reduce-to-part-red", _DOT) + local_tree(_DOT, 64, "N/64", 6)
                          + step("map-to-workgroup", _ROWS, dim=0) + local_tree_lowered(_DOT)
                          + step("map-to-local", _ROW, dim=0) + step("to-global", _ROW)
                          + step("map-to-global", _ROOT, dim=0) + step("map-to-global", f"{_ROOT}.args0.args1", dim=0))
