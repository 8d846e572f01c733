"""Word lists kept as data (package files) and the small closed classes the rules need. Loaded once."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml


def _read_words(name: str, section: str | None = None) -> frozenset[str]:
    """Words of a list file; with ``section``, only those under its ``# [section]`` header."""
    text = resources.files("convsearch.data").joinpath(name).read_text(encoding="utf-8")
    out: set[str] = set()
    current = None
    for line in text.splitlines():
        if line.startswith("# ["):
            current = line[3:].split("]")[0]
            continue
        if line.startswith("#") or (section is not None and current != section):
            continue
        out.update(line.split())
    return frozenset(out)


def _read_lines(name: str, section: str) -> tuple[str, ...]:
    """Entries of a list file's ``# [section]``, one per line (an entry may hold spaces), in file order."""
    text = resources.files("convsearch.data").joinpath(name).read_text(encoding="utf-8")
    out: list[str] = []
    current = None
    for line in text.splitlines():
        if line.startswith("# ["):
            current = line[3:].split("]")[0]
        elif not line.startswith("#") and current == section and line.strip():
            out.append(line.strip())
    return tuple(out)


STOP_EN = _read_words("stopwords_en.txt")
EN_FUNCTION = _read_words("stopwords_en.txt", "function")  # closed-class words only
STOP_ZH = _read_words("stopwords_zh.txt")
RELATIONAL_EN = _read_words("relational.txt", "en")
RELATIONAL_ZH = _read_words("relational.txt", "zh")
# Nouns naming the kind of thing a session is about ("the band", "the film"): a definite one with no
# name of its own points at the session's entity.
EN_CLASS_NOUNS = _read_words("relational.txt", "en_class")
# Common English verbs (base and -s forms) and irregular past participles: they end a subject noun phrase
EN_VERBS = _read_words("verbs_en.txt", "base")
EN_PARTICIPLES = _read_words("verbs_en.txt", "participles")
# nouns whose plural takes no -s (a "they" for "a house mouse" is house mice; the guard knows mice for mouse)
EN_IRREGULAR_PLURALS = {"mouse": "mice", "goose": "geese", "louse": "lice", "ox": "oxen", "tooth": "teeth",
                        "foot": "feet", "child": "children", "person": "people", "man": "men", "woman": "women",
                        "cactus": "cacti", "fungus": "fungi", "wolf": "wolves", "leaf": "leaves", "knife": "knives",
                        "calf": "calves"}
EN_SINGULAR_OF = {v: k for k, v in EN_IRREGULAR_PLURALS.items()}
# Feedback on an answer ("That's very helpful", "It sounds wonderful"): the pronoun is no reference
EN_EVALUATIVE = _read_words("feedback_en.txt", "evaluative")
EN_PERCEPTION = _read_words("feedback_en.txt", "perception")
EN_INTENSIFIERS = _read_words("feedback_en.txt", "intensifiers")
# The "it" of the weather ("Will it drizzle on Tuesday?") stands for nothing
EN_WEATHER = _read_words("feedback_en.txt", "weather")
EN_WEATHER_GLUE = _read_words("feedback_en.txt", "weather_glue")
# Verbs that jieba tags v but that head or modify noun phrases (入职流程, 报销审批)
ZH_NOMINAL_VERBS = _read_words("relational.txt", "zh_nominal_verbs")


@lru_cache(maxsize=1)
def synonyms() -> dict[str, tuple[tuple[str, ...], ...]]:
    data = yaml.safe_load(resources.files("convsearch.data").joinpath("synonyms.yaml").read_text(encoding="utf-8"))
    return {lang: tuple(tuple(str(w) for w in g) for g in groups) for lang, groups in data.items()}


# --- Chinese -------------------------------------------------------------------------------------
# Pronouns and demonstratives that stand for an entity of an earlier turn.
ZH_PRONOUNS = frozenset({"它", "它们", "他", "她", "他们", "她们", "其", "该", "此", "前者", "后者", "上面", "上述",
                         "这个", "那个", "这款", "那款", "这家", "那家", "这里", "那里", "这儿", "那儿", "这些", "那些"})
