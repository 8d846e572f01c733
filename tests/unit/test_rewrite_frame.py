"""Frame-based completion by slot type, mixed-script names as one unit, assistant-introduced entities."""

from __future__ import annotations

import pytest

from convsearch.lang.zh.mentions import zh_name_tokens
from convsearch.resolve.entities import mentions
from convsearch.resolve.frame import slot_kind, slot_spans
from convsearch.resolve.gate import needs_rewrite
from convsearch.resolve.introduced import introduced_entity
from convsearch.resolve.language import complete_fragment as _complete
from convsearch.resolve.language import language
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Message


def complete_fragment(query: str, frame: str, lang: str):
    return _complete(query, frame, language(lang))


def _u(text: str) -> Message:
    return Message("user", text)


def _a(text: str) -> Message:
    return Message("assistant", text)


@pytest.mark.parametrize("query, frame, lang, want", [
    # time: the day replaces the day, not glued onto the entity ("杭州的后天")
    ("后天呢？", "西安今天会下雪吗？", "zh", "西安后天会下雪吗"),
    ("And on Monday?", "When does the museum open on Sundays?", "en", "When does the museum open on Monday?"),
    ("And in 2019?", "How many bikes did Denmark sell in 2022?", "en", "How many bikes did Denmark sell in 2019?"),
    # places, with a preposition as anchor
    ("去泰国呢？", "中国护照去日本需要签证吗？", "zh", "中国护照去泰国需要签证吗"),
    ("那南京呢？", "苏州周末天气怎么样？", "zh", "南京周末天气怎么样"),
    ("What about Vienna?", "How much is a museum pass in Prague?", "en", "How much is a museum pass in Vienna?"),
    # states, regions and more cities, typed in lower case too
    ("What about Ohio?", "What is the minimum age for a learner permit in California?", "en",
     "What is the minimum age for a learner permit in Ohio?"),
    ("and leeds?", "is the 14 bus running late in manchester", "en", "is the 14 bus running late in leeds"),
    # platforms / languages / tools
    ("Linux 呢？", "Mac 上怎么查看端口占用？", "zh", "Linux 上怎么查看端口占用"),
    ("In Rust?", "How do I read a file line by line in Go?", "en", "How do I read a file line by line in Rust?"),
    ("And on a Mac?", "How do I take a screenshot on Windows 11?", "en", "How do I take a screenshot on a Mac?"),
    # model and version numbers keep the brand
    ("4070 呢？", "RTX 4090 的显存多大？", "zh", "RTX 4070 的显存多大"),
    ("And the 13B?", "How much RAM does Llama 2 70B need?", "en", "How much RAM does Llama 2 13B need?"),
    # attribute shift keeps the entity
    ("And its weight?", "What is the battery life of the Kindle Paperwhite?", "en",
     "What is the weight of the Kindle Paperwhite?"),
    ("续航呢？", "小米 SU7 的百公里加速是多少？", "zh", "小米 SU7 的续航是多少"),
    # comparison keeps both entities and the predicate
    ("和 Pixel 8 比呢？", "iPhone 15 的续航怎么样？", "zh", "iPhone 15 和 Pixel 8 的续航怎么样"),
    ("How does Redis compare?", "Is Memcached good for session storage?", "en",
     "Is Memcached and Redis good for session storage?"),
])
def test_fragment_fills_the_slot_of_its_type(query: str, frame: str, lang: str, want: str) -> None:
    out = complete_fragment(query, frame, lang)
    assert out is not None and out[0] == want


@pytest.mark.parametrize("query, frame, lang", [
    ("价格呢？", "杭州今天会下雨吗？", "zh"),            # no slot of that type: left to the other rules
    ("What about DynamoDB?", "Does the free tier include RDS?", "en"),
    ("Which one is cheaper?", "How much is the Netflix plan?", "en"),  # a question of its own
    ("我想去北京", "上海今天天气怎么样？", "zh"),          # not a fragment
])
def test_no_confident_slot_means_no_completion(query: str, frame: str, lang: str) -> None:
    assert complete_fragment(query, frame, lang) is None


