"""Garble detector: each signal, the never-garble cases, check_response, the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evalrun.base.errors import UsageError
from evalrun.cli import main
from evalrun.endpoint.response import Response
from evalrun.grading.garble import (
    THRESHOLD,
    check_response,
    detect,
    expected_scripts,
    explain_text,
    parse_expect,
)
from evalrun.grading.garble.lexicon import pair_association

# ------------------------------------------------------------------ each signal


def _names(text: str, expect=None) -> list[str]:
    return [r.split(" ", 1)[0] for r in detect(text, expect).reasons]


@pytest.mark.parametrize(
    "text",
    [
        "!" * 60,
        "#" * 80,
        "<pad>" * 20,
        "care" * 25,
        "'t" * 30,
        "<pad> " * 20,
        "The answer is " + "0" * 60,
        "gen,gen,gen,gen,gen,gen,gen,gen,gen,gen,gen",
    ],
)
def test_floods_are_garble(text):
    v = detect(text, ["en"])
    assert v.garbled, v
    assert any(r.startswith(("flood", "special")) for r in v.reasons)


def test_flood_reason_names_the_unit_and_count():
    v = detect("Sure! " + "yond" * 30, ["en"])
    assert any("'yond' repeated 30 times" in r for r in v.reasons), v.reasons


def test_script_mixing_against_the_expected_scripts():
    soup = "Mh giàu され rodas reliablyacheteurδε Są дляhe ت 的ing λόγο переhap ของ tí"
    v = detect(soup, ["en"])
    assert v.garbled and any(r.startswith("script") for r in v.reasons), v
    assert "cyrillic" in " ".join(v.reasons)


def test_the_same_script_is_fine_when_expected():
    ru = "Москва — столица России и самый большой город страны. В ней живёт около 13 миллионов человек."
    assert not detect(ru, ["ru"]).garbled
    assert not detect(ru, None).garbled
    v = detect(ru, ["zh"])  # declared Chinese, answered Russian: scripts say so
    assert any(r.startswith("script") for r in v.reasons)


def test_token_soup_of_run_together_fragments():
    soup = (
        "Theotene-rapistsadaysisburyplotlib ndarray torchvisionuggageanthaategy ofapagos "
        "pytestrapistsrapistsQA tenegIncorporating therapists medical actersadaysisbury "
        "spotategoriesantharapists hovahplotlibrapists itarmaceutical"
    )
    v = detect(soup, ["en"])
    assert v.garbled, v


def test_no_function_words_in_running_text():
    soup = (
        "Attach Graves profits builds agro woods groceries dissatis Ishmael gloves violating "
        "suspense Ident conciliation mins fitting raz Sunshine vernacular trademarks"
    )
    assert "function-words" in _names(soup, ["en"])


def test_replacement_characters_and_mojibake():
    assert detect("Hello \ufffd\ufffd world \ufffd", ["en"]).garbled
    moji = "ÐŸÑ€Ð¸Ð²ÐµÑ‚, ÐºÐ°Ðº Ð´ÐµÐ»Ð°? Ð¯ Ð»ÑŽÐ±Ð»ÑŽ Ñ‡Ð¸Ñ‚Ð°Ñ‚ÑŒ ÐºÐ½Ð¸Ð³Ð¸."
    v = detect(moji, ["ru"])
    assert v.garbled and any(r.startswith("mojibake") for r in v.reasons), v
    assert "mojibake" in _names("CafÃ© au lait, crÃ¨me brÃ»lÃ©e", ["fr"])


def test_control_characters():
    v = detect("The answer\x00 is\x1b 42\x07 and\x00 more\x08", ["en"])
    assert v.garbled and any(r.startswith("control") for r in v.reasons), v


def test_collapse_after_a_correct_prefix_is_located():
    head = (
        "Photosynthesis is the process by which green plants use sunlight, water and carbon "
        "dioxide to make glucose and oxygen. It happens in the chloroplasts of the leaves, "
        "where the green pigment chlorophyll captures the energy of light. "
    )
    tail = (
        "opacityarers transplantsemon oglyph pk subsequ dissemin includerican noqaungen "
        "ivore removucaly uuidericaninctions pkerican ctypes pathlib emenarersadr suscept "
        "zzlearers ceptserederican subsequcembererican " * 2
    )
    v = detect(head + tail, ["en"])
    assert v.garbled, v
    assert any("(clean before)" in r for r in v.reasons), v.reasons
    assert not detect(head, ["en"]).garbled


# ------------------------------------------------------------------ never garble


NEVER = [
    (
        "ru",
        "Фотосинтез — это процесс, при котором растения превращают углекислый газ и воду в "
        "глюкозу и кислород, используя энергию солнечного света.",
    ),
    ("zh", "中国的首都是北京。北京是中国的政治、文化和国际交往中心，有三千多年的建城史。"),
    ("ja", "日本の首都は東京です。東京は世界でも有数の大都市で、約1400万人が住んでいます。"),
    (
        "code",
        "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n"
        "    return a\n\n# ==========================================\nprint(fib(10))",
    ),
    (
        "json",
        '{"city": "Москва", "userName": "jdoe42", "matrix": [[0, 0, 0, 0, 0, 0, 0, 0]], '
        '"sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}',
    ),
    (
        "math",
        "A = πr² = π · 3² ≈ 28.27; Σ_{k=1}^{n} k = n(n+1)/2; 1/3 = 0.3333333333333333; "
        "α + β + γ = 180°; λ = h / p",
    ),
    (
        "table",
        "| Planet | Diameter (km) |\n|--------|---------------|\n| Mercury | 4,879 |\n"
        "| Venus | 12,104 |\n| Earth | 12,742 |\n| Mars | 6,779 |",
    ),
    ("en", "Cats are cute. Cats are independent. Cats are clean. " * 8),
    ("en", "The capital of Australia is Sydney, which is also its largest city."),
    ("en", "Yes yes yes yes yes yes yes yes yes yes."),
    ("en", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20"),
    (
        "de",
        "Die Donaudampfschifffahrtsgesellschaft und die Rechtsschutzversicherungsgesellschaften "
        "sind bekannte Beispiele für lange deutsche Wörter.",
    ),
]


@pytest.mark.parametrize(
    "lang,text", NEVER, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(NEVER)]
)
def test_never_garble(lang, text):
    expect = {
        "code": ["en", "code"],
        "json": ["en", "json"],
        "math": ["en", "math"],
        "table": ["en", "table"],
    }.get(lang, [lang])
    v = detect(text, expect)
    assert not v.garbled, v


def test_sentence_loops_add_a_little_but_never_flag_alone():
    loop = "I am an AI assistant and I am here to help you with your questions. " * 12
    v = detect(loop, ["en"])
    assert not v.garbled
    assert any(r.startswith("repetition") for r in v.reasons), v.reasons


def test_empty_text_is_clean():
    assert detect("", ["en"]).score == 0.0
    assert not detect("   \n", None).garbled


# ------------------------------------------------------------------ expectations and channels


def test_expected_scripts_from_languages():
    assert expected_scripts(["ru"]) == {"latin", "cyrillic"}
    assert {"han", "hiragana", "katakana"} <= expected_scripts(["ja"])
    assert expected_scripts(["en", "code"]) == {"latin"}
    assert expected_scripts(None) is None
    assert expected_scripts(["zh-CN"]) >= {"han"}


def test_parse_expect_refuses_unknown_codes():
    assert parse_expect("en, ru") == ["en", "ru"]
    assert parse_expect(None) is None
    with pytest.raises(UsageError, match="klingon"):
        parse_expect("en,klingon")
    # any language CLDR knows is accepted, and gets its script (Gurmukhi, Sinhala, Ge'ez)
    assert parse_expect("pa,si,am") == ["pa", "si", "am"]
    assert expected_scripts(["si"]) == frozenset({"latin", "sinhala"})


def test_check_response_reports_the_worse_channel():
    resp = Response(content="The answer is 42.", reasoning="yond" * 40)
    got = check_response(resp, ["en"])
    assert got is not None and got.channel == "reasoning" and got.garbled is True
    assert got.reasons and got.signals[0].family == got.kind
    clean = check_response(Response(content="The answer is 42."), ["en"])
    assert clean is not None and clean.channel == "content" and clean.garbled is False
    assert check_response(Response(content=None, reasoning="  "), ["en"]) is None
    assert check_response(Response(), None) is None


def test_explain_text_is_readable():
    v = detect("!" * 50, ["en"])
    text = explain_text("!" * 50, v, ["en"])
    assert text.startswith("GARBLED (flood): score 1.00")
    assert "'!' repeated 50 times" in text


# ------------------------------------------------------------------ the command


def test_cli_exit_codes_and_json(capsys):
    assert main(["garble", "!" * 40, "--expect", "en", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"garbled", "score", "kind", "reasons"} and out["garbled"] is True
    assert main(["garble", "The capital of France is Paris."]) == 0
    assert capsys.readouterr().out.startswith("clean: score")
    assert main(["garble", "x", "--expect", "xx"]) == 2


def test_cli_reads_stdin():
    proc = subprocess.run(
        [sys.executable, "-m", "evalrun", "garble", "-", "--expect", "ru"],
        input="Москва — столица России.",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("clean")


def test_expected_for_uses_the_items_languages_else_the_category_default():
    from evalrun.grading.garble import expected_for

    assert expected_for(["ru"], "multilingual") == ["ru"]
    assert expected_for(["en", "code"], "structured") == ["en", "code"]
    assert expected_for(None, "code") == ["en", "code"]
    assert expected_for(None, "structured") == ["en", "json"]
    assert expected_for(None, "tool") == ["en", "json"]
    assert expected_for(None, "math") == ["en", "math"]
    assert expected_for(None, "factual") == ["en"]
    assert expected_for([], "logic") == ["en"]
    assert expected_for(None, "multilingual") is None
    # the defaults make the detector stricter: an English answer may not drift into Cyrillic
    drift = "The capital of France is Paris, and Париж это столица Франции, конечно."
    assert not detect(drift, None).garbled
    assert detect(drift, expected_for(None, "factual")).garbled


def test_a_fluent_answer_ending_in_glued_fragments_is_collapse():
    head = "Photosynthesis is the process by which green plants turn light into sugar, "
    verdict = detect(head + "storing energy in ploqarisbumentsadays", ["en"])
    assert verdict.garbled and any(r.startswith("tail") for r in verdict.reasons), verdict
    # names, product names and a word cut at the token limit are not collapse
    names = "as Wilhelmina Crabtree explained to the village council"
    assert not detect(head + names, ["en"]).garbled
    assert not detect("Popular libraries: scikit-learn, PyTorch and TensorFlow.", ["en"]).garbled
    assert not detect(head + "storing energy in carbohydr", ["en"]).garbled


def test_rare_real_words_are_words():
    """A real SmolLM2 answer (core factual-007) ending in words the old spelling model found odd
    (reported as false alarms: "enzymes", "bandwidth", "pathway"): they are in the word lists,
    finished or cut."""
    answer = (
        "The primary gas used by green plants for photosynthesis is carbon dioxide (CO2). "
        "This process occurs in the chloroplasts of plant cells, where it's converted into "
        "glucose and oxygen through a complex biochemical pathway"
    )
    assert not detect(answer + ".", ["en"]).garbled
    assert not detect(answer + '."', ["en"]).garbled
    assert not detect(answer, ["en"]).garbled
    rare = (
        "Enzymes speed up each step of a metabolic pathway, and network bandwidth limits how "
        "fast the otorhinolaryngologist's scans arrive"
    )
    assert not detect(rare, ["en"]).garbled
    # glued fragments at the end still are a collapse
    assert detect(answer + " noqarapistsisbury", ["en"]).garbled


def test_a_loop_of_one_word_running_to_the_end_is_garble():
    loop = "The answer is simple: the sky scatters blue light " + "opacity " * 6
    verdict = detect(loop.strip(), ["en"])
    assert verdict.garbled and verdict.kind == "loop", verdict
    assert any(r.startswith("loop") for r in verdict.reasons), verdict
    assert not detect("It was very very very very very very cold, so we stayed in.", ["en"]).garbled


def test_a_long_phrase_looped_is_a_loop_but_sentences_said_again_are_not():
    """Units of up to 12 tokens loop (a 9-token phrase of real sglang-era output, 5 times back to
    back), and glued units of up to 16 characters; a unit that ends a sentence is a sentence
    said again, which only the repetition signal weighs. Each case was clean before."""
    phrase = "found de lageión de la queetyá haciendo inc Seces "
    verdict = detect(
        "Y foundilitiesued ayudur a lageión de la queetyá haciendo inc Seces " + phrase * 5, ["es"]
    )
    assert verdict.garbled and verdict.kind == "loop", verdict  # (score 0 before)
    glued = "Hmm, lords lords " + "lordsquotations" * 4 + "pumpsquotationsenance"
    assert any(r.startswith("flood") for r in detect(glued, ["en"]).reasons)
    said_again = "Cats are cute and they are very independent animals. " * 6
    assert not detect(said_again, ["en"]).garbled


# ------------------------------------------------------------------ reported misses

# Garbled replies users reported the detector passing as clean (garbled_field.jsonl quotes them
# too), one per family.
REPORTED_MISSES = [
    ("multi-script", "The capital of France is Paris. 了 ẩ ности 了 ção ত ść ত ครับ ő ção ত ইউ ครับ"),
    ("multi-script", "Mh giàu され rodas reliablyacheteurδε Są"),
    ("salad", "Here can create to and the of by the in to and can create for of is the"),
    ("loop", "C# | C# | C32. C#的. (C# ammaegat C# | C#的 C32 …"),
    ("flood", ",,..,,,,ß,,.s,ß,gen,gen,,,,"),
    (
        "non-words",
        " wisacke wislished\n wisStackAs wisinkelilarly the wisUT the wisAP applications "
        "wisOf wisOr wisOr wisOr wisOr",
    ),
    ("non-words", " wisacke wisacke wisollaouds other_ wis"),
]


@pytest.mark.parametrize("expect", [None, ["en"]], ids=["no-expect", "en"])
@pytest.mark.parametrize("kind,text", REPORTED_MISSES, ids=[k for k, _ in REPORTED_MISSES])
def test_reported_misses_are_caught_with_or_without_expect(kind, text, expect):
    verdict = detect(text, expect)
    assert verdict.garbled and verdict.kind == kind, verdict


@pytest.mark.parametrize(
    "text",
    [
        "ciel, ciel, ciel, ciel, ciel, ciel, ciel, ciel, ciel, ciel",
        "A:\nA:\nA:\nA:\nA:\nA:\nA:\nA:",
        "Step 1: Add a logo.\n" + "".join(f"Step {i}: Add a contact form.\n" for i in range(2, 12)),
        "北京是一名美丽的" + "美丽美派经历的一种" * 6,  # Chinese words looped, no spaces between
    ],
)
def test_a_small_models_own_loops_are_reported_as_loops(text):
    verdict = detect(text, ["en"])
    assert verdict.garbled and verdict.kind == "loop" and verdict.loop, verdict


# The reference's own loops on core-v5 that were called engine damage on a healthy lane: a
# misspelt word looped (non-words, from the made-up word counted 15 times) and a word looped
# inside markdown bold in a code answer (a glued flood).
STRUCT_009 = (
    "```python\nimport json\n\ndef order_json(order_id, items, unit_price):\n"
    '    json_data = {\n        "order_id": order_id,\n        "items": items,\n'
    '        "units_price": unit_price\n    }\n    json_data["items"] = json.dumps(items)\n'
    '    json_data["total"] = sum(item["quantity"] * item["units_price'
    + "**unit_price" * 4
    + "**total" * 29
    + "**tota"
)


@pytest.mark.parametrize(
    "text,expect",
    [
        ("Страна, страна, " + ", ".join(["страная"] * 15), None),
        (STRUCT_009, ["en", "json"]),
        ("The answer is " + "**total" * 12, ["en"]),
        ("-Cuban" * 5, None),
    ],
    ids=["misspelt-word", "bold-code", "bold-prose", "hyphen"],
)
def test_a_healthy_models_loops_through_a_slip_or_markup_are_loops(text, expect):
    verdict = detect(text, expect)
    assert verdict.garbled and verdict.kind == "loop", verdict


@pytest.mark.parametrize(
    "text",
    [
        "Привет " + " ".join(["стрынка"] * 14),  # a made-up word no word of the text explains
        "ab**cd" * 6,  # markup between fragments, not words
        "zzq**" * 6,
    ],
)
def test_made_up_words_looped_stay_engine_damage(text):
    verdict = detect(text, None)
    assert verdict.garbled and verdict.kind != "loop", verdict


def test_tool_call_arguments_and_json_strings_are_judged_as_prose():
    from evalrun.endpoint.response import ToolCall

    soup = "wisacke wislished wisStackAs wisinkelilarly the wisUT wisAP wisOf wisOr wisOr"
    resp = Response(content="", tool_calls=[ToolCall(name="search", arguments={"query": soup})])
    got = check_response(resp, ["en"])
    assert got is not None and got.garbled and got.channel == "tool_calls.search", got
    fine = Response(tool_calls=[ToolCall(name="search", arguments={"query": "weather in Paris"})])
    assert not check_response(fine, ["en"]).garbled
    answer = json.dumps({"name": "Ivan", "bio": soup})
    assert detect(answer, ["en", "json"]).garbled
    assert not detect(
        json.dumps({"city": "Москва", "note": "a short trip"}), ["en", "json"]
    ).garbled


def test_the_field_libraries_load_only_when_a_text_needs_them():
    """Importing the detector loads no word list or language model (a run pays once, at its first
    answer); judging an English text then loads English's lists, read from wordfreq's data files
    without importing wordfreq (its import costs more than the lists)."""
    code = (
        "import sys\n"
        "import evalrun.grading.garble as g\n"
        "from evalrun.grading.garble import lexicon\n"
        "print(sorted(m for m in ('wordfreq', 'pycld2', 'ftfy', 'langcodes') if m in sys.modules))\n"
        "g.detect('The capital of France is Paris, a city on the Seine, and it is known as the city "
        "of light for its role in the age of ideas.', ['en'])\n"
        "print(lexicon._bands.cache_info().currsize > 0, 'wordfreq' in sys.modules, "
        "'symspellpy' in sys.modules)\n"
        # the code, structured and tool categories' kinds are no languages to look up in CLDR
        "g.detect('def add(a, b):\\n    return a + b', ['en', 'code'])\n"
        "g.detect('{\"city\": \"Paris\", \"note\": \"a short trip\"}', ['en', 'json', 'csv'])\n"
        "print('langcodes' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # symspellpy's pair counts are read from its folder: its compiled module is never imported
    assert proc.stdout.split("\n")[:3] == ["[]", "True False False", "False"], proc.stdout


def test_word_pairs_english_avoids_are_salad_and_real_pairs_are_not():
    assert pair_association("of", "the") > 2  # written together far more often than by chance
    assert pair_association("the", "of") < -3  # almost never
    assert pair_association("zyxwv", "the") is None  # a word the counts lack says nothing
    salad = (
        "Photosynthesis turns light into sugar. The plant takes in water and carbon dioxide. "
        "work levels he than here disaster these scheme but should some admit were with article "
        "years opinions presence formal engine go begun different immediately portion the than"
    )
    verdict = detect(salad, ["en"])
    assert verdict.garbled and verdict.kind == "salad"
    assert any(r.startswith("word-order") and "`he than`" in r for r in verdict.reasons)
    for clean in (  # unusual order that English does write: headlines, verse, text-speak
        "Council approves budget after long night of talks; mayor hails deal as teachers win "
        "raise and parks get money for new trees along the river walk.",
        "Whose woods these are I think I know, his house is in the village though; he will not "
        "see me stopping here to watch his woods fill up with snow.",
        "ok so i tried what u said and it kinda worked but now the screen goes black for like 2 "
        "secs every time i open chrome is that normal or did i break something lol",
        # the reference engine's own answer to logic-016: capital letters that name towns
        "To solve this puzzle, I'll break it down:\n1. Town A is north of town B and south of "
        "town C.\n2. Town C is north of town B and south of town A.\n3. Therefore, the answer "
        "is 3.",
    ):
        verdict = detect(clean, ["en"])
        assert not verdict.garbled and not any(r.startswith("word-order") for r in verdict.reasons)


def test_words_a_number_stands_between_are_not_a_salad_pair():
    """`from 1 to 10, but` puts no `to but` in the text: vLLM's bf16 answer to code-016."""
    answer = (
        "This Python code prints the list of numbers from 1 to 10, but with a twist. It uses the "
        "`range` function to generate a sequence of numbers from 1 to 10, but with a step of 3. "
        'This is known as a "wrapping around" behavior.'
    )
    assert not detect(answer, ["en", "code"]).garbled
    soup = "Here can create to and the of by the in to and can create for of is the"
    assert detect(soup.replace(" in ", " in 3 "), ["en"]).kind == "salad"


