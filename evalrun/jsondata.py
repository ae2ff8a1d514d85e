"""The type of JSON and YAML data at evalrun's edges.

A `JSONObject` is an object as it is read from or written to a file, a request body or a response
(run.json's contract and provenance, a suite item's messages and tools, an extra request body, a
`--json` report), before it becomes one of evalrun's models or after it left one. Its values are
whatever JSON holds, so they are `Any`: code that needs a field's type validates it into a model
(store/records.py, serving/contract.py, suite/load.py) rather than trusting the dict.

Nothing here imports from evalrun: any layer may use it.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JSONObject: TypeAlias = dict[str, Any]
