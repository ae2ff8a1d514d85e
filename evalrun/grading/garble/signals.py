"""Word-level garble signals over the words of a text (and over windows of them): scripts no
language mixes, soup of non-words, too few function words, word salad, a collapse or an odd
tail after a readable start, one fragment starting most words."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

from evalrun.grading.garble import structure
from evalrun.grading.garble.lexicon import (
    PMI_CLAMP,
    SCRIPT_LANGS,
    common_elsewhere,
    known,
    pair_association,
    starts_a_word,
    zipf,
)
from evalrun.grading.garble.repeats import SUFFIXES
from evalrun.grading.garble.scripts import (
    CJK,
    COMPANIONS,
    FUNCTION_WORDS,
)
from evalrun.grading.garble.words import (
    FINISHED,
    LATIN,
    NOT_A_WORD,
    PUNCT_RUN,
    QUOTED,
    TOKEN,
    Signal,
    Text,
    Word,
)
from evalrun.verdicts import SignalName

LEXICON_LOW = 0.35  # share of listed-word misses that starts to count


LEXICON_SPAN = 0.2  # ... and how much more makes it certain (55%: "mostly non-words")


LEXICON_MIN = 5  # unlisted words needed before that share counts (a line of transliteration)


def tail_signal(t: Text) -> tuple[float, str]:
    """A fluent answer that ends in a few odd words: generation collapsed and ran to the token
    limit (`... designed noqarapists`). Odd words at the very end weigh more than anywhere else,
    because a clean answer cut at the limit ends in a truncated but ordinary word."""
    prose = [w for w in t.words if w.letters and not w.code]
    if len(prose) < 4:
        return 0.0, ""
    tail = prose[-TAIL_WORDS:]
    if not (tail[-1].weird in _TAIL_ODD or tail[-2].weird in _TAIL_ODD):
        return 0.0, ""  # (the very last word may be a fragment cut at the token limit)
    odd = [w for w in tail if w.weird in _TAIL_ODD]
    if len(odd) > 1 and len({w.key for w in odd}) == 1:
        return 0.0, ""  # one odd word over and over: a loop (the loop signals' business)
    if FINISHED.search(t.text):  # words no list holds, ending a sentence: rare words, not junk
        odd = [w for w in odd if w.weird != NOT_A_WORD]
    elif tail[-1].weird == NOT_A_WORD and starts_a_word(tail[-1].key):
        odd = odd[:-1]  # a word cut at the token limit (carbohydr) is in no word list
    elif tail[-1].weird == NOT_A_WORD and len(tail[-1].key) >= 12:
        odd.append(tail[-1])  # ... but no word starts like noqarapistsisbury
    if not odd or all(w.weird == NOT_A_WORD for w in odd) and len(odd) < 2:
        return 0.0, ""  # one word no list holds is a rare word or a small model's misspelling
    if len(odd) == 1 and FINISHED.search(t.text):
        return 0.0, ""  # a finished sentence: one rare word before its full stop is vocabulary
    head = prose[:-TAIL_WORDS]
    if head and _soup_signal(head)[0] >= 0.2:
        return 0.0, ""  # not a clean start: the soup signal judges the whole
    score = min(1.0, TAIL_BASE + TAIL_STEP * (len(odd) - 1))
    kinds = ", ".join(sorted({w.weird for w in odd}))
    return score, (
        f"ends in {len(odd)} odd word(s) of the last {len(tail)} ({kinds}) at char {odd[0].start}"
    )


TAIL_WORDS = 4


# Odd words that a clean answer hardly ever ends in. Case flips (TensorFlow, iPhone) and
# punctuation inside a word (LaTeX: \\frac{x^3}{3}) are common in clean text: not counted here.
_TAIL_ODD = frozenset(
    {
        "run-together",
        "repeated fragment",
        "mixed scripts",
        "no vowels",
        "consonant run",
        NOT_A_WORD,
        PUNCT_RUN,
    }
)


TAIL_BASE = 0.5


TAIL_STEP = 0.15


COLLAPSE_TAIL = 12  # words at the end compared with the rest


def _junk(w: Word, english: bool) -> bool:
    """Odd in any way: not word-like, unlisted, or (English) a short fragment (ov, ith, ek)."""
    if w.weird or w.listed is False:
        return True
    return (
        english
        and 2 <= len(w.key) <= 3
        and w.key.isascii()
        and w.key.isalpha()
        and w.key not in FUNCTION_WORDS
        and not _common_english(w.key)
    )


def collapse_signal(t: Text) -> tuple[float, str]:
    """Readable words, then a tail of odd ones: the answer collapsed and ran on to the limit."""
    prose = [w for w in t.words if w.letters and not w.code]
    if len(prose) < COLLAPSE_TAIL + 6:
        return 0.0, ""
    head, tail = prose[:-COLLAPSE_TAIL], prose[-COLLAPSE_TAIL:]
    tail_junk = sum(_junk(w, t.english_text) for w in tail) / len(tail)
    head_junk = sum(_junk(w, t.english_text) for w in head) / len(head)
    if tail_junk < 0.45 or head_junk > 0.12:
        return 0.0, ""
    return min(1.0, 0.5 + (tail_junk - 0.45)), (
        f"{tail_junk:.0%} of the last {len(tail)} words are odd after {len(head)} readable ones "
        f"(from char {tail[0].start} on)"
    )


def prefix_signal(t: Text) -> tuple[float, str]:
    """One fragment starting most words (wisacke wislished wisStackAs wisOr): recombined pieces."""
    words = [
        w
        for w in t.words
        if w.letters >= 3 and not w.code and w.key.isalpha() and w.key not in FUNCTION_WORDS
    ]  # np.zeros np.ones, border-width border-style, APP_ENV APP_PORT: names in a namespace
    keys = [w.key for w in words]
    if len(keys) < 4:
        return 0.0, ""
    counts: dict[str, int] = {}
    for k in keys:
        counts[k[:3]] = counts.get(k[:3], 0) + 1
    stem = max(counts, key=lambda k: counts[k])
    sharing = [k for k in keys if k.startswith(stem)]
    share = len(sharing) / len(keys)
    unlisted = {w.key for w in words if w.key.startswith(stem) and w.weird}
    # eight words of one stem, or a short text whose shared stem starts words no list holds
    many = len(sharing) >= 8 and share >= 0.5 and len(set(sharing)) >= 4
    few = len(sharing) >= 4 and share >= 0.6 and len(unlisted) >= 2
    if not (many or few):
        return 0.0, ""
    distinct = {w.key: w for w in words if w.key.startswith(stem)}
    listed = sum(known(k, t.langs + _own_langs(w)) for k, w in distinct.items())
    if listed >= PARADIGM_LISTED * len(distinct):
        return 0.0, ""  # words of one family in the lists: hablo hablas habla, книга книги книге
    return min(1.0, 0.5 + (share - 0.5)), (
        f"{len(sharing)} of {len(keys)} words start with {stem!r} ({len(set(sharing))} different)"
    )


def _own_langs(w: Word) -> tuple[str, ...]:
    """The languages of a one-script word's own script with word lists (Cyrillic: ru, uk, ...)."""
    if len(w.scripts) != 1:
        return ()
    (script,) = w.scripts
    return tuple(SCRIPT_LANGS.get(script, ()))


