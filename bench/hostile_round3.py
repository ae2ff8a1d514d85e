"""The hostile campaign's third round (run by bench/hostile_campaign.py): token traces, hostile
numbers, keyed engines, orphans, connection limits, suites and large exports.

Each scenario runs real `python -m evalrun` processes and holds the campaign's invariants
(`check`); some add their own (a verdict named, strict JSON, no engine left, peak memory).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from bench.hostile_common import ROOT, Outcome, Verdict, check, evalrun, score_args
from tests.fakeserver import FakeServer, reply, simple_item, write_suite
from tests.rawserver import CHAT, RawServer, http
from tests.slotserver import SlotServer

ENGINE = ROOT / "tests" / "fake_engines" / "engine.py"
HEALTHY = [("ok", -0.01, [("ok", -0.01), ("no", -5.0)]), (" then", -0.3, [(" then", -0.3)])]
OTHER = [("yes", -0.01, [("yes", -0.01)]), (" indeed", -0.2, [(" indeed", -0.2)])]
WRONG = [("no", -0.2, [("no", -0.2), ("ok", -1.9)]), (" then", -0.3, [(" then", -0.3)])]
MALFORMED = {
    "[]": [[]],
    '["The"]': [["The"]],
    'logprob "abc"': [["ok", "abc", []]],
    "[null, null, null]": [[None, None, None]],
}


def _strict(text: str) -> str | None:
    """Why `text` is not strict JSON (NaN/Infinity included), or None."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} in the output")

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError as exc:
        return str(exc)[:60]
    return None


def _lane(work: Path, suite: Path, name: str, steps_for: Callable[[int], list]) -> str:
    """Score `suite` against a fake whose tokens for item i are steps_for(i); the run id."""

    def rule(req: dict) -> object:
        i = int(req["messages"][-1]["content"].split()[1].rstrip(":"))
        steps = steps_for(i)
        return reply("".join(t for t, _, _ in steps), tokens=steps)

    results = work / "traces"
    with FakeServer(rule=rule) as fake:  # type: ignore[arg-type]
        got = evalrun(
            score_args(fake.base_url, suite, results, "--name", name, "--concurrency", "32")
        )
    assert got.rc in (0, 1), got.err
    return max(p.name for p in results.iterdir() if p.name.endswith(name))


def _tokens(results: Path, run_id: str) -> Path:
    return results / run_id / "tokens.jsonl"


