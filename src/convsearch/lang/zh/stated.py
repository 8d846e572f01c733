"""How a Chinese user states their machine, budget or child, and what each goes with (``rewrite.stated``)."""

from __future__ import annotations

import re

from ..base import StatedForms

_KIN = r"(?:孩子|宝宝|小孩|儿子|女儿|娃|闺女|宝贝)"
_AGE = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})\s*(?:岁半?|个月)"

STATED = StatedForms(
    may_state=re.compile(r"我|预算|岁|个月|过敏"),
    own=re.compile(r"(?:我|我们)(?:现在|平时)?(?:用的是|用的|在用|用|的(?:电脑|手机|系统)?是)\s*$"),
    budget=re.compile(r"预算(?:是|大概|大约|在)?\s*"
                      r"([一二两三四五六七八九十\d][\d,.]*\s*(?:千|万)?\s*(?:元|块)?(?:左右|以内|以下)?)"),
    age=re.compile(rf"{_KIN}\s*(?:今年|才|刚|已经|快)?\s*({_AGE})|({_AGE})\s*(?:大)?的?\s*{_KIN}"),
    age_text=lambda m: m.group(1) or m.group(2),
    allergy=re.compile(r"对\s*([\u4e00-\u9fff]{1,4}?)\s*过敏"),
    allergy_text=lambda m: f"{m.group(1)}过敏",
    howto=re.compile(r"(?:怎么|如何|怎样|能不能|可以|能否).{0,12}?(?:安装|装|设置|下载|卸载|更新|升级|打开|"
                     r"关闭|开启|删除|恢复|截|录|转|导出|导入|备份|连接|配置|清理|重置|同步|登录|运行|使用|用)"),
    buy=re.compile(r"推荐|有没有|哪款|哪个|买|入手|选"),
    for_person=re.compile(r"吃|喝|药|剂量|推荐|适合|能不能|可以|买|玩|学|打疫苗"),
)