PARADIGM_LISTED = 0.6  # share of a stem's different words in a word list: a paradigm, not pieces


def _script_signal(t: Text, words: list[Word]) -> tuple[float, str]:
    """Letters outside the expected scripts, and how many scripts are interleaved."""
    counts: dict[str, int] = {}
    if not t.structured:  # string literals in a fenced block of an answer may be in any language
        words = [w for w in words if not w.code or w.weird == "mixed scripts"]
    words = [w for w in words if not (w.letters == 1 and w.key[:1].isdigit())]  # 180円, 3개
    for w in words:
        if len(w.scripts) == 1:
            (s,) = w.scripts
            if s == "greek" and w.letters <= 2:
                continue  # math symbols
            counts[s] = counts.get(s, 0) + w.letters
        else:
            for s in sorted(w.scripts):  # (a set: sorted, so ties come out the same every run)
                counts[s] = counts.get(s, 0) + (w.per_script or {}).get(s, 1)
    total = sum(counts.values())
    if total < 8:
        return 0.0, ""
    # Unknown expectations, and data (JSON values, table cells, string literals), may be in any
    # one script besides Latin: the most common one.
    lenient = t.expected is None or t.structured
    allowed = t.expected or LATIN
    others = {s: n for s, n in counts.items() if s not in allowed}
    if lenient and others:
        top = max(others, key=lambda s: others[s])
        allowed = allowed | {top} | frozenset(COMPANIONS.get(top, ()))
    unexpected = {s: n for s, n in counts.items() if s not in allowed and n >= 2}
    n_unexp = sum(unexpected.values())
    share = n_unexp / total
    n_scripts = sum(1 for n in counts.values() if n >= 2)
    if not unexpected:
        return 0.0, ""
    score = 0.0
    if share >= 0.02:
        score = min(1.0, (share - 0.02) / 0.18)
    if n_scripts >= 3 and share >= 0.01:
        score = max(score, min(1.0, 0.4 + 0.2 * (n_scripts - 3) + share * 3))
    intact = _intact_share(words, frozenset(unexpected))
    glued = sum(1 for w in words if w.weird == "mixed scripts")
    returns = _script_returns(words, allowed & LATIN or LATIN)
    runs, framed_runs = _framed_runs(t.text, words, allowed)
    framed = (
        framed_runs / runs if runs >= 3 else 1.0
    )  # (one or two are a mention: Moscow is Москва)
    # a name or phrase in brackets or quotes may run long: Tchaikovsky (Пётр Ильич Чайковский)
    isolated = (
        lenient or _longest_run(words, frozenset(unexpected)) <= 2 or framed_runs >= 0.9 * runs
    )
    foreign = [w.letters for w in words if len(w.scripts) == 1 and not w.scripts <= allowed]
    scraps = n_scripts >= 4 and sum(foreign) <= 3 * len(foreign)  # 了 ত ครับ: letters, not words
    # every run set apart: a list of words by language, short ones (ㅋㅋ (ko), 哈哈 (zh)) and one
    # that goes round the languages twice (Hello: ..., Thanks: ...) too
    listed = runs >= 3 and framed_runs == runs and not any(_two_scripts(w) for w in words)
    if (
        glued == 0
        and (returns < 2 or listed)
        and isolated
        and (not scraps or listed)
        and intact >= (INTACT_SHARE if lenient or framed >= 0.75 else 0.8)
        and framed >= FRAMED_SHARE
    ):
        score = min(score, GLOSSARY_CAP)  # a list of words in many languages, each intact: not soup
    elif (
        len(unexpected) == 1
        and not unexpected.keys() & CJK
        and glued == 0
        and intact >= SWITCH_INTACT
        and _longest_run(words, frozenset(unexpected)) >= SWITCH_RUN
        and runs >= 2
    ):  # phrases of one other language, every word a word, and back again: code-switching
        score = min(score, GLOSSARY_CAP)  # (ये वाला laptop के लिए); a drift into it stays
    names = ", ".join(sorted(unexpected, key=lambda s: (-unexpected[s], s))[:4])
    exp = "/".join(sorted(allowed))
    if t.expected is None:
        exp = f"no languages given, so Latin plus the commonest other script: {exp}"
    return score, f"{share:.0%} of letters in unexpected scripts ({names}; expected {exp})"


