"""Grader registry, `grade()`, and the all/any combinators.

The built-ins live in text.py (exact, normalized, fuzzy, regex, contains_all, contains_none,
language, format, sequence) and answer.py (numeric, choice, json, tool_call); they register when
evalrun.grading is imported. `evalrun suite graders` lists them with their parameters.

`grade(item, response) -> Grade` judges `response.content` only (tool_call judges the parsed tool
calls): a correct answer that sits only in the reasoning channel fails, and the detail says so.
Each grader declares a pydantic model for its parameters (extra="forbid"), so a typo in a suite
item is an error at `evalrun suite check`, not a silently lenient grader.

Register a grader the way the built-ins do:

    class MyParams(GraderParams):
        answer: str

    @grader("mine", MyParams)
    def _mine(response: Response, p: MyParams) -> Grade: ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalrun.base.errors import SuiteError
from evalrun.base.jsondata import SCHEMA_TYPES, JSONObject
from evalrun.endpoint.response import Response
from evalrun.grading.code_claims import false_code_claim, print_misread
from evalrun.grading.exact_claims import false_conversion, false_number_claim
from evalrun.grading.extract import normalize
from evalrun.grading.span import final_claim, offered_alternatives, plain_text, without_lead_in
from evalrun.grading.world_claims import false_world_claim
from evalrun.verdicts import Grade


class GraderParams(BaseModel):
    """Base of every grader's parameter model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


GraderFn = Callable[[Response, Any], Grade]
GRADERS: dict[str, GraderFn] = {}
PARAMS: dict[str, type[BaseModel] | None] = {}
# Kinds that judge what an answer claims, so a retracted claim is not theirs to read.
READS_CLAIM: set[str] = set()


def grader(
    kind: str, params: type[BaseModel] | None = None, *, reads_claim: bool = False
) -> Callable[[GraderFn], GraderFn]:
    """Register a grader under `kind`; with `params`, it receives a validated params model.

    With `reads_claim`, a reply that takes back what it said ("7? No — it's 8.", "Ottawa...
    actually, Toronto") reaches the grader as the text after its last retraction (span.final_claim).
    Counting graders (format, json) see the whole reply.
    """

    def wrap(fn: GraderFn) -> GraderFn:
        GRADERS[kind] = fn
        PARAMS[kind] = params
        if reads_claim:
            READS_CLAIM.add(kind)
        else:
            READS_CLAIM.discard(kind)
        return fn

    return wrap


