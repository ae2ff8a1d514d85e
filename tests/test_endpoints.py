"""Endpoints configured the way the OpenAI ecosystem does it, each through the CLI against a local
fake: request options, OPENAI_API_KEY / OPENAI_BASE_URL, a 401, an HTTP proxy and NO_PROXY, a
self-signed TLS server, the Python API inside a running event loop, and one pool bounded by
--concurrency."""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fakeserver import FakeServer

import evalrun
from evalrun.cli import main
from evalrun.endpoint.options import RequestOptions, options_differ

ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def score(fake: FakeServer | None, suite: Path, results: Path, *extra: str) -> int:
    argv = ["score", "--suite", str(suite), "--results", str(results), "--no-progress", "--json"]
    if fake is not None:
        argv += ["--endpoint", fake.base_url]
    return main([*argv, *extra])


def run_json(results: Path) -> dict:
    (path,) = results.glob("*/run.json")
    return json.loads(path.read_text())


# -- request options ---------------------------------------------------------------------------
def test_request_options_are_sent_and_recorded(fake_server, make_suite, tmp_path, capsys):
    body = tmp_path / "body.yaml"
    body.write_text("chat_template_kwargs:\n  enable_thinking: false\n")
    code = score(
        fake_server,
        make_suite(n=2),
        tmp_path / "r",
        *("--temperature", "0.7", "--top-p", "0.9", "--request-seed", "3"),
        *("--max-tokens-scale", "2.5", "--extra-body", f"@{body}"),
        *("--header", "X-Team: evals", "--header", "X-Secret:hush"),
    )
    assert code == 0, capsys.readouterr().err
    sent = fake_server.requests[0]
    assert (sent["temperature"], sent["top_p"], sent["seed"]) == (0.7, 0.9, 3)
    assert sent["max_tokens"] == 40  # 16 * 2.5
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert fake_server.headers[0]["x-team"] == "evals"
    sampling = run_json(tmp_path / "r")["sampling"]
    assert sampling["temperature"] == 0.7 and sampling["seed"] == 3
    assert sampling["extra"] == {"chat_template_kwargs": {"enable_thinking": False}}
    assert sampling["headers"] == {"X-Secret": "***", "X-Team": "***"}
    assert "hush" not in (next((tmp_path / "r").glob("*/run.json"))).read_text()


def test_defaults_stay_deterministic(fake_server, make_suite, tmp_path):
    assert score(fake_server, make_suite(n=1), tmp_path / "r") == 0
    sent = fake_server.requests[0]
    assert sent["temperature"] == 0 and "top_p" not in sent and "seed" not in sent
    assert sent["logprobs"] is True and sent["top_logprobs"] == 5  # the tokens fidelity reads
    assert run_json(tmp_path / "r")["sampling"] == {"temperature": 0.0, "top_logprobs": 5}


