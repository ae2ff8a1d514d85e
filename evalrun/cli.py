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

from evalrun.base.errors import EvalrunError
from evalrun.base.version import __version__

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
    "watch",
]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `command`, only that command's subparser under it (the
    usage and errors read the same): `evalrun score ...` need not import and build the other
    fourteen (~25 ms of every command's start)."""
    parser = argparse.ArgumentParser(
        prog="evalrun",
        description="Score, bisect and sign off self-hosted LLM serving contracts.",
    )
    parser.add_argument("--version", action="version", version=f"evalrun {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if command is None else [command]:
        importlib.import_module(f"evalrun.commands.{name}").add_parser(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option: the options before a
    command take no value), when it is one and no help is asked for before it (that help lists
    every command)."""
    for arg in argv:
        if arg in ("-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(argv))
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
