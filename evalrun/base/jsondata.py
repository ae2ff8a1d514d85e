"""The type of JSON and YAML data at evalrun's edges, and of record fragments kept as written.

A `JSONObject` is an object as it is read from or written to a file, a request body or a response
(a contract's knobs, a suite item's messages and tools, an extra request body, a `--json` report),
before it becomes one of evalrun's models or after it left one. Its values are whatever JSON
holds, so they are `Any`: code that needs a field's type validates it into a model
(store/records.py, serving/contract.py, suite/load.py) rather than trusting the dict.

`AsWritten[SomeTypedDict]` is a field of a stored record whose shape evalrun defines (a bisect's
culprits, run.json's provenance): reading checks it against the TypedDict (a missing or mistyped
key is a ValidationError), and the dict is kept and written back exactly as it was read, key order
and number spelling included, so a stored record re-writes byte for byte.

`SCHEMA_TYPES` says which parsed JSON values each JSON Schema type admits (the json grader's
`required` types, a tool call's parameter types).

`loads` and `json_bytes` are the fast JSON evalrun reads response bodies and writes token traces
with (orjson; a body with logprobs holds thousands of small objects).

Nothing here imports from evalrun: any layer may use it.
"""

from __future__ import annotations

import gc
import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeAlias, TypeVar, cast

import orjson
from pydantic import PlainSerializer, TypeAdapter, ValidatorFunctionWrapHandler, WrapValidator

JSONObject: TypeAlias = dict[str, Any]

# What each JSON Schema type admits of a parsed value: a bool is no number, an integer is one
SCHEMA_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
    "any": lambda v: True,
}

T = TypeVar("T")


def _checked_as_is(value: object, handler: ValidatorFunctionWrapHandler) -> object:
    handler(value)  # raises ValidationError when the shape is wrong
    return value


_KEEP = (WrapValidator(_checked_as_is), PlainSerializer(lambda value: value, return_type=Any))
AsWritten = Annotated[T, *_KEEP]
_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def as_written(kind: type[T], data: object) -> T:
    """`data` checked against `kind` (a TypedDict) and returned as it is, key order kept."""
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        spec: Any = Annotated[kind, *_KEEP]
        adapter = _ADAPTERS[kind] = TypeAdapter(spec)
    return cast(T, adapter.validate_python(data))


def loads(data: bytes | str) -> Any:
    """JSON text parsed by orjson (~3x faster than json on a response body with logprobs).

    What orjson refuses and json accepts goes to json, so both accept the same texts: a lone
    surrogate an engine escapes as `\\ud800` (half of a character in a token), NaN and Infinity,
    a byte-order mark. Invalid JSON raises json's JSONDecodeError (or UnicodeDecodeError for bytes
    that are not UTF-8), as json.loads does. One difference: an integer past 64 bits is read as
    a float, so this reads response bodies and token traces, where none is expected; records a
    user's values ride in (a contract's seed) are read with json. A text nested deeper than
    1,024 levels, or holding a number past a float's range, is invalid JSON here.
    """
    with collector_paused():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            # What json would read past orjson's limits is refused here too: a text nested
            # deeper than 1,024 levels (json recurses until RecursionError) and a number no
            # float holds (a 400-digit integer: an OverflowError wherever it is used).
            if str(exc).startswith(_REFUSED):
                raise json.JSONDecodeError(str(exc).split(":")[0], "", 0) from None
            try:
                return json.loads(data)
            except RecursionError:
                raise json.JSONDecodeError("nested too deep", "", 0) from None


_REFUSED = ("depth limit exceeded", "number is infinity")


# Escaped in every JSON line evalrun writes: lone surrogates (not encodable as UTF-8), and the
# separators str.splitlines() breaks at that json.dumps leaves raw (it escapes \x0b \x0c \x1c-\x1e
# itself): NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR. A consumer splitting with splitlines() then
# reads one record a line. They can only occur inside strings, where the escape is equivalent.
_ESCAPED = re.compile("[\ud800-\udfff\x85\u2028\u2029]")


def json_text(data: Any) -> str:
    """json.dumps(ensure_ascii=False) that stays encodable and one line to any line splitter:
    lone surrogates and the splitlines() separators json.dumps leaves raw become escapes. It
    writes JSON only: a NaN or infinite number (which json.dumps spells NaN / Infinity, and no
    strict parser reads) is written as null, as orjson writes it."""
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: the rare case pays for the walk
        text = json.dumps(finite(data), ensure_ascii=False, allow_nan=False)
    return _ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def finite(data: Any) -> Any:
    """`data` with every NaN or infinite float (anywhere in its dicts, lists and tuples) None."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [finite(v) for v in data]
    return data


# What orjson leaves raw that json_text escapes: NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR (orjson
# escapes the control characters itself and refuses lone surrogates).
_RAW_SEPARATORS = re.compile(rb"\xc2\x85|\xe2\x80[\xa8\xa9]")  # their UTF-8 bytes


def json_bytes(data: Any) -> bytes:
    """json_text(data) in compact form as UTF-8, by orjson when it can (a token trace is a
    thousand small lists: ~8x faster). The same rules: a text with a lone surrogate or a line
    separator is written by json_text. Finite numbers only (orjson writes NaN as null)."""
    try:
        out = orjson.dumps(data)
    except TypeError:  # a lone surrogate: orjson will not write it
        return json_text(data).encode("utf-8")
    if _RAW_SEPARATORS.search(out):
        return json_text(data).encode("utf-8")
    return out


_pause_lock = threading.Lock()
_pauses = [0, False]  # pauses under way, and whether the collector ran before the first


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while JSON's many small objects pile up (none is in a
    cycle). A collection in the middle of a parse walks the half-built tree and moves it to an
    older generation, and enough of those trigger a walk of the whole heap: with logprobs on,
    that was most of what capture cost a run, and it doubled the time `compare` took to load
    two runs' tokens. Pauses nest and may overlap across threads; the last to end restores the
    collector as the first found it."""
    with _pause_lock:
        if _pauses[0] == 0:
            _pauses[1] = gc.isenabled()
            gc.disable()
        _pauses[0] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses[0] -= 1
            if _pauses[0] == 0 and _pauses[1]:
                gc.enable()
