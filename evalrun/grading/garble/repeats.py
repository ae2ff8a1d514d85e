"""Repetition and character signals: floods of one unit glued to itself, loops of whole tokens,
low diversity, fragments recombined, replacement and control characters, mojibake."""

from __future__ import annotations

import operator
import re
import zlib

from evalrun.grading.garble.lexicon import (
    known,
    mojibake_badness,
)
from evalrun.grading.garble.scripts import (
    CAPTIONED_RULE,
    EDGE,
    FUNCTION_WORDS,
    KANA_HAN,
    closing_rule,
    is_box,
)
from evalrun.grading.garble.words import (
    FINISHED,
    TOKEN,
    Signal,
    Text,
    Word,
)

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff]")


# UTF-8 read as Latin-1/cp1252: a lead byte shown as Ã Â Ð Ñ Ø Ù â ã-é, then a continuation byte
# (U+0080-U+00BF, or the cp1252 punctuation those bytes become).
_MOJIBAKE = re.compile(
    "[\u00c2\u00c3\u00d0\u00d1\u00d8\u00d9\u00e2][\u0080-\u00bf\u0152\u0153\u0160\u0161"
    "\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030"
    "\u2039\u203a\u20ac\u2122]|[\u00e3-\u00e9][\u0080-\u00bf]"
)


# Latin-1 supplement letters and the cp1252 punctuation that UTF-8 bytes turn into: only texts
# with one of these can be mojibake, so only they pay for ftfy.
_LATIN1_RANGE = re.compile(
    "[\u00c0-\u00ff\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2020\u2021\u2030\u2039\u203a\u20ac\u2122]"
)


# a unit of up to 16 characters glued to itself 4 times or more (lordsquotationslordsquotations…)
_FLOOD = re.compile(r"(.{1,16}?)\1{3,}", re.DOTALL)


_CHAR_RUN = re.compile(r"(.)\1{3,}", re.DOTALL)


_BENIGN_UNIT = frozenset("-=_*~.|:+<>/\\ \t\n─━│┃═")


# A detokenizer that did not decode: SentencePiece's ▁ and byte-level BPE's Ġ/Ċ glued inside
# words (Maltese Ġ and Ċ start words, after a space or hyphen), byte-fallback pieces, and
# JSON's \uXXXX escapes that lost their backslash (uc12duc528). A run of bare ▁ spaces between
# words or at the end ("deep ▁▁") is one piece too; beside the other block elements (▁▂▃▅) it is
# a chart, and a piece quoted or in backticks ('▁Un', `▁the`) is being shown, not leaked.
_DECODER = (
    re.compile(r"(?<=[^\W\d_])\u2581|(?<![\'\"‘“`])\u2581(?=[^\W\d_])"),
    re.compile(r"(?<![\u2581-\u2588`])\u2581{2,}(?=\s|$)"),
    re.compile(r"(?<=[^\s\-'’])[\u0120\u010a]"),
    re.compile(r"<0x[0-9A-F]{2}>"),
    re.compile(r"\bu[0-9a-f]{4}(?:u[0-9a-f]{4})+\b"),
)


_SPECIAL = re.compile(
    r"<(?:pad|unk|mask|eos|bos|/?s|0x[0-9A-Fa-f]{2})>|<\|[A-Za-z_]{2,20}\|>|\[(?:PAD|UNK|CLS|SEP|MASK)\]"
)


