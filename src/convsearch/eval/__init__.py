"""Evaluation harness: dataset loaders, rewrite and retrieval metrics, the regression runner.

Example::

    from convsearch.eval import evaluate_rewrite, load_records
    from convsearch.rewrite import get_rewriter

    report = evaluate_rewrite(load_records("../shared/data/conv-rewrite/canard/dev.jsonl"), get_rewriter("rules"))
"""

from __future__ import annotations

from .data import EvalRecord, detokenize, load_records, topic_text
from .retrieval_eval import evaluate_retrieval
from .rewrite_eval import evaluate_rewrite

__all__ = ["EvalRecord", "detokenize", "evaluate_retrieval", "evaluate_rewrite", "load_records", "topic_text"]
