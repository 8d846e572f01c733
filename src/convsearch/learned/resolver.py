"""The learned resolver at inference: one turn in, a small frozen ``Resolved`` out (issue 26, items 3 and 4).

``Resolver(path)`` reads a model file written by ``research.learned.export`` (the shipped one by default,
``convsearch/models/learned.json``) once, lazily, and keeps it per path for the process (``load_models``). Per turn
(history, question, topic, lang) it computes exactly the features training computes: ``features.view`` then
``features.featurize`` with the model's own IDF table, the columns taken by the model's stored feature ``names``
(the names list is the contract between ``train`` and inference: a model that names a feature this code does not
compute is refused at load time, with the names it lacks). It returns:

- ``gate``: the gate's probability that the turn needs a rewrite, and ``gate_threshold``; ``needed``, the gate's
  verdict by ``learned.policy.gate_verdict`` (English: ``gate >= gate_threshold``; Chinese: the rules' verdict unless
  the gate is sure, at the model file's ``zh_rules_margin``, 0.9). The gate and term models may be of any kind
  ``learned.alt_models.load_model`` reads (the shipped gate: boosted trees; the term selector: logistic);
- ``candidates``: every history candidate with its selection probability (``Scored``), most probable first, and
  whether it is ``selected`` (at or above the model's term threshold, not already in the question);
- ``rewrite`` and ``how`` (``How``): the question with the selected terms composed in (``learned.compose``:
  substitution for a pronoun or demonstrative, slot swap into the previous question's frame, insertion, appended as
  plain terms, or unchanged), and ``reason`` (one line for a trace);
- ``confidence`` in [0, 1]: how far the decisions that made this output are from their thresholds (below).

**Confidence.** A probability ``p`` against a threshold ``t`` has margin ``|p - t| / (1 - t)`` above it and
``|p - t| / t`` below it: 0 on the threshold, 1 at certainty (0 or 1). ``confidence`` is the smallest margin of the
decisions the output rests on: the gate's always (a Chinese turn the gate is not sure of: the rules' confidence);
when the gate says rewrite, also the selection's, the margin of the most probable candidate (is anything needed at
all) and of the runner-up (is it needed too). A turn left alone by the gate has the gate's margin alone. ``auto``
reads it to ask the LLM only on turns below a threshold chosen on the folds; the field names and meaning of
``Resolved`` are the stable API.

**Out of fold.** The shipped model file carries the model fitted on every training turn (``fold=None``); the 5 fold
models (model k never saw a dialog of fold k: ``learned.oof.fold_of``), each with its own IDF table, stay with the
training code (``research/learned/folds.json.gz``) and are attached by the evaluation only (``learned.oof.with_folds``,
``Resolver.use``). ``resolve(..., fold=k)`` scores with model k: the evaluation passes the fold of the record's
dialog so that a record of a training set is scored by a model that never saw it.

Runs on every turn of ``--rewriter learned`` and of ``auto`` when an LLM is configured (``learned.auto``): numpy
arithmetic over the loaded models, nothing of fitting (that is ``research/learned/``).

Example::

    r = Resolver().resolve([Message("user", "Who founded Tesla?"), Message("assistant", "Elon Musk and others.")],
                           "When did he leave?")
    r.gate, r.rewrite, r.how, r.confidence
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..lang import detect
from ..types import Message
from ..window import history_window
from .alt_models import Model, load_model
from .compose import How, compose_terms
from .features import CANDIDATE_NAMES, TURN_NAMES, IdfTable, TurnView, featurize, view
from .policy import ZH_MARGIN, gate_verdict, trained

MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "learned.json"


@dataclass(frozen=True, slots=True)
class Scored:
    """A history candidate with the term selector's probability that the standalone query needs it."""

    text: str
    prob: float
    selected: bool
    in_query: bool


@dataclass(frozen=True, slots=True)
class Resolved:
    """The learned resolver's answer on one turn (see the module docstring for ``confidence``)."""

    query: str
    rewrite: str
    how: How
    gate: float
    gate_threshold: float
    term_threshold: float
    candidates: tuple[Scored, ...]
    confidence: float
    reason: str
    fold: int | None = None  # the fold model that answered (None: the model fitted on every fold)
    verdict: bool | None = None  # the gate's verdict (``learned.policy.gate_verdict``); None: gate >= threshold

    @property
    def needed(self) -> bool:
        """The gate's verdict: ``learned.policy.gate_verdict`` (Chinese: the rules' unless the gate is sure)."""
        return self.gate >= self.gate_threshold if self.verdict is None else self.verdict

    @property
    def selected(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.candidates if c.selected)

    @property
    def changed(self) -> bool:
        return self.rewrite != self.query


