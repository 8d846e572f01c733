"""English mentions: noun phrases found by capitalisation and a stop-word list, with model names ("Galaxy S23
Ultra"), letter names ("vitamin D") and common noun phrases; and the English tokenizer the rules share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from operator import ne

from ... import lexicon as lx
from ..base import Mention

_EN_TOKEN_RE = re.compile(r"[A-Za-z0-9][\w'’\-\.]*[\w]\+?|[A-Za-z0-9]\+?|[^\w\s]", re.UNICODE)


_POSSESSIVE_RE = re.compile(r"['’]s$", re.IGNORECASE)


def en_tokens(text: str) -> list[str]:
    """Word and punctuation tokens; a possessive 's is cut off ("Zappa's" → "Zappa")."""
    toks = _EN_TOKEN_RE.findall(text)
    if "'" not in text and "’" not in text:
        return toks
    # no token holds a newline, so _POSSESSIVE_RE matches exactly the last two characters in _POSSESSIVE_ENDS
    return [t[:-2] if len(t) > 2 and t[-2:] in _POSSESSIVE_ENDS else t for t in toks]


_POSSESSIVE_ENDS = frozenset(q + s for q in "'’" for s in "sSſ")  # ſ: 's' under re.IGNORECASE


_EN_OPEN_QUOTES = frozenset({'"', "“"})
_EN_CLOSE_QUOTES = frozenset({'"', "”"})
_EN_TITLE_MAX = 6


def is_cap(tok: str) -> bool:
    if tok.isascii():  # the same test without a generator per character (ASCII: upper = changed by lower())
        head = tok[:1]
        if head.isupper():
            return True
        if head.isalpha():  # a lower-case letter: the token is all lower case unless a capital follows
            return not tok.islower()
        return head.isdigit() and tok.lower() != tok.upper() and not _number_word(tok)
    return tok[:1].isupper() or (any(c.isupper() for c in tok[1:]) and tok[:1].isalpha()) or (
        tok[:1].isdigit() and any(c.isalpha() for c in tok) and not _number_word(tok))


def _number_word(tok: str) -> bool:
    """A number-led word that is no model name: "2x", "2-year-old", "30cm"."""
    return bool(_MULTIPLIER_RE.fullmatch(tok) or _MEASURE_ADJ_RE.fullmatch(tok) or _EN_UNIT_RE.fullmatch(tok))


_MULTIPLIER_RE = re.compile(r"\d+(?:\.\d+)?x")  # "2x miles", "1.5x speed": a multiplier, no model name
# "2-year-old", "10-inch", "3-day": a number-led hyphenated word in lower case is an adjective, no model name
_MEASURE_ADJ_RE = re.compile(r"\d+(?:\.\d+)?(?:-[a-z]+)+")
# "30cm", "12gb": a number and a unit in lower case is a measurement, no model name ("5g", "90s", "5k" stay words)
_EN_UNIT_RE = re.compile(r"\d+(?:\.\d+)?(?:mm|cm|km|m|mg|kg|ml|l|oz|lb|lbs|ft|in|gb|mb|tb|kb|hz|khz|mhz|ghz|mah|wh|"
                         r"kwh|kw|w|v|mph|kph|fps|ms|min|h|hr|hrs|yr|yrs)")


_EN_RANGE_MARKS = frozenset({"–", "-", "—", ":", "/", "%"})


def _model_part(tok: str) -> bool:
    """A version or model number inside a name: 3.12, 70B, 4o, 13, S24+, 4090 (a year on its own is no part:
    four digits from 1800 to 2099, or a longer number)."""
    if tok.isalpha():
        return False  # (no digit in it: the common case, one test)
    if tok.isdigit() and (len(tok) > 4 or (len(tok) == 4 and _YEAR_LO <= int(tok) <= _YEAR_HI)):
        return False
    return tok[:1].isalnum() and any(c.isdigit() for c in tok)


_YEAR_LO, _YEAR_HI = 1800, 2099
_DIGIT_RE = re.compile(r"[0-9]")


