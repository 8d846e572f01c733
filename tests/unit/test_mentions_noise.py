"""Mention finding where the tagger's dictionary is silent or noisy: words jieba does not know, one-character
tags inside a phrase, one-character nouns the speaker owns; each case written for its mechanism."""

from __future__ import annotations

import pytest

from convsearch.resolve.entities import mentions
from convsearch.resolve.focus import find_focus
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Message
from convsearch.window import history_window

U, A = "user", "assistant"


def _rewrite(turns: list[tuple[str, str]], query: str) -> str:
    history = history_window([Message(r, c) for r, c in turns], 8)
    return RuleRewriter().rewrite(history, query).rewritten


@pytest.mark.parametrize("text, want", [
    ("二甲双胍一般怎么吃", "二甲双胍"),  # 二甲/b 双/n 胍/g: a bound morpheme stays inside the word
    ("我家猫三岁了，最近老是掉毛", "猫"),
    ("我的车最近老是熄火", "车"),  # 车 is tagged 'zg'
    ("他家的狗很凶", "狗"),
])
def test_words_the_dictionary_splits_or_drops_are_one_mention(text, want) -> None:
    assert [m.text for m in mentions(text, "zh")][:1] == [want]


def test_a_lone_character_is_still_noise_without_an_owner() -> None:
    assert [m.text for m in mentions("猫很胖", "zh")] == []


def test_a_one_character_name_tag_inside_a_phrase_is_no_name() -> None:
    # 遵/nr 医嘱/n: jieba's surname reading of 遵 does not make the phrase a proper name
    ms = {m.text: m for m in mentions("具体遵医嘱。", "zh")}
    assert not ms["遵医嘱"].proper
    assert mentions("布洛芬怎么吃", "zh")[0].proper  # a name tag on the whole word still counts


@pytest.mark.parametrize("turns, query, want", [
    ([(U, "我家猫三岁了，最近老是掉毛"), (A, "换季掉毛比较正常，可以每天梳毛，并选含 Omega-3 的猫粮。")],
     "它需要打什么疫苗", "猫"),
    ([(U, "我的车最近老是熄火"), (A, "可能是怠速马达或火花塞的问题，建议去 4S 店检查。")], "它还在保修期吗", "车"),
])
def test_a_thing_the_user_owns_is_what_a_pronoun_means(turns, query, want) -> None:
    assert find_focus([Message(r, c) for r, c in turns]).entity.text == want
    assert _rewrite(turns, query).startswith(want)


def test_a_drug_the_dictionary_splits_is_the_focus_of_its_follow_up() -> None:
    turns = [(U, "二甲双胍一般怎么吃"), (A, "通常随餐或餐后服用，从小剂量开始逐步加量，具体遵医嘱。")]
    assert _rewrite(turns, "有什么副作用") == "二甲双胍有什么副作用"


@pytest.mark.parametrize("text, want", [
    # the do-question's verb comes after the next noun: "leave" is part of the subject
    ("How does our parental leave policy work?", ["parental leave policy"]),
    ("Can a dog eat grapes?", ["dog", "grapes"]),  # ... but not when nothing verb-like follows
    ("Can dogs eat grapes?", ["dogs", "grapes"]),
    # a verb with its object ends the noun before it: "price", not "price look"
    ("At that price look for an aluminum frame.", ["price", "aluminum frame"]),
    ("Most recipes use the oven.", ["recipes", "oven"]),
])
def test_english_nouns_end_where_the_verb_begins(text, want) -> None:
    assert [m.text for m in mentions(text, "en")] == want


def test_a_pronoun_after_a_policy_question_takes_the_whole_noun() -> None:
    turns = [(U, "How does our parental leave policy work?"),
             (A, "Primary caregivers get 16 weeks of paid leave within 12 months of the birth.")]
    assert "parental leave policy" in _rewrite(turns, "Can it be split into two blocks?")


def test_a_part_written_as_an_acronym_is_no_entity_of_its_own() -> None:
    turns = [(U, "Is the RTX 5080 good for 4K gaming?"), (A, "The RTX 5080 handles most games at 4K above 60 fps.")]
    assert "RTX 5080" in _rewrite(turns, "what PSU do I need")
    assert "RTX 5080" in _rewrite(turns, "how much RAM do I need")
    # a question naming a machine of its own is left alone
    assert _rewrite(turns, "what PSU does the Dell XPS 8960 ship with") == "what PSU does the Dell XPS 8960 ship with"


