"""A "think" variant of an exported model, so reasoning parsers have something to parse.

SmolLM2 has no `<think>`/`</think>` tokens, and vLLM's `--reasoning-parser deepseek_r1` refuses
to boot without them (FIELD, vLLM 0.32: "could not locate think start/end tokens in the
tokenizer"). The variant renames two special tokens the chat never uses to `<think>`/`</think>`
(same ids, so the weights are untouched and shared by hard link). The chat template stays as it
is: with a `<think>` opening after the assistant header, the 135M model ended its answer at once
on 3 of 4 prompts (measured), so every parser saw nothing. Without it the model answers plainly,
and a parser that files text before `</think>` as reasoning (vLLM's deepseek_r1; qwen3 unless the
request sends `enable_thinking: false`) moves the whole answer out of `content`: the
misconfiguration users meet.

Pure file edits (JSON): no torch, no engine.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from evalrun.base.errors import LaneError
from evalrun.base.jsondata import JSONObject
from evalrun.serving.lanes.common import LaneContext, Step, model_ready

THINK_TOKENS = ("<think>", "</think>")
# Special tokens of SmolLM2's tokenizer that no chat prompt uses (they mark GitHub metadata in
# its pre-training data); the first two found are renamed.
SPARE_TOKENS = ("<repo_name>", "<reponame>", "<file_sep>", "<filename>", "<gh_stars>")


def rename_tokens(tokenizer: JSONObject, renames: dict[str, str]) -> None:
    """Rename special tokens in a tokenizer.json mapping in place (added_tokens and the vocab)."""
    found = set()
    for token in tokenizer.get("added_tokens", []):
        if token.get("content") in renames:
            found.add(token["content"])
            token["content"] = renames[token["content"]]
    vocab = (tokenizer.get("model") or {}).get("vocab")
    if isinstance(vocab, dict):
        for old, new in renames.items():
            if old in vocab:
                vocab[new] = vocab.pop(old)
    missing = set(renames) - found
    if missing:
        raise LaneError(f"tokenizer.json has no added tokens {sorted(missing)}")


def spare_tokens(tokenizer: JSONObject) -> dict[str, str]:
    """Which two spare special tokens become <think> and </think>."""
    present = {t.get("content") for t in tokenizer.get("added_tokens", [])}
    if set(THINK_TOKENS) <= present:
        return {}
    spare = [t for t in SPARE_TOKENS if t in present][:2]
    if len(spare) < 2:
        raise LaneError(
            f"the tokenizer has no two spare special tokens to rename ({', '.join(SPARE_TOKENS)})"
        )
    return dict(zip(spare, THINK_TOKENS, strict=True))


def make_think_variant(src: Path, dst: Path) -> None:
    """Write `dst`: `src` with <think>/</think> tokens (same ids, same weights)."""
    tmp = dst.with_name(dst.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for path in src.iterdir():
        if path.suffix == ".safetensors":
            os.link(path, tmp / path.name)  # the weights do not change: share the bytes
        elif path.is_file():
            shutil.copy2(path, tmp / path.name)
    tokenizer_path = tmp / "tokenizer.json"
    tokenizer = json.loads(tokenizer_path.read_text(encoding="utf-8"))
    rename_tokens(tokenizer, spare_tokens(tokenizer))
    tokenizer_path.write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(dst, ignore_errors=True)
    tmp.rename(dst)


def think_variant_step(model: str, variant: str) -> Step:
    """models/<variant>: models/<model> with think tokens, for reasoning-parser lanes."""

    def done(ctx: LaneContext) -> bool:
        folder = ctx.models / variant
        return model_ready(folder) and THINK_TOKENS[1] in (folder / "tokenizer.json").read_text(
            encoding="utf-8"
        )

    return Step(
        f"model {variant}",
        f"models/{variant}: {model} with <think>/</think> tokens",
        done=done,
        run=lambda ctx: make_think_variant(ctx.models / model, ctx.models / variant),
        expect="a second",
    )
