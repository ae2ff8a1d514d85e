"""llama.cpp's own server in this interpreter: `python -m evalrun.serving.llamacpp -m MODEL ...`.

The embedded reference runs llama.cpp's native C++ server (`llama-server`) through the prebuilt
`xllamacpp` wheel, so nothing compiles at install time. This module takes **llama-server's own
flag names**, short and long spellings alike, and maps them onto `xllamacpp.CommonParams`: the
flags below by hand, and every other flag whose llama-server handler stores one value in one
field by llama.cpp's own table (llamacpp_flags.py, generated from its common/arg.cpp). So a
contract that drives it drives a real `llama-server` binary by changing only its `command`, and
a GPU build of xllamacpp takes `--n-gpu-layers`, `--split-mode`, `--cache-reuse` and the rest.
It serves until SIGTERM or SIGINT and exits 0.

Every start-up failure is one line on stderr and exit code 2, before llama.cpp is handed anything
it could crash on: an unknown flag (named), a missing file or one that is not a GGUF (its header is
read here first), a port already in use (evalrun's shared check in serving/ports.py). llama.cpp's
own refusals (a GGUF it cannot load, a parameter it rejects) are exit code 1 after its log lines.
"""

from __future__ import annotations

import argparse
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from evalrun.serving.llamacpp_flags import FLAGS
from evalrun.serving.reference import LAUNCHER_MODULE, engine_version

PROG = LAUNCHER_MODULE
GGUF_MAGIC = b"GGUF"
GGUF_VERSIONS = (2, 3)
# A tensor's info in the header takes at least a name length, n_dims, one dim, type and offset.
MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8
MIN_KV_BYTES = 8 + 4  # key length + value type
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
STOP_GRACE_S = 3.0
FLASH_ATTN = ("on", "off", "auto")
REASONING_FORMATS = ("none", "deepseek", "deepseek-legacy", "auto")
SPLIT_MODES = ("none", "layer", "row", "tensor")
# llama-server's -ngl words: "auto" fits what the devices hold, "all" offloads every layer.
GPU_LAYER_WORDS = {"auto": -1, "all": -2}
# llama-server's --spec-type names that need no more than these flags (draft-simple: -md). The
# n-gram types draft from the tokens already in a slot's context and the target model verifies
# every drafted token, yet greedy answers can change: verifying decodes several tokens in one
# batch, which rounds differently from one token a step (18 of the 184 core answers, measured).
SPEC_TYPES = (
    "none",
    "draft-simple",
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
)
NGRAM_MAPS = ("simple", "map-k", "map-k4v")  # --spec-ngram-<impl>-size-n/-size-m/-min-hits
# llama.cpp's OpenMP threads meet at a barrier after every operation of the model's graph. On an
# idle machine a short spin there before sleeping decodes 1.5-2x faster than sleeping at once;
# beside another busy process it decodes up to 2x slower (bench/reference_speed.py, 2 cores). So
# the waits are chosen from how idle the CPUs are when the server starts, unless the caller set
# OMP_WAIT_POLICY or GOMP_SPINCOUNT itself.
SPIN_ROUNDS = "1000"
IDLE_TO_SPIN = 0.75  # share of all CPU time idle over the sample
IDLE_SAMPLE_S = 0.3


