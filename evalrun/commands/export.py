"""`evalrun export RUN --format jsonl|csv|junit [-o FILE]`: one row per item for dashboards and CI.

Each item appears once, as its final attempt (a resumed run's retried items are not repeated).
jsonl keeps every answer exactly; csv guards cells a spreadsheet would run as formulas (and, printed
to a terminal, shows control characters as escapes); junit has
one testcase per item (failure = failed, type `garbled` when garbled; error = request failed).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="write a run's items as JSONL, CSV or JUnit XML",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "run",
        metavar="RUN",
        nargs="?",
        default="latest",
        help="run id, tag, `latest` or `latest:<label>` (default: latest)",
    )
    p.add_argument("--format", choices=["jsonl", "csv", "junit"], default="jsonl")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )


def run(args: argparse.Namespace) -> int:
    import io
    import sys

    from evalrun.base.text_safety import terminal_text
    from evalrun.store import RunStore
    from evalrun.viewing.export import write_export

    if args.output and args.output != "-":
        write_export(RunStore(args.results), args.run, args.format, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    elif args.format == "csv" and sys.stdout.isatty():
        buffer = io.StringIO()  # a terminal: shown with its control characters escaped
        write_export(RunStore(args.results), args.run, args.format, None, buffer)
        sys.stdout.write(terminal_text(buffer.getvalue().replace("\r\n", "\n")))
    else:
        write_export(RunStore(args.results), args.run, args.format, None, _Encodable(sys.stdout))
    return 0


class _Encodable:
    """A text stream that writes what UTF-8 cannot encode (a lone surrogate) as an escape."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return int(self.inner.write(text.encode("utf-8", "backslashreplace").decode("utf-8")))