def test_junk_inside_a_code_block_is_read_and_code_strings_stay_clean():
    head = "To solve it in Python:\n```python\ndef solve(a, b, c):\n    d = b * b - 4 * a * c\n"
    junk = "hin to ляWooradie esэ u y 份ar,unaק25heσμου,le тои, ,म18 egmenorn nsec .ycapit1 us nus"
    assert detect(head + junk, ["en"]).garbled
    greeting = (
        '```python\ngreetings = {"ru": "Привет, мир", "ja": "こんにちは", "el": "Γειά σου"}\n'
    )
    greeting += (
        'for lang, text in greetings.items():\n    print(f"{lang}: {text}")\n```\nEach prints.'
    )
    assert not detect(greeting, ["en"]).garbled


# ---------------------------------------------------------------- shapes and look-alikes

# Each row: a garbled shape, the clean text it could be taken for, and `expect`.

# Tokens and words: undecoded byte-level tokens, a JSON value that decays, long words glued with
# commas, function words alone, made-up Russian words, lone characters after a readable start.
TOKEN_AND_WORD_LOOK_ALIKES = [
    (  # a detokenizer that did not decode
        "SortingĠaĠlistĠinĠPythonĠisĠdoneĠwithĠsorted().ĊĊUseĠkey=forĠcustomĠorder.",
        "Il-Ġimgħa li għaddiet morna Ċirkewwa u mbagħad Għawdex bil-vapur.",
        None,
    ),
    (  # SentencePiece pieces in a short soup: a word start and a run of bare spaces
        "Deep 深 blue ▁sea sea waves 海海 ▁▁",
        "SentencePiece writes a space as ▁, so `▁the` and `▁cat` are tokens; a flat week: ▁▁▂▃▅",
        ["en"],
    ),
    (  # JSON in a text tool call, cut off while its value decays
        '<tool_call>\n{"name": "book", "arguments": {"note": "please reserveatomy '
        "tablinghood forprotes wisquently gorblen stradivoke plumptiously",
        '<tool_call>\n{"name": "book", "arguments": {"note": "a table for two at eight, '
        'near the window if possible"}}\n</tool_call>',
        ["en", "json"],
    ),
    (  # long words glued with commas
        "Results:,windowframecarpet,teachersoundmountain,quicklyharborpencil,gardenvoltage",
        "kubectl get deploy,sts,ds,svc -n prod shows every workload in the namespace.",
        ["en"],
    ),
    (  # function words and nothing else
        "the of. and to, in a; is that it for on. with as by the at; from or an of to in the "
        "and is a it that.",
        "It is what it is, and that is all there is to it, as far as I can tell.",
        ["en"],
    ),
    (  # made-up Russian words
        "Варонтика пресольные за мирдатые корплен, свобритая онешка траблите и плодинский "
        "восмерный дарпатель. Клирон валдеруют по мешенной стролке брамчаты сунерил.",
        "Москва — столица России и крупнейший город страны. Здесь находятся Кремль, "
        "Красная площадь и Большой театр, а метро перевозит миллионы людей каждый день.",
        ["ru"],
    ),
    (  # a readable start, then lone characters
        "The boiling point of water at sea level is 100 degrees Celsius. r 4 d\nk. s\tl e 2 j",
        "Solve for x: 2x + 3 = 7, so x = 2. Then y = 3x - 1 = 5 and z = x + y = 7.",
        ["en"],
    ),
]


