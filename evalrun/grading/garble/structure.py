"""Structure-level garble signals: what is wrong with the sequence, not with single words.

Each function takes the text (or its tokens) and returns (score 0..1, reason):

- `punctuation_flood`: punctuation with letter fragments mixed in (`,,..,,,,ß,,.s,ß,gen,gen`);
- `bang_flood`: exclamation marks glued to most words (`Yes,!! I! can! write!!!!`);
- `short_unit_loop`: a few short tokens over and over, junk between (`C# | C# | C32. C#的. (C#`);
- `salad`: words with no syntax: function words in orders no sentence has (`the of by the in to
  and`), fragments that are not words (`ov ek ur ith`), capitalised words with nothing between;
- `symbol_tail`: a tail of symbols and invisible characters after a readable start;
- `letter_scatter`: a tail of lone letters, digits and dots after readable words;
- `stray_punctuation`: brackets, quotes and commas standing alone between words;
- `blank_flood`: blank lines or spaces to the token limit.
"""

from __future__ import annotations

import ast
import itertools
import re
import unicodedata
import warnings
import zlib
from collections import Counter
from collections.abc import Callable

from evalrun.grading.garble.scripts import (
    EDGE,
    FUNCTION_WORDS,
    KANA_HAN,
    LAUGH,
    closing_rule,
    is_box,
)

TOKEN = re.compile(r"\S+")
_FLOOD_PUNCT = frozenset(",.;:!?")

# English closed-class words by role; a pair of these in the orders below occurs in no sentence.
_DET = frozenset(["the", "a", "an"])
_PREP = frozenset(["of", "in", "on", "at", "by", "for", "with", "from", "into", "onto"])
_CONJ = frozenset(["and", "or", "but", "nor"])
_AUX = frozenset(
    ["is", "are", "was", "were", "can", "could", "will", "would", "should", "may", "must"]
)
_BAD_PAIRS = (
    {(a, b) for a in _DET for b in _DET | _PREP | _CONJ | _AUX}
    | {(a, b) for a in _PREP for b in _PREP | _CONJ | _AUX}
    | {(a, b) for a in _CONJ for b in _CONJ | _AUX - {"is", "are", "was", "were"}}
    | {("to", b) for b in _DET | _PREP | _CONJ | _AUX} - {("to", "the"), ("to", "a"), ("to", "an")}
)
_ENGLISH_SHORT = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "to",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "it",
        "its",
        "this",
        "that",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "my",
        "his",
        "her",
        "our",
        "us",
        "them",
        "not",
        "no",
        "do",
        "did",
        "has",
        "had",
        "can",
        "may",
        "will",
        "one",
        "two",
        "six",
        "ten",
        "all",
        "any",
        "few",
        "new",
        "old",
        "big",
        "way",
        "day",
        "man",
        "men",
        "use",
        "see",
        "get",
        "got",
        "set",
        "put",
        "let",
        "run",
        "sun",
        "cat",
        "dog",
        "car",
        "bus",
        "red",
        "yes",
        "how",
        "why",
        "who",
        "what",
        "when",
        "out",
        "up",
        "so",
        "if",
        "as",
        "per",
        "via",
        "etc",
        "ok",
        "too",
        "now",
        "then",
        "than",
        "also",
        "off",
        "own",
        "end",
        "far",
        "low",
        "top",
        "key",
        "law",
        "war",
        "age",
        "art",
        "air",
        "oil",
        "sea",
        "job",
        "act",
        "bad",
        "hot",
        "due",
        "each",
        "more",
        "most",
        "such",
        "only",
        "just",
        "very",
        "well",
        "here",
        "there",
        "where",
        "which",
    ]
)


def punctuation_flood(text: str) -> tuple[float, str]:
    """Whitespace-free runs of sentence punctuation with letter fragments between."""
    best = (0.0, "")
    for m in TOKEN.finditer(text):
        tok = m.group()
        if len(tok) < 12:
            continue
        punct = sum(1 for c in tok if c in _FLOOD_PUNCT)
        letters = sum(1 for c in tok if c.isalpha())
        if punct < 8 or punct < 0.4 * len(tok) or letters == 0 or letters + punct < 0.9 * len(tok):
            continue
        switches = sum(
            1 for a, b in itertools.pairwise(tok) if (a in _FLOOD_PUNCT) != (b in _FLOOD_PUNCT)
        )
        if switches < 6:
            continue  # one word and a trailing ellipsis, not a flood
        score = min(1.0, 0.5 + (switches - 6) / 12)
        if score > best[0]:
            best = (
                score,
                (
                    f"punctuation mixed with fragments ({punct} of {len(tok)} chars) at "
                    f"char {m.start()}"
                ),
            )
    return best


