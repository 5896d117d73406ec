"""The layers import one way, at the top of a module or inside a function alike: `lift.types` imports
nothing above it (no `lift.ir`), and `lift.ir` nothing of the rules, the code generator (which alone
writes C) or the search."""

import ast
from pathlib import Path

import pytest

import lift

LIFT = Path(lift.__file__).parent
ABOVE_IR = ("lift.opencl_gen", "lift.rules", "lift.explore", "lift.arrays", "lift.cli")
ABOVE_TYPES = ("lift.ir",) + ABOVE_IR


def _imported_modules(path: Path, root: Path = LIFT) -> set:
    """Every module an `import` or `from ... import` anywhere in `path` names (relative ones resolved);
    `root` is the directory of the `lift` package."""
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module) if p)
            names.add(module)
            names.update(f"{module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", sorted((LIFT / "types").glob("*.py")), ids=lambda p: p.name)
def test_types_import_nothing_above_them(path):
    above = sorted(m for m in _imported_modules(path) if m.startswith(ABOVE_TYPES))
    assert above == [], f"{path.name} imports {above}"


@pytest.mark.parametrize("path", sorted((LIFT / "ir").glob("*.py")), ids=lambda p: p.name)
def test_the_ir_imports_neither_rules_nor_code_generator(path):
    above = sorted(m for m in _imported_modules(path) if m.startswith(ABOVE_IR))
    assert above == [], f"{path.name} imports {above}"


@pytest.mark.parametrize("path", sorted(p for layer in ("rules", "opencl_gen", "explore")
                                         for p in (LIFT / layer).glob("*.py")), ids=lambda p: p.name)
def test_the_layers_below_arrays_do_not_import_them(path):
    above = sorted(m for m in _imported_modules(path) if m.startswith(("lift.arrays", "lift.cli")))
    assert above == [], f"{path.name} imports {above}"


def test_the_import_check_sees_imports_inside_functions(tmp_path):
    module = LIFT / "types" / "types.py"
    source = module.read_text() + "\n\ndef _late():\n    from lift.ir.nodes import Literal\n    return Literal\n"
    probe = tmp_path / "lift" / "types" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(source + "\n\ndef _relative():\n    from ..ir import patterns\n    return patterns\n")
    modules = _imported_modules(probe, tmp_path / "lift")
    assert "lift.ir.nodes" in modules and "lift.ir.patterns" in modules


def test_typed_literals_still_build_ir_literals():
    from lift.ir.nodes import Literal
    from lift.types.types import Float, VectorType

    assert Float(0.5) == Literal(0.5, Float)
    assert VectorType(Float, 4)(1.0) == Literal(1.0, VectorType(Float, 4))
