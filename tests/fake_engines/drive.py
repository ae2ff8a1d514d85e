"""Boot a contract with evalrun's launcher, print READY <port>, then wait to be interrupted.

    python drive.py CONTRACT.yaml LOG_PATH

Used by the launcher tests to send Ctrl-C / SIGTERM to a process that holds a booted server.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from evalrun.serving.contract import load_contract
from evalrun.serving.launcher import boot_server


def main() -> int:
    contract = load_contract(sys.argv[1])
    try:
        with boot_server(contract, Path(sys.argv[2])) as server:
            print(f"READY {server.port}", flush=True)
            time.sleep(120)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
