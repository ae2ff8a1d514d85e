"""The changelog hint of an ordered bisect: what evalrun sees changed between the last good and
the first bad value. The resolved versions of the two engine builds (build.json), the engine
version each answered, what the engine logged that it resolved at boot (vLLM's non-default args
and engine config, its attention backend), and lint's findings for each side's contract.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalrun.bisection.trial import TrialResult
from evalrun.serving.contract import Contract

# Lines of an engine's boot log that say what it resolved (vLLM's and sglang's wording).
RESOLVED = re.compile(
    r"non-default args|resolved|using .*backend|backend|dtype|chunked prefill|prefix caching"
    r"|max_num_batched_tokens|architecture|attention|kv cache",
    re.IGNORECASE,
)
# `key=value` items of vLLM's `with config:` line (values may hold braces, brackets, quotes).
CONFIG_ITEM = re.compile(r"(\w+)=((?:\{[^}]*\}|\[[^\]]*\]|'[^']*'|[^,])*)")
# Matching lines that change from boot to boot: evalrun's own header, load stats, rendezvous.
NOISE = re.compile(r"^# evalrun|throughput|tcp://|broadcast block|took \d|Route:")
VOLATILE = frozenset({"port", "host"})  # differ between any two boots (port 0: a free one)
LOG_PREFIX = re.compile(
    r"^(\(\w+ pid=\d+\)\s*)?(INFO|WARNING|DEBUG|ERROR)\s+[\d-]+ [\d:.]+ \[[^]]*\]\s*"
)


class Changelog(BaseModel):
    """What evalrun sees changed between the last good and the first bad value."""

    model_config = ConfigDict(extra="forbid")

    engine_version: list[str | None] = Field(default_factory=list, description="[good, bad].")
    versions: dict[str, list[str | None]] = Field(
        default_factory=dict, description="Resolved distributions that differ: name -> [good, bad]."
    )
    resolved: list[str] = Field(
        default_factory=list, description="Boot-log lines of what the engine resolved: -good +bad."
    )
    lint: list[str] = Field(default_factory=list, description="Lint findings: -good +bad.")

    def lines(self) -> list[str]:
        out = []
        if self.engine_version and self.engine_version[0] != self.engine_version[1]:
            out.append(f"engine version: {self.engine_version[0]} -> {self.engine_version[1]}")
        out += [f"{name}: {old} -> {new}" for name, (old, new) in self.versions.items()]
        out += [f"resolved at boot: {line}" for line in self.resolved]
        out += [f"lint: {line}" for line in self.lint]
        return out


def changelog(
    good: Contract, bad: Contract, good_row: TrialResult, bad_row: TrialResult, workdir: Path
) -> Changelog:
    """Versions, resolved flags and lint findings that differ between two steps."""
    out = Changelog(engine_version=[good_row.engine_version, bad_row.engine_version])
    old, new = _build_versions(good), _build_versions(bad)
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            out.versions[name] = [old.get(name), new.get(name)]
    out.resolved = _diff(resolved_lines(good_row.log_path), resolved_lines(bad_row.log_path))
    out.lint = _diff(_lint(good, workdir, "good"), _lint(bad, workdir, "bad"))
    return out


def _build_versions(contract: Contract) -> dict[str, str | None]:
    if contract.engine_build is None:
        return {}
    from evalrun.serving.lanes.builds import read_record

    record = read_record(contract.engine_build.folder)
    return dict(record.versions) if record else {}


def resolved_lines(log_path: str | None, most: int = 150) -> list[str]:
    """What the engine says it resolved at boot: its log's matching lines, timestamps and pids
    dropped; vLLM's `non-default args: {...}` split into one `arg: value` line each."""
    if not log_path or not Path(log_path).exists():
        return []
    out: list[str] = []
    text = Path(log_path).read_text(encoding="utf-8", errors="replace")
    for raw in text.splitlines():
        line = LOG_PREFIX.sub("", raw.strip())
        if not RESOLVED.search(line) or NOISE.search(line):
            continue
        head, _, tail = line.partition("non-default args:")
        if tail:
            try:
                args = ast.literal_eval(tail.strip())
            except (ValueError, SyntaxError):
                args = None
            if isinstance(args, dict):
                out += [
                    f"arg {k}: {v!r}"[:200] for k, v in sorted(args.items()) if k not in VOLATILE
                ]
                continue
        head, _, config = line.partition("with config:")
        if config:  # vLLM's engine config: one `config key: value` line each
            for key, value in CONFIG_ITEM.findall(config):
                if key not in VOLATILE:
                    out.append(f"config {key}: {value.strip()}"[:200])
            continue
        line = re.sub(r"\b\d+(\.\d+)? ?(s|seconds|GiB|MiB)\b", "N", line)  # timings and sizes
        if line not in out:
            out.append(line[:200])
    return out[:most]


def _diff(old: list[str], new: list[str]) -> list[str]:
    return [f"- {x}" for x in old if x not in new] + [f"+ {x}" for x in new if x not in old]


def _lint(contract: Contract, workdir: Path, side: str) -> list[str]:
    """Lint's findings for a step's contract (written beside bisect.json)."""
    from evalrun.serving.lint import lint_contract

    path = workdir / "contracts" / f"{side}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = contract.model_dump(mode="json", exclude_defaults=True)
    data.setdefault("name", contract.name)
    data.setdefault("engine", contract.engine)
    data.setdefault("command", contract.command)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return [f"{f.kind}: {f.message}" for f in lint_contract(path).findings]