def en_mentions(text: str) -> list[Mention]:
    """Proper-noun spans (capitalised runs, with of/the/and inside) and common-noun runs."""
    toks = en_tokens(text)
    out: list[Mention] = []
    n = len(toks)
    # each token lower-cased and tested for a capital once (``is_cap``). In ASCII, a token led by a letter is
    # capitalised unless it is all lower case, i.e. when lower() changes it; one led by neither a letter nor a
    # digit never is (and lower() changes nothing of it); a digit-led one is asked (it needs a digit in the text)
    lows = list(map(str.lower, toks))
    if text.isascii():
        caps = list(map(ne, toks, lows))
        if _DIGIT_RE.search(text):
            for k, t in enumerate(toks):
                if t[0].isdigit():
                    caps[k] = is_cap(t)
    else:
        caps = [(not t.islower() if t[0].isalpha() else t[0].isdigit() and is_cap(t)) if t.isascii() else is_cap(t)
                for t in toks]
    stop, pronouns, relational, verbs = lx.STOP_EN, lx.EN_PRONOUNS, lx.RELATIONAL_EN, lx.EN_VERBS
    aux, subject_pronouns = lx.EN_AUX, lx.EN_SUBJECT_PRONOUNS
    i = 0
    sentence_start = True
    while i < n:
        tok = toks[i]
        low = lows[i]
        if tok in _EN_OPEN_QUOTES:
            j = next((k for k in range(i + 1, min(n, i + _EN_TITLE_MAX + 2)) if not toks[k][0].isalnum()), n)
            inner = toks[i + 1:j]
            if inner and j < n and toks[j] in _EN_CLOSE_QUOTES and caps[i + 1] and all(
                    caps[k] or lows[k] in lx.EN_FUNCTION for k in range(i + 1, j)):
                # a quoted title ("This Is Music", "Chikni Chameli"): one name, even with small words inside
                out.append(Mention(" ".join(inner), True, "title", lows[j - 1]))
                i = j + 1
                sentence_start = False
                continue
        if not tok[0].isalnum():
            sentence_start = tok in ".?!:;"
            i += 1
            continue
        if i and toks[i - 1] == "=":
            i += 1  # a value given in code or a setting ("capture_output=True", "level=DEBUG"): no name, no noun
            continue
        if i and toks[i - 1] == "°" and len(tok) == 1:
            i += 1  # a temperature's unit ("-6°C", "180 °F"), not a name
            continue
        if caps[i] and not (sentence_start and (low in stop or low in relational or low in lx.EN_OPENERS)) \
                and low not in pronouns and low != "i" and not low.startswith(("i'", "i’")):
            j = i + 1
            end = i + 1
            while j < n:
                t2 = toks[j]
                if caps[j] and t2[0].isalnum() and lows[j] not in pronouns:
                    j += 1
                    end = j
                elif (_model_part(t2) and not (j + 1 < n and toks[j + 1] in _EN_RANGE_MARKS)) or (
                        lows[j] in lx.EN_MODEL_SUFFIXES and _model_part(toks[j - 1])):
                    j += 1  # one mixed-script name: "Python 3.12", "Llama 3.1 70B", "GPT-4o mini", "XPS 13"
                    end = j
                elif lows[j] in lx.EN_CONNECTORS:
                    k = j
                    while k < n and lows[k] in lx.EN_CONNECTORS:
                        k += 1
                    if k < n and k - j <= 2 and caps[k] and lows[k] not in pronouns:
                        j = k
                    else:
                        break
                else:
                    break
            det = "the " if i > 0 and lows[i - 1] == "the" else ""
            if det and not (i >= 2 and lows[i - 2] in aux):
                # "the Bronze Age collapse", "the BBC experiment": a name modifying a common head noun
                k = end
                while k < n and k - end < 2 and plain_noun(toks[k]):
                    k += 1
                end = k
            single = end == i + 1
            if single and sentence_start and (low.endswith("ing") or "'" in low or "’" in low or low in verbs
                                              or (end < n and (lows[end] in _EN_OBJECT_AFTER_VERB
                                                               or _manner_adverb(toks, end)))):
                # ("Soak them overnight", "Add the rice": a capitalised word with an object right after it)
                # "Considering …", "Isn’t it …", "Visit …": a sentence-initial verb or contraction, no name
                i = end
                sentence_start = False
                continue
            if single and sentence_start and not det and en_initial_common(toks, i):
                # "Border collies are …", "Diagonal cracks mean …": a sentence-initial capital on a common noun
                k = i + 1
                while k < n and k - i < 3 and plain_noun(toks[k]) and not en_adverb(toks[k]) \
                        and not _verb_form(toks[k]):  # "… sales rose …": the phrase ends before its verb
                    k += 1
                words_ = [tok, *lows[i + 1:k]]
                out.append(Mention(" ".join(words_), False, "noun", words_[-1]))
                i = k
                sentence_start = False
                continue
            if single and tok.isupper() and low in relational:
                out.append(Mention(low, False, "noun", low, det))  # "the CEO": a role of something, no name
            elif not (single and low in lx.EN_CALENDAR):  # "In December, ...", "Three of them": no name
                out.append(Mention(" ".join(toks[i:end]), True, "proper", lows[end - 1], det))
            i = end
            sentence_start = False
            continue
        # common-noun run: content words that are not verbs by position (``_verb_position``, read from ``lows``)
        if low in stop or low.endswith("ed") or (sentence_start and (low in lx.EN_OPENERS or low.endswith("ing"))) \
                or (("'" in low or "’" in low) and _EN_CONTRACTION_RE.search(low)) \
                or (len(low) > 5 and low.endswith(_EN_ADVERB_ENDS)):  # (``_no_noun``)
            # ("Hmm, …", "Feeling tired, …")
            sentence_start = False
            i += 1
            continue
        prev = lows[i - 1] if i else ""
        if prev in subject_pronouns or prev == "to" or (("'" in prev or "’" in prev) and _EN_CONTRACTION_RE.search(prev)) \
                or (i == 1 and prev in lx.EN_WH) or (low.endswith("ing") and (prev in aux or prev in _EN_BE_CONTRACTED)) \
                or (prev in aux and low in lx.EN_PARTICIPLES):
            sentence_start = False
            i += 1
            continue
        j = i + 1
        verb_next = False
        while j < n and j - i < 4 and toks[j][0].isalnum() and not caps[j]:
            lj = lows[j]
            if lj in stop or (("'" in lj or "’" in lj) and _EN_CONTRACTION_RE.search(lj)) \
                    or (len(lj) > 5 and lj.endswith(_EN_ADVERB_ENDS)):  # (``_no_noun``)
                break
            # the verb after a subject noun phrase (``_ends_subject``) or one taking an object (``_verb_with_object``)
            pb = lows[j - 1]
            plural_before = pb.endswith("s") and not pb.endswith("ss")
            if lj in verbs:
                # the subject of a do/modal question opens at i ("How did [this tradition] start?": ``_after_do``)
                k = i - 1
                if k >= 0 and lows[k] in EN_DETS:
                    k -= 1
                subject = k >= 0 and lows[k] in _EN_DO_MODAL
                if subject and not plural_before and j + 2 < n and lows[j + 2] in verbs \
                        and (plain_noun(toks[j + 1]) or lows[j + 1] in relational):
                    ends = False  # "does our parental leave | policy work": a noun, as the verb comes after the next one
                else:
                    ends = subject or plural_before
                if not ends and not (i >= 2 and lows[i - 2] in _EN_BE):
                    k = j + 1
                    if k < n and lows[k] in _EN_PARTICLES:
                        k += 1
                    ends = k < n and lows[k] in _EN_OBJECT_AFTER_VERB
            else:
                # "the wiki server | backed up", "the logs | stored?": a past participle closing the clause (or its
                # particle or agent after it) is the predicate, not a noun of the run ("-eed": speed, seed are nouns)
                ends = (plural_before and lj.endswith("ing")) or (
                    len(lj) >= 6 and lj.endswith("ed") and not lj.endswith("eed")
                    and (j + 1 == n or not toks[j + 1][0].isalnum() or lows[j + 1] in _EN_PARTICLES
                         or lows[j + 1] in ("by", "from")))
            if ends:
                verb_next = True
                break
            j += 1
        if j == i + 1 and tok.isalpha():
            # one word without a digit (the common case): no model name, number or unit; a noun unless it is
            # too short or a quantity word (what the general case below does with it)
            w = tok if caps[i] else low
            if len(w) >= 3 and w not in _EN_QUANTITY_WORDS:
                out.append(Mention(w, False, "noun", low, "the " if i > 0 and lows[i - 1] == "the" else ""))
            i = j + verb_next
            sentence_start = False
            continue
        span = [toks[k] if caps[k] else lows[k] for k in range(i, j)]
        k = _lower_model_end(span)
        model = k > 0
        rest: list[str] = []
        if model and k < len(span):  # "the galaxy s23 camera": the name, then its aspect on its own
            span, rest = span[:k], span[k:]
        while not model and len(span) > 1 and span[-1].replace(",", "").replace(".", "").isdigit():
            span.pop()  # "around 1,010 mg" / "about 5": a number closes no noun phrase
        # "300 mph", "010 mg" (of "1,010 mg"): a number and a unit abbreviation are a measurement, no entity
        if len(span) > 1 and _EN_UNIT_RE.fullmatch(span[0]):
            span = span[1:]  # "the 12gb card": the card
        measure = span[0].isdigit() and (all(len(t) <= 3 for t in span[1:]) or (
            len(span) >= 2 and span[1] in _EN_TIME_UNITS and (len(span) == 2 or span[1].endswith("s"))))
        # ("12 minutes", "12 minutes late": a measurement; "a 3 day trip" is a trip)
        if model or not measure and not (len(span) == 1 and (len(span[0]) < 3 or span[0] in _EN_QUANTITY_WORDS)):
            det = "the " if i > 0 and lows[i - 1] == "the" else ""
            out.append(Mention(" ".join(span), model, "proper" if model else "noun", span[-1].lower(), det))
        if rest and not (len(rest) == 1 and len(rest[0]) < 3):
            out.append(Mention(" ".join(rest), False, "noun", rest[-1].lower()))
        i = max(j + verb_next, i + 1)
        sentence_start = False
    return out