def trace_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    results = work / "traces"
    a = _lane(work, suite, "a", lambda i: HEALTHY)
    b = _lane(work, suite, "b", lambda i: HEALTHY)
    c = _lane(work, suite, "c", lambda i: OTHER)
    clean = _tokens(results, b).read_text()
    res = ["--results", str(results)]
    commands = {
        "compare": ["compare", a, b, *res],
        "signoff": ["signoff", "--candidate", b, "--baseline", a, *res],
        "report": ["report", a, b, *res],
    }
    for shape, tokens in MALFORMED.items():
        rows = [json.loads(line) for line in clean.splitlines()]
        rows[0]["tokens"] = tokens
        _tokens(results, b).write_text("".join(json.dumps(r) + "\n" for r in rows))
        for name, argv in commands.items():
            v = Verdict(f"trace {shape}: {name}", "rc 0/1, a verdict")
            got = evalrun(argv)
            check(v, got, None, {0, 1})
            if name == "compare" and "fidelity: identical on 19 of 20" not in got.out:
                v.problems.append("the other 19 items not judged")
            out.append(v)
    rows = [json.loads(line) for line in clean.splitlines()]
    for row in rows:
        row["tokens"][0][1] = 1e308
    _tokens(results, b).write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name in ("compare", "signoff"):
        v = Verdict(f"trace logprob 1e308: {name} --json", "rc 0/1, strict JSON")
        got = evalrun([*commands[name], "--json"])
        check(v, got, None, {0, 1})
        why = _strict(got.out)
        if why:
            v.problems.append(why)
        out.append(v)
    shutil.copy(_tokens(results, c), _tokens(results, b))
    for name in ("compare", "signoff"):
        v = Verdict(f"trace copied from another run: {name}", "not comparable, named")
        got = evalrun(commands[name])
        check(v, got, None, {0, 1})
        if "do not spell the stored answers" not in got.out:
            v.problems.append("judged as if its own")
        out.append(v)
    _tokens(results, b).write_text(clean)
    for label, lp in (("NaN", math.nan), ("Infinity", math.inf)):
        v = Verdict(f"endpoint sends {label} logprobs", "run.json names them")
        run_id = _lane(work, suite, f"lp{label.lower()}", lambda i, lp=lp: [("ok", lp, [])])
        why = json.loads((results / run_id / "run.json").read_text())["fidelity"]
        said = why.get("unavailable", "")
        if ("NaN" if label == "NaN" else "infinite") not in said or "ignores" in said:
            v.problems.append(f"said: {said[:60]}")
        v.rc = 0
        out.append(v)
    v = Verdict("endpoint sends logprobs as a list", "run.json names the type")

    def listed(req: dict) -> object:
        body = reply("ok").body(req, "fake-model", 0)
        body["choices"][0]["logprobs"] = ["not", "an", "object"]
        return reply(raw=body)

    with FakeServer(rule=listed) as fake:  # type: ignore[arg-type]
        got = evalrun(score_args(fake.base_url, suite, work / "lp-list"))
    check(v, got, work / "lp-list", {0, 1})
    (folder,) = (work / "lp-list").iterdir()
    said = json.loads((folder / "run.json").read_text())["fidelity"].get("unavailable", "")
    if "not an object" not in said:
        v.problems.append(f"said: {said[:60]}")
    out.append(v)
    return out


def body_scenarios(work: Path, suite: Path) -> list[Verdict]:
    huge = (
        b'{"model": "fake-model", "choices": [{"message": {"content": "ok"}, "finish_reason": '
        b'"stop", "logprobs": {"content": [{"token": "ok", "logprob": '
        + b"1" * 401
        + b', "top_logprobs": []}]}}]}'
    )
    deep = b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    out = []
    for name, body in (("a 401-digit logprob", huge), ("200 KB nested 100,000 deep", deep)):
        v = Verdict(f"body: {name}", "rc 4, one bad_response, the rest passed")
        asked: list[str] = []

        def shape(path: str, body: bytes = body, asked: list[str] = asked) -> list:
            asked.append(path)
            return [http(body if len(asked) == 1 else CHAT)]

        results = work / f"body-{len(out)}"
        with RawServer(shape) as server:
            got = evalrun(score_args(server.base_url, suite, results, "--concurrency", "1"))
        check(v, got, results, {4})
        rows = [json.loads(x) for x in (next(results.iterdir()) / "items.jsonl").open()]
        kinds = [r["error"]["kind"] for r in rows if r["status"] == "error"]
        if kinds != ["bad_response"] or len(rows) != 20:
            v.problems.append(f"{len(rows)} records, errors {kinds}")
        out.append(v)
    return out


def fidelity_scale_scenarios(work: Path) -> list[Verdict]:
    suite = write_suite(work / "suite5000", [simple_item(i) for i in range(5000)], name="big")
    a = _lane(work, suite, "big-a", lambda i: HEALTHY)
    b = _lane(work, suite, "big-b", lambda i: WRONG if i % 50 == 0 else HEALTHY)
    res = ["--results", str(work / "traces")]
    out = []
    for name, argv in (
        ("compare", ["compare", a, b, *res]),
        ("signoff --json", ["signoff", "--candidate", b, "--baseline", a, *res, "--json"]),
    ):
        v = Verdict(f"fidelity on 5,000 items: {name}", "a verdict, no overflow")
        got = evalrun(argv)
        check(v, got, None, {0, 1})
        said = got.out if name == "compare" else json.dumps(json.loads(got.out or "{}"))
        if "100 hard" not in said and '"hard": 100' not in said:
            v.problems.append("no fidelity verdict")
        out.append(v)
    return out


