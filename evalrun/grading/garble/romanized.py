"""Languages written in Latin letters that word lists do not hold: romanized Hindi and Urdu
(Hinglish), Bengali, Tamil, Telugu, Malayalam, Arabic (Arabizi), Japanese (romaji), Chinese
(pinyin), Russian, Greek, Persian, Amharic and Korean as people type them in chats, and as models
answer in them.

wordfreq lists these languages in their own scripts only, and pycld2 reads them as English at
a guess, so their words look unlisted, word after word, like soup. Two things tell them apart:
- their small words: each language has a few dozen (`hai`, `ke`, `mein`; `desu`, `wa`; `shi`,
  `le`) that come back in every sentence, where soup's fragments never make one language's
  grammar (ROMANIZED: no diacritics, the commonest spellings; Arabizi's digit letters);
- their other words, spelled: wordfreq's own-script lists of Russian, Ukrainian, Greek, Hindi,
  Bengali and Tamil written out in Latin letters and folded with the unlisted words to what
  their spellings share (privet, spasibo; kalimera; zaroori, karna; korbo; paruppu). Soup's
  fragments (wisacke, platory) spell no such word.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import cache

ROMANIZED: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "hi": """hai hain tha thi thay mein hum aap tum kya kyun kyon kaise kaisa kahan
            nahi nahin aur bhi liye karna karne karo kare karte karta kiya kijiye sakte sakta
            sakti raha rahe rahi hota hoti hote wala wali wale yeh woh jab tab agar lekin
            phir bahut sabse pehle abhi accha achha acha theek thik haan bilkul yaar bhai
            matlab samajh chahiye zaroor zaroori ke ka ki ko se pe ek apna apne apni
            unka unki iska uska mera meri tera teri kuch sab koi kab kitna kitne dekho
            batao bolo chalo hoga hogi jaise waise usmein isme iske uske aapka aapko humein
            mujhe tumhe unhe diya gaya gayi lo do roz subah jaldi paani zyada kam raat din
            aaj kal hamesha kabhi sirf thoda zara jao aao mat toh kyunki isliye magar wahan
            yahan""",
        "bn": """ami tumi apni amra tomra ache achhe chilo hobe kore korbo korcho korte kintu
            ebong shob khub bhalo jabo jao kothay keno kemon ekta amar tomar apnar aajke
            ekhon tahole ar na ki""",
        "ta": """naan nee neenga avan aval enna epdi eppadi enga romba illa illai irukku iruken
            irukken vaanga ponga sollu konjam seri nalla ippo appo inga anga athu ithu""",
        "te": """nenu nuvvu meeru emiti ela enduku ledu undi unnaru chala baagundi cheppu
            cheyyandi kaadu avunu ki mundu roju konchem emi matrame kotha inka ippudu tarvata
            kani kuda mee naa manam vaadu aame""",
        "gu": """kem cho chhe che ane nu ne tamne tame hu mane majama joie pachhi pan shu
            kya kyare kevi rite haji bahu saru aavjo""",
        "ne": """ko ra ani garnu sanga cha chha hunchha huncha lai pani tapai hajur ramro
            kati garera bhayo gareko chhaina thiyo ma mero timro""",
        "tl": """sa ng ang mga mo ko ka ako ikaw siya kami tayo kayo sila pa lang yung yun kasi
            pero ay po opo oo hindi wala may meron naman talaga basta pwede puwede kahit
            dito doon ano bakit paano salamat kumusta gusto kailangan muna din rin ba""",
        "ar": """ana enta enti inta howa heya ehna ento el fi mesh mish msh ezay ezzay kda keda
            bas yalla inshallah wallah habibi shokran 3ala 3an ma3a ba3d 2abl keteer kteer
            7aga 7elw ahlan marhaba tayeb tab3an leh feen""",
        "ja": """watashi anata kare kanojo desu deshita masu mashita shimasu imasu arimasu nai
            kudasai sumimasen arigatou arigato gozaimasu konnichiwa ohayou sayonara nani
            doko itsu kore sore kono sono totemo soshite kara dake wa ga wo
            ni de no ka ne yo mo""",
        "zh": """wo ni ta nimen tamen shi bu hen hao de le ma ne zai mei shenme zenme
            weishenme keyi yao xiang qu lai kan shuo zhe zhege nage yige yixie jintian
            mingtian zuotian xiexie nihao dui ye hai""",
        "ru": """ya ty ona my vy oni eto chto kak gde kogda pochemu ne da privet poka
            spasibo pozhaluysta ochen mnogo horosho khorosho ploho segodnya zavtra vchera
            tozhe uzhe esli chtoby mozhno nuzhno dela menya tebya nas vas byl bylo budet""",
        "el": """kalimera kalispera geia yia sou mou einai ti pos kai na tha exo eho exei ehei
            eimai poli kala efharisto efxaristo parakalo nai oxi ego esy gia apo sto stin ston
            kati tora simera avrio pou kaneis kanis tipota""",
        "fa": """salam to ma shoma chi chera koja khoob khob merci mamnoon hast nist ba
            az dar ke ro mikonam mikham kon konam kardan shod shode mishe mikhay bashe bashi
            beshe baraye va ye yek har rooz kheili kheyli ziad aval baad alan inja unja chon
            vali amma age agar khodet khodam""",
        "ml": """njan ente ninte ningal ningalude avan aval avar nammal njangal enikku ninakku
            aanu alla illa undu unde oru randu evide enthu entha enthanu engane eppol ippol
            appol pinne ennu vannu poyi varu cheyyu cheyyam kazhicho venam venda veendum
            nalla nannayi valare onnum kure athu ithu avide ivide sheri shari mathi kollam
            pakshe kondu koode vendi""",
        "am": """selam endet neh nesh nachihu dehna negn nen amesegnalehu ameseginalehu ishi awo
            aydelem yelem betam konjo lemin mechie esti ebakih ebakish anchi egna enante enesu
            yimesgen egziabher tenastilign ihe ena wede""",
        "ko": """annyeong annyeonghaseyo saranghae gamsahamnida kamsahamnida aniyo jeo neo uri
            mwo wae eodi juseyo haseyo imnida isseoyo eopseoyo""",
    }.items()
}


# A word of Arabizi: letters with the digits that stand for Arabic sounds English lacks (3 ع,
# 7 ح, 2 ء, 5 خ, 9 ق): 3ala, ma3a, 7aga, so2al, mawdoo3.
ARABIZI = re.compile(r"^[a-z]*[a-z][23579][a-z]*$|^[23579][a-z]{2,}$")


def romanized_language(keys: list[str]) -> str:
    """The language whose small words make ROMANIZED_SHARE of these lower-case words or more,
    ROMANIZED_DISTINCT different ones of three letters or more among them; '' when none does.
    English shares some short ones (`to`, `do`, `no`): the share and the long ones tell; the
    long words English uses (main, made, women) are left out."""
    if len(keys) < ROMANIZED_MIN_WORDS:
        return ""
    best, best_hits = "", 0
    for lang, words in ROMANIZED.items():
        hits = [k for k in keys if k in words or lang == "ar" and ARABIZI.match(k)]
        distinct = {k for k in hits if len(k) >= 3}
        if len(hits) >= ROMANIZED_SHARE * len(keys) and len(distinct) >= ROMANIZED_DISTINCT:
            if len(hits) > best_hits:
                best, best_hits = lang, len(hits)
    return best


ROMANIZED_MIN_WORDS = 6
ROMANIZED_SHARE = 0.15
ROMANIZED_DISTINCT = 3


# Scripts whose word lists wordfreq holds, spelled in Latin letters the way people type them:
# Cyrillic and Greek letter by letter, Indic scripts from their Unicode letter names (DEVANAGARI
# LETTER KHA -> kha), dropping the vowel a consonant carries where a sign or a virama follows.
TRANSLIT_LANGS = ("hi", "ru", "bn", "ta", "uk", "el")


_CYRILLIC = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
        "a b v g d e e zh z i i k l m n o p r s t u f h c ch sh sh - i - e iu ia i i e g".split(),
        strict=True,
    )
)
_GREEK = dict(
    zip(
        "αβγδεζηθικλμνξοπρσςτυφχψω",
        "a v g d e z i th i k l m n ks o p r s s t i f h ps o".split(),
        strict=True,
    )
)
_GREEK_PAIRS = (("ου", "ou"), ("αι", "e"), ("ει", "i"), ("οι", "i"), ("μπ", "b"), ("ντ", "d"))
# Spellings one sound has in chats, folded to one: aspiration and long vowels dropped (kh k,
# aa a, ee i, oo u), j y i, w v, ph f, x h (Greeklish), z j, q k; Bengali's o is its a.
_FOLDS = dict(
    pair.split(">")
    for pair in "shch>sh sch>sh ph>f ou>u ee>i oo>u aa>a ii>i uu>u yu>iu ya>ia ye>e ts>c".split()
)
_FOLD = re.compile("|".join(sorted(_FOLDS, key=len, reverse=True)))
_LETTERS = str.maketrans("xwqzy", "hvkji")
# After a consonant, h only marks aspiration (kh, bh, th), or with s the sh sound; and a doubled
# letter is one (pp, ll).
_ASPIRATED = re.compile(r"(?<=[bcdgjkpst])h|(.)(?=\1)")


def fold(word: str, lang: str) -> str:
    """A Latin spelling reduced to what its sounds have in common across spellings."""
    word = _FOLD.sub(lambda m: _FOLDS[m.group()], word.lower()).translate(_LETTERS)
    if lang == "bn":
        word = word.replace("o", "a")
    elif lang == "el":  # (ει, οι and ι sound alike, as αι and ε do)
        word = word.replace("ei", "i").replace("oi", "i").replace("ai", "e")
    return _ASPIRATED.sub("", word)


def _indic(word: str) -> list[str]:
    """Latin spellings of a word in an Indic script: with and without the consonants' own a
    between consonants (Hindi drops it in speech: kamara -> kamra), never at the end."""
    sounds: list[str] = []  # each letter's sound, a consonant's without its own a
    own_a: list[bool] = []  # the consonant still carries its a (no vowel sign or virama came)
    for ch in word:
        kind, sound = _indic_char(ch)
        if kind == "letter":
            consonant = sound.endswith("a") and len(sound) > 1 and sound not in _INDEPENDENT
            sounds.append(sound[:-1] if consonant else sound)
            own_a.append(consonant)
        elif kind == "sign":  # a vowel sign, or "" for a virama: takes the place of the a
            if own_a and own_a[-1]:
                sounds[-1] += sound
                own_a[-1] = False
        elif kind == "nasal":
            sounds.append("n")
            own_a.append(False)
        elif kind != "nukta":
            return []
    if not sounds:
        return []
    last = len(sounds) - 1
    full = "".join(s + "a" * (a and i < last) for i, (s, a) in enumerate(zip(sounds, own_a)))
    short = "".join(s + "a" * (a and i == 0 < last) for i, (s, a) in enumerate(zip(sounds, own_a)))
    return [full, short]


_INDEPENDENT = frozenset(["a", "aa", "ai", "au"])  # vowel letters keep their vowel


@cache
def _indic_char(ch: str) -> tuple[str, str]:
    """What a character of an Indic script does, read off its Unicode name: a letter and its
    sound (DEVANAGARI LETTER KHA: kha), a vowel sign, a virama, a nasal sign, a nukta; ("", "")
    for anything else."""
    name = unicodedata.name(ch, "")
    _, _, sound = name.partition(" LETTER ")
    if sound and " " not in sound:
        return "letter", sound.lower()
    if " VOWEL SIGN " in name:
        sign = name.split(" VOWEL SIGN ")[1].lower().replace("vocalic r", "ri")
        return "sign", sign.replace(" ", "")
    if name.endswith((" SIGN VIRAMA", " SIGN PULLI")):
        return "sign", ""
    if name.endswith((" SIGN ANUSVARA", " SIGN CANDRABINDU")):
        return "nasal", ""
    return ("nukta", "") if name.endswith(" SIGN NUKTA") else ("", "")


@cache
def _lexicon(lang: str) -> frozenset[str]:
    """The folded Latin spellings of the commonest words of `lang` (wordfreq's small list)."""
    from evalrun.grading.garble.lexicon import wordlist

    table = _CYRILLIC if lang in ("ru", "uk") else _GREEK if lang == "el" else None
    out: set[str] = set()
    for word in itertools.islice(wordlist(lang), TRANSLIT_WORDS):  # (commonest first)
        if table is not None:
            plain = "".join(c for c in unicodedata.normalize("NFD", word) if c.isalpha())
            for a, b in _GREEK_PAIRS if lang == "el" else ():
                plain = plain.replace(a, b)
            if all(c in table or c.isascii() for c in plain):
                spelled = "".join(table.get(c, c) for c in plain).replace("-", "")
                if lang == "uk":
                    out.add(fold(spelled.replace("g", "h"), lang))
                out.add(fold(spelled, lang))
        else:
            out.update(fold(s, lang) for s in _indic(word))
    return frozenset(out)


def transliterated(keys: list[str]) -> str:
    """The language most of these unlisted Latin words spell (privet, spasibo; kalimera;
    zaroori, karna; korbo; paruppu), when TRANSLIT_SHARE of them or more do; '' otherwise."""
    keys = [k for k in keys if len(k) >= 4 and k.isalpha()]
    if len(keys) < TRANSLIT_MIN:
        return ""
    best, best_hits = "", 0
    for lang in TRANSLIT_LANGS:
        lexicon = _lexicon(lang)
        hits = sum(1 for k in keys if fold(k, lang) in lexicon)
        if hits >= TRANSLIT_SHARE * len(keys) and hits > best_hits:
            best, best_hits = lang, hits
    return best


TRANSLIT_MIN = 3
TRANSLIT_WORDS = (
    20_000  # the commonest words of each list (a list's whole 30-70k cost 1 s to spell)
)
TRANSLIT_SHARE = 0.5