class LaunchError(Exception):
    """A start-up problem the user fixes by changing a flag or a file; printed as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise LaunchError(message)


def build_parser() -> argparse.ArgumentParser:
    """llama-server's flags that evalrun's contracts and knob catalog use, by llama-server's names."""
    p = _Parser(prog=PROG, description=__doc__.splitlines()[0], allow_abbrev=False)
    add = p.add_argument
    add("-m", "--model", required=True, help="GGUF file")
    add("-a", "--alias", help="model name the server answers to")
    add("--host", default="127.0.0.1")
    add("--port", type=int, default=8080)
    add("-c", "--ctx-size", type=int, help="KV cache size in tokens, shared by the slots")
    add("-np", "--parallel", type=int, help="slots: requests decoded at once")
    add("-kvu", "--kv-unified", action="store_true", help="one KV buffer for all slots")
    add("-cb", "--cont-batching", action="store_true", default=None)
    add("-nocb", "--no-cont-batching", dest="cont_batching", action="store_false")
    add("-t", "--threads", type=int)
    add("-tb", "--threads-batch", type=int)
    add("-b", "--batch-size", type=int)
    add("-ub", "--ubatch-size", type=int)
    add("-ctk", "--cache-type-k", choices=CACHE_TYPES)
    add("-ctv", "--cache-type-v", choices=CACHE_TYPES)
    add("-fa", "--flash-attn", nargs="?", const="on", choices=FLASH_ATTN)
    add("--jinja", dest="jinja", action="store_true", default=None)
    add("--no-jinja", dest="jinja", action="store_false")
    add("--chat-template", help="a built-in template name or a Jinja template")
    add("--reasoning-format", choices=REASONING_FORMATS)
    add("--rope-freq-base", type=float)
    add("--rope-freq-scale", type=float)
    add(
        "--spec-type",
        type=_spec_types,
        help=f"comma-separated speculative decoding types: {', '.join(SPEC_TYPES)}",
    )
    add("-md", "--model-draft", "--spec-draft-model", dest="model_draft", help="draft model GGUF")
    # The --draft-* spellings are older llama-server builds' names of the same three settings.
    add("--spec-draft-n-max", "--draft-max", "--draft", "--draft-n", dest="draft_max", type=int)
    add("--spec-draft-n-min", "--draft-min", "--draft-n-min", dest="draft_min", type=int)
    add("--spec-draft-p-min", "--draft-p-min", dest="draft_p_min", type=float)
    for impl in NGRAM_MAPS:
        add(f"--spec-ngram-{impl}-size-n", type=int, help="length of the lookup n-gram")
        add(f"--spec-ngram-{impl}-size-m", type=int, help="length of the drafted m-gram")
        add(f"--spec-ngram-{impl}-min-hits", type=int, help="occurrences before a key drafts")
    add("--spec-ngram-mod-n-match", type=int, help="n-gram length ngram-mod hashes")
    add("--spec-ngram-mod-n-min", type=int, help="shortest draft ngram-mod sends")
    add("--spec-ngram-mod-n-max", type=int, help="longest draft ngram-mod sends")
    add(
        "-ngl",
        "--gpu-layers",
        "--n-gpu-layers",
        dest="gpu_layers",
        type=_gpu_layers,
        help="layers kept on the GPU: a number, auto or all",
    )
    add("-sm", "--split-mode", choices=SPLIT_MODES, help="how layers spread over GPUs")
    add("-ts", "--tensor-split", type=_floats, help="share of the model per GPU, e.g. 3,1")
    add("-to", "--timeout", type=int, help="server read/write timeout in seconds")
    add("--api-key", help="clients must send this bearer token")
    add("-s", "--seed", type=int)
    add("-n", "--n-predict", type=int, help="default max tokens of a completion")
    add("--no-warmup", dest="warmup", action="store_false", default=True)
    add("--slots", dest="slots", action="store_true", default=True, help="GET /slots (default)")
    add("--no-slots", dest="slots", action="store_false")
    add("--props", action="store_true", help="POST /props changes settings")
    add("--metrics", action="store_true", help="GET /metrics")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options of a command line; the flags mapped by llama.cpp's table ride along as
    `options.fields` ((field path, value) pairs); LaunchError naming the first flag that is
    neither mapped here nor in the table, or a value its flag cannot take."""
    parser = build_parser()
    known = set(parser._option_string_actions)
    table = _table()
    ours: list[str] = []
    theirs: list[str] = []
    rest = list(argv)
    # Table flags are taken out first: argparse would read -nkvo as -n with the value "kvo".
    while rest:
        token = rest.pop(0)
        flag = token.partition("=")[0]
        if flag in known or flag not in table:
            ours.append(token)
            continue
        theirs.append(token)
        if "=" not in token and table[flag][1] in ("int", "float", "str") and rest:
            theirs.append(rest.pop(0))
    options, unknown = parser.parse_known_args(ours)
    options.fields = table_fields(unknown + theirs)
    return options


def _table() -> dict[str, tuple[str, str, bool]]:
    """Each flag name of llama.cpp's table -> (field path, kind, negated)."""
    return {
        name: (field, kind, name in negated)
        for names, negated, field, kind in FLAGS
        for name in (*names, *negated)
    }