def flood_signal(text: str, structured: bool) -> tuple[tuple[float, str], tuple[float, str]]:
    """The worst run of one short unit glued to itself (!!!!, ####, <pad><pad>, carecare): a
    flood; and the worst run of whole tokens repeated (opacity opacity ..., ciel, ciel): a loop."""
    best = word_loop = (0.0, "")
    n = len(text)
    toks = []
    stops = []  # the token ends a sentence
    # glued floods inside one whitespace-free token: yondyondyond, !!!!!!, <pad><pad>, 't't't
    for tm in TOKEN.finditer(text):
        tok = tm.group()
        toks.append(tok.rstrip(",.;:") or tok)  # ciel, ciel, ciel.: one word over and over
        stops.append(tok[-1] in ".!?")
        if len(tok) < 6 or (len(tok) < 10 and tok.isalpha() and len(set(tok)) > 3):
            continue
        # a cheap filter: most tokens hold neither a cycle nor a run of one character
        finder = _FLOOD if len(set(tok)) * 2.5 <= len(tok) else _CHAR_RUN
        pos = tm.start()
        for m in finder.finditer(tok):
            unit, span = m.group(1), m.end() - m.start()
            where = (
                "end"
                if pos + m.end() == n and closing_rule(text) < 0
                else (
                    "line"
                    if _rule_line(text, tm)
                    else "word"
                    if 0 < m.start()
                    and m.end() < len(tok)
                    and tok[m.start() - 1].isalpha()
                    and tok[m.end()].isalpha()
                    else "inline"
                )
            )
            score = _glued_score(unit, span, span / n, structured, where)
            shown = unit if len(unit) <= 8 else unit[:8] + "…"
            reason = f"{shown!r} repeated {span // len(unit)} times at char {pos + m.start()}"
            if _marked_words(unit) or _CJK_PHRASE.fullmatch(unit):
                # -Cuban-Cuban-Cuban, **total**total**total, 美丽美派经历的一种美丽美派经历的一种:
                # words looped, glued by a hyphen or markdown (Chinese and Japanese put no space
                # between words)
                if score > word_loop[0]:
                    word_loop = (score, reason)
            elif score > best[0]:
                best = (score, reason)
    glued, best = best, word_loop
    # the same token (or pair, or triple) over and over: opacity opacity ..., <pad> <pad>
    finished = FINISHED.search(text) is not None
    in_runs = 0  # tokens in runs of 3+ of one token, all runs together
    for period in LOOP_PERIODS:
        if sum(map(operator.eq, toks, toks[period:])) < _least_run(period):
            continue  # (too few tokens equal the one a period back for any run that counts)
        run = 0
        for i in range(period, len(toks) + 1):
            if i < len(toks) and toks[i] == toks[i - period]:
                run += 1
                continue
            if structured and _HEX.fullmatch(toks[i - 1]):
                run = 0  # zero bytes of a dump, zeros of a matrix: data
                continue
            if period == 1 and run >= 2 and any(c.isalnum() for c in toks[i - 1]):
                in_runs += run + 1  # (* * * and | | | are drawing, not words looping)
            looped = run + period >= 8 or (i == len(toks) and run // period + 1 >= END_LOOP_REPEATS)
            # (whole sentences said again are a rambling model's: the repetition signal's business)
            if looped and not (period > SENTENCE_PERIOD and any(stops[i - period : i])):
                best = _token_run(best, toks, i, period, run, finished)
            run = 0
    if in_runs > 10:
        score = min(1.0, (in_runs - 10) / 15)
        if score > best[0]:
            best = (score, f"{in_runs} tokens in runs of one token repeated back to back")
    return glued, best


_HEX = re.compile(r"[0-9a-fA-F]{1,4}")
_CJK_PHRASE = re.compile(f"[{KANA_HAN}]{{3,}}")


# What glues a word to itself when a model loops in markdown: a hyphen, bold or italic marks,
# backticks, strike-through.
_MARKUP = re.compile(r"[-*_`~]+")


def _marked_words(unit: str) -> bool:
    """A glued unit made of words and markup (`-Cuban`, `**total`, `unit_price**`), or of one
    word cut by its markup where the cycle was read from inside it (`otal**t`): words looped."""
    parts = [p for p in _MARKUP.split(unit) if p]
    if not parts or parts == [unit] or not all(p.isalpha() for p in parts):
        return False
    if len(parts) == 2 and known((parts[1] + parts[0]).lower(), ("en",)):
        return True
    return sum(map(len, parts)) >= 4 and all(
        len(p) >= 3 and known(p.lower(), ("en",)) for p in parts
    )


def _rule_line(text: str, tm: re.Match[str]) -> bool:
    """The token sits on a line of rule characters only (a rule, underline or table border)."""
    before = text.rfind("\n", 0, tm.start())
    after = text.find("\n", tm.end())
    line = text[before + 1 : len(text) if after < 0 else after]
    if CAPTIONED_RULE.fullmatch(line.strip()):
        return True  # ======= 6 passed in 0.84s =======: a caption between two rules
    rest = [c for c in line if c not in _BENIGN_UNIT and c not in "#[](){}%" and not c.isdigit()]
    return len(rest) <= 8 and all(not is_box(c) for c in rest)  # [#####-----] 50% done


def _glued_score(unit: str, span: int, cover: float, structured: bool, where: str) -> float:
    reps = span // len(unit)
    if any(c.isalpha() for c in unit):
        if len(unit) == 1:  # ĊĊĊĊĊĊĊĊĊĊ (but Hmmmmm, zzzzzz stay clean)
            return min(1.0, max(0.0, (span - 6) / 10))
        return 0.0 if reps < 4 else min(1.0, max(0.0, (span - 8) / 24))
    if span >= 16 and cover >= 0.9:
        return 1.0  # the whole answer is one unit repeated
    if all(c in _BENIGN_UNIT or is_box(c) for c in unit):
        # rules, underlines, table borders, code banners: fine on a line of their own; a long run
        # glued to text or ending the answer (generation stopped inside it) is a flood
        if span >= 200 or (where == "end" and span >= 32):
            return 1.0
        if where == "line" or structured or is_box(unit[0]):
            return 0.0
        return min(1.0, max(0.0, (span - 16) / 24))
    if any(c.isdigit() for c in unit) and all(c.isdigit() or c in " ,." for c in unit):
        low = 12 if where == "end" else 20  # 0.3333333333333333 is fine, 27 zeros at the end not
        return min(1.0, max(0.0, (span - low) / low))
    if "#" in unit:
        if where == "line" and span < 200:
            return 0.0  # a banner of # on a line of its own
        low = 40 if structured else 12
        return min(1.0, max(0.0, (span - low) / low))
    if reps < 6:
        return 0.0
    if structured and where != "word" and not (unit == "," and span >= 8):
        return min(1.0, max(0.0, (span - 5) / 15))
    return min(1.0, max(0.0, (span - 3) / 8))  # in prose, or glued inside a word: ab,,,,,,cd


END_LOOP_REPEATS = 6  # one word or phrase 6 times back to back, up to the very end
# tokens in the unit that repeats (`is the right answer`; `found de lageión de la queetyá haciendo
# inc Seces` is 9)
LOOP_PERIODS = tuple(range(1, 13))
SENTENCE_PERIOD = 6  # longer units that end a sentence are sentences said again, not a loop
PHRASE_LOOP_REPEATS = 4  # times a unit of four tokens or more must come back to back


def _least_run(period: int) -> int:
    """The fewest tokens equal to the one `period` back that a run `_token_run` scores needs:
    8 tokens in all, or (units of four or more) PHRASE_LOOP_REPEATS units; END_LOOP_REPEATS
    units when the run reaches the end."""
    at_end = (END_LOOP_REPEATS - 1) * period
    if period > 3:
        return min(at_end, (PHRASE_LOOP_REPEATS - 1) * period)
    return min(at_end, 8 - period)


def _token_run(
    best: tuple[float, str], toks: list[str], end: int, period: int, run: int, finished: bool
) -> tuple[float, str]:
    """Score `run` repeats of a `period`-token unit ending at token `end`. A loop that reaches the
    end of the answer never stopped (the token limit cut it): fewer repeats suffice there."""
    total = run + period
    # (a finished sentence, "yes, yes, yes.", stopped by itself: no shortcut)
    at_end = end == len(toks) and total // period >= END_LOOP_REPEATS and not finished
    if (total < 8 or period > 3 and total // period < PHRASE_LOOP_REPEATS) and not at_end:
        return best  # (a phrase of four words or more said twice is a refrain, not a loop)
    unit = toks[end - period : end]
    if total < 40 and all(c in _BENIGN_UNIT for tok in unit for c in tok):
        return best  # | --- | --- | --- |
    wordy = all(EDGE.sub("", t).isalpha() for t in unit)
    score = min(1.0, max(0.0, (total - 6) / 10)) if wordy else min(1.0, (total - 4) / 8)
    if at_end:
        score = max(score, min(1.0, 0.5 + 0.1 * (total // period - END_LOOP_REPEATS)))
    if score > best[0]:
        shown = " ".join(unit)
        shown = shown if len(shown) <= 16 else shown[:16] + "…"
        best = (score, f"{shown!r} repeated {total // period} times (token {end - total} on)")
    return best


def diversity_signal(words: list[Word], text: str) -> tuple[float, str]:
    """Windows of 30 tokens with at most 3 distinct tokens (gen,gen,ß,gen ...)."""
    toks = TOKEN.findall(text)
    if len(toks) < 30:
        return 0.0, ""
    for i in range(0, len(toks) - 29, 10):
        window = toks[i : i + 30]
        distinct = len(set(window))
        if distinct <= 3 and not all(all(c in _BENIGN_UNIT for c in w) for w in window):
            return 0.8, f"{distinct} distinct tokens in 30 (token {i} on)"
    return 0.0, ""


SUFFIXES = frozenset(  # English endings a word takes: rest+s, rest+ful (not fragments)
    "s es ed d ing er ers ly al ally ness ment ments ion ions able ful less ish est".split()
)


def fragment_signal(t: Text) -> tuple[float, str]:
    """A few fragments recombined: the commonest word also glued inside many others
    (Mut, Mutmutyond, MutLeave, Ledmut). A fluent loop repeats whole words, not this."""
    # identifiers embed each other (request, send_request, RequestError): code lines stay out
    # identifiers embed each other (request, send_request, RequestError): code lines stay out
    keys = [
        w.key
        for prev, w in zip([None, *t.words], t.words, strict=False)
        if w.letters >= 2
        and not w.code
        and "_" not in w.key
        and "." not in w.key
        and not (prev and prev.key[:1].isdigit())  # units: +20 dBm, -1.5 dB, 9 dBi
    ]
    if len(keys) < 12:
        return 0.0, ""
    counts: dict[str, int] = {}
    for k in keys:
        if k not in FUNCTION_WORDS:
            counts[k] = counts.get(k, 0) + 1
    if not counts:
        return 0.0, ""
    top = max(counts, key=lambda k: counts[k])
    if counts[top] < 4 or counts[top] < 0.12 * len(keys) or len(top) < 2:
        return 0.0, ""
    glued = sum(
        1
        for k in keys
        if k != top
        and top in k
        and not (k.startswith(top) and k[len(top) :].lstrip("'’") in SUFFIXES)
    )
    if glued < 3 or glued < 0.1 * len(keys):
        return 0.0, ""
    score = min(1.0, 0.3 + glued / len(keys) * 2)
    return score, (
        f"{top!r} appears {counts[top]} times alone and {glued} times glued inside other words"
    )


def chars_signal(text: str) -> list[Signal]:
    """Replacement characters, control characters and mojibake."""
    out = []
    n = max(1, len(text))
    fffd = text.count("\ufffd")
    if fffd:
        # one alone is a sampled byte token that formed no character (healthy small models at
        # temperature 0.8 do it); more, or one in a short text, is broken decoding
        score = min(1.0, 0.35 + 0.25 * (fffd - 1) + 20 * fffd / n)
        if fffd == 1:
            score = min(score, 0.45)
        out.append(Signal("replacement", score, f"{fffd} replacement characters (U+FFFD)"))
    ctrl = len(_CONTROL.findall(text))
    if ctrl:
        out.append(Signal("control", min(1.0, 0.3 * ctrl), f"{ctrl} control or private-use chars"))
    moji = len(_MOJIBAKE.findall(text))
    badness = mojibake_badness(text) if _LATIN1_RANGE.search(text) else 0
    if badness < 3 and not moji:
        badness = 0  # one odd pair twice (IPA's [œ̃] reads as 'œ]' to ftfy) is not mojibake
    if moji >= 2 or badness:
        out.append(
            Signal(
                "mojibake",
                min(1.0, max(0.25 * moji, 0.5 + badness / 20 if badness else 0.0)),
                f"{moji} mojibake sequences (UTF-8 read as Latin-1 or cp1252, e.g. 'Ã©'); "
                f"ftfy's badness {badness}",
            )
        )
    pieces = sum(len(r.findall(text)) for r in _DECODER)
    if pieces >= 3 or (pieces == 2 and len(text) < 200):  # two in a short reply: no accident
        out.append(
            Signal(
                "decoder",
                min(1.0, 0.4 + 0.1 * pieces),
                f"{pieces} tokenizer pieces left undecoded (▁ or Ġ for a space, Ċ for a newline, "
                "<0x0A> bytes, \\u escapes without their backslash)",
            )
        )
    specials = len(_SPECIAL.findall(text))
    if specials >= 3:
        out.append(
            Signal(
                "special",
                min(1.0, 0.2 * specials),
                f"{specials} special-token markers such as <pad> or <|endoftext|>",
            )
        )
    return out


def repetition_signal(text: str) -> tuple[float, str]:
    """Compression ratio: loops of whole sentences. Never enough to flag a text on its own."""
    raw = text.encode("utf-8", "surrogatepass")  # servers may send lone surrogates
    if len(raw) < 300:
        return 0.0, ""
    ratio = len(zlib.compress(raw, 6)) / len(raw)
    if ratio >= 0.2:
        return 0.0, ""
    return min(0.3, (0.2 - ratio) * 2.5), f"repetitive (compresses to {ratio:.0%})"