# Language and layout: soup no language identifier places, romanization, letters glued to
# themselves, a Chinese word salad, code whose names became words, salad around `the.`, marks,
# blank-line gaps and empty bullets.
LANGUAGE_AND_LAYOUT_LOOK_ALIKES = [
    (  # soup pycld2 cannot place (it guesses Basque at best): its words are looked up
        "stownite-apeios dellaitersLow ninthinke only defend wegathore much xmondaytonnf wis "
        "cubileocity haguejoicezensimar mnem dumipy questionakersna eman",
        "Euskara Euskal Herriko hizkuntza da, eta munduko hizkuntza zaharrenetako bat dela "
        "uste da. Hiztun gehienak Gipuzkoan eta Bizkaian bizi dira.",
        None,
    ),
    (  # romanized Hindi pycld2 cannot place: shaped like words, so not looked up
        'stownite-apeios dellaitersLow,:")Envracti ninthinke only defend=wegathore much '
        "=XMondaytonnf wis cubileocity ( Haguejoicezensimar mnem Dumipy questionakersna *,eman",
        "Namaste dosto! Aaj hum baat karenge ki ghar par achhi chai kaise banate hain. Sabse "
        "pehle ek bartan mein paani garam kijiye, phir usmein adrak aur elaichi daal dijiye. "
        "Jab paani ubalne lage tab chai patti daaliye aur do minute tak pakne dijiye.",
        None,
    ),
    (  # pinyin with tone marks is romanization, not made-up words
        "Mh giàu され rodas reliablyacheteurδε Są дляhe ت 的ing λόγο переhap ของ tí",
        "Xièxie nǐ de bāngzhù! Wǒmen míngtiān zài túshūguǎn jiànmiàn ba. Rúguǒ nǐ yǒu "
        "shíjiān, wǒ xiǎng qǐng nǐ hē kāfēi.",
        None,
    ),
    (  # five letters glued to themselves inside words
        "rapists willrapistsrapistshovahuggageanthaantha  is",
        "The Baden-Baden spa and the couscous stand near Walla Walla both opened in 1952.",
        ["en"],
    ),
    (  # a Chinese answer that runs on as a salad of words with no particles
        "光合作用发生在植物细胞的叶绿体中。叶绿素吸收光能。家族立场宝宝驻产圣倒语言能量怪设计饭自治女性"
        "居然见到今年保留看动那床上报道出售媒体荷兰将城做到集体退出组合公告论",
        "光合作用发生在植物细胞的叶绿体中。叶绿素吸收光能，把水分解并释放出氧气，同时把二氧化碳"
        "转化为葡萄糖，这个过程为地球上几乎所有的生命提供了能量和氧气。",
        ["zh"],
    ),
    (  # a Python block whose names turned into words, against one cut at the token limit
        "```python\nimport csv\n\ndef total(path):\n    totals = {}\n    with race(path) as fh:\n"
        "        reported row in version.DictReader(fh):\n            totals[row['r']] = 1\n"
        "    return totals\n```",
        "```python\nimport csv\n\ndef total(path):\n    totals = {}\n    with open(path) as fh:\n"
        "        for row in csv.DictReader(fh):\n            totals[row['r'] += float(row['s",
        ["en", "code"],
    ),
    (  # ... and against a call the token limit cut (Python names the line that opened it)
        "```python\nimport csv\n\ndef total(path):\n    totals = {}\n    with race(path) as fh:\n"
        "        reported row in version.DictReader(fh):\n            totals[row['r']] = 1\n"
        "    return totals\n```",
        "```python\nimport json\n\nresult = compute(\n    alpha=1,\n    beta=2,\n    gamma=3,\n"
        "    delta=4,\n    eps",
        ["en", "code"],
    ),
    (  # ... and against a placeholder the reader fills in
        "Spending fell and factoriesyss cut jobs. The groundscit froze slowlymul while the "
        "money supply shrank and pricesria fell for several years in a row.",
        "```python\nimport openai\n\nclient = openai.OpenAI(\n    api_key=<YOUR_API_KEY>,\n)\n"
        "print(client.models.list())\n```",
        ["en"],
    ),
    (  # a sentence that ends in `the.` and pairs no English writes; a tag list after its label
        "Here is what you need to know. It sheds pour a the adult and cooler the. Called the "
        "set to water and inside of a place the narrow valve. Off the carry simple doing over "
        "a the. It was needed the of and in to the.",
        "tag cloud: travel japan kyoto temples autumn foliage ryokan onsen budget itinerary "
        "trains pass food ramen matcha solo",
        ["en"],
    ),
    (  # code-switching that pycld2 reads as English; soup's fragments are no language's words
        " wisacke wislished\n wisStackAs wisinkelilarly the wisUT the wisAP applications wisOf",
        "Le meeting de ce matin était un peu long, mais on a quand même fixé la deadline du "
        "sprint et le scope de la release.",
        None,
    ),
    (  # a one-line shell command is code, not soup
        "curl wisacke wislished wisStackAs wisinkelilarly wisUT wisAP wisOf wisOr wisOr wisOr",
        "grep -Eiw 'the|a|an|of|to|in|and|or|but' essay.txt | wc -l",
        None,
    ),
    (  # marks and nothing else, against a banner drawn in them
        "_-_-_---_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_------_-_---_-_----_-_-_--------_-_",
        "  _____  _    _  _____\n / ____|| |  | |/ ____|\n| (___  | |  | | |  __\n"
        " \\___ \\ | |  | | | |_ |\n ____) || |__| | |__| |\n|_____/  \\____/ \\_____|",
        None,
    ),
    (  # fragments scattered between gaps of blank lines, against a list spaced by one
        "\n\n\n\nTrue-L\n\n\n\n- a\n\n\n\nf\n\n\n\nun\n\n\n\n-1.\n\n\n\nRher\n\n\n\nR\n\n\nus",
        "Three tips:\n\n- Sleep at the same time.\n\n- Keep the room dark.\n\n- No screens late."
        "\n\nThat is all.",
        ["en"],
    ),
    (  # bullets with nothing after them, against JSON whose braces stand on their lines
        "* imp\n EMILo\n\n* imp\n**\n***\n**\n**\n**\n**\n**\n**\n**\n\n***\n**\n**\n**",
        '[\n  {\n    "a": 1\n  },\n  {\n    "a": 2\n  },\n  {\n    "a": 3\n  },\n  {\n'
        '    "a": 4\n  },\n  {\n    "a": 5\n  }\n]',
        ["en", "json"],
    ),
]


