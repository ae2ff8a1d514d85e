"""Side claims a grader can check exactly, beside an answer that passed.

A value restated in another unit ("0 °C, which is 32 °F", "212 °F (100 °C)", "72 km/h, or
about 45 mph") is the same quantity or it is not; a number said to be odd, even or prime ("2,
the only odd prime") is or it is not. When the claim is false, a careful grader fails the
reply, whatever its answer. Only pairs joined as equivalents are read as conversions ("not 0 °F
but 32 °F" or "0 °C or 4 °C" compare two values, they do not convert one), and a claim denied
("9 is not prime") is not asserted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_NUM = r"[-−–]?\d+(?:[.,]\d+)?"

# each unit's name forms, and how to turn a value in it into its base unit
_UNITS: dict[str, tuple[str, str, Callable[[float], float]]] = {
    # unit: (pattern, dimension, to base)
    "C": (r"°\s?C\b|degrees? Celsius\b|℃", "temperature", lambda v: v),
    "F": (r"°\s?F\b|degrees? Fahrenheit\b|℉", "temperature", lambda v: (v - 32) * 5 / 9),
    "K": (r"K\b(?!m)|kelvins?\b", "temperature", lambda v: v - 273.15),
    "km": (r"km\b|kilomet(?:er|re)s?\b", "length", lambda v: v * 1000),
    "mi": (r"mi\b|miles?\b", "length", lambda v: v * 1609.344),
    "m": (r"m\b(?![/²³])|met(?:er|re)s?\b", "length", lambda v: v),
    "ft": (r"ft\b|feet\b|foot\b", "length", lambda v: v * 0.3048),
    "kmh": (r"km/h\b|kph\b|kilomet(?:er|re)s? per hour\b", "speed", lambda v: v / 3.6),
    "mph": (r"mph\b|miles per hour\b", "speed", lambda v: v * 0.44704),
    "ms": (r"m/s\b|met(?:er|re)s? per second\b", "speed", lambda v: v),
    "kg": (r"kg\b|kilograms?\b", "mass", lambda v: v),
    "lb": (r"lbs?\b|pounds?\b", "mass", lambda v: v * 0.45359237),
}
_UNIT = "|".join(f"(?P<{name}{{i}}>{pat})" for name, (pat, _, _) in _UNITS.items())
_ABOUT = r"(?:about|approximately|approx\.?|roughly|around|nearly|almost|~|≈)"
# the joins that restate one quantity: a bracket, "which is", "i.e.", "or", "=", "→"
_JOIN = (
    rf"\s*(?:\(\s*(?:=|{_ABOUT}|i\.?e\.?,?|or)?\s*|,?\s*(?:which is|that is|i\.?e\.?|or|"
    rf"equivalent to|the same as)\s*(?:{_ABOUT}\s*)?|\s*(?:=|≈|→|->)\s*)"
)
_PAIR = re.compile(
    rf"(?<![\w.,])(?P<a>{_NUM})\s?(?:{_UNIT.format(i=1)})(?P<join>{_JOIN})(?P<b>{_NUM})\s?"
    rf"(?:{_UNIT.format(i=2)})",
    re.IGNORECASE,
)


def _which(m: re.Match[str], i: int) -> str:
    return next(name for name in _UNITS if m.group(f"{name}{i}") is not None)


def _number(text: str) -> float:
    return float(text.replace("−", "-").replace("–", "-").replace(",", "."))


def _slack(written: str, to_base: Callable[[float], float]) -> float:
    """Half a unit of the written value's last place, in the base unit."""
    places = len(re.split(r"[.,]", written)[1]) if re.search(r"[.,]", written) else 0
    half = 0.5 / 10**places
    return abs(to_base(half) - to_base(0.0))


def false_conversion(text: str) -> str | None:
    """The first value a reply restates in another unit by a false conversion, or None."""
    for m in _PAIR.finditer(text):
        one, two = _which(m, 1), _which(m, 2)
        _, dim_a, base_a = _UNITS[one]
        _, dim_b, base_b = _UNITS[two]
        if one == two or dim_a != dim_b:
            continue
        a, b = base_a(_number(m["a"])), base_b(_number(m["b"]))
        slack = _slack(m["a"], base_a) + _slack(m["b"], base_b)
        if re.search(_ABOUT, m["join"], re.IGNORECASE):
            slack += 0.03 * max(abs(a), abs(b)) + (1.0 if dim_a == "temperature" else 0.0)
        if abs(a - b) > slack + 1e-9:
            return m.group(0)
    return None


# "2, the only odd prime", "9 is a prime", "15 is an even number": a number given a property
# the arithmetic settles
_PROPERTY = re.compile(
    r"(?<![\w.,-])(?P<n>\d{1,9})(?:,\s*|\s+is\s+|\s+—\s+)(?:also\s+)?(?:the\s+(?:only|smallest|"
    r"largest|first|one)\s+|an?\s+|one\s+)?(?P<adj>odd|even|prime)\b"
    # the property ends the phrase ("odd prime.", "even number, so"): "5, even though ..." is no claim
    r"(?=(?:\s+(?:prime|number|integer))?\s*(?:[.,;:!?)]|$|\s+(?:and|but|so|since|because)\b))",
    re.IGNORECASE,
)


def _prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def false_number_claim(text: str) -> str | None:
    """The first property a reply gives a number that the number does not have, or None."""
    for m in _PROPERTY.finditer(text):
        n, adj = int(m["n"]), m["adj"].lower()
        holds = {"odd": n % 2 == 1, "even": n % 2 == 0, "prime": _prime(n)}[adj]
        if not holds:
            return m.group(0)
    return None