@pytest.mark.parametrize("query, want", [
    ("California state?", True), ("hard boiled?", True), ("Tokyo?", True),
    ("Really?", False), ("Any others?", False), ("Why not?", False), ("Is it?", False), ("The price?", False),
])
def test_a_bare_phrase_asked_as_a_question_is_an_ellipsis(query, want) -> None:
    from convsearch.lang.en.markers import en_ellipsis

    assert (en_ellipsis(query) is not None) is want


def test_a_bare_name_with_no_phrase_to_replace_takes_the_frames_predicate() -> None:
    turns = [(U, "What's the deadline to file a federal tax return?"), (A, "April 15 for most people.")]
    want = "What's the deadline to file a federal tax return for California state?"
    assert _rewrite(turns, "California state?") == want
    # ... but a "what about" names a subject of its own, and a prepositional phrase is no name
    turns = [(U, "Who organised the Stanford prison experiment?"), (A, "Philip Zimbardo, in 1971.")]
    assert "for the BBC" not in _rewrite(turns, "What about the BBC experiment?")


@pytest.mark.parametrize("text, want", [
    # after a colon the series begins; it ends with its clause; a one-character suffix belongs to its item
    ("主要有三类：防癌险、百万医疗险和意外险，老人优先考虑意外险。", ("防癌险", "百万医疗险", "意外险")),
    ("我推荐这几个，故宫、长城和颐和园，都很值得去", ("故宫", "长城", "颐和园")),
])
def test_a_chinese_series_is_cut_at_its_clause(text, want) -> None:
    from convsearch.resolve.ordinal import lists_in

    assert lists_in(text, "zh")[0][0] == want


def test_an_ordinal_over_a_series_after_a_colon_takes_the_whole_item() -> None:
    turns = [(U, "想给爸妈买保险，有哪些类型推荐"), (A, "主要有三类：防癌险、百万医疗险和意外险，老人优先考虑意外险。")]
    assert _rewrite(turns, "第一种多大岁数还能买").startswith("防癌险")


@pytest.mark.parametrize("turns, query, want, not_want", [
    ([(U, "赵州桥是谁设计的"), (A, "赵州桥由隋朝工匠李春主持设计建造，是现存最早的敞肩石拱桥。")], "他还造过别的桥吗",
     "李春", "赵州桥还"),
    ([(U, "Who designed the Forth Bridge?"), (A, "The Forth Bridge was designed by John Fowler and Benjamin Baker.")],
     "what else did he build", "John Fowler", "Forth Bridge"),
])
def test_he_after_a_who_question_is_the_person_the_answer_named(turns, query, want, not_want) -> None:
    out = _rewrite(turns, query)
    assert want in out and not_want not in out


@pytest.mark.parametrize("text, want", [
    ("real world range of the kia ev6", ("kia ev6", True)),
    ("the galaxy s23 camera", ("galaxy s23", True)),  # the name ends at its model part
    ("is python 3.12 faster", ("python 3.12", True)),
    ("top 10 places", ("top 10 places", False)),  # a rank, no model number
    ("remind me about insurance company 2", ("insurance company", False)),  # a plain number is no model number
])
def test_model_names_typed_in_lower_case_are_names(text, want) -> None:
    m = next(m for m in mentions(text, "en") if m.text.startswith(want[0].split()[0]))
    assert (m.text, m.proper) == want


def test_a_comparison_typed_in_lower_case_keeps_both_models() -> None:
    turns = [(U, "real world range of the kia ev6"), (A, "Owners report about 250-310 miles.")]
    out = _rewrite(turns, "vs the ioniq 5?")
    assert "kia ev6" in out and "ioniq 5" in out


@pytest.mark.parametrize("text, want", [
    ("Expect roughly -3 to -6°C, and it is polar night.", ["polar night"]),  # a verb with an adverb after it; °C a unit
    ("Paris usually has mild winters.", ["Paris", "mild winters"]),  # ... not a name before any -ly word
    ("The delay is 12 minutes.", ["delay"]),  # a number and a time unit: a measurement
    ("The bus is about 12 minutes late.", ["bus"]),  # ... with the word it measures after it
    ("plan a 3 day trip to kyoto", ["plan", "3 day trip"]),  # ... but a modifier of the noun after it
    ("It is maybe 30cm long.", ["long"]),
    ("Is the price increase a surprise?", ["price increase", "surprise"]),  # a compound after "is the"
])
def test_english_answers_yield_no_verbs_or_measurements_as_nouns(text, want) -> None:
    assert [m.text for m in mentions(text, "en")] == want


def test_a_unit_before_a_noun_leaves_the_noun() -> None:
    assert [m.text for m in mentions("the 12gb card", "en")] == ["card"]
    assert [m.text for m in mentions("a 2-year-old border collie", "en")] == ["2-year-old border collie"]