def _contract(folder: Path, name: str, env: dict | None = None, **args: object) -> Path:
    path = folder / f"{name}.yaml"
    base = {"pidfile": str(folder / f"{name}.pids"), "spawn-child": True}
    data = {
        "name": name,
        "engine": "vllm",
        "command": [sys.executable, str(ENGINE)],
        "model": "fake-model",
        "port": 0,
        "boot_timeout": 60,
        "args": {**base, **args},
    }
    if env:
        data["env"] = env
    path.write_text(yaml.safe_dump(data))
    return path


def keyed_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    folder = work / "keyed"
    folder.mkdir()
    for where, kw in (
        ("args.api-key", {"api-key": "sk-engine-campaign"}),
        ("env VLLM_API_KEY", {"env": {"VLLM_API_KEY": "sk-engine-campaign"}}),
    ):
        v = Verdict(f"keyed engine: {where}", "rc 0, boots and scores")
        path = _contract(folder, where.split()[-1].replace(".", "-"), **kw)  # type: ignore[arg-type]
        results = folder / f"r-{len(out)}"
        argv = ["score", "--contract", str(path), "--suite", str(suite), "--results", str(results)]
        got = evalrun([*argv, "--no-progress"])
        check(v, got, results, {0, 1})
        leaked = [
            p.name for p in results.rglob("*") if p.is_file() and b"sk-engine" in p.read_bytes()
        ]
        if leaked:
            v.problems.append(f"key in {leaked}")
        out.append(v)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def orphan_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    probes = write_suite(
        work / "probes", [simple_item(i, tags=["probe"]) for i in range(8)], name="probes"
    )
    for command in ("score --contract", "bisect"):
        for moment in ("boot", "trial"):
            v = Verdict(f"kill -9 of {command} mid-{moment}", "no engine left within 8 s")
            folder = work / f"orphan-{len(out)}"
            folder.mkdir()
            delays = {"boot-delay": 30} if moment == "boot" else {"reply-delay": 1.0}
            good = _contract(folder, "good", **delays)  # type: ignore[arg-type]
            if command == "bisect":
                bad = _contract(folder, "bad", message="b", **delays)  # type: ignore[arg-type]
                argv = ["bisect", "--good", str(good), "--bad", str(bad), "--suite", str(probes)]
            else:
                argv = ["score", "--contract", str(good), "--suite", str(suite), "--no-progress"]
            argv += ["--results", str(folder / "results")]

            def pids(folder: Path = folder) -> list[int]:
                return [int(p) for f in folder.glob("*.pids") for p in f.read_text().split()]

            def served(folder: Path = folder) -> bool:
                return any(
                    "POST /v1/chat/completions" in p.read_text(errors="replace")
                    for p in folder.rglob("*.log")
                    if p.is_file()
                )

            ready = (lambda: len(pids()) >= 2) if moment == "boot" else served
            got = evalrun(argv, signal_when=(ready, signal.SIGKILL))
            seen = pids()
            ends = time.monotonic() + 8
            while any(_alive(p) for p in seen) and time.monotonic() < ends:
                time.sleep(0.1)
            left = [p for p in seen if _alive(p)]
            v.rc, v.secs, v.rss_mb = got.rc, got.secs, got.rss_mb
            if got.rc != -9:
                v.problems.append(f"rc {got.rc}: not killed mid-{moment}")
            if not seen or left:
                v.problems.append(f"engine processes left: {left}" if seen else "no engine seen")
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            out.append(v)
    return out


def connection_limit_scenarios(work: Path) -> list[Verdict]:
    suite = write_suite(work / "suite184", [simple_item(i) for i in range(184)], name="conn")
    out = []
    for mode in ("reset", "queue"):
        v = Verdict(f"4 connections, the rest {mode}: --concurrency 256", "rc 0, 184/184")
        results = work / f"slots-{mode}"
        with SlotServer(slots=4, mode=mode) as server:
            got = evalrun(score_args(server.base_url, suite, results, "--concurrency", "256"))
        check(v, got, results, {0})
        if "184/184" not in got.out:
            v.problems.append("not 184/184")
        out.append(v)
    return out