def en_initial_common(toks: Sequence[str], i: int) -> bool:
    """Is the capitalised word opening a sentence at ``toks[i]`` (of ``en_tokens(text)``) the modifier of a common
    noun phrase ("Border collies are very smart", "Diagonal cracks mean …") rather than a name? It is followed by a
    plain lower-case noun and a clause of at least three more words (a bare phrase, "California state?", is a name
    as often as not), is no all-capitals abbreviation, and the text never writes it capitalised inside a sentence
    ("Google search is down again today. I use Google daily." keeps Google a name).

    >>> en_initial_common(en_tokens("Border collies are very smart."), 0)
    True
    >>> en_initial_common(en_tokens("Google search is down again today. I use Google daily."), 0)
    False
    """
    tok = toks[i]
    if tok.isupper() or not tok.isalpha() or any(c.isupper() for c in tok[1:]) or i + 1 >= len(toks) \
            or not plain_noun(toks[i + 1]) or _verb_form(toks[i + 1]):
        return False  # (McDonald's, Coca-Cola, iPhone-like inner capitals, "Netflix grew …" are names)
    k = i + 2
    while k < len(toks) and toks[k] not in (".", "?", "!", ";", ":"):
        k += 1
    if sum(1 for t in toks[i + 2:k] if t[0].isalnum()) < _EN_CLAUSE_AFTER_WORDS:
        return False  # a bare phrase ("Thyssen museum", "California state?") is most often a name
    return tok not in _caps_inside(tuple(toks))