# Determiners that may precede a noun ("这款手机"); bare, they are pronouns.
ZH_DETERMINERS = frozenset({"这个", "那个", "这款", "那款", "这家", "那家", "该", "这些", "那些", "此", "其"})
# 这/那 + a classifier before a noun ("这张卡", "这本书", "这辆车"): a determiner jieba splits as 这/张卡
ZH_CLASSIFIERS = frozenset("张本辆部台位种条份项只件套所座门篇首")
ZH_CLASSIFIER_DETS = frozenset(d + c for d in "这那" for c in ZH_CLASSIFIERS)
# Classifiers of a work named in 《》 (这本书, 这部电影, 这首歌, 这篇文章)
ZH_WORK_DETS = frozenset(d + c for d in "这那" for c in "本部首篇")
# Nouns after which a determiner is situational deixis ("这个时候"), not a reference to an earlier turn.
ZH_DEICTIC_NOUNS = _read_words("kinds.txt", "zh_deictic")
# Verbs with their object built in (吃饭, 睡觉): no object slot after them.
ZH_VERB_OBJECT = _read_words("kinds.txt", "zh_verb_object")
# Conjunctions that join the last member of a series ("关键词检索、向量检索和混合检索").
ZH_SERIES_JOINS = frozenset({"和", "与", "及", "以及", "或", "或者", "还有", "跟"})
# Final characters of Chinese nouns that name people (女朋友, 老师, 我妈).
ZH_PERSON_FINALS = _read_words("kinds.txt", "zh_person_final")
# Leading words that mark a follow-up ("那番禺呢", "还有年假呢").
ZH_LEADS = ("那么", "那", "还有", "另外", "那如果", "如果是", "换成", "要是")
ZH_INTERJECTIONS = frozenset({"嗯", "嗯嗯", "哦", "噢", "哈", "哈哈", "哈哈哈", "哎", "哎哎", "唉", "呵呵", "嘿嘿", "好",
                              "好的", "是", "是啊", "对", "对啊", "对呀", "恩", "额", "呃", "啊", "嘻嘻", "嗯呢", "哇"})
# Sentence-final particles: what may follow a clause-final verb ("去过了", "吃过吗").
ZH_FINAL_PARTICLES = frozenset({"了", "吗", "啊", "呀", "吧", "呢", "么", "哦", "啦", "嘛", "哈", "吖", "咯", "呗", "喔",
                                "噢", "的", "哇", "嘞", "滴", "撒"})
# A request to look something up or book it ("查一下明天的高铁", "帮我订酒店"): the frame of a condition or of the
# answer to a clarifying question (rewrite.frame, rewrite.rules)
ZH_LOOK_UP = r"^\W*(?:帮我|请|麻烦)?(?:查一下|查查|查询|搜一下|找一下|找找|订|预订|预约|推荐|想买|想找|想订)"
# Time units: "12 minutes" is a measurement, "this year" names a time, not a thing
EN_TIME_UNITS = frozenset({"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks",
                           "month", "months", "quarter", "quarters", "year", "years"})
# A-not-A questions (贵不贵, 好不好, 是不是); "不不不" and 动不动 (at every turn) ask nothing
ZH_A_NOT_A = r"(?!动不动)(?P<a_not_a>[\u4e00-\u9fff])(?<!不)不(?P=a_not_a)"
ZH_PROPER_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng"})
ZH_NOUN_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "eng", "vn", "nw", "j", "an", "ng"})

# --- English -------------------------------------------------------------------------------------
# Nouns that name a member of a list ("the third step", "the first one"): see rewrite/ordinal.py.
EN_LIST_NOUNS = _read_words("kinds.txt", "en_list_nouns")
# Words that make an offer an offer of information: see rewrite/offer.py.
EN_INFO_OFFER = _read_words("kinds.txt", "en_info_offer")
EN_INFO_OFFER_VERBS = _read_words("kinds.txt", "en_info_offer_verbs")
EN_CALENDAR = _read_words("kinds.txt", "en_calendar")
EN_OPENERS = _read_words("kinds.txt", "en_openers")
EN_WORKS = _read_words("kinds.txt", "en_works")
EN_SUBJECT = {"it": "thing", "they": "group", "he": "person", "she": "person", "them": "group", "him": "person"}
EN_POSSESSIVE = {"its": "thing", "their": "group", "his": "person", "her": "person"}
EN_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
EN_PRONOUNS = frozenset(EN_SUBJECT) | frozenset(EN_POSSESSIVE) | EN_DEMONSTRATIVES
EN_WH = frozenset({"what", "who", "when", "where", "why", "how", "which", "whom", "whose"})
EN_AUX = frozenset({"is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should",
                    "shall", "may", "might", "must", "has", "have", "had", "am"})
EN_CONNECTORS = frozenset({"of", "the", "and", "&", "de", "von", "van", "der", "da", "del", "du", "di", "la", "le", "for", "on", "in"})
EN_SUBJECT_PRONOUNS = frozenset({"i", "you", "we", "he", "she", "it", "they"})

# Slot lexicons of the frame completer (data/slots.txt): type → entries
SLOTS = {kind: _read_lines("slots.txt", kind) for kind in
         ("place", "time_day", "time_part", "time_season", "time_year", "platform", "vehicle", "person_group",
          "seat_class", "os", "attribute_en", "attribute_zh")}
ATTRIBUTES_EN = frozenset(a.lower() for a in SLOTS["attribute_en"])  # attributes of an entity, lower case
ATTRIBUTES_ZH = frozenset(SLOTS["attribute_zh"])
EN_MODEL_SUFFIXES = frozenset(_read_lines("slots.txt", "model_suffix"))
ZH_PERSON_WORDS = _read_words("kinds.txt", "zh_person_words")
ZH_ROLE_NOUNS = _read_words("kinds.txt", "zh_role_nouns")
EN_PERSON_NOUNS = _read_words("kinds.txt", "en_person_nouns")
EN_GENDERED_PERSON_NOUNS = _read_words("kinds.txt", "en_gendered_person_nouns")
