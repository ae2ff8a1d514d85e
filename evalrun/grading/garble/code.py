"""Garble signals for code, JSON and tool calls: what a broken engine leaves in structured answers.

Word-level checks are mostly off for code (identifiers are no words), so junk that keeps the
symbols of code (`falaw};ress=qualif`, `sublim(ingale{co=proportical=Ad`) passes them. These
signals judge the code itself, the way a compiler would before it reads a single name:

- `broken_brackets`: lines of code that close a bracket never opened, or open one between two
  names and never close it. Strings, comments and a block cut off at the token limit aside,
  code in every language balances its brackets;
- `word_lines`: lines of a program that are only common English words, no syntax between them
  (`anything light think given something women police city`): the code turned into salad;
- `broken_json`: a JSON key followed by bare words where its colon and value belong
  (`"name" Tallinn Shorter and a butterfly`): records that decayed mid-answer;
- `foreign_names`: words of another script where code has its names (`for 医学 in`,
  `re.软件(`) in an answer whose prose is in Latin letters.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from evalrun.grading.garble.lexicon import zipf
from evalrun.grading.garble.scripts import FUNCTION_WORDS, char_script, looks_like_code


class Block(NamedTuple):
    """A block of code: its language ('' when unnamed), its lines, and its lines with strings,
    comments and regex literals blanked (`bare`, for reading the syntax alone)."""

    lang: str
    lines: list[str]
    bare: list[str]


def code_blocks(text: str, structured: bool) -> list[Block]:
    """The code of an answer: its fenced blocks (not diffs, logs, math or plain text), or the
    whole text of a structured answer with no fence when most of its lines read as code (not a
    table, not math with its half-open intervals)."""
    if "```" in text:
        found = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
        found = [(lang, code) for lang, code in found if lang not in _NOT_CODE]
    else:
        found = [("", text)] if structured and looks_like_code(text) else []
    return [Block(lang, code.split("\n"), _bare(code, lang).split("\n")) for lang, code in found]


_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
# Fences whose lines need not balance: a diff shows halves of lines, a log or a session output,
# math its half-open intervals [0, 1).
_NOT_CODE = frozenset(
    "diff patch text txt plaintext markdown md console output log logs terminal math latex tex "
    "katex".split()
)


def broken_brackets(blocks: list[Block]) -> tuple[float, str]:
    """Two lines of code or more that close a bracket no line opened (`falaw};ress=qualif`) or
    open one between two names and never close it (`sublim(ingale{co=proportical=Ad`). A shell
    `case` label (`start)`), a list label (`1)`), an escaped bracket (`\\(`), one in a regex
    literal (`/[^)]+/`) and the last line of a block (cut off at the token limit) do not count."""
    broken = [line for block in blocks for line in _unbalanced_lines(block)]
    if len(broken) < BROKEN_LINES:
        return 0.0, ""
    shown = ", ".join(f"`{line[:40]}`" for line in broken[:2])
    return min(1.0, 0.5 + 0.1 * (len(broken) - BROKEN_LINES)), (
        f"{len(broken)} lines of code close a bracket that was never opened, or open one between "
        f"two names and never close it ({shown})"
    )


BROKEN_LINES = 2


def _unbalanced_lines(block: Block) -> list[str]:
    lines, written = block.bare, block.lines
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    stack: list[str] = []
    broken: list[str] = []
    for i, line in enumerate(lines):
        bad = False
        label = _CASE_LABEL.match(line)
        for c in line[label.end() if label else 0 :]:
            if c in _OPENS:
                stack.append(c)
            elif c in _CLOSES:
                if stack and stack[-1] == _CLOSES[c]:
                    stack.pop()
                    continue
                bad = True
                if _CLOSES[c] in stack:  # (one bracket lost: what it enclosed closes with it)
                    while stack.pop() != _CLOSES[c]:
                        pass
        if not bad and i != last and line.rstrip()[-1:].isalnum() and _GLUED_OPEN.search(line):
            depth = sum(c in _OPENS for c in line) - sum(c in _CLOSES for c in line)
            bad = depth > 0
        if bad:
            broken.append(written[i].strip())
    return broken


def word_lines(blocks: list[Block]) -> tuple[float, str]:
    """A line of a program (Python, JavaScript, Java, Go, Rust, C, ... or JSON) that is four
    common English words or more with no syntax between them, at most one a keyword and few
    function words: `anything light think given something women police city`. No such
    language writes a statement so; comments, strings and docstrings are not read, and
    languages whose lines may be plain words (shell, SQL, YAML, HTML, CSS) are not judged, nor
    pseudo-code (a block whose lines are mostly words: `set max to item`)."""
    found: list[str] = []
    for block in blocks:
        if block.lang not in _WORDLESS:
            continue
        plain = [
            line.strip()
            for line, bare in zip(block.lines, block.bare, strict=True)
            if bare.strip() == line.strip() and _PLAIN.fullmatch(line)
        ]
        if len(plain) < PSEUDO_CODE * sum(1 for line in block.lines if line.strip()):
            found += [line for line in plain if _salad_line(line)]
    if not found:
        return 0.0, ""
    shown = ", ".join(f"`{line[:60]}`" for line in found[:2])
    where = "a line of code is" if len(found) == 1 else f"{len(found)} lines of code are"
    return min(1.0, 0.5 + 0.1 * (len(found) - 1)), (
        f"{where} only English words with no syntax between them ({shown})"
    )


def _salad_line(line: str) -> bool:
    words = [w.lower() for w in _WORD.findall(line)]
    keywords = sum(w in _KEYWORDS for w in words)
    function_words = sum(w in FUNCTION_WORDS and w not in _KEYWORDS for w in words)
    common = sum(zipf(w, "en") >= WORD_LINE_ZIPF for w in words)
    return keywords <= 1 and function_words <= 0.25 * len(words) and common >= 0.8 * len(words)


PSEUDO_CODE = 0.4  # share of a block's lines that are plain words, from which it is pseudo-code
WORD_LINE_ZIPF = 3.0  # common English words (not lorem ipsum, not wget or jq)
# Languages in which no statement is a row of bare words (fences as answers label them).
_WORDLESS = frozenset(
    "python py python3 javascript js jsx mjs typescript ts tsx java go golang rust rs c h cpp "
    "c++ cc hpp cs csharp c# kotlin kt swift php scala dart json jsonc objective-c objc".split()
)
_PLAIN = re.compile(r"\s*[A-Za-z][A-Za-z']*(?:\s+[A-Za-z][A-Za-z']*){3,}\s*[:;{)]?\s*")
_WORD = re.compile(r"[A-Za-z']+")
# Keywords of those languages and of the ones beside them: a line of them is a declaration.
_KEYWORDS = frozenset(
    """
    select from where and or not in is null order by group having join on as insert into values
    update set delete create table drop alter index limit offset union all distinct case when
    then else end like between exists return import def class if elif for while do done fi esac
    let var const function fn pub use mod package echo sudo apt install make cd git pip npm run
    print puts raise pass break continue try except finally with yield async await new public
    private static void int string bool true false none nil self this lambda export default
    extends implements interface type struct enum impl match loop goto switch throw throws catch
    module require include local begin rescue unless until elsif val fun object override sealed
    data go defer chan range mut ref extern crate trait final abstract protected char float
    double long short unsigned signed global nonlocal del assert namespace using typedef
    """.split()
)


def foreign_names(text: str, blocks: list[Block]) -> tuple[float, str]:
    """Words of a script other than Latin or Greek where a program has its names, not in its
    strings or comments (`for 医学 in open(...)`, `LOG_LINE = re.软件(...)`), in an answer
    whose prose is in Latin letters; with the other-script words of the prose, two or more. An
    English answer names things in English: a Chinese word there is a token from elsewhere.
    (Greek letters are math's names: `π`, `Δt`.)"""
    if not blocks or "```" not in text or text.isascii():
        return 0.0, ""
    names = [
        m.group()
        for b in blocks
        if b.lang in _WORDLESS  # (not shell or SQL: `echo 你好`, `SELECT 名前` are data)
        for line in b.bare
        for m in _OTHER_WORD.finditer(line)
    ]
    names = [w for w in names if _foreign(w)]
    if not names:
        return 0.0, ""
    prose = _FENCE.sub(" ", text)
    letters = [c for c in prose if c.isalpha()]
    latin = sum(1 for c in letters if c.isascii() or char_script(c) == "latin")
    if len(letters) < 20 or latin < PROSE_LATIN * len(letters):
        return 0.0, ""
    dropped = [m.group() for m in _OTHER_WORD.finditer(prose) if _foreign(m.group())]
    if len(names) + len(dropped) < FOREIGN_WORDS:
        return 0.0, ""
    shown = ", ".join(f"`{w}`" for w in names[:3])
    where = "a word" if len(names) == 1 else f"{len(names)} words"
    return min(1.0, 0.5 + 0.1 * (len(names) + len(dropped) - FOREIGN_WORDS)), (
        f"{where} in another script where the code has its names ({shown}), in an answer "
        "written in Latin letters"
    )


FOREIGN_WORDS = 2
PROSE_LATIN = 0.9  # share of the prose's letters that are Latin: an answer in a Latin language
_OTHER_WORD = re.compile(r"[^\W\d_a-zA-Z]{2,}")


def _foreign(word: str) -> bool:
    return sum(1 for c in word if char_script(c) not in ("latin", "greek", "")) >= 2


def broken_json(text: str) -> tuple[float, str]:
    """JSON (a ```json fence, or an answer whose line opens with { or [) in which a key is
    followed by bare words, not a colon and a value: `"name" Tallinn Shorter and a butterfly`.
    Comments, trailing commas, single quotes, unquoted keys and elisions (`...`) that answers
    write in JSON fail elsewhere and are not judged; nor is a break in the last two lines
    (the token limit)."""
    for doc in _json_docs(text):
        try:
            json.loads(doc)
        except json.JSONDecodeError as e:
            lines = doc.count("\n") + 1
            if e.msg.startswith("Expecting ':'") and doc[e.pos : e.pos + 1].isalpha():
                if e.lineno < lines - 1:
                    line = doc.split("\n")[e.lineno - 1].strip()
                    return 0.6, f"a JSON key is followed by bare words, not a value (`{line[:50]}`)"
        except RecursionError:
            continue
    return 0.0, ""


def _json_docs(text: str) -> list[str]:
    """The JSON documents of an answer: its ```json fences (and bare fences that open with { or
    [), or the text from its first line opening with { or [ to its last } or ]."""
    if "```" in text:
        blocks = [
            code
            for lang, code in ((m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text))
            if lang in ("json", "") and code.lstrip()[:1] in ("{", "[")
        ]
    else:
        start = _JSON_START.search(text)
        blocks = [text[start.start() :]] if start else []
    return [
        doc[: max(doc.rfind("}"), doc.rfind("]")) + 1].strip()
        for doc in blocks
        if _JSON_KEY.search(doc)
    ]


_JSON_START = re.compile(r"^[ \t]*[{\[]", re.M)
_JSON_KEY = re.compile(r'"[^"\n]{1,80}"\s*:')


def _bare(code: str, lang: str) -> str:
    """The code with its strings, comments, docstrings, regex literals and escaped characters
    blanked (line breaks kept: lines keep their numbers). In Python, // divides."""
    bare = _DOCSTRINGS.sub(_blank, _ESCAPED.sub("  ", code))
    comments = _PYTHON_COMMENTS if lang in _PYTHON else _COMMENTS
    return comments.sub(_blank, _REGEX_LITERAL.sub(_blank, _STRINGS.sub(_blank, bare)))


_PYTHON = frozenset(["python", "py", "python3"])


def _blank(m: re.Match[str]) -> str:
    """The match with everything but its line breaks blanked: lines keep their numbers."""
    return re.sub(r"[^\n]", " ", m.group())


_OPENS = frozenset("([{")
_CLOSES = {")": "(", "]": "[", "}": "{"}
# Docstrings, and template literals and raw strings (JavaScript, Go) that run over lines.
_DOCSTRINGS = re.compile(r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)|`[^`]*`')
# Strings on one line (r'...', b'...' too); an apostrophe after a letter, & or < is a word's
# (don't) or a Rust lifetime's (&'a str).
_STRINGS = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|(?<![\w&<])(?:[rRbBfFuU]{1,2})?\'(?:[^\'\\\n]|\\.)*\'|`[^`\n]*`'
)
# (# before a space: a CSS #id or a C #include is code)
_COMMENTS = re.compile(
    r"/\*[\s\S]*?(?:\*/|\Z)|<!--[\s\S]*?(?:-->|\Z)|(?:^|(?<=\s))(?://|#(?!\S)|--\s).*"
)
_PYTHON_COMMENTS = re.compile(r"(?:^|(?<=\s))#.*")
_ESCAPED = re.compile(r"\\.")  # (two characters for two: offsets stay)
# /[^)]+/g after = ( , : or a match operator (=~ m/ s/ qr/): a regex literal, not a division
_REGEX_LITERAL = re.compile(
    r"(?:(?<=[=(,:~!])|(?<=[=(,:~!] )|(?<=\b[msy])|(?<=\bqr))/(?![/*])[^/\n]+/"
)
_CASE_LABEL = re.compile(r"^\s*[\w*|.\"'$-]+\)")  # start) and *) in a shell case, 1) in a list
_GLUED_OPEN = re.compile(r"[^\W_][(\[{][^\W\d_]")  # name(name, name{name: a call or literal