def _verb_form(tok: str) -> bool:
    """A verb by its form or the verb lexicon: "grew", "rose", "fell", "dropped" (not "sales", "collies")."""
    low = tok.lower()
    return low in lx.EN_VERBS or low in _EN_IRREGULAR_PAST or (low.endswith("ed") and len(low) > 4)


_EN_IRREGULAR_PAST = frozenset({"grew", "rose", "fell", "fall", "rise", "grow", "went", "came", "took", "made",
                                "became", "began", "won", "lost", "sold", "bought", "left", "got", "saw", "said"})


@lru_cache(maxsize=1024)
def _caps_inside(toks: tuple[str, ...]) -> frozenset[str]:
    """The capitalised tokens a text writes inside a sentence (not right after its start or . ? ! : ;)."""
    return frozenset(t for j, t in enumerate(toks) if j > 0 and toks[j - 1] not in (".", "?", "!", ";", ":")
                     and t[:1].isupper())


_EN_CLAUSE_AFTER_WORDS = 3


_EN_OBJECT_AFTER_VERB = frozenset({"them", "it", "him", "her", "us", "me", "the", "a", "an", "your", "my", "this",
                                   "these", "those", "some"})
_EN_TIME_UNITS = lx.EN_TIME_UNITS  # "12 minutes late": a measurement, no entity
_EN_QUANTITY_WORDS = frozenset({"around", "about", "approximately", "roughly", "nearly", "almost", "over", "under"})
_EN_CONTRACTION_RE = re.compile(r"['’](?:ve|d|ll|re|m|t)$")
_EN_ADVERB_ENDS = ("ally", "ibly", "ably", "ously", "ively", "fully", "lessly", "edly", "ingly", "ently", "antly")