def _two_scripts(w: Word) -> bool:
    """A word of two scripts, Japanese's kanji with kana (焼き鳥) counting as one."""
    return len(w.scripts - CJK) + bool(w.scripts & CJK) > 1


FRAMED_SHARE = 0.5  # of the runs of other-script words that a glossary sets apart


def _framed_runs(text: str, words: list[Word], allowed: frozenset[str]) -> tuple[int, int]:
    """The runs of words in other scripts, and how many are set apart the way people quote a word
    of another language: after a colon, a dash, an opening bracket or quote, a comma or a line
    start, or closed by a bracket or quote, or followed by one ("Russian: Доброе утро", "thank
    you (спасибо)", "Chechen Маршалла ду хьоьга (marshalla du h'oga)"). Soup drops them between
    ordinary words (war's 自己目标银行 ascribed)."""
    runs: list[tuple[int, int]] = []  # (first word, last word) of each run
    prev_foreign = False
    for i, w in enumerate(words):
        foreign = bool(w.scripts) and not w.scripts <= allowed
        if foreign and not prev_foreign:
            runs.append((i, i))
        elif foreign:
            runs[-1] = (runs[-1][0], i)
        prev_foreign = foreign or (prev_foreign and not w.scripts)
    framed = 0
    for first, last in runs:
        w, z = words[first], words[last]
        before = text[max(0, w.start - 80) : w.start].rstrip(" \t")[-1:] if w.start else ""
        end = text.find(" ", z.start)
        token = text[z.start : len(text) if end < 0 else end].rstrip("\n")
        after = text[words[last + 1].start] if last + 1 < len(words) else ""
        framed += (
            before in _OPENERS
            or text[w.start] in _OPENERS[2:]
            or token[-1:] in _CLOSERS
            or after in ("(", "（")
        )
    return len(runs), framed


