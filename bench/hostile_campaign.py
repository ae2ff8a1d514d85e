"""The hostile campaign: `evalrun score` against every misbehaviour we know, one table of verdicts.

Each scenario runs `python -m evalrun score` (a real process) against a server on 127.0.0.1 that
misbehaves one way: every raw byte shape of tests/rawserver.py, status mixes from the fake server
(500s at 10/50/100%, 429s, Retry-After past the deadline), the server killed mid-run, SIGINT /
SIGTERM / SIGKILL to evalrun (then a resume), a disk full at three fill levels (a tmpfs this
script mounts and unmounts; then a resume once room is back), two writers of one run, and bad
flags; then the third round (bench/hostile_round3.py): malformed, foreign and non-finite token
traces, hostile numbers in bodies, fidelity on 5,000 items, engines that require a key, kill -9
of score and bisect on a local lane, servers that cap connections, bad suites, a large export. Every scenario must hold the same invariants:

- no traceback; the exit code the scenario expects (errors.py: 2 usage, 3 endpoint, 4 items in
  error, 130 interrupted), and at most one error line on stderr (the wait notices aside);
- items.jsonl and run.json agreeing (the summary counts exactly the whole records the file holds);
- no secret (the API key, a header value) anywhere under results/;
- no raw control byte (ESC, BEL, NUL, bidi override) on stdout or stderr;
- peak memory of the evalrun process under 600 MB.

    python -m bench.hostile_campaign [--quick]   # --quick hangs at --timeout 10, not the default 120
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.hostile_common import (
    SECRET_KEY,
    THOUGHT,
    Verdict,
    check,
    evalrun,
    score_args,
    store_problems,
    table_of,
)
from bench.hostile_round3 import round3_scenarios
from tests.fakeserver import FakeServer, Fault, http_error, reply, simple_item, write_suite
from tests.rawserver import CHAT, HANG, RESET, RawServer, http

# -- the scenarios ---------------------------------------------------------------------------------

RAW_SHAPES: dict[str, list] = {
    "content_length_short": [http(CHAT, length=10)],
    "content_length_long": [http(CHAT, length=len(CHAT) + 50)],
    "status_line_garbage": [b"HTTP/1.1 abc\r\n\r\n"],
    "http09_body_only": [b"{}"],
    "nul_bytes": [b"\x00" * 64],
    "http2_frame": [b"\x00\x00\x12\x04\x00\x00\x00\x00\x00"],
    "header_without_colon": [b"HTTP/1.1 200 OK\r\nBad Header\r\nContent-Length: 2\r\n\r\n{}"],
    "header_line_too_long": [
        b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\nContent-Length: 2\r\n\r\n{}"
    ],
    "two_content_lengths": [http(CHAT, extra="Content-Length: 5\r\n")],
    "chunk_size_garbage": [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"],
    "chunked_cut": [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"],
    "body_cut_then_reset": [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", RESET],
    "closed_at_once": [],
    "reset_at_once": [RESET],
    "status_line_then_close": [b"HTTP/1.1 200 OK\r\n"],
    "hang": [HANG],
    "hang_after_head": [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", HANG],
    "escape_codes_in_body": [http("\x1b]0;pwned\x07\x1b[2J<html>\u202e".encode())],
    "huge_body_no_length": [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        b'{"choices": [{"message": {"content": "' + b"A" * (40 * 1024 * 1024),
    ],
    "gzip_bomb_header": [http(b"\x1f\x8b" + b"\x00" * 100, extra="Content-Encoding: gzip\r\n")],
    "gzip_twice_over_plain_bytes": [http(b"plain", extra="Content-Encoding: gzip, gzip\r\n")],
    "too_many_headers": [
        b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(200)) + b"\r\n"
    ],
    "redirect_loop": [
        http(
            b"",
            status="307 Temporary Redirect",
            extra="Location: /v1/chat/completions\r\nConnection: close\r\n",
        )
    ],
    "redirect_to_ftp": [
        http(b"", status="307 Temporary Redirect", extra="Location: ftp://127.0.0.1/x\r\n")
    ],
    "redirect_to_a_bad_url": [
        http(b"", status="307 Temporary Redirect", extra="Location: http://[::1/x\r\n")
    ],
}


def raw_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    for name, steps in RAW_SHAPES.items():
        v = Verdict(f"raw: {name}", "rc 3 or 4")
        results = work / f"raw-{name}"
        with RawServer(lambda path, steps=steps: steps) as server:
            got = evalrun(score_args(server.base_url, suite, results, "--timeout", "3"))
        check(v, got, results, {3, 4})
        out.append(v)
    v = Verdict("raw: ssh banner", "rc 3, one line")
    with RawServer(lambda path: [HANG], banner=b"SSH-2.0-OpenSSH_9.6\x1b[2J\r\n") as server:
        got = evalrun(score_args(server.base_url, suite, work / "raw-banner", "--timeout", "3"))
    check(v, got, work / "raw-banner", {3})
    if "not valid HTTP" not in got.err:
        v.problems.append("banner not named")
    out.append(v)
    return out


def status_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    mixes: dict[str, tuple[Callable[[int], Fault | None], set[int], tuple[str, ...]]] = {
        "500 at 10%": (lambda n: http_error(500, "boom") if n % 10 == 0 else None, {0, 4}, ()),
        "500 at 50%": (lambda n: http_error(500, "boom") if n % 2 == 0 else None, {0, 4}, ()),
        "500 at 100%": (lambda n: http_error(500, "boom"), {3}, ()),
        "429 Retry-After 0 at 100%": (
            lambda n: http_error(429, "slow", retry_after=0),
            {3},
            (),
        ),
        "429 Retry-After 3600": (
            lambda n: http_error(429, "slow", retry_after=3600),
            {3, 4},
            ("--timeout", "5"),
        ),
        "400 at 30%": (lambda n: http_error(400, "bad") if n % 3 == 0 else None, {4}, ()),
        "502 HTML page at 20%": (
            lambda n: Fault(502, kind="html", message="Bad Gateway") if n % 5 == 0 else None,
            {0, 4},
            (),
        ),
    }
    for name, (fault_of, rcs, extra) in mixes.items():
        v = Verdict(f"status: {name}", "rc " + "/".join(map(str, sorted(rcs))))
        counter = iter(range(10**9))
        lock = threading.Lock()

        def rule(
            req: dict,
            fault_of: Callable[[int], Fault | None] = fault_of,
            counter: Iterator[int] = counter,
            lock: threading.Lock = lock,
        ) -> object:
            with lock:
                n = next(counter)
            return fault_of(n) or reply("ok")

        results = work / f"status-{len(out)}"
        with FakeServer(rule=rule) as fake:  # type: ignore[arg-type]
            started = time.monotonic()
            got = evalrun(score_args(fake.base_url, suite, results, *extra))
        check(v, got, results, rcs)
        if name == "429 Retry-After 3600" and time.monotonic() - started > 30:
            v.problems.append("waited past the deadline")
        out.append(v)
    return out


def kill_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    # the server dies mid-run
    v = Verdict("kill: server killed mid-run", "rc 3, resumable")
    asked: list[str] = []
    server: RawServer

    def shape(path: str) -> list:
        asked.append(path)
        if len(asked) == 6:
            threading.Thread(target=server.kill).start()
            return [HANG]
        return [http(CHAT)]

    server = RawServer(shape).start()
    results = work / "kill-server"
    got = evalrun(score_args(server.base_url, suite, results, "--concurrency", "2"))
    server.stop()
    check(v, got, results, {3})
    if "connection refused" not in got.err:
        v.problems.append("refusal not named")
    out.append(v)
    # signals to evalrun, then a resume
    for sig, rcs in ((signal.SIGINT, {130}), (signal.SIGTERM, {130}), (signal.SIGKILL, {-9})):
        v = Verdict(f"signal: {sig.name} then --resume", f"rc {sorted(rcs)}, resume 0")
        results = work / f"sig-{sig.name}"

        def asking(results: Path = results) -> bool:
            return any(p.stat().st_size > 0 for p in results.glob("*/items.jsonl"))

        with FakeServer(latency=0.5) as fake:  # 20 items at 2 in flight: ~5 s of asking
            got = evalrun(
                score_args(fake.base_url, suite, results, "--concurrency", "2", "--name", "s"),
                signal_when=(asking, sig),
            )
            check(v, got, results, rcs)
            runs = [p.name for p in results.glob("*") if (p / "run.json").exists()]
            if sig == signal.SIGKILL:
                v.problems = [p for p in v.problems if p != "run.json still 'running'"]
            if len(runs) != 1:
                v.problems.append("no run to resume")
            else:
                again = evalrun(score_args(fake.base_url, suite, results, "--resume", runs[0]))
                if again.rc != 0:
                    v.problems.append(f"resume rc {again.rc}: {again.err.strip()[:80]}")
                v.problems += store_problems(results)
        out.append(v)
    return out


def disk_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    suite = write_suite(work / "suite-150", [simple_item(i) for i in range(150)])  # ~520 KB
    for free_kb in (40, 120, 330):
        v = Verdict(f"disk full: {free_kb} KB free, then --resume", "rc 2, resume 0")
        mount = work / f"fs-{free_kb}"
        mount.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True
        )
        if done.returncode != 0:
            v.problems.append("cannot mount a tmpfs (run as root)")
            out.append(v)
            continue
        try:
            ballast = mount / "ballast"
            ballast.write_bytes(bytes(shutil.disk_usage(mount).free - free_kb * 1024))
            with FakeServer(rule=lambda req: reply("ok", reasoning=THOUGHT)) as fake:
                results = mount / "r"
                got = evalrun(score_args(fake.base_url, suite, results))
                check(v, got, results, {2})
                ballast.unlink()
                runs = [p.name for p in results.iterdir() if (p / "run.json").exists()]
                if len(runs) == 1:
                    again = evalrun(score_args(fake.base_url, suite, results, "--resume", runs[0]))
                    if again.rc != 0:
                        v.problems.append(f"resume rc {again.rc}: {again.err.strip()[:80]}")
                    v.problems += store_problems(results)
                else:
                    v.problems.append(f"{len(runs)} runs")
        finally:
            subprocess.run(["umount", "-l", str(mount)], check=False)
        out.append(v)
    return out


def writer_scenarios(work: Path, suite: Path) -> list[Verdict]:
    v = Verdict("two --resume of one run at once", "2nd rc 2 naming pid")
    results = work / "writers"
    with FakeServer(rule=lambda req: http_error(400, "no")) as fake:
        evalrun(score_args(fake.base_url, suite, results, "--name", "w"))
        (run_id,) = [p.name for p in results.iterdir() if (p / "run.json").exists()]
        fake.rule = lambda req: reply("ok")
        fake.latency = 0.2
        first = subprocess.Popen(
            [sys.executable, "-m", "evalrun"]
            + score_args(fake.base_url, suite, results, "--resume", run_id, "--concurrency", "1"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "OPENAI_API_KEY": SECRET_KEY},
        )
        lock = results / run_id / ".lock"
        deadline = time.monotonic() + 30
        while f"pid {first.pid}" not in (lock.read_text() if lock.exists() else ""):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        asked = fake.chat_requests
        got = evalrun(score_args(fake.base_url, suite, results, "--resume", run_id))
        check(v, got, None, {2})
        if f"pid {first.pid}" not in got.err:
            v.problems.append("the first writer's pid not named")
        if first.wait(120) != 0:
            v.problems.append(f"first writer rc {first.returncode}")
        if fake.chat_requests - asked > 20:
            v.problems.append(f"{fake.chat_requests - asked} requests for 20 items")
        v.problems += store_problems(results)
    return [v]


def flag_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    with FakeServer() as fake:
        bad = {
            "--timeout 0": ["--timeout", "0"],
            "--timeout -5": ["--timeout=-5"],
            "--timeout nan": ["--timeout", "nan"],
            "--concurrency 0": ["--concurrency", "0"],
            "--repeats 0": ["--repeats", "0"],
            "--limit with --resume": ["--limit", "3", "--resume", "x"],
            "--resume of no run": ["--resume", "2020-01-01_000000_none"],
            "--max-response-mb 0": ["--max-response-mb", "0"],
            "--extra-body not JSON": ["--extra-body", "{nope"],
            "--fail-on-garble 2": ["--fail-on-garble", "2"],
        }
        for name, extra in bad.items():
            v = Verdict(f"flag: {name}", "rc 2, one line")
            results = work / f"flag-{len(out)}"
            got = evalrun(score_args(fake.base_url, suite, results, *extra))
            check(v, got, results, {2})
            if fake.chat_requests:
                v.problems.append("requests were sent")
            out.append(v)
        for name, url in (
            ("--endpoint port 99999", "http://127.0.0.1:99999/v1"),
            ("--endpoint ftp://", "ftp://127.0.0.1/v1"),
            ("--endpoint unclosed [", "http://[::1:8000/v1"),
            ("--endpoint control byte", fake.base_url + "\x01"),
            ("--endpoint no host", "http://:8000/v1"),
        ):
            v = Verdict(f"flag: {name}", "rc 2, one line")
            got = evalrun(score_args(url, suite, work / f"flag-{len(out)}"))
            check(v, got, None, {2})
            out.append(v)
        for name, header in (
            ("--header non-ASCII", "X-A: caf\u00e9"),
            ("--header CR", "X-A: a\rb"),
        ):
            v = Verdict(f"flag: {name}", "rc 2, one line")
            results = work / f"flag-{len(out)}"
            got = evalrun(score_args(fake.base_url, suite, results, "--header", header))
            check(v, got, results, {2})
            out.append(v)
        v = Verdict("env: HTTP_PROXY=ftp://...", "rc 2, one line")
        results = work / f"flag-{len(out)}"
        proxy = {"HTTP_PROXY": "ftp://127.0.0.1:1", "NO_PROXY": "", "no_proxy": ""}
        got = evalrun(score_args(fake.base_url, suite, results), env=proxy)
        check(v, got, results, {2})
        out.append(v)
    v = Verdict("flag: --results is a file", "rc 2, one line")
    (work / "a-file").write_text("x")
    with FakeServer() as fake:
        got = evalrun(score_args(fake.base_url, suite, work / "a-file"))
    check(v, got, None, {2})
    out.append(v)
    return out


def connection_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    v = Verdict("nothing listening", "rc 3, 'connection refused'")
    got = evalrun(score_args(f"http://127.0.0.1:{port}/v1", suite, work / "refused"))
    check(v, got, work / "refused", {3})
    if "connection refused" not in got.err or "event loop" in got.err:
        v.problems.append(f"said: {got.err.strip()[:80]}")
    out.append(v)
    v = Verdict("HTTP_PROXY where nothing listens", "rc 3, the proxy named")
    with FakeServer() as fake:
        proxy = {"HTTP_PROXY": f"http://127.0.0.1:{port}", "NO_PROXY": "", "no_proxy": ""}
        got = evalrun(score_args(fake.base_url, suite, work / "proxy"), env=proxy)
    check(v, got, work / "proxy", {3})
    if "cannot reach the proxy" not in got.err:
        v.problems.append(f"said: {got.err.strip()[:80]}")
    out.append(v)
    v = Verdict("https:// to an http port", "rc 3, TLS named")
    with FakeServer() as fake:
        url = fake.base_url.replace("http://", "https://")
        got = evalrun(score_args(url, suite, work / "tls", "--timeout", "5"))
    check(v, got, work / "tls", {3})
    if "TLS" not in got.err:
        v.problems.append(f"said: {got.err.strip()[:80]}")
    out.append(v)
    return out


def hang_scenario(work: Path, suite: Path, quick: bool) -> list[Verdict]:
    """Hung endpoints: the run stops after one --timeout of silence (scoring.state.silence_bound), told
    on stderr meanwhile; the bound is stated in `score --help`."""
    from evalrun.scoring.state import silence_bound

    out = []
    cases: list[tuple[str, int, list[str], bool]] = [
        # name, --timeout, extra flags, whether /v1/models hangs too
        ("chat hangs, /v1/models answers", 10 if quick else 120, [], False),
        ("chat hangs, --concurrency 1", 10, ["--concurrency", "1"], False),
        ("nothing answers, /v1/models neither", 10, [], True),
    ]
    for name, timeout, extra, models_hang in cases:
        # Measured from the server's first request: the start before it (imports, the suite)
        # takes 3-25 s on a loaded machine; after the bound, the run is written and ends.
        bound = silence_bound(timeout) + 5
        v = Verdict(
            f"hung: {name}, --timeout {timeout}", f"rc 3 within {bound:g} s of asking, told"
        )
        results = work / f"hang-{len(out)}"
        flags = [*extra, *(["--timeout", str(timeout)] if timeout != 120 else [])]
        asked: list[float] = []

        def hang(path: str, asked: list[float] = asked) -> list:
            asked.append(time.monotonic())
            return [HANG]

        def latency(body: dict, asked: list[float] = asked) -> float:
            asked.append(time.monotonic())
            return 10_000.0

        started = time.monotonic()
        if models_hang:
            with RawServer(hang, models=True) as server:
                got = evalrun(score_args(server.base_url, suite, results, *flags))
        else:
            with FakeServer(latency=latency) as fake:
                got = evalrun(score_args(fake.base_url, suite, results, *flags))
        check(v, got, results, {3})
        waited = started + got.secs - (asked[0] if asked else started)
        v.expect += f" (waited {waited:.1f} s)"
        if waited > bound:
            v.problems.append(f"waited {waited:.0f} s")
        if "no answer from the server" not in got.err:
            v.problems.append("silent while waiting")
        out.append(v)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="hang at --timeout 10, not 120")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryDirectory(prefix="evalrun-campaign-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", [simple_item(i) for i in range(20)])
        verdicts: list[Verdict] = []
        for group in (
            raw_scenarios,
            status_scenarios,
            connection_scenarios,
            kill_scenarios,
            disk_scenarios,
            writer_scenarios,
            flag_scenarios,
        ):
            try:
                verdicts += group(work, suite)
            except Exception as exc:  # a campaign bug must not hide the verdicts so far
                verdicts.append(Verdict(group.__name__, "-", problems=[f"campaign error: {exc!r}"]))
            print(f"... {group.__name__}: {len(verdicts)} scenarios so far", file=sys.stderr)
        verdicts += round3_scenarios(work, suite)
        print(f"... round3_scenarios: {len(verdicts)} scenarios so far", file=sys.stderr)
        verdicts += hang_scenario(work, suite, args.quick)
    print(table_of(verdicts))
    failed = sum(bool(v.problems) for v in verdicts)
    print(f"\n{len(verdicts) - failed} of {len(verdicts)} scenarios pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