_EN_LOWER_MODEL_RE = re.compile(r"[a-z]+\d+[a-z\d]*|\d+\.\d+")  # ev6, s23, rtx4090, a7c; a version: 3.12
# a number after these counts or ranks ("top 10", "day 3", "about 5"): no model number
_EN_NOT_MODEL_WORDS = _EN_QUANTITY_WORDS | _EN_TIME_UNITS | frozenset({
    "top", "best", "worst", "first", "last", "next", "page", "pages", "step", "steps", "chapter", "level", "part",
    "number", "than", "least", "most", "only", "just"})


def _lower_model_end(span: Sequence[str]) -> int:
    """Where a model name typed in lower case ends in a noun run (0: none): a letter-led word with digits
    ("kia ev6", "galaxy s23"), or a word and its version ("python 3.12"; "about 2.5" is a quantity). A plain
    number is no model number here: "insurance company 2" (MuDoCo) is a label, "ioniq 5" looks the same."""
    end = 0
    for k, t in enumerate(span):
        if t.isalpha():
            continue  # no digit: no model name nor version (the common case, one test)
        if not t[:1].isdigit():
            if _EN_LOWER_MODEL_RE.fullmatch(t):
                end = k + 1
        elif k > 0 and len(span[k - 1]) > 1 and span[k - 1].isalpha() and span[k - 1] not in _EN_NOT_MODEL_WORDS \
                and _EN_LOWER_MODEL_RE.fullmatch(t):
            end = k + 1
    return end


def _manner_adverb(toks: Sequence[str], k: int) -> bool:
    """ "Expect roughly -3°C", "Allow approximately 20 minutes": an adverb and then a number, a sign or an object
    after a capitalised first word make it a verb ("Paris usually has mild winters" keeps its name)."""
    low = toks[k].lower()
    if not (len(low) > 4 and en_adverb(low)) or k + 1 >= len(toks):
        return False
    nxt = toks[k + 1]
    return nxt[:1].isdigit() or nxt in ("-", "−", "–", "~") or nxt.lower() in _EN_OBJECT_AFTER_VERB


# words in -ly that are no adverbs ("early blight", "a daily planner", "family")
EN_NOT_ADVERBS = frozenset({"family", "italy", "sally", "early", "daily", "weekly", "monthly", "yearly", "supply",
                            "reply", "apply", "belly", "jelly", "rally", "holy", "lily", "ugly", "friendly", "elderly",
                            "curly", "woolly", "silly", "july"})


def en_adverb(word: str) -> bool:
    """A word in -ly that is an adverb ("usually", "really"), not "early blight", "daily planner", "family"."""
    low = word.lower()
    return low.endswith("ly") and low not in EN_NOT_ADVERBS


def _no_noun(low: str) -> bool:
    """A contraction ("I’ve", "don't") or a manner adverb ("possibly", "actually"): never part of a noun."""
    return bool(_EN_CONTRACTION_RE.search(low)) or (len(low) > 5 and low.endswith(_EN_ADVERB_ENDS))


_EN_DO_MODAL = frozenset({"do", "does", "did", "can", "could", "will", "would", "should", "may", "might", "must"})
EN_DETS = frozenset({"the", "this", "that", "these", "those", "a", "an", "my", "your", "his", "her", "its", "their",
                      "our"})
_EN_BE_CONTRACTED = frozenset({"i'm", "i’m", "we're", "we’re", "you're", "you’re", "they're", "they’re", "he's", "he’s",
                               "she's", "she’s"})


def plain_noun(tok: str) -> bool:
    """A lower-case content word that can head a noun phrase (not a verb form, not relational)."""
    low = tok.lower()
    return (tok[:1].isalpha() and not is_cap(tok) and low not in lx.STOP_EN and low not in lx.RELATIONAL_EN
            and low not in lx.EN_VERBS and low not in lx.EN_PARTICIPLES and not low.endswith(("ed", "ing")))