def validate_params(kind: str, params: JSONObject) -> Any:
    """The validated parameters for `kind`; raises SuiteError saying what is wrong."""
    return _validated(kind, json.dumps(params, sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=4096)
def _validated(kind: str, params_json: str) -> Any:
    if kind not in GRADERS:
        raise SuiteError(f"unknown grader kind {kind!r}; use one of {', '.join(sorted(GRADERS))}")
    params = json.loads(params_json)
    model = PARAMS[kind]
    if model is None:
        return params
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise SuiteError(f"grader {kind}: {where}: {err['msg']}") from exc


def grade_spec(kind: str, params: JSONObject, response: Response) -> Grade:
    """Grade a response against a grader kind + parameters (used by `all`/`any` too)."""
    validated = validate_params(kind, params)
    if kind != "tool_call" and not (response.content or "").strip():
        why = "no content"
        if (response.reasoning or "").strip():
            why += "; the answer is only in the reasoning channel"
        if response.tool_calls:
            why += "; the model called a tool instead of answering"
        return Grade(passed=False, detail=why)
    if kind not in READS_CLAIM or getattr(validated, "whole_reply", False):
        got = GRADERS[kind](response, validated)
        if got.passed and kind == "regex" and _opening_taken_back(response.content or ""):
            return Grade(passed=False, detail="takes back the verdict it opens with")
        return got
    claim, retracted = final_claim(response.content or "")
    if retracted and kind == "regex" and _whole_reply_pattern(validated.pattern):
        # "Write only the title": a reply that takes one title back for another is not one
        return GRADERS[kind](response, validated)
    if retracted:
        response = response.model_copy(update={"content": claim})
    got = GRADERS[kind](response, validated)
    if retracted:
        got = got.model_copy(update={"span": got.span or claim})
    if got.passed and not _HEDGES_CHECKED_ABOVE.get():
        hedge = _hedged(kind, validated, response)
        if hedge:
            return Grade(passed=False, detail=f"offers {hedge} as alternatives", span=hedge)
    return got


# "Yes, it's a liquid — actually no, ...": the opening verdict, then its opposite after a
# retraction
_OPENING_VERDICT = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_LATER_VERDICT = re.compile(r"^\W*(?:actually\W+)?(yes|no)\b", re.IGNORECASE)


def _opening_taken_back(text: str) -> bool:
    """Whether a reply opening with yes or no takes it back for the other after a retraction."""
    opening = _OPENING_VERDICT.match(text)
    claim, retracted = final_claim(text)
    later = _LATER_VERDICT.match(claim) if retracted else None
    return bool(opening and later and opening.group(1).lower() != later.group(1).lower())


def _whole_reply_pattern(pattern: str) -> bool:
    """Whether a pattern spans the whole reply (`^...$`, not line by line): a format the reply
    as written must have, taken-back parts included."""
    return pattern.startswith("^") and pattern.endswith("$") and "|" not in pattern


def _hedged(kind: str, validated: Any, response: Response) -> str | None:
    """'X or Y' when the reply offers two candidates of which the grader passes exactly one
    ("Wien oder Graz", "B or C"): a careful grader credits neither."""
    for first, second, *readings in offered_alternatives(plain_text(response.content or "")):
        verdicts = [
            GRADERS[kind](response.model_copy(update={"content": alt}), validated).passed
            for alt in readings
        ]
        if verdicts[0] != verdicts[1]:
            return f"{first!r} or {second!r}"
    return None


def grade(item: Any, response: Response) -> Grade:
    """Grade one response against an item's grader spec; a garbled response fails as garble.

    The garble detector (evalrun.grading.garble) reads the content and reasoning channels with the
    scripts the item expects; token soup, floods and loops fail the item whatever the grader
    would say, and the detail says garbled rather than wrong.
    """
    from evalrun.grading.garble import check_response, expected_for

    garble = check_response(response, expected_for(item.languages, item.category))
    if garble is not None and garble.garbled:
        why = "; ".join(garble.reasons[:2]) or f"score {garble.score}"
        detail = f"garbled ({garble.channel}): {why}"
        return Grade(passed=False, detail=detail, garble=garble)
    if echoes_prompt(item, response):
        return Grade(passed=False, detail="the reply is the prompt echoed back", garble=garble)
    question = _question_of(item)
    if _CANDIDATES.match(response.content or "") and item.grader.kind not in _LISTS_ASKED:
        detail = "the reply lists possible answers and concludes none"
        return Grade(passed=False, detail=detail, garble=garble)
    with asking(question):
        verdict_ = grade_spec(item.grader.kind, item.grader.params(), response)
        off = _off_schema(getattr(item, "tools", None), response) if verdict_.passed else None
        if off is not None:
            return Grade(passed=False, detail=off, garble=garble)
        if verdict_.passed and item.grader.kind not in ("json", "tool_call"):
            verdict_ = _beyond_the_answer(item, question, response) or verdict_
    return verdict_.model_copy(update={"garble": garble})


def _beyond_the_answer(item: Any, question: str, response: Response) -> Grade | None:
    """The failure of a reply whose answer passed but that does more or less than the prompt
    asks (a note after "answer only", the source beside its translation, a stated output the
    grader would not pass, a print's output misread, a false reason about the shown code, a
    false side claim, a refusal, a loop, a fragment for a sentence, a word list for prose,
    several for one, too many words), checked in that order; None when it does what was
    asked. The output and the side claims are read from what the reply ends on, after its last
    retraction."""
    content = response.content or ""
    claim, _ = final_claim(content)
    note = _note_beyond_the_answer(item, question, response)
    if note is not None:
        detail = f"the prompt asks for the answer only; the reply adds {note[:40]!r}"
        return Grade(passed=False, detail=detail, span=note)
    source = _source_added(question, content)
    if source is not None:
        detail = f"the prompt asks for the translation only; the reply adds {source!r}"
        return Grade(passed=False, detail=detail, span=source)
    label = _TRANSLATION_LABEL.match(plain_text(content))
    if label is not None and _ONLY_ASKED.search(question):
        detail = f"the prompt asks for the translation only; the reply adds {label[0]!r}"
        return Grade(passed=False, detail=detail, span=label[0])
    stated = _stated_output(question, claim)
    if stated is not None:
        alone = response.model_copy(update={"content": stated})
        if not grade_spec(item.grader.kind, item.grader.params(), alone).passed:
            detail = f"the reply states the output as {stated[:40]!r}"
            return Grade(passed=False, detail=detail, span=stated)
    misread = print_misread(question, claim)
    if misread is not None:
        return Grade(passed=False, detail=misread)
    false_claim = false_code_claim(question, claim)
    if false_claim is not None:
        return Grade(passed=False, detail=f"the reply's explanation is false: {false_claim}")
    side = _false_side_claim(plain_text(claim), question)
    if side is not None:
        return side
    if _REFUSAL.match(content):
        return Grade(passed=False, detail="the reply declines the task")
    loop = _LOOPED.search(_spaced(content))
    if loop is not None:
        unit = " ".join((loop.group(1) or loop.group(2)).split())
        return Grade(passed=False, detail=f"the reply loops {unit!r}", span=unit)
    if _SENTENCE_ASKED.search(question) and _fragment(content):
        return Grade(
            passed=False, detail="the prompt asks for a full sentence; the reply is not one"
        )
    if _PROSE_ASKED.search(question) and _word_list(content):
        return Grade(passed=False, detail="the prompt asks for prose; the reply lists words")
    many = _more_than_one(question, content)
    if many is not None:
        return Grade(passed=False, detail=f"the prompt asks for one; the reply gives {many}")
    extra = _more_words_than_asked(question, content)
    return Grade(passed=False, detail=extra) if extra is not None else None


def _false_side_claim(ended_on: str, question: str) -> Grade | None:
    """The failure of a reply whose side claims, checked exactly or against the settled facts,
    are false: a value restated by a false conversion, a number given a property it lacks, a
    claim about the world."""
    checks: tuple[tuple[Callable[[], str | None], str], ...] = (
        (lambda: false_conversion(ended_on), "the reply restates its value by a false conversion"),
        (lambda: false_number_claim(ended_on), "the reply's claim is false"),
        (lambda: false_world_claim(ended_on, question), "the reply's claim is false"),
    )
    for check, says in checks:
        found = check()
        if found is not None:
            return Grade(passed=False, detail=f"{says}: {found!r}", span=found)
    return None


def _off_schema(tools: Any, response: Response) -> str | None:
    """A tool call argument outside the values its function's schema allows ("unit":
    "Celsius" where the enum is ["celsius", "fahrenheit"]) or of another JSON type than the
    schema's ("amount": "250" where it asks for a number): a call the tool would refuse."""
    schemas = {
        t["function"].get("name"): t["function"].get("parameters") or {}
        for t in tools or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    for call in response.tool_calls or []:
        props = schemas.get(call.name, {}).get("properties") or {}
        args = call.arguments if isinstance(call.arguments, dict) else {}
        for key, got in args.items():
            schema = (props.get(key) or {}) if isinstance(props, dict) else {}
            allowed = schema.get("enum") if isinstance(schema, dict) else None
            if isinstance(allowed, list) and isinstance(got, str) and got not in allowed:
                return f"argument {key!r} is {got!r}, not one of the tool's values {allowed}"
            want = schema.get("type") if isinstance(schema, dict) else None
            types = [want] if isinstance(want, str) else want if isinstance(want, list) else []
            # a null is left to the grader: it stands for an optional argument not given
            known = [t for t in types if t in SCHEMA_TYPES]
            if got is not None and known and not any(_admits(t, got) for t in known):
                return f"argument {key!r} is {got!r}, not of the tool's type {'/'.join(known)}"
    return None


def _admits(kind: str, value: Any) -> bool:
    """Whether a tool argument is of the schema's type; 4.0 passes for an integer (a parser
    may hand JSON's one number type over as a float)."""
    integral = kind == "integer" and isinstance(value, float) and value.is_integer()
    return integral or SCHEMA_TYPES[kind](value)


# A reply that opens by offering candidates and lists them ("Possible outputs:\n- 3 1\n- 3 0",
# 'Possible typeof results: "undefined", "object"') chooses none of them: the right one among
# them is read out of a list, not answered. Graders of lists, documents and calls are left out.
_POSSIBLE = r"(?:possible|potential|candidate)\s+[\w ]{0,30}?(?:answers?|outputs?|results?|values?|options?)"
_CANDIDATES = re.compile(
    rf"\s*\W{{0,3}}(?:{_POSSIBLE}|either|(?:it\s+)?(?:could|might|may)\s+be|one\s+of(?:\s+these)?)"
    r"\W{0,3}\s*:\s*(?:\n\s*(?:[-*•]|\d+[.)])\s*\S.*){2,}\s*$"
    rf"|\s*\W{{0,3}}{_POSSIBLE}\W{{0,3}}\s*:[^\n]*,[^\n]*,[^\n]*$",
    re.IGNORECASE,
)
_LISTS_ASKED = frozenset({"format", "json", "tool_call", "sequence"})


# A prompt asking for the answer alone: "Give only the translation.", "Answer with the French
# phrase only.", "Write only the title", "nothing else", "Напиши только перевод", "只写翻译",
# "Donne seulement la traduction", "Gib nur die Übersetzung an". ("Reply with just the number"
# is read more loosely: a number followed by its explanation answers it.)
_ONLY_ASKED = re.compile(
    r"\bonly\s+(?:the|a|an)\b|\b(?:phrase|words?|translation|title|number|answer)\s+only\b|"
    r"\bnothing else\b|\bno other (?:text|words)\b|только|只写|只回答|\bseulement\b|\bnur\b",
    re.IGNORECASE,
)
# What a reply appends after its answer: a labelled note ("Note:", "Alternatives:", "Word by
# word:", "Literally, ..."), a paragraph, or a bracket after the reply's last stop. (A bracketed
# aside within the answer, "violet (and sits behind shelf Q9)", is read as part of it.)
_NOTE = re.compile(
    r"(?:(?<=\s)|^)(?:note|nb|n\.b\.|alternatives?|alternatively|literally|word by word|"
    r"explanation|pronunciation|примечание|remarque|hinweis|注)\s*[:：,—–-]"
    r"|\n\s*\n(?=\s*\S)"
    # "Der Zug ist heute verspätet. (Oder: ...)": a bracket closing the reply after its stop
    r"|(?<=[.!?。！？])[^\S\n]*[(（](?=[^()（）]*[)）]\s*$)",
    re.IGNORECASE,
)


# "Translation: Der Zug ist heute verspätet." for "Give only the translation": a label the
# prompt did not ask for
_TRANSLATION_LABEL = re.compile(
    r"\W*(?:translation|translated|перевод|traduction|traducción|übersetzung|翻译|译文)\s*[:：]",
    re.IGNORECASE,
)


_QUOTED = re.compile(r"[\"“«„]\s*([^\"”»“]{3,300}?)\s*[\"”»“]")


def _source_added(question: str, content: str) -> str | None:
    """The text the prompt quotes to translate, when a reply asked for the translation only
    gives it too ("Кот спит на подоконнике. The cat is sleeping on the windowsill."), or None."""
    if not _ONLY_ASKED.search(question):
        return None
    got = normalize(plain_text(content), punct=True)
    for m in _QUOTED.finditer(question):
        source = normalize(m.group(1), punct=True)
        long_enough = len(source.split()) >= 3 or len(source) >= 4 and not source.isascii()
        if long_enough and source in got and got != source:
            return m.group(1)
    return None


def _note_beyond_the_answer(item: Any, question: str, response: Response) -> str | None:
    """The note a reply adds after a complete answer when the prompt asked for the answer only
    ("I love reading books.\n\nAlternatives: ..."): the text from the note on, or None. The
    reply before the note must pass on its own, so a lead-in ("Sure! Here it is:\n\n...") or
    an answer the note completes is left alone."""
    content = response.content or ""
    if not _ONLY_ASKED.search(question):
        return None
    for m in _NOTE.finditer(content):
        head = content[: m.start()].strip()
        if not re.search(r"\w", head):
            continue
        alone = response.model_copy(update={"content": head})
        if grade_spec(item.grader.kind, item.grader.params(), alone).passed:
            return content[m.start() :].strip()
    return None


# "What does this code print?" answered "It prints None — an IndexError would ...", or working
# that ends "Output: [1, 2, 3]": the output the reply states, a literal (numbers, None/True/False,
# a quoted string, a bracketed list), is its answer; the right one named in its working is not.
_OUTPUT_ASKED = re.compile(
    r"\bwhat (?:does|will|happens when) (?:this|the following)\b[^?\n]{0,40}?"
    r"\b(?:print|output|run)s?\b",
    re.IGNORECASE,
)
_ATOM = (
    r"(?:-?\d[\d.,]*|None|True|False|null|undefined|NaN|\"[^\"\n]*\"|'[^'\n]*'"
    r"|\[[^\]\n]*\]|\{[^}\n]*\}|`[^`\n]+`)"
)
_LITERAL = rf"(?P<value>{_ATOM}(?: {_ATOM})*)"
_STATED = (
    re.compile(
        # "..., so the output is [1, 2, 3].": the output named at the end of a sentence
        rf"\b(?:the\s+)?(?:printed\s+|final\s+)?output\s+(?:is|will\s+be)\s*:?\s*{_LITERAL}"
        r"\s*[.!]?\s*$",
        re.IGNORECASE,
    ),
    re.compile(
        # at the start of a sentence; the last such sentence is the reply's last word on it
        rf"(?:^|(?<=[.!?\n]))\W*(?:it|this|the code|the program)\s+(?:prints|outputs|logs|returns)"
        rf"\s*:?\s*{_LITERAL}"
        r"(?=\s*(?:$|[.;,:(!—–]|-\s|(?:because|since|as|which)\b))",
        re.IGNORECASE,
    ),
    re.compile(
        # the line ending the reply: a literal, or one bare word ("Output: abc")
        rf"(?:^|\n)[^\S\n]*(?:final\s+)?(?:output|answer|result)\s*(?:is)?\s*[:=]\s*"
        rf"(?P<value>{_ATOM}(?: {_ATOM})*|[\w'\"`.-]+)[^\S\n]*\.?\s*$",
        re.IGNORECASE,
    ),
)


def _stated_output(question: str, claim: str) -> str | None:
    """The output a reply's final claim ("It prints 10... wait, no — 11": the part after the
    retraction) states for a question asking what code prints, or None."""
    if not _OUTPUT_ASKED.search(question):
        return None
    plain = plain_text(claim).strip()
    for pattern in _STATED:
        found = list(pattern.finditer(plain))
        if found:
            return found[-1].group("value")
    return None


# A reply that opens by declining the task ("I'd rather not describe the sea.", "Sorry, I can't
# help with that."): whatever words it happens to use, it does not do what was asked.
_REFUSAL = re.compile(
    r"\s*(?:(?:i'm|i am)?\s*sorry,?\s*(?:but\s+)?)?i(?:'d| would) rather not\b"
    r"|\s*(?:(?:i'm|i am)\s+)?sorry,?\s*(?:but\s+)?i (?:can't|cannot|won't|am unable to)\s+"
    r"(?:help|do|write|answer|assist|comply)\b"
    r"|\s*i (?:can't|cannot|won't) (?:help|assist|comply) with (?:that|this)\b"
    # "The sea is too complex to capture in ten words.": the task declared impossible
    r"|[^.!?\n]{0,60}?\b(?:too \w+ to (?:capture|describe|sum up|summari[sz]e|put into words)|"
    r"impossible to (?:capture|describe|sum up|summari[sz]e|put into words)|"
    r"can(?:not|['’]t) be (?:captured|described|summed up|summari[sz]ed|put into words))\b",
    re.IGNORECASE,
)

# A phrase or sentence of one to thirty words said three times or more in a row ("lantern
# lantern lantern", "Have a nice day! Have a nice day! Have a nice day!"): a loop, not an
# answer. Only words count, so a count ("1, 2, 3") is no loop; marks between the words are
# not compared.
_LOOPED = re.compile(
    r"(?<![^\s])((?:[^\W\d_]+ ){2,30}?)\1{2,}|(?<![^\s])([^\W\d_]+ )\2{3,}",
    re.IGNORECASE,
)


def _spaced(text: str) -> str:
    """The reply's words, each followed by one space; stops, commas and line breaks dropped.
    Other marks stay, so "(denominator * denominator)" is no loop; a word said three times
    ("No, no, no.") is emphasis, four times a loop."""
    return re.sub(r"[\s,.;:!?…—–\-]+", " ", plain_text(text)).strip() + " "


# "Answer in one full sentence", "одним полным предложением", "in einem ganzen Satz": a reply of
# two words or fewer ("12 месяцев.", "Sieben Tage.") is a fragment, not the sentence asked
_SENTENCE_ASKED = re.compile(
    r"\b(?:full|complete|whole)\s+sentence|полн\w{0,4}\s+предложени|\bganzen\s+Satz|"
    r"\bvollständigen\s+Satz|\bphrase\s+complète",
    re.IGNORECASE,
)


def _fragment(content: str) -> bool:
    return len(re.findall(r"\w+", plain_text(content))) <= 2


# "Write between 20 and 40 words about rivers" answered "Rivers: water, current, banks, ...":
# a list of words is not the prose asked for
_PROSE_ASKED = re.compile(
    r"\bwrite\b[^.?!\n]*\b(?:words|sentences?|story|paragraph)\b", re.IGNORECASE
)


def _word_list(content: str) -> bool:
    """Whether the reply is a list of eight or more single words (or pairs), a heading before
    it allowed."""
    body = re.sub(r"^[^\n:]{0,40}:\s*", "", plain_text(content).strip())
    items = [x.strip(" .!*-•") for x in re.split(r"[,;\n]", body)]
    items = [x for x in items if x]
    return len(items) >= 8 and all(len(x.split()) <= 2 for x in items)


# "give one short reason" answered "for three reasons: ...": more than the one asked for
_ONE_ASKED = re.compile(
    r"\bone\s+(?:short\s+|brief\s+|simple\s+)?(reason|example|tip|fact)\b", re.IGNORECASE
)


def _more_than_one(question: str, content: str) -> str | None:
    """The count a reply announces of what the prompt asks one of ("three reasons"), or the
    list of two or more it sets out ("1. It adheres.\n2. It is a liquid."), or None."""
    asked = _ONE_ASKED.search(question)
    if asked is None:
        return None
    noun = asked.group(1).casefold()
    m = re.search(
        rf"\b(?:two|three|four|five|several|many|multiple|a few|\d+)\s+(?:\w+\s+)?{noun}s\b",
        content,
        re.IGNORECASE,
    )
    if m:
        return m.group(0)
    listed = _LIST_LINE.findall(content)
    return f"a list of {len(listed)} {noun}s" if len(listed) >= 2 else None


# a line of a numbered or bulleted list: "1. ...", "2) ...", "- ...", "* ...", "• ..."
_LIST_LINE = re.compile(r"^[^\S\n]*(?:[-*•]|\d+[.)])[^\S\n]+\S", re.MULTILINE)


_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# "these three English words ... as a comma-separated list", "the German words for "house" and
# "garden", separated by a comma": a list of words whose length the prompt fixes
_SEPARATED = re.compile(r"comma-separated|separated by (?:a )?commas?", re.IGNORECASE)
_N_WORDS = re.compile(r"\b(two|three|four|five|six)\s+(?:\w+\s+)?words\b", re.IGNORECASE)
_QUOTED_WORDS = re.compile(
    r"\bwords\s+(?:for\s+)?((?:[\"“][^\"”]{1,20}[\"”](?:,?\s*(?:and\s+)?)){2,6})"
)


def _more_words_than_asked(question: str, content: str) -> str | None:
    """What is wrong with a separated list of more words than the prompt asks for ("Haus,
    Garten, Wohnung" for "house" and "garden"), or None. The reply's most separated line is
    the list; asides in brackets are not items."""
    if not _SEPARATED.search(question):
        return None
    n = _N_WORDS.search(question)
    quoted = _QUOTED_WORDS.search(question)
    want = _COUNTS[n.group(1).lower()] if n else None
    if want is None and quoted:
        want = len(re.findall(r"[\"“]([^\"”]+)[\"”]", quoted.group(1)))
    if not want:
        return None
    bare = re.sub(r"\([^()]*\)", " ", content)
    lines = [ln for ln in bare.split("\n") if ln.strip()]
    if not lines:
        return None
    items = max(
        ([x for x in re.split(r"[,，、]", ln) if re.search(r"\w", x)] for ln in lines), key=len
    )
    if len(items) > want:
        return f"the prompt asks for {want} words; the reply lists {len(items)}"
    return None


# The question the reply being graded answers, for graders that weigh which of several clauses
# answers it ("K2 is the second highest; Everest is the highest"). Set by grade(); empty when a
# grader is called on its own.
_QUESTION: ContextVar[str] = ContextVar("question", default="")


@contextmanager
def asking(question: str) -> Iterator[None]:
    """Grade within this block as an answer to `question`."""
    token = _QUESTION.set(question)
    try:
        yield
    finally:
        _QUESTION.reset(token)


def current_question() -> str:
    """The question of the reply being graded (`asking`), or "" outside grade()."""
    return _QUESTION.get()


def _question_of(item: Any) -> str:
    user = next((m.get("content") for m in reversed(item.messages) if m.get("role") == "user"), "")
    return user if isinstance(user, str) else ""


def echoes_prompt(item: Any, response: Response) -> bool:
    """Whether the reply is the item's last user message, echoed back (after normalization).

    A mis-loaded model that parrots its input must not keep the items whose prompt happens to
    contain the answer (long-context documents, code to read). Items tagged `copy` ask for the
    copy ("Repeat exactly: ..."): the copy passes, the instruction echoed with it does not.
    """
    user = next((m.get("content") for m in reversed(item.messages) if m.get("role") == "user"), "")
    if not isinstance(user, str) or len(user.split()) < 3:
        return False
    if "copy" in getattr(item, "tags", []) and len(without_lead_in(user)) < 2:
        return False  # the prompt is only the text to copy; with "Repeat exactly:" it is not
    got = normalize(plain_text(response.content or ""), punct=True)
    # "write one sentence about cats using only lowercase letters" for the same prompt with
    # "(no capital letters at all)" after it: the prompt echoed without its aside
    bare = re.sub(r"\s*\([^()]*\)", "", user)
    return bool(got) and got in (
        normalize(plain_text(user), punct=True),
        normalize(plain_text(bare), punct=True),
    )


def describe_graders() -> str:
    """Every registered grader kind with what it checks and its parameters (`evalrun suite
    graders`), generated from the registry so it cannot drift from the code."""
    lines = []
    for kind in sorted(GRADERS):
        doc = (GRADERS[kind].__doc__ or "").strip().splitlines()
        lines.append(f"{kind}: {doc[0] if doc else ''}")
        model = PARAMS[kind]
        for name, field in model.model_fields.items() if model else []:
            need = "required" if field.is_required() else f"default {field.get_default()!r}"
            lines.append(f"    {name} ({need}): {field.description or ''}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def answer_text(response: Response) -> str:
    return response.content or ""


def verdict(passed: bool, detail: str) -> Grade:
    return Grade(passed=passed, detail=detail)


Answers = str | list[str]


def as_list(value: Answers) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# ---------------------------------------------------------------- combinators


class SubGrader(BaseModel):
    """One grader inside `all`/`any`: a kind plus that grader's parameters."""

    model_config = ConfigDict(extra="allow")

    kind: str

    def params(self) -> JSONObject:
        return dict(self.model_extra or {})


class CombineParams(GraderParams):
    graders: list[SubGrader] = Field(min_length=1, description="Sub-graders, each {kind, ...}.")

    @model_validator(mode="after")
    def _subs_valid(self) -> CombineParams:
        for sub in self.graders:
            try:
                validate_params(sub.kind, sub.params())
            except SuiteError as exc:
                raise ValueError(str(exc)) from exc
        return self


@grader("all", CombineParams)
def _all(response: Response, p: CombineParams) -> Grade:
    """Every sub-grader passes."""
    details = []
    span = None
    for sub in p.graders:
        g = grade_spec(sub.kind, sub.params(), response)
        span = span or g.span
        if not g.passed:
            return Grade(passed=False, detail=f"{sub.kind}: {g.detail}", span=g.span)
        details.append(f"{sub.kind}: {g.detail}")
    return Grade(passed=True, detail="; ".join(details), span=span)


# Set while `any` grades its sub-graders: two candidates are a hedge only when the `any` as a
# whole passes one and not the other. "3/4 or 0.75" offers one value in two forms that two
# sub-graders each accept; each on its own would read the other form as a second candidate.
_HEDGES_CHECKED_ABOVE: ContextVar[bool] = ContextVar("hedges_checked_above", default=False)


@grader("any", CombineParams)
def _any(response: Response, p: CombineParams) -> Grade:
    """At least one sub-grader passes (and, offered two candidates, not only for one)."""
    details = []
    # only the outermost check weighs the candidates: the readings it grades are not checked
    # again, so the check does not recurse through every pair of candidates
    outermost = not _HEDGES_CHECKED_ABOVE.get()
    token = _HEDGES_CHECKED_ABOVE.set(True)
    try:
        for sub in p.graders:
            g = grade_spec(sub.kind, sub.params(), response)
            if g.passed:
                break
            details.append(f"{sub.kind}: {g.detail}")
        else:
            return verdict(False, "; ".join(details))
        hedge = _hedged("any", p, response) if outermost else None
    finally:
        _HEDGES_CHECKED_ABOVE.reset(token)
    if hedge:
        return Grade(passed=False, detail=f"offers {hedge} as alternatives", span=hedge)
    return verdict(True, f"{sub.kind}: {g.detail}")
