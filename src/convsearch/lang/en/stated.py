"""How an English-speaking user states their machine, budget or child, and what each goes with
(``rewrite.stated``)."""

from __future__ import annotations

import re

from ..base import StatedForms

STATED = StatedForms(
    may_state=re.compile(r"\b(?:i(?:'m| am)?|my|budget|old|allergic)\b", re.IGNORECASE),
    own=re.compile(r"\b(?:i(?:'m| am)\s+(?:on|using)|i\s+(?:use|have|run)|on\s+my|my\s+\w+\s+(?:is|runs))"
                   r"\s+(?:an?\s+)?$", re.IGNORECASE),
    budget=re.compile(r"\bbudget\b(?:\s+(?:is|of))?(?:\s+(?:about|around|roughly|up to))?\s+(\$\s?\d[\d,.]*k?)",
                      re.IGNORECASE),
    age=re.compile(r"\b(\d{1,2})[\s-](?:year|month)s?[\s-]old\b", re.IGNORECASE),
    age_text=lambda m: f"{m.group(1)} year old",
    allergy=re.compile(r"\ballergic\s+to\s+([a-z]+(?:\s+[a-z]+)?)", re.IGNORECASE),
    allergy_text=lambda m: m.group(0),  # (the words the user wrote)
    howto=re.compile(r"\b(?:how (?:do|can|to|should) (?:i |you )?|can i |is there a way to )(?:\w+ ){0,2}?"
                     r"(?:install|set up|setup|download|uninstall|update|upgrade|open|turn|enable|disable|"
                     r"delete|remove|restore|take|record|convert|export|import|back up|backup|connect|"
                     r"configure|clear|reset|sync|log|run|use|fix|change|find|get)\b", re.IGNORECASE),
    buy=re.compile(r"\b(?:recommend|suggest|any|which|best|buy|get|worth|options?|alternatives?|where)\b",
                   re.IGNORECASE),
    for_person=re.compile(r"\b(?:eat|drink|food|snacks?|dose|dosage|take|safe|recommend|suggest|best|"
                          r"good for|toys?|buy|learn|vaccines?)\b", re.IGNORECASE),
)
