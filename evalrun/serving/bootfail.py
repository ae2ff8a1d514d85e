"""Why a server failed to boot: classify server.log's tail into a kind with a one-line hint.

Kinds: port_in_use, executable_not_found, missing_file, import_error, oom, invalid_flag,
validator_refusal, crashed (anything else); the launcher adds timeout, crash_loop, chat_refused.
The most common false absence in the field: a binary (ninja, nvcc) that sits in the venv's `bin/`
or a CUDA dir that is not on PATH. FlashInfer's JIT build then fails deep in a traceback with
`FileNotFoundError: ... 'ninja'`, which looks like a kernel problem. The hint names the dir to prepend.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from collections import Counter, deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalrun.serving.contract import Contract

HEADER = "# evalrun "
CRASH_LOOP_REPEATS = 3  # the same fatal line this often while the process lives
FATAL_LINE = re.compile(
    r"^\s*[\w.]*(Error|Exception|Fault)\b.*|^Fatal Python error.*|.*Segmentation fault.*"
)
OOM_HINT = (
    "ask for less memory: lower ctx-size / max-model-len / gpu-memory-utilization / max-num-seqs, "
    "or use a smaller KV cache dtype"
)
CUDA_DIRS = ("/usr/local/cuda/bin", "/usr/local/cuda-*/bin", "/opt/cuda/bin", "/usr/lib/cuda/bin")
# A wrapper's last line that only points back ("See root cause above"), and a raised exception.
POINTS_UP = re.compile(r"(root cause|stack trace|traceback) above", re.IGNORECASE)
RAISED = re.compile(r"\b\w*(?:Error|Exception): \S")


class LogWatch:
    """Follows server.log as it grows: the last lines and how often each fatal-looking line came."""

    def __init__(
        self, path: Path, keep: int = 300, start: int = 0, secrets: Sequence[str] = ()
    ) -> None:
        self.path = Path(path)
        self.secrets = list(secrets)  # values never to show, e.g. an --api-key the server echoed
        self.offset = start
        self.partial = ""
        self.lines: deque[str] = deque(maxlen=keep)
        self.fatal: Counter[str] = Counter()

    def feed(self) -> None:
        """Read what was appended since the last call."""
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except OSError:
            return
        self.offset += len(chunk)
        text = self.partial + chunk.decode("utf-8", errors="replace").replace("\r", "\n")
        for value in self.secrets:
            text = text.replace(value, "***")
        *complete, self.partial = text.split("\n")
        for line in complete:
            if line.startswith(HEADER):
                continue
            if FATAL_LINE.match(line):
                self.fatal[line.strip()[:200]] += 1
            self.lines.append(line)

    def all_lines(self) -> list[str]:
        return [*self.lines, *([self.partial] if self.partial.strip() else [])]

    def tail_text(self, n: int = 40) -> str:
        return "\n".join(self.all_lines()[-n:])

    def last_line(self) -> str:
        for line in reversed(self.all_lines()):
            if line.strip():
                return line.strip()[:300]
        return "(server.log is empty)"

    def key_line(self) -> str:
        """The last line that looks like an error, else the last line."""
        for line in reversed(self.all_lines()):
            if re.search(r"error|exception|fatal|killed|abort", line, re.IGNORECASE):
                return line.strip()[:300]
        return self.last_line()

    def crash_loop(self) -> bool:
        """One fatal error seen again and again: a supervisor restarting a worker that dies.

        A traceback logged once or twice (optional imports, warnings) is not a loop."""
        return bool(self.fatal) and max(self.fatal.values()) >= CRASH_LOOP_REPEATS

    def repeats(self) -> int:
        return max(self.fatal.values(), default=0)


def _path_dirs(env: dict[str, str]) -> list[str]:
    return [os.path.normpath(d) for d in env.get("PATH", "").split(os.pathsep) if d]


def find_elsewhere(
    name: str, *, contract: Contract, env: dict[str, str], argv: list[str]
) -> list[str]:
    """Dirs holding an executable `name` that are NOT on the server's PATH (where to look first:
    the command's own bin dir, i.e. its venv, evalrun's venv, path_prepend, CUDA dirs)."""
    on_path = set(_path_dirs(env))
    candidates: list[str] = []
    first = argv[0] if argv else ""
    found = first if os.sep in first else shutil.which(first, path=env.get("PATH", ""))
    if found:
        candidates.append(os.path.dirname(found))  # not resolved: a venv's python is a symlink
    candidates.append(os.path.dirname(sys.executable))
    candidates += contract.expanded_path_prepend()
    for pattern in CUDA_DIRS:
        candidates += sorted(glob.glob(pattern))
    candidates += [
        os.path.expanduser("~/.local/bin"),
        *sorted(glob.glob(os.path.expanduser("~/*/bin"))),
    ]
    out: list[str] = []
    for folder in candidates:
        folder = os.path.normpath(folder)
        exe = os.path.join(folder, name)
        if (
            folder not in out
            and folder not in on_path
            and os.path.isfile(exe)
            and os.access(exe, os.X_OK)
        ):
            out.append(folder)
    return out


def _search(lines: list[str], pattern: str) -> re.Match[str] | None:
    rx = re.compile(pattern, re.IGNORECASE)
    for line in reversed(lines):
        found = rx.search(line)
        if found:
            return found
    return None


def classify(
    watch: LogWatch, code: int | None, *, contract: Contract, env: dict[str, str], argv: list[str]
) -> tuple[str, str, str]:
    """(kind, the telling log line, one-line hint) for a server that died."""
    lines = watch.all_lines()

    def line_of(m: re.Match[str]) -> str:
        return m.string.strip()[:300]

    if m := _search(lines, r"address already in use|EADDRINUSE|\[Errno 98\]"):
        return (
            "port_in_use",
            line_of(m),
            "another process took the port during boot; use --set port=N (0 = any free port)",
        )
    exe = (
        _search(lines, r"FileNotFoundError:.*?'([^'/\s]+)'")
        or _search(lines, r"No such file or directory: '([^'/\s]+)'")
        or _search(lines, r"(?:sh: \d+: )?([\w.+-]+): (?:command )?not found")
        or _search(lines, r'exec: "([^"/]+)": executable file not found')
    )
    if exe:
        name = exe.group(1)
        where = find_elsewhere(name, contract=contract, env=env, argv=argv)
        if where:
            hint = (
                f"'{name}' exists in {where[0]}, which is not on the server's PATH: "
                f"add it to path_prepend, e.g. --set 'path_prepend=[{where[0]}]'"
            )
        else:
            hint = (
                f"'{name}' is not on the server's PATH nor in the command's bin dir or CUDA "
                f"dirs: install it in the server's environment (pip install {name}?)"
            )
        return "executable_not_found", line_of(exe), hint
    if m := _search(lines, r"(?:FileNotFoundError|No such file or directory).*?'(/[^']+)'"):
        return (
            "missing_file",
            line_of(m),
            f"{m.group(1)} does not exist: check the model path and other paths in the contract",
        )
    if m := _search(lines, r"(ModuleNotFoundError|ImportError): (.*)"):
        mod = re.search(r"No module named '([^']+)'", m.group(2))
        what = mod.group(1).split(".")[0] if mod else "the missing module"
        return (
            "import_error",
            line_of(m),
            (
                f"install {what} into the server's Python ({argv[0] if argv else '?'}), or put the "
                "venv that has it first via path_prepend / command"
            ),
        )
    oom = _search(
        lines,
        r"out of memory|OutOfMemoryError|MemoryError|std::bad_alloc|"
        r"Cannot allocate memory|failed to allocate|No available memory for the cache",
    )
    if oom:
        return "oom", line_of(oom), OOM_HINT
    if m := _search(
        lines,
        r"unrecognized arguments?: (\S+)|error: argument (-[\w.-]+)|"
        r"no such option:? (-[\w.-]+)|unknown (?:argument|option):? (-[\w.-]+)",
    ):
        flag = next(g for g in m.groups() if g) if any(m.groups()) else "a flag"
        knob = flag.lstrip("-")
        prog = " ".join(argv[: len(contract.command)]) if argv else "the engine"
        return (
            "invalid_flag",
            line_of(m),
            (
                f"the engine rejects {flag}: check its spelling and value against `{prog} --help` "
                f"for this engine version, or drop it with --unset {knob}"
            ),
        )
    if m := _search(
        lines,
        r"ValidationError|validation errors? for|ValueError: |"
        r"NotImplementedError|AssertionError|Error: .*not supported",
    ):
        # Engines often say why on an earlier line ("quantized V cache requires flash_attn ...").
        why = _search(
            lines, r"\b(requires?|must be|is required|needs?)\b.*\b(enabled|set|with|flash)"
        )
        return (
            "validator_refusal",
            line_of(why or m),
            (
                "the engine refused this combination of knobs: change or --unset the knob the "
                "message names"
            ),
        )
    if code == -9:
        # After the refusals: sglang SIGKILLs its own group when its scheduler raised (FIELD,
        # 0.5.23: "Received sigquit from a child process" + kill_process_tree), so -9 with a
        # logged refusal is that refusal; a bare -9 is the kernel's OOM killer.
        return "oom", f"killed by SIGKILL (the kernel OOM killer?): {watch.key_line()}", OOM_HINT
    line = _root_cause(lines, watch.key_line())
    return ("crashed", line, f"exit code {code}: the end of server.log says why")


def _root_cause(lines: list[str], key: str) -> str:
    """The error a wrapper's last line points back to (vLLM's API server ends a dead engine
    core with "Engine core initialization failed. See root cause above."): the last raised
    exception before it that does not point up itself; else `key`."""
    if not POINTS_UP.search(key):
        return key
    for line in reversed(lines):
        if RAISED.search(line) and not POINTS_UP.search(line):
            return line.strip()[:300]
    return key
