"""A booted server's log (server.log): the line each boot starts with, and the contract's secret
values scrubbed from what the engine wrote after it."""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path
from typing import IO

from evalrun.serving.contract import REDACTED, Contract, contract_hash, redact_argv


def log_header(log: IO[bytes], argv: list[str], contract: Contract) -> None:
    line = (
        f"# evalrun boot {contract.name} [{contract_hash(contract)[:12]}]: "
        f"{shlex.join(redact_argv(argv))}\n"
    )
    log.write(line.encode())
    log.flush()


def scrub_log(path: Path, secrets: list[str], start: int = 0) -> None:
    """Replace the contract's secret values in what the server wrote to its log (from `start`)."""
    if not secrets:
        return
    with contextlib.suppress(OSError), path.open("rb+") as fh:
        fh.seek(start)
        data = fh.read()
        clean = data
        for value in secrets:
            clean = clean.replace(value.encode(), REDACTED.encode())
        if clean != data:
            fh.seek(start)
            fh.write(clean)
            fh.truncate()
