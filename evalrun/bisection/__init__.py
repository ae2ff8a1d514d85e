"""Bisection: find the knob, set of knobs or commit behind a bad serving contract.

dd.py is the pure delta-debugging algorithm, gitbisect.py the binary search over commits, and
driver.py runs trials (boot a variant, probe it, classify the outcome) with the launcher and the
scorer injected.
"""
