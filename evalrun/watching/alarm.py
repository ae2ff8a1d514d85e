"""What an alarm sets off: the escalation (the anchor's items scored again and signed off against
the anchor) and the user's `--on-alarm` command, run with the event as JSON on stdin."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from evalrun.base.errors import EvalrunError, Interrupted, UsageError
from evalrun.base.jsondata import JSONObject, json_bytes
from evalrun.scoring.run import ScoreRequest, score_suite
from evalrun.signoff import Policy, signoff
from evalrun.store import RunRecord, RunStore

ON_ALARM_TIMEOUT_S = 60.0


def on_alarm_argv(command: str | None) -> list[str] | None:
    """--on-alarm's command line as argv (split as a shell would, never run by one); UsageError
    when it does not parse or its program is not found."""
    if not command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--on-alarm {command!r}: {exc}; quote it as a shell would") from exc
    if not argv or shutil.which(argv[0]) is None:
        raise UsageError(f"--on-alarm: command {argv[0] if argv else command!r} not found")
    return argv


def run_on_alarm(argv: list[str], data: JSONObject) -> str | None:
    """Run the command with the event on stdin; why it failed, or None."""
    try:
        done = subprocess.run(
            argv,
            input=json_bytes(data) + b"\n",
            capture_output=True,
            timeout=ON_ALARM_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return f"exit {done.returncode}" if done.returncode else None


def escalate(
    store: RunStore,
    anchor: RunRecord,
    request: ScoreRequest,
    policy: Policy,
    policy_file: str | None,
) -> JSONObject:
    """Score `request` (the anchor's items) into `store` and sign the run off against the anchor;
    the event's `escalation`: the run, the verdict and its reasons (or the error that stopped it).

    An anchor of a selection is signed off as one (`allow_incomplete`) unless the user's policy
    says otherwise: the escalation runs that selection, not the whole suite, by design."""
    if anchor.selection.get("ids") and policy_file is None:
        policy = policy.model_copy(update={"allow_incomplete": True})
    try:
        record, _ = score_suite(request, store)
        verdict = signoff(
            store, record.run_id, anchor.run_id, policy, policy_source=policy_file or "default"
        )
    except (KeyboardInterrupt, Interrupted):
        raise
    except EvalrunError as exc:
        return {"error": str(exc), "run_id": exc.run_id}
    return {
        "run_id": record.run_id,
        "signoff": verdict.verdict,
        "reasons": verdict.reasons,
        "headline": verdict.headline,
        "report": verdict.report,
    }