def test_slot_lexicons_are_typed() -> None:
    assert slot_kind("后天") == "time_day" and slot_kind("Saturday") == "time_day"
    assert slot_kind("a Mac") == "platform" and slot_kind("番禺") == "place" and slot_kind("2020") == "time_year"
    assert slot_kind("价格") is None
    text = "上海到成都的高铁明天几点"
    assert [text[s:e] for s, e, _ in slot_spans(text)] == ["上海", "成都", "高铁", "明天"]
    assert slot_kind("高铁") == "vehicle" and slot_kind("孕妇") == "person_group" and slot_kind("一等座") == "seat_class"


@pytest.mark.parametrize("text, name", [
    ("小米 14 Ultra 支持卫星通信吗", "小米 14 Ultra"),
    ("RTX 4090 的功耗是多少", "RTX 4090"),
    ("GPT-4o mini 的 API 价格是多少", "GPT-4o mini"),
    ("Go 1.22 的 for 循环变量", "Go 1.22"),
    ("华为 MatePad Pro 13.2 有货吗", "华为 MatePad Pro 13.2"),
    ("特斯拉 Model Y 有几种颜色", "特斯拉 Model Y"),
])
def test_zh_mixed_script_names_are_one_unit(text: str, name: str) -> None:
    assert name in [w for w, _ in zh_name_tokens(text)]
    assert name in [m.text for m in mentions(text, "zh")]


@pytest.mark.parametrize("text, name", [
    ("Is Python 3.12 supported?", "Python 3.12"),
    ("How much VRAM does Llama 3.1 70B need?", "Llama 3.1 70B"),
    ("Does the Galaxy S23 Ultra charge fast?", "Galaxy S23 Ultra"),
    ("What is the price of GPT-4o mini?", "GPT-4o mini"),
    ("Is the Dell XPS 13 light?", "Dell XPS 13"),
])
def test_en_mixed_script_names_are_one_unit(text: str, name: str) -> None:
    assert name in [m.text for m in mentions(text, "en")]


def test_a_score_after_a_name_is_no_model_number() -> None:
    names = [m.text for m in mentions("The Denver Nuggets beat the Miami Heat 4–1 in the final.", "en") if m.proper]
    assert not any("4" in n for n in names)


def test_pronoun_after_a_which_question_takes_the_entity_the_answer_introduced() -> None:
    rw = RuleRewriter()
    h = [_u("Which airline is the flag carrier of Finland?"),
         _a("Finnair, founded in 1923, is the flag carrier of Finland.")]
    assert introduced_entity(h, "en").text == "Finnair"
    assert "Finnair" in rw.rewrite(h, "What is its baggage allowance?").rewritten
    hz = [_u("报销差旅费要用哪个系统？"), _a("差旅报销统一走「易报销」系统。")]
    assert rw.rewrite(hz, "它的审批一般几天能走完？").rewritten.startswith("易报销")
    # a name that is one of the kind the question asked for is new ("双子座流星雨" after "…的流星雨"); a name
    # the question gave is not ("位于中国" after a question about 中国)
    hk = [_u("今年年底有没有值得看的流星雨"), _a("推荐12月中旬的双子座流星雨，它的流量最大。")]
    assert introduced_entity(hk, "zh").text == "双子座流星雨"
    assert rw.rewrite(hk, "它的极大期是哪天？").rewritten.startswith("双子座流星雨")
    assert introduced_entity([_u("哪座山是中国最高的"), _a("珠穆朗玛峰，位于中国和尼泊尔边境。")], "zh").text == "珠穆朗玛峰"
    # the user's own entity stays the referent when the question did not ask for one
    h2 = [_u("Who makes the Kindle?"), _a("Amazon makes it.")]
    assert introduced_entity([_u("Is the Kindle waterproof?"), _a("Yes, Amazon rates it IPX8.")], "en") is None
    assert introduced_entity(h2, "en") is None or introduced_entity(h2, "en").text == "Amazon"


def test_gate_sends_typed_fragments_that_name_an_entity_to_the_rewriter() -> None:
    h = [_u("Mac 上怎么截长图？"), _a("可以用第三方工具。")]
    d = needs_rewrite(h, "Windows 呢？")
    assert d.needed and d.is_frame
    assert RuleRewriter().rewrite(h, "Windows 呢？", decision=d).rewritten == "Windows 上怎么截长图"


