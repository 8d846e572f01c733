"""Small zh + en stopword lists for the faithfulness metric (function words a rewrite may add freely).

Kept deliberately short: a word missing here only makes the metric stricter. The English list is the
core of the NLTK/Snowball list plus question words; the Chinese list is particles, pronouns and
copulas as rjieba segments them.
"""

from __future__ import annotations

EN = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's
hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the
their theirs them themselves then there there's these they they'd they'll they're they've this those
through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when
when's where where's which while who who's whom why why's with won't would wouldn't you you'd you'll
you're you've your yours yourself yourselves also just will shall may might must s t d ll m re ve
yes yeah ok okay please thanks thank tell know like get got one much many any anything something
""".split()
)

ZH = frozenset(
    """
的 了 是 在 和 与 及 或 也 都 就 还 又 而 但 并 吗 呢 吧 啊 呀 哦 嗯 哈 啦 嘛 么 呗 哎 诶 喔 噢
我 你 您 他 她 它 我们 你们 他们 她们 它们 咱 咱们 自己 大家 人家 这 那 这个 那个 这些 那些 这里 那里
这儿 那儿 这样 那样 这么 那么 什么 怎么 怎么样 为什么 哪 哪个 哪里 哪儿 谁 多少 几 个 些 一个 一下 一些
有 没 没有 不 不是 很 太 最 更 挺 好 会 能 要 想 去 来 说 做 让 把 被 给 对 从 到 向 跟 比 过 着 得 地
之 其 此 该 每 各 所 以 为 因为 所以 如果 虽然 但是 然后 还是 就是 可以 已经 知道 觉得
""".split()
)


def is_stopword(word: str) -> bool:
    return word in EN or word in ZH