def bang_flood(tokens: list[str]) -> tuple[float, str]:
    """Most words carry glued exclamation marks, often several."""
    if sum("!!" in t for t in tokens) < 3:
        return 0.0, ""  # (the cheap test first: most texts have no "!!" at all)
    words = [t for t in tokens if any(c.isalnum() for c in t)]
    if len(words) < 8:
        return 0.0, ""
    banged = sum(1 for t in words if t.rstrip("?.,:;)\"'").endswith("!"))
    multi = sum(1 for t in words if "!!" in t)
    share = banged / len(words)
    if share < 0.5 or multi < 3:
        return 0.0, ""
    return min(1.0, 0.5 + (share - 0.5) * 2), f"{banged} of {len(words)} words end in '!'"


def short_unit_loop(tokens: list[str], lines: int = 1) -> tuple[float, str]:
    """A handful of short units over and over with junk between (C# | C# | C32. C#的.), on few
    lines (a list or table repeating a cell, one a line, is a list). `lines`: the text's lines."""
    cores = [EDGE.sub("", t) or t for t in tokens]
    if len(cores) < 12:
        return 0.0, ""
    counts = Counter(cores)
    lettered = [(c, n) for c, n in counts.most_common() if any(ch.isalpha() for ch in c)]
    if not lettered:
        return 0.0, ""  # table borders, digits of a matrix
    unit, top = lettered[0]
    # the commonest unit's variants count too (C#的, C32 and C share C)
    stem = unit if len(unit) <= 2 else unit[:3]
    related = sum(
        n
        for c, n in counts.items()
        if c != unit
        and (c.startswith(stem) or (unit.startswith(c) and any(ch.isalpha() for ch in c)))
    )
    # shares among the tokens with letters: junk punctuation between the units does not dilute
    n_lettered = sum(n for _, n in lettered)
    share = (top + related) / n_lettered
    distinct = len(lettered) / n_lettered
    if top < 4 or share < 0.6 or distinct > 0.5 or len(unit) > 12 or n_lettered < 8:
        return 0.0, ""
    if lines * 2 > top + related:
        return 0.0, ""  # about one a line: a list or a table column
    if tokens[-1][-1:] in ".!?" and top + related < 15:
        return 0.0, ""  # a finished answer repeating a word on request (yes, yes, yes.)
    score = min(1.0, 0.5 + (share - 0.6) + (n_lettered - 8) / 60)
    return score, f"{unit!r} and variants make {share:.0%} of {n_lettered} words"


_DIGITS = re.compile(r"\d+")


def line_loop(text: str) -> tuple[float, str]:
    """The same line (numbers aside) over and over: `Step 7: Add a contact form.` or `A:`. Six
    in a row reaching the end of the answer (generation never stopped), or twelve anywhere."""
    if text.count("\n") < 5:
        return 0.0, ""  # (six lines at the least)
    lines = [  # (table rows keep their numbers: | 1 | ok | and | 2 | ok | are two rows)
        line.strip() if line.lstrip().startswith("|") else _DIGITS.sub("#", line.strip())
        for line in text.split("\n")
        if line.strip()
    ]
    best, run = (0.0, ""), 1
    for i in range(1, len(lines) + 1):
        if i < len(lines) and lines[i] == lines[i - 1]:
            run += 1
            continue
        line = lines[i - 1]
        wordy = sum(c.isalpha() for c in line) >= 1  # (| Pluto | 2 | six times is a loop too)
        at_end = i == len(lines)
        if wordy and (run >= 12 or (at_end and run >= 6)):
            score = min(1.0, 0.5 + (run - 6) / 12)
            if score > best[0]:
                shown = line if len(line) <= 24 else line[:24] + "…"
                best = (score, f"the line {shown!r} {run} times in a row")
        run = 1
    return best