def table_fields(tokens: list[str]) -> list[tuple[str, object]]:
    """The (field path, value) pairs that `tokens` (flags this parser does not know, with their
    values) set through llama.cpp's own flag table."""
    table = _table()
    fields: list[tuple[str, object]] = []
    rest = list(tokens)
    while rest:
        token = rest.pop(0)
        flag, eq, inline = token.partition("=")
        if flag not in table:
            raise LaunchError(
                f"unknown flag {flag} (not a llama-server flag this launcher can set: python -m "
                f"{PROG} --help lists the mapped ones; a real llama-server binary takes the rest)"
            )
        field, kind, negated = table[flag]
        if kind in ("bool", "not", "true", "false"):
            if eq:
                raise LaunchError(f"{flag} takes no value (got {inline!r})")
            value: object = {
                "true": True,
                "false": False,
                "bool": not negated,
                "not": negated,
            }[kind]
        else:
            if not eq and not rest:
                raise LaunchError(f"{flag} needs a value")
            raw = inline if eq else rest.pop(0)
            try:
                value = {"int": int, "float": float, "str": str}[kind](raw)
            except ValueError:
                raise LaunchError(f"{flag} takes a {kind}, not {raw!r}") from None
        fields.append((field, value))
    return fields


def check_gguf(path: Path) -> None:
    """LaunchError unless `path` is a readable file whose GGUF header is plausible."""
    if not path.is_file():
        raise LaunchError(f"model file {path} not found; check -m/--model")
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(24)
    except OSError as exc:
        raise LaunchError(f"cannot read model file {path}: {exc.strerror}") from exc
    if head[:4] != GGUF_MAGIC:
        raise LaunchError(f"{path} is not a GGUF file (starts with {head[:4]!r}, not b'GGUF')")
    if len(head) < 24:
        raise LaunchError(f"{path} is truncated: {size} bytes, shorter than a GGUF header")
    version, n_tensors, n_kv = struct.unpack("<IQQ", head[4:24])
    if version not in GGUF_VERSIONS:
        raise LaunchError(f"{path}: GGUF version {version} is not one llama.cpp reads (2 or 3)")
    if n_tensors * MIN_TENSOR_INFO_BYTES + n_kv * MIN_KV_BYTES > size:
        raise LaunchError(
            f"{path} is corrupt: its header claims {n_tensors} tensors and {n_kv} keys, "
            f"more than {size} bytes can hold"
        )


def check_port(host: str, port: int) -> None:
    """LaunchError when something already holds `host:port` (0 = any free port): evalrun's one
    busy-port check, the one its launcher makes before a boot."""
    from evalrun.serving.ports import busy_port

    busy = busy_port(host, port) if port else None
    if busy:
        raise LaunchError(f"{busy}; stop what holds it or pick another --port")


def cpu_idle_share(sample_s: float = IDLE_SAMPLE_S) -> float | None:
    """The share of the machine's CPU time that was idle over `sample_s` seconds, read from
    /proc/stat; None where there is none to read."""

    def totals() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait, all

    try:
        idle0, all0 = totals()
        time.sleep(sample_s)
        idle1, all1 = totals()
    except (OSError, ValueError, IndexError):
        return None
    return (idle1 - idle0) / (all1 - all0) if all1 > all0 else None


