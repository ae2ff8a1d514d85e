"""`evalrun export RUN --format jsonl|csv|junit [-o FILE]`: one row per item for dashboards and CI.

Each item appears once, as its final attempt (a resumed run's retried items are not repeated).
jsonl keeps every answer exactly; csv guards cells a spreadsheet would run as formulas (and, printed
to a terminal, shows control characters as escapes); junit has
one testcase per item (failure = failed, type `garbled` when garbled; error = request failed).
"""

from __future__ import annotations

import argparse


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
    import sys

    from evalrun.store import RunStore
    from evalrun.text_safety import terminal_text
    from evalrun.viewing.export import write_export

    text = write_export(RunStore(args.results), args.run, args.format, args.output)
    if args.output and args.output != "-":
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        if args.format == "csv" and sys.stdout.isatty():
            # csv keeps answers exact for files and pipes; a terminal must not run their ESC/BEL
            # sequences (jsonl and junit escape them in the format itself).
            text = terminal_text(text.replace("\r\n", "\n"))
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return 0
