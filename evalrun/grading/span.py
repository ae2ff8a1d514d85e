"""Reading a chat answer the way a careful grader does: where the answer is, and what it rejects.

Chat models rarely reply with the bare answer. They work step by step and then state it, box it
(`\\boxed{}`, the Qwen habit), bold it, open with "Sure!", or explain why the other options are
wrong. The helpers here turn that into something graders can judge:

- `plain_text` removes LaTeX and markdown markup (`\\frac{3}{4}` -> 3/4, `10{,}000` -> 10,000,
  `H_2O` -> H2O, `**x**` -> x) without touching the words;
- `answer_spans` lists the places an answer is stated, most explicit first: the last `\\boxed{}`
  (braces balanced), the sentence after an answer marker ("the answer is", "Answer:", "Final
  answer:", "Output:"), short bold spans, the clause after a closing "so"/"therefore";
- `negated_spans` finds text named only to be rejected ("not X", "isn't X", "rather than X", and
  не / pas / nicht / 不 in Russian, French, German and Chinese), so "It is not 8; it is 9" does
  not credit 8;
- `is_hedge` tells "8 or 9" (two candidates offered as the answer) from an answer.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# ---------------------------------------------------------------- LaTeX and markdown

_LATEX_CMD_ARG = re.compile(
    r"\\(?:text|mathrm|mathbf|textbf|mathit|operatorname|mbox)\s*\{([^{}]*)\}"
)
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_SYMBOLS = {
    r"\times": "×",
    r"\cdot": "·",
    r"\div": "÷",
    r"\pm": "±",
    r"\approx": "≈",
    r"\neq": "≠",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\le": "≤",
    r"\ge": "≥",
    r"\%": "%",
    r"\$": "$",
    r"\circ": "°",
    r"\degree": "°",
    r"\rightarrow": "→",
    r"\to": "→",
    r"\ldots": "…",
    r"\dots": "…",
    r"\cdots": "…",
}
_LATEX_SPACES = re.compile(r"\\[,;:! ]|\\quad|\\qquad|~")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|boxed|sqrt)\b")
_SUBSCRIPT = re.compile(r"_\{([^{}]*)\}|_([A-Za-z0-9])")
_SUPERSCRIPT_DEGREE = re.compile(r"\^\{?\\circ\}?")
_MATH_DELIMS = re.compile(r"\\\[|\\\]|\\\(|\\\)|\$\$?")
_MARKDOWN = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`+")
_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s+")
_QUOTE_LINE = re.compile(r"(?m)^\s{0,3}>\s?")
_STRUCK = re.compile(r"~~[^~\n]+~~")  # "~~Toronto~~ Ottawa": struck out, taken back
_FENCE_INFO = re.compile(r"(?m)^([^\S\n]*)```[\w+.-]+[ \t]*\n")


_POWERS = str.maketrans({"²": "^2", "³": "^3", "¹": "^1", "⁰": "^0"})
_VULGAR_AFTER_DIGIT = re.compile(r"(?<=\d)(?=[\u00bc-\u00be\u2150-\u215e])")


@lru_cache(maxsize=64)  # the graders of one answer ask for it ~5 times on the core suite
def plain_text(text: str) -> str:
    """`text` without LaTeX and markdown markup: what a reader sees on a rendered page."""
    # NFKC would turn 14² into 142 and cm² into cm2: keep powers readable first
    # "5¾" is five and three quarters: NFKC alone would make it 53⁄4
    out = _VULGAR_AFTER_DIGIT.sub(" ", text.translate(_POWERS))
    out = unicodedata.normalize("NFKC", out).replace("\u2044", "/")
    out = _STRUCK.sub(" ", out)  # before "~" is read as LaTeX's non-breaking space
    out = _SUPERSCRIPT_DEGREE.sub("°", out)
    for _ in range(3):  # nested \frac{\text{a}}{b}
        out = _LATEX_CMD_ARG.sub(r"\1", out)
        out = _LATEX_FRAC.sub(r"\1/\2", out)
    for cmd, sym in _LATEX_SYMBOLS.items():
        out = re.sub(re.escape(cmd) + r"(?![A-Za-z])", sym, out)
    out = out.replace("{,}", ",").replace("{.}", ".")
    out = _LATEX_SPACES.sub(" ", out)
    out = _LATEX_DROP.sub("", out)
    out = _SUBSCRIPT.sub(lambda m: m.group(1) or m.group(2), out)
    out = _MATH_DELIMS.sub("", out)
    out = _HEADING.sub("", out)
    out = _QUOTE_LINE.sub("", out)
    out = _FENCE_INFO.sub(r"\1```\n", out)  # "```text" opens a block: "text" is not in it
    out = _MARKDOWN.sub("", out)
    # Braces left over from LaTeX grouping ({10}) carry no meaning for a reader; JSON is never
    # read through plain_text.
    return re.sub(r"(?<![\w\"])\{([^{}\n]*)\}", r"\1", out)


# ---------------------------------------------------------------- answer spans


def boxed(text: str) -> list[str]:
    """The contents of every `\\boxed{...}`, braces balanced (`\\boxed{\\frac{3}{4}}`)."""
    out = []
    for m in re.finditer(r"\\boxed\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


_MARKER = re.compile(
    r"(?:\b(?:final\s+answer|the\s+answer|my\s+answer|answer|the\s+result|result|the\s+output|"
    r"output|total|the\s+correct\s+(?:answer|option|choice))\s*(?:is|would\s+be|will\s+be|:|=)"
    r"|\bit\s+(?:prints|outputs|returns)|\bprints?\s*:|####)"
    r"[\s:*]*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[^\d\s][.!?])\s|(?<=\d[.!?])\s+(?=[A-Z\n])|\n|[;。！？]")
_CONCLUDE = re.compile(r"(?:^|[,;:.]\s*|\s)(?:so|therefore|thus|hence)\b[\s,:]*", re.IGNORECASE)
# "..., which is 155 minutes" restates a number; after a name it describes the name instead
# ("Portuguese, which is closely related to Spanish"), so only numbers read it.
_WHICH_IS = re.compile(r"(?:^|[,;:.]\s*|\s)which\s+(?:is|gives|makes)\b[\s,:]*", re.IGNORECASE)
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*|__([^_\n]{1,80})__")


def sentence_at(text: str, start: int) -> str:
    """From `start` to the end of its sentence (or line)."""
    m = _SENTENCE_END.search(text, start)
    return text[start : m.start() if m else len(text)].strip()


def marked(text: str) -> list[str]:
    """The sentences that follow an answer marker, last marker first."""
    spans = [sentence_at(text, m.end()) for m in _MARKER.finditer(text)]
    return [s for s in reversed(spans) if s]


def concluded(text: str, *, which_is: bool = False) -> list[str]:
    """The clause after a closing "so"/"therefore" (and, with `which_is`, "which is"), last
    first."""
    marks = list(_CONCLUDE.finditer(text))
    if which_is:
        # "..., which is 120 in total. After giving away 37, he has 83": a "which is" that later
        # sentences with numbers go past is a step, not the conclusion
        steps = [
            m
            for m in _WHICH_IS.finditer(text)
            if not re.search(r"\d", text[m.end() + len(sentence_at(text, m.end())) :])
        ]
        marks = sorted(marks + steps, key=lambda m: m.start())
    spans = [sentence_at(text, m.end()) for m in marks]
    return [s for s in reversed(spans) if s]


def bold_spans(text: str) -> list[str]:
    """Short bold spans, in order."""
    return [(m.group(1) or m.group(2)).strip() for m in _BOLD.finditer(text)]


_EXPLAINED = re.compile(r",?\s+(?:since|because|as|given that)\s|\s[—–-]\s|:\s", re.IGNORECASE)


_WORKING_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+\S")


def after_working_list(text: str) -> str | None:
    """The answer alone on the last line, after a list of the working ("1. Ravi first\n2. then
    Jo\n\nJo"): a short last paragraph of one line that is no list line, after a paragraph
    of two list lines or more; None when the text has no such shape."""
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if len(paras) < 2:
        return None
    last = paras[-1].strip()
    if "\n" in last or _WORKING_LINE.match(last) or len(last.split()) > 6:
        return None
    lines = [ln for ln in paras[-2].split("\n") if ln.strip()]
    return last if sum(bool(_WORKING_LINE.match(ln)) for ln in lines) >= 2 else None


def answer_spans(text: str) -> list[tuple[str, str]]:
    """(how, span) for each place the text states an answer, most explicit first.

    how is boxed | marked | bold | concluded | first | whole. A short opening (six words at most
    before any "since"/"because"/dash explanation: a reply that opens with its answer) comes last
    but one; the whole text closes the list.
    """
    out: list[tuple[str, str]] = [("boxed", b) for b in reversed(boxed(text))]
    last = after_working_list(text)
    out += [("marked", last)] if last else []
    out += [("marked", s) for s in marked(text)]
    out += [("bold", b) for b in bold_spans(text)]
    out += [("concluded", s) for s in concluded(text)]
    first = _EXPLAINED.split(sentence_at(text.strip(), 0), maxsplit=1)[0]
    if first.strip() and len(first.split()) <= 6:
        out.append(("first", first))
    out.append(("whole", text))
    return out


# ---------------------------------------------------------------- negation and hedges

# Words after which a named option is being rejected, per language. "n'" and "не" attach to the
# verb ("n'ouvre", "не спит"), so the option may follow them directly or after one word.
NEGATORS = {
    "not",
    "no",
    "never",
    "isn't",
    "isnt",
    "aren't",
    "wasn't",
    "don't",
    "doesn't",
    "didn't",
    "won't",
    "cannot",
    "can't",
    "neither",
    "nor",
    "instead of",
    "rather than",
    "не",
    "нет",
    "ни",
    "ne",
    "n'",
    "pas",
    "jamais",
    "nicht",
    "kein",
    "keine",
    "keinen",
    "nie",
}
_NEG_WORD = re.compile(
    r"(?<![\w'])(?:"
    + "|".join(re.escape(w) for w in sorted(NEGATORS, key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
_CJK_NEG = re.compile(r"[不没未非別别]")
_DEED_PREP = {"in", "on", "at", "by", "from", "for", "as"}
_ALTHOUGH = re.compile(r"\b(?:although|though|while|whereas|even\s+though)\b", re.IGNORECASE)


# what people believe or are told, as against what is: "Many assume Ottawa, but ...",
# "Einstein is often credited, but ...", "Diamond was long thought the hardest, but ..."
_BELIEF = re.compile(
    r"\b(?:(?:many|most|some)\s+(?:people\s+)?|people\s+(?:often\s+)?)"
    r"(?:assume|think|believe|say|guess|expect|claim)\b"
    r"|\b(?:often|long|once|commonly|widely|popularly|wrongly|mistakenly)\s+(?:\w+\s+)?"
    r"(?:credited|said|named|assumed|thought|believed|confused|mistaken|cited|considered|called)\b"
    r"|\bmisattributed\b",
    re.IGNORECASE,
)
# "..., but Montreal is the capital": the turn to what is; "but it is" names the same one again
_BUT_ANOTHER = re.compile(
    r"(?:,\s*|\s)(?:but|however|yet)\s+(?!(?:it|he|she|they|this|that|its|his|her)\b)\w",
    re.IGNORECASE,
)


# a belief named as mistaken, which a semicolon turns from as well as a "but": "Mars is often
# mistaken for the Red Planet; that title belongs to Jupiter"
_MISTAKEN = re.compile(
    r"\b(?:mistaken(?:ly)?|confused|misattributed|wrongly|by mistake|in error|erroneously|"
    r"(?:many|most|some)\s+(?:people\s+)?"
    r"(?:assume|think|believe))\b",
    re.IGNORECASE,
)
# ("...; it is really Venus": a pronoun that goes on to what really is turns from it too)
_SEMICOLON_ANOTHER = re.compile(
    r";\s*(?!(?:it|he|she|they|its|his|her)\b(?!\s+(?:is|was)\s+(?:really|actually|in fact)\b)"
    r"|(?:this|that)\s+(?:is|was)\b)\w",
    re.IGNORECASE,
)


def _believed_then_turned(text: str, start: int, clause: str) -> bool:
    """Whether the text at `start` is named as a belief the same sentence then turns from."""
    sentence = re.split(r"[.!?\n]", text[start:])[0]
    turn = _BUT_ANOTHER.search(sentence.split(";")[0])
    if turn is not None and _BELIEF.search(clause + " " + sentence[: turn.start()]):
        return True
    semi = _SEMICOLON_ANOTHER.search(sentence)
    return semi is not None and bool(_MISTAKEN.search(clause + " " + sentence[: semi.start()]))


def is_believed(text: str, start: int) -> bool:
    """Whether the text at `start` is named as a belief its sentence turns from."""
    before = text[max(0, start - 40) : start]
    return _believed_then_turned(text, start, re.split(r"[.;!?\n:,—–]|\s-\s", before)[-1])


def is_negated(text: str, start: int) -> bool:
    """Whether the text at `start` is named only to be rejected.

    True when a negator ends within the two words (or, for Chinese, two characters) before
    `start`, in the same clause, when the clause opens with "although"/"while" and the
    sentence goes on to a "but"/a main clause naming something else, or when the clause names
    it as a belief ("many assume", "often credited", "long thought") that a "but" turns from.
    """
    before = text[max(0, start - 40) : start]
    clause = re.split(r"[.;!?\n:,—–]|\s-\s", before)[-1]
    if _believed_then_turned(text, start, clause):
        return True
    if _CJK_NEG.search(before[-3:]):
        return True
    words = re.findall(r"[\w']+|«|“|\"|„", clause)
    tail = " ".join(w for w in words[-3:] if w not in ("«", "“", '"', "„"))
    if re.search(r"n'$", before.rstrip()) or re.search(r"\bn'\w*\s*$", before):
        return True
    for m in _NEG_WORD.finditer(tail):
        # the negator must be one of the last two words, or a verb and its preposition
        # must follow it ("didn't fall in 1989"; "didn't fall until 1989" affirms)
        after = tail[m.end() :].split()
        if len(after) <= 1 or (len(after) == 2 and after[1].casefold() in _DEED_PREP):
            return True
    return bool(_ALTHOUGH.search(clause)) and not re.search(r"\bbut\b", clause, re.IGNORECASE)


# "14 is wrong", "13, which is wrong": what the reply says of a candidate it calls wrong
CALLED_WRONG = r"(?:is|was)\s+(?:wrong|incorrect|false|a mistake|mistaken)\b"
_DENIED_AFTER = re.compile(
    r"\s*(?:(?:is|was)\s+not\b|(?:isn't|wasn't|isn’t)(?!\w)"
    rf"|(?:,?\s*which\s+)?{CALLED_WRONG}"
    # "Austen didn't write it — Dickens did": the subject of a denied deed ("didn't just" adds)
    r"|(?:did|does)\s+not\b(?!\s+(?:just|only|merely))"
    r"|(?:didn['’]t|doesn['’]t)(?!\w)(?!\s+(?:just|only|merely)))",
    re.IGNORECASE,
)


def is_denied(text: str, end: int) -> bool:
    """Whether what ends at `end` is the subject of a denial: "1 is not prime", "Toronto isn't
    the capital". (Plural "4 are not broken" states a count, so only "is/was not" counts.)"""
    return bool(_DENIED_AFTER.match(text, end))


_HEDGE_JOIN = re.compile(
    r"^\s*,?\s*(?:or|and/or|/|or\s+possibly|or\s+maybe|or\s+perhaps)\s+(?:[\w'’.-]+\s+){0,2}$|^\s*/\s*$",
    re.IGNORECASE,
)


def is_hedge(text: str, first_end: int, second_start: int) -> bool:
    """Whether two candidates at these positions are offered together ("8 or 9", "Ottawa/Toronto")."""
    return bool(_HEDGE_JOIN.match(text[first_end:second_start]))


# ---------------------------------------------------------------- lead-ins

# "Sure! ...", "Here it is: ...", and the same in the suite's other languages ("Bien sûr !",
# "Claro:", "Natürlich:", "Конечно!", "好的：", the CJK ones needing no space after them)
_LEAD_IN = re.compile(
    r"^\s*(?:(?:sure|okay|ok|certainly|of course|here(?: it is| you go| they are)?|absolutely|"
    r"bien sûr|d'accord|voici|voilà|claro|por supuesto|natürlich|gerne|klar|конечно|好的|当然)"
    r"\b[^\n]{0,60}?(?:[:!.]|\s[—–])|[^\n:]{0,60}:)\s+"
    r"|^\s*[^\n:!。]{0,12}[\u2e80-\u9fff][:!]\s*",
    re.IGNORECASE,
)


def without_lead_in(text: str) -> list[str]:
    """The reply as written and, when it opens with a short lead-in ("Sure! Here it is:",
    "Repeat exactly:"), the reply without it; quotes around what is left are dropped."""
    out = [text.strip()]
    m = _LEAD_IN.match(text)
    if m and len(m.group(0).split()) <= 8 and text[m.end() :].strip():
        out.append(text[m.end() :].strip())
        again = _LEAD_IN.match(out[-1])  # "Sure! Here it is:" is two lead-ins
        if again and len(again.group(0).split()) <= 8 and out[-1][again.end() :].strip():
            out.append(out[-1][again.end() :].strip())
    return out


# A chat model's closing offer after the answer, a sentence or a paragraph of its own: "Let me
# know if you'd like anything else!", "Is there anything else I can copy?", "Hope this helps!",
# or a note in brackets on a line of its own ("(Repeated exactly.)")
_CLOSING_OFFER = re.compile(
    r"(?:(?<=[.!?…])[^\S\n]+|\n\s*)(?:let me know\b|is there anything else\b|anything else\b[^\n]*\?|"
    r"would you like\b[^\n]*\?|do you want\b[^\n]*\?|(?:i )?hope (?:this|that|it) helps\b|"
    r"feel free to\b|happy to help\b)[^\n]*$"
    # "...lake.\n\n(Repeated exactly.)": a note in brackets on a line of its own
    r"|\n\s*\([^()\n]{2,120}\)[^\S\n]*$",
    re.IGNORECASE,
)


def without_closing_offer(text: str) -> str | None:
    """The reply without a closing offer of more help after it ("... dawn.\n\nLet me know if
    you'd like anything else!"), or None when it ends without one."""
    m = _CLOSING_OFFER.search(text.rstrip())
    return text[: m.start()].strip() if m and text[: m.start()].strip() else None


# ---------------------------------------------------------------- retractions

# Where a reply takes back what it just said: "8? No — 9.", "Ottawa... actually, Toronto.",
# "IndexError\n\nActually, on second thought, it prints 3", "sang... wait, no — sings",
# "Correction: ...". The answer is what follows the last one. A bare "No" only retracts after a
# question mark, an ellipsis or a dash ("Saturn? No — Jupiter"), so "No, it does not" as a
# yes/no verdict is left alone; "actually" only after a pause, not inside a sentence ("is
# actually the capital").
_PAUSE = r"(?:\?|\.\.\.|…|—|–|(?<=\s)-)"
_STOP = r"(?:[.!]\s|\n)"
_RETRACTION = re.compile(
    rf"{_PAUSE}\s*(?:no|nope|нет|nein|non)(?:[\s,]+no)*\s*[,.!:—–-]+(?:[\s,]*(?:sorry|actually)\b[\s,.!—–-]*)*"
    # "12, no, 10": a number taken back between commas
    r"|(?<=\d),\s*no\s*[,:—–-]+\s*"
    rf"|(?:{_PAUSE}|{_STOP})\s*(?:(?:oh|ah|uh|um)\s*,?\s*)?(?:no\s+)?wait\s*[,!:—–-]+(?:[\s,]*(?:no|sorry|actually)\b[\s,.!—–-]*)*"
    # "A B C D E F G — oh, eight: A B C D E F G H": a restart after a pause, up to its colon
    rf"|{_PAUSE}\s*(?:oh|ah)\s*,[^\n.!?:]{{1,30}}:\s*"
    # "Yes. Eh, no — ...": a hesitation, then the "no" that takes the answer back
    # (the "no" stays: a yes/no item's verdict)
    rf"|(?:{_PAUSE}|{_STOP}|,\s)\s*(?:eh|er|uh|um|oh|ah)\s*[,.!:—–-]*\s*(?=no\b\s*[,.!:—–-])"
    # "Yes. Actually no — ...": the "no" after "actually" stays, a yes/no item's verdict;
    # "100 °C... more precisely 99 °C": the more precise value replaces the one before it
    rf"|(?:{_PAUSE}|{_STOP}|[,;:]\s)\s*(?:actually|en fait|eigentlich|вернее|точнее|"
    r"more (?:precisely|exactly)|to be (?:more )?(?:precise|exact))(?!\w)"
    r"(?:\s*,?\s*on second thought\b)?"
    rf"|(?:{_PAUSE}|{_STOP}|,\s)\s*(?:hmm+|sorry)\s*[,.!:—–-]*\s*(?:no\b\s*[,.!:—–-]+)?"
    r"|\b(?:on second thoughts?|second thoughts|correction|scratch that|strike that|let me recheck|"
    r"i mean|i meant|i misspoke|i was wrong|that's not right|that is not right|apologies|oops|"
    r"hold on|hang on|i stand corrected|i take (?:that|it) back|(?:up)?on reflection|rethinking|"
    r"i mis(?:counted|read|calculated|judged)|(?:fixed|corrected|revised|amended)(?=\s*:)|"
    r"let me (?:write|spell|list|give) (?:it|them|that|those|these) (?:out|again|in full|fully)|"
    r"whoops|just kidding|on (?:further |closer )?(?:reflection|inspection)|re-?reading (?:the|that|this)"
    r"(?: question)?|checking again|let me correct (?:that|myself|this)|update(?=:)|edit(?=:)|"
    r"my mistake|my bad|make that|or rather|let me (?:double-?check|re-?\w+)(?: that| this| it)?|"
    # "let me add again", "let me work it out again": the reply starts over
    r"let me (?:add|count|compute|calculate|work|do|try|check|go)\w*(?: \w+){0,2} (?:again|over)|"
    r"correcting (?:myself|that|this)|entschuldigung|pardon|то есть|извините)\b"
    r"|\b(?:нет|nein|non),?\s+(?:скорее|eher|plutôt)\b",
    re.IGNORECASE,
)


# A clause that names the tempting answer only to set it aside: "People often say Rio, but ...",
# "It might seem like yes, but ...", "Many guess Toronto, but ...".
_DISTRACTOR_LEAD = re.compile(
    # (an aside in brackets after the answer, "Mars (Venus is often confused ..., but ...)", is
    # no lead: the lead does not open a bracket)
    r"(?:^|(?<=[.!?\n])\s*)[^.!?\n(]*?\b(?:often|commonly|many|most people|some people|some say|"
    # "Some textbooks count six, but ...": what some sources teach, as against the asked model
    r"some (?:\w+ )?(?:countries|schools|textbooks|books|sources|models|scholars|experts|"
    r"traditions|cultures|regions|lists|maps|systems|accounts|authors|references)|"
    r"tempting|might (?:seem|think|say|guess)|may (?:seem|think)|misconception|guess|assume|"
    r"people (?:say|think|believe|expect)|some (?:think|believe)|others (?:say|think)|"
    r"mistake|confuse[ds]?|easy to|looks like|at first glance|you might)\b[^.!?\n(]*?"
    r"(?:[,;]?\s+|[.!;]\s*)but\b[\s,]*"  # "Some say seven.\nBut the correct number is six."
    # "Not FIG 207 (that's the paint cabinet) — it's PLUM 318.", "Not 7, but 8": a named thing
    # (a number or a capitalised name) set aside before the claim
    r"|(?:^|(?<=[.!?\n])\s*)not\s+(?=(?-i:[^.!?\n—–;:,]*?(?:\d|\b[A-Z])))(?-i:[^.!?\n—–;]{1,80}?)"
    r"\s*(?:[—–;:]|,?\s*but\b)\s*",
    re.IGNORECASE,
)


# A reply that opens with a bare guess put as a question and goes on to answer: "No? Well,
# yes: every square is a rectangle.", "Leo? Sam is the shortest." The guess is not the claim.
_OPENING_GUESS = re.compile(r"^[^\w\n]*[\w'’$€£.,-]{1,24}\?[^\S\n]+(?=\S)")


def _glossed(before: str, marker: str, after: str) -> bool:
    """Whether "то есть" ("that is") glosses a Cyrillic answer in a few Latin-script words
    ("Париж, то есть Paris."): a restatement in another script, not a correction."""
    if marker.strip().casefold() != "то есть":
        return False
    words = re.findall(r"[^\W\d_]+", after)
    cyrillic = re.compile(r"[\u0400-\u04ff]")
    return (
        bool(cyrillic.search(before))
        and 0 < len(words) <= 3
        and not any(cyrillic.search(w) for w in words)
    )


def final_claim(text: str) -> tuple[str, bool]:
    """The part of `text` after its last retraction, and whether the reply was cut.

    "7? No — it's 8." reads "it's 8."; "People often say Rio, but Brazil's capital is Brasília."
    reads from "Brazil's". A reply without a retraction or a named distractor, or whose
    retraction is followed by no words, reads whole.
    """
    dropped = _DISTRACTOR_LEAD.sub("", text)
    if dropped != text and re.search(r"\w", dropped):
        tail, _ = final_claim(dropped)
        return tail, True
    last = None
    for m in _RETRACTION.finditer(text):
        if (
            m.end() > 0
            and re.search(r"\w", text[m.end() :])
            and re.search(r"\w", text[: m.start()])
            and not _glossed(text[: m.start()], m.group(0), text[m.end() :])
        ):
            last = m
    if last is None:
        guess = _OPENING_GUESS.match(text)
        if guess and re.search(r"\w", text[guess.end() :]):
            return text[guess.end() :].lstrip(" \t,.:;!—–-"), True
        return text, False
    return text[last.end() :].lstrip(" \t\n,.:;!—–-"), True


# ---------------------------------------------------------------- alternatives offered together

# "X or Y" offered as the answer, in the suite's languages: or, или / либо, ou / soit, oder /
# entweder, o, 或 / 或者. "either"/"либо"/"soit"/"entweder" may open the first candidate.
_DISJUNCTION = re.compile(r"(?<![\w'])(?:or|или|либо|ou|oder|o)(?![\w'])|或者|或", re.IGNORECASE)
_EITHER = re.compile(r"^\W*(?:either|либо|soit|entweder|o bien)\s+", re.IGNORECASE)
# "or" that does not offer another candidate: "3 or more", "or rather" (a correction), "or so".
_NOT_AN_ALTERNATIVE = re.compile(
    r"\s*(?:so|more|less|fewer|greater|above|below|later|earlier|higher|lower|not|rather|else|"
    r"otherwise|equivalently|i\.e\.|simply|just|mehr|weniger|plus|moins|больше|меньше|более|менее)\b",
    re.IGNORECASE,
)
_WHETHER = re.compile(r"\b(?:whether|ob|si|ли)\b|\bне\s+важно\b|无论|不管", re.IGNORECASE)
_CLAUSE_END = re.compile(r"(?<!\d)[.!?](?!\d)|[\n;。！？]|:\s|\s[—–]\s")
_LIST_MARKER = re.compile(r"[^\S\n]*(?:[-*•+]|\d+[.)])[^\S\n]+")
MAX_CANDIDATE_WORDS = 10


_QUANTITY = re.compile(r"(-?\d[\d.,]*)\s*(°\s*[A-Za-z]+|[A-Za-z%°]+)\W*$")


def _converted(first: str, second: str) -> bool:
    """Whether "X or Y" gives one quantity in two units ("0 °C or 32 °F", "3 h or 180
    minutes"): another number in another unit is the same answer restated, not a second one."""
    a, b = _QUANTITY.search(first), _QUANTITY.search(second.strip())
    return bool(
        a
        and b
        and a.group(1) != b.group(1)
        and a.group(2).replace(" ", "").casefold() != b.group(2).replace(" ", "").casefold()
    )


# ", or it prints 3", ", or maybe 3": another outcome offered after a comma, not a restatement
_OTHER_OUTPUT = re.compile(
    r"\s*(?:maybe\s+|perhaps\s+|possibly\s+)(?:it\s+)?|\s*it\s+(?:prints|outputs|returns|raises|"
    r"throws|gives|logs)\b",
    re.IGNORECASE,
)


def offered_alternatives(text: str) -> list[tuple[str, str, str, str]]:
    """(first, second, reply with only the first, reply with only the second) for each place
    `text` offers two candidates as its answer: "Wien oder Graz", "Either 0 °C or 4 °C, it
    depends", "Либо «…», либо «…»".

    Each candidate is its clause on its side of the disjunction, up to MAX_CANDIDATE_WORDS words;
    the rest of the reply is kept in both readings, so "add milk or sugar" in a recipe that
    names the tea elsewhere reads the same both ways. Not offered as alternatives: a disjunction
    inside brackets ("12 (or 12.0)"), after a comma in a restatement ("155 minutes, or 2 h 35"),
    after a negation ("not Milan or Turin"), one quantity in two units ("0 °C or 32 °F"),
    under "whether" ("whether sand or nails"), and "or more"/"or rather"/"or so".
    """
    out = []
    for m in _DISJUNCTION.finditer(text):
        before = text[: m.start()]
        if before.count("(") > before.count(")") or before.count("[") > before.count("]"):
            continue
        start = max((e.end() for e in _CLAUSE_END.finditer(before)), default=0)
        first = before[start:]
        cut = m.start()
        # "21 — or 21.5", "83... or 73", "0.75... or 4/3": the candidate before a dash or a
        # trailing-off, when the one after it is a value (a fraction is one) rather than a
        # computation
        tail = re.search(r"[\s—–.…]*$", before)
        if (
            not re.search(r"\w", first)
            and tail
            and re.fullmatch(r"\s*(?:[—–]|\.\.\.|…)\s*", tail.group())
            and not re.search(r"[×*+=−]|(?<!\d)/|/(?!\d)|\s-\s", text[m.end() : m.end() + 30])
        ):
            cut = tail.start()
            start = max((e.end() for e in _CLAUSE_END.finditer(before[:cut])), default=0)
            first = before[start:cut]
        end_m = _CLAUSE_END.search(text, m.end())
        end = end_m.start() if end_m else len(text)
        second = text[m.end() : end]
        after = text[m.end() :]
        either = _EITHER.match(first)
        if (
            not re.search(r"\w", first)
            or not re.search(r"\w", second)
            or _NOT_AN_ALTERNATIVE.match(after)
            or after[:1] == ","
            or _WHETHER.search(first)
            or (first.rstrip().endswith(",") and not either and not _OTHER_OUTPUT.match(after))
        ):
            continue
        word = re.search(r"[\w'’-]+\W*$", first)
        if word and is_negated(first, word.start()) or _converted(first, second):
            continue
        marker = _LIST_MARKER.match(text, start)  # "3. Add milk or sugar": the "3." is no candidate
        lead = start + either.end() if either else marker.end() if marker else start
        if max(len(text[lead:cut].split()), len(second.split())) > MAX_CANDIDATE_WORDS:
            continue
        only_first = text[:lead] + text[lead:cut].rstrip(" ,") + text[end:]
        only_second = text[:lead] + second.strip() + text[end:]
        out.append((text[lead:cut].strip(" ,"), second.strip(" ,"), only_first, only_second))
    return out + _conceded(text)


# "It's around 0 °C, though some sources say 4 °C.": after its answer, the reply grants another
# value to "some sources" without setting it aside, so it offers both. (Set aside: "some
# sources wrongly say 4 °C", "... say 4 °C, which is a myth".)
_CONCEDED = re.compile(
    r",?[^\S\n]{1,3}(?:though|although|but|even though|while)[^\S\n]{1,3}"
    r"(?:some|others?|many|a few|certain)\b[^\S\n]{0,3}(?P<gap>[\w'’ ]{0,40}?)\b"
    r"(?:say|says|said|claim|claims|give|gives|list|lists|suggest|suggests|put it at|think|"
    r"argue|argues|believe|believes|insist|insists)"
    r"(?:[^\S\n]{1,3}(?:it\s(?:is|was)|that|it['’]s))?[^\S\n]{1,3}",
    re.IGNORECASE,
)
_SET_ASIDE = re.compile(
    r"\b(?:wrong\w*|mistaken\w*|incorrect\w*|erroneous\w*|false\w*|myth|outdated|error)\b",
    re.IGNORECASE,
)


def _conceded(text: str) -> list[tuple[str, str, str, str]]:
    out = []
    for m in _CONCEDED.finditer(text):
        # the clauses on either side, looked for within a bounded window (each candidate is a
        # few words; an unbounded look would rescan a long reply at every match)
        lo = max(0, m.start() - 200)
        start = max((e.end() for e in _CLAUSE_END.finditer(text, lo, m.start())), default=lo)
        end_m = _CLAUSE_END.search(text, m.end(), m.end() + 200)
        end = end_m.start() if end_m else min(len(text), m.end() + 200)
        first, second = text[start : m.start()], text[m.end() : end]
        if (
            not re.search(r"\w", first)
            or not re.search(r"\w", second)
            or _SET_ASIDE.search(m["gap"] + " " + second)
            or _converted(first, second)
            or max(len(first.split()), len(second.split())) > MAX_CANDIDATE_WORDS
        ):
            continue
        only_first = text[: m.start()] + text[end:]
        only_second = text[:start] + second.strip() + text[end:]
        out.append((first.strip(" ,"), second.strip(" ,"), only_first, only_second))
    return out


# ---------------------------------------------------------------- the question's focus

FUNCTION_WORDS = set(
    "a an the is are was were be of in on at to for and or with by from as it its this that "
    "these those there what which who whom whose how many much does do did has have had will "
    "would can could should your you reply answer just only name word one please give".split()
)


# Irregular past forms, so that "the wall fell in 1989" repeats "when did the wall fall?"
_BASE = {
    "fell": "fall",
    "fallen": "fall",
    "won": "win",
    "wrote": "write",
    "written": "write",
    "built": "build",
    "began": "begin",
    "begun": "begin",
    "came": "come",
    "sank": "sink",
    "sunk": "sink",
    "ran": "run",
    "flew": "fly",
    "rose": "rise",
    "went": "go",
    "gone": "go",
    "made": "make",
    "found": "find",
    "led": "lead",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "became": "become",
    "broke": "break",
    "broken": "break",
    "opened": "open",
    "spoke": "speak",
    "spoken": "speak",
    "speaks": "speak",
}


# "came down", "was torn down": a wall or a government falls
_PHRASAL = re.compile(r"\b(?:came|come|comes|coming|torn|tore|brought|pulled)\s+down\b")


def question_focus(question: str, clause: str, names: set[str]) -> tuple[int, float]:
    """How closely `clause` repeats what `question` asks: (word pairs of the question it
    repeats, the question's content words it repeats, earlier words weighing more). Words of
    the options (`names`) never count: they are the answers, not the question.

    "What is the largest ocean?" weighs "the largest is the Pacific" over "the Atlantic is the
    second largest" (it repeats "the largest"); "What is the capital city of Canada?" weighs
    "the capital is Ottawa" over "Toronto is the largest city" ("capital" comes first).
    """
    # the asking sentence only: premises before it ("Ben does not own the fish. Who owns the
    # fish?") are what the working repeats, not what the answer does
    sentences = re.split(r"(?<=[.!?？。])\s+|\n", question)
    asked = [s for s in sentences if s.rstrip().endswith(("?", "？"))]
    words = [
        _BASE.get(w, w) for w in re.findall(r"\w+", (asked[-1] if asked else question).casefold())
    ]
    said = [_BASE.get(w, w) for w in re.findall(r"\w+", _PHRASAL.sub("fall", clause.casefold()))]
    # "In which year did the Berlin Wall fall?": the verb a did-question ends on is what it
    # asks about, ahead of its subject (which a clause about another deed repeats too)
    verb = re.search(r"\b(?:did|does|do)\b[^?？]*?\b(\w+)\W*$", asked[-1] if asked else "")
    if verb and verb.group(1).casefold() not in FUNCTION_WORDS:
        last = _BASE.get(verb.group(1).casefold(), verb.group(1).casefold())
        words = [last] + [w for w in words if w != last]
    # a pair of function words ("is the") is in every clause: it repeats nothing asked
    pairs = {
        (a, b)
        for a, b in zip(words, words[1:])
        if a not in names and b not in names and not {a, b} <= FUNCTION_WORDS
    }
    said_pairs = set(zip(said, said[1:]))
    content = [w for w in dict.fromkeys(words) if w not in FUNCTION_WORDS and w not in names]
    weight = sum(1 / (n + 1) for n, w in enumerate(content) if w in said)
    return len(pairs & said_pairs), weight
