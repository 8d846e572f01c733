"""Benchmark inputs: real follow-up turns from the shared data, hand-written demo-like turns, and
realistic ranked hit lists built from real text.

Nothing here is copied from the data: turns and hit texts are read from ``DATA`` at run time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from common import data_file

from convsearch.eval.data import EvalRecord, iter_records, topic_text
from convsearch.types import Hit, Message

# Hand-written conversations in the style of the demo (a product knowledge base and HR policies).
DEMO_CONVERSATIONS: list[dict] = [
    {"lang": "zh", "topic": "AnySearch", "turns": [
        ("AnySearch 支持哪些检索方式？", "AnySearch 支持关键词检索、向量检索和混合检索。"),
        ("价格呢？", "按调用量计费，每月前一万次免费。"),
        ("它支持私有化部署吗？", "支持，提供 Docker 镜像和 Helm Chart。"),
        ("那 NovaDB 呢？", None)]},
    {"lang": "zh", "topic": None, "turns": [
        ("深圳最近三天适合露营吗？", "深圳未来三天多云，偶有阵雨，适合短途露营。"),
        ("那番禺呢？", "番禺周六有雷阵雨。"),
        ("需要带什么装备？", None)]},
    {"lang": "zh", "topic": "员工手册", "turns": [
        ("入职流程是怎样的？", "先在 HR 系统提交材料，再由部门经理确认。"),
        ("那审批需要多久？", "一般两个工作日。"),
        ("年假有几天？", "工作满一年有五天年假。"),
        ("病假呢？", "病假需要提供医院证明。"),
        ("这个要找谁批？", None)]},
    {"lang": "zh", "topic": None, "turns": [
        ("报销流程需要哪些材料？", "需要发票原件和审批单。"),
        ("出差补贴标准是多少？", "一线城市每天三百元。"),
        ("前者和后者哪个先办？", None)]},
    {"lang": "zh", "topic": "星云笔记本 X1", "turns": [
        ("星云笔记本 X1 的续航怎么样？", "官方标称 14 小时。"),
        ("这款的重量呢？", "1.2 公斤。"),
        ("还有别的颜色吗？", None)]},
    {"lang": "en", "topic": "AnySearch", "turns": [
        ("What retrieval modes does AnySearch support?", "Keyword, vector and hybrid retrieval."),
        ("How much does it cost?", "Usage-based pricing; the first 10,000 calls a month are free."),
        ("what about NovaDB?", "NovaDB is priced per node."),
        ("Does it support on-premise deployment?", None)]},
    {"lang": "en", "topic": None, "turns": [
        ("Who designed the Sydney Opera House?", "Jørn Utzon, a Danish architect."),
        ("When was it completed?", "It was completed in 1973."),
        ("What other buildings did he design?", "Bagsværd Church and the Kuwait National Assembly."),
        ("and the Kuwait National Assembly?", None)]},
    {"lang": "en", "topic": "Employee handbook", "turns": [
        ("How do I request parental leave?", "Submit the form in the HR portal at least 30 days ahead."),
        ("How long is it?", "Sixteen weeks, fully paid."),
        ("what about sick leave?", "Up to ten days a year without a doctor's note."),
        ("Who approves that?", None)]},
    {"lang": "en", "topic": None, "turns": [
        ("Is Lisbon a good place for a winter holiday?", "Yes, winters are mild, around 15 °C."),
        ("How about Porto?", "Porto is cooler and rainier in winter."),
        ("What are the best neighbourhoods to stay in there?", None)]},
]


@dataclass(frozen=True)
class Turn:
    id: str
    lang: str
    history: tuple[Message, ...]
    query: str
    topic: str | None


def demo_turns() -> list[Turn]:
    out = []
    for ci, conv in enumerate(DEMO_CONVERSATIONS):
        hist: list[Message] = []
        for ti, (user, assistant) in enumerate(conv["turns"]):
            if hist or conv["topic"]:
                out.append(Turn(f"demo-{ci}-{ti}", conv["lang"], tuple(hist), user, conv["topic"]))
            hist.append(Message("user", user))
            if assistant:
                hist.append(Message("assistant", assistant))
    return out


def _to_turn(r: EvalRecord) -> Turn:
    return Turn(r.id, r.lang, tuple(r.messages()), r.question, topic_text(r))


def spread(items: list, n: int, offset: int = 0) -> list:
    """``n`` items spread evenly over ``items`` (so many dialogs are covered, not the first few)."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step + offset) % len(items)] for i in range(n)]


def follow_up_turns(rel: str, n: int, *, offset: int = 0) -> list[Turn]:
    recs = [r for r in iter_records(data_file(rel)) if r.history]
    return [_to_turn(r) for r in spread(recs, n, offset)]