def omp_waits(
    environ: Mapping[str, str], idle_share: Callable[[], float | None] = cpu_idle_share
) -> tuple[dict[str, str], float | None]:
    """The OpenMP wait settings to add before llama.cpp loads, and the idle share they were
    chosen by: none when the caller chose them (nothing is measured then); a short spin when the
    CPUs were idle at start; sleeping waits otherwise."""
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        return {}, None
    idle = idle_share()
    if idle is not None and idle >= IDLE_TO_SPIN:
        return {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": SPIN_ROUNDS}, idle
    return {"OMP_WAIT_POLICY": "PASSIVE"}, idle


def build_params(options: argparse.Namespace) -> Any:
    """The xllamacpp.CommonParams that llama-server would build from the same flags."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = options.model
    params.hostnames = [options.host]
    params.port = options.port
    if options.alias:
        params.model_alias = {options.alias}
    _set(params, "n_ctx", options.ctx_size)
    _set(params, "n_parallel", options.parallel)
    _set(params, "cont_batching", options.cont_batching)
    _set(params, "n_batch", options.batch_size)
    _set(params, "n_ubatch", options.ubatch_size)
    _set(params, "n_predict", options.n_predict)
    _set(params, "rope_freq_base", options.rope_freq_base)
    _set(params, "rope_freq_scale", options.rope_freq_scale)
    _set(params, "use_jinja", options.jinja)
    _set(params, "chat_template", options.chat_template)
    params.kv_unified = options.kv_unified
    params.warmup = options.warmup
    params.endpoint_slots = options.slots
    params.endpoint_props = options.props
    params.endpoint_metrics = options.metrics
    if options.threads is not None:  # llama-server: -t sets the batch threads too unless -tb does
        params.cpuparams.n_threads = options.threads
        params.cpuparams_batch.n_threads = options.threads
        params.speculative.draft.cpuparams.n_threads = options.threads
        params.speculative.draft.cpuparams_batch.n_threads = options.threads
    if options.threads_batch is not None:
        params.cpuparams_batch.n_threads = options.threads_batch
    if options.cache_type_k:
        params.cache_type_k = _ggml_type(xlc, options.cache_type_k)
    if options.cache_type_v:
        params.cache_type_v = _ggml_type(xlc, options.cache_type_v)
    if options.flash_attn:
        name = {"on": "ENABLED", "off": "DISABLED", "auto": "AUTO"}[options.flash_attn]
        params.flash_attn_type = getattr(xlc.llama_flash_attn_type, f"LLAMA_FLASH_ATTN_TYPE_{name}")
    if options.reasoning_format:
        name = _enum(options.reasoning_format)
        params.reasoning_format = getattr(
            xlc.common_reasoning_format, f"COMMON_REASONING_FORMAT_{name}"
        )
    _set(params, "n_gpu_layers", options.gpu_layers)
    if options.split_mode:
        params.split_mode = getattr(
            xlc.llama_split_mode, f"LLAMA_SPLIT_MODE_{_enum(options.split_mode)}"
        )
    if options.tensor_split:
        shares = list(params.tensor_split)
        if len(options.tensor_split) > len(shares):
            raise LaunchError(f"--tensor-split names more than {len(shares)} devices")
        shares[: len(options.tensor_split)] = options.tensor_split
        params.tensor_split = shares
    if options.timeout is not None:
        params.timeout_read = params.timeout_write = options.timeout
    for path, value in options.fields:
        _set_path(params, path, value)
    if options.api_key:
        params.api_keys = [options.api_key]
    if options.seed is not None:
        params.sampling.seed = options.seed
    spec = params.speculative
    types = [t for t in options.spec_type or () if t != "none"]
    if options.model_draft:
        check_gguf(Path(options.model_draft))
        spec.draft.mparams.path = options.model_draft
        if not any(t.startswith("draft-") for t in types):  # llama-server: -md alone drafts
            types.append("draft-simple")
    elif "draft-simple" in types:
        raise LaunchError("--spec-type draft-simple needs a draft model: -md/--model-draft")
    if types:
        kind = xlc.common_speculative_type
        spec.types = [getattr(kind, f"COMMON_SPECULATIVE_TYPE_{_enum(t)}") for t in types]
    _set(spec.draft, "n_max", options.draft_max)
    _set(spec.draft, "n_min", options.draft_min)
    _set(spec.draft, "p_min", options.draft_p_min)
    for impl in NGRAM_MAPS:
        config = getattr(spec, f"ngram_{_enum(impl).lower()}")
        for name in ("size_n", "size_m", "min_hits"):
            _set(config, name, getattr(options, f"spec_ngram_{_enum(impl).lower()}_{name}"))
    for name in ("n_match", "n_min", "n_max"):
        _set(spec.ngram_mod, name, getattr(options, f"spec_ngram_mod_{name}"))
    return params


def _spec_types(value: str) -> list[str]:
    """--spec-type's comma-separated list, each name one llama-server knows."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in SPEC_TYPES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{unknown[0] if unknown else value!r} is not one of {', '.join(SPEC_TYPES)}"
        )
    return names


