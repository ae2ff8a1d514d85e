"""Garble detector: tell token soup from merely wrong answers.

A weak model answers badly in fluent language; a broken serving stack (mis-mapped weights, a wrong
rope base, a bad attention backend, a quantized KV cache, speculative decoding with CUDA graphs)
produces token soup, floods of one token, scripts no language mixes, or text that collapses into
junk after a correct start. `detect` scores one text with cheap signals (0.7-0.9 ms for a typical
answer, after a one-time load of the word lists), names the garble family of the strongest one
(`GarbleVerdict.kind`) and explains the verdict with reasons a person can read. A loop of whole
words or lines is its own kind, `loop`: healthy small models loop too, so sign-off can count it
apart from engine damage.

The parts:
- evalrun/verdicts.py (below grading/, so reading a run loads no detector): `GarbleVerdict` and its
  `GarbleSignal`s, each with the family it speaks for;
- scripts.py: writing systems, the scripts each language may use (CLDR's likely scripts via
  `langcodes` for languages it does not list), answers that read as code, CSV or a hex dump;
- words.py: the words of a text, each judged by shape and by word lists; fenced blocks, code
  lines, comments and docstrings told apart;
- lexicon.py: the field's libraries behind those lists and guesses (wordfreq, pycld2,
  ftfy), imported lazily;
- romanized.py: Hindi, Russian, Arabic, Japanese... typed in Latin letters, told from soup by
  their small words and by wordfreq's own-script lists spelled out;
- signals.py: word-level signals (scripts, and whether other-script words are set apart the way
  a glossary sets them; soup; made-up words in scripts with word lists; function words; salad;
  collapse; tail), also over windows so a junk tail is not diluted by a long clean start;
- grammar.py: function words where no sentence has them (`a the`, `la un`, a sentence ending on
  `de`), in en, fr, es, it, pt, de, nl: salads of real words keep their words and phrases but
  break these;
- repeats.py: floods, loops of tokens, diversity, fragments, mojibake, undecoded tokenizer
  pieces, replacement and control chars;
- code.py: signals for code, JSON and tool calls, where word checks are off (brackets closed
  that no line opened, statements that are rows of English words, JSON keys without values,
  names in another script);
- structure.py: sequence-level signals (punctuation floods, short-unit and line loops,
  word salad, symbol tails, punctuation clusters, lone letters, stray brackets and quotes,
  blank floods).

Sentence-level repetition (small models ramble) only adds a little to the score and never flags a
text on its own. Russian, Chinese, code, JSON, CSV, math, tables, chemical names, glossaries
and transliterations are clean.
"""

from __future__ import annotations

import json
import os
import re

from evalrun.endpoint.response import Response
from evalrun.grading.garble import code, structure
from evalrun.grading.garble.grammar import grammar_signal
from evalrun.grading.garble.lexicon import (
    LATIN_DEFAULT,
    SCRIPT_LANGS,
    WORDFREQ_LANGS,
    guess_languages,
    known,
    wordfreq_code,
)
from evalrun.grading.garble.repeats import (
    chars_signal,
    diversity_signal,
    flood_signal,
    fragment_signal,
    repetition_signal,
)
from evalrun.grading.garble.scripts import (
    FUNCTION_WORD_LANGS,
    LANG_SCRIPTS,
    LATIN_ONLY,
    OTHER_KINDS,
    SCRIPT_NAMES,
    STRUCTURED,
    expected_scripts,
    is_structured,
    likely_scripts,
    looks_like_code,
    looks_structured,
    looks_tabular,
)
from evalrun.grading.garble.signals import (
    TAIL_WORDS,
    collapse_signal,
    doubled_signal,
    glued_signal,
    other_script_lexicon_signal,
    prefix_signal,
    salad_signal,
    sprinkle_signal,
    stub_sentences,
    tail_signal,
    windowed,
    word_order_signal,
)
from evalrun.grading.garble.words import (
    COMPOUNDING,
    TOKEN,
    Signal,
    Text,
    mark_function_words,
    read_words,
)
from evalrun.verdicts import (
    FAMILIES,
    GarbleSignal,
    GarbleVerdict,
    SignalName,
)

THRESHOLD = 0.5  # a score at or above this is garbled


JUDGED_CHARS = 40_000  # longer answers are judged on their first and last 20,000 characters


KINDS = FAMILIES


