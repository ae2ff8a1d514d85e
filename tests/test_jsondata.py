"""The fast JSON (orjson) reads and writes exactly what the standard json does."""

from __future__ import annotations

import gc
import json
import threading

import pytest

from evalrun.base.jsondata import collector_paused, json_bytes, json_text, loads


@pytest.mark.parametrize(
    "text",
    [
        b'{"token": "\\ud83d", "logprob": -0.5}',  # a lone surrogate: orjson refuses it
        b'{"a": "\\udc00x"}',
        b'{"a": NaN, "b": -Infinity}',
        b'\xef\xbb\xbf{"bom": 1}',
        b'{"ok": [1, 2.5, "\xc3\xa9"]}',
        '{"str": "input"}',
    ],
)
def test_loads_reads_what_json_reads(text):
    got, want = loads(text), json.loads(text)
    assert json.dumps(got) == json.dumps(want)  # NaN != NaN: compared as text


@pytest.mark.parametrize("text", [b"{", b"", b"<html>", b'{"a": 1}x'])
def test_loads_refuses_what_json_refuses(text):
    with pytest.raises(json.JSONDecodeError):
        loads(text)


@pytest.mark.parametrize(
    "data",
    [
        {"tokens": [[" w", -0.1234, [[" w", -0.1234], ["é", -2.0]]]]},
        {"t": "a\u2028b\u2029c\x85d"},  # line separators: escaped, as json_text does
        {"t": "\ud800"},  # a lone surrogate: orjson will not write it
        {"t": "\x0b\x1c\n"},
    ],
)
def test_json_bytes_is_json_text_compacted(data):
    out = json_bytes(data)
    assert json.loads(out) == json.loads(json_text(data)) == data
    assert len(out.decode("utf-8").splitlines()) == 1


def test_collector_pauses_nest_across_threads_and_restore_it():
    assert gc.isenabled()
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    with collector_paused():
        worker.start()
        inside.wait(5)
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other pause is still under way
    release.set()
    worker.join()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()


def test_an_integer_past_64_bits_is_read_as_a_float():
    """The one difference from json, documented: why loads reads only bodies and traces."""
    assert loads(b'{"n": 123456789012345678901234567890}') == {"n": 1.2345678901234568e29}
