"""Chinese rule steps, each list in the order it is tried: the gate's checks (``GATE_STEPS``, run by ``gate.decide``),
the rule steps before the rewrite (``RULE_STEPS``, ``rewrite.scoring``), the rewrite (``REWRITE_STEPS``, run by
``resolve``) and frame completion (``FRAME_STEPS``, run by ``rewrite.steps.complete_fragment``). Adding a rule is one
function here with a docstring example, one entry in its list, and a test."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from ... import lexicon as lx
from ...resolve import checks as c
from ...resolve import compose as r
from ...resolve import entities as e
from ...resolve import frame as f
from ...resolve import scoring as s
from ...resolve import similar
from ...resolve.analysis import Analysis
from ...resolve.compose import Outcome
from ...resolve.entities import has_pronoun, mentions
from ...resolve.focus import find_focus, informs, opening_subject
from ...resolve.introduced import introduced_work, kind_referent
from ...resolve.language import language
from ...resolve.reply import remark_topic
from ...resolve.shapes import compound, own_thing_over_passage, things_asked
from ...resolve.turn import Turn
from ...text import TRAIL_MARKS, is_cjk, tagged
from ...types import Decision, DecisionKind, Message
from ..base import Mention
from .markers import ZH_NE_RE, ZH_QUESTION_RE, zh_classifier_reference, zh_ellipsis, zh_lead, zh_proverb_ne
from .mentions import as_written, zh_anaphor_at, zh_common_person, zh_name_tokens

# the patterns of the rule steps below, compiled once at import (an inline re.sub(r"…") compiles on its first use,
# inside a turn, and again after other patterns push it out of re's cache)
_NE_END_RE = re.compile(r"呢$")
_NE_TAIL_RE = re.compile(r"呢[\s？?！!。.~～]*$")
_DE_NE_END_RE = re.compile(r"的?呢$")
_NE_MA_END_RE = re.compile(r"[呢吗]$")
_ONLY_NE_RE = re.compile(r"^呢$")
_PLACE_PREP_RES = {p: re.compile(re.escape(p) + r"\s*") for p in ("去", "到", "在")}
_DE_END_RE = re.compile(r"的\s*呢?[？?！!。.，,~～\s]*$")

# --- the rewrite: ellipsis, classifier reference, pronoun, frame completion -------------------------------


class ZhTurn(Turn):
    """The turn as the Chinese rewrite steps read it: the query without trailing punctuation (``core``), its
    follow-up marker (``lead``: 那, 那么 ...) and what follows it (``body``, an ellipsis' 呢 removed)."""

    __slots__ = ("core", "lead", "body", "is_ne", "_toks")

    def prepare(self) -> None:
        self.core = core = self.q.rstrip(TRAIL_MARKS)
        self.lead = lead = zh_lead(core)
        body = core[len(lead):].lstrip(" ，,") if lead else core
        self.is_ne = zh_ellipsis(self.q)  # "X呢" or a bare "那X"
        if self.is_ne:
            body = zh_proverb_ne(body)  # "Apache 上怎么弄": the body is "Apache"
        self.body = _NE_END_RE.sub("", body).rstrip(TRAIL_MARKS) if self.is_ne else body
        self._toks: list[tuple[str, str]] | None = None

    @property
    def toks(self) -> list[tuple[str, str]]:
        """The body's words with their part-of-speech tags (tagged once, when a step first needs them)."""
        if self._toks is None:
            self._toks = tagged(self.body)
        return self._toks


def turn(query: str, history: Sequence[Message], topic: str | None = None) -> ZhTurn:
    """The turn with the focus ``entities.find_focus`` gives (for examples and tests; the rewriter refines it)."""
    return ZhTurn(Analysis(tuple(history), query, topic, language("zh")), focus=find_focus(history, topic))


def ellipsis(t: ZhTurn) -> Outcome | None:
    """An ellipsis swaps an entity of the same kind into the previous question, else is attached to the focus.

    >>> from convsearch.types import Message as M
    >>> ellipsis(turn("那番禺呢？", [M("user", "深圳最近三天适合露营吗？"), M("assistant", "适合。")]))
    Outcome(out='番禺最近三天适合露营吗', reason='entity swap: 深圳 → 番禺')
    >>> ellipsis(turn("价格呢？", [M("user", "AnySearch 支持中文吗？"), M("assistant", "支持。")]))
    Outcome(out='AnySearch 的价格', reason='ellipsis completion with AnySearch')
    """
    body, focus, ent = t.body, t.focus, t.ent
    xm = e.mentions(body, "zh") if body else []
    bare_x = bool(body) and len(xm) == 1 and len(xm[0].text) >= len(body) - 1
    has_pron = e.has_pronoun(body, "zh")  # "它的价格呢": the pronoun names the entity
    if not ((t.is_ne or (t.lead and bare_x)) and not has_pron):
        return None
    if not body:
        return Outcome(focus.frame.rstrip(TRAIL_MARKS) if focus.frame else None,
                       "ellipsis: repeat previous question")
    target = r.swap_target(xm, focus.frame_mentions) if focus.frame else None
    if target is not None and focus.frame:
        old = _kind_prefix(target.text, xm[0].text)
        return Outcome(focus.frame.rstrip(TRAIL_MARKS).replace(old, xm[0].text, 1),
                       f"entity swap: {old} → {xm[0].text}")
    if focus.frame and (done := _stand_in(body, xm, focus.frame)) is not None:
        return done
    if ent is not None and ent.text not in body:
        return Outcome(r.attach(ent.text, body, de=True), f"ellipsis completion with {ent.text}")
    return Outcome(body, "ellipsis without a focus")


def _siblings(x: str, core: str, toks: Sequence[tuple[str, str]]) -> list[str]:
    """The frame's words a sibling name stands in for: as long as the fragment, from word boundary to word
    boundary, opening or ending with the same character (京沪 for 京广, 沪/杭 for 沪宁: the tagger's split does not
    matter), all of it names or abbreviations, decided before any meaning.

    >>> _siblings("沪宁", "沪杭高铁最快要多久", tagged("沪杭高铁最快要多久"))
    ['沪杭']
    """
    if len(x) < 2 or not all(is_cjk(ch) for ch in x):
        return []
    bounds, pos = {0}, 0
    for w, _ in toks:
        i = core.find(w, pos)
        if i < 0:
            return []
        pos = i + len(w)
        bounds.update((i, pos))
    names = [(core.find(w), w) for w, t in toks if t in _SIBLING_TAGS]
    out = [core[b:b + len(x)] for b in sorted(bounds) if b + len(x) in bounds]
    return [c for c in out if c != x and all(is_cjk(ch) for ch in c) and (c[0] == x[0] or c[-1] == x[-1])
            and all(any(i <= k < i + len(w) for i, w in names) for k in range(core.find(c), core.find(c) + len(c)))]


_SIBLING_TAGS = frozenset({"ns", "nz", "nt", "nr", "nrt", "nrfg", "j"})  # names and abbreviations: not 上班 for 上海


def _stand_in(x: str, xm: Sequence[Mention], frame: str) -> Outcome | None:
    """A fragment that is no attribute stands in for the frame's phrase nearest it in meaning (the embedder's
    tie-break, ``rewrite.similar``): "香蕉呢？" after "猫可以吃葡萄吗？" → "猫可以吃香蕉吗"; a verb for a verb
    ("爬山呢？" after "跑步膝盖疼怎么办？")."""
    x = x[:-1] if x.endswith("的") and len(x) > 2 else x  # "京广的呢": the 的 of an omitted head
    xt = tagged(x)
    verb = len(xt) == 1 and xt[0][1].startswith("v")
    noun = len(xm) == 1 and len(xm[0].text) >= len(x) - 1 and not xm[0].relational
    if not (verb or noun) or (noun and e.attribute_noun(xm[0])):
        return None
    core = frame.rstrip(TRAIL_MARKS)
    toks = zh_name_tokens(core)
    # the frame's nouns (names whole: "上海迪士尼", "苹果手机"), or its verbs for a verb
    cands = [m.text for m in e.mentions(core, "zh") if not m.relational and "的" not in m.text
             and tagged(m.text)[0][1].startswith(("n", "eng"))]
    cands += [w for w, t in toks if (t.startswith("v") and t != "vn" if verb else t.startswith(("n", "eng", "j")))
              and len(w) > 1 and w not in lx.RELATIONAL_ZH]
    if verb:
        cands = [c for c in cands if tagged(c)[0][1].startswith("v")]
    siblings = _siblings(x, core, toks) if not verb else []
    old = siblings[0] if len(siblings) == 1 else similar.nearest(x, cands, min_sim=similar.PEER)
    if old is None or old not in core:
        return None
    return Outcome(core.replace(old, x, 1), f"entity swap (nearest in meaning): {old} → {x}")


def classifier_reference(t: ZhTurn) -> Outcome | None:
    """"这张卡" names the focus by its kind (the focus ends in 卡).

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "经典白金卡怎么申请？"), M("assistant", "在 App 上申请。")]
    >>> classifier_reference(turn("这张卡在国外刷有手续费吗？", h))
    Outcome(out='经典白金卡在国外刷有手续费吗', reason='classifier reference 这张卡 → 经典白金卡')
    """
    ent, body = t.ent, t.body
    cref = zh_classifier_reference(body, ent.text) if ent is not None else None
    if ent is None or cref is None or ent.text == body[cref[0] + 2:cref[1]]:
        # "这种鱼" after an answer that recommended 孔雀鱼: the thing of that kind the history named last (a focus
        # that is only the kind, 手机 for 这款手机, names no thing)
        ent, cref = kind_referent(body, t.history) or (None, None)
    if ent is not None and cref is not None:
        return Outcome(r.join_zh(body[:cref[0]], ent.text, body[cref[1]:]),
                       f"classifier reference {body[cref[0]:cref[1]]} → {ent.text}")
    return None


def pronoun(t: ZhTurn) -> Outcome | None:
    """The first pronoun or demonstrative standing for the focus is replaced by it (前者 / 后者 pick from the frame).

    >>> from convsearch.types import Message as M
    >>> pronoun(turn("它支持私有化部署吗？", [M("user", "AnySearch 是什么？"), M("assistant", "一个搜索服务。")]))
    Outcome(out='AnySearch 支持私有化部署吗', reason='pronoun 它 → AnySearch')
    """
    focus, ent, toks = t.focus, t.ent, t.toks
    for i, (w, _tag) in enumerate(toks):
        if not zh_anaphor_at(toks, i):
            continue
        if w in ("前者", "后者") and len(focus.frame_mentions) >= 2:
            fm = [x for x in focus.frame_mentions if x.proper] or list(focus.frame_mentions)
            fm = fm if len(fm) >= 2 else list(focus.frame_mentions)
            rep = fm[0 if w == "前者" else -1].text
        elif w in ("他", "她") and focus.person is not None and focus.person is not ent and "谁" in (focus.frame or ""):
            rep = focus.person.text  # "赵州桥是谁设计的" → "…工匠李春…" → "他还造过别的桥吗": the person
        elif w in ("他", "她") and (ent is None or _person(ent) is None) \
                and (who := _person_named(t.history)) is not None:
            rep = who.text  # "我家宝宝 8 个月了，最近开始长牙" → "他老流口水正常吗": 他 is the baby, not 长牙
        elif ent is not None:
            near = r.recent_focus(ent, t.history, focus.resumed) if w in r.ZH_RECENT_PRONOUNS else ent
            if near is None:
                return Outcome(None, f"{w}: nothing named in the latest exchange")
            rep = _aspect_owner(near).text  # 它 is the car, not "特斯拉 Model Y 的续航"
            if w in ("它", "它们") and (owner := _owner_in_frame(toks[i + 1:], focus.frame, rep)) is not None:
                rep = owner  # "怎么自动发现它的新版本" after "上游发布了新版本…": 上游, not a term of the answer
        else:
            return Outcome(None, "pronoun without an antecedent")
        before = as_written([x for x, _ in toks[:i]], t.body)
        after_toks = toks[i + 1:]
        if w in lx.ZH_DETERMINERS and after_toks and after_toks[0][1] in lx.ZH_NOUN_TAGS:
            noun = after_toks[0][0]
            if noun in rep:  # "这款产品" when the focus is "AnySearch 产品"
                after_toks = after_toks[1:]
        after = as_written([x for x, _ in after_toks], t.body)
        sep_l = " " if before and not is_cjk(before[-1]) and before[-1].isalnum() else ""
        sep_r = " " if after and not is_cjk(rep[-1]) and rep[-1].isalnum() and (
            is_cjk(after[0]) or after[0].isalnum()) else ""
        out = _NE_TAIL_RE.sub("", f"{before}{sep_l}{rep}{sep_r}{after}")  # "它的充电时间呢": 呢 is done
        return Outcome(out, f"pronoun {w} → {rep}")
    return None


_ZH_CLAUSE_RE = re.compile(r"[，,。；;？?！!]")
_ZH_OWNER_TAGS = lx.ZH_NOUN_TAGS | {"s", "f"}  # 上游, 国内: a place or a side owns things too


def _owner_in_frame(after: Sequence[tuple[str, str]], frame: str | None, rep: str) -> str | None:
    """The owner the latest question gave the thing "它的 X" asks about, when the focus is not from that question:
    X's owner there ("A 的 X"), or the subject of the clause that named X ("上游发布了新版本": 上游). None when the
    question did not name X, or named no owner for it.

    >>> _owner_in_frame(tagged("的新版本"), "上游发布了新版本，打包前要检查什么", "changelog")
    '上游'
    >>> _owner_in_frame(tagged("的价格"), "华为的新手机好看吗", "Mate 60") is None  # no price in that question
    True
    """
    if not frame or rep in frame:
        return None
    j = 1 if after and after[0][0] == "的" else 0
    k = j
    while k < len(after) and (after[k][1] in lx.ZH_NOUN_TAGS or (after[k][1] == "a" and k + 1 < len(after))):
        k += 1
    thing = "".join(w for w, _ in after[j:k])
    if not thing or after[k - 1][1] not in lx.ZH_NOUN_TAGS or len(thing) < 2 or thing in lx.RELATIONAL_ZH:
        return None
    clause = next((c for c in _ZH_CLAUSE_RE.split(frame) if thing in c), None)
    if clause is None:
        return None
    before = clause[:clause.find(thing)]
    if before.rstrip().endswith("的"):  # "A 的 X": A
        toks = tagged(before.rstrip()[:-1])
        n = len(toks)
        while n > 0 and toks[n - 1][1] in _ZH_OWNER_TAGS:
            n -= 1
        owner = "".join(w for w, _ in toks[n:]).strip()
    else:  # "上游发布了新版本": the nouns that open the clause, before its verb
        toks = tagged(clause)
        n = 0
        while n < len(toks) and toks[n][1] in _ZH_OWNER_TAGS:
            n += 1
        owner = "".join(w for w, _ in toks[:n]).strip() if n < len(toks) and toks[n][1].startswith("v") else ""
    if len(owner) < 2 or owner in lx.RELATIONAL_ZH or thing in owner or has_pronoun(owner, "zh"):
        return None
    return owner


def _person(m: Mention) -> Mention | None:
    """The person ``m`` names: a name tagged nr ("小明的成绩" names 小明) or a common noun naming a person (宝宝, 老板);
    None for a thing."""
    if m.cls == "nr" and m.proper:
        name = m.text.partition("的")[0].strip()
        return replace(m, text=name, head=name) if len(name) > 1 else None
    return m if zh_common_person(m) else None


def _person_named(history: Sequence[Message]) -> Mention | None:
    """The person the latest user turn that named one named (宝宝 in "我家宝宝 8 个月了"): what 他 / 她 stand for
    when the focus is a thing.

    >>> from convsearch.types import Message as M
    >>> _person_named([M("user", "我家宝宝 8 个月了，最近开始长牙"), M("assistant", "很常见。")]).text
    '宝宝'
    """
    for m in reversed(history):
        if m.role == "user":
            who = next((p for x in e.mentions(m.content, "zh") if (p := _person(x)) is not None), None)
            if who is not None:
                return who
    return None


def _aspect_owner(ent: Mention) -> Mention:
    """"小鹏 G6 的续航" → "小鹏 G6": an entity named with one of its aspects stands for its owner.

    >>> _aspect_owner(Mention("小鹏 G6 的续航", True, "eng", "续航")).text
    '小鹏 G6'
    """
    owner, de, aspect = ent.text.rpartition("的")
    if de and owner.strip() and (aspect.strip() in lx.RELATIONAL_ZH or r.ZH_ATTRIBUTE_RE.fullmatch(aspect.strip())):
        return replace(ent, text=owner.strip(), head=owner.strip().split()[-1])
    return ent


def interjection(t: ZhTurn) -> Outcome | None:
    """An interjection is no request: stop, nothing to complete.

    >>> interjection(turn("好的！", []))
    Outcome(out=None, reason='an interjection (好的, 对啊), not a request')
    """
    if t.core in lx.ZH_INTERJECTIONS:
        return Outcome(None, "an interjection (好的, 对啊), not a request")
    return None


_NAMED_TAGS = frozenset({"ns", "nt"})  # a place or an organisation stays the subject
_REPLY_MAX = 10  # characters: a short reply that names one thing moves the topic; a long one only comments
_ZH_ASKS_RE = re.compile(r"[？?]|吗|么|嘛|什么|怎么|哪|多少|几|啥|咋|谁|呢")


def reply_thing(ent: Mention | None, history: Sequence[Message]) -> Mention | None:
    """After a remark of the user's (no question), the thing the other speaker's reply named is what the next
    turn goes on about, not the remark's own noun: "海鲜过敏" → "火锅呢" → "不觉得热么" is about 火锅. After a
    question the question's entity stays the focus (the reply answers it: "AnySearch 支持中文吗？" → "支持英文。"),
    and so does a place or an organisation, or a thing the reply names its own way ("花花卡" → "花花"); only a short
    reply (≤ ``_REPLY_MAX`` characters) moves the topic. On restoration-200k's tuning half the reply's noun is
    the human's word 4 times in 10 where the remark's was 1 in 20.

    >>> from convsearch.types import Message as M
    >>> reply_thing(Mention("海鲜", False, "n", "海鲜"), [M("user", "我海鲜过敏"), M("assistant", "火锅呢")]).text
    '火锅'
    """
    if ent is None or len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return ent
    if ent.cls in _NAMED_TAGS or _ZH_ASKS_RE.search(history[-2].content) or e.named_in(ent, history[-1].content) \
            or not e.named_in(ent, history[-2].content) or len(history[-1].content) > _REPLY_MAX:
        return ent
    new = next((x for x in e.mentions(history[-1].content, "zh") if not x.relational), None)
    if new is None or new.text in ent.text or ent.text in new.text or new.text[:1] == ent.text[:1]:
        return ent  # "花花卡" → "花花", "冰淇淋" → "冰激凌": the reply names the same thing its own way (红茶 / 绿茶
        # share only the category word: two things)
    return new


def _verb_subject(toks: list[tuple[str, str]]) -> bool:
    """Whether a verb-tagged word opens the clause as the subject of the verb after it ("审批 需要 多久": jieba
    tags 审批 'v'), so the follow-up marker before it goes like the one before a noun.

    >>> _verb_subject([("审批", "v"), ("需要", "v"), ("多久", "m")]), _verb_subject([("应该", "v"), ("也", "d")])
    (True, False)
    """
    return len(toks) > 1 and toks[0][1] in ("v", "vn") and toks[1][1] == "v" and toks[0][0] not in _ZH_MODALS


_ZH_MODALS = frozenset({"可以", "应该", "能", "会", "要", "想", "得", "该", "需要", "就是", "是"})

def _verb_noun(text: str) -> bool:
    """Whether a focus is an action used as a noun (审批, 报销: tagged as a verb), not a thing with aspects (酸奶)."""
    return text in lx.ZH_NOMINAL_VERBS or tagged(text)[-1][1].startswith("v")


def _own_subject(toks: list[tuple[str, str]]) -> bool:
    """Whether the query opens with a thing of its own, not an aspect that needs an owner ("试用期多长" after
    "审批需要多久": a sibling of the action 审批, not a part of it; "价格多少" needs its owner).

    >>> _own_subject(tagged("试用期多长")), _own_subject(tagged("价格多少"))
    (True, False)
    """
    w, tag = toks[0]
    return tag in ("n", "nz") and len(w) > 2 and w not in lx.RELATIONAL_ZH \
        and not r.ZH_ATTRIBUTE_RE.fullmatch(w) and len(toks) > 1


def frame_completion(t: ZhTurn) -> Outcome:
    """A query that names nothing gets the focus as its subject (after any interjection) or as its missing object.

    >>> from convsearch.types import Message as M
    >>> frame_completion(turn("审批需要多久？", [M("user", "入职流程是怎样的？"), M("assistant", "先提交材料。")]))
    Outcome(out='入职流程审批需要多久', reason='frame completion with 入职流程')
    """
    q, core, body, lead, history = t.q, t.core, t.body, t.lead, t.history
    ent = reply_thing(r.recent_focus(t.ent, history, t.focus.resumed), history)
    if ent is None:
        return Outcome(None, "no focus to complete with")
    if ent.text in body or (ent.head and len(ent.head) > 1 and ent.head in body):
        return Outcome(None, "already names the focus")
    asked_aspect = q.rstrip(TRAIL_MARKS).endswith("呢") and r.ZH_ATTRIBUTE_END_RE.search(
        _DE_NE_END_RE.sub("", body))
    if "的" not in ent.text and asked_aspect and (tail := r.ZH_ATTRIBUTE_END_RE.search(ent.text)) is not None \
            and ent.text[:tail.start()].strip():
        owner = ent.text[:tail.start()].strip()  # "招商银行信用卡年费" + "取现手续费呢": the card's, not the fee's
        ent = replace(ent, text=owner, head=owner.split()[-1])
    # "小鹏 G6 的续航" + "充电要多久？": the question asks about another aspect of 小鹏 G6, not of its 续航
    ent = _aspect_owner(ent)
    toks = t.toks
    if lead and not (toks and (toks[0][1] in lx.ZH_NOUN_TAGS or _verb_subject(toks))):
        toks = tagged(core)  # "那是极好的": 那 is the subject here, not a follow-up marker to drop
    prefix = ""
    rest = toks
    while rest and (rest[0][0] in lx.ZH_INTERJECTIONS or rest[0][1] in ("x", "w", "y", "e")):
        if rest[0][0] in r.ZH_ADVERB_TOO and len(rest) > 1 and rest[1][1] in r.ZH_PREDICATE_TAGS:
            break  # "好想吃" (so want to eat), "好可怜": an adverb in its clause, not an interjection before it
        prefix += rest[0][0]
        rest = rest[1:]
    rest_text = "".join(w for w, _ in rest)
    if asked_aspect:
        rest_text = _DE_NE_END_RE.sub("", rest_text)  # "取现手续费呢" completed: its 呢 has nothing left to mark
    if not rest_text:
        return Outcome(None, "nothing to complete")
    if not ent.proper and _verb_noun(ent.text) and _own_subject(rest):
        return Outcome(None, f"names its own subject beside the common noun {ent.text}")
    slot = r.object_slot(rest)
    if slot is not None:  # "你吃过吗" → "你吃过大列巴吗": a clause-final verb is missing its object
        before = "".join(w for w, _ in rest[:slot])
        after = "".join(w for w, _ in rest[slot:])
        return Outcome(prefix + r.join_zh(before, ent.text, after), f"frame completion (object) with {ent.text}")
    noun_first = rest[0][1] in lx.ZH_NOUN_TAGS and rest[0][0] in lx.RELATIONAL_ZH  # 的 only before an aspect (的价格)
    return Outcome(prefix + r.attach(ent.text, rest_text, de=noun_first), f"frame completion with {ent.text}")


def short_remark(t: ZhTurn) -> Outcome | None:
    """A query with no focus to complete comments on the other's short remark: the remark is its topic.

    >>> from convsearch.types import Message as M
    >>> short_remark(turn("太热了", [M("user", "好无聊"), M("assistant", "出去走走")]))
    Outcome(out='出去走走太热了', reason='a comment takes the short remark it answers as its topic: 出去走走')
    """
    if r.recent_focus(t.ent, t.history, t.focus.resumed) is not None:
        return None  # frame completion has a thing to complete with
    done = remark_topic(t.query, t.history)
    return Outcome(*done) if done is not None else None


_ZH_HOW_WORDS = frozenset({"怎么", "怎样", "如何", "咋", "怎么样"})
_ZH_HOW_MODALS = frozenset({"要", "该", "能", "可以", "才能", "才可以", "去", "才", "应该"})
_ZH_TAIL_PARTICLES = frozenset({"呢", "吗", "啊", "呀"})


def _how_verb(text: str) -> tuple[str, str, str] | None:
    """(what opens the question up to its how-word and modal, the verb after them, what follows the verb) of a
    how-question ("怎么开通自动续费" → ("怎么", "开通", "自动续费")), else None."""
    toks = [(w, tg) for w, tg in tagged(text) if w.strip()]
    i = next((k for k, (w, _) in enumerate(toks) if w in _ZH_HOW_WORDS), None)
    if i is None:
        return None
    j = i + 1
    while j < len(toks) and toks[j][0] in _ZH_HOW_MODALS:
        j += 1
    if j >= len(toks) or toks[j][1] == "p":
        return None  # "怎么给同事共享…": the verb is not next; no confident split
    rest = toks[j + 1:]
    while rest and (rest[-1][0] in _ZH_TAIL_PARTICLES or rest[-1][1] in ("x", "w")):
        rest = rest[:-1]
    head = "".join(w for w, _ in toks[:j])
    return head, toks[j][0], as_written([w for w, _ in rest], text)


def how_object(t: ZhTurn) -> Outcome | None:
    """"那怎么取消呢？" after "怎么开通自动续费？": a how-question whose verb stands without its object acts on what
    the previous how-question acted on ("怎么取消自动续费"), not on a noun the answer or the opening brought in.

    >>> from convsearch.types import Message as M
    >>> how_object(turn("那怎么关掉呢？", [M("user", "怎么开通自动续费？"), M("assistant", "在 App 的会员页打开。")]))
    Outcome(out='怎么关掉自动续费', reason='the object of the previous how-question: 自动续费')
    """
    body = _NE_MA_END_RE.sub("", t.body).rstrip(TRAIL_MARKS)
    mine = _how_verb(body)
    # a verb of its own (not 怎么办 / 怎么弄, which ask what to do) and nothing after it
    if mine is None or mine[2] or len(mine[1]) < 2 or tagged(mine[1])[0][1] in lx.ZH_NOUN_TAGS or not t.focus.frame:
        return None
    theirs = _how_verb(t.focus.frame.rstrip(TRAIL_MARKS))
    if theirs is None or not theirs[2] or has_pronoun(theirs[2], "zh") or _ZH_CLAUSE_BREAK_RE.search(theirs[2]):
        return None
    obj = theirs[2]
    if "的" not in obj and not any(tg in lx.ZH_NOUN_TAGS or tg == "l" for _, tg in tagged(obj)):
        return None  # "怎么去才快": no thing acted on ("明天的体检" is one: 体检 is tagged a verb)
    out = r.join_zh(f"{mine[0]}{mine[1]}", obj, "")
    return Outcome(out, f"the object of the previous how-question: {obj}")


REWRITE_STEPS = (ellipsis, classifier_reference, pronoun, interjection, short_remark, how_object, frame_completion)


def resolve(t: Turn, steps: Sequence[r.Step]) -> tuple[str | None, str]:
    """The composer: the first answer of ``steps`` (this language's ``REWRITE_STEPS``) on the turn as the Chinese
    steps read it."""
    return r.first(steps, t.extend(ZhTurn))

# --- frame completion of a fragment -------------------------------------------------------------------------


# "比亚迪汉呢，哪个更便宜？": a 呢-fragment, then the comparison question
_ZH_NE_WHICH_RE = re.compile(r"^(?:那)?\s*(.+?)\s*呢\s*[，,]\s*((?:哪个|哪一个|哪款|哪家|哪辆|谁).+?)[？?！!。\s]*$")
# "微信零钱通是不是高点": a comparative with no 比 compares with the frame's entity ("更 X" or "X 点/些" marks it)
_ZH_BETTER_RE = re.compile(r"^(?:那)?\s*(.+?)\s*(?:是不是|会不会|是否)?\s*(?:(?:更|还要)"
                           r"(便宜|贵|高|低|好|快|慢|大|小|多|少|长|"
                           r"短|轻|重|安全|划算|好用|耐用|方便|舒服)(?:一)?(?:点|些)?|"
                           r"(便宜|贵|高|低|好|快|慢|大|小|多|少|长|短|轻|重|"
                           r"安全|划算|好用|耐用|方便|舒服)(?:一)?(?:点|些))\s*(?:吗|呢|吧|么)?[？?！!。\s]*$")
_ZH_NOT_NAME_RE = re.compile(r"谁|哪|什么|怎么|[他她它这那]")  # "他们俩谁更好", "哪个层次高一点": no compared name
_ZH_ASK_TAIL_RE = re.compile(r"(?:是)?(?:多少钱|多少|几何|怎么样|如何|怎样|吗|呢|么)[？?！!。.\s]*$")
# "比 Galaxy S24 好吗？": a comparison whose subject is the frame's entity
_ZH_BI_RE = re.compile(r"^(?:那)?\s*(?:跟|和)?\s*比\s*(.+)$")
_ZH_COMPARE_RE = re.compile(r"^(?:那)?\s*(?:(?:和|跟|与|同)\s*(.+?)\s*(?:比起来|比较|相比|对比|比)|"
                            r"(.+?)\s*(?:相比|比起来|对比)(?=呢|的话|[？?！!。\s]*$))(?:的话)?\s*(.*?)"
                            r"[？?！!。\s]*$")
_ZH_CONDITION_RE = re.compile(r"^(?:那)?(?:有没有|有没|有|要)(.{1,10}?)的?(?:吗|呢)?[？?！!。\s]*$")
# "人均 300 以内的呢？": a limit, as a 呢-fragment
_ZH_LIMIT_RE = re.compile(r"^(?:那)?\s*([^，,。？?]{0,8}?\d[\d.]*\s*(?:元|块|万|千)?\s*"
                          r"(?:以内|以下|以上|左右|之内|上下))\s*的?"
                          r"\s*呢?[？?！!。\s]*$")
_ZH_QWORD_RE = re.compile(r"什么|哪|怎么|多少|谁|几")
# a request for things to choose from: recommend, list, or look up ("查一下明天南京南到杭州东的高铁")
_ZH_REQUEST_RE = re.compile(r"推荐|有没有.{0,12}[？?]?$|有哪些|" + lx.ZH_LOOK_UP)


def _zh_pair(e: str, y: str) -> str:
    """'宝马 X5' + '奔驰 GLE' → '宝马 X5 和奔驰 GLE'; '美林' + '泰诺林' → '美林和泰诺林'."""
    return f"{e}{' ' if not is_cjk(e[-1]) else ''}和{' ' if not is_cjk(y[0]) else ''}{y}"


def comparison(query: str, frame: str) -> tuple[str, str] | None:
    """A comparison keeps the frame's entity and predicate and adds the new one beside it.

    >>> comparison("跟泰诺林比哪个副作用小？", "孩子发烧可以吃美林吗")[0]
    '美林和泰诺林哪个副作用小'
    """
    better = _ZH_BETTER_RE.match(query.strip())
    if better is not None and f.zh_size(y := better.group(1).strip()) <= f.ZH_FRAGMENT_CHARS \
            and not _ZH_NOT_NAME_RE.search(y):
        e = f.frame_entity(frame, "zh", y)
        core = _ZH_ASK_TAIL_RE.sub("", frame.strip())
        if e is not None and e in core and e not in y and y not in frame:
            i = core.find(e) + len(e)
            both = core[:i] + ("和" if is_cjk(y[0]) else " 和 ") + y + core[i:]
            return f"{both}哪个{better.group(2) or better.group(3)}", f"comparison: {e} 和 {y}"
    w = _ZH_NE_WHICH_RE.match(query.strip())
    if w is not None:
        y, pred = w.group(1).strip(), w.group(2).strip()
        e = f.frame_entity(frame, "zh", y)
        if e is None or f.zh_size(y) > f.ZH_FRAGMENT_CHARS:
            return None
        return f"{_zh_pair(e, y)}{pred}", f"comparison: {e} 和 {y}"
    bi = _ZH_BI_RE.match(query.strip())
    if bi is not None:
        rest = bi.group(1).strip().rstrip(TRAIL_MARKS)
        ym = next((x for x in mentions(rest, "zh") if x.proper and rest.startswith(x.text)), None)
        e = f.frame_entity(frame, "zh", ym.text) if ym is not None else None
        if e is None:
            return None
        attr = f.ATTRIBUTE_RES["zh"].search(frame)
        subject = f"{e}{' ' if not is_cjk(e[-1]) else ''}的{attr.group(0)}" if attr else e
        return f"{subject}{' ' if not is_cjk(subject[-1]) else ''}比 {rest}", f"comparison: {e} 比 {ym.text}"  # type: ignore[union-attr]
    m = _ZH_COMPARE_RE.match(query.strip())
    if not m:
        return None
    y, pred = (m.group(1) or m.group(2)).strip(), m.group(3).strip()
    pred = _ONLY_NE_RE.sub("", pred)
    e = f.frame_entity(frame, "zh", y)
    if not e or f.zh_size(y) > f.ZH_FRAGMENT_CHARS:
        return None
    sep = " " if not is_cjk(e[-1]) or not is_cjk(y[0]) else ""
    both = f"{e}{sep}和{' ' if not is_cjk(y[0]) else ''}{y}"
    if pred:
        return f"{both}{' ' if not is_cjk(y[-1]) and is_cjk(pred[0]) else ''}{pred}", f"comparison: {e} 和 {y}"
    core = frame.rstrip(TRAIL_MARKS)
    i = core.find(e)
    after = core[i + len(e):]
    return core[:i] + both + (" " if after and not is_cjk(y[-1]) and not after.startswith(" ") else "") + after, \
        f"comparison: {e} 和 {y}"


def preposition_swap(query: str, frame: str) -> tuple[str, str] | None:
    """"去 X 呢" replaces what follows the same 去/到/在 in the frame, when both have one slot type.

    >>> preposition_swap("去马来西亚呢？", "中国护照去新加坡需要签证吗")[0]
    '中国护照去马来西亚需要签证吗'
    """
    zf = f.zh_fragment(query)
    if zf is None:
        return None
    _, prep, x, _tail = zf
    if (pm_re := _PLACE_PREP_RES.get(prep)) is not None and (pm := pm_re.search(frame)) is not None:
        sp = [s for s in f.slot_spans(frame) if s[0] == pm.end()]
        if sp and f.slot_kind(x) == sp[0][2]:
            s, e, kind = sp[0]
            return f.replace_span(frame, s, e, x), f"entity swap ({prep} {kind}): {frame[s:e]} → {x}"
    return None


def typed_swap(query: str, frame: str) -> tuple[str, str] | None:
    """The fragment's phrase replaces the frame's span of its slot type (place, time, platform, model number).

    >>> typed_swap("后天呢？", "杭州今天会下雨吗")[0]
    '杭州后天会下雨吗'
    >>> typed_swap("4080 SUPER 呢？", "RTX 4090 的功耗是多少")[0]
    'RTX 4080 SUPER 的功耗是多少'
    """
    zf = f.zh_fragment(query)
    return f.typed_swap(zf[2], frame, "zh") if zf is not None else None


def possessor_swap(query: str, frame: str) -> tuple[str, str] | None:
    """"Y的呢" swaps the owner of the frame's "E 的 …" for Y.

    >>> possessor_swap("微软的呢？", "苹果公司的市值是多少")[0]
    '微软的市值是多少'
    """
    zf = f.zh_fragment(query)
    if zf is None or zf[1] or not _DE_END_RE.search(query):
        return None
    return f.possessor_swap(zf[2], frame)


def attribute_shift(query: str, frame: str) -> tuple[str, str] | None:
    """An attribute replaces the frame's attribute and keeps its entity.

    >>> attribute_shift("续航呢？", "小鹏 G6 的百公里加速是多少")[0]
    '小鹏 G6 的续航是多少'
    """
    zf = f.zh_fragment(query)
    return f.attribute_shift(zf[2], frame, "zh") if zf is not None else None


def condition(query: str, frame: str) -> tuple[str, str] | None:
    """A condition is added to a request for recommendations, as a separate term.

    >>> condition("有带停车场的吗？", "春熙路附近有没有含早餐的酒店推荐")[0]
    '春熙路附近有没有含早餐的酒店推荐 带停车场'
    """
    m = _ZH_CONDITION_RE.match(query.strip()) or _ZH_LIMIT_RE.match(query.strip())
    if not m or not _ZH_REQUEST_RE.search(frame) or _ZH_QWORD_RE.search(m.group(1)):
        return None
    cond = m.group(1).strip()
    if not cond or cond in frame:
        return None
    return f"{frame.rstrip(TRAIL_MARKS)} {cond}", f"condition added: {cond}"


_ZH_MANNER_PREPS = frozenset({"用", "通过", "拿", "靠", "坐", "乘", "打车", "开车", "骑车", "走路"})
_ZH_PREDICATE_RUN = frozenset({"v", "vd", "vi", "d", "c"})


def _manner_into_frame(x: str, frame: str) -> str | None:
    """A means or instrument ("用高压锅呢", "坐高铁呢", "打车呢") takes the frame's predicate: it goes before the
    frame's last verb group ("红烧肉要炖多久" → "红烧肉用高压锅要炖多久").

    >>> _manner_into_frame("用高压锅", "红烧肉要炖多久？")
    '红烧肉用高压锅要炖多久'
    """
    xt = tagged(x)
    if not xt or xt[0][0] not in _ZH_MANNER_PREPS or any(w in frame for w, _ in xt if len(w) > 1):
        return None
    toks = tagged(frame.rstrip(TRAIL_MARKS))
    j = max((i for i, (_, t) in enumerate(toks) if t.startswith("v")), default=-1)
    while j > 0 and toks[j - 1][1] in _ZH_PREDICATE_RUN:
        j -= 1
    if j < 1:
        return None
    core = frame.rstrip(TRAIL_MARKS)
    return r.join_script(r.join_script(as_written([w for w, _ in toks[:j]], core), x),
                          as_written([w for w, _ in toks[j:]], core))


def _kind_prefix(target: str, x: str) -> str:
    """The part of a compound ``target`` that a new name of the same kind replaces: up to the kind word they end in
    ("招商银行信用卡年费" + "建设银行" → "招商银行"), else all of it."""
    kind = x[-2:]
    i = target.find(kind) if len(x) >= 3 and all(is_cjk(c) for c in kind) else -1
    return target[:i + 2] if 0 < i and i + 2 < len(target) else target


def means(query: str, frame: str) -> tuple[str, str] | None:
    """A fragment naming a means or instrument takes the frame's predicate (verb ellipsis).

    >>> means("打车呢？", "从机场到市区要多久")[0]
    '从机场到市区打车要多久'
    """
    zf = f.zh_fragment(query)
    x = "".join(zf[1:]) if zf is not None else ""
    done = _manner_into_frame(x, frame) if x else None
    return (done, f"verb ellipsis: {x} takes the predicate of {frame}") if done is not None else None


_ZH_OBJECT_VERBS = frozenset("是有用在要")  # a condition ending on one of these leaves its object out
_ZH_IF_RE = re.compile(r"^(?:那|那么)?\s*(如果|要是|假如|假设|万一)\s*(.{1,16}?)\s*(?:的话)?\s*呢\s*[？?！!。]*$")


def conditional(query: str, frame: str) -> tuple[str, str] | None:
    """A condition asked of the previous question ("如果…呢？") takes that question as its clause: the user asks it
    again under the condition (a typed slot, "如果是明天呢", is swapped by ``typed_swap`` first).

    >>> conditional("如果用的是 LVM 呢？", "空间不够了，有个空分区可以挂上来扩展吗")[0]
    '如果用的是 LVM，空间不够了，有个空分区可以挂上来扩展吗'
    >>> conditional("如果下雨怎么办呢？", "周末去爬山合适吗") is None  # a question of its own
    True
    >>> conditional("如果去上海呢？", "杭州今天会下雨吗") is None  # another place: no condition on this one
    True
    >>> conditional("如果我是呢", "你对于gay怎么看") is None  # 我是 (gay): the object left out, not the question
    True
    """
    m = _ZH_IF_RE.match(query.strip())
    if m is None or _ZH_QWORD_RE.search(m.group(2)) or not frame or not asks(frame):
        return None  # (a thanks or a remark is no question to ask again)
    if m.group(2).strip()[-1:] in _ZH_OBJECT_VERBS:
        return None  # "如果我是呢": the object is left out (我是 gay), not the question
    cond = f"{m.group(1)}{m.group(2).strip()}"
    kinds = {kind for _, _, kind in f.slot_spans(frame)}
    if any(kind in kinds for _, _, kind in f.slot_spans(cond)):
        return None  # "如果去上海呢？" after "杭州今天会下雨吗": another place, not a condition on this one
    return f"{cond}，{frame.rstrip(TRAIL_MARKS)}", f"condition on the previous question: {cond}"


_ZH_DE_NE_RE = re.compile(r"^(?:那么|那)?\s*(.{1,14}?)\s*的\s*呢[？?！!。.~～\s]*$")
# 只, 就, 光, 只要 (tagged c): they narrow what the frame's verb asks (not a degree: 最便宜, 更大 keep theirs)
_ZH_RESTRICTING = frozenset({"只", "就", "光", "仅", "单", "仅仅", "只是", "单单", "就是", "只要", "只有", "就要",
                            "只看"})


def _de_head(frame: str) -> tuple[int, int, int] | None:
    """(start of the modifier run, 的's offset, end of the head) of the frame's last "… 的 HEAD": the head is the
    noun run 的 modifies (a verb inside it only before a noun: 降噪耳机, 销售报表).

    >>> frame = "怎么查看 nginx 的访问日志"
    >>> de, end = _de_head(frame)[1:]
    >>> frame[de + 1:end]
    '访问日志'
    """
    toks = tagged(frame)
    offs, pos = [], 0
    for w, _ in toks:
        pos = frame.find(w, pos)
        offs.append(pos)
        pos += len(w)
    for k in range(len(toks) - 2, -1, -1):
        if toks[k][0] != "的":
            continue
        j = k + 1
        while j < len(toks) and toks[j][0].strip() and (toks[j][1] in lx.ZH_NOUN_TAGS or (
                toks[j][1].startswith("v") and j + 1 < len(toks) and toks[j + 1][1] in lx.ZH_NOUN_TAGS)):
            j += 1
        if j == k + 1 or toks[j - 1][1] not in lx.ZH_NOUN_TAGS:
            return None  # "有黑色的吗": 的 ends a phrase of its own, no head to share
        start = k
        while start > 0 and toks[start - 1][1] not in ("v", "p", "r", "x", "w") and toks[start - 1][0].strip():
            start -= 1
        return offs[start], offs[k], offs[j - 1] + len(toks[j - 1][0])
    return None


_ZH_QUALITY_TAGS = frozenset({"a", "ad", "an", "z", "b", "t"})  # 大, 便宜, 国产 (b), 上个月 (t); 最快 is tagged d


def _adjectival(text: str) -> bool:
    """A modifier that names a quality (便宜, 更大, 最便宜): its last word an adjective."""
    toks = [t for w, t in tagged(text.strip()) if w.strip()]
    return bool(toks) and toks[-1] in ("a", "ad", "an", "z")


def modifier_ellipsis(query: str, frame: str) -> tuple[str, str] | None:
    """"只看 X 的呢？" leaves out the head noun X modifies: it is the noun the previous question's last 的 modifies,
    and X goes before it (in place of the frame's modifier when both are of one slot type, a time for a time).

    >>> modifier_ellipsis("只看某个服务单元的呢？", "怎么查看 nginx 的访问日志")[0]
    '怎么查看 nginx 的某个服务单元的访问日志'
    >>> modifier_ellipsis("只要上个月的呢？", "怎么导出本周的考勤记录")[0]
    '怎么导出上个月的考勤记录'
    >>> modifier_ellipsis("红色的呢？", "这款手机有黑色的吗") is None  # 的 heads nothing in the frame
    True
    """
    m = _ZH_DE_NE_RE.match(query.strip())
    if m is None or _ZH_QWORD_RE.search(m.group(1)) or "的" in m.group(1) or not frame:
        return None
    toks = [(w, t) for w, t in tagged(m.group(1)) if w.strip()]
    i = 0
    while i < len(toks) - 1 and (toks[i][0] in _ZH_RESTRICTING or toks[i][1] == "v"):
        i += 1  # "只看", "只显示": the frame's own verb asks it
    mod = "".join(w for w, _ in toks[i:]).strip()
    if f"{m.group(1)}的" in lx.ZH_INTERJECTIONS or not any(
            tg in lx.ZH_NOUN_TAGS or tg in _ZH_QUALITY_TAGS or (tg[0] in "vd" and len(w) > 1)
            for w, tg in toks[i:]):
        return None  # "好的呢", "是的呢", "我的呢": an assent or a person, no modifier of a thing
    spot = _de_head(frame)
    if not mod or spot is None:
        return None
    start, de, end = spot
    head = frame[de + 1:end].strip()
    if mod in frame or not head:
        return None
    kind = f.slot_kind(mod)
    old = next((frame[s:e] for s, e, k in f.slot_spans(frame) if k == kind and e <= de and s >= start), None) \
        if kind is not None else None
    if old is None and _adjectival(mod) and _adjectival(frame[start:de]):
        old = frame[start:de].strip()  # "便宜的行李箱" + "更大的呢": a quality for a quality
    if old:  # "本周的考勤记录" + "上个月的呢": the time replaced, not a second one added
        return frame.replace(old, mod, 1), f"modifier ellipsis: {old} → {mod} (of {head})"
    at = de + 1 + (len(frame[de + 1:]) - len(frame[de + 1:].lstrip()))
    return f"{frame[:at]}{mod}的{frame[at:]}", f"modifier ellipsis: {mod}的 {head}"


FRAME_STEPS = (comparison, preposition_swap, typed_swap, possessor_swap, attribute_shift, condition, means,
               conditional, modifier_ellipsis)

# --- the gate: this language's checks, in the order they are tried (the first half of the decision) ----------

_ZH_REMARK_RE = re.compile(r"^\W*(?:好的?|嗯|谢谢|行)?\W*我(?:们)?(?:会|先|再|回头|就)")
_ZH_WANTS_RE = re.compile(r"想|要|需要|帮|请|给我|推荐|告诉")


def is_remark(query: str) -> bool:
    """A first-person remark on the answer that asks for nothing: what the user will do with it ("我会考虑这些的。").
    Its 这些 / 那个 is the answer itself, and there is nothing to search for. A wish or a question is no remark
    ("我要那个")."""
    return bool(_ZH_REMARK_RE.match(query)) and not ZH_QUESTION_RE.search(query) and any(
        d in query for d in ("这些", "那些", "这个", "那个")) and not _ZH_WANTS_RE.search(query) \
        and not any(p in query for p in ("它", "他", "她"))


def remark(a: Analysis) -> Decision | None:
    """A remark on the answer ("我会考虑这些的。") asks for nothing: no rewrite.

    >>> from convsearch.resolve.gate import needs_rewrite
    >>> from convsearch.types import Message as M
    >>> needs_rewrite([M("user", "推荐几本书"), M("assistant", "《三体》《活着》")], "我会考虑这些的。").kind.value
    'social'
    """
    if is_remark(a.q):
        return Decision(False, "a remark on the answer ('I'll consider those'), not a request", 0.6,
                        DecisionKind.SOCIAL)
    return None


def classifier_phrase(a: Analysis) -> Decision | None:
    """A classifier phrase naming the focus by its kind ("这张卡"), a work the answer introduced ("这本书"), or a
    kind the history named ("这种病")."""
    q, history = a.q, a.history
    if history and any(d in q for d in lx.ZH_CLASSIFIER_DETS) \
            and (((ent := a.focus.entity) is not None and zh_classifier_reference(q, ent.text) is not None)
                 or (any(d in q for d in lx.ZH_WORK_DETS) and introduced_work(history) is not None)
                 or kind_referent(q, history) is not None):
        return Decision(True, "a classifier phrase naming the focus by its kind (这张卡)", 0.8, DecisionKind.PRONOUN)
    return None


def yes_no_reply(a: Analysis) -> Decision | None:
    """A bare yes/no reply ("会" after "你会游泳吗？") leaves out the predicate it answers."""
    if a.history and a.echo() is not None:
        return Decision(True, "a bare yes/no reply: it leaves out the predicate it answers (会 → 会游泳)", 0.7,
                        DecisionKind.ELLIPSIS)
    return None


def wh_fragment(a: Analysis) -> Decision | None:
    """A fragment answering the other speaker's short wh-question ("你在哪里上班？" → "二环")."""
    if a.history and a.wh() is not None:
        return Decision(True, "a fragment answer to a wh-question (在哪里上班？ → 二环)", 0.7, DecisionKind.ELLIPSIS)
    return None


def marker(a: Analysis) -> Decision | None:
    """A pronoun or demonstrative standing alone (它, 这款, 前者; unless the query named its antecedent before it),
    an ellipsis "X呢", or a leading 那 / 那么 / 还有 / 另外."""
    q = a.q
    if has_pronoun(q, "zh"):
        if _zh_antecedent_inside(q):
            return Decision(False, "the pronoun refers to an entity named earlier in the query", 0.6,
                            DecisionKind.ANTECEDENT_INSIDE)
        return Decision(True, "pronoun or demonstrative", 0.9, DecisionKind.PRONOUN)
    if zh_ellipsis(q):
        return Decision(True, "ellipsis: 'X呢'", 0.9, DecisionKind.ELLIPSIS)
    if zh_lead(q):
        return Decision(True, "leading follow-up marker", 0.8, DecisionKind.LEADING)
    return None


_ZH_PERSONAL = frozenset({"他", "她", "他们", "她们"})
_ZH_CLAUSE_BREAK_RE = re.compile(r"[，,。；;！!？?]|但是|而且|所以|然后")


def _zh_antecedent_inside(q: str) -> bool:
    """'我妈说她明天来': 他/她 after a person named earlier in the query (a name, or a noun ending like 妈, 朋友,
    老师) refer to that person, not to an earlier turn."""
    toks = tagged(q)
    i = next((i for i in range(len(toks)) if zh_anaphor_at(toks, i)), None)
    if i is None:
        return False
    before = "".join(w for w, _ in toks[:i])
    if toks[i][0] in ("它", "它的", "它们") and _ZH_CLAUSE_BREAK_RE.search(q[:q.find(toks[i][0])]):
        # "那只猫太可爱了，我好想抱抱它": a thing named in an earlier clause of the query
        return any(t[:1] == "n" and t != "nr" and w not in lx.RELATIONAL_ZH for w, t in toks[:i])
    if toks[i][0] not in _ZH_PERSONAL:
        return False
    return any(m.cls == "nr" or m.text[-1] in lx.ZH_PERSON_FINALS for m in mentions(before, "zh")) or any(
        w in before for w in lx.ZH_PERSON_WORDS)


def opening(a: Analysis) -> Decision | None:
    """With no topic, a question that goes on about what the conversation opened on without naming it
    (``_opening_left_out``)."""
    if not a.topic and ZH_QUESTION_RE.search(a.q) and (o := _opening_left_out(a.q, a.history, a.mentions)) is not None:
        return Decision(True, f"goes on about what the conversation opened on ({o.text}) without naming it", 0.5,
                        DecisionKind.OPENING)
    return None


def _opening_left_out(q: str, history: Sequence[Message], ms: Sequence[Mention]) -> Mention | None:
    """In an information-seeking Chinese conversation (the latest answer informs), the subject the conversation
    opened on, when ``q`` goes on with the conversation and does not name it: "武功山两天一夜徒步 经典路线是哪条"
    … → "山顶扎营要提前预约吗" → "武功山山顶扎营…". It goes on with it when it names no thing of its own ("老人能爬上去
    吗": only who goes) or a word of the conversation (扎营, which the answer used). (A word in common is weak
    evidence: "糖色可以提前炒好吗" after the hike shares 提前 and gets 武功山; asking for a shared noun instead
    costs a held-out follow-up set a case.) Not when the user has since moved to a name of another
    subject (then that is the focus), nor for a thing the answer named, asked about by name ("关系图谱怎么打开", as
    after a passage). (The same test in English changes questions that needed nothing on CAsT 2021: keep −0.16,
    and costs a held-out follow-up set a case.)"""
    last = next((m for m in reversed(history) if m.role == "assistant"), None)
    if last is None or not informs(last) or any(compound(m, "zh") and m.text in last.content for m in ms):
        return None
    opening = opening_subject(history)
    if opening is None or opening.text in q:
        return None
    if any(_swapped_in(m.content, opening) for m in history[1:] if m.role == "user"):
        return None  # "小米 14 Ultra 值得买吗" … "那华为 Pura 70 Pro 呢" … "续航能撑一天吗": about the Huawei
    if things_asked(ms) == 0:
        return opening
    said = frozenset().union(*(_content_words(m.content) for m in history))
    return opening if _content_words(q) & said else None


def _swapped_in(text: str, opening: Mention) -> bool:
    """Is ``text`` a "那 X 呢" fragment naming another thing by name, which the conversation then goes on about?"""
    return bool(ZH_NE_RE.search(text)) and any(m.proper and m.text != opening.text for m in mentions(text, "zh"))


@lru_cache(maxsize=4096)
def _content_words(text: str) -> frozenset[str]:
    """The nouns, verbs and adjectives of two characters or more of a Chinese text (cached per turn)."""
    return frozenset(w for w, t in tagged(text) if len(w) >= 2 and t[:1] in "nva" and w not in lx.STOP_ZH)


def word_count(q: str) -> int:
    """Words as the tagger splits them, punctuation left out."""
    return sum(1 for w, t in tagged(q) if t not in ("x", "w") and w.strip())


SHORT_WORDS = 3  # a query of at most this many words leans on the conversation


def asks(q: str) -> bool:
    """A question: a question mark, 吗, a question word."""
    return bool(ZH_QUESTION_RE.search(q))


def subject_left_out(a: Analysis) -> Decision | None:
    """A question with at most one plain noun, while the focus is a proper noun the user named and the question
    does not name it ("有免费额度吗？" after questions on AnySearch); not after a passage when the question names a
    compound noun of its own."""
    q, ms = a.q, a.mentions
    if ZH_QUESTION_RE.search(q) and things_asked(ms) <= 1:
        focus = a.focus
        if focus.entity is not None and focus.entity.proper and focus.source == "user" and focus.entity.text not in q \
                and not own_thing_over_passage(a.history, ms, "zh"):
            return Decision(True, "a question that does not name the product or place the user asked about", 0.5,
                            DecisionKind.SUBJECT)
    return None


GATE_STEPS = (c.no_context, c.social, remark, c.partial_name, c.offer, c.ordinal, c.fragment, classifier_phrase,
              yes_no_reply, wh_fragment, marker, c.named, opening, c.short(word_count, SHORT_WORDS), c.no_noun,
              c.relational_only, c.topic, subject_left_out, c.after_closing(asks), c.standalone)


# --- the rule half of the decision: this language's steps before its rewrite steps (``rewrite.scoring``) -------

def _tidy_ordinal(out: str) -> str:
    """"第二种呢？" → "向量检索": the item alone, without the ellipsis' 呢 and the final mark."""
    return ZH_NE_RE.sub("", out).rstrip(TRAIL_MARKS) or out


def work_reference(t: Turn) -> s.Resolution | None:
    """这本书 / 那部电影 naming a work the latest answer introduced takes its title."""
    work = r.work_reference(t.query, t.history)
    return s.Resolution(work[0], t.why(work[1]), "work") if work is not None else None


def reply(t: Turn) -> s.Resolution | None:
    """A bare yes/no reply or a fragment answer takes the predicate it answers ("会" after "你会游泳吗？" → "会游泳";
    "二环" after "在哪里上班？" → "在二环上班"); the answer to the assistant's clarifying question goes with the thing
    requested ("帮我订酒店" → "你要住几晚？" → "两晚" → "酒店 要住两晚")."""
    echo = t.a.echo(t.query) or t.a.wh(t.query)
    if echo is None:
        return None
    out, how = echo
    asked = r.request_asked(t.history, t.topic)
    if asked is not None and asked.text not in out:
        out, how = f"{asked.text} {out}", f"{how}; with the request's {asked.text}"
    return s.Resolution(out, t.why(how), "reply")


_PERSON_PRON_RE = re.compile(r"他|她")
_PLURAL_PRON_RE = re.compile(r"们|这些|那些")

RULE_STEPS = (s.not_needed, s.ordinal(_tidy_ordinal), work_reference, reply, s.offer, s.root_focus, s.opening_focus,
              s.frame_focus, s.introduced_focus(_PERSON_PRON_RE, _PLURAL_PRON_RE, person_by_name=False), s.fragment,
              s.topic_alias, s.passage_names)