@pytest.mark.parametrize(
    "kind, text, expect",
    [
        ("non-words", "rapists willrapistsrapistshovahuggageanthaantha  is", ["en"]),
        (
            "non-words",
            "Spending fell and factoriesyss cut jobs. The groundscit froze slowlymul while the money "
            "supply shrank and pricesria fell for several years in a row.",
            ["en"],
        ),
        (
            "salad",
            "光合作用发生在植物细胞的叶绿体中。叶绿素吸收光能。家族立场宝宝驻产圣倒语言能量怪设计饭自治女性"
            "居然见到今年保留看动那床上报道出售媒体荷兰将城做到集体退出组合公告论",
            ["zh"],
        ),
        (
            "collapse",
            "```python\nimport csv\n\ndef total(path):\n    totals = {}\n    with race(path) as fh:\n"
            "        reported row in version.DictReader(fh):\n            totals[row['r']] = 1\n"
            "    return totals\n```",
            ["en", "code"],
        ),
        ("flood", "_-_-_---_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_------_-_---_-_----_-_-_--", None),
        (
            "flood",
            "\n\n\n\nTrue-L\n\n\n\n- a\n\n\n\nf\n\n\n\nun\n\n\n\n-1.\n\n\n\nR\n\n\nus",
            ["en"],
        ),
        ("flood", "* imp\n EMILo\n\n* imp\n**\n***\n**\n**\n**\n**\n**\n**\n**\n\n***\n**", ["en"]),
    ],
)
def test_language_and_layout_shapes_name_their_family(kind, text, expect):
    assert detect(text, expect).kind == kind