def margin(p: float, t: float) -> float:
    """How far probability ``p`` is from threshold ``t``, scaled to [0, 1] (1 = certain, 0 = on the threshold)."""
    if p >= t:
        return min(1.0, (p - t) / (1.0 - t)) if t < 1.0 else 0.0
    return min(1.0, (t - p) / t) if t > 0.0 else 0.0


@dataclass(frozen=True)
class Fitted:
    """One fitted pair (gate, term selector) with its thresholds and the IDF table it was fitted with; the columns
    of the features this code computes that the models read (by name)."""

    gate: Model  # any kind ``learned.alt_models.load_model`` reads (logistic, gbdt, mlp)
    term: Model
    gate_threshold: float
    term_threshold: float
    idf: IdfTable
    gate_cols: np.ndarray
    term_cols: np.ndarray
    zh_margin: float = ZH_MARGIN  # Chinese: the rules' verdict unless the gate is this sure (``learned.policy``)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fitted:
        try:
            gate, term = load_model(d["gate"]), load_model(d["term"])
        except ValueError as e:
            raise ValueError(f"{e} in the model file") from None
        return cls(gate, term, float(d.get("gate_threshold", 0.5)), float(d["term_threshold"]),
                   IdfTable.from_dict(d["idf"]), columns(gate.names, TURN_NAMES), columns(term.names, CANDIDATE_NAMES),
                   float(d.get("zh_rules_margin", ZH_MARGIN)))


def columns(model_names: Sequence[str], computed: Sequence[str]) -> np.ndarray:
    """The index in ``computed`` of each name the model reads, in the model's order (the names are the contract);
    a name this code does not compute is an error naming it."""
    where = {n: i for i, n in enumerate(computed)}
    missing = [n for n in model_names if n not in where]
    if missing:
        raise ValueError(f"the model reads features this code does not compute: {', '.join(missing)}")
    return np.array([where[n] for n in model_names], dtype=int)


Scores = tuple[TurnView, float, np.ndarray, Fitted]  # ``Resolver.score``: the turn read, gate, selection, model


@dataclass(frozen=True)
class Models:
    """What a model file holds: the model fitted on every training turn, the fold models (none in the shipped file:
    ``learned.oof.with_folds`` attaches them for an evaluation), the file's metadata and its sha256."""

    path: Path
    full: Fitted
    folds: tuple[Fitted, ...]
    window: int
    meta: Mapping[str, Any]
    ask: Mapping[str, Any] | None = None  # the ``ask`` section, raw (``learned.ask.ask_models`` parses it)
    sha256: str = ""  # of the file's bytes (a fold-models file names the model file it belongs to by it)

    def pick(self, fold: int | None) -> Fitted:
        """Fold model ``fold`` (never saw that fold's dialogs), or the full model for None."""
        if fold is None:
            return self.full
        if not 0 <= fold < len(self.folds):
            raise ValueError(f"{len(self.folds)} fold models loaded, not fold {fold} (an evaluation attaches them: "
                             "learned.oof.with_folds)")
        return self.folds[fold]


_LOADED: dict[Path, Models] = {}
_LOCK = threading.Lock()
LOADS = [0]  # how many times a model file was read (the tests hold that it is once per path)


def load_models(path: Path | str | None = None) -> Models:
    """The models of ``path`` (default ``MODEL_PATH``), read once per path for the process."""
    p = Path(path or MODEL_PATH).resolve()
    got = _LOADED.get(p)
    if got is not None:
        return got
    with _LOCK:
        got = _LOADED.get(p)
        if got is None:
            raw = p.read_bytes()
            d = json.loads(raw.decode("utf-8"))
            LOADS[0] += 1
            folds = tuple(Fitted.from_dict(f) for f in d.get("folds", ()))
            meta = {k: v for k, v in d.items() if k not in ("full", "folds", "ask")}
            got = _LOADED[p] = Models(p, Fitted.from_dict(d["full"]), folds, int(d.get("window", 8)), meta,
                                      d.get("ask"), hashlib.sha256(raw).hexdigest())
    return got