def test_a_name_and_its_thing_joined_by_a_demonstrative_are_one_mention() -> None:
    # "招商银行那张信用卡": the card of that bank; the whole comes before its parts
    assert mentions("我想把招商银行那张信用卡注销掉", "zh")[0].text == "招商银行信用卡"


def test_a_long_chinese_answer_is_no_short_answer_naming_the_subject() -> None:
    # the answer's phrase jieba tags as a name (阳光充足/nr) does not replace what the user asked about
    turns = [(U, "多肉冬天怎么养"), (A, "冬天要控水，放在阳光充足的地方，气温低于 5 度就搬进室内。")]
    assert find_focus([Message(r, c) for r, c in turns]).entity.text == "多肉"


@pytest.mark.parametrize("text, want", [
    ("does the galaxy s23 camera work in low light", ["galaxy s23", "camera", "low light"]),
    ("the q3 earnings report", ["q3", "earnings report"]),  # a short model name is kept
])
def test_a_lower_case_model_name_leaves_the_rest_of_the_phrase_whole(text, want) -> None:
    assert [m.text for m in mentions(text, "en")] == want


def test_reactions_asked_as_questions_are_no_fragments() -> None:
    from convsearch.lang.en.markers import en_ellipsis

    assert not any(en_ellipsis(q) for q in ("Sorry?", "Hmm?", "Pardon?", "Seriously?", "Details?"))


def test_a_series_item_drops_a_closing_particle() -> None:
    from convsearch.resolve.ordinal import lists_in

    assert lists_in("推荐去故宫、长城和颐和园呢", "zh")[0][0] == ("故宫", "长城", "颐和园")


def test_a_place_and_that_hospital_are_no_name_of_a_hospital() -> None:
    assert "北京医院" not in [m.text for m in mentions("北京那家医院挂号难吗", "zh")]


def test_the_who_answer_prefers_a_person_name_to_a_place() -> None:
    turns = [(U, "故宫是谁设计的"), (A, "故宫位于北京，由明代工匠蒯祥主持设计。")]
    assert "蒯祥" in find_focus([Message(r, c) for r, c in turns]).person.text


@pytest.mark.parametrize("turns, query, want", [
    ([(U, "how do i renew my us passport by mail"), (A, "Use Form DS-82 and mail it with your old passport.")],
     "how long does it take", "how long does renewing my us passport by mail take"),
    ([(U, "How can I get a library card in Toronto?"), (A, "Bring ID with your address to any branch.")],
     "does it cost anything?", "does getting a library card in Toronto cost anything?"),
])
def test_it_after_a_how_to_question_is_the_activity(turns, query, want) -> None:
    assert _rewrite(turns, query) == want


def test_it_after_a_how_to_question_stays_the_thing_when_no_cost_is_asked() -> None:
    turns = [(U, "how do i renew my us passport by mail"), (A, "Use Form DS-82.")]
    assert "renewing" not in _rewrite(turns, "is it valid for travel to Canada?")


def test_another_form_of_a_word_of_the_history_is_faithful() -> None:
    from convsearch.resolve.guard import unfaithful_words

    h = [Message(U, "how do i renew my passport")]
    assert unfaithful_words("how long does renewing my passport take", "how long does it take", h) == set()
    assert unfaithful_words("how long does replacing my passport take", "how long does it take", h) == {"replacing"}


def test_people_named_by_role_are_no_proper_names() -> None:
    # jieba tags 师傅 and 宝宝 as names; a question about "the worker" names no entity of its own
    assert not any(m.proper for m in mentions("自己弄还是找师傅", "zh"))
    assert not any(m.proper for m in mentions("宝宝老流口水正常吗", "zh"))


@pytest.mark.parametrize("turns, query, want", [
    ([(U, "余额宝现在七日年化多少"), (A, "大概在 1.2% 左右。")], "微信零钱通是不是高点",
     "余额宝和微信零钱通现在七日年化哪个高"),
    ([(U, "京东上 iPhone 16 多少钱"), (A, "5999 元起。")], "天猫会不会便宜点", "京东和天猫上 iPhone 16 哪个便宜"),
])
def test_a_chinese_comparative_without_bi_compares_with_the_frames_entity(turns, query, want) -> None:
    assert _rewrite(turns, query) == want


@pytest.mark.parametrize("query", ["他们俩谁更好", "那哪个层次高一点", "零钱通好吗"])
def test_no_comparison_without_a_compared_name_or_a_comparative(query) -> None:
    from convsearch.resolve.language import complete_fragment, language

    done = complete_fragment(query, "余额宝现在七日年化多少", language("zh"))
    assert done is None or "哪个" not in done[0]