@pytest.mark.parametrize(
    "block",
    [
        # Python newer than the judging interpreter: PEP 695 aliases and generics, PEP 701 f-strings
        "type Point = tuple[float, float]\n\ndef dist(a: Point, b: Point) -> float:\n"
        "    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5\nprint(dist((0, 0), (3, 4)))",
        "def first[T](items: list[T]) -> T:\n    return items[0]\n\nprint(first([1, 2]))\n"
        "print(first(['a']))",
        "names = ['a', 'b']\nprint(f\"{', '.join(names)}\")\nprint(f\"{'\\n'.join(names)}\")\n"
        "x = 1\ny = 2",
        # a template, and pseudo-code, in a python fence
        "{% for user in users %}\n  <li>{{ user.name }}</li>\n{% endfor %}\nx = 1",
        "for each item in the list:\n    if item is larger than max:\n        set max to item\n"
        "return max",
        # a bug, not damage: one stray closing bracket (a healthy SmolLM2 answer, vLLM and sglang)
        'def reverse_string(input_str):\n    reversed_str = ""\n    for char in input_str):\n'
        '        reversed_str += char + " "\n    return reversed_str',
    ],
)
def test_python_blocks_that_do_not_parse_here_but_are_fine(block):
    assert not detect(f"```python\n{block}\n```", ["en", "code"]).garbled


@pytest.mark.parametrize(
    "text",
    [
        "Roses are red\n\n\n\nViolets are blue\n\n\n\nSugar is sweet\n\n\n\nAnd so are you\n\n\n\nThe end",
        "Part one\n\n---\n\nPart two\n\n---\n\nPart three\n\n---\n\nPart four\n\n---\n\nEnd\n\n---\n"
        "\n---\n\n---\n\n---",
        "* * *\n\nChapter 2\n\n* * *\n\nShe left at dawn.\n\n* * *",
    ],
)
def test_spaced_verse_and_section_rules_are_not_floods(text):
    assert not detect(text, ["en"]).garbled


def test_other_scripts_dropped_between_words_are_soup_but_a_glossary_is_not():
    soup = (
        "The treaty was signed in 1648 выход and ended the war 战争结束 between the states "
        "ความ of Europe, which then γράμμα rebuilt its trade 交易 routes."
    )
    glossary = (
        "Thank you in five languages:\n- Russian: спасибо\n- Chinese: 谢谢\n- Thai: ขอบคุณ\n"
        "- Greek: ευχαριστώ\n- Hindi: धन्यवाद"
    )
    assert detect(soup, ["en"]).garbled
    assert not detect(glossary, None).garbled


def test_data_and_names_are_not_soup():
    csv = 'id,name,city\n1,"Novak, Ana",Zagreb\n2,"Kim, Ji-woo",Busan\n3,"Ortiz, Luis",Quito'
    dump = "00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52\n" * 3
    names = "Its siblings are np.zeros, np.ones, np.empty, np.full and np.zeros_like."
    iupac = "Aspirin is 2-(acetyloxy)benzoic acid; caffeine is 1,3,7-trimethylpurine-2,6-dione."
    for text in (csv, dump, names, iupac):
        assert not detect(text, None).garbled, text
    assert not detect("ਸਤ ਸ੍ਰੀ ਅਕਾਲ, ਤੁਸੀਂ ਕਿਵੇਂ ਹੋ? ਮੈਂ ਠੀਕ ਹਾਂ, ਧੰਨਵਾਦ।", ["pa"]).garbled


def test_a_huge_answer_is_judged_on_its_head_and_tail():
    """An 8 MB body (the client's cap) costs no more than 40,000 characters; a junk tail at the
    very end still shows."""
    fluent = "The committee met on Tuesday and agreed to publish the report in May. " * 60_000
    verdict = detect(fluent, ["en"])
    assert not verdict.garbled and "of 4,200,000 characters" in verdict.reasons[-1]
    tail = " ".join(["wisacke wislished wisStackAs wisOr wisUT wisAP"] * 40)
    assert detect(fluent + tail, ["en"]).garbled


def test_reasons_read_the_same_in_every_process():
    """Script names tied on letter count come out in one order whatever the hash seed."""
    text = (
        "The answer is 42, as the table shows. жβกאڡ жβกאڡ жβกאڡ"  # five scripts, one letter each
    )
    code = f"from evalrun.grading.garble import detect; print(detect({text!r}, ['en']).reasons)"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }
    assert outs == {
        "['script (1.00): 37% of letters in unexpected scripts (arabic, cyrillic, greek, "
        "hebrew; expected latin)']\n"
    }, outs


# Fragments: streamed tokens doubled, lines a decoder gave up on, other languages' words dropped
# into English, one-word sentences, digit soup, a blank-line gap, capitalised nouns at random.
FRAGMENT_LOOK_ALIKES = [
    (  # streamed tokens doubled, against a sentence built on doubling and a stemmer's list
        "Make the bedroom as dark as possible with a sleep mask mask. Wear sunglasses so the "
        "light does not wake you you up. Avoid caffeine in the last few few hours of your "
        "shift, and ask the people you live with to keep noise down while you sleep sleep.",
        "That that is is that that is not is not is that it it is: with commas, that that is, "
        "is; that that is not, is not. Porter stems: connect connect gener gener happi happi.",
        None,
    ),
    (  # lines a decoder started and could not go on with, against a list and a code loop
        "\n- A:\n#\n*\n\nA.\n\nThis\n \n*\n\n**\n\nThe\n\n-\n\nB\n\nWhat\n\n*\n\nThe",
        "Shopping list:\n\n- Apples\n- Bread\n- Milk\n- Eggs\n- Butter\n- Cheese\n- Rice\n"
        "- Tea\n- Coffee\n- Jam\n\n# Notes\n\n* Go early\n* Bring bags",
        ["en"],
    ),
    (  # words of three other languages dropped into English, against Spanglish and a lesson
        "The stock market crash wiped out a great deal of wealth. Thousands qualquer banks "
        "failed, and people lost their savings. Factories cut londra and laid off workers. "
        "The money supply shrank and prices fell for several years in начнут row.",
        'My abuela always says "mija, no te preocupes", and honestly she is right: the '
        'meeting is mañana, so tranquila. In Hinglish you hear "kya scene hai" and '
        '"acha, kal milte hain" all the time.',
        None,
    ),
    (  # one-word sentences of function words, against a multiple-choice answer
        "The town has a mill. The town. the. The. town has been a. the. a.\nthe. before. a.",
        "Answer: A. The other options fail: B. is too slow, C. is wrong. So A.",
        ["en"],
    ),
    (  # digits run together with operators, against long numbers, a range and a sum
        "With r = 4 cm the area is π × 9109691618.=039=63387, 026+5301172+64521747817,,93728==65.7",
        "π to 30 digits is 3.141592653589793238462643383279; 2^64 = 18,446,744,073,709,551,616; "
        "the tolerance is 0.021..0.023 and 1+2+3+4+5+6+7+8+9=45.",
        ["en", "math"],
    ),
    (  # a long gap of blank lines, then fragments; against a gap, then paragraphs
        "The planets in order are:" + "\n" * 14 + "HHH H\n\nthe.\n\nbuilding a_\n\nA\n\nThe",
        "The planets in order are:" + "\n" * 14 + "Mercury and Venus are the inner rocky planets.\n"
        "Earth and Mars follow them.\nJupiter, Saturn, Uranus and Neptune are the giants.",
        ["en"],
    ),
    (  # capitalised nouns strung at random, against a headline and a line of hashtags
        "Bishop Orchard Ontario Canada Falcon Harbor Copper Ontario Vienna Meadow Canada Quantum",
        "Tiny Town Council Backs Bold Bike Lane Plan Despite Shop Owner Fury\n\n"
        "#travel #wanderlust #sunset #beachlife #instagood #photooftheday #nature #explore",
        ["en"],
    ),
]