def detect(text: str, expect: list[str] | None = None) -> GarbleVerdict:
    """Judge one text; `expect` lists languages/scripts the answer may use."""
    if not text or not text.strip():
        return GarbleVerdict(garbled=False, score=0.0)
    if len(text) > JUDGED_CHARS + 1:  # bounded time on an 8 MB body: its head and its tail tell
        half = JUDGED_CHARS // 2
        verdict = detect(text[:half] + "\n" + text[-half:], expect)
        note = f"(judged the first and last {half:,} of {len(text):,} characters)"
        return verdict.model_copy(update={"note": note})
    tabular = looks_tabular(text)
    t = Text(
        text,
        expected_scripts(expect),
        is_structured(expect) and looks_structured(text) or tabular or looks_like_code(text),
        tabular=tabular,
        compounding=not expect or any(e.split("-")[0].lower() in COMPOUNDING for e in expect),
    )
    t.langs, t.english_text, t.function_words, t.check_words, t.reads_english, t.lang = (
        _lexicon_langs(text, expect)
    )
    read_words(t)
    mark_function_words(t)
    signals = windowed(t)
    signals += chars_signal(text)
    toks = TOKEN.findall(text)
    flood, loop = flood_signal(text, t.structured)
    blocks = code.code_blocks(text, t.structured)
    scored: tuple[tuple[SignalName, tuple[float, str]], ...] = (
        ("flood", flood),
        ("loop", loop),
        ("diversity", diversity_signal(t.words, text)),
        ("fragments", fragment_signal(t)),
        ("tail", tail_signal(t)),
        ("collapse", collapse_signal(t)),
        ("prefix", prefix_signal(t)),
        ("lexicon", other_script_lexicon_signal(t)),
        ("repetition", repetition_signal(text)),
        ("punctuation", structure.punctuation_flood(text)),
        ("bangs", structure.bang_flood(toks)),
        ("short-loop", structure.short_unit_loop(toks, text.strip().count("\n") + 1)),
        ("line-loop", structure.line_loop(text)),
        ("dashes", structure.dash_soup(text)),
        ("capitals", salad_signal(t)),
        ("word-order", word_order_signal(t)),
        ("glued", glued_signal(t)),
        ("grammar", grammar_signal(t)),
        ("doubled", doubled_signal(t)),
        ("sprinkle", sprinkle_signal(t)),
        ("stubs", stub_sentences(t)),
        ("blank", structure.blank_flood(text)),
        ("syntax", structure.python_syntax(text)),
        ("scattered", structure.scattered_lines(text)),
        ("marks-only", structure.punctuation_only(text)),
        ("mark-lines", structure.mark_lines(text)),
        ("hollow-lines", structure.hollow_lines(text)),
        ("number-soup", structure.number_soup(text)),
        ("capital-runs", structure.capital_runs(text)),
        ("brackets", code.broken_brackets(blocks)),
        ("code-words", code.word_lines(blocks)),
        ("code-names", code.foreign_names(text, blocks)),
        ("json", code.broken_json(text) if "{" in text else (0.0, "")),
    )
    for name, (score, reason) in scored:
        signals.append(Signal(name, score, reason))
    if not t.structured:  # prose only: code, JSON and tables have symbols, lone letters, no commas
        prose = structure.without_code(text)  # (fenced blocks and inline code blanked)
        in_prose: tuple[tuple[SignalName, tuple[float, str]], ...] = (
            ("clusters", structure.punctuation_clusters(TOKEN.findall(prose))),
            ("symbols", structure.symbol_tail(text)),
            ("scatter", structure.letter_scatter(toks)),
            ("stray", structure.stray_punctuation(text)),
            ("glitches", structure.word_glitches(prose)),
            ("run-on", structure.salad_after_sentences(text)),
        )
        for name, (score, reason) in in_prose:
            signals.append(Signal(name, score, reason))
    keep = 1.0
    for s in signals:
        keep *= 1.0 - s.score
    score = round(1.0 - keep, 3)
    shown = sorted((s for s in signals if s.score >= 0.1), key=lambda s: -s.score)
    garbled = score >= THRESHOLD
    verdict = GarbleVerdict(
        garbled=garbled,
        score=score,
        signals=[
            GarbleSignal(name=s.name, family=s.family, score=s.score, reason=s.reason)
            for s in shown
        ],
        kind=_kind(shown, t) if garbled else "",
    )
    strings = _json_strings(text) if "{" in text or "[" in text else ""
    if strings:
        inner = detect(strings, None)  # data may be in any language: judged as such
        if inner.score > verdict.score:
            return inner.model_copy(update={"json_strings": inner.json_strings + 1})
    return verdict


_ENGINE_ONLY = frozenset({"multi-script", "non-words", "mojibake"})


_TIE_FIRST = ("loop", "flood")  # on equal scores, the loop explains the rest (no function words)