def salad(words: list[tuple[str, bool]], common: Callable[[str], bool]) -> tuple[float, str]:
    """English words with no syntax. `words` are (lower-case word, is-running-text) in order, an
    empty word where a number stood between two words (`from 1 to 10, but`: `to` and `but` are
    not neighbours); `common(word)` says whether a short word is a common English word."""
    seq = [w for w, running in words if running]
    if len(seq) < 10:
        return 0.0, ""
    kept = [w for w, running in words if running or not w]
    pairs = [p for p in itertools.pairwise(kept) if all(p)]
    bad = sum(1 for p in pairs if p in _BAD_PAIRS)
    bad_rate = bad / max(1, len(pairs))
    short = [w for w in seq if len(w) <= 3 and w.isascii() and w.isalpha()]
    odd_short = sum(1 for w in short if w not in _ENGLISH_SHORT and not common(w))
    odd_rate = odd_short / len(seq)
    score = max(
        min(1.0, max(0.0, (bad_rate - 0.04) / 0.08)) if bad >= 3 else 0.0,
        min(1.0, max(0.0, (odd_rate - 0.15) / 0.15)) if odd_short >= 5 else 0.0,
    )
    if not score:
        return 0.0, ""
    return score, (
        f"word salad: {bad} function-word pairs no sentence has, {odd_short} short "
        f"fragments in {len(seq)} words"
    )


def capitalised_run(lines: list[list[str]]) -> tuple[float, str]:
    """A line of eight or more capitalised words with nothing between them (no commas, no
    function words): names and nouns strung together, not a heading."""
    for toks in lines:
        if len(toks) < 8:
            continue
        if all(t[:1].isupper() and t[1:].islower() and t.isalpha() for t in toks):
            return min(1.0, 0.5 + (len(toks) - 8) / 8), (
                f"{len(toks)} capitalised words in a row with no syntax"
            )
    return 0.0, ""


_CLUSTER_CHARS = frozenset("\"'`()[]{}<>;*/|…-_,")
_DASH_JUNK = re.compile(r"\w[-_]{3,}|[-_]{3,}\w|-_|_-|[^\W\d_][-_]$")
_EDGE_PUNCT = ".,;:!?\"')("
_BENIGN_CLUSTERS = frozenset(
    [
        "**",
        "---",
        "--",
        "...",
        "->",
        "=>",
        "<-",
        ":)",
        ":-)",
        ";)",
        "()",
        "[]",
        "{}",
        "/*",
        "*/",
        "//",
        "||",
        "&&",
        "```",
        "##",
        "###",
        "####",
        "(:",
        "):",
        '""',
        "''",
        "``",
    ]
)


def punctuation_clusters(tokens: list[str]) -> tuple[float, str]:
    """Tokens made only of brackets, quotes and code punctuation (`')));`, `*/)`, `…"`) strewn
    through prose: fragments of code tokens recombined by broken weights."""
    if len(tokens) < 8:
        return 0.0, ""
    odd = [
        t
        for t in tokens
        if len(t) >= 2
        and not any(c.isalnum() for c in t)
        and t not in _BENIGN_CLUSTERS
        and sum(c in _CLUSTER_CHARS for c in t) >= 2
        and len(set(t)) >= 2
    ]
    # words glued to runs of dashes and underscores: is-------, wis_-'s, the-_
    odd += [
        t
        for t in tokens
        if _DASH_JUNK.search(t.strip(_EDGE_PUNCT))
        and any(c.isalpha() for c in t)
        and not t.startswith("-")
        and "__" not in t
    ]
    share = len(odd) / len(tokens)
    if len(odd) < 3 or share < 0.12 or (len(odd) < 4 and share < 0.2):
        return 0.0, ""
    return min(1.0, 0.3 + share * 2), (
        f"{len(odd)} of {len(tokens)} tokens are punctuation clusters or words glued to them"
    )


_RULE_CHARS = frozenset("-=_*~.|:+#<>/\\ \t─━│┃═")
_JUNK_PUNCT = frozenset("-_,.'")


_MORSE = re.compile(r"(?<!\S)[.\-/]{1,7}(?!\S)")
_MORSE_MIXED = re.compile(r"(?<!\S)(?=[.\-]*\.)(?=[.\-]*-)[.\-]{2,7}(?!\S)")