# --- hit texts ------------------------------------------------------------------------------------
def _strings(rel: str, *, min_len: int = 1) -> list[tuple[str, str]]:
    """(text, title) pairs: every history turn and question of a file, unique, in file order."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    with data_file(rel).open(encoding="utf-8") as fh:
        for line in fh:
            o = json.loads(line)
            if "question" not in o:
                continue
            topic = o.get("topic")
            title = ""
            if isinstance(topic, dict):
                title = str(topic.get("wikipedia_title") or topic.get("title") or "")
            texts = [*o.get("history", []), o["question"], *(o.get("gold_passages_text") or {}).values()]
            for t in texts:
                t = " ".join(t.split())
                if len(t) >= min_len and t not in seen:
                    seen.add(t)
                    out.append((t, title))
    return out


class HitFactory:
    """Builds realistic ranked lists (title, snippet, url, date) from real zh and en text.

    A "document" is a few consecutive real sentences: ~100 characters of zh chit-chat or ~200 characters
    of en dialogue (plus some 700-character iKAT passages, so snippet truncation runs). ``fresh`` hands out
    new text on every call, walking a pool far larger than every LRU cache in the code under test.
    """

    DOMAINS_ZH = ("baike.baidu.com", "zhihu.com", "zh.wikipedia.org", "help.anysearch.cn", "weibo.com", "douban.com")
    DOMAINS_EN = ("en.wikipedia.org", "docs.anysearch.dev", "www.bbc.co.uk", "stackoverflow.com", "medium.com")

    def __init__(self) -> None:
        zh = _strings("rewrite-su2019-zh/train.jsonl", min_len=4) + _strings("restoration-200k-zh/valid.jsonl", min_len=4)
        en = (_strings("canard/dev.jsonl", min_len=20) + _strings("camrest676-gecor/train.jsonl", min_len=20)
              + _strings("mudoco-qr-cread/dev.jsonl", min_len=20))
        self.long_en = _strings("trec-ikat/ikat2023_train.jsonl", min_len=400)
        self.zh, self.en = zh, en
        self._pos = {"zh": 0, "en": 0, "long": 0}
        self._n = 0

    def _take(self, kind: str, k: int) -> list[tuple[str, str]]:
        pool = {"zh": self.zh, "en": self.en, "long": self.long_en}[kind]
        i = self._pos[kind]
        self._pos[kind] = (i + k) % len(pool)
        return [pool[(i + j) % len(pool)] for j in range(k)]

    def doc(self, lang: str) -> Hit:
        self._n += 1
        n = self._n
        if lang == "zh":
            parts = self._take("zh", 10)
            title = parts[0][0][:20]
            text = "，".join(p for p, _ in parts) + "。"
            dom = self.DOMAINS_ZH[n % len(self.DOMAINS_ZH)]
        else:
            if n % 9 == 0:
                (text, title), = self._take("long", 1)
            else:
                parts = self._take("en", 3)
                text = " ".join(p for p, _ in parts)
                title = parts[0][1] or parts[0][0][:40]
            dom = self.DOMAINS_EN[n % len(self.DOMAINS_EN)]
        year = 2021 + n % 5  # about a third older than the 365-day stale cut-off of the fixed "today"
        date = f"{year}-{1 + n % 12:02d}-{1 + n % 28:02d}"
        return Hit(id=f"doc-{n}", title=title or f"doc {n}", text=text, score=0.0,
                   url=f"https://{dom}/a/{n}", date=date, source="bm25")

    def lists(self, lang: str) -> list[list[Hit]]:
        """Four ranked lists, 50 hits in all: 28 distinct documents, repeated across lists the way query
        variants return them, plus one URL duplicate (tracking params, www, trailing slash), one exact
        content duplicate (new id and URL) and one near duplicate (one word changed)."""
        docs = [self.doc("en" if lang == "en" or i % 5 == 4 else "zh") for i in range(28)]
        u = docs
        d6 = u[6]
        url_dup = Hit(f"{d6.id}-mirror", d6.title, d6.text, 0.0, url=d6.url.replace("https://", "http://www.") + "/?utm_source=feed",
                      date=d6.date, source="bm25")
        d8 = u[8]
        exact_dup = Hit(f"{d8.id}-copy", d8.title, d8.text, 0.0, url=f"https://mirror.example/{d8.id}", date=d8.date, source="bm25")
        d4 = u[4]
        words = d4.text.split(" ")
        near_text = (" ".join(words[:-1] + ["indeed"]) if len(words) > 4 else d4.text.replace("，", "，也", 1))
        near_dup = Hit(f"{d4.id}-near", d4.title, near_text, 0.0, url=f"https://mirror.example/{d4.id}", date=d4.date, source="bm25")
        plan = [
            u[0:13],
            [u[1], u[0], u[3], u[2], u[13], u[4], u[14], u[5], u[15], url_dup, u[16], u[7], u[17]],
            [u[0], u[18], u[2], u[19], u[20], exact_dup, u[21], u[9], u[22], u[10], u[23], u[11]],
            [u[24], u[1], u[25], near_dup, u[26], u[3], u[27], u[12], u[5], u[13], u[14], u[6]],
        ]
        out = []
        for lst in plan:
            ranked = []
            for r, h in enumerate(lst, start=1):
                ranked.append(Hit(h.id, h.title, h.text, round(20.0 - r * 0.7, 3), h.url, h.date, "bm25", r, {}))
            out.append(ranked)
        assert sum(len(x) for x in out) == 50
        return out