# '' and a line break count as a start; so does the end of a sentence in another language.
_OPENERS = "\n:(（[\"“«'‘„,，、-–—=→/|.!?。！？"


_CLOSERS = ")）]\"”»'’:："


GLOSSARY_CAP = 0.3  # a glossary's script score: another signal has to be strong to flag it
SWITCH_INTACT = 0.9  # of the other script's words, in its languages' lists
SWITCH_RUN = 3  # words in a row in it: a phrase, not a word dropped in


INTACT_SHARE = 0.6  # of the other-script words that must be real words for a text to be a glossary


def _longest_run(words: list[Word], scripts: frozenset[str]) -> int:
    """The most words in a row written in `scripts`: a name or a quoted word is one or two, a
    sentence drifting into another language is more."""
    best = run = 0
    for w in words:
        run = run + 1 if w.scripts and w.scripts <= scripts else 0
        best = max(best, run)
    return best


def _script_returns(words: list[Word], frame: frozenset[str]) -> int:
    """How often the text goes back to another script after a third one: soup hops between
    scripts (了 ности 了 ত ść ত), a glossary visits each once (спасибо, ありがとう, 谢谢)."""
    seen: list[str] = []
    returns = 0
    for w in words:
        if len(w.scripts) != 1 or w.scripts <= frame:
            continue
        (script,) = w.scripts
        group = "cjk" if script in CJK else script
        if seen and seen[-1] != group and group in seen:
            returns += 1
        if not seen or seen[-1] != group:
            seen.append(group)
    return returns


def _intact_share(words: list[Word], scripts: frozenset[str]) -> float:
    """Of the words written in `scripts`, the share that are whole words of a language of that
    script (in its word list; CJK runs of two or more; no list: three letters or more).
    Soup scatters fragments (ности, ংলা, ত); a glossary lists words (спасибо, 谢谢)."""
    seen = intact = 0
    for w in words:
        if len(w.scripts) != 1 or not w.scripts <= scripts:
            continue
        (script,) = w.scripts
        seen += 1
        langs = SCRIPT_LANGS.get(script)
        if (
            script in CJK
            and w.letters >= 2
            or not langs
            and w.letters >= 3
            or langs
            and known(w.key, langs)
        ):
            intact += 1
    return intact / seen if seen else 1.0


def _soup_signal(words: list[Word]) -> tuple[float, str]:
    """Share of words that do not look like words."""
    lettered = [w for w in words if w.letters or w.weird]
    if len(lettered) < 4:
        return 0.0, ""
    weird = [w for w in lettered if w.weird]
    if len({w.key for w in weird}) < 3:
        return 0.0, ""  # one odd word over and over is a loop, not soup
    rate = len(weird) / len(lettered)
    # A word no list holds is weaker evidence than a malformed one (names, transliterations, rare
    # terms): a text is soup on that count alone only when most of its checked words are.
    shape = sum(1 for w in weird if w.weird != NOT_A_WORD) / len(lettered)
    listed = [w for w in lettered if w.listed is not None]
    missing = sum(1 for w in listed if not w.listed) / len(listed) if len(listed) >= 4 else 0.0
    n_missing = sum(1 for w in listed if not w.listed)
    lexicon = (missing - LEXICON_LOW) / LEXICON_SPAN if n_missing >= LEXICON_MIN else 0.0
    unlisted = (rate - shape) / 2 if n_missing >= LEXICON_MIN else 0.0
    score = min(1.0, max(0.0, (shape + unlisted - 0.06) / 0.19, lexicon))
    kinds: dict[str, int] = {}
    for w in weird:
        kinds[w.weird] = kinds.get(w.weird, 0) + 1
    detail = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return score, f"{rate:.0%} of words are not word-like ({detail})"


