"""`evalrun bisect` through the CLI, the real launcher and a tiny engine process whose answers
depend on its flags (garble with --load-format instanttensor; an unknown flag does not boot)."""

from __future__ import annotations

import json
import textwrap

import pytest
from fakeserver import simple_item, write_suite
from support.knob_contracts import write_contract

from evalrun.cli import main

pytestmark = pytest.mark.slow  # runs the evalrun CLI for whole bisections

ENGINE = textwrap.dedent("""
    import argparse, json, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    p = argparse.ArgumentParser()
    p.add_argument("model"); p.add_argument("--host"); p.add_argument("--port", type=int)
    p.add_argument("--load-format", default="auto"); p.add_argument("--max-num-seqs", default="8")
    p.add_argument("--kv-cache-dtype", default="auto")
    a = p.parse_args()
    text = "carecarecarecarecarecarecarecarecarecare" if a.load_format == "instanttensor" else "ok"
    class H(BaseHTTPRequestHandler):
        def log_message(self, *x): pass
        def _send(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data))); self.end_headers()
            self.wfile.write(data)
        def do_GET(self):
            self._send(200, {"object": "list", "data": [{"id": a.model, "object": "model"}]})
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self._send(200, {"id": "x", "object": "chat.completion", "model": a.model, "choices": [
                {"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": text}}]})
    print("engine up", flush=True)
    ThreadingHTTPServer((a.host, a.port), H).serve_forever()
""")


@pytest.fixture
def lane(tmp_path):
    engine = tmp_path / "engine.py"
    engine.write_text(ENGINE)
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])

    def contract(name, args):
        return write_contract(tmp_path, name, args, engine=engine)

    good = contract("good", {"load-format": "safetensors", "max-num-seqs": 8})
    bad = contract(
        "bad", {"load-format": "instanttensor", "max-num-seqs": 16, "kv-cache-dtype": "fp8"}
    )
    common = ["--suite", str(suite), "--results", str(tmp_path / "results"), "--burst", "2"]
    return good, bad, common


def test_cli_good_vs_bad_json(lane, capsys):
    good, bad, common = lane
    code = main(["bisect", "--good", good, "--bad", bad, "--json", *common])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["mode"] == "contracts"
    assert out["culprits"] == [{"knob": "load-format", "value": "instanttensor"}]
    assert out["verdict"].startswith(
        "culprit: load-format=instanttensor (garble 100% -> 0% with safetensors)"
    )
    assert out["boots"] == len(out["trials"]) <= 2 + 3  # endpoints + log2(3)+1
    assert {"mode", "verdict", "culprits", "first_bad_commit", "trials", "boots"} <= set(out)
    # the trials' runs are stored and marked: `runs` and `latest` skip them, `runs --all` lists them
    results = common[common.index("--results") + 1]
    assert main(["runs", "--results", results, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert main(["runs", "--all", "--results", results, "--json"]) == 0
    trials = json.loads(capsys.readouterr().out)["runs"]
    assert trials and all(r["trial"] and r["label"].startswith("bisect-") for r in trials)
    assert main(["show", "latest", "--results", results]) == 2
    assert "other than bisect trials" in capsys.readouterr().err


def test_cli_text_table_progress_and_cache(lane, capsys):
    good, bad, common = lane
    assert main(["bisect", "--good", good, "--bad", bad, *common]) == 0
    cap = capsys.readouterr()
    assert "variant" in cap.out and "outcome" in cap.out and "boot s" in cap.out
    assert "culprit: load-format=instanttensor" in cap.out
    assert "booting" in cap.err  # live progress names the variant being booted
    assert main(["bisect", "--good", good, "--bad", bad, "--json", *common]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["boots"] == 0


def test_cli_knob_mode_and_exit_codes(lane, capsys):
    good, bad, common = lane
    code = main(
        [
            "bisect",
            "--contract",
            bad,
            "--knob",
            "load-format",
            "--values",
            "safetensors",
            "--json",
            *common,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["culprits"] == [{"knob": "load-format", "value": "instanttensor"}]
    code = main(
        [
            "bisect",
            "--contract",
            good,
            "--knob",
            "max-num-seqs",
            "--values",
            "4,16",
            "--json",
            *common,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"].startswith("no value of max-num-seqs fails")
    assert main(["bisect", "--knob", "x", *common]) == 2  # usage
    capsys.readouterr()


def test_cli_unbootable_bad_side_exits_3(lane, capsys):
    good, bad, common = lane
    code = main(
        ["bisect", "--good", good, "--bad", bad, "--set", "no-such-flag=1", "--json", *common]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 3
    assert out["verdict"].startswith("cannot bisect: the bad side is untestable")