def dash_soup(text: str) -> tuple[float, str]:
    """Dashes, underscores and commas make most of the text, with word fragments between
    (`-, the-\n----_'s\n---------,,The. The wis`): what a wrong rope base produced. Lines of
    rule characters alone (markdown rules, table borders) do not count."""
    if sum(text.count(c) for c in _JUNK_PUNCT) < 15:
        return 0.0, ""  # (the cheap test first: half of 30 characters or more must be these)
    if len(_MORSE_MIXED.findall(text)) >= 3:  # .-.. -.-- : Morse code, dots and dashes are letters
        text = _MORSE.sub(" ", text)
    lines = [
        line
        for line in text.split("\n")
        if line.strip() and not all(c in _RULE_CHARS for c in line)
    ]
    chars = [c for line in lines for c in line if not c.isspace()]
    if len(chars) < 30:
        return 0.0, ""
    junk = sum(1 for c in chars if c in _JUNK_PUNCT)
    letters = sum(1 for c in chars if c.isalpha())
    share = junk / len(chars)
    if share < 0.5 or letters > 0.4 * len(chars) or letters < 3:
        return 0.0, ""
    return min(
        1.0, share + 0.1
    ), f"{share:.0%} of the characters are dashes, underscores and commas"


SYMBOL_TAIL = 40  # characters at the end judged for symbol junk
_COMMON_SYMBOLS = frozenset("·•–—‘’“”…€£¥°±×÷≤≥≠≈→←↑↓∞√∑∫∂πΔ✓✔✅❌★☆♥…«»„")


def symbol_tail(text: str) -> tuple[float, str]:
    """The last 40 characters are mostly symbols, marks and invisible characters (not letters,
    digits or ordinary punctuation) after a readable start."""
    rule = closing_rule(text)
    if rule >= 0:
        text = text[:rule]  # (a rule that closes the layout is no tail of symbols)
    if len(text) < 60:
        return 0.0, ""
    tail = text[-SYMBOL_TAIL:]
    chars = [c for c in tail if not c.isspace()]
    if len(chars) < 12:
        return 0.0, ""
    odd = 0
    for c in chars:
        cat = unicodedata.category(c)
        if cat[0] in "LNMZ" or c in _COMMON_SYMBOLS or "\u2500" <= c <= "\u257f":
            continue  # letters and digits of any script, box drawing
        if c.isascii() and c not in "#%|^~`\\":
            continue
        odd += 1
    share = odd / len(chars)
    head = text[:-SYMBOL_TAIL]
    if share < 0.4 or sum(c.isalpha() for c in head) < 0.5 * max(1, len(head.strip())):
        return 0.0, ""
    return min(1.0, 0.4 + share), f"{share:.0%} of the last {len(chars)} characters are symbols"


_MATH_SIGNS = frozenset("= + − - × * / ÷ ^ < > ≤ ≥ ≈ ≠ · ± →".split())


def letter_scatter(tokens: list[str]) -> tuple[float, str]:
    """A tail of lone letters, digits and dots after readable words (`mutability. 's s 4 d 4 1.
    r. n l e`): generation fell apart into single characters. Spelled-out words, the alphabet,
    DNA and chess moves are capitals, runs of one kind, or longer tokens."""
    run = lone = 0
    letters: set[str] = set()
    for tok in reversed(tokens):
        core = EDGE.sub("", tok)
        if len(core) > 2 and run >= 8:
            break
        if tok in _MATH_SIGNS or not tok.isascii():
            return 0.0, ""  # x = 2 and y = 3; あ a, い i: variables and readings stand alone
        run += 1
        if len(core) <= 1:
            lone += 1
            if core.islower():
                letters.add(core)
    words = len(tokens) - run
    if lone < 8 or lone < 0.65 * run or len(letters) < 3 or words < 5:
        return 0.0, ""
    return min(1.0, 0.5 + 0.05 * (lone - 8)), (
        f"ends in {lone} lone letters, digits or dots in its last {run} tokens, after {words} words"
    )