# Structured answers (code, JSON, tool calls), where word checks are off; word salads
# that put function words where no sentence has them; capital letters run together.
STRUCTURED_AND_SPLICED_LOOK_ALIKES = [
    (  # code whose identifiers decayed into junk glued by brackets, against brackets code leaves
        # open or closes on its own (a shell case label, a regex)
        "```go\nfunc sumPrices(items []Item) float64 {\n\ttotal := 0.0\n\tfor _, it := range "
        "items {\n\t\ttotal += it.Price\n\t}\n    trell(ocabu{stane=merid\n  quansh]);vorel.tesk\n"
        "      plimbo[darev->sorth}amble\n\treturn total\n}\n```",
        '```bash\ncase "$1" in\n  start)\n    systemctl start app\n    ;;\n  stop|halt)\n'
        '    systemctl stop app\n    ;;\n  *)\n    echo "usage: $0 {start|stop}" >&2\n    ;;\nesac\n'
        "grep -E '^\\(?[0-9]{3}\\)?' phones.txt | sed 's/[()]//g'\n```",
        ["en", "code"],
    ),
    (  # a program that runs on in rows of English words, against words code and data may hold
        # on their lines (a docstring, a template literal, a lowercase SQL query)
        "```java\npublic class Basket {\n    private final List<Item> items = new ArrayList<>();\n\n"
        "    public int total() {\n        return items.stream().mapToInt(Item::price).sum();\n"
        "    }\n    morning window quickly station river paper\n"
        "    answer village clearly money garden\n}\n```",
        '```python\ndef plan():\n    """\n    Read input file quickly\n    Build frequency table '
        'fast\n    """\n    return TEMPLATE\n```\n\n```javascript\nconst banner = `\n  Welcome '
        "back dear friends\n  Fresh coffee every morning\n`;\n```\n\n```sql\nselect name email "
        "phone country\nfrom users\n```",
        ["en", "code"],
    ),
    (  # JSON records whose keys lost their values to bare words, against the liberties answers
        # take with JSON (comments, trailing commas, unquoted keys, elisions, a cut-off end)
        '[\n  {\n    "city": "Lisbon",\n    "river": "Tagus"\n  },\n  {\n    "city" Porto Bridges '
        'window the and if garden morning,\n    "river" Douro Fold the paper keep warm\n  },\n'
        '  {\n    "city": "Coimbra"\n  }\n]',
        '```json\n{\n  // the service (lowercase\n  name: "api",\n  "tags": ["a", "b",],\n'
        '  "users": [\n    {"id": 1},\n    ...\n  ],\n}\n```\n\n{\n  "city": "Lisbon",\n'
        '  "note" Built on seven',
        ["en", "json"],
    ),
    (  # Chinese words where a program has its names, in an English answer; against Chinese in
        # its strings and comments, and as data in shell and SQL
        "Read the file and count its words:\n\n```python\nfrom collections import Counter\n\n"
        "def 统计(path):\n    with open(path) as 文件:\n        return Counter(文件.read().split())"
        "\n```\n\nIt returns a Counter of the words.",
        'Keep Chinese text in strings:\n\n```python\nGREETING = "你好，世界"  # 问候语\n'
        'def greet(name):\n    # 返回问候\n    return f"{GREETING}, {name}"\n```\n\n```bash\n'
        "echo 你好\n```\n\n```sql\nSELECT 名前, 年齢 FROM 社員;\n```\n\nThe word 你好 means hello.",
        None,
    ),
    (  # English phrases spliced, against a court transcript that stutters with punctuation
        "A refrigerator moves heat from the inside to the room. Refrigerant gas narrow valve "
        "compressor squeezes a the off its the temperature. The thermostat reads set to the coils of.",
        "Q. And you were where, at that time? A. At the - in the car park. The, the loading bay, "
        "I mean. Q. And the van? A. It was parked by the the gate, near the office.",
        ["en"],
    ),
    (  # Spanish words shuffled, against `la de`, `lo que`, `una y otra vez`
        "La lava sale cuando el magma llega a la superficie. Volcán la un terrestre es corteza "
        "magma la el. Forma de de otros volcanes entran en erupción tranquila y algunos.",
        "El volcán de Fuego es uno de los más activos. La de Pacaya, en cambio, es más tranquila, "
        "y lo que más atrae a los turistas es ver la lava una y otra vez desde el mirador.",
        ["es"],
    ),
    (  # French phrases spliced, against `un et un font deux` and a quoted example
        "La tour Eiffel a été construite pour l'Exposition universelle. Grâce à son les de "
        "visiteurs par an la un monument. Nombreux artistes la des critiquée au début du.",
        "La tour Eiffel a été construite pour l'Exposition universelle de 1889. Au début, de "
        "nombreux artistes l'ont critiquée. Un et un font deux, dit le guide, et « la un » "
        "n'est pas du français.",
        None,
    ),
    (  # capitals glued into one token, against a protein, the alphabet and a DNA primer
        "Aresian: LONGEUR\nLONGISERESIAQUASILEMETRESEICSALPAJAPABISTRIAGUPLANTERIMELTAMICARPED",
        "Human hemoglobin alpha starts MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSF; the alphabet is "
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ; the primer reads GATTACACCGTAGGCTTAACGGATCCATG.",
        None,
    ),
]


# `a` before an article or `of` in English, and a long phrase looped to the end.
ARTICLE_AND_LOOP_LOOK_ALIKES = [
    (  # `a` before an article or `of`, against letters that name things in a math answer
        "The pump moves the gas to a the coils, and the fan cools it. Then the valve lets a of "
        "the liquid into the cabinet where it warms again.",
        "Let a and b be positive integers. If a is even and b is odd, then a + b is odd. Sort "
        "the names from a to z, replace a with b, and take vitamin a or d with food.",
        ["en"],
    ),
    (  # a 9-token phrase looped to the end, against sentences a rambling model says again
        "Y foundilitiesued ayudur a lageión de la queetyá haciendo inc Seces "
        + "found de lageión de la queetyá haciendo inc Seces " * 5,
        "Los gatos son lindos y muy independientes, y duermen mucho durante el día. " * 6,
        ["es"],
    ),
]


