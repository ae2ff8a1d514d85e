"""Serving contracts and the servers they boot.

contract.py is the Contract model (a YAML lane: engine, model, args, env) and its argv rendering
and knob overrides; launcher.py boots a contract, waits for readiness (readiness.py) and tears
it down (process.py: the process group; ports.py: the port);
bootfail.py classifies a failed boot from its log; lint.py checks a contract before booting;
reference.py finds the embedded llama.cpp reference model.
"""

from __future__ import annotations

from evalrun.serving.contract import (
    Contract,
    contract_from_data,
    contract_hash,
    load_contract,
    reference_contract_path,
)
from evalrun.serving.launcher import Server, boot_server, stderr_progress
from evalrun.serving.lint import lint_contract
from evalrun.serving.process import teardown

__all__ = [
    "Contract",
    "Server",
    "boot_server",
    "contract_from_data",
    "contract_hash",
    "lint_contract",
    "load_contract",
    "reference_contract_path",
    "stderr_progress",
    "teardown",
]