def other_script_lexicon_signal(t: Text) -> tuple[float, str]:
    """Words of a script with word lists (Cyrillic, Greek, Arabic, Hebrew, Devanagari, ...) that
    almost none of its languages know: made-up words (расного первные яркома). A small model's
    own Russian invents some words; soup invents nearly all."""
    by_script: dict[str, list[Word]] = {}
    for w in t.words:
        if len(w.scripts) == 1 and w.letters >= 4 and not w.code:
            (script,) = w.scripts
            if script in SCRIPT_LANGS and script not in CJK:
                by_script.setdefault(script, []).append(w)
    best = (0.0, "")
    for script, words in by_script.items():
        if len(words) < OTHER_LEXICON_MIN:
            continue
        share = sum(known(w.key, SCRIPT_LANGS[script]) for w in words) / len(words)
        if share < OTHER_LEXICON_LOW:
            score = min(1.0, 0.5 + (OTHER_LEXICON_LOW - share) * 2)
            if score > best[0]:
                best = (score, f"only {share:.0%} of {len(words)} {script} words are words")
    return best


OTHER_LEXICON_MIN = 12  # words of four letters or more (SmolLM2 at t=0.8 writes 9 made-up of 10)


OTHER_LEXICON_LOW = 0.25  # share of them in a word list under which the text is made-up words


def _function_word_signal(words: list[Word]) -> tuple[float, str]:
    """Running text with almost no function words (the, of, и, der, ...) is a pile of tokens."""
    marked = [w for w in words if w.fw is not None]
    if len(marked) < 10 or len({w.key for w in marked}) < 8:
        return 0.0, ""  # too little text, or one phrase repeated (the flood signal's business)
    rate = sum(1 for w in marked if w.fw) / len(marked)
    if rate >= FUNCTION_WORDS_ONLY and len(marked) >= 15:  # the. that, on, by to; and on. is
        return min(1.0, 0.5 + (rate - FUNCTION_WORDS_ONLY) * 5), (
            f"{rate:.0%} function words (the, of, и, der, ...) in {len(marked)} words of running "
            "text: nothing for them to join"
        )
    run = longest = 0
    for w in marked:
        run = 0 if w.stop else run + 1
        longest = max(longest, run)
    if longest < UNPUNCTUATED_RUN:
        return 0.0, ""  # short items between commas and full stops: a list, notes, shorthand
    score = min(1.0, max(0.0, (0.07 - rate) / 0.05))
    return score, (
        f"only {rate:.0%} function words (the, of, и, der, ...) in {len(marked)} "
        "words of running text"
    )


UNPUNCTUATED_RUN = 5  # words in a row with no punctuation before too few function words count


FUNCTION_WORDS_ONLY = 0.93  # prose runs 35-60%, idioms up to ~90% ("it is what it is")