def _kind(shown: list[Signal], t: Text) -> str:
    """The family of the strongest signal; a loop is only a loop when no sign of engine damage
    (soup, scripts, mojibake) comes close, and a window that was clean before it is a collapse.
    An odd tail after fewer than four words is no collapse: the next family that fires speaks.
    Made-up words that are one misspelling of a word the text also writes, looped (страна,
    страная, страная, ...), are the loop's: the model repeating its own slip, not soup."""
    words = sum(1 for w in t.words if w.letters and not w.code)
    kinds = sorted(
        ((s.family, s) for s in shown),
        key=lambda ks: (-ks[1].score, ks[0] not in _TIE_FIRST),
    )
    if kinds[0][1].name == "tail" and words < 2 * TAIL_WORDS:
        kinds = [ks for ks in kinds[1:] if ks[1].score >= THRESHOLD] or [("non-words", kinds[0][1])]
    kind, top = kinds[0]
    if top.name == "diversity" and any(k == "loop" and s.score >= 0.5 for k, s in kinds[1:]):
        kind = "loop"  # few distinct tokens because whole lines repeat
    damage = [k for k, s in kinds[1:] if k in _ENGINE_ONLY and s.score >= 0.5]
    if kind == "loop" and damage and not (set(damage) == {"non-words"} and _misspelt_loop(t)):
        kind = damage[0]
    if kind != "loop" and "(clean before)" in top.reason:
        return "collapse"
    return kind


def _misspelt_loop(t: Text) -> bool:
    """The text's made-up words are at most two, each a misspelling of a listed word the text
    also writes (sharing all but its last two letters, at least four): one slip looped."""
    scripts = {w.key: w.scripts for w in t.words if w.letters >= 4 and not w.code}
    if len(scripts) > LOOPED_SLIP_WORDS:
        return False
    odd = [k for k, s in scripts.items() if not known(k, _word_langs(s, t))]
    listed = [k for k in scripts if k not in odd]
    return 0 < len(odd) <= 2 and all(
        any(len(os.path.commonprefix([o, g])) >= max(4, min(len(o), len(g)) - 2) for g in listed)
        for o in odd
    )


# A loop of one misspelt word holds few distinct words (the slip, the word it misspells, a few
# words before the loop set in); soup that loops holds many.
LOOPED_SLIP_WORDS = 4


def _word_langs(scripts: frozenset[str], t: Text) -> tuple[str, ...]:
    """The word lists a word is looked up in: its script's languages, or the text's for Latin."""
    if len(scripts) == 1:
        (script,) = scripts
        if script in SCRIPT_LANGS:
            return SCRIPT_LANGS[script]
    return t.langs or ("en",)


def _lexicon_langs(
    text: str, expect: list[str] | None
) -> tuple[tuple[str, ...], bool, bool, bool, bool, str | None]:
    """Languages whose word lists judge the Latin-script words (English, the expected ones, and
    when the item names no Latin-script language, the ones pycld2 finds in the text); whether
    the text is English (only English expected, or none and the text reads English); and
    whether its running text should be full of the function words FUNCTION_WORD_LANGS list
    (not Lithuanian, Igbo or Hinglish, whose function words the list lacks); and whether its
    Latin words are looked up in the lists (English, or no language named and pycld2 unsure
    which it is: soup that it calls Basque or Latin at a guess); and whether it reads as English
    whatever the item asked for (its word pairs and function-word pairs are English's to judge);
    and the language its running text is in (pycld2's when sure, else the one language asked for),
    if one."""
    spoken = [e.strip().lower().split("-")[0] for e in expect or () if e.lower() not in _KINDS]
    named = [c for c in (wordfreq_code(e) for e in spoken) if c]
    langs = ["en", *named]
    guessed, sure = guess_languages(text)
    reads_english = sure and guessed[:1] == ("en",)  # (whatever the item asked for)
    if not spoken or not any(LANG_SCRIPTS.get(e) == LATIN_ONLY for e in spoken):
        langs += [c for c in guessed if c in WORDFREQ_LANGS] or LATIN_DEFAULT[1:]
    elif sure and guessed and guessed[0] not in langs:
        # A whole answer in a language the item did not ask for, one pycld2 is sure of
        # (Swahili, Welsh, Vietnamese to an English item): the wrong language is the graders'
        # business, not soup. It is judged as that language, as if the item had asked for it.
        langs += [c for c in guessed if c in WORDFREQ_LANGS]
        spoken = [guessed[0]]
    else:
        guessed = ()  # (the item names the Latin-script language: the guess has no say)
    if spoken:  # (an English answer to an item in Russian or Hindi is judged as English)
        english = set(spoken) == {"en"} or bool(guessed) and guessed[0] == "en"
        # (a Japanese item answered in English is held to English's function words)
        function_words = all(e in FUNCTION_WORD_LANGS for e in spoken) or reads_english
    else:
        english = guessed[:1] == ("en",)
        function_words = not guessed or guessed[0] in FUNCTION_WORD_LANGS
    # (English soup to a German item is looked up too, though judged as no English otherwise)
    check_words = english or not sure or reads_english
    if sure and guessed:
        lang: str | None = guessed[0]
    else:
        lang = spoken[0] if len(set(spoken)) == 1 else None
    return (
        tuple(dict.fromkeys(langs)),
        english,
        function_words,
        check_words,
        english or reads_english,
        lang,
    )


