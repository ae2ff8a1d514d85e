"""False claims about what a shown program does, in a reply that explains its output.

"What does this code print?" answered "Because y = x creates a copy, appending to y leaves x
unchanged, so it prints 4." names the right output for a reason that is false: a careful grader
fails it. Each entry below is a fact of the language's semantics, tied to a construct the shown
code holds: when the code holds it and the reply asserts the opposite (not denied, not as a
belief it turns from, not in a conditional), the reply's explanation is false.

Only replies to a question that shows code are read, and only their prose: the code the reply
quotes back is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalrun.grading.span import plain_text


@dataclass(frozen=True)
class _Misbelief:
    what: str  # the fact the claim gets wrong, for the grade's detail
    construct: re.Pattern[str]  # in the shown code
    claim: re.Pattern[str]  # in the reply's prose


def _claim(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_MISBELIEFS = (
    _Misbelief(
        "assigning one name to another binds the same object; it copies nothing",
        re.compile(r"(?m)^\s*\w+\s*=\s*\w+\s*$"),
        _claim(
            r"\b(?:creates?|creating|makes?|making|is|as|gets?|becomes?|holds?|receives?)\s+"
            r"(?:a|an|its own)\s+(?:new\s+|separate\s+|independent\s+|shallow\s+)?(?:copy|clone)\b"
            r"|\bcop(?:ies|ied)\s+(?:the\s+)?(?:list|x|it)\b"
            r"|\b(?:leaves?|leaving|keeps?)\s+(?:the\s+(?:original\s+)?list\s+|x\s+)"
            r"(?:unchanged|untouched|as it was)"
            r"|\bx\s+(?:stays|remains|is)\s+(?:unchanged|untouched|the same)\b"
            r"|\b(?:two|a)\s+(?:separate|independent|different)\s+lists?\b"
            r"|\bthe\s+(?:new\s+)?copy\b(?!\s+(?:method|module|function))"
        ),
    ),
    _Misbelief(
        "list.append changes the list in place and returns None",
        re.compile(r"\.append\("),
        _claim(
            r"\bappend(?:\(\))?\s+returns\s+(?:a\s+|the\s+)?(?:new\s+|updated\s+|modified\s+|"
            r"resulting\s+|extended\s+)?(?:list|copy)\b"
        ),
    ),
    _Misbelief(
        "an expression on a line of its own changes no variable",
        re.compile(r"(?m)^\s*[A-Za-z_]\w*\s*[-+*/]\s*\d+\s*$"),
        _claim(
            r"\b(?:increments?|incrementing|increases?|increasing|bumps?|updates?|updating)\s+"
            r"(?:the\s+)?(?:count|counter|total|it|the variable)\b"
            r"|\badds?\s+(?:one|1)\s+to\s+(?:the\s+)?(?:count|counter|total)\b"
            r"|\b(?:count|counter|total)\s+(?:is\s+(?:incremented|increased|updated)|"
            r"goes up|increases|becomes\s+\d)"
        ),
    ),
    _Misbelief(
        "range(a, b, step) stops before b",
        re.compile(r"\brange\(\s*\d+\s*,\s*\d+\s*(?:,\s*\d+\s*)?\)"),
        _claim(
            r"\brange\(\s*\d+\s*,\s*(\d+)\s*(?:,\s*\d+\s*)?\)\s+(?:includes|goes\s+(?:up\s+)?to|"
            r"runs\s+(?:up\s+)?to|ends\s+(?:at|with)|stops\s+at)\s+\1\b"
            r"(?!\s*(?:\(?(?:exclusive|excluded|not included|not inclusive)))"
        ),
    ),
    _Misbelief(
        "// divides and floors; it does not round to the nearest or keep the fraction",
        re.compile(r"\d\s*//\s*\d"),
        _claim(
            r"//\s*\d*\s*(?:rounds|round)\s+(?:\d+(?:\.\d+)?\s+)?(?:to\s+the\s+nearest|up|half)"
            r"|//\s+(?:is|does|performs|means)\s+(?:regular|normal|true|float(?:ing[- ]point)?)\s+"
            r"division"
            r"|\b\d+\s*//\s*\d+\s+(?:is|gives|equals|=)\s+\d+\.[1-9]"
        ),
    ),
    _Misbelief(
        "% gives the remainder, not the quotient or a percentage",
        re.compile(r"\w\s*%\s*\d"),
        _claim(
            r"%\s*(?:\(?(?:the\s+)?(?:modulo|modulus)\s+operator\)?\s*)?(?:gives|returns|is|"
            r"computes|means)\s+(?:the\s+)?(?:quotient|percent(?:age)?|division\s+result)\b"
            r"|%\s+is\s+(?:the\s+)?(?:division|integer\s+division|percent(?:age)?)\s+operator\b"
        ),
    ),
    _Misbelief(
        "n % 2 is 0 for even numbers and 1 for odd ones",
        re.compile(r"\w\s*%\s*2\b"),
        _claim(
            r"\b\w\s*%\s*2\s*(?:==\s*[01]\s+)?(?:is|==|equals|gives|returns)\s*(?:0|zero)\s+for\s+"
            r"(?:all\s+|every\s+)?odd\b"
            r"|\b\w\s*%\s*2\s*(?:==\s*1\s+)?(?:is|==|equals|gives|returns)\s*(?:1|one|true)\s+for\s+"
            r"(?:all\s+|every\s+)?even\b"
        ),
    ),
    _Misbelief(
        "/ in Python 3 divides exactly; it is not integer division",
        re.compile(r"(?m)^\s*print\([^/\n]*\d\s*/\s*\d"),
        _claim(
            r"(?<!/)/\s+(?:is|does|performs|means)\s+(?:integer|floor)\s+division"
            r"|\b(?:rounds|truncates)\s+(?:the\s+result\s+)?(?:down\s+)?to\s+(?:an\s+)?integer"
            r"|\bPython\s*2(?:\.\d+)?\s+(?:also\s+)?(?:prints|gives|returns|outputs)\s+(?:the\s+same|"
            r"2\.5)|\b(?:the\s+same|also)\s+in\s+Python\s*2\b|\bin\s+Python\s*2\s+(?:too|as\s+well)"
            r"|\b(?:both\s+)?(?:operands|numbers|values)\s+are\s+floats?\b"
        ),
    ),
    _Misbelief(
        "a slice stops before its end index",
        re.compile(r"\[\s*\d*\s*:\s*\d+\s*\]"),
        _claim(
            r"\[\s*\d*\s*:\s*(\d+)\s*\]\s+(?:includes|takes|goes\s+(?:up\s+)?to\s+and\s+includes)"
            r"\s+(?:the\s+character\s+at\s+)?(?:index\s+)?\1\b"
            r"|\b(?:end|stop)\s+index\s+(?:is\s+)?(?:included|inclusive)\b"
        ),
    ),
    _Misbelief(
        "repeating a string with * joins the copies with nothing between them",
        re.compile(r"[\"']\w+[\"']\s*\*\s*\d"),
        _claim(
            r"\b(?:separated|joined|spaced)\s+(?:by|with)\s+(?:a\s+)?(?:spaces?|commas?)\b"
            r"|\b(?:adds?|inserts?|puts?)\s+(?:a\s+)?(?:space|comma)s?\s+between\b"
            r"|\b(?:repeats?|repeating|triples?|tripling)\s+each\s+(?:character|letter)\b"
            r"|\beach\s+(?:character|letter)\s+(?:is\s+)?(?:repeated|tripled)\b"
            r"|\ba\s+(?:list|tuple)\s+of\s+(?:three|3|\d+)\b"
        ),
    ),
    _Misbelief(
        "the empty string is falsy, and it is not None",
        re.compile(r"\bbool\(\s*(?:\"\"|'')\s*\)"),
        _claim(r"(?:\"\"|''|\b(?:an?|the)\s+empty\s+string)\s+is\s+None\b"),
    ),
    _Misbelief(
        "range(n) stops before n",
        re.compile(r"\brange\(\s*\d+\s*\)"),
        _claim(
            r"\brange\(\s*(\d+)\s*\)\s+(?:includes|goes\s+(?:up\s+)?to|runs\s+(?:up\s+)?to|"
            r"counts\s+(?:up\s+)?to|gives|yields|is)\s+(?:\d+\s*(?:to|through|-|–|\.\.)\s*)?\1\b"
            r"(?!\s*(?:\(?(?:exclusive|excluded|not included|not inclusive)|-?\s*1\b))"
        ),
    ),
    _Misbelief(
        'typeof null is "object"',
        re.compile(r"\btypeof\s+null\b"),
        _claim(
            r"\btypeof\s+null\s+(?:is|returns|gives|evaluates\s+to|prints)\s+[\"'`]?"
            r"(?!object)(?:null|undefined)\b"
            r"|[\"'`]?object[\"'`]?\s+is\s+what\s+typeof\s+(?:returns|gives)\s+for\s+undefined"
            r"|\btypeof\s+undefined\s+(?:is|returns|gives)\s+[\"'`]?object"
        ),
    ),
    _Misbelief(
        'null is a primitive; typeof says "object" by a historical quirk',
        re.compile(r"\btypeof\s+null\b"),
        _claim(
            r"(?<!typeof\s)\bnull\s+is\s+(?:really\s+|actually\s+|just\s+)?an?\s+object\b"
            r"|\bfor\s+(?:every|all|any)\s+primitives?\b|\ball\s+primitives\s+are\s+objects\b"
        ),
    ),
    _Misbelief(
        'typeof null is "object" by a historical quirk; null is no instance of Object',
        re.compile(r"\btypeof\s+null\b"),
        _claim(
            r"\bnull\s+instanceof\s+Object\s+(?:is|returns|gives|evaluates\s+to)\s+true\b"
            r"|\bnull\s+is\s+(?:an?\s+)?(?:instance|subclass)\s+of\s+Object\b"
        ),
    ),
    _Misbelief(
        "a Python string has no terminating null character",
        re.compile(r"\blen\(\s*[\"']"),
        _claim(
            r"\b(?:terminating|trailing|terminator|null)\s+(?:null\s+)?(?:character|byte|terminator)\b|\\0"
        ),
    ),
    _Misbelief(
        "sorted() returns a new list; it leaves its argument alone",
        re.compile(r"\bsorted\("),
        _claim(
            r"\bsorted(?:\(\))?\s+(?:sorts|modifies|changes|reorders)\s+(?:the\s+)?"
            r"(?:original\s+)?(?:list|it|its argument)\s+in[\s-]place\b"
            r"|\bsorted(?:\(\))?\s+returns\s+(?:a\s+)?(?:tuple|generator|iterator|None)\b"
            r"|\breverse\s*=\s*True\s+(?:just\s+|simply\s+|only\s+)?reverses\s+(?:the\s+)?"
            r"(?:original|given|input)\b"
        ),
    ),
    _Misbelief(
        "bool() of a string is True exactly when the string is not empty",
        re.compile(r"\bbool\(\s*[\"']"),
        _claim(
            r"\bbool(?:\(\))?\s+(?:on|of)\s+a\s+string\s+(?:checks|tests|asks)\s+whether\s+it\s+"
            r"(?:is|represents|holds)\s+a\s+(?:valid\s+)?(?:number|digit|numeric)"
            r"|\bbool(?:\(\))?\s+(?:converts|parses)\s+(?:the\s+)?string\s+(?:to|into|as)\s+a\s+number"
            r"|[\"']0[\"']\s+is\s+(?:falsy|false)\b"
            r"|\b(?:is\s+)?(?:first\s+)?converted\s+to\s+(?:the\s+)?(?:number|integer|int)\b"
        ),
    ),
    _Misbelief(
        "Python and JavaScript index lists from 0",
        re.compile(r"\[\s*len\(|\[\s*\d+\s*\]|\[\s*\d*\s*:\s*\d*\s*\]"),
        _claim(
            r"\b(?:lists?|strings?|arrays?|indexing|indices|indexes|python)\s+"
            r"(?:are|is|start(?:s)?\s+at|begins?\s+at)\s+(?:index\s+)?(?:1|one)(?:-|\s)?(?:indexed|based)?\b"
            r"|\b(?:1|one)-(?:indexed|based)\b"
            r"|\bindex(?:ing)?\s+starts?\s+(?:at|from)\s+(?:1|one)\b"
        ),
    ),
    _Misbelief(
        "a space is a character len() counts",
        re.compile(r"\blen\(\s*\"[^\"]* [^\"]*\"\s*\)"),
        _claim(
            r"\b(?:not\s+counting|excluding|without|ignoring)\s+(?:the\s+)?spaces?\b"
            r"|\bspaces?\s+(?:is|are)\s*(?:not|n't)\s+counted\b"
            r"|\b(?:ignores|skips|drops|excludes)\s+(?:the\s+|any\s+|all\s+)?(?:spaces?|whitespace)\b"
            r"|\b(?:spaces?|whitespace)\s+(?:is|are)\s+(?:ignored|skipped|excluded|dropped)\b"
            r"|\bcounts?\s+(?:the\s+|only\s+(?:the\s+)?)?(?:characters|letters)\s+but\s+not\s+"
            r"(?:the\s+)?(?:spaces?|whitespace)\b"
            r"|\bwords?\s+plus\s+(?:the\s+)?(?:letters|characters)\b"
        ),
    ),
    _Misbelief(
        "assigning to a key the dict holds replaces its value",
        re.compile(r"(?m)^\s*\w+\[\s*[\"']\w+[\"']\s*\]\s*=\s*[^=]"),
        _claim(
            r"\badds?\s+(?:a\s+)?(?:new|another|second|duplicate)\s+(?:key|entry)\b"
            r"|\b(?:both|the old and new)\s+values?\s+(?:are|is)\s+(?:kept|summed|added)\b"
            r"|\bvalues?\(\)\s+(?:returns|gives|lists)\s+(?:the\s+)?values\s+in\s+"
            r"(?:reverse|random|sorted|alphabetical)\b"
            r"|\b(?:sums?|adds?(?:\s+up)?|totals?)\s+(?:the\s+|all\s+the\s+)?keys\b(?!['’])"
            r"|[\"']?(\w)[\"']?\s*:\s*\d+\s*,\s*[\"']?\1[\"']?\s*:\s*\d+"
        ),
    ),
    _Misbelief(
        "range(n) starts at 0",
        re.compile(r"\brange\(\s*\d+\s*\)"),
        _claim(
            r"\brange\(\s*\d+\s*\)\s+(?:yields|gives|produces|is|counts|goes|runs|generates|"
            r"returns)\s+(?:from\s+)?1\b"
            r"|\brange\(\s*\d+\s*\)\s+(?:starts|begins)\s+(?:at|from|with)\s+1\b"
        ),
    ),
    _Misbelief(
        "the base case returns 1",
        re.compile(r"if\s+n\s*<=?\s*[01]\s*:\s*\n\s*return\s+1\b"),
        _claim(r"\bbase\s+case\s+(?:returns?|gives|is)\s+(?:0|zero|n|None)\b"),
    ),
    _Misbelief(
        "n * f(n - 1) multiplies; it does not add",
        re.compile(r"\breturn\s+n\s*\*\s*\w+\(\s*n\s*-\s*1\s*\)"),
        _claim(
            r"\b(?:the\s+)?sum\s+of\s+(?:the\s+(?:numbers|integers)\s+)?(?:1|one)\s+(?:through|to)\b"
            r"|\b(?:adds|sums)\s+(?:up\s+)?(?:the\s+numbers|n\b|all)"
            r"|\b\d\s*\+\s*\d\s*\+\s*\d\s*\+"
        ),
    ),
    _Misbelief(
        "a loop over a non-empty string runs once a character",
        re.compile(r"\bfor\s+\w+\s+in\s+\"[^\"]+\""),
        _claim(
            r"\bloop\s+(?:never\s+runs|never\s+executes|is\s+skipped|runs\s+(?:zero|0)\s+times)"
        ),
    ),
)

# A claim inside a denial, a conditional, or a belief the reply turns from is not asserted:
# "y = x does not create a copy", "if y were a copy, x would be unchanged", "you might think
# range(5) includes 5"
_NOT_ASSERTED = re.compile(
    r"\b(?:not|never|no|without|instead\s+of|rather\s+than|if|were|would|might|may|could|"
    r"think|thinks|thought|expect|expects|assume|assumes|believe|believes|seem|seems|say|"
    r"tempting|common|often|"
    r"mistake|mistakenly|misconception|myth|wrongly|incorrectly|unlike)\b|n[’']t\b",
    re.IGNORECASE,
)
# "should be `count += 1` to increment count", "To get a separate list you would write ...":
# what the code ought to do, or a purpose, is no claim about what it does
_PURPOSE = re.compile(
    r"\b(?:should|must|need|needs|needed|meant|intended|supposed|want|wants|wanted)\b"
    r"|\bto\s+(?:get|make|have|create|produce|keep|obtain)\s+$|\bto\s+$",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.;!?\n]|,\s*(?:but|so|and)\b|\s[—–]\s|\bbut\b|\bso\b", re.IGNORECASE)
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)


def _shown_code(question: str) -> str:
    return "\n".join(m.group(0).strip("`") for m in _CODE.finditer(question))


def false_code_claim(question: str, claim: str) -> str | None:
    """The fact a reply's final claim (what is left after a retraction: "y is a copy... no,
    the same list") gets wrong about the code its question shows, or None."""
    code = _shown_code(question)
    if not code:
        return None
    prose = plain_text(_CODE.sub(lambda m: _inline(m.group(0)), claim))
    for belief in _MISBELIEFS:
        if not belief.construct.search(code):
            continue
        for m in belief.claim.finditer(prose):
            if _asserted(prose, m.start()):
                return belief.what
    return _literal_claim(code, prose)