@pytest.mark.parametrize(
    "flags,says",
    [
        (["--extra-body", "{not json"], "--extra-body: not a JSON object"),
        (["--extra-body", "[1]"], "needs a JSON/YAML object"),
        (["--extra-body", '{"model": "x"}'], "may not set model"),
        (["--header", "no-colon"], "Name:value"),
        (["--temperature", "-1"], "temperature"),
        (["--max-tokens-scale", "0"], "max_tokens_scale"),
    ],
)
def test_bad_request_options_are_usage_errors(make_suite, tmp_path, capsys, flags, says):
    args = ["--endpoint", "http://127.0.0.1:9/v1", *flags]
    assert score(None, make_suite(n=1), tmp_path / "r", *args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_contract_request_block_is_the_same_thing():
    options = RequestOptions(seed=5).with_contract({"temperature": 0.6, "top_k": 20, "seed": 1})
    assert options.temperature == 0.6 and options.seed == 5  # a flag wins over the contract
    assert options.extra_body == {"top_k": 20}
    assert options_differ(options.record(), RequestOptions().record()) == [
        "extra",
        "seed",
        "temperature",
    ]
    assert options_differ({"temperature": 0}, {}) == []  # an old run.json without the key


# -- environment conventions and auth ----------------------------------------------------------
def test_openai_base_url_and_api_key_are_used(fake_server, make_suite, tmp_path, monkeypatch):
    fake_server.api_key = "sk-env"
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert score(None, make_suite(n=1), tmp_path / "r") == 0
    assert fake_server.headers[0]["authorization"] == "Bearer sk-env"
    assert "sk-env" not in next((tmp_path / "r").glob("*/run.json")).read_text()


def test_api_key_env_wins_over_openai_api_key(fake_server, make_suite, tmp_path, monkeypatch):
    fake_server.api_key = "sk-mine"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert score(fake_server, make_suite(n=1), tmp_path / "r", "--api-key-env", "MY_KEY") == 0


@pytest.mark.parametrize(
    "env,flags,says",
    [
        ({}, [], "no API key was sent: export OPENAI_API_KEY, or pass --api-key-env"),
        ({"OPENAI_API_KEY": "sk-bad"}, [], "the key from OPENAI_API_KEY was refused"),
        ({"K": "sk-bad"}, ["--api-key-env", "K"], "the key from --api-key-env K was refused"),
    ],
)
def test_401_hint_names_what_was_set(
    fake_server, make_suite, tmp_path, capsys, monkeypatch, env, flags, says
):
    fake_server.api_key = "sk-right"
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert score(fake_server, make_suite(n=1), tmp_path / "r", *flags) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and says in err and "sk-bad" not in err


# -- proxies -----------------------------------------------------------------------------------
class _Proxy(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[str]


class _ProxyHandler(BaseHTTPRequestHandler):
    """A forward proxy for plain http: absolute-form request line in, the origin's answer out."""

    server: _Proxy
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as tests/fakeserver.py: no 40 ms delayed-ACK stall

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def _forward(self) -> None:
        self.server.seen.append(self.path)
        target = http.client.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "proxy-connection"}
        conn.request(self.command, target.path or "/", body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = _forward


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    server = _Proxy(("127.0.0.1", 0), _ProxyHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_http_proxy_is_honoured_for_http_endpoints(
    fake_server, make_suite, tmp_path, monkeypatch, proxy
):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    assert score(fake_server, make_suite(n=2), tmp_path / "r") == 0
    assert any(p.endswith("/v1/models") for p in proxy.seen)
    assert sum(p.endswith("/v1/chat/completions") for p in proxy.seen) == 2


def test_no_proxy_bypasses_the_proxy(fake_server, make_suite, tmp_path, monkeypatch, proxy):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert score(fake_server, make_suite(n=2), tmp_path / "r") == 0
    assert proxy.seen == [] and fake_server.chat_requests == 2


# -- TLS ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    trustme = pytest.importorskip("trustme")
    authority = trustme.CA()
    pem = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(pem))
    return authority, pem


@pytest.fixture
def tls_server(ca) -> Iterator[FakeServer]:
    authority, _ = ca
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(ctx)
    server = FakeServer().start(tls=ctx)
    try:
        yield server
    finally:
        server.stop()


def test_self_signed_tls_says_tls_and_what_to_do(tls_server, make_suite, tmp_path, capsys):
    assert tls_server.base_url.startswith("https://")
    assert score(tls_server, make_suite(n=1), tmp_path / "r") == 3
    err = capsys.readouterr().err
    assert "TLS certificate not trusted" in err and "--ca-bundle" in err
    assert "is the server up" not in err


def test_ca_bundle_trusts_a_private_ca(tls_server, ca, make_suite, tmp_path):
    assert score(tls_server, make_suite(n=2), tmp_path / "r", "--ca-bundle", str(ca[1])) == 0
    assert tls_server.chat_requests == 2


def test_ssl_cert_file_trusts_a_private_ca(tls_server, ca, make_suite, tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(ca[1]))
    assert score(tls_server, make_suite(n=1), tmp_path / "r") == 0


def test_insecure_skips_the_check(tls_server, make_suite, tmp_path):
    assert score(tls_server, make_suite(n=1), tmp_path / "r", "--insecure") == 0


def test_unreadable_ca_bundle_is_a_usage_error(make_suite, tmp_path, capsys):
    bad = tmp_path / "nope.pem"
    bad.write_text("not a certificate")
    args = ["--endpoint", "https://127.0.0.1:9/v1", "--ca-bundle", str(bad)]
    assert score(None, make_suite(n=1), tmp_path / "r", *args) == 2
    assert "--ca-bundle" in capsys.readouterr().err


# -- one pool, bounded -------------------------------------------------------------------------
def test_connections_are_bounded_by_concurrency(fake_server, make_suite, tmp_path):
    fake_server.latency = 0.05
    assert score(fake_server, make_suite(n=12), tmp_path / "r", "--concurrency", "3") == 0
    assert fake_server.max_in_flight <= 3


# -- the Python API ----------------------------------------------------------------------------
def test_score_works_inside_a_running_loop(fake_server, make_suite, tmp_path):
    suite = str(make_suite(n=2))

    async def notebook_cell():
        synced = evalrun.score(fake_server.base_url, suite=suite, results=tmp_path / "a")
        awaited = await evalrun.ascore(
            fake_server.base_url, suite=suite, results=tmp_path / "b", temperature=0.2
        )
        return synced, awaited

    synced, awaited = asyncio.run(notebook_cell())
    assert synced.summary.passed == 2 and synced.status == "complete"
    assert awaited.summary.passed == 2 and awaited.sampling["temperature"] == 0.2
    assert fake_server.requests[-1]["temperature"] == 0.2


def test_score_from_plain_sync_code(fake_server, make_suite, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    record = evalrun.score(suite=str(make_suite(n=1)), results=tmp_path, limit=1)
    assert record.endpoint == fake_server.base_url and record.summary.total == 1
    with pytest.raises(TypeError):
        evalrun.score(fake_server.base_url, temprature=1)


def test_compare_and_signoff_warn_when_request_options_differ(
    fake_server, make_suite, tmp_path, capsys
):
    suite, results = make_suite(n=2), tmp_path / "r"
    assert score(fake_server, suite, results, "--name", "a") == 0
    assert score(fake_server, suite, results, "--name", "b", "--temperature", "0.8") == 0
    capsys.readouterr()
    assert main(["compare", "latest:a", "latest:b", "--results", str(results)]) == 0
    err = capsys.readouterr().err
    assert "different request options (temperature 0.0 vs 0.8)" in err
    main(
        [
            "signoff",
            "--candidate",
            "latest:b",
            "--baseline",
            "latest:a",
            "--results",
            str(results),
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert any("different request options" in w for w in out["warnings"])
    assert main(["compare", "latest:a", "latest:a", "--results", str(results)]) == 0
    assert "request options" not in capsys.readouterr().err