def windowed(t: Text) -> list[Signal]:
    """Script and soup signals over the whole text and over windows (catches a junk tail)."""
    out = []
    ws = t.words
    spans = [(0, len(ws))]
    size = 30
    if len(ws) > size + 10:
        spans += [(i, min(len(ws), i + size)) for i in range(0, len(ws) - size // 2, size // 2)]
    # Only the signals that can fire anywhere are windowed (Latin is always allowed; soup needs
    # three odd words; function words need ten words of running text).
    signals: list[tuple[SignalName, Callable[[list[Word]], tuple[float, str]]]] = []
    if any(w.scripts - LATIN for w in ws):
        signals.append(("script", lambda chunk: _script_signal(t, chunk)))
    if sum(1 for w in ws if w.weird) >= 3:
        signals.append(("soup", _soup_signal))
    if sum(1 for w in ws if w.fw is not None) >= 10:
        signals.append(("function-words", _function_word_signal))
        if t.reads_english:
            signals.append(
                (
                    "salad",
                    lambda chunk: structure.salad(_salad_words(chunk), _common_english),
                )
            )
    best: dict[SignalName, tuple[float, str, int]] = {}
    for lo, hi in spans:
        chunk = ws[lo:hi]
        for name, fn in signals:
            score, reason = fn(chunk)
            if score > best.get(name, (0.0, "", 0))[0] + 1e-9:
                best[name] = (score, reason, lo)
    for name, (score, reason, lo) in best.items():
        if lo > 0 and ws:
            start = ws[lo].start
            reason = (
                f"{reason}, from char {start} on (clean before)"
                if _clean_head(t, lo)
                else (f"{reason} (around char {start})")
            )
        out.append(Signal(name, score, reason))
    return out


def _salad_words(words: list[Word]) -> list[tuple[str, bool]]:
    """(word, is running text) for the salad signal, ("", False) for a number between words.
    Acronyms, short names (Mon, Om) and units after a number (500 mg, 7 d) are not the fragments
    salad is made of."""
    out = []
    for i, w in enumerate(words):
        if w.letters:
            prev = words[i - 1] if i else None
            nxt = words[i + 1] if i + 1 < len(words) else None
            unit = prev is not None and not prev.letters and prev.key[:1].isdigit()
            gloss = any(  # a romanization beside its native script: 蝦餃 har gow, あ a
                v is not None and v.scripts and not v.scripts <= LATIN for v in (prev, nxt)
            )
            running = w.fw is not None and not w.code and not w.caps and not unit and not gloss
            out.append((w.key, running and not (w.letters <= 3 and w.title)))
        elif w.key[:1].isdigit():
            out.append(("", False))
    return out


def _clean_head(t: Text, lo: int) -> bool:
    head = t.words[:lo]
    return (
        _soup_signal(head)[0] < 0.2
        and _script_signal(t, head)[0] < 0.2
        and _function_word_signal(head)[0] < 0.2
    )


def _common_english(word: str) -> bool:
    """A short word English uses (am, he, tap, tin, idk), not a fragment (ov, ux, ith)."""
    return zipf(word, "en") >= (COMMON_SHORT_ZIPF if len(word) < 3 else COMMON_THREE_ZIPF)


COMMON_THREE_ZIPF = 3.6  # three letters: tap, tin, imo, ppl are words; ith, cdr, ust are not


COMMON_SHORT_ZIPF = (
    4.5  # a short word this frequent is a word (am, he, ai), not a fragment (ov, ux)
)


def word_order_signal(t: Text) -> tuple[float, str]:
    """English running text whose neighbouring words English does not put together. Over every
    stretch of ORDER_SPAN word pairs holding ORDER_JUDGED or more that the counts can judge, the
    mean association (log2 of seen over chance); the worst stretch speaks. Prose stays above
    -1 (`of the` +2.7, `can create` +4.2); words drawn at random run -1.5 to -3 (`the of`, `he
    than`, `people no`)."""
    if not t.reads_english or t.structured:
        return 0.0, ""
    judged: list[tuple[float, int, str] | None] = []
    for a, b in itertools.pairwise(t.words):
        pmi = None
        if a.stop and a.fw and a.key in _NEVER_LAST and _ends_sentence(t.text, a.start):
            judged.append((-PMI_CLAMP, a.start, f"{a.key}."))  # a sentence that ends in `the.`
            continue
        if not (a.stop or a.fw is None or b.fw is None or a.code or b.code or a.caps or b.caps):
            if a.key.isalpha() and b.key.isalpha() and not (_letter_name(a) or _letter_name(b)):
                pmi = pair_association(a.key, b.key)
        judged.append(None if pmi is None else (pmi, a.start, f"{a.key} {b.key}"))
    worst: tuple[float, list[tuple[float, int, str]]] | None = None
    for i in range(max(1, len(judged) - ORDER_SPAN + 1)):
        window = [p for p in judged[i : i + ORDER_SPAN] if p is not None]
        if len(window) >= ORDER_JUDGED:
            mean = sum(p for p, _, _ in window) / len(window)
            if worst is None or mean < worst[0]:
                worst = (mean, window)
    if worst is None or worst[0] > ORDER_LOW:
        return 0.0, ""
    mean, window = worst
    shown = ", ".join(f"`{pair}`" for _, _, pair in sorted(window)[:3])
    return min(1.0, 0.3 + (ORDER_LOW - mean) * 0.7), (
        f"word order English does not use: {len(window)} word pairs from char {window[0][1]} on, "
        f"{-mean:.1f} (log2) below chance on average ({shown})"
    )


def _letter_name(w: Word) -> bool:
    """A capital letter standing for something (town A, point B), not the article or `I`."""
    return w.letters == 1 and w.title and w.key != "i"


def _ends_sentence(text: str, start: int) -> bool:
    token = TOKEN.match(text, start)
    return token is not None and token.group().rstrip("\"')*_”’»")[-1:] in (".", "!", "?")


# Words no English sentence ends in (`... and cooler the.`): articles, conjunctions, `of`, and
# the possessives that need a noun. (`a` is left out: `x = a.`; `to` too: `I want to.`)
_NEVER_LAST = frozenset("the an and or of but than my your their its our whose".split())


ORDER_SPAN = 24
ORDER_JUDGED = 8
ORDER_LOW = -1.1  # the worst stretch of real prose in the tuning half: -1.0 (text-speak)


def glued_signal(t: Text) -> tuple[float, str]:
    """Common words with a fragment glued on (factoriesyss, workersrey, slowlymul): what a
    decoder leaves when every few tokens go wrong. Two words glued by a missed space (ofthe,
    goldenhour) and suffixes (-ness, -able) are not counted. Three or more, 2% of the words."""
    glued = [w.key for w in t.words if w.listed is False and _glued_fragment(w.key)]
    if len(glued) < 3 or len(glued) < 0.02 * len(t.words):
        return 0.0, ""
    return min(1.0, 0.5 + 0.1 * (len(glued) - 3)), (
        f"{len(glued)} common words with a fragment glued on: {', '.join(glued[:4])}"
    )


def _glued_fragment(key: str) -> bool:
    if not (key.isascii() and key.isalpha() and len(key) >= 5):
        return False
    for cut in range(len(key) - 2, 2, -1):  # the longest common word it starts with
        head = zipf(key[:cut], "en")
        if head >= (GLUED_HEAD_ZIPF if cut >= 4 else GLUED_SHORT_HEAD_ZIPF):
            rest = key[cut:]
            return rest not in SUFFIXES and zipf(rest, "en") < GLUED_REST_ZIPF
    return False


GLUED_HEAD_ZIPF = 3.5  # bedroom, factories, slowly: a common word starts it
GLUED_SHORT_HEAD_ZIPF = 6.0  # a three-letter head must be one of the commonest (the, and, you)
GLUED_REST_ZIPF = 3.0  # what follows is no common word (yss, rey, mul; not hour, words)


def salad_signal(t: Text) -> tuple[float, str]:
    """Capitalised words strung together on a line of prose."""
    lines = [line.split() for line in t.text.split("\n")] if not t.structured else []
    if t.headline:
        lines = lines[1:]  # (its title)
    return structure.capitalised_run(lines)


def doubled_signal(t: Text) -> tuple[float, str]:
    """Prose in which many different words come twice in a row (`mask mask`, `you you`, `few
    few`): streamed tokens emitted twice, or a decoder that lost its place. A writer doubles one
    word for stress (`very very`, `bye bye`) or builds a pattern on it (`that that is is that that
    is not`: the same pair again); only words of the lists count (not stems: `gener gener`)."""
    if t.structured:
        return 0.0, ""
    pairs = Counter(
        a.key
        for a, b in itertools.pairwise(t.words)
        if a.key == b.key
        and not a.stop
        and a.fw is not None
        and b.fw is not None
        and a.key.isalpha()
        and (a.fw or a.listed)
    )
    doubled = [k for k, n in pairs.items() if n == 1]
    running = sum(1 for w in t.words if w.fw is not None)
    if len(doubled) < DOUBLED_MIN or len(doubled) < DOUBLED_SHARE * running:
        return 0.0, ""
    return min(1.0, 0.5 + 0.15 * (len(doubled) - DOUBLED_MIN)), (
        f"{len(doubled)} different words written twice in a row: "
        + ", ".join(f"`{k} {k}`" for k in doubled[:4])
    )


DOUBLED_MIN = 4  # a text about doubling writes a few (`is is`, `it it`, `had had`)
DOUBLED_SHARE = 0.02


def sprinkle_signal(t: Text) -> tuple[float, str]:
    """English prose with words of several other languages dropped into its sentences
    (`Thousands qualquer banks failed`, `in начнут row`, `gelegentlich caffeine`): a decoder
    that lost a token now and then. A writer who code-switches draws on one other language
    (Spanglish, Franglais) and a glossary sets its words apart or repeats them; stray words come
    once each, from three languages or more."""
    if not t.english_text or t.structured:
        return 0.0, ""
    stray: dict[str, str] = {}
    latin: list[str] = []
    quoted = [m.span() for m in QUOTED.finditer(t.text)]
    seen = Counter(w.key for w in t.words)
    for w in t.words:
        if w.fw is None or w.fw or w.title or w.caps or w.code or w.letters < 2:
            continue
        if seen[w.key] > 1 or any(a <= w.start < b for a, b in quoted):
            continue  # (a term the answer repeats, or sets apart, is meant)
        if w.scripts != LATIN:
            script = next(iter(w.scripts)) if len(w.scripts) == 1 else ""
            if script and w.key.isalpha():
                stray.setdefault(w.key, script)
        elif w.letters >= 4 and w.key.isalpha() and zipf(w.key, "en") < SPRINKLE_EN_ZIPF:
            latin.append(w.key)
    if len(stray) + len(latin) < SPRINKLE_MIN:
        return 0.0, ""  # (the other languages' lists are loaded only when they could tell)
    for key in latin:
        lang = common_elsewhere(key, SPRINKLE_ZIPF)
        if lang:
            stray.setdefault(key, lang)
    langs = set(stray.values())
    if len(stray) < SPRINKLE_MIN or len(langs) < SPRINKLE_LANGS:
        return 0.0, ""
    shown = ", ".join(f"{k} ({lang})" for k, lang in list(stray.items())[:4])
    return min(1.0, 0.5 + 0.1 * (len(stray) - SPRINKLE_MIN)), (
        f"{len(stray)} words of {len(langs)} other languages inside English sentences: {shown}"
    )


SPRINKLE_EN_ZIPF = 2.5  # rarer than this in English (qualquer, londra; not cafe, fiesta)
SPRINKLE_ZIPF = 3.5  # and a common word of another language
SPRINKLE_MIN = 3
SPRINKLE_LANGS = 3


def stub_sentences(t: Text) -> tuple[float, str]:
    """English prose broken into one-word sentences of function words (`the. The. a. before.`):
    a decoder that can only end what it starts. An article or a preposition never stands as a
    sentence alone; a capital letter may (`Answer: A.`, `A. Paris`), so it is not counted."""
    if not t.english_text or t.structured:
        return 0.0, ""
    stubs = [
        w.key
        for i, w in enumerate(t.words)
        if w.fw
        and w.key in _STUB_WORDS
        and not (w.letters == 1 and w.title)
        and _ends_sentence(t.text, w.start)
        and (i == 0 or t.words[i - 1].stop or _ends_sentence(t.text, t.words[i - 1].start))
    ]
    if len(stubs) < STUBS_MIN:
        return 0.0, ""
    return min(1.0, 0.5 + 0.1 * (len(stubs) - STUBS_MIN)), (
        f"{len(stubs)} sentences of one function word ({', '.join(f'`{k}.`' for k in stubs[:4])})"
    )


STUBS_MIN = 4
_STUB_WORDS = _NEVER_LAST | {"a", "to", "in", "on", "at", "by", "for", "with", "from", "before"}
