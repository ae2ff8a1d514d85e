"""The import-layer contract: packages import downward only, and no module imports in a circle.

Every `import evalrun...` is counted, the ones inside functions too (a lazy import is still an
arrow). The layers, top to bottom (packages on one line are siblings and must not import each
other); ARCHITECTURE.md draws the same picture.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evalrun"

LAYERS: list[set[str]] = [
    {"__main__"},
    {"cli"},
    {"commands"},
    {"api"},
    {"bisection", "viewing", "watching"},
    {"signoff"},
    {"scoring", "slope", "compare"},
    {"suite"},
    {"store"},
    {"grading"},
    {"serving"},
    {"endpoint"},
    {"verdicts", "provenance"},
    {"__init__"},
    {"base"},
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Dotted names of the evalrun modules `path` imports (anywhere in the file)."""
    here = _module_name(path)
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("evalrun"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".") if is_pkg else here.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("evalrun"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if _exists(candidate) else base)
    return {m for m in out if m != here}


def _exists(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists()


def _unit(dotted: str) -> str:
    """The layer unit of a module: its top-level package or module under evalrun."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> int:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError(f"evalrun.{unit} is in no layer: add it to LAYERS and ARCHITECTURE.md")


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for module, targets in _graph().items():
        src = _unit(module)
        for target in sorted(targets):
            dst = _unit(target)
            if dst == src or dst == "__init__" and target == "evalrun":
                continue
            if _layer(dst) <= _layer(src):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(wrong)


def test_no_module_imports_in_a_circle() -> None:
    edges = _graph()
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not circles, "import circles:\n" + "\n".join(circles)
