"""Write the committed data sets of tests/data that are built offline, or check them.

    python -m bench.build_data grading              # tests/data/grading/answers.jsonl
    python -m bench.build_data garble-field         # tests/data/garble/garbled_field.jsonl, loop_field
    python -m bench.build_data garble-field2        # ... garbled_field2.jsonl (also 3 and 4)
    python -m bench.build_data garble-synthetic     # ... garbled_synthetic.jsonl
    python -m bench.build_data all                  # every set above
    python -m bench.build_data check [SET ...]      # rebuild into a temp dir, diff with the committed

Each builder turns hand-written material (bench/data/) into rows, with every random draw from a
seeded `random.Random`, so a rebuild writes the committed bytes; `check` exits 1 and names the
files that differ. The real-engine captures (bench/capture_*.py) are not rebuilt here: they need
the engines, and their rows are labelled by hand after the run.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# set name: (builder module, the folder of tests/data it writes into)
SETS: dict[str, tuple[str, str]] = {
    "grading": ("bench.build_grading_set", "grading"),
    "garble-field": ("bench.garble_field.field1", "garble"),
    "garble-field2": ("bench.garble_field.field2", "garble"),
    "garble-field3": ("bench.garble_field.field3", "garble"),
    "garble-field4": ("bench.garble_field.field4", "garble"),
    "garble-synthetic": ("bench.garble_synthetic", "garble"),
}


def builder(name: str) -> Callable[[Path], list[Path]]:
    """The `build(out_dir)` function of a data set."""
    return importlib.import_module(SETS[name][0]).build


def committed(name: str) -> Path:
    """The folder of tests/data holding a data set's committed files."""
    return ROOT / "tests" / "data" / SETS[name][1]


def differing(name: str) -> list[str]:
    """Rebuild one data set into a temp dir; the names of its files that differ from the
    committed ones (empty when all match byte for byte)."""
    with tempfile.TemporaryDirectory(prefix="evalrun-bench-data-") as tmp:
        return [
            path.name
            for path in builder(name)(Path(tmp))
            if not filecmp.cmp(path, committed(name) / path.name, shallow=False)
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.build_data", description=__doc__)
    parser.add_argument("set", choices=[*SETS, "all", "check"])
    parser.add_argument("only", nargs="*", help="with check: the sets to check (all by default)")
    args = parser.parse_args(argv)
    if args.set == "check":
        unknown = sorted(set(args.only) - set(SETS))
        if unknown:
            parser.error(f"unknown data set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
        bad = [f"{n}: {f}" for n in args.only or SETS for f in differing(n)]
        for line in bad:
            print(f"differs from the committed file: {line}", file=sys.stderr)
        return 1 if bad else 0
    for name in SETS if args.set == "all" else [args.set]:
        builder(name)(committed(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