_KINDS = STRUCTURED | OTHER_KINDS


def check_response(response: Response, expect: list[str] | None = None) -> GarbleVerdict | None:
    """The worst verdict over content, reasoning and tool-call arguments, naming its channel;
    None when there is no text at all."""
    worst: GarbleVerdict | None = None
    channels: list[tuple[str, str | None, list[str] | None]] = [
        ("content", response.content, expect),
        ("reasoning", response.reasoning, expect),
    ]
    for call in response.tool_calls:
        args = call.arguments
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        channels.append((f"tool_calls.{call.name}", raw, [*(expect or ["en"]), "json"]))
    for channel, text, want in channels:
        if not text or not text.strip():
            continue
        v = detect(text, want)
        if worst is None or v.score > worst.score:
            worst = v.model_copy(update={"channel": channel})
    return worst


def _json_strings(text: str) -> str:
    """The string values of the JSON in a text that hold a space, one a line; '' when there is
    none. Prose inside strings is judged as prose: tool-call arguments and JSON answers hold it.
    The JSON may sit in a fence or a <tool_call> tag, and may be cut off mid-string (a collapse
    runs to the token limit): then its values are read one by one. A string that holds JSON
    itself (a tool call's `arguments`) is read for its values too."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0 or not _JSON_KEY.search(text, start):
        return ""
    body = text[start : max(text.rfind("}"), text.rfind("]")) + 1]
    try:
        doc = json.loads(body)
    except ValueError:
        values = [m.group(1) for m in _JSON_VALUE.finditer(text, start)]
        return "\n".join(v for v in values if " " in v.strip())
    out: list[str] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str) and node.lstrip()[:1] in ("{", "["):
            try:  # a tool call's arguments: JSON inside a JSON string
                stack.append(json.loads(node))
            except ValueError:
                out.append(node)
        elif isinstance(node, str) and " " in node.strip():
            out.append(node)
    return "\n".join(out)


_JSON_KEY = re.compile(r'"[^"\n]{1,80}"\s*:')


# A string value after a key or in a list, closed or cut off at the end of the text.
_JSON_VALUE = re.compile(r'(?:[:\[,])\s*"((?:[^"\\\n]|\\.)*)(?:"|\Z)')


# Languages and kinds an answer in each core category may use when the item does not say.
CATEGORY_EXPECT: dict[str, list[str]] = {
    "code": ["en", "code"],
    "structured": ["en", "json"],
    "math": ["en", "math"],
    "tool": ["en", "json"],
}


def expected_for(item_languages: list[str] | None, category: str | None) -> list[str] | None:
    """What `detect` should expect for a suite item: its own `languages` when it states them,
    else its category's default (English, plus code/json/math where the category implies it).
    Multilingual items without languages stay lenient (None): any one script plus Latin."""
    if item_languages:
        return list(item_languages)
    if category == "multilingual":
        return None
    return list(CATEGORY_EXPECT.get(category or "", ["en"]))


def parse_expect(spec: str | None) -> list[str] | None:
    """`en,ru` -> ['en', 'ru']; UsageError on a code the detector does not know."""
    from evalrun.base.errors import UsageError

    if spec is None or not spec.strip():
        return None
    codes = [c.strip().lower() for c in spec.split(",") if c.strip()]
    unknown = [
        c
        for c in codes
        if c.split("-")[0] not in LANG_SCRIPTS
        and c not in STRUCTURED | OTHER_KINDS
        and c not in SCRIPT_NAMES
        and not likely_scripts(c)
    ]
    if unknown:
        raise UsageError(
            f"--expect: unknown language or script {', '.join(unknown)}; use codes "
            "such as en, ru, zh, ja, fr, de, code, json, math, table, or a script "
            "name such as cyrillic"
        )
    return codes


def explain_text(text: str, verdict: GarbleVerdict, expect: list[str] | None) -> str:
    """A person's view of a verdict: the call, the score, and one line per signal that fired."""
    scripts = expected_scripts(expect)
    where = ", ".join(sorted(scripts)) if scripts else "any one script plus Latin"
    call = f"GARBLED ({verdict.kind})" if verdict.garbled else "clean"
    lines = [
        (
            f"{call}: score {verdict.score:.2f} (garbled at >= {THRESHOLD:.2f}); "
            f"{len(text)} chars; expected scripts: {where}"
        )
    ]
    if not text.strip():
        lines.append("  (empty text: nothing to judge)")
    lines += [f"  - {r}" for r in verdict.reasons] or ["  (no signal fired)"]
    if verdict.loop:
        lines.append(
            "  (a loop of real words: healthy small models loop too, engine damage seldom)"
        )
    return "\n".join(lines)