@pytest.mark.parametrize("query, frame, lang, want", [
    ("Any under $40?", "What are the best running shoes for beginners?", "en",
     "What are the best running shoes for beginners under $40?"),
    ("有带泳池的吗？", "三亚湾附近有没有亲子酒店推荐？", "zh", "三亚湾附近有没有亲子酒店推荐 带泳池"),
])
def test_a_condition_is_added_to_a_request(query: str, frame: str, lang: str, want: str) -> None:
    out = complete_fragment(query, frame, lang)
    assert out is not None and out[0] == want


def test_a_condition_needs_a_request_to_add_to() -> None:
    assert complete_fragment("有带泳池的吗？", "三亚今天天气怎么样？", "zh") is None
    assert complete_fragment("有什么小吃吗？", "西安有哪些好玩的？", "zh") is None  # a question of its own


def test_which_compares_the_entities_of_the_last_two_questions() -> None:
    rw = RuleRewriter()
    h = [_u("How much is the Spotify Premium plan?"), _a("$11.99 a month."), _u("And Apple Music?"),
         _a("$10.99 a month.")]
    out = rw.rewrite(h, "Which is cheaper for students?").rewritten
    assert out == "Which is cheaper for students, Spotify Premium or Apple Music?"
    hz = [_u("北京到上海坐飞机要多久？"), _a("约 2 小时。"), _u("高铁呢？"), _a("约 4.5 小时。")]
    out_zh = rw.rewrite(hz, "哪个更便宜？").rewritten
    assert "高铁" in out_zh or out_zh == "哪个更便宜？"


@pytest.mark.parametrize("history, query", [
    ([_u("What are good stretches after running?"), _a("Try a quad stretch.")],
     "My brother says his back hurts when he lifts, is that normal?"),
    ([_u("周末带孩子去哪里玩比较好？"), _a("可以考虑科技馆。")], "我同事说他儿子咳嗽一直不好，该挂哪个科？"),
])
def test_a_person_named_in_the_query_is_the_pronouns_antecedent(history: list[Message], query: str) -> None:
    d = needs_rewrite(history, query)
    assert not d.needed or RuleRewriter().rewrite(history, query, decision=d).rewritten.count("running") == 0
    out = RuleRewriter().rewrite(history, query).rewritten
    assert "科技馆" not in out and "stretch" not in out.lower()


def test_fluency_guard_repairs_glue_and_rejects_what_no_person_would_type() -> None:
    from convsearch.resolve.guard import fluency_problem, fluency_repair

    assert fluency_repair("那番禺最近三天适合露营吗呢", "那番禺呢？") == "番禺最近三天适合露营吗"
    assert fluency_repair("How much is a 15-year fixed fixed rate?", "What about a 15-year fixed?") == \
        "How much is a 15-year fixed rate?"
    assert fluency_repair("那个呢", "那个呢") == "那个呢"  # unchanged query: left alone
    assert fluency_problem("杭州的后天", "后天呢？") is not None
    assert fluency_problem("AnySearch 的的价格", "价格呢？") is not None
    assert fluency_problem("And Sony WH-1000XM5 its price?", "And its price?") is not None
    assert fluency_problem("杭州后天会下雨吗", "后天呢？") is None
    assert fluency_problem("What is the price of the Sony WH-1000XM5?", "And its price?") is None


def test_an_unfluent_completion_falls_back_to_the_query() -> None:
    rw = RuleRewriter()
    res = rw._checked("后天呢？", "杭州的后天", [_u("杭州今天会下雨吗？")], None, "test")
    assert res.rewritten == "后天呢？" and res.fell_back and "not fluent" in res.reason


def test_a_classifier_phrase_names_the_focus_by_its_kind() -> None:
    from convsearch.lang.zh.markers import zh_classifier_reference

    assert zh_classifier_reference("这张卡在国外刷有手续费吗", "招商银行的经典白金卡") == (0, 3)
    assert zh_classifier_reference("这本书好看吗", "招商银行的经典白金卡") is None
    h = [_u("我想了解一下浦发银行的美国运通白金卡。"), _a("好的，年费 3600 元。")]
    out = RuleRewriter().rewrite(h, "这张卡在国外刷有手续费吗？").rewritten
    assert out.startswith("浦发银行") and "白金卡在国外刷有手续费吗" in out