def _enum(name: str) -> str:
    """A llama-server value's name as xllamacpp's enum members spell it: ngram-mod -> NGRAM_MOD."""
    return name.upper().replace("-", "_")


def _gpu_layers(value: str) -> int:
    """-ngl's value: a layer count, auto or all."""
    if value in GPU_LAYER_WORDS:
        return GPU_LAYER_WORDS[value]
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number, auto or all") from None


def _floats(value: str) -> list[float]:
    """A comma-separated list of numbers (-ts 3,1)."""
    try:
        return [float(part) for part in value.replace("/", ",").split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a list of numbers like 3,1") from None


def _set_path(params: Any, path: str, value: object) -> None:
    """Set a dotted field of CommonParams (sampling.top_k); LaunchError where this xllamacpp
    build does not expose it."""
    *parents, name = path.split(".")
    target = params
    try:
        for parent in parents:
            target = getattr(target, parent)
        getattr(target, name)
        setattr(target, name, value)
    except (AttributeError, TypeError) as exc:
        raise LaunchError(
            f"llama.cpp's field {path} cannot be set through this xllamacpp build ({exc}); "
            "a llama-server binary takes the flag"
        ) from None


def _set(target: Any, name: str, value: Any) -> None:
    if value is not None:
        setattr(target, name, value)


def _ggml_type(xlc: Any, name: str) -> Any:
    return getattr(xlc.ggml_type, f"GGML_TYPE_{name.upper()}")


def serve(params: Any, *, ready: threading.Event | None = None) -> int:
    """Run llama.cpp's server until SIGTERM or SIGINT; 0 after a clean stop, 1 if it cannot start."""
    import xllamacpp as xlc

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # Installed before the model loads: a signal during loading stops the server once it is up.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    try:
        server = xlc.Server(params)
    except RuntimeError:
        print(
            f"{PROG}: llama.cpp could not start the server (its log lines above say why)",
            file=sys.stderr,
            flush=True,
        )
        return 1
    print(
        f"{PROG}: serving on {server.listening_address} (llama.cpp {engine_version()})",
        file=sys.stderr,
        flush=True,
    )
    if ready is not None:
        ready.set()
    while not stop.wait(0.5):
        pass
    return shut_down([server])


def shut_down(holder: list[Any]) -> NoReturn:
    """Stop the server and end the process with code 0.

    xllamacpp's Server stops when its last reference goes, but with a request in flight that
    waits forever (the HTTP thread waits for a decode loop that already stopped), so the orderly
    stop gets STOP_GRACE_S and then the process ends anyway: the kernel closes the socket and
    frees the model, and the client sees its connection close.
    """
    stopper = threading.Thread(target=holder.clear, daemon=True)
    stopper.start()
    stopper.join(STOP_GRACE_S)
    print(f"{PROG}: stopped", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    """The command line: parse, check the model file and the port, serve."""
    try:
        options = parse_args(sys.argv[1:] if argv is None else argv)
        check_gguf(Path(options.model))
        check_port(options.host, options.port)
        waits, idle = omp_waits(os.environ)
        os.environ.update(waits)  # read by OpenMP when llama.cpp loads, in build_params
        if waits:
            print(
                f"{PROG}: OpenMP waits {' '.join(f'{k}={v}' for k, v in waits.items())} "
                f"(CPUs {'?' if idle is None else f'{idle:.0%}'} idle at start; "
                "set OMP_WAIT_POLICY to choose)",
                file=sys.stderr,
                flush=True,
            )
        params = build_params(options)
    except LaunchError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
        return 2
    return serve(params)


if __name__ == "__main__":
    sys.exit(main())
