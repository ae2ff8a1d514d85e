"""Functions in the run's spine stay small: none in scoring/ or bisection/ over 60 lines or with
more than 6 parameters (`self` and `cls` not counted). A longer one is a class or a plan waiting
to be named."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evalrun"
SPINE = ("scoring", "bisection")
MAX_LINES = 60
MAX_PARAMS = 6


def _functions(folder: Path) -> Iterator[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path, node


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    extra = (a.vararg is not None) + (a.kwarg is not None)
    return len([n for n in names if n not in ("self", "cls")]) + extra


def test_no_long_function_and_no_long_parameter_list_in_the_spine() -> None:
    wrong = []
    for package in SPINE:
        for path, fn in _functions(PACKAGE / package):
            assert fn.end_lineno is not None
            lines = fn.end_lineno - fn.lineno + 1
            if lines > MAX_LINES:
                wrong.append(f"{path.relative_to(PACKAGE)}:{fn.lineno} {fn.name}: {lines} lines")
            if _params(fn) > MAX_PARAMS:
                wrong.append(
                    f"{path.relative_to(PACKAGE)}:{fn.lineno} {fn.name}: {_params(fn)} params"
                )
    assert not wrong, "too long for the spine:\n" + "\n".join(wrong)


def test_the_measure_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def f(a, b, c, d, e, f, g):\n{body}\n", encoding="utf-8")
    ((_, fn),) = list(_functions(tmp_path))
    assert fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 == MAX_LINES + 1
    assert _params(fn) == MAX_PARAMS + 1
