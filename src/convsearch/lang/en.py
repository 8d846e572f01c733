"""English frame-completion steps, in the order they are tried (``FRAME_STEPS``)."""

from __future__ import annotations

from ..rewrite import frame as f


def comparison(query: str, frame: str) -> tuple[str, str] | None:
    """"How does Y compare?" keeps the frame's entity and predicate and adds Y beside it.

    >>> comparison("How does Gemini 1.5 Pro compare?", "What's the context window of Claude 3.5 Sonnet?")[0]
    "What's the context window of Claude 3.5 Sonnet and Gemini 1.5 Pro?"
    """
    return f._comparison(query, frame, "en")


def typed_swap(query: str, frame: str) -> tuple[str, str] | None:
    """The fragment's phrase replaces the frame's span of its slot type; a preposition anchors the slot.

    >>> typed_swap("And in 2020?", "How many electric cars did Norway sell in 2023?")[0]
    'How many electric cars did Norway sell in 2020?'
    >>> typed_swap("And by TensorFlow 2.15?", "Is Python 3.12 supported by PyTorch 2.2?")[0]
    'Is Python 3.12 supported by TensorFlow 2.15?'
    """
    ef = f._en_fragment(query)
    return f._typed_swap(ef[2], frame, "en", ef[1]) if ef is not None else None


def attribute_shift(query: str, frame: str) -> tuple[str, str] | None:
    """An attribute replaces the frame's attribute and keeps its entity.

    >>> attribute_shift("And its price?", "What is the battery life of the Sony WH-1000XM5?")[0]
    'What is the price of the Sony WH-1000XM5?'
    """
    ef = f._en_fragment(query)
    return f._attribute_shift(ef[2], frame, "en") if ef is not None else None


def condition(query: str, frame: str) -> tuple[str, str] | None:
    """A condition is added to a request for recommendations.

    >>> condition("Any under $500?", "What are the best mirrorless cameras for beginners?")[0]
    'What are the best mirrorless cameras for beginners under $500?'
    """
    return f._condition(query, frame, "en")


FRAME_STEPS = (comparison, typed_swap, attribute_shift, condition)