@pytest.mark.parametrize("text", ["Wow, that sounds great.", "Considering the cost, is it worth it?",
                                  "Isn’t that expensive?", "Hmm, what else is there?"])
def test_sentence_initial_interjections_and_verbs_are_no_names(text: str) -> None:
    assert not [m for m in mentions(text, "en") if m.proper and m.text.split()[0] in text.split()[0]]


def test_a_long_passage_answer_is_not_excluded_by_name() -> None:
    passage = " ".join(["Geothermal heat pumps move heat from the ground into the house."] * 8)
    h = [_u("What heating systems are efficient?"), _a(passage)]
    out = RuleRewriter().rewrite(h, "What else is there?").rewritten
    assert not out.startswith("Besides")


def test_a_locative_there_takes_the_place_the_question_named() -> None:
    from convsearch.resolve.frame import locative_there

    assert locative_there("Was that his first win there?", "Who won the race in Monaco last year?")[0] == \
        "Was that his first win in Monaco?"
    assert locative_there("How do I get there by train?", "What can I see in Kyoto?")[0] == \
        "How do I get to Kyoto by train?"
    assert locative_there("Is there a discount?", "Is the zoo in Berlin open?") is None  # existential
    assert locative_there("Was it sunny there?", "Did it rain?") is None  # no place named


def test_he_after_a_which_question_takes_the_one_person_the_answer_named() -> None:
    rw = RuleRewriter()
    h = [_u("Which team won the 2016 NBA Finals?"),
         _a("The Cleveland Cavaliers came back from 3–1 down, and LeBron James was named Finals MVP.")]
    assert rw.rewrite(h, "How tall is he?").rewritten == "How tall is LeBron James?"
    h2 = [_u("Which club won the 2019 UEFA Champions League?"),
          _a("Liverpool beat Tottenham 2–0, and Virgil van Dijk was named man of the match.")]
    assert "Virgil van Dijk" in rw.rewrite(h2, "Where was he born?").rewritten
    # a score, an acronym or a lone word is nobody's name: no person introduced, no person put in
    h3 = [_u("Which team won the 2016 NBA Finals?"), _a("The Cleveland Cavaliers beat the Golden State Warriors 4–3.")]
    assert introduced_entity(h3, "en", person=True) is None


@pytest.mark.parametrize("history, query, want", [
    ([_u("What is the fee of the Invesco QQQ Trust (QQQ)?"), _a("QQQ charges 0.20% a year.")],
     "Does it pay dividends?", "Does QQQ pay dividends?"),
    ([_u("沪深300ETF（510300）的管理费是多少？"), _a("510300 的管理费为每年 0.5%。")],
     "它多久分红一次？", "510300"),
])
def test_a_bracketed_short_name_the_answer_went_on_with_replaces_the_pronoun(
        history: list[Message], query: str, want: str) -> None:
    assert want in RuleRewriter().rewrite(history, query).rewritten


def test_a_bracketed_short_name_the_answer_did_not_use_is_not_taken() -> None:
    h = [_u("What is the fee of the Invesco QQQ Trust (QQQ)?"), _a("The Invesco trust charges 0.20% a year.")]
    assert "QQQ)" not in RuleRewriter().rewrite(h, "Does it pay dividends?").rewritten
    assert "(QQQ)" not in RuleRewriter().rewrite(h, "Does it pay dividends?").rewritten.replace("Trust (QQQ)", "")


@pytest.mark.parametrize("history, query, want", [
    ([_u("My phone is a Pixel 8 and the charger stopped working."),
      _a("Try another cable. Does the charging LED light up?"), _u("Yes, the LED is on."),
      _a("Then clean the USB-C port.")], "How long is its warranty?", "Pixel 8"),
    ([_u("我的华为 Mate 60 充不进电了。"), _a("换一根数据线试试？充电指示灯亮吗？"), _u("对，指示灯是亮的。"),
      _a("那可能是接口脏了，清理一下充电口。")], "它的保修期是多久？", "华为 Mate 60"),
])
def test_a_yes_or_no_reply_to_the_assistants_question_does_not_move_the_focus(
        history: list[Message], query: str, want: str) -> None:
    assert want in RuleRewriter().rewrite(history, query).rewritten