class Resolver:
    """The learned gate and term selector on one turn, composed into a rewrite (``resolve``). Cheap to build: the
    model file is read on first use and shared per path."""

    def __init__(self, path: Path | str | None = None, *, max_terms: int = 2, second_min: float = 0.5) -> None:
        self.path = path
        self.max_terms = max_terms
        self.second_min = second_min  # a term after the first goes in only at this probability or above
        self._models: Models | None = None  # set by ``use``: the file's models with fold models attached

    @property
    def models(self) -> Models:
        return self._models or load_models(self.path)

    def use(self, models: Models | None) -> None:
        """Answer with ``models`` (the file's, with its fold models attached: ``learned.oof.with_folds``) from now
        on; None: the file's own again."""
        self._models = models

    def score(self, history: Sequence[Message], question: str, topic: str | None = None, lang: str | None = None,
              *, fold: int | None = None) -> Scores:
        """(the turn as read, gate probability, one selection probability per candidate, the model used)."""
        ms = self.models
        f = ms.pick(fold)
        v = view(history_window(history, ms.window), question, topic, lang)
        g, c = featurize(v, f.idf)
        gate = float(f.gate.proba(g[f.gate_cols][None, :])[0])
        probs = f.term.proba(c[:, f.term_cols]) if len(c) else np.zeros(0)
        return v, gate, probs, f

    def resolve(self, history: Sequence[Message], question: str, topic: str | None = None, lang: str | None = None,
                *, fold: int | None = None, compose: bool = True, needed: bool | None = None,
                scored: Scores | None = None) -> Resolved:
        """The turn's ``Resolved`` (``fold``: answer with that fold's model; ``compose=False``: scores only, the
        rewrite left as the question; ``needed``: a gate verdict decided elsewhere, the rules' in Chinese, used
        instead of the learned gate's to decide whether to compose; ``confidence`` then leaves the gate out;
        ``scored``: what ``score`` gave for this turn and fold, when the caller has it already)."""
        lang = lang or detect(question).code
        v, gate, probs, f = scored or self.score(history, question, topic, lang, fold=fold)
        order = np.argsort(-probs, kind="stable")
        cands = tuple(Scored(v.candidates[i].text, float(probs[i]),
                             bool(probs[i] >= f.term_threshold and not v.candidates[i].in_query),
                             v.candidates[i].in_query) for i in order)
        # the learned gate's verdict (learned.policy): Chinese, the rules' unless the gate is sure
        verdict = gate_verdict(gate, v.decision.needed, lang, f.zh_margin)
        rules_say = trained(lang).rules_in_doubt and 1.0 - f.zh_margin < gate < f.zh_margin
        if needed is None:
            compose_it = verdict
            conf = v.decision.confidence if rules_say else margin(gate, f.gate_threshold)
            gate_why = (f"rules' verdict, learned gate {gate:.2f} not sure" if rules_say
                        else f"learned gate {gate:.2f} {'>=' if verdict else '<'} {f.gate_threshold:.2f}")
        else:
            compose_it, conf = needed, 1.0
            gate_why = f"gate decided elsewhere; learned gate {gate:.2f}"
        if not compose_it:
            return Resolved(question, question, How.UNCHANGED, gate, f.gate_threshold, f.term_threshold, cands, conf,
                            f"{gate_why}: standalone", fold, verdict)
        open_ = [c for c in cands if not c.in_query]
        if open_:
            conf = min(conf, margin(open_[0].prob, f.term_threshold))
            if len(open_) > 1:
                conf = min(conf, margin(open_[1].prob, f.term_threshold))
        picks = [i for i in order if probs[i] >= f.term_threshold and not v.candidates[i].in_query]
        picks = picks[:1] + [i for i in picks[1:] if probs[i] >= self.second_min]
        chosen = [v.candidates[i] for i in picks[: self.max_terms]]
        if not chosen:
            return Resolved(question, question, How.UNCHANGED, gate, f.gate_threshold, f.term_threshold, cands, conf,
                            f"{gate_why}: rewrite, but no candidate reaches {f.term_threshold:.2f}", fold, verdict)
        if not compose:
            return Resolved(question, question, How.UNCHANGED, gate, f.gate_threshold, f.term_threshold, cands, conf,
                            "scores only", fold, verdict)
        out, how, why = compose_terms(v.analysis, question, chosen)
        return Resolved(question, out, how, gate, f.gate_threshold, f.term_threshold, cands, conf,
                        f"{gate_why}; {why}", fold, verdict)


__all__ = ["MODEL_PATH", "How", "Models", "Resolved", "Resolver", "Scored", "Scores", "load_models", "margin"]
