"""Languages written in Latin letters that word lists do not hold: romanized Hindi and Urdu
(Hinglish), Bengali, Tamil, Telugu, Arabic (Arabizi), Japanese (romaji), Chinese (pinyin), Russian,
Greek, Persian and Korean as people type them in chats, and as models answer in them.

wordfreq lists these languages in their own scripts only, and pycld2 reads them as English at
a guess, so their words look unlisted, word after word, like soup. What tells them apart is the
small words: each language has a few dozen (`hai`, `ke`, `mein`; `desu`, `wa`; `shi`, `le`) that
come back in every sentence, where soup's fragments rarely recur and never as one language's
grammar. The lists below hold those words, with no diacritics and in the commonest spellings.
"""

from __future__ import annotations

ROMANIZED: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "hi": """hai hain tha thi thay mein  hum aap tum kya kyun kyon kaise kaisa kahan
            nahi nahin aur bhi liye karna karne karo kare karte karta kiya kijiye sakte sakta
            sakti raha rahe rahi hota hoti hote wala wali wale yeh woh jab tab agar lekin
            phir bahut sabse pehle abhi accha achha acha theek thik haan bilkul yaar bhai
            matlab samajh chahiye zaroor zaroori ke ka ki ko se pe ek  apna apne apni
            unka unki iska uska mera meri  tera teri kuch sab koi kab kitna kitne dekho
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
            cheyyandi kaadu avunu""",
        "ar": """ana enta enti inta howa heya ehna ento el fi mesh mish msh ezay ezzay kda keda
            bas yalla inshallah wallah habibi shokran 3ala 3an ma3a ba3d 2abl keteer kteer
            7aga 7elw ahlan marhaba tayeb tab3an leh feen""",
        "ja": """watashi anata kare kanojo desu deshita masu mashita shimasu imasu arimasu nai
            kudasai sumimasen arigatou arigato gozaimasu konnichiwa ohayou sayonara nani
            doko  itsu kore sore kono sono totemo  soshite kara  dake wa ga wo
            ni de no ka ne yo mo""",
        "zh": """wo ni ta  nimen tamen shi bu hen hao de le ma ne zai mei shenme zenme
            weishenme keyi yao xiang qu lai kan shuo zhe zhege nage yige yixie jintian
            mingtian zuotian xiexie nihao dui ye hai""",
        "ru": """ya ty ona my vy oni eto chto kak gde kogda pochemu ne  da privet poka
            spasibo pozhaluysta ochen mnogo horosho khorosho ploho segodnya zavtra vchera
            tozhe uzhe esli chtoby mozhno nuzhno dela menya tebya nas vas byl bylo budet""",
        "el": """kalimera kalispera geia yia sou mou einai ti pos kai na tha exo eho exei ehei
            eimai poli kala efharisto efxaristo parakalo nai oxi ego esy gia apo sto stin ston
            kati tora simera avrio pou kaneis kanis tipota""",
        "fa": """salam  to ma shoma chi chera koja khoob khob merci mamnoon hast nist  ba
            az dar ke ro mikonam mikham""",
        "ko": """annyeong annyeonghaseyo saranghae gamsahamnida kamsahamnida aniyo jeo neo uri
            mwo wae eodi juseyo haseyo imnida isseoyo eopseoyo""",
    }.items()
}


def romanized_language(keys: list[str]) -> str:
    """The language whose small words make ROMANIZED_SHARE of these lower-case words or more,
    ROMANIZED_DISTINCT different ones of three letters or more among them; '' when none does.
    English shares some short ones (`to`, `do`, `no`): the share and the long ones tell; the
    long words English uses (main, made, women) are left out."""
    if len(keys) < ROMANIZED_MIN_WORDS:
        return ""
    best, best_hits = "", 0
    for lang, words in ROMANIZED.items():
        hits = [k for k in keys if k in words]
        distinct = {k for k in hits if len(k) >= 3}
        if len(hits) >= ROMANIZED_SHARE * len(keys) and len(distinct) >= ROMANIZED_DISTINCT:
            if len(hits) > best_hits:
                best, best_hits = lang, len(hits)
    return best


ROMANIZED_MIN_WORDS = 6
ROMANIZED_SHARE = 0.15
ROMANIZED_DISTINCT = 3
