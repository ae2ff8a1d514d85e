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

Nothing here imports from evalrun: any layer may use it.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias, TypeVar, cast

from pydantic import PlainSerializer, TypeAdapter, ValidatorFunctionWrapHandler, WrapValidator

JSONObject: TypeAlias = dict[str, Any]

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
