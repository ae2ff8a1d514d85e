"""`evalrun slope` against a fake engine whose decode slows down past a known prompt length."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from slope_fake import StreamingFake

from evalrun.base.errors import EndpointError, UsageError
from evalrun.cli import main
from evalrun.serving.target import TargetSpec
from evalrun.slope.record import (
    SlopePoint,
    SlopeRecord,
    SlopeSettings,
    depth_label,
    find_cliffs,
    load_slope,
    parse_depth,
    parse_depths,
    ratios_to_d0,
)
from evalrun.slope.report import compare_rows, headline, render_compare, render_text
from evalrun.slope.sweep import SlopeRequest, run_slope, summarize
from evalrun.slope.wire import StreamTiming, filler, is_context_error

# Decode is 12 ms/token below 1500 prompt tokens and 120 ms/token above: a cliff of 0.1. The tests
# that assert on it take the median of 3 runs, so one scheduling hiccup cannot fake or hide it.
CLIFF_AT = 1500
FLAT_S = 0.012


def cliff_latency(n_prompt: int) -> float:
    return FLAT_S if n_prompt < CLIFF_AT else 10 * FLAT_S


@pytest.fixture
def fake() -> Iterator[StreamingFake]:
    server = StreamingFake(token_latency=cliff_latency).start()
    try:
        yield server
    finally:
        server.stop()


def sweep(fake: StreamingFake, tmp_path: Path, model=None, **kw) -> SlopeRecord:  # type: ignore[no-untyped-def]
    args = dict(depths=(0, 512, 2048), pp=32, tg=6, concurrency=(1, 2), runs=1)
    args.update({k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})
    spec = TargetSpec(endpoint=fake.base_url, model=model)
    return run_slope(spec, SlopeRequest(**args), tmp_path)


# -- pure parts -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,tokens",
    [
        ("8k", 8192),
        ("128K", 131072),
        ("131072", 131072),
        ("0", 0),
        ("d0", 0),
        ("1.5k", 1536),
        ("1M", 1048576),
    ],
)
def test_parse_depth(text: str, tokens: int) -> None:
    assert parse_depth(text) == tokens


def test_parse_depths_sorts_and_rejects_junk() -> None:
    assert parse_depths("32k, 0,8k,8192") == [0, 8192, 32768]
    with pytest.raises(UsageError, match="8k"):
        parse_depth("eight")
    assert [depth_label(d) for d in (0, 8192, 262144, 1000)] == ["d0", "8K", "256K", "1000"]


def test_filler_is_deterministic_and_not_one_period() -> None:
    a = filler(30_000, seed=1)
    assert a == filler(30_000, seed=1) and 29_000 < len(a) <= 30_000
    assert a != filler(30_000, seed=2)
    block = a[:3000]
    assert a.count(block) == 1  # later blocks are reshuffled, not the same text again


def test_context_errors_are_recognised() -> None:
    assert is_context_error(400, "This model's maximum context length is 4096 tokens. However")
    assert is_context_error(400, "Requested tokens (5000) exceed context window of 4096")
    assert not is_context_error(400, "Unrecognized request argument supplied: ignore_eos")


def test_summarize_per_stream_and_aggregate() -> None:
    # Two streams of 11 tokens, each 1 s from first to last token: 10 t/s each.
    together = [
        StreamTiming(sent=0.0, first=1.0, last=2.0, chunks=11),
        StreamTiming(sent=0.0, first=1.0, last=2.0, chunks=11),
    ]
    serial = [
        StreamTiming(sent=0.0, first=1.0, last=2.0, chunks=11),
        StreamTiming(sent=0.0, first=2.5, last=3.5, chunks=11, usage_prompt=1100),
    ]
    p = summarize(8192, 2, [together], tg=11, base_tokens=100, probed_depth=8190)
    assert p.decode_tps == 10.0 and p.aggregate_tps == 20.0 and p.ttft_s == 1.0
    assert p.depth == 8190 and p.short == 0
    q = summarize(8192, 2, [serial], tg=12, base_tokens=100, probed_depth=8190)
    assert q.decode_tps == 10.0 and q.aggregate_tps == 8.0  # 20 tokens over a 2.5 s window
    assert q.depth == 1000 and q.short == 2


def _seed_record(values: dict[int, dict[int, float]]) -> SlopeRecord:
    depths = sorted(values)
    levels = sorted({c for row in values.values() for c in row})
    points = [
        SlopePoint(depth_target=d, depth=d, concurrency=c, decode_tps=v)
        for d, row in values.items()
        for c, v in row.items()
    ]
    return SlopeRecord(
        run_id="x",
        label="x",
        endpoint="http://h/v1",
        started_at="t",
        status="complete",
        settings=SlopeSettings(depths=depths, pp=2048, tg=128, concurrency=levels, runs=2),
        points=points,
    )


def test_seed_numbers_give_the_seed_ratios_and_the_c2_cliff() -> None:
    # The seeds: sglang c1 77.6 -> 23.5 (0.30, no single step halves); vLLM c2 30.3 @32K -> 5.6.
    rec = _seed_record(
        {
            0: {1: 77.6, 2: 50.0},
            8192: {1: 76.2, 2: 45.0},
            32768: {1: 57.8, 2: 30.3},
            131072: {1: 33.7, 2: 5.6},
            262144: {1: 23.5, 2: 2.1},
        }
    )
    assert round(ratios_to_d0(rec, 1)[262144], 2) == 0.30
    assert "256K/d0: c1 0.30" in headline(rec)
    cliffs = find_cliffs(rec)
    assert [(c.concurrency, c.from_depth, c.to_depth) for c in cliffs] == [
        (2, 32768, 131072),
        (2, 131072, 262144),
    ]
    text = render_text(rec)
    assert "5.6 (0.11) CLIFF" in text and "33.7 (0.43)" in text


# -- against the fake engine ------------------------------------------------------------------
@pytest.mark.slow
def test_sweep_finds_the_known_cliff(fake: StreamingFake, tmp_path: Path) -> None:
    rec = sweep(fake, tmp_path, runs=3)
    assert rec.status == "complete" and len(rec.points) == 6
    assert rec.calibration and abs(rec.calibration.pp_tokens - 32) <= 4  # one correction past 4
    for c in (1, 2):
        shallow, deep = rec.point(512, c), rec.point(2048, c)
        assert shallow and deep and shallow.decode_tps and deep.decode_tps
        assert abs(shallow.depth - 512) <= 16 and abs(deep.depth - 2048) <= 45  # type: ignore[operator]
        assert deep.short == 0 and deep.tokens == 6
    cliffs = {(c.concurrency, c.from_depth, c.to_depth) for c in find_cliffs(rec)}
    assert cliffs == {(1, 512, 2048), (2, 512, 2048)}
    assert ratios_to_d0(rec, 1)[2048] < 0.5 < ratios_to_d0(rec, 1)[512]
    # Written as it went, and readable back.
    folder = tmp_path / f"slope-{rec.run_id}"
    lines = (folder / "streams.jsonl").read_text().strip().split("\n")
    assert len(lines) == 3 * 3 * (1 + 2)
    assert load_slope(rec.run_id, tmp_path) == rec
    text = render_text(rec)
    assert "CLIFF c1: 512 -> 2K" in text and "2K/d0: c1" in text


@pytest.mark.slow
def test_every_request_is_cold_unless_warm_cache(fake: StreamingFake, tmp_path: Path) -> None:
    sweep(fake, tmp_path, depths=[512], concurrency=[2], runs=2)
    streamed = [r["messages"][0]["content"] for r in fake.requests if r.get("stream")]
    assert len(streamed) == 4 and len({t[:20] for t in streamed}) == 4
    fake.requests.clear()
    sweep(fake, tmp_path, depths=[512], concurrency=[2], runs=2, warm_cache=True)
    streamed = [r["messages"][0]["content"] for r in fake.requests if r.get("stream")]
    assert len({t[:20] for t in streamed}) == 1  # same depth prefix: a prefix cache may serve it
    assert len({t for t in streamed}) == 4  # but the pp part is always new


def test_streams_ask_for_exact_length(fake: StreamingFake, tmp_path: Path) -> None:
    sweep(fake, tmp_path, depths=[0], concurrency=[1])
    body = next(r for r in fake.requests if r.get("stream"))
    assert body["ignore_eos"] is True and body["min_tokens"] == 6 and body["max_tokens"] == 6
    assert body["stream_options"] == {"include_usage": True}


def test_rejected_extras_are_dropped_once(fake: StreamingFake, tmp_path: Path) -> None:
    fake.rejects = {"ignore_eos"}
    rec = sweep(fake, tmp_path, depths=[0, 512], concurrency=[1])
    assert rec.status == "complete" and rec.extras_dropped == ["ignore_eos"]
    assert all(p.decode_tps for p in rec.points)
    rejected = [r for r in fake.requests if "ignore_eos" in r]
    assert len(rejected) == 1  # dropped after the first 400, never sent again
    assert "engine rejected ignore_eos" in render_text(rec)


def test_depths_beyond_the_context_are_skipped(fake: StreamingFake, tmp_path: Path) -> None:
    fake.max_context = 1200  # a 400 with vLLM's context-length text past 1200 prompt words
    rec = sweep(fake, tmp_path, depths=[0, 512, 2048, 3000])
    assert rec.status == "complete"
    assert [p.skipped for p in rec.points] == [False, False, False, False, True, True, True, True]
    assert "maximum context length is 1200" in (rec.point(2048, 1).skip_reason or "")  # type: ignore[union-attr]
    longest = max(len(r["messages"][0]["content"].split()) for r in fake.requests)
    assert longest < 2200  # 3000 was never sent
    assert "skipped" in render_text(rec)


def test_depths_beyond_the_listed_max_model_len_are_not_sent(
    fake: StreamingFake, tmp_path: Path
) -> None:
    rec = sweep(fake, tmp_path, depths=[0, 8192], concurrency=[1])  # /v1/models lists 4096
    assert not rec.points[0].skipped and rec.points[1].skipped
    assert "beyond max context 4096" in (rec.points[1].skip_reason or "")
    assert max(len(r["messages"][0]["content"].split()) for r in fake.requests) < 4096


def test_stopping_short_is_detected_and_reported(fake: StreamingFake, tmp_path: Path) -> None:
    fake.eos_after, fake.honours_min = 3, False  # the engine ignores min_tokens and stops at 3
    rec = sweep(fake, tmp_path, depths=[0], concurrency=[1, 2])
    assert [(p.short, p.streams, p.tokens) for p in rec.points] == [(1, 1, 3), (2, 2, 3)]
    assert "stopped short of tg=6" in render_text(rec)


def test_streams_cut_off_by_the_server_are_failures(fake: StreamingFake, tmp_path: Path) -> None:
    fake.cut_after = 1
    rec = sweep(fake, tmp_path, depths=[0], concurrency=[2])
    (point,) = rec.points
    assert point.errors == 2 and point.streams == 0 and point.decode_tps is None
    text = render_text(rec)
    assert "failed streams: d0 c2 2" in text and "interrupt_requests=false" in text


def test_cli_exits_4_when_streams_failed(
    fake: StreamingFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.cut_after = 1
    code = main(
        [
            "slope",
            "--endpoint",
            fake.base_url,
            "--depths",
            "0",
            "--pp",
            "32",
            "--tg",
            "6",
            "--concurrency",
            "2",
            "--runs",
            "1",
            "--results",
            str(tmp_path),
            "--no-plot",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 4 and json.loads(out)["failed_streams"] == 2
    assert "2 stream(s) failed at 1 point(s)" in err


def test_unreachable_endpoint_is_an_endpoint_error(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match="cannot reach"):
        run_slope(
            TargetSpec(endpoint="http://127.0.0.1:9/v1"),
            SlopeRequest(depths=(0,), runs=1),
            tmp_path,
        )
    (folder,) = tmp_path.glob("slope-*")
    assert json.loads((folder / "slope.json").read_text())["status"] == "incomplete"


@pytest.mark.slow
def test_cli_json_table_and_png(fake: StreamingFake, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    fake.token_latency = 0.002
    code = main(
        [
            "slope",
            "--endpoint",
            fake.host_url,
            "--depths",
            "0,512,2k",
            "--pp",
            "32",
            "--tg",
            "8",
            "--concurrency",
            "1,2",
            "--runs",
            "1",
            "--results",
            str(tmp_path),
            "--name",
            "lane-a",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"run_id", "path", "points"} and out["run_id"].endswith("_lane-a")
    keys = {"depth", "concurrency", "ttft_s", "decode_tps", "aggregate_tps", "skipped"}
    assert len(out["points"]) == 6 and all(keys <= set(p) for p in out["points"])
    png = Path(out["path"]) / "slope.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    code = main(
        [
            "slope",
            "--endpoint",
            fake.base_url,
            "--depths",
            "0,512",
            "--pp",
            "32",
            "--tg",
            "8",
            "--concurrency",
            "1",
            "--runs",
            "1",
            "--results",
            str(tmp_path),
            "--name",
            "lane-b",
            "--no-plot",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0 and "depth" in text and "c1" in text and "512" in text

    plot = tmp_path / "both.png"
    assert (
        main(
            [
                "slope",
                "compare",
                "latest:lane-a",
                "latest:lane-b",
                "--results",
                str(tmp_path),
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "lane-a c1" in text and "lane-b c1" in text and "B/A" in text
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_compare_puts_lanes_side_by_side(fake: StreamingFake, tmp_path: Path) -> None:
    cliffy = sweep(fake, tmp_path, concurrency=[1], runs=3, label="cliffy")
    fake.token_latency = FLAT_S  # the same engine with the cliff fixed
    flat = sweep(fake, tmp_path, concurrency=[1], runs=3, label="flat")
    rows = {r["depth"]: r for r in compare_rows(cliffy, flat)}
    assert rows[2048]["ratio"] > 3 and 0.33 < rows[512]["ratio"] < 3
    assert rows[2048]["a_ratio_d0"] < 0.5 < rows[2048]["b_ratio_d0"]
    text = render_compare(cliffy, flat)
    assert "CLIFF in cliffy c1" in text and "CLIFF in flat" not in text


def test_contract_lane_is_booted_recorded_and_its_request_extra_sent(
    fake: StreamingFake, tmp_path: Path
) -> None:
    from contextlib import contextmanager

    from evalrun.serving.contract import contract_from_data, contract_hash
    from evalrun.serving.launcher import Server

    contract = contract_from_data(
        {
            "name": "lane-x",
            "engine": "vllm",
            "command": ["vllm", "serve"],
            "model": "m",
            "request": {"top_k": 7},
        }
    )
    logs = []

    @contextmanager
    def boot(c, log_path, on_progress=None):  # type: ignore[no-untyped-def]
        logs.append(log_path)
        yield Server(
            base_url=fake.base_url,
            model="fake-model",
            boot_seconds=1.5,
            engine_version="0.0-fake",
            argv=["vllm", "serve", "m"],
            env_redacted={},
            log_path=log_path,
            host="127.0.0.1",
            port=fake.port,
            pid=1,
            contract_hash=contract_hash(c),
        )

    path = tmp_path / "lane-x.yaml"
    path.write_text(yaml.safe_dump(contract.model_dump(exclude_none=True)))
    rec = run_slope(
        TargetSpec(contract=path),
        SlopeRequest(depths=(0,), pp=16, tg=4, concurrency=(1,), runs=1),
        tmp_path,
        launcher=boot,
    )
    assert rec.label == "lane-x" and rec.run_id.endswith("_lane-x")
    assert logs == [tmp_path / f"slope-{rec.run_id}" / "server.log"]
    assert rec.contract and rec.contract["name"] == "lane-x" and rec.contract["hash"]
    assert rec.server and rec.server["engine_version"] == "0.0-fake"
    assert rec.model_requested == "fake-model" and rec.provenance.get("evalrun")
    assert fake.requests and all(r.get("top_k") == 7 for r in fake.requests)


def test_set_without_contract_is_a_usage_error(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["slope", "--endpoint", "http://127.0.0.1:9", "--set", "n_ctx=4096"]) == 2
    assert "--contract" in capsys.readouterr().err


# -- sign-off rule ----------------------------------------------------------------------------
def test_slope_rule_fails_a_candidate_that_lost_decode_where_asked() -> None:
    from evalrun.signoff.policy import SlopeRule
    from evalrun.signoff.slope_checks import slope_checks

    sglang = _seed_record(
        {0: {1: 77.6}, 8192: {1: 76.2}, 32768: {1: 57.8}, 131072: {1: 33.7}, 262144: {1: 23.5}}
    )
    vllm = _seed_record(
        {0: {1: 51.1}, 8192: {1: 54.0}, 32768: {1: 53.6}, 131072: {1: 33.7}, 262144: {1: 37.8}}
    )
    # Judged only at long context, vLLM passes; at d0 it lost 34%.
    long_only = SlopeRule.model_validate({"max_decode_drop": 0.1, "depths": ["128K", "256K"]})
    checks = slope_checks(sglang, vllm, long_only)
    assert [c.outcome for c in checks] == ["pass"] and "2 points" in checks[0].reason
    failed = [c for c in slope_checks(sglang, vllm, SlopeRule()) if c.outcome == "fail"]
    assert [c.subject for c in failed] == ["d0 c1", "8K c1"]
    assert "fell 34% (77.6 -> 51.1 t/s), more than the 10% limit" in failed[0].reason
    # The other way round, the floor on the candidate's own slope catches sglang's 0.30.
    floor = SlopeRule(max_decode_drop=1.0, min_ratio_to_d0=0.5)
    cliff = [c for c in slope_checks(vllm, sglang, floor) if c.outcome == "fail"]
    assert [c.subject for c in cliff] == ["128K c1", "256K c1"]


def test_slope_rule_fails_where_the_candidate_skipped_a_depth() -> None:
    from evalrun.signoff.policy import SlopeRule
    from evalrun.signoff.slope_checks import slope_checks

    base = _seed_record({0: {2: 30.0}, 32768: {2: 30.3}})
    cand = _seed_record({0: {2: 30.0}, 32768: {2: 30.0}})
    cand.points[-1] = SlopePoint(
        depth_target=32768,
        depth=None,
        concurrency=2,
        skipped=True,
        skip_reason="beyond max context 16384",
    )
    checks = slope_checks(base, cand, SlopeRule(concurrency=[2]))
    (fail,) = [c for c in checks if c.outcome == "fail"]
    assert fail.subject == "32K c2" and "beyond max context 16384" in fail.reason
    with pytest.raises(ValueError, match="not a token count"):
        SlopeRule.model_validate({"depths": ["lots"]})


def test_two_served_models_need_model(fake: StreamingFake, tmp_path: Path) -> None:
    fake.models = ["a", "b"]
    with pytest.raises(UsageError, match="--model"):
        sweep(fake, tmp_path, depths=[0], concurrency=[1])
    rec = sweep(fake, tmp_path, depths=[0], concurrency=[1], model="b")
    assert rec.model_served == "b" and all(r["model"] == "b" for r in fake.requests)


def test_a_probe_on_a_pooled_connection_the_server_dropped_is_sent_again():
    """A keep-alive connection the server closes as the next request comes (llama-server drops
    idle ones): the depth probe is sent once more on a new connection, as a stream is, instead
    of ending the sweep with `the server closed the connection without an answer`."""
    import asyncio
    import time

    from evalrun.endpoint.http import HttpOptions, async_client
    from evalrun.slope.wire import Wire

    body = json.dumps({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 7}})
    answer = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        f"{body}"
    ).encode()

    async def one_answer_a_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        for answered in (True, False):  # the second request on a connection: closed unanswered
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(h.split(b":")[1])
                    for h in head.split(b"\r\n")
                    if h.lower().startswith(b"content-length")
                ),
                0,
            )
            await reader.readexactly(length)
            if answered:
                writer.write(answer)
                await writer.drain()
        writer.close()
        await writer.wait_closed()

    async def go() -> list[int | None]:
        server = await asyncio.start_server(one_answer_a_connection, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with async_client(base, HttpOptions(timeout=10)) as client:
                wire = Wire(client, base, "m", clock=time.monotonic)
                return [(await wire.probe("hello")).prompt_tokens for _ in range(2)]
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(go()) == [7, 7]