@pytest.mark.parametrize(
    ("garbled", "clean", "expect"),
    [
        *TOKEN_AND_WORD_LOOK_ALIKES,
        *LANGUAGE_AND_LAYOUT_LOOK_ALIKES,
        *FRAGMENT_LOOK_ALIKES,
        *STRUCTURED_AND_SPLICED_LOOK_ALIKES,
        *ARTICLE_AND_LOOP_LOOK_ALIKES,
    ],
)
def test_shapes_and_their_look_alikes(garbled, clean, expect):
    """Each garbled shape the detector knows, beside the clean text it could be taken for."""
    assert detect(garbled, expect).garbled
    assert not detect(clean, expect).garbled


# The signal that catches each fragment shape, and the family a user sees (same order).
FRAGMENT_SIGNALS = [
    ("doubled", "collapse"),
    ("hollow-lines", "flood"),
    ("sprinkle", "multi-script"),
    ("stubs", "salad"),
    ("number-soup", "flood"),
    ("blank", "flood"),
    ("capitals", "salad"),
]


# The signal that catches each structured or spliced shape, and the family a user sees (same
# order).
STRUCTURED_AND_SPLICED_SIGNALS = [
    ("brackets", "collapse"),
    ("code-words", "collapse"),
    ("json", "collapse"),
    ("code-names", "multi-script"),
    ("grammar", "salad"),
    ("grammar", "salad"),
    ("grammar", "salad"),
    ("capital-runs", "non-words"),
]


# The signal that catches each of those two shapes, and the family a user sees (same order).
ARTICLE_AND_LOOP_SIGNALS = [("grammar", "salad"), ("loop", "loop")]


SHAPE_SIGNALS = [
    *zip(FRAGMENT_LOOK_ALIKES, FRAGMENT_SIGNALS, strict=True),
    *zip(STRUCTURED_AND_SPLICED_LOOK_ALIKES, STRUCTURED_AND_SPLICED_SIGNALS, strict=True),
    *zip(ARTICLE_AND_LOOP_LOOK_ALIKES, ARTICLE_AND_LOOP_SIGNALS, strict=True),
]


@pytest.mark.parametrize(
    ("garbled", "expect", "signal", "kind"),
    [(g, e, *sk) for (g, _, e), sk in SHAPE_SIGNALS],
    ids=[f"{signal}-{i}" for i, (_, (signal, _)) in enumerate(SHAPE_SIGNALS)],
)
def test_each_shape_is_flagged_by_its_own_signal_and_named_by_its_family(
    garbled, expect, signal, kind
):
    """The signal built for a shape flags it on its own (score at the threshold or
    above), and the verdict names the family a user sees."""
    verdict = detect(garbled, expect)
    assert verdict.kind == kind
    scores = [
        float(r.split("(", 1)[1].split(")", 1)[0])
        for r in verdict.reasons
        if r.startswith(f"{signal} (")
    ]
    assert scores and max(scores) >= THRESHOLD, verdict.reasons


# Real code whose brackets do not balance line by line, or hold brackets in strings, regexes,
# comments, case labels, lifetimes; lines of plain words where a language allows them (shell,
# heredocs, CSS selectors, HTML text, YAML): none of it is code that decayed.
ODD_BRACKET_CODE = {
    "perl-regex": "```perl\nwhile (my $line = <STDIN>) {\n    if ($line =~ /^\\s*\\(([^)]+)\\)/) {\n"
    '        print "group: $1\\n";\n    }\n    next unless $line =~ m/\\[([^\\]]+)\\]/;\n'
    "    $line =~ s/\\{[^}]*\\}//g;\n}\n```",
    "js-regex": "```javascript\nconst re = /\\(([^)]*)\\)/g;\nconst parts = text.split(/[)(]/);\n"
    'function strip(s) {\n  return s.replace(/[{}[\\]]/g, "").replace(/\\)+$/, "");\n}\n'
    "const m = line.match(/^(\\w+)\\((.*)\\)$/);\n```",
    "python-raw-regex": "```python\nimport re\nNOT_CLOSE = re.compile(r'[^)]+')\n"
    "OPEN_ONLY = re.compile(rb'\\(+')\nprint(NOT_CLOSE.findall('a) b) c)'), OPEN_ONLY.pattern)\n"
    'def describe(items):\n    """Items (a list of dicts.\n\n    Like "a), b), c)".\n    """\n'
    "    return len(items)\n```",
    "python-floor-division": '```python\nresult = {\n    "half": n // 2,\n'
    '    "pairs": [(a, b) for a in range(n // 2)],\n}\ngrid = [\n'
    "    [cell(r, c // 2) for c in range(width)],\n]\n```",
    "rust-lifetimes": "```rust\nfn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n"
    "    if x.len() > y.len() { x } else { y }\n}\n\nimpl<'a> Parser<'a> {\n"
    "    fn peek(&self) -> Option<char> {\n        self.input.chars().next()\n    }\n}\n```",
    "c-casts-comments": "```c\nint main(int argc, char **argv) {\n"
    "    int *buf = (int*)malloc(sizeof(int) * 16);\n    double ratio = (double)argc / 3;\n"
    '    printf("%d)\\n", buf[3]); /* prints (ratio*3 */\n    // then (maybe] free it\n'
    "    free(buf);\n    return 0;\n}\n```",
    "lisp": "```lisp\n(defun square (x)\n  (* x x))\n\n(setq numbers\n      '(1 2 3 4))\n"
    "(mapcar #'square numbers) ; => (1 4 9 16\n(let ((a 1)\n      (b 2))\n  (+ a b))\n```",
    "css-ids": "```css\n#header {\n  display: flex;\n}\n#nav > li:not(.active) {\n"
    "  color: rgb(12, 34, 56);\n}\n@media (max-width: 600px) {\n"
    "  #header { flex-direction: column; }\n}\n```",
    "math-and-latex": "```latex\nf(x) = \\left[ \\frac{1}{2} \\right) + x\n```\n\n"
    "```math\nx \\in [0, 1)\ny \\in (0, 1]\n```",
    "traceback-text": "```text\nSteps:\n1) open the file (read mode\n2) read it]\n3) close it)\n```",
    "cut-off": "```python\ndef merge(a, b):\n    result = []\n    while i < len(a) and j < len(b):\n"
    "        if a[i] <= b[j]:\n            result.append(a[i])\n        else:\n"
    "            result.append(b[j",
    "shell-installs": "```bash\nbrew install wget tree jq\nnpm install express cors dotenv\n"
    "cat > notes.txt <<EOF\nRemember milk eggs bread butter\nCall plumber Monday morning early\n"
    "EOF\n```",
    "css-selectors": "```css\nbody main section article {\n  margin: 0;\n}\n"
    "header footer aside figure {\n  padding: 1rem;\n}\n```",
    "html-text": '```html\n<div class="hero">\n  <p>\n    Lorem ipsum dolor sit amet consectetur\n'
    "    Welcome back friends and family\n  </p>\n</div>\n```",
    "yaml-folded": "```yaml\nservice:\n  description: >\n    Handles user login sessions\n"
    "    tokens refresh rotation audit trail\n```",
    "rust-impl": "```rust\nimpl Default for Config {\n    fn default() -> Self {\n"
    "        Self { retries: 3 }\n    }\n}\npub enum Direction { North, South }\n```",
    "asm-comments": "```asm\n_start:\n    mov eax, [ebx+4]      ; load (second arg\n"
    "    mov ecx, [esp]        ; argc)\n    call print            ; print it]\n    ret\n```",
}


@pytest.mark.parametrize("expect", [None, ["en", "code"]], ids=["no-expect", "code"])
@pytest.mark.parametrize("text", ODD_BRACKET_CODE.values(), ids=ODD_BRACKET_CODE.keys())
def test_code_with_odd_brackets_or_lines_of_words_is_no_decay(text, expect):
    verdict = detect(text, expect)
    assert not verdict.garbled, verdict.reasons
    assert not any(r.startswith(("brackets (", "code-words (")) for r in verdict.reasons), (
        verdict.reasons
    )


