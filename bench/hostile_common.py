"""What the hostile campaign's rounds share (bench/hostile_campaign.py, bench/hostile_round3.py):
`evalrun` run as a process with its peak RSS, and the checks every scenario's outcome meets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SECRET_KEY = "sk-campaign-0123456789abcdef"
SECRET_HEADER = "hdr-campaign-secret-42"
CONTROL = ("\x1b", "\x07", "\x00", "\u202e")
NOTICE = ("waiting for", "no answer from the server")
MAX_RSS_MB = 600
THOUGHT = "Let me think about this question carefully. " * 70  # ~3.5 KB a record


@dataclass
class Outcome:
    rc: int
    out: str
    err: str
    secs: float
    rss_mb: float


@dataclass
class Verdict:
    name: str
    expect: str
    rc: int | str = "-"
    secs: float = 0.0
    rss_mb: float = 0.0
    problems: list[str] = field(default_factory=list)


def _peak_rss_mb(pid: int, stop: threading.Event, peak: list[float]) -> None:
    """Poll the child's VmHWM (its own high-water mark: getrusage of a forked child counts the
    parent's pages at fork, so a big campaign process would show in every child)."""
    while not stop.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(line.split()[1]) / 1024)
        except (OSError, ValueError):
            pass
        stop.wait(0.1)


def evalrun(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    signal_when: tuple[Callable[[], bool], int] | None = None,
) -> Outcome:
    """Run `python -m evalrun ARGS`; optionally send a signal once a condition holds."""
    full_env = {**os.environ, "OPENAI_API_KEY": SECRET_KEY, **(env or {})}
    full_env.pop("OPENAI_BASE_URL", None)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalrun", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=str(ROOT),
    )
    stop, peak = threading.Event(), [0.0]
    threading.Thread(target=_peak_rss_mb, args=(proc.pid, stop, peak), daemon=True).start()
    if signal_when is not None:
        ready, sig = signal_when

        def send() -> None:
            while proc.poll() is None and not stop.is_set():
                if ready():
                    proc.send_signal(sig)
                    return
                time.sleep(0.05)

        threading.Thread(target=send, daemon=True).start()
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    err = proc.stderr.read()  # type: ignore[union-attr]
    reader.join()
    proc.wait()
    stop.set()
    for stream in (proc.stdout, proc.stderr):
        assert stream is not None
        stream.close()
    return Outcome(
        rc=proc.returncode,
        out=b"".join(out_chunks).decode("utf-8", "replace"),
        err=err.decode("utf-8", "replace"),
        secs=time.monotonic() - started,
        rss_mb=peak[0],
    )


def score_args(base_url: str, suite: Path, results: Path, *extra: str) -> list[str]:
    return [
        "score",
        "--endpoint",
        base_url,
        "--suite",
        str(suite),
        "--results",
        str(results),
        "--no-progress",
        "--header",
        f"X-Campaign: {SECRET_HEADER}",
        *extra,
    ]


def check(v: Verdict, got: Outcome, results: Path | None, expect_rc: set[int]) -> None:
    v.rc, v.secs, v.rss_mb = got.rc, got.secs, got.rss_mb
    if got.rc not in expect_rc:
        v.problems.append(f"rc {got.rc} not in {sorted(expect_rc)}")
    if "Traceback" in got.err or "Traceback" in got.out:
        v.problems.append("traceback")
    errors = [ln for ln in got.err.splitlines() if ln and not any(n in ln for n in NOTICE)]
    errors = [ln for ln in errors if not ln.startswith("wrote ")]
    if len(errors) > 1:
        v.problems.append(f"{len(errors)} error lines")
    if any(c in got.out or c in got.err for c in CONTROL):
        v.problems.append("raw control byte on the terminal")
    if got.rss_mb > MAX_RSS_MB:
        v.problems.append(f"rss {got.rss_mb:.0f} MB")
    if results is not None:
        v.problems += store_problems(results)


def store_problems(results: Path) -> list[str]:
    """items.jsonl and run.json agree; no secret anywhere under results/."""
    out = []
    if not results.exists():
        return out
    for path in results.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if SECRET_KEY.encode() in data or SECRET_HEADER.encode() in data:
                out.append(f"secret in {path.name}")
    for folder in results.iterdir():
        run_json = folder / "run.json"
        if not run_json.exists():
            continue
        record = json.loads(run_json.read_text(encoding="utf-8"))
        lines = (
            (folder / "items.jsonl").read_text(encoding="utf-8").split("\n")
            if (folder / "items.jsonl").exists()
            else [""]
        )
        if lines[-1] != "":
            out.append("items.jsonl has a torn tail")
        rows = {r["id"]: r for r in map(json.loads, [x for x in lines[:-1] if x])}
        s = record.get("summary")
        if record.get("status") == "running":
            out.append("run.json still 'running'")
        elif s is None:
            out.append("no summary")
        else:
            passed = sum(r["status"] == "passed" for r in rows.values())
            errors = sum(r["status"] == "error" for r in rows.values())
            if (s["passed"], s["errors"]) != (passed, errors):
                out.append(f"summary {s['passed']}/{s['errors']} vs file {passed}/{errors}")
    return out


def table_of(verdicts: list[Verdict]) -> str:
    """The verdicts as one GitHub table."""
    rows = [
        [
            v.name,
            v.expect,
            str(v.rc),
            f"{v.secs:.1f}",
            f"{v.rss_mb:.0f}",
            "PASS" if not v.problems else "FAIL: " + "; ".join(v.problems),
        ]
        for v in verdicts
    ]
    from evalrun.base.tables import table

    return table(rows, ["scenario", "expected", "rc", "secs", "rss MB", "verdict"], fmt="github")