def test_four_digit_model_numbers_stay_in_the_name_and_years_stay_out() -> None:
    assert [m.text for m in mentions("Is the RTX 4090 worth it for a Dell Precision 7680?", "en") if m.proper] == [
        "RTX 4090", "Dell Precision 7680"]
    assert "Bears" in [m.text for m in mentions("the Bears 1985 season", "en")]


@pytest.mark.parametrize("history, query, want, stays", [
    ([_u("杭州西湖游船多少钱？"), _a("西湖游船淡季 45 元，旺季 55 元。"), _u("淡季是哪几个月？"),
      _a("淡季为每年 11 月到次年 3 月。")], "一般要坐多久？", "西湖游船", "淡季"),
    ([_u("How much is the Louvre ticket?"), _a("A ticket costs 22 euros; a timed slot is required."),
      _u("How do I book a timed slot?"), _a("Book it on the official site.")], "How long does a visit take?",
     "Louvre", "slot"),
])
def test_after_a_question_about_a_term_the_answer_brought_in_a_bare_follow_up_goes_back(
        history: list[Message], query: str, want: str, stays: str) -> None:
    out = RuleRewriter().rewrite(history, query).rewritten
    assert want in out and stays not in out
    # a fragment still swaps inside the digression's own frame
    if stays == "淡季":
        assert "旺季" in RuleRewriter().rewrite(history, "那旺季呢？").rewritten


@pytest.mark.parametrize("history, query, want", [
    ([_u("推荐一部讲太空的科幻电影。"), _a("推荐诺兰的《星际穿越》，画面震撼。")], "这部电影片长多久？", "诺兰《星际穿越》片长多久"),
    ([_u("推荐一本入门 Python 的书。"), _a("推荐埃里克·马瑟斯的《Python 编程：从入门到实践》，项目驱动。")], "这本书有第三版吗？",
     "《Python 编程：从入门到实践》有第三版吗"),
])
def test_a_work_classifier_phrase_takes_the_work_the_answer_named(history: list[Message], query: str, want: str) -> None:
    assert RuleRewriter().rewrite(history, query).rewritten == want


def test_no_work_reference_without_a_request_for_one() -> None:
    h2 = [_u("推荐两本历史书。"), _a("推荐《万历十五年》和《人类简史》。")]
    assert "《" not in RuleRewriter().rewrite(h2, "这本书有英文版吗？").rewritten


@pytest.mark.parametrize(("query", "want"), [
    ("如果用的是 LVM 呢？", "如果用的是 LVM，空间不够了，有个空分区可以挂上来扩展吗"),
    ("那如果用 LVM 呢？", "如果用 LVM，空间不够了，有个空分区可以挂上来扩展吗"),
    ("请问如果用的是 LVM 呢？", "请问如果用的是 LVM，空间不够了，有个空分区可以挂上来扩展吗"),  # the opener put back
])
def test_a_condition_asked_of_the_previous_question_takes_it_as_its_clause(query, want):
    history = [_u("空间不够了，有个空分区可以挂上来扩展吗？"), Message("assistant", "可以，把空分区格式化后挂载上去。")]
    r = RuleRewriter().rewrite(history, query)
    assert r.rewritten == want and "condition on the previous question" in r.reason, r


@pytest.mark.parametrize(("history", "query"), [
    ([_u("杭州今天会下雨吗？"), Message("assistant", "会，下午有雨。")], "如果是明天呢？"),  # a typed slot: swapped
    ([_u("你对于gay怎么看"), Message("assistant", "我觉得尊重更重要")], "如果我是呢"),  # the object left out
    ([_u("谢谢啦"), Message("assistant", "不客气")], "要是软点呢"),  # no question to ask again
])
def test_a_condition_that_is_no_clause_of_the_previous_question_is_left_to_the_other_steps(history, query):
    assert "condition on the previous question" not in RuleRewriter().rewrite(history, query).reason