# Clean answers in shapes the blind batches clean_adversarial7.jsonl and clean_adversarial8.jsonl
# showed, each of which an earlier detector called garbled: pinned so they stay clean.
ONCE_FLAGGED_CLEAN_ANSWERS = [
    (
        "hahahaha ok that's hilarious, my cousin sent jajajajaja and my friend from Jakarta "
        "just wrote wkwkwkwk lol",
        None,
    ),
    (
        "Link budget: Tx +18 dBm, feeder -2 dB, antenna +12 dBi, path loss 104 dB, so -76 dBm "
        "at the receiver; that is 6 dB above sensitivity, and 3 dB more with the 15 dBi dish.",
        None,
    ),
    (
        "Good morning: Georgian დილა მშვიდობისა (dila mshvidobisa), Armenian Բարի լույս "
        "(bari luys), Russian Доброе утро (dobroye utro). Good night: Georgian ღამე მშვიდობისა "
        "(ghame mshvidobisa), Armenian Բարի գիշեր (bari gisher), Russian Спокойной ночи "
        "(spokoynoy nochi).",
        ["en"],
    ),
    (
        "Njan ippol office il aanu, vaikunneram vilikkam. Ningal evide aanu? Ivide nalla mazha "
        "undu, kuda edukkan marakkalle.",
        None,
    ),
    ("Selam! Endet neh? Ishi, dehna negn, betam amesegnalehu. Buna ena dabo ihe.", None),
    (
        "Lunch in Kyoto: the shop sign read 蕎麦処 たなか (soba-dokoro Tanaka); we had 天ぷら蕎麦 "
        "(tempura soba) 1200円, 親子丼 (oyakodon) 950円 and 抹茶アイス (matcha ice cream) 400円.",
        ["en"],
    ),
    (
        "```clojure\n(->> (range 1 10)\n     (filter even?)\n     (map #(* % %))\n"
        "     (reduce +))\n;; => 120\n```\nEach step's result goes in as the last argument.",
        None,
    ),
    (
        "What a rooster says: cock-a-doodle-doo (en), kikeriki (de), cocorico (fr), quiquiriquí "
        "(es), chicchirichì (it), kukeleku (nl), kukuryku (pl), кукареку (ru), コケコッコー (ja), "
        "꼬끼오 (ko).",
        None,
    ),
    (
        "CHANGELOG 2.1.0\n\n### Added\n- Export to PDF\n- Keyboard shortcuts for the editor\n\n"
        "### Fixed\n- Login loop on Safari\n\n########################################",
        ["en"],
    ),
    (
        "$ pytest -v\ntests/test_io.py::test_read PASSED            [ 25%]\n"
        "tests/test_io.py::test_write PASSED           [ 50%]\n"
        "tests/test_io.py::test_append PASSED          [ 75%]\n"
        "tests/test_io.py::test_delete PASSED          [100%]\n\n"
        "================================ 4 passed in 1.27s ================================",
        ["en", "code"],
    ),
]


@pytest.mark.parametrize(
    ("text", "expect"),
    ONCE_FLAGGED_CLEAN_ANSWERS,
    ids=[
        "laughter",
        "units",
        "glossary-twice-round",
        "malayalam",
        "amharic",
        "menu-kanji-kana-and-yen",
        "clojure-in-a-fence",
        "words-tagged-by-language",
        "closing-rule",
        "test-run-summary",
    ],
)
def test_clean_answers_once_flagged_stay_clean(text, expect):
    verdict = detect(text, expect)
    assert not verdict.garbled, verdict.reasons


ROMANIZED_ANSWERS = [
    "Haan bilkul! Python mein list ko sort karne ke liye aap sorted() function use kar sakte "
    "ho. Agar aapko original list change karni hai to list.sort() better hai.",
    "Yaar tension mat lo, interview mein bas confident raho. Apne projects ke baare mein clearly "
    "batao, aur agar kuch nahi aata to honestly bol do ki main seekh lunga.",
    "Ami tomake bhalobashi. Aajke amra bazar e jabo, tumi ki asbe? Ami ekta notun boi kinechi.",
    "Ana bahebak keteer. Enta 3amel eh el naharda? Ana kont fel shoghl w ba3dein ro7t el gym.",
    "Watashi wa gakusei desu. Mainichi toshokan de benkyou shimasu. Nihongo wa muzukashii desu.",
    "Privet! Kak dela? Ya segodnya ochen ustal, mnogo raboty bylo. Zavtra poydem v kino.",
    "Wo jintian qu shangdian mai le yixie shuiguo. Ni yao bu yao yiqi qu gongyuan sanbu?",
    "Kumusta ka? Sobrang busy ako today kasi may deadline kami. Pero okay lang, kaya naman.",
]


@pytest.mark.parametrize("expect", [None, ["en"]], ids=["no-expect", "en"])
@pytest.mark.parametrize("text", ROMANIZED_ANSWERS, ids=[t[:16] for t in ROMANIZED_ANSWERS])
def test_romanized_answers_are_clean_even_when_english_was_asked_for(text, expect):
    assert not detect(text, expect).garbled


OTHER_LANGUAGE_ANSWERS = [
    "Habari yako? Mimi ni mzima, asante. Leo tunaenda sokoni kununua matunda na mboga. Karibu!",
    "Bore da! Sut wyt ti heddiw? Mae'r tywydd yn braf yng Nghymru. Diolch yn fawr iawn am dy help.",
    "Xin chao! Hom nay troi dep qua. Ban co muon di uong ca phe voi minh khong? Minh o gan ho.",
    "Kaixo! Zer moduz zaude? Gaur eguraldi ona dago Donostian. Eskerrik asko zure laguntzagatik.",
    "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani.",
    "Top 5 tips:\n1. Roz subah jaldi utho\n2. Paani zyada piyo\n3. Phone kam use karo\n"
    "4. Exercise zaroor karo\n5. Raat ko jaldi so jao",
    "Dekho, ये वाला phone camera के लिए अच्छा है, लेकिन battery थोड़ी कमज़ोर है. Budget ho toh next "
    "model लो, उसमें बड़ी battery है.",
]


@pytest.mark.parametrize(
    "text", OTHER_LANGUAGE_ANSWERS, ids=[t[:12] for t in OTHER_LANGUAGE_ANSWERS]
)
def test_a_whole_answer_in_another_language_is_no_soup_though_english_was_asked(text):
    """The wrong language is the graders' business: pycld2 is sure of it, or its small words
    say which romanized language it is."""
    assert not detect(text, ["en"]).garbled


def test_tool_call_arguments_inside_a_json_string_are_read_once():
    """A tool call written as JSON whose `arguments` is itself a JSON string: its values are
    judged as prose, and the reason says where once (it said `in JSON strings: ` twice)."""
    salad = "Here can create to and the of by the in to and can create for of is the"
    args = json.dumps({"channel": "#ops", "text": salad})
    verdict = detect(json.dumps({"name": "send_message", "arguments": args}), ["en", "json"])
    assert verdict.garbled and verdict.kind == "salad"
    assert verdict.reasons[0].startswith("in JSON strings: salad ")
    args = json.dumps({"channel": "#ops", "text": "The login outage is resolved for everyone."})
    assert not detect(
        json.dumps({"name": "send_message", "arguments": args}), ["en", "json"]
    ).garbled


def test_a_gap_of_blank_lines_is_counted_in_lines_not_characters():
    text = "The planets in order are:" + " \t\n" * 14 + "HHH H\n\nthe.\n\nbuilding a_\n\nA"
    verdict = detect(text, ["en"])
    assert verdict.kind == "flood"
    assert any(r.startswith("blank (0.60): 14 blank lines in a row") for r in verdict.reasons)
