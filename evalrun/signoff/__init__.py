"""The release gate: a candidate run against a baseline under a written policy.

policy.py is the policy (YAML), its defaults and the Check each rule produces; gate.py compares
the two runs and checks every rule; slope_checks.py checks the optional decode-slope rule on a
pair of slope runs.
"""

from __future__ import annotations

from evalrun.signoff.gate import Signoff, render_report, signoff, to_dict
from evalrun.signoff.policy import DEFAULT_POLICY_YAML, Check, Policy, SlopeRule, load_policy
from evalrun.signoff.slope_checks import slope_checks

__all__ = [
    "DEFAULT_POLICY_YAML",
    "Check",
    "Policy",
    "Signoff",
    "SlopeRule",
    "load_policy",
    "render_report",
    "signoff",
    "slope_checks",
    "to_dict",
]