def _after_do(toks: Sequence[str], i: int) -> bool:
    """Token i opens the subject of a do/modal question ("How did [this tradition] start?")."""
    k = i - 1
    if k >= 0 and toks[k].lower() in EN_DETS:
        k -= 1
    return k >= 0 and toks[k].lower() in _EN_DO_MODAL


def _ends_subject(toks: Sequence[str], j: int, subject: bool) -> bool:
    """Token j is the verb after a subject noun phrase: "tradition | start", "dogs | live", "restaurants |
    serving"."""
    low = toks[j].lower()
    plural_before = toks[j - 1].lower().endswith("s") and not toks[j - 1].lower().endswith("ss")
    if low in lx.EN_VERBS:
        if subject and not plural_before and j + 2 < len(toks) and toks[j + 2].lower() in lx.EN_VERBS \
                and (plain_noun(toks[j + 1]) or toks[j + 1].lower() in lx.RELATIONAL_EN):
            return False  # "does our parental leave | policy work": a noun, as the verb comes after the next one
        return subject or plural_before
    return plural_before and low.endswith("ing")


_EN_PARTICLES = frozenset({"for", "at", "into", "up", "out", "on", "off"})
# "Is the price increase a surprise?": after "is the" a noun compound is the subject, its last word no verb
_EN_BE = frozenset({"is", "are", "was", "were", "isn't", "aren't", "wasn't", "weren't"})


def _verb_with_object(toks: Sequence[str], j: int) -> bool:
    """Token j is a verb taking an object right after it ("At that price | look for an aluminum frame", "dogs
    | need the"): a known verb, then a determiner or object pronoun (a particle may come between)."""
    if toks[j].lower() not in lx.EN_VERBS:
        return False
    k = j + 1
    if k < len(toks) and toks[k].lower() in _EN_PARTICLES:
        k += 1
    return k < len(toks) and toks[k].lower() in _EN_OBJECT_AFTER_VERB


def _verb_position(toks: Sequence[str], i: int) -> bool:
    """True when token i sits where English puts a verb: after 'aux + subject' ("can it spread"),
    right after an opening wh-word ("what causes", "who founded"), after a subject pronoun, or an -ed word
    after a wh/aux."""
    low = toks[i].lower()
    prev = toks[i - 1].lower() if i >= 1 else ""
    prev2 = toks[i - 2].lower() if i >= 2 else ""
    if prev in lx.EN_SUBJECT_PRONOUNS or prev in ("to",) or _EN_CONTRACTION_RE.search(prev):
        return True  # "I’ve heard", "we'd like": a contracted subject and auxiliary come before a verb
    if prev2 in lx.EN_AUX and prev in lx.EN_SUBJECT_PRONOUNS:
        return True
    if i == 1 and prev in lx.EN_WH:
        return True
    if low.endswith("ed") and prev in lx.EN_AUX | lx.EN_WH:
        return True
    if low.endswith("ing") and (prev in lx.EN_AUX or prev in _EN_BE_CONTRACTED):  # "I am looking", "I'm going"
        return True
    if low in lx.EN_PARTICIPLES and prev in lx.EN_AUX:  # "What is done with ..."
        return True
    return False


_EN_LETTER_AFTER_RE = re.compile(r"\s+([A-Z]\d{0,2})(?![\w'’-])")


def _en_letter_names(text: str, ms: list[Mention]) -> list[Mention]:
    """"vitamin D", "vitamin B12", "hepatitis A": a common noun with one capital letter (and up to two digits)
    after it names one thing."""
    out: list[Mention] = []
    for m in ms:
        if out and m.proper and len(m.text) <= 3 and not out[-1].proper and (i := text.find(out[-1].text)) >= 0 \
                and (nxt := _EN_LETTER_AFTER_RE.match(text, i + len(out[-1].text))) is not None and nxt.group(1) == m.text:
            prev = out.pop()
            out.append(Mention(f"{prev.text} {m.text}", True, "proper", m.text.lower(), prev.det))
            continue
        out.append(m)
    return out


@lru_cache(maxsize=8192)
def mentions(text: str) -> tuple[Mention, ...]:
    """The noun phrases of an English text (cached: history turns are read again on every later turn)."""
    return tuple(_en_letter_names(text, en_mentions(text)))