def suite_scenarios(work: Path, suite: Path) -> list[Verdict]:
    out = []
    items = [simple_item(i) for i in range(20)]
    items[3]["grader"] = {"kind": "exact", "answer": "ok", "strip": "maybe"}
    typed = write_suite(work / "typed", items)
    v = Verdict("suite: wrong-typed grader params", "rc 2 before a run, item named")
    results = work / "typed-r"
    with FakeServer() as fake:
        got = evalrun(score_args(fake.base_url, typed, results))
        asked = fake.chat_requests
    check(v, got, results, {2})
    if asked or (results.exists() and any(results.iterdir())) or "basic-003" not in got.err:
        v.problems.append(f"{asked} asked, or a run written, or the item not named")
    out.append(v)
    evil = write_suite(
        work / "evil", [simple_item(i) for i in range(3)], name="evil\x1b]0;pwned\x07\x1b[2J"
    )
    results = work / "evil-r"
    with FakeServer() as fake:
        for name, argv in (
            ("score", score_args(fake.base_url, evil, results)),
            ("runs", ["runs", "--results", str(results)]),
            ("show", ["show", "latest", "--results", str(results)]),
            ("suite show", ["suite", "show", str(evil)]),
        ):
            v = Verdict(f"suite named with ESC/BEL: {name}", "rc 0, escaped")
            got = evalrun(argv)
            check(v, got, None, {0})
            out.append(v)
    return out


def export_scenario(work: Path, suite: Path) -> list[Verdict]:
    v = Verdict("export of a ~100 MB run", "peak RSS < 2x the largest record + 60 MB")
    results = work / "export-r"
    with FakeServer() as fake:
        evalrun(score_args(fake.base_url, suite, results))
    folder = next(results.iterdir())
    first = json.loads((folder / "items.jsonl").read_text().splitlines()[0])
    largest = 0
    with (folder / "items.jsonl").open("w") as fh:
        for n in range(1000):
            row = dict(first, id=f"basic-{n:03d}")
            row["response"] = dict(first["response"], content=f"{n} " + "word " * 20_000)
            line = json.dumps(row) + "\n"
            largest = max(largest, len(line))
            fh.write(line)
    got: Outcome = evalrun(
        ["export", folder.name, "--results", str(results), "-o", str(work / "x")]
    )
    check(v, got, None, {0})
    if got.rss_mb > 2 * largest / 2**20 + 60:
        v.problems.append(f"peak {got.rss_mb:.0f} MB")
    v.expect += f" (largest {largest / 1024:.0f} KB)"
    return [v]


def round3_scenarios(work: Path, suite: Path) -> list[Verdict]:
    """Every scenario of the third round (what the campaign's main calls)."""
    out: list[Verdict] = []
    for group in (
        lambda: trace_scenarios(work, suite),
        lambda: body_scenarios(work, suite),
        lambda: fidelity_scale_scenarios(work),
        lambda: keyed_scenarios(work, suite),
        lambda: orphan_scenarios(work, suite),
        lambda: connection_limit_scenarios(work),
        lambda: suite_scenarios(work, suite),
        lambda: export_scenario(work, suite),
    ):
        try:
            out += group()
        except Exception as exc:  # a campaign bug must not hide the verdicts so far
            out.append(Verdict("round 3 group", "-", problems=[f"campaign error: {exc!r}"]))
    return out


if __name__ == "__main__":  # the third round alone
    import tempfile

    from bench.hostile_common import table_of

    with tempfile.TemporaryDirectory(prefix="evalrun-round3-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", [simple_item(i) for i in range(20)])
        verdicts = round3_scenarios(work, suite)
    print(table_of(verdicts))
    sys.exit(1 if any(v.problems for v in verdicts) else 0)