def test_a_condition_narrows_a_look_up_request() -> None:
    turns = [(U, "查一下明天南京南到杭州东的高铁"), (A, "明天上午有 G7601 和 G7355。")]
    out = _rewrite(turns, "有没有下午的")
    assert all(w in out for w in ("明天", "南京南", "杭州东", "下午"))


def test_zh_verb_tagged_noun_before_a_predicate_joins_its_phrase():
    from convsearch.resolve.entities import mentions
    # jieba tags 签证 'v': after 旅游 and before 一般要 it is the noun of the phrase
    assert "旅游签证" in [m.text for m in mentions("去日本的单次旅游签证一般要准备哪些材料", "zh")]
    # a person's verb is no noun of the person ("蔡徐坤学习…"), nor a verb with its object
    assert all("学习" not in m.text for m in mentions("蔡徐坤学习打篮球", "zh"))


def test_zh_number_with_a_lower_case_unit_is_a_size_not_a_name():
    from convsearch.resolve.entities import mentions
    # "28c" (a tyre width), "16gb": no model name, and no brand glued onto them (换28c)
    assert [m.text for m in mentions("能直接换28c的吗 会不会蹭车架", "zh")] == ["车架"]
    assert "RTX 4090" in [m.text for m in mentions("RTX 4090 显存多大", "zh")]  # a model name stays one


def test_zh_review_sizes_and_person_subjects():
    from convsearch.resolve.entities import mentions
    from convsearch.resolve.gate import needs_rewrite
    assert "4610mAh" not in " ".join(m.text for m in mentions("小米14电池4610mAh续航怎么样", "zh"))
    assert all("5g" not in m.text or m.proper for m in mentions("支持5g吗", "zh"))  # 5G the network stays a name
    assert all(m.text != "孩子学习" for m in mentions("孩子学习一般要多久", "zh"))  # a person and what they do
    assert needs_rewrite([], "hello there", lang="EN").kind.value == "no_context"  # an unknown language code


@pytest.mark.parametrize("turns, query, want", [
    # the focus is a thing (长牙, which the tagger even takes for a place): 他 is the person the user named
    ([(U, "我家宝宝 8 个月了，最近开始长牙"), (A, "8 个月长牙很常见，可以准备牙胶。")],
     "他老流口水正常吗", "宝宝老流口水正常吗"),
    ([(U, "我老公最近总失眠"), (A, "可以先调整作息，睡前别喝咖啡。")], "他需要去医院看看吗", "老公需要去医院看看吗"),
])
def test_he_or_she_stands_for_the_person_the_user_named_not_a_thing(turns, query, want) -> None:
    assert _rewrite(turns, query) == want


def test_he_or_she_keeps_a_person_focus() -> None:
    # the focus is a person (周杰伦), so 他 is he, not the other person the user named (老公)
    turns = [(U, "我老公是周杰伦的粉丝，周杰伦的新专辑什么时候出"), (A, "官方还没公布日期。")]
    assert _rewrite(turns, "他的演唱会门票多少钱").startswith("周杰伦")


def test_a_value_given_in_code_is_no_name_a_pronoun_could_take() -> None:
    from convsearch.lang.en.mentions import mentions as en_mentions
    from convsearch.resolve.rules import RuleRewriter
    from convsearch.types import Message

    answer = "Call subprocess.run(args, capture_output=True, text=True) and read .stdout."
    assert "True" not in [m.text for m in en_mentions(answer)]
    r = RuleRewriter().rewrite([Message("user", "How do I run an external command and capture what it prints?"),
                                Message("assistant", answer)], "How do I stop it if it takes too long?")
    assert "True" not in r.rewritten and "external command" in r.rewritten, r


@pytest.mark.parametrize("text, want", [
    ("How is the print server backed up?", ["print server"]),  # the participle and its particle close the clause
    ("Where are the build logs stored?", ["build logs"]),
    ("Is the mail queue cleared by cron?", ["mail queue", "cron"]),
    ("the cluster restored from a snapshot", ["cluster", "snapshot"]),
    ("What is the network speed?", ["network speed"]),  # "-eed" is a noun's ending here, not a participle's
    ("Which shared folder?", ["folder"]),  # a participle before its noun was never a run's start
])
def test_a_past_participle_closing_the_clause_is_not_part_of_the_noun(text, want) -> None:
    assert [m.text for m in mentions(text, "en")] == want


def test_the_pronoun_after_a_passive_question_takes_the_noun_alone() -> None:
    got = _rewrite([(U, "How is the print server backed up?"), (A, "A nightly job copies its spool to the NAS.")],
                   "How long are the copies kept?")
    assert "backed" not in got
