"""evalrun command line: parse arguments, call one library function per command, exit.

Each subcommand lives in evalrun/commands/<name>.py with two functions: `add_parser(subparsers)`
(argparse only, so `evalrun --help` stays fast) and `run(args) -> int` (imports the heavy parts).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from evalrun import __version__
from evalrun.errors import EvalrunError

COMMANDS = [
    "score",
    "runs",
    "show",
    "suite",
    "grade",
    "garble",
    "lint",
    "bisect",
    "compare",
    "signoff",
    "tag",
    "slope",
    "lane",
    "report",
    "export",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalrun",
        description="Score, bisect and sign off self-hosted LLM serving contracts.",
    )
    parser.add_argument("--version", action="version", version=f"evalrun {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"evalrun.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    module = importlib.import_module(f"evalrun.commands.{args.command}")
    try:
        return int(module.run(args))
    except EvalrunError as exc:
        if args.debug:
            raise
        print(f"evalrun {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"evalrun {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `evalrun ... | head`: the reader left; stop quietly, as other Unix tools do.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 141


def entry() -> None:
    code = main()
    # At exit the interpreter's last collection walks every object still alive: after importing
    # openai and pydantic that is ~0.15-0.2 s of a short command's time. Frozen objects are
    # skipped; what the command wrote is already flushed and closed.
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    entry()
