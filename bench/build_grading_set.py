"""Write tests/data/grading/answers.jsonl: labelled chat-style answers for every core item.

`python -m bench.build_data grading` runs it; the output is committed and is the acceptance set for
the graders, and `tests/test_bench_data.py` checks that it still matches this builder. Each row is
{id, answer, passed, style, why}: `answer` has the shape of an item's `accept` example (a string,
or {content, tool_calls, reasoning}); `passed` is what a careful human grader would say. Half the
rows are correct answers written the way chat models answer (step-by-step working, `\\boxed{}`,
bold, preambles, explanations that name other options, other languages' punctuation); half are
near misses (hedges, negations, wrong units, distractors, loops, floods, overshoot, wrong
arguments, wrong values).

The content lives in bench/data/grading/: per-item tables (`numeric`, `named`, `lettered`,
`yesno`, `copy`, `long`: one item a line) that the functions below turn into the same styled
variants for every item, the structured items' extra rows (`structured`), and the hand-written rows
(`canary`, `instruction`, `multilingual`, `code`, `misc`, `tool`, `degenerate`: one answer a
line, as written to the output). The structured variants are made from each structured item's
first `accept` example in suites/core/items.jsonl.

The rows were written before the graders were changed; `python -m bench.grading_bench` grades them
and `tests/test_grading_set.py` holds the held-out half to its error budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalrun.suite.load import read_jsonl

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "grading"
SUITE_ITEMS = ROOT / "suites" / "core" / "items.jsonl"
OUT_NAME = "answers.jsonl"

Row = dict[str, Any]
ROWS: list[Row] = []


def table(name: str) -> list[Row]:
    """The rows of bench/data/grading/<name>.jsonl, in file order."""
    return read_jsonl(DATA / f"{name}.jsonl")


def add(item: str, answer: Any, passed: bool, style: str, why: str) -> None:
    ROWS.append({"id": item, "answer": answer, "passed": passed, "style": style, "why": why})


def ok(item: str, style: str, why: str, *answers: Any) -> None:
    for a in answers:
        add(item, a, True, style, why)


def bad(item: str, style: str, why: str, *answers: Any) -> None:
    for a in answers:
        add(item, a, False, style, why)


def written(name: str) -> None:
    """The hand-written rows of one section, as they are."""
    ROWS.extend(table(name))


# ---------------------------------------------------------------- numeric answers
# numeric.jsonl: the answer as written, its LaTeX form, working that ends in it, a wrong answer,
# the unit appended to answers ("" for none) and a wrong unit ("" when no row needs one)


def numeric_rows() -> None:
    for t in table("numeric"):
        item, ans, latex, work, wrong = t["id"], t["answer"], t["latex"], t["work"], t["wrong"]
        u, bad_unit = t["unit"], t["bad_unit"]
        ok(
            item,
            "stepwise",
            "working first, answer in a closing sentence",
            f"Let's work through this step by step.\n\n{work}.\n\nSo the answer is **{ans}{u}**.",
        )
        ok(
            item,
            "boxed",
            "Qwen-style boxed answer after the working",
            f"{work}.\n\n$\\boxed{{{latex}}}$",
        )
        ok(
            item,
            "explain-after",
            "answer first, explanation with other numbers after it",
            f"{ans}{u}\n\nExplanation: {work}.",
        )
        ok(item, "bold-marker", "bold Answer marker followed by the working", f"**Answer:** {work}")
        ok(
            item,
            "negation-ok",
            "names a wrong value only to reject it",
            f"Not {wrong}{u} — it's {ans}{u}.",
        )
        bad(item, "wrong-value", "a plausible wrong result", f"{wrong}{u}")
        bad(
            item,
            "wrong-boxed",
            "the working mentions the right value, the boxed answer is wrong",
            f"It is tempting to say {ans}, but on reflection the result is {wrong}.\n\n"
            f"$\\boxed{{{wrong}}}$",
        )
        bad(
            item, "hedge", "names two candidates as the answer", f"It's either {ans} or {wrong}{u}."
        )
        bad(
            item,
            "negation",
            "the right value named after 'not'",
            f"The answer is {wrong}{u}, not {ans}.",
        )
        if bad_unit:
            bad(item, "wrong-unit", "right number, wrong unit", f"The answer is {ans}{bad_unit}.")


# ---------------------------------------------------------------- choice by name
# named.jsonl: the correct option's text, a wrong option and a reason


def named_rows() -> None:
    for t in table("named"):
        item, right, wrong, reason = t["id"], t["right"], t["wrong"], t["reason"]
        cap = right[0].upper() + right[1:]
        ok(item, "bold", "bold answer with a short reason", f"**{cap}** — {reason}.")
        ok(
            item,
            "names-others",
            "explanation names another option as not the answer",
            f"The answer is {right}. It is not {wrong}: {reason}.",
        )
        ok(item, "preamble", "chatty preamble before the answer", f"Sure! The answer is {right}.")
        ok(
            item,
            "stepwise",
            "reasoning first, answer last",
            f"Let me think about this.\n\n{reason[0].upper() + reason[1:]}.\n\n**Final answer:** {cap}",
        )
        bad(item, "wrong-value", "a plausible wrong option", f"{wrong[0].upper() + wrong[1:]}.")
        bad(item, "hedge", "names two candidates", f"It's either {right} or {wrong}.")
        bad(
            item,
            "negation",
            "names the right option only to reject it",
            f"It's not {right}; it's {wrong}.",
        )
        bad(
            item,
            "although",
            "concedes the right option, then picks the wrong one",
            f"Although {right} is often mentioned, the answer is {wrong}.",
        )


# ---------------------------------------------------------------- lettered multiple choice
# lettered.jsonl: the letter, its option text, a wrong letter, its text and a reason


def lettered_rows() -> None:
    for t in table("lettered"):
        item, L, text, reason = t["id"], t["letter"], t["text"], t["reason"]
        W, wtext = t["wrong_letter"], t["wrong_text"]
        ok(item, "bold", "bold letter and option", f"**{L}) {text}**")
        ok(
            item,
            "stepwise",
            "reasoning naming other options, letter last",
            f"Let's check the options.\n\n- {W}) {wtext}: no.\n- {L}) {text}: yes, {reason}.\n\n"
            f"The answer is **{L}**.",
        )
        ok(
            item,
            "llama",
            "Llama-style 'The correct answer is'",
            f"The correct answer is: {L}) {text}",
        )
        ok(
            item,
            "names-others",
            "explanation rejects another letter",
            f"{L}. Not {W}, because {reason}.",
        )
        ok(item, "boxed", "boxed letter", f"{reason[0].upper() + reason[1:]}.\n\n$\\boxed{{{L}}}$")
        bad(item, "wrong-value", "a wrong letter with its text", f"{W}) {wtext}")
        bad(item, "hedge", "two letters", f"{L} or {W}")
        bad(item, "negation", "the right letter named after 'not'", f"Not {L}. The answer is {W}.")
        bad(
            item,
            "wrong-working",
            "reasoning that lands on a wrong letter",
            f"Looking at each option, {W} fits best.\n\nAnswer: {W}",
        )


# ---------------------------------------------------------------- yes / no
# yesno.jsonl: the verdict (Yes or No) and a reason


def yesno_rows() -> None:
    for t in table("yesno"):
        item, yes, reason = t["id"], t["answer"], t["reason"]
        no = "No" if yes == "Yes" else "Yes"
        ok(item, "marker", "Answer: marker", f"Answer: {yes}")
        ok(item, "sentence", "'The answer is' sentence", f"The answer is {yes.lower()}.")
        ok(
            item,
            "stepwise",
            "reasoning then verdict",
            f"Let's reason it through: {reason}.\n\nSo, **{yes}**.",
        )
        ok(
            item,
            "bold",
            "bold verdict with reason",
            f"**{yes}.** {reason[0].upper() + reason[1:]}.",
        )
        ok(item, "preamble", "chatty preamble", f"Great question! {yes}, because {reason}.")
        bad(item, "wrong-value", "the opposite verdict", f"{no}.")
        bad(item, "marker", "opposite verdict with a marker", f"Answer: {no}")
        bad(
            item,
            "anchor",
            "opposite verdict; the right word starts a later line",
            f"{no}, I don't think so.\n{yes} would need more information.",
        )
        bad(item, "hedge", "both verdicts", f"{yes} or {no}: it depends on how you read it.")


# ---------------------------------------------------------------- canaries
# copy.jsonl: the text a copy canary asks for and a copy with one word changed; the counting
# and continuation canaries are hand-written (canary.jsonl)


def copy_rows() -> None:
    for t in table("copy"):
        item, text, wrong = t["id"], t["text"], t["wrong"]
        words = text.rstrip(".!").split()
        ok(item, "quoted", "typographic quotes", f"“{text}”")
        ok(item, "bold", "bold copy", f"**{text}**")
        ok(
            item,
            "preamble",
            "preamble then the copy on its own line",
            f"Sure! Here it is:\n\n{text}",
        )
        ok(item, "blockquote", "markdown blockquote", f"> {text}")
        bad(item, "wrong-value", "one word changed", wrong)
        bad(item, "loop", "a repetition loop", " ".join([text] * 6))
        bad(item, "flood", "the last word repeated", text.rstrip(".!") + (" " + words[-1]) * 12)
        bad(
            item,
            "appended",
            "extra words appended to the copy",
            text.rstrip(".!") + " and then it was quiet again.",
        )


# ---------------------------------------------------------------- long context
# long.jsonl: the answer, the needle restated, and the distractor record's answer


def long_rows() -> None:
    for t in table("long"):
        item, ans, needle, wrong = t["id"], t["answer"], t["needle"], t["wrong"]
        ok(item, "bold", "bold answer", f"**{ans}**")
        ok(item, "sentence", "the needle restated", f"{needle} {ans}.")
        ok(
            item,
            "preamble",
            "preamble and code span",
            f"Sure! According to the document, the answer is `{ans}`.",
        )
        bad(item, "distractor", "the other record's value", f"{needle} {wrong}.")
        bad(item, "hedge", "both values", f"It's either {ans} or {wrong}.")
        bad(
            item,
            "dump",
            "both records dumped without choosing",
            f"The document mentions {ans} and {wrong}.",
        )
        bad(item, "refusal", "claims it is not there", "The document does not mention this.")


# ---------------------------------------------------------------- structured output


def _set(value: Any, path: str, new: Any) -> Any:
    out = json.loads(json.dumps(value))
    parts = path.split(".")
    cur = out
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = new
    else:
        cur[last] = new
    return out


def _wrong(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "s" if v.isalpha() else v[::-1]
    return None


def structured_rows(items: dict[str, dict[str, Any]]) -> None:
    for item_id, item in items.items():
        if item["category"] != "structured":
            continue
        first = item["accept"][0]
        value = json.loads(first)
        ok(
            item_id,
            "compact",
            "compact JSON",
            json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        )
        ok(
            item_id,
            "fence-4",
            "fenced, four-space indent",
            "```json\n" + json.dumps(value, indent=4, ensure_ascii=False) + "\n```",
        )
        if isinstance(value, dict):
            flipped = dict(reversed(list(value.items())))
            ok(
                item_id,
                "reordered",
                "keys in another order",
                json.dumps(flipped, ensure_ascii=False),
            )
        else:
            ok(item_id, "fence-plain", "a plain fence", "```\n" + json.dumps(value) + "\n```")
        vals = item["grader"].get("values", {})
        for path, want in list(vals.items())[:2]:
            wrong = _wrong(want)
            if wrong is None:
                continue
            bad(
                item_id,
                "wrong-value",
                f"{path} changed",
                json.dumps(_set(value, path, wrong), ensure_ascii=False),
            )
        bad(
            item_id,
            "extra-text",
            "a preamble although JSON only was asked",
            "Here is the JSON you asked for:\n\n```json\n"
            + json.dumps(value, indent=2, ensure_ascii=False)
            + "\n```",
        )
        bad(
            item_id,
            "truncated",
            "cut off mid-object",
            json.dumps(value, indent=2, ensure_ascii=False)[: max(8, len(first) // 2)],
        )
        ROWS.extend(r for r in table("structured") if r["id"] == item_id)


def build(out_dir: Path) -> list[Path]:
    """Write answers.jsonl into `out_dir`; the paths written."""
    ROWS.clear()
    items = {it["id"]: it for it in read_jsonl(SUITE_ITEMS)}
    numeric_rows()
    named_rows()
    lettered_rows()
    yesno_rows()
    copy_rows()
    written("canary")
    written("instruction")
    written("multilingual")
    written("code")
    written("misc")
    written("tool")
    long_rows()
    structured_rows(items)
    written("degenerate")
    unknown = {r["id"] for r in ROWS} - set(items)
    if unknown:
        raise ValueError(f"rows for items not in {SUITE_ITEMS}: {sorted(unknown)}")
    out = out_dir / OUT_NAME
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for row in ROWS:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    per_item: dict[str, int] = {}
    for r in ROWS:
        per_item[r["id"]] = per_item.get(r["id"], 0) + 1
    thin = sorted(i for i in items if per_item.get(i, 0) < 5)
    good = sum(r["passed"] for r in ROWS)
    print(f"{len(ROWS)} rows ({good} correct, {len(ROWS) - good} wrong) over {len(per_item)} items")
    if thin:
        print("items with fewer than 5 rows:", ", ".join(thin))
    return [out]
