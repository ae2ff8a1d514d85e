"""Side claims about the world a grader can check against a small table of settled facts.

A reply can name the right answer and then say something false about it: "Ottawa, in the
province of Quebec", "Jupiter, the sixth planet from the Sun", "Portuguese, brought by Spanish
colonists", "Carbon dioxide (O₂)". A careful grader fails such a reply, whatever its answer. The
table holds facts about the subjects of a general-knowledge suite that no source disputes
(which province Ottawa is in, the order of the planets, the year a novel appeared, what a
formula names) and, for each, the shape of a claim that contradicts it. A claim is read only
where it is asserted: one negated ("not in Quebec") or named as a belief the sentence turns
from ("many think dolphins are fish, but ...") is not, and neither is a sentence that compares
or contrasts ("unlike the Spanish colonies around it").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from evalrun.grading.span import is_believed, is_negated

_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9,
}  # fmt: skip
_COUNTS = {
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_PLANETS = {
    "mercury": 1, "venus": 2, "earth": 3, "mars": 4, "jupiter": 5, "saturn": 6, "uranus": 7,
    "neptune": 8,
}  # fmt: skip
_POLYGONS = {
    "triangle": 3, "square": 4, "quadrilateral": 4, "pentagon": 5, "hexagon": 6, "heptagon": 7,
    "octagon": 8, "nonagon": 9, "decagon": 10,
}  # fmt: skip
# what a common name's formula is (subscripts read as digits)
_FORMULAS = {
    "carbon dioxide": "CO2", "oxygen": "O2", "water": "H2O", "nitrogen": "N2",
    "carbon monoxide": "CO", "methane": "CH4", "hydrogen": "H2", "ozone": "O3",
    "table salt": "NaCl", "sodium chloride": "NaCl",
}  # fmt: skip
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_SYMBOLS = {"oxygen": "O", "hydrogen": "H", "nitrogen": "N"}  # the element, not the gas
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
# where a subject is said to be: "X, in ...", "X is located in ...", "X, Quebec"
_IN = (
    r"(?:,\s*(?:(?:located|situated|found)\s+)?(?:(?:in|on)\s+)?"
    r"|\s+(?:is\s+|lies\s+)?(?:located\s+|situated\s+|found\s+)?(?:in|on)\s+)"
)


def _number(word: str) -> int | None:
    word = word.casefold()
    if word.isdigit():
        return int(word)
    return _ORDINALS.get(word, _COUNTS.get(word))


def _formula(text: str) -> str:
    return text.translate(_SUBSCRIPTS).replace(" ", "")


@dataclass(frozen=True)
class Fact:
    """A settled fact and the shape of a claim against it. `wrong(match)` says whether the
    matched claim contradicts the fact (None: every match does)."""

    fact: str
    claim: re.Pattern[str]
    wrong: Callable[[re.Match[str]], bool] | None = None
    about: re.Pattern[str] | None = None  # the question or reply must name the subject


def _fact(
    fact: str,
    claim: str,
    wrong: Callable[[re.Match[str]], bool] | None = None,
    *,
    about: str | None = None,
) -> Fact:
    return Fact(
        fact,
        re.compile(claim, re.IGNORECASE),
        wrong,
        re.compile(about, re.IGNORECASE) if about else None,
    )


FACTS: tuple[Fact, ...] = (
    # capitals
    _fact(
        "Ottawa is in Ontario",
        rf"\bOttawa\b{_IN}(?:the\s+province\s+of\s+)?(?P<x>Qu[eé]bec|British\s+Columbia|"
        r"Alberta|Manitoba|Saskatchewan|Nova\s+Scotia|New\s+Brunswick|Newfoundland)\b",
    ),
    _fact(
        "Ottawa stands on the Ottawa River, and has been the capital since 1857",
        r"\bOttawa\b[^.\n]{0,40}?\b(?:on|by|beside|along)\s+(?:the\s+)?(?:shores?\s+of\s+)?"
        r"(?P<x>Lake\s+Ontario|Lake\s+Erie|the\s+St\.?\s+Lawrence)"
        r"|\bOttawa\b[^.\n]{0,40}?\bcapital\s+(?:in|since)\s+(?P<y>1\d\d\d)\b",
        lambda m: m["y"] is None or m["y"] not in ("1857", "1858", "1866", "1867"),
    ),
    _fact(
        "Canberra is in the Australian Capital Territory",
        rf"\bCanberra\b{_IN}(?:the\s+state\s+of\s+)?(?P<x>New\s+South\s+Wales|NSW|Victoria|"
        r"Queensland|Tasmania|South\s+Australia|Western\s+Australia)\b",
    ),
    _fact(
        "Canberra has been the capital since 1913, in place of Melbourne's temporary seat",
        r"\bCanberra\b[^.\n]{0,30}?\breplaced\s+(?P<x>Sydney)\b"
        r"|\bCanberra\b[^.\n]{0,50}?\b(?:capital|replaced\s+\w+)\s+(?:\w+\s+){0,3}?(?:in|since)\s+"
        r"(?P<y>1\d\d\d)\b",
        lambda m: m["y"] is None or m["y"] not in ("1908", "1913", "1927"),
    ),
    _fact(
        "neither Ottawa nor Canberra is its country's largest city",
        r"\b(?:Ottawa|Canberra)\b,?\s+(?:is\s+)?(?:also\s+)?(?:the\s+)?(?:\w+['’]s\s+)?"
        r"(?P<x>largest|biggest|most\s+populous)\s+city\b",
    ),
    # gold
    _fact(
        "gold's symbol Au is from the Latin aurum",
        r"\bAu\b[^.\n]{0,40}?\b(?:Latin|from)\b[^.\n]{0,30}?(?P<x>argentum|plumbum|ferrum|"
        r"cuprum|aurus)\b",
        lambda m: not re.search(r"\bsilver\b|\bAg\b", m[0], re.IGNORECASE),
    ),
    _fact(
        "gold is Au, atomic number 79, a metal; aurum means gold",
        r"\baurum\b[^.\n]{0,20}?\bmean(?:s|ing)\s+[\"'‘“]?(?P<x>silver|iron|copper|lead|metal)\b"
        r"|\b(?:gold|Au)\b[^.\n]{0,30}?\batomic\s+number\s+(?:of\s+|is\s+)?(?P<y>\d+)\b"
        r"|\bgold\s+is\s+(?:a\s+)?(?P<z>noble\s+gas|gas|non-?metal|liquid)\b",
        lambda m: m["y"] is None or m["y"] != "79",
    ),
    # the continents
    _fact(
        "the Arctic is not a continent",
        r"(?:Africa|Asia|Europe|America)[^.\n]{0,80}?(?<!Ant)\b(?P<x>(?:the\s+)?Arctic|Greenland)\b"
        r"(?!\s+(?:Ocean|Circle|region|ice|sea))",
        about=r"\bcontinents?\b",
    ),
    _fact(
        "Asia is the largest continent",
        r"\b(?P<x>Antarctica|Africa|Europe|North\s+America|South\s+America|Australia)\s+(?:is\s+|being\s+)?"
        r"the\s+(?:largest|biggest)\b(?!\s+(?:\w+\s+)?(?:desert|ice))",
        about=r"\bcontinents?\b",
    ),
    # the planets
    _fact(
        "the planets' order from the Sun",
        r"\b(?P<p>Mercury|Venus|Earth|Mars|Jupiter|Saturn|Uranus|Neptune)\b(?:,\s*|\s+is\s+)"
        r"(?:also\s+)?the\s+(?P<x>\w+)\s+(?:planet|closest\s+planet)\s+(?:from|to)\s+the\s+Sun",
        lambda m: _number(m["x"]) not in (None, _PLANETS[m["p"].casefold()]),
    ),
    _fact(
        "Jupiter is a gas giant",
        r"\bJupiter\b[^.\n]{0,30}?\b(?P<x>rocky|terrestrial)\s+planet\b",
    ),
    _fact(
        "Jupiter is the largest planet, has many moons, and Mercury is closest to the Sun",
        r"\bJupiter\b[^.\n]{0,30}?\b(?:smaller|less\s+massive|lighter)\s+than\s+(?P<x>Saturn|Earth|"
        r"Neptune|Uranus|Mars)\b"
        r"|\bJupiter\b[^.\n]{0,40}?\b(?P<y>no\s+moons|has\s+no\s+moon|without\s+(?:any\s+)?moons)\b"
        r"|\b(?:Venus|Earth|Mars|Jupiter|Saturn|Uranus|Neptune)\b,?\s+(?:is\s+)?the\s+"
        r"(?P<z>closest|nearest)\s+planet\s+to\s+the\s+Sun"
        r"|\b(?:Mercury|Venus|Earth|Mars|Saturn|Uranus|Neptune)\b,?\s+(?:is\s+)?the\s+"
        r"(?P<w>largest|biggest)\s+planet\b",
    ),
    _fact(
        "Mars is red from iron oxide",
        r"\bMars\b[^.\n]{0,60}?\b(?:because\s+of|due\s+to|from)\s+(?:its\s+)?(?P<x>(?:red\s+)?"
        r"(?:oceans|seas|water|vegetation|plants|lava|heat|copper|sulfur|sulphur))\b",
    ),
    # Jane Austen
    _fact(
        "Pride and Prejudice was published in 1813",
        r"(?:\bAusten\b(?:,\s*|\s+(?:first\s+)?)|\bPride\s+and\s+Prejudice\b[^.\n]{0,60}?)"
        r"\bpublished\s+(?:it\s+)?(?:in\s+)?(?P<x>1[6-9]\d\d)\b",
        lambda m: m["x"] != "1813",
    ),
    _fact(
        "Jane Austen was an English novelist of the early 1800s",
        r"\bAusten\b,?\s+(?:who\s+)?(?:also\s+)?(?:wrote|(?:the\s+)?author\s+of|(?:the\s+)?writer\s+of)\s+"
        r"(?P<x>Wuthering\s+Heights|Jane\s+Eyre|Great\s+Expectations|Middlemarch|Frankenstein|"
        r"Oliver\s+Twist)\b"
        r"|\bAusten\b,?\s+(?:who\s+)?(?:lived|wrote|writing|was\s+writing|published)?\s*in\s+the\s+"
        r"(?P<y>1900s|1600s|2000s|twentieth\s+century)\b"
        r"|\bAusten\b,?\s+(?:was\s+|is\s+)?an?\s+(?P<z>American|French|Irish|Scottish|German)\s+"
        r"(?:novelist|writer|author)\b",
    ),
    # chemistry
    _fact(
        "a name's formula",
        r"\b(?P<n>carbon\s+dioxide|carbon\s+monoxide|oxygen|water|nitrogen|methane|hydrogen|"
        r"ozone|table\s+salt|sodium\s+chloride)\s*\(\s*(?P<x>[A-Z][A-Za-z0-9₀-₉]{0,5})\s*\)",
        lambda m: (
            _formula(m["x"])
            not in (
                _FORMULAS[" ".join(m["n"].casefold().split())],
                _SYMBOLS.get(m["n"].casefold()),
            )
        ),
    ),
    _fact(
        "water is two hydrogen atoms and one oxygen; hydrogen peroxide is H2O2",
        r"\b(?P<x>(?:two|2)\s+oxygen\s+atoms?\s+and\s+(?:one|1|a\s+single)\s+hydrogen)\b"
        r"|\bH[2₂]O\b(?![2₂])[^.\n]{0,30}?\b(?:also\s+)?(?:known|called)\s+as\s+"
        r"(?P<y>hydrogen\s+peroxide|heavy\s+water)\b",
    ),
    _fact(
        "water boils at a lower temperature at altitude",
        r"\b(?:higher|high)\s+altitudes?\b[^.\n]{0,40}?\b(?:boils?|boiling\s+point)\b[^.\n]{0,30}?"
        r"\b(?P<x>higher|rises|increases)\b",
    ),
    _fact(
        "photosynthesis gives off oxygen",
        r"\b(?:give|gives|giving|release|releases|releasing|produce|produces|emit|emits)\s+"
        r"(?:off\s+|out\s+)?(?P<x>carbon\s+dioxide|CO2|CO₂)\s+as\s+(?:a\s+)?(?:by-?product|waste)",
        about=r"\bphotosynthesis\b",
    ),
    _fact(
        "diamond is 10 on the Mohs scale",
        r"\bdiamonds?\b[^.\n]{0,60}?\b(?P<x>\d{1,2})\s+on\s+the\s+Mohs\b|\bdiamonds?\b[^.\n]{0,60}?"
        r"\bMohs\s+hardness\s+of\s+(?P<y>\d{1,2})\b",
        lambda m: (m["x"] or m["y"]) != "10",
    ),
    _fact(
        "diamond is carbon",
        r"\bdiamonds?\b[^.\n]{0,30}?\b(?:made\s+(?:of|from|up\s+of)|composed\s+of|consists?\s+of)\s+"
        r"(?:pure\s+)?(?P<x>silicon|quartz|iron|glass|calcium)\b",
    ),
    # the body, animals
    _fact(
        "the femur is the thigh bone",
        rf"\bfemur\b{_IN}the\s+(?:upper\s+|lower\s+)?(?P<x>arm|forearm|shin|calf|lower\s+leg|"
        r"chest|back|spine|skull|foot)\b",
    ),
    _fact(
        "the femur is not the shin bone",
        r"\bfemur\b[^.\n]{0,30}?\b(?:also\s+)?(?:called|known\s+as)\s+(?:the\s+)?(?P<x>shin\s*bone|"
        r"collar\s*bone|funny\s+bone|upper\s+arm\s+bone|breast\s*bone)\b",
    ),
    _fact(
        "dolphins and whales are mammals, not fish",
        r"\b(?:dolphins?|whales?)\s+(?:is|are)\s+(?:a\s+|an\s+)?(?:kind\s+of\s+|type\s+of\s+)?"
        r"(?P<x>fish(?:es)?)\b",
    ),
    _fact(
        "dolphins breathe air with lungs and bear live young",
        r"\bdolphins?\b[^.\n]{0,20}?\b(?P<x>lay(?:ing)?\s+eggs|breathe\s+(?:through|with|using)\s+"
        r"(?:their\s+)?gills)\b",
    ),
    _fact(
        "sharks, trout and octopuses are not mammals",
        r"\b(?:sharks?|trout|octopus(?:es)?|octopi)\s+(?:is|are)\s+(?:also\s+)?(?:a\s+)?"
        r"(?P<x>mammals?)\b",
    ),
    # shapes
    _fact(
        "a polygon's sides",
        r"\b(?:an?\s+)?(?P<p>triangle|square|quadrilateral|pentagon|hexagon|heptagon|octagon|"
        r"nonagon|decagon)s?\s+(?:has|have)\s+(?:exactly\s+)?(?P<x>\w+)\s+sides\b",
        lambda m: _number(m["x"]) not in (None, _POLYGONS[m["p"].casefold()]),
    ),
    _fact(
        "a polygon's sides, against another's",
        r"\b(?P<n>\d+|three|four|five|six|seven|eight|nine|ten)\b[^.\n]{0,10}?\b(?:the\s+same\s+"
        r"(?:number\s+)?as|(?P<d>one\s+(?:more|fewer|less))\s+than)\s+an?\s+(?P<p>triangle|square|"
        r"pentagon|hexagon|heptagon|octagon|nonagon|decagon)\b",
        lambda m: (
            _number(m["n"])
            != _POLYGONS[m["p"].casefold()]
            + (0 if m["d"] is None else 1 if "more" in m["d"].casefold() else -1)
        ),
    ),
    _fact(
        "a stop sign is an octagon",
        r"\b(?:hexagon|pentagon|heptagon|six|seven|five|[567])\b[^.\n]{0,40}?\b(?P<x>like\s+a\s+"
        r"stop\s+sign)\b",
        about=r"\b(?:hexagon|pentagon|heptagon|sides)\b",
    ),
    # Brazil
    _fact(
        "Brazil was colonised by Portugal",
        r"(?P<x>\b(?:Spanish|French|Dutch|British|English)\s+(?:colonists|colonizers|colonisers|"
        r"settlers|conquistadors|colonization|colonisation|colonial\s+rule)|\bcoloni[sz]ed\s+by\s+"
        r"(?:the\s+)?(?:Spain|Spanish|France|French|Britain|British|English|Dutch))",
        about=r"\b(?:Brazil|Portuguese)\b",
    ),
    _fact(
        "Portuguese is a Romance language",
        r"\bPortuguese\b[^.\n]{0,30}?\b(?:is\s+)?an?\s+(?P<x>Germanic|Slavic|Celtic|Semitic)\s+"
        r"language\b"
        r"|\bBrazil\b[^.\n]{0,20}?\b(?:was|is)\s+(?:once\s+)?an?\s+(?:former\s+)?(?P<y>Spanish|French|"
        r"British|Dutch|English)\s+colony\b",
    ),
    # Einstein
    _fact(
        "general relativity was completed in 1915",
        r"\b(?:Einstein|general\s+(?:theory\s+of\s+)?relativity)\b(?:,\s*|[^.\n]{0,40}?\b"
        r"(?:developed|published|completed|formulated|proposed|presented)\b[^.\n]{0,20}?)\bin\s+"
        r"(?P<x>1[89]\d\d)\b",
        lambda m: m["x"] not in ("1915", "1916") and "special" not in m[0].casefold(),
        about=r"\bgeneral\s+(?:theory\s+of\s+)?relativity\b",
    ),
    _fact(
        "Einstein's Nobel Prize was for the photoelectric effect",
        r"\bNobel\s+Prize\b[^.\n]{0,20}?\bfor\s+(?:his\s+)?(?:work\s+on\s+|theory\s+of\s+)?"
        r"(?P<x>(?:general\s+|special\s+)?relativity)\b",
        about=r"\bEinstein\b",
    ),
    # geography
    _fact(
        "Everest is in the Himalayas, on the Nepal–China border",
        r"\bEverest\b[^.\n]{0,60}?\bin\s+the\s+(?P<x>Andes|Alps|Rockies|Rocky\s+Mountains|"
        r"Karakoram|Urals|Atlas)\b"
        rf"|\bEverest\b{_IN}(?:the\s+border\s+(?:of|between)\s+)?(?P<y>India|Pakistan|Bhutan|"
        r"Switzerland|Argentina|Peru)\b",
    ),
    _fact(
        "Everest is 8,849 m (29,032 ft) high",
        r"\bEverest\b[^.\n]{0,40}?(?<!over\s)(?<!than\s)(?<!above\s)(?<!about\s)(?<!nearly\s)"
        r"(?<!almost\s)(?<!roughly\s)(?<!around\s)(?<!approximately\s)\b(?P<x>\d{1,2},?\d{3})\s*"
        r"(?:m\b|metres|meters)",
        lambda m: not 8840 <= int(m["x"].replace(",", "")) <= 8850,
    ),
    _fact(
        "the Pacific lies between Asia and the Americas",
        r"\bPacific\b[^.\n]{0,60}?\bbetween\s+(?P<x>Europe|Africa)\s+and\s+(?:the\s+)?"
        r"(?:Americas?|North\s+America|South\s+America)\b",
    ),
    _fact(
        "the Pacific covers about a third of Earth and is the largest ocean",
        r"\bPacific\b[^.\n]{0,40}?\b(?:covers|covering)\s+(?:less\s+than\s+|only\s+)?(?P<x>a\s+tenth|"
        r"10\s*%|a\s+fifth)\b"
        r"|\bPacific\b[^.\n]{0,30}?\b(?:smaller|less)\s+than\s+the\s+(?P<y>Atlantic|Indian|Arctic)\b",
    ),
    _fact(
        "the pyramids of Giza stand near Cairo",
        r"\bnear\s+(?P<x>Alexandria|Luxor|Aswan|Khartoum)\b",
        about=r"\bGiza\b",
    ),
    _fact(
        "the pyramids of Giza were built by Egyptians, by the Nile",
        r"\bbuilt\s+by\s+(?:the\s+)?(?P<x>Romans|Greeks|Aztecs|Mayans?|Maya|Incas|Babylonians|Persians|"
        r"Sumerians|aliens)\b"
        r"|\b(?:on|by|along)\s+(?:the\s+)?(?:banks?\s+of\s+the\s+)?(?P<y>Tigris|Euphrates|Jordan|Amazon|"
        r"Ganges)\b",
        about=r"\bGiza\b",
    ),
    # the Berlin Wall
    _fact(
        "the Berlin Wall was built in 1961 and fell on 9 November 1989",
        r"\bBerlin\s+Wall\b[^.\n]{0,60}?\b(?:(?:built|erected|constructed|went\s+up)\s+in\s+"
        rf"(?P<b>1[89]\d\d)\b|fell\s+(?:on\s+|in\s+)?(?:\d{{1,2}}\s+)?(?P<m>{_MONTHS})\b)",
        lambda m: (
            (m["b"] is not None and m["b"] != "1961")
            or (m["m"] is not None and m["m"].casefold() != "november")
        ),
    ),
    _fact(
        "the Berlin Wall fell in 1989: the Soviet Union ended in 1991, Germany reunified in 1990",
        r"\b(?:the\s+)?(?:year|same\s+year)\s+(?:that\s+|when\s+|as\s+)?(?:the\s+)?"
        r"(?P<x>Soviet\s+Union\s+(?:dissolved|collapsed|fell|ended|broke\s+up)|USSR\s+(?:dissolved|"
        r"collapsed|fell)|Germany\s+(?:was\s+)?reunif\w+|World\s+War\s+(?:II|2|Two)\s+ended)"
        r"|\bat\s+the\s+end\s+of\s+(?P<y>World\s+War\s+(?:II|2|Two))\b",
        about=r"\bBerlin\s+Wall\b",
    ),
    _fact(
        "Germany reunified in 1990",
        r"\breunifi\w*\b[^.\n]{0,30}?\bin\s+(?P<x>1989)\b",
    ),
)

# a sentence that contrasts, or reports a belief or a look, rather than asserts
_CONTRAST = re.compile(
    r"\b(?:unlike|rather\s+than|instead\s+of|not\s+by|neighbou?rs?|surrounding|other\s+than|"
    r"but|whereas|while|although|though|most\s+of|rest\s+of|except|"
    r"think|thinks|thought|believe[sd]?|assumed?|myths?|misconceptions?|mistak\w*|confus\w*|"
    r"people\s+say|often\s+called|seems?|looks?\s+like)\b",
    re.IGNORECASE,
)


def false_world_claim(text: str, question: str = "") -> str | None:
    """The first claim a reply asserts against a settled fact of the table, or None."""
    both = question + "\n" + text
    for fact in FACTS:
        if fact.about is not None and not fact.about.search(both):
            continue
        for m in fact.claim.finditer(text):
            if fact.wrong is not None and not fact.wrong(m):
                continue
            at = next(m.start(g) for g in ("x", "y", "z", "w", "b", "m", "n") if _has(m, g))
            sentence = re.split(r"[.!?\n]", text[: m.start()])[-1] + text[m.start() : m.end()]
            if is_negated(text, at) or is_believed(text, m.start()) or _CONTRAST.search(sentence):
                continue
            return m.group(0)
    return None


def _has(m: re.Match[str], group: str) -> bool:
    return group in m.re.groupindex and m.group(group) is not None