# "banana" said to contain no "a": a claim about a string literal of the code the literal refutes
_LACKS = re.compile(
    r"[\"“'`]?(\w+)[\"”'`]?\s+(?:contains|has|holds)\s+no\s+(?:lower-?case\s+|upper-?case\s+)?"
    r"[\"“'`]?(\w)[\"”'`]?(?:'?s)?\b",
    re.IGNORECASE,
)


# "len(items) is 4", "range(2, 10, 3) starts at 3", "counting by 2", "[1:4] ... starting at
# 'P'", "characters 1 through 4 inclusive", 'ch == "a" is never true': a number or a character
# the shown code's own literals settle
_LEN_IS = r"\blen\(\s*{name}\s*\)\s+(?:is|=|==|equals|returns)\s+(\d+)\b"
_LIST_LITERAL = re.compile(r"(?m)^\s*(\w+)\s*=\s*\[([^\[\]\n]*)\]\s*$")
_RANGE3 = re.compile(r"\brange\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_STARTS = r"\b(?:starts|begins|starting|beginning)\s+(?:at|from|with)\s+"
_STARTS_AT = re.compile(rf"{_STARTS}(\d+)\b", re.IGNORECASE)
_STEP_BY = re.compile(
    r"\b(?:counting|counts|going|goes|stepping|steps|increasing|jumping)\s+(?:up\s+)?by\s+(\d+)\b",
    re.IGNORECASE,
)
_SLICE = re.compile(r"[\"'](\w+)[\"']\[\s*(\d+)\s*:\s*(\d+)\s*\]")
_SLICE_START = re.compile(
    rf"{_STARTS}(?:the\s+)?(?:character\s+|letter\s+)?[\"'‘“](\w)[\"'’”]", re.IGNORECASE
)
_INCLUSIVE = re.compile(
    r"\b(?:through|to)\s+(?:index\s+)?(\d+)\s*,?\s*\(?(?:inclusive|both\s+included|included)\b",
    re.IGNORECASE,
)
_FOR_IF = re.compile(r"\bfor\s+(\w+)\s+in\s+\"(\w+)\":\s*\n\s*if\s+\1\s*==\s*[\"'](\w)[\"']")
_NEVER_TRUE = re.compile(
    r"\b((?:\w+\s*==\s*[\"']\w[\"']|the\s+(?:if\s+)?condition|the\s+if)\s+is\s+never\s+"
    r"(?:true|met|satisfied))\b",
    re.IGNORECASE,
)


def _asserts_other(pattern: re.Pattern[str], prose: str, value: str, *, same: bool = False) -> bool:
    """Whether the prose asserts a match of `pattern` whose first group is not `value` (with
    `same`: is `value`)."""
    return any(
        (m[1] == value) == same and _asserted(prose, m.start()) for m in pattern.finditer(prose)
    )


def _literal_claim(code: str, prose: str) -> str | None:
    literals = set(re.findall(r"[\"']([^\"'\n]+)[\"']", code))
    for m in _LACKS.finditer(prose):
        word, char = m.group(1), m.group(2)
        if word in literals and char in word and _asserted(prose, m.start()):
            return f"{word!r} contains {char!r}"
    # a list the code never changes, nor hands to another name that could
    for name, body in _LIST_LITERAL.findall(code):
        if re.search(
            rf"\b{name}\s*(?:\.|\+=|\[[^\]]*\]\s*=[^=])|=\s*{name}\s*$|\bdel\b", code, re.M
        ):
            continue
        n = str(len([x for x in body.split(",") if x.strip()]))
        if _asserts_other(re.compile(_LEN_IS.format(name=re.escape(name))), prose, n):
            return f"len({name}) is {n}"
    for start, _, step in _RANGE3.findall(code):
        if _asserts_other(_STARTS_AT, prose, start):
            return f"the range starts at {start}"
        if _asserts_other(_STEP_BY, prose, step):
            return f"the range steps by {step}"
    for word, start, end in _SLICE.findall(code):
        first = word[int(start)] if int(start) < len(word) else ""
        if _asserts_other(_SLICE_START, prose, first):
            return f"the slice starts at {first!r}"
        if _asserts_other(_INCLUSIVE, prose, end, same=True):
            return "a slice stops before its end index"
    for _, word, char in _FOR_IF.findall(code):
        if char in word and _asserts_other(_NEVER_TRUE, prose, ""):
            return f"{word!r} contains {char!r}"
    return None


# print(a, b) writes its arguments on one line, separated by a space: "(False, True)" is a
# tuple's repr (what print((a, b)) writes), "False\nTrue" the output of two prints
_TUPLE_OUTPUT = re.compile(
    r"^\W*(?:(?:it|this|the code|the program)\s+(?:prints|outputs)\s*:?\s*|output\s*:\s*)?"
    r"\(([^()\n]*,[^()\n]*)\)\W*$",
    re.IGNORECASE,
)


def _print_arity(code: str) -> int:
    """How many arguments the code's first print call passes (0 when it has none)."""
    m = re.search(r"\bprint\(", code)
    if m is None:
        return 0
    depth, quote, count = 0, "", 1
    for ch in code[m.end() :]:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return count
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return 0


def print_misread(question: str, claim: str) -> str | None:
    """How a reply's final claim misstates what a print of several arguments writes (as a
    tuple, or one value a line), or None."""
    arity = _print_arity(_shown_code(question))
    if arity < 2:
        return None
    plain = plain_text(claim).strip()
    if _TUPLE_OUTPUT.match(plain):
        return "print writes its arguments apart, not as a tuple"
    lines = [ln.strip() for ln in plain.splitlines() if ln.strip()]
    if lines and lines[0].endswith(":"):
        lines = lines[1:]  # "Output:" over the block
    if len(lines) >= arity and all(len(ln.split()) == 1 for ln in lines[:arity]):
        return "print writes its arguments on one line, not one a line"
    return None


def _inline(code: str) -> str:
    """Inline code kept as prose (`typeof null` is a subject of the sentence); a fenced block
    quoted back is dropped."""
    return code.strip("`") if not code.startswith("```") else " "


def _asserted(prose: str, start: int) -> bool:
    """Whether the claim at `start` is asserted: no denial, condition or turned-from belief
    between the start of its clause and the claim."""
    head = prose[:start]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    clause = head[breaks[-1].end() :] if breaks else head
    return not (_NOT_ASSERTED.search(clause) or _PURPOSE.search(clause))
