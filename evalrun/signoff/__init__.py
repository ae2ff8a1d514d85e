"""The release gate: a candidate run against a baseline under a written policy.

policy.py is the policy (YAML) and the Check model; gate.py compares the two runs and checks every
rule; slope_checks.py checks the optional decode-slope rule on a pair of slope runs.
"""

