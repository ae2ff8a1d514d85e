"""One OpenAI-compatible endpoint, as a client sees it.

client.py sends one chat request with retries and turns the reply (or the failure) into a
`Response` (response.py); diagnose.py names what a response or an error says about the serving
side (a reasoning parser leaving `content` empty, a tool_choice 400, ...). Nothing here knows
about suites, grading or runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalrun.endpoint.client import (
        Attempt,
        RequestFailed,
        RetryPolicy,
        chat_attempt,
        error_message,
        list_models,
        make_client,
        pick_model,
    )
    from evalrun.endpoint.diagnose import diagnose_error, diagnose_response
    from evalrun.endpoint.options import normalise_endpoint
    from evalrun.endpoint.response import (
        ItemError,
        Response,
        ToolCall,
        Usage,
        example_to_response,
    )

__all__ = [
    "Attempt",
    "ItemError",
    "RequestFailed",
    "Response",
    "RetryPolicy",
    "ToolCall",
    "Usage",
    "chat_attempt",
    "diagnose_error",
    "diagnose_response",
    "error_message",
    "example_to_response",
    "list_models",
    "make_client",
    "normalise_endpoint",
    "pick_model",
]


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for: the store and compare read the record
    types (response.py, logprobs.py) and must not load the client (asyncio, the HTTP stack)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from evalrun.endpoint import client, diagnose, options, response

    return next(getattr(m, name) for m in (client, diagnose, options, response) if hasattr(m, name))