def stray_punctuation(text: str) -> tuple[float, str]:
    """Brackets, quotes and commas standing alone between words (`he " ' not or ( or legal '`):
    the punctuation of a sentence without the sentence. Prose keeps its punctuation on words;
    checkboxes and code are not asked (structured answers, fenced blocks)."""
    tokens = _CHECKBOX.sub(" ", text).split()
    if len(tokens) < 8 or "```" in text:
        return 0.0, ""
    stray = sum(1 for tok in tokens if _STRAY.fullmatch(tok))
    share = stray / len(tokens)
    if stray < 4 or share < STRAY_SHARE:
        return 0.0, ""
    return min(1.0, 0.5 + (share - STRAY_SHARE) * 3), (
        f"{stray} of {len(tokens)} tokens are brackets, quotes or commas standing alone"
    )


STRAY_SHARE = 0.12
# (not « », : or ; alone: French typography spaces them off)
_STRAY = re.compile(r"[()\[\]\"'“”‘’„,]+|[.!?]*[()\[\]\"'“”‘’„,][.!?,;:]*")
_CHECKBOX = re.compile(r"\[[ xX]?\]|\[ *\d{1,3}%\]")  # [x], [ 16%]: checkboxes, progress


def blank_flood(text: str) -> tuple[float, str]:
    """A run of blank lines or spaces that nothing readable follows or that swamps the answer
    (`1.  (  "` and sixty spaces; ` or areal` and sixty line breaks): the engine emitted one
    whitespace token until the limit."""
    worst = max((m.end() - m.start() for m in _BLANK_RUN.finditer(text)), default=0)
    gaps = list(_LONG_GAP.finditer(text))
    lines = max((len(m.group()) for m in gaps if m.group().count("\n") >= 24), default=0)
    gap = max(gaps, key=lambda m: len(m.group()), default=None)
    if gap is not None:
        after = [line.split() for line in text[gap.end() :].split("\n") if line.strip()]
        if len(after) >= 3 and sorted(map(len, after))[len(after) // 2] <= 2:
            blank = gap.group().count("\n")  # (a long gap, then fragments: `HHH H`, `the.`)
            return 0.6, f"{blank} blank lines in a row, then {len(after)} lines of a word or two"
    if worst < 48 and lines < 24:
        return 0.0, ""
    share = sum(c.isspace() for c in text) / len(text)
    if share < 0.5 and text[-1:].strip():
        return 0.0, ""  # a wide table or ASCII art with text after it
    return min(1.0, 0.5 + share / 2), (
        f"{max(worst, lines)} blank characters in a row; {share:.0%} of the answer is blank"
    )


def scattered_lines(text: str) -> tuple[float, str]:
    """Fragments scattered between gaps of blank lines (`\\n\\n\\n\\n- a\\n\\n\\n\\nf\\n\\n\\n`):
    four gaps of three blank lines or more, and the lines between them two words at most.
    Markdown leaves one blank line between blocks; a poem two between stanzas."""
    gaps = len(_GAP.findall(text))
    lines = [line.split() for line in text.split("\n") if line.strip()]
    if gaps < SCATTER_GAPS or not lines:
        return 0.0, ""
    words = sorted(len(line) for line in lines)[len(lines) // 2]
    if words > 2:
        return 0.0, ""  # (verse spaced out: `Roses are red` between gaps)
    return min(1.0, 0.5 + (gaps - SCATTER_GAPS) / 10), (
        f"{len(lines)} short lines scattered between {gaps} gaps of blank lines"
    )


def mark_lines(text: str) -> tuple[float, str]:
    """Eight lines or more that hold a mark or four and nothing else (`**`, `-`, `***`), 40% of
    the lines: bullets with nothing after them. A rule is one line; brackets alone on their
    lines are JSON or code."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    marks = [
        line
        for line in lines
        if len(line) <= 4 and all(c in _BULLET_MARKS for c in line) and line not in _RULES
    ]
    if len(marks) < MARK_LINES or len(marks) < 0.4 * len(lines):
        return 0.0, ""
    shown = ", ".join(f"`{m}`" for m in sorted(set(marks))[:3])
    return min(1.0, 0.5 + (len(marks) - MARK_LINES) / 20), (
        f"{len(marks)} of {len(lines)} lines hold only marks ({shown})"
    )


def hollow_lines(text: str) -> tuple[float, str]:
    """Ten lines or more, most of them hollow: a mark, a lone letter or a lone function word and
    nothing else (`#`, `*`, `A.`, `The`, `- A`). A broken decoder that can only start lines; a
    list, a poem or code puts a word that says something, or a bracket, on most of its lines."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) < HOLLOW_LINES:
        return 0.0, ""
    hollow = [line for line in lines if _hollow(line)]
    if len(hollow) < HOLLOW_SHARE * len(lines):
        return 0.0, ""
    shown = ", ".join(f"`{h}`" for h in sorted(set(hollow))[:4])
    return min(1.0, 0.5 + (len(hollow) / len(lines) - HOLLOW_SHARE)), (
        f"{len(hollow)} of {len(lines)} lines hold only a mark, a letter or a function word ({shown})"
    )


def _hollow(line: str) -> bool:
    if line.startswith("#"):
        return False  # a comment line of code, or a heading
    words = [w.strip(_HOLLOW_EDGE) for w in line.split()]
    words = [w for w in words if w]
    if not words:
        return line not in _RULES  # marks only (a rule between sections is not)
    return len(words) == 1 and (
        len(words[0]) == 1 and words[0].isalpha() or words[0].lower() in FUNCTION_WORDS
    )


HOLLOW_LINES = 10
HOLLOW_SHARE = 0.6


def number_soup(text: str) -> tuple[float, str]:
    """Digits strung together with operators and separators no number or formula writes side by
    side (`9109691618.=039=63387`, `+808009+734498988,,232=`): a decoder that lost the format
    of a calculation. A range (`0.021..0.023`), an ellipsis or a thousands separator is no pair."""
    pairs = [
        pair
        for m in _NUMERIC_RUN.finditer(text)
        if sum(c.isdigit() for c in m.group()) >= 0.6 * len(m.group())
        for pair in _OPERATOR_PAIR.findall(m.group())
        if set(pair) != {"."}
    ]
    if len(pairs) < NUMBER_SOUP_PAIRS:
        return 0.0, ""
    shown = ", ".join(f"`{p}`" for p in pairs[:4])
    return min(1.0, 0.5 + 0.1 * (len(pairs) - NUMBER_SOUP_PAIRS)), (
        f"{len(pairs)} places where digits meet two operators or separators at once ({shown})"
    )


NUMBER_SOUP_PAIRS = 2
_NUMERIC_RUN = re.compile(r"(?<!\w)[\d.,=+×*/-]{12,}")
_OPERATOR_PAIR = re.compile(r"[.,=+×*]{2,}")


def capital_runs(text: str) -> tuple[float, str]:
    """Capital letters run together for CAPITAL_RUN letters or more, spelling nothing
    (`LONGISERESIAQUASILEMETRESEICSALPAJAPA`): a decoder gluing pieces without spaces. Not the
    alphabet, a protein or DNA sequence (letters of those alphabets only), a placeholder
    (`XXXXXXXX`) or a unit repeated (`FAKEKEYFAKEKEY`, squeezed small by zlib)."""
    runs = [
        run
        for run in _CAPITAL_RUN.findall(text)
        if not set(run) <= _SEQUENCE_LETTERS
        and run not in _ALPHABET
        and len(zlib.compress(run.encode())) > 0.6 * len(run)
    ]
    if not runs:
        return 0.0, ""
    longest = max(runs, key=len)
    return 0.8, (
        f"{len(runs)} run(s) of capital letters with no space, up to {len(longest)} long "
        f"({longest[:24]}...)"
    )


CAPITAL_RUN = 25
_CAPITAL_RUN = re.compile(rf"[A-Z]{{{CAPITAL_RUN},}}")
_SEQUENCE_LETTERS = frozenset("ACDEFGHIKLMNPQRSTVWXY")  # amino acids (DNA's ACGT among them)
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


MARK_LINES = 8
_RULES = frozenset(["---", "----", "___", "____"])  # markdown rules between sections
_BULLET_MARKS = frozenset("*-_=~+.•·!?:; ")  # (not brackets or #: JSON, code comments)
_HOLLOW_EDGE = "".join(sorted(_BULLET_MARKS - {" "})) + "\"'`"  # bullets, and quotes around a word


SCATTER_GAPS = 4
_LONG_GAP = re.compile(r"(?:[ \t]*\n){10,}")  # inside an answer (markdown leaves one or two)
_GAP = re.compile(r"\n(?:[ \t]*\n){3,}")


def punctuation_only(text: str) -> tuple[float, str]:
    """An answer of thirty characters or more on three lines at most, with no letter or digit
    and two or more marks (`_-_-_---_-_`): not a rule (one mark), box drawing, or ASCII art
    (lines of marks stacked into a picture)."""
    body = "".join(text.split())
    if len(body) < 30 or any(c.isalnum() for c in body) or len(text.strip().split("\n")) > 3:
        return 0.0, ""
    marks = set(body)
    if len(marks) < 2 or all(is_box(c) or c in "|+" for c in marks):
        return 0.0, ""
    return 0.8, f"{len(body)} characters of {''.join(sorted(marks))[:8]!r} and nothing else"


_BLANK_RUN = re.compile(r" {48,}")


def word_glitches(prose: str) -> tuple[float, str]:
    """Glitches no writer makes, in otherwise fluent prose (what one broken layer leaves):
    contractions no language has (we’s, don’s), a function word glued to the next word
    (theWe, andThe, butSEL), a word glued to itself (bedbed) or to a four-digit number
    (traf2880), or five letters glued to themselves inside a word (willrapistsrapists). Two
    or more in a text, read with its code blanked out (`without_code`)."""
    found = [
        m.group()
        for rx in _GLITCHES
        for m in rx.finditer(prose)
        if not LAUGH.fullmatch(m.group())  # (hahaha, jajajajaja: laughter glued to itself)
    ]
    found += [  # (words of 64 characters at most: the search is cubic in a word's length)
        m.group()
        for w in prose.split()
        if len(w) <= 64 and "/" not in w and "." not in w
        for m in _SELF_GLUED.finditer(w)
    ]
    if len(found) < 2:
        return 0.0, ""
    return min(1.0, 0.3 + 0.2 * len(found)), (
        f"{len(found)} glitches no writer makes: {', '.join(found[:4])}"
    )


_FENCED = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)


def without_code(text: str) -> str:
    """The text with its fenced blocks and inline code blanked out."""
    return _FENCED.sub(" ", text)


_SELF_GLUED = re.compile(r"([a-z]{5,})\1", re.I)  # rapistsrapists, anthaantha
_GLITCHES = (
    re.compile(r"\b(?:we|they|you|don|doesn|didn|isn|aren|wasn|can|won|me|us|them)['’]s\b", re.I),
    re.compile(r"\b(?:the|and|or|of|to|in|is|we|you|this|that|these|with|for)[A-Z][a-z]+\b"),
    re.compile(r"\b([a-z]{3,})\1\b"),
    # a word glued to a four-digit number (traf2880, 7221nostal), or to a capitals fragment
    # after a function word (butSEL, whichLOADI)
    re.compile(r"(?<![\w.])(?:[a-z]{3,}\d{4,}|\d{4,}[a-z]{3,})(?![\w.])"),
    re.compile(r"\b(?:it|is|but|if|that|which|been|were|she|he|we|this|and|or|of|make)[A-Z]{3,}\b"),
)


def salad_after_sentences(text: str) -> tuple[float, str]:
    """Forty words or more with no punctuation and no line break, after an answer that was
    ending its sentences (two full stops or more before): the sentences stopped and a salad of
    words runs on. Edited prose, and even a run-on writer, put a comma in forty words. Chinese
    and Japanese, written without spaces, count characters: forty Han or kana characters with
    no punctuation and almost none of the particles every clause has (的 了 是, は が を)."""
    prose = _FENCED.sub(".", text)
    for m in _UNPUNCTUATED.finditer(prose):
        words = [w for w in m.group().split() if _LETTER.search(w)]
        if len(words) >= RUN_ON and len(_SENTENCE_END.findall(prose, 0, m.start())) >= 2:
            return 0.6, (
                f"{len(words)} words in a row without punctuation from char {m.start()} on, after "
                "sentences that ended"
            )
        for run in m.group().split():
            chars = _CJK.findall(run)
            if len(chars) < RUN_ON or not _CJK_SENTENCE_END.search(prose, 0, m.start()):
                continue
            kana = sum(1 for c in chars if c <= "\u30ff")
            particles = _KANA_PARTICLES if kana > 0.15 * len(chars) else _HAN_PARTICLES
            share = sum(1 for c in chars if c in particles) / len(chars)
            if share <= CJK_PARTICLES_LOW:
                return 0.6, (
                    f"{len(chars)} Chinese or Japanese characters in a row without punctuation and "
                    f"{share:.0%} particles, from char {m.start()} on, after sentences that ended"
                )
    return 0.0, ""


RUN_ON = 40
_UNPUNCTUATED = re.compile(r"[^.,;:!?…—–()\[\]\"“”«»|/\n。，、！？]+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_LETTER = re.compile(r"[^\W\d_]")
_CJK = re.compile(f"[{KANA_HAN}]")
_CJK_SENTENCE_END = re.compile(r"[。！？]|[.!?](?=\s)")
CJK_PARTICLES_LOW = 0.08  # running Chinese or Japanese has 10-30%; word salads of it 0-8%
_HAN_PARTICLES = frozenset(
    "的了是在和也就都而与及或但把被对这那我你他她它们个不有说要会上下中为以之其于者乎"
)
_KANA_PARTICLES = frozenset("はがをにのでともへやかなねよたてだす")


def python_syntax(text: str) -> tuple[float, str]:
    """A ```python block that Python cannot parse before its last lines: identifiers turned
    into words (`reported row in version.DictReader(fh):`). Parsed with `ast`, never run. A
    block cut at the token limit breaks only at its end; REPL sessions (>>>), notebook magics
    (%, !), placeholders (<your key>), elisions (...), newer Python, templates and pseudo-code
    (lines of plain words) are not judged."""
    for m in _PYTHON_BLOCK.finditer(text):
        code = m.group(1)
        lines = code.rstrip("\n").split("\n")
        if len(lines) < 4 or _NOT_PLAIN_PYTHON.search(code) or _NEWER_OR_TEMPLATE.search(code):
            continue
        written = [line for line in lines if line.strip()]
        if sum(1 for line in written if _WORDS_ONLY.fullmatch(line)) >= 0.4 * len(written):
            continue  # pseudo-code in a python fence: lines of plain words (set max to item)
        try:
            _parse(code)
        except SyntaxError as e:
            line = e.lineno or len(lines)
            if _CUT_OFF.search(e.msg or ""):
                continue  # a bracket or string the token limit left open: Python names its start
            if _one_stray_bracket(lines, e):
                continue  # `for c in s):`: a bug in a fluent answer, not weights gone wrong
            if line < len(lines) - 1 and not _PLACEHOLDER.search(lines[line - 1]):
                return SYNTAX_SCORE, (
                    f"the Python block at char {m.start()} does not parse at its line {line} of "
                    f"{len(lines)} ({e.msg})"
                )
        except (ValueError, RecursionError, MemoryError):  # null bytes, nesting too deep
            continue
    return 0.0, ""


_PYTHON_BLOCK = re.compile(r"```(?:python3?|py)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_NOT_PLAIN_PYTHON = re.compile(r"^\s*(?:>>>|\.\.\.|%|!|\$ |In \[)", re.MULTILINE)
_CUT_OFF = re.compile(r"never closed|unterminated triple-quoted|EOF|f-string")
# Python newer than the one judging (type X = ..., def f[T](...), class C[T]) and templates
# ({% for %}, {{ x }}) parse nowhere here but are fine answers.
_NEWER_OR_TEMPLATE = re.compile(
    r"^\s*type\s+\w+\s*(?:\[.*\])?\s*=|^\s*(?:async\s+)?(?:def|class)\s+\w+\[|\{%|\{\{",
    re.MULTILINE,
)
SYNTAX_SCORE = 0.6


def _parse(code: str) -> None:
    """Parse Python (never run it); SyntaxError when it does not parse."""
    with warnings.catch_warnings():  # (invalid escapes in the answer's strings)
        warnings.simplefilter("ignore")
        ast.parse(code)


def _one_stray_bracket(lines: list[str], error: SyntaxError) -> bool:
    """The block parses once the one closing bracket Python calls unmatched is taken out."""
    if not (error.msg or "").startswith("unmatched") or not error.lineno or not error.offset:
        return False
    at = error.offset - 1
    line = lines[error.lineno - 1]
    if line[at : at + 1] not in (")", "]", "}"):
        return False
    mended = [*lines[: error.lineno - 1], line[:at] + line[at + 1 :], *lines[error.lineno :]]
    try:
        _parse("\n".join(mended))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_WORDS_ONLY = re.compile(r"\s*[A-Za-z][A-Za-z' ]*:?\s*")
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>|\.\.\.|…")
