"""convsearch inside LangChain (the real langchain-core and its langchain-tests standard suite), and a LangChain
retriever as a convsearch backend."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")
langchain_tests = pytest.importorskip("langchain_tests.integration_tests")
pytest.importorskip("pytest_asyncio", reason="the standard suite has an async test: pip install pytest-asyncio")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from convsearch import InMemoryBackend, SearchBackend, search_with_context  # noqa: E402
from convsearch.embed import HashEmbedder  # noqa: E402
from convsearch.errors import BackendError, InputError  # noqa: E402
from convsearch.history.memory_store import InMemoryStore  # noqa: E402
from convsearch.integrations.langchain import ConvSearchRetriever, LangChainBackend  # noqa: E402

pytestmark = pytest.mark.integration

ZH_HISTORY = [("human", "AnySearch 支持哪些检索方式？")]


class TestStandardRetrieverSuite(langchain_tests.RetrieversIntegrationTests):
    """LangChain's own standard retriever tests (k in the constructor and in invoke, sync and async)."""

    docs: tuple = ()

    @pytest.fixture(autouse=True)
    def _docs(self, corpus):
        type(self).docs = corpus

    @property
    def retriever_constructor(self) -> type[ConvSearchRetriever]:
        return ConvSearchRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"backend": InMemoryBackend(self.docs)}

    @property
    def retriever_query_example(self) -> str:
        return "AnySearch NovaDB 价格 pricing"


class TestStandardRetrieverSuiteFromSettings(langchain_tests.RetrieversIntegrationTests):
    """The same standard suite with empty constructor params: the retriever builds itself from its environment
    (CONVSEARCH_DATA_DIR holding a local index over the corpus), as LangChain's provider retrievers do."""

    @pytest.fixture(autouse=True)
    def _environment(self, bm25_index, monkeypatch):
        monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(bm25_index.path.parent))
        monkeypatch.setenv("CONVSEARCH_DENSE", "off")

    @property
    def retriever_constructor(self) -> type[ConvSearchRetriever]:
        return ConvSearchRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {}

    @property
    def retriever_query_example(self) -> str:
        return "AnySearch NovaDB 价格 pricing"


# The suite's one async test relies on asyncio_mode=auto, which an ini key would turn on for every test here;
# marking that very function (not an override: the suite checks that none of its tests is replaced) is enough.
pytest.mark.asyncio(langchain_tests.RetrieversIntegrationTests.test_ainvoke_returns_documents)


def test_a_retriever_without_arguments_searches_the_configured_index_and_closes_it(bm25_index, monkeypatch):
    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(bm25_index.path.parent))
    monkeypatch.setenv("CONVSEARCH_DENSE", "off")
    r = ConvSearchRetriever(k=2)
    docs = r.invoke("价格呢？", config={"configurable": {"chat_history": ZH_HISTORY}})
    assert docs and docs[0].metadata["standalone_query"] == "AnySearch 的价格"
    r.close()
    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(bm25_index.path.parent / "nowhere"))
    with pytest.raises(Exception, match="no index"):  # the environment is read: an empty data dir has no index
        ConvSearchRetriever(k=2).invoke("AnySearch pricing")


@pytest.fixture
def retriever(corpus):
    return ConvSearchRetriever(backend=InMemoryBackend(corpus), k=3)


def test_history_from_config_zh(retriever):
    docs = retriever.invoke("价格呢？", config={"configurable": {"chat_history": ZH_HISTORY}})
    assert docs and isinstance(docs[0], LCDocument)
    md = docs[0].metadata
    assert docs[0].id == "zh-any-price" and md["citation"] == 1
    assert md["standalone_query"] == "AnySearch 的价格" and md["original_query"] == "价格呢？"
    assert "ellipsis" in md["rewrite_reason"]
    assert md["source"] == "https://www.anysearch.example/pricing" and md["title"] == "AnySearch 价格"
    assert md["date"] == "2024-06-01"
    assert [d.metadata["citation"] for d in docs] == list(range(1, len(docs) + 1))


def test_history_as_langchain_messages_en(retriever):
    history = [HumanMessage("Who founded SpaceX?"), AIMessage("SpaceX was founded by Elon Musk in 2002.")]
    docs = retriever.invoke("When did it first launch a rocket?", config={"configurable": {"chat_history": history}})
    assert docs[0].id == "en-spacex-launch"
    assert "SpaceX" in docs[0].metadata["standalone_query"]


def test_no_history_is_searched_as_typed(retriever):
    docs = retriever.invoke("NovaDB 价格")
    assert docs[0].id == "zh-nova-price"
    assert docs[0].metadata["standalone_query"] == "NovaDB 价格"
    assert docs[0].metadata["rewrite_method"] in ("none", "passthrough", "gate")
    assert len(retriever.invoke("价格呢？")) <= 3  # no context: nothing to lean on, still a search


def test_session_id_reads_and_records_the_stored_conversation(corpus):
    r = ConvSearchRetriever(backend=InMemoryBackend(corpus), store=InMemoryStore(), session_id="s-1", k=3)
    first = r.invoke("AnySearch 支持哪些检索方式？")
    assert first[0].id == "zh-any-search"
    follow = r.invoke("价格呢？")
    assert follow[0].metadata["standalone_query"] == "AnySearch 的价格"
    other = r.invoke("价格呢？", config={"configurable": {"session_id": "s-2"}})  # a fresh session: no context
    assert other == [] or other[0].metadata["standalone_query"] == "价格呢？"


def test_session_id_without_a_store_is_one_clear_error(retriever):
    with pytest.raises(InputError, match="needs a history store"):
        retriever.invoke("价格呢？", config={"configurable": {"session_id": "s-1"}})


def test_async_matches_sync(retriever):
    cfg = {"configurable": {"chat_history": ZH_HISTORY}}
    sync = retriever.invoke("价格呢？", config=cfg)
    got = asyncio.run(retriever.ainvoke("价格呢？", config=cfg))
    assert [d.id for d in got] == [d.id for d in sync]
    assert len(asyncio.run(retriever.ainvoke("AnySearch NovaDB 价格 pricing", k=1))) == 1


class _HashEmbeddings(Embeddings):
    """Bag-of-words hashing (no model) as LangChain Embeddings, so the vector store below is real but offline."""

    def __init__(self) -> None:
        self._e = HashEmbedder(dim=256)

    def embed_documents(self, texts):
        return [v.tolist() for v in self._e.embed_passages(list(texts))]

    def embed_query(self, text):
        return self._e.embed_query(text).tolist()


@pytest.fixture
def vector_retriever(corpus):
    store = InMemoryVectorStore(embedding=_HashEmbeddings())
    store.add_documents([LCDocument(page_content=d.text, id=d.id, metadata={"title": d.title, "source": d.url,
                                                                            "date": d.date}) for d in corpus])
    return store.as_retriever(search_kwargs={"k": 6})


def test_langchain_retriever_as_a_backend(vector_retriever):
    b = LangChainBackend(vector_retriever)
    assert isinstance(b, SearchBackend)
    hits = b.search("番禺 露营", top_k=3)
    assert len(hits) == 3 and hits[0].id == "zh-camp-py"
    assert hits[0].url == "https://weather.example/panyu" and hits[0].title == "番禺最近三天露营天气"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.id for h in asyncio.run(b.asearch("番禺 露营", top_k=3))] == [h.id for h in hits]


def test_convsearch_rewrites_in_front_of_a_langchain_vector_store(vector_retriever):
    r = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}],
                            backend=LangChainBackend(vector_retriever), top_k=3)
    assert r.standalone_query == "AnySearch 的价格"
    assert r.hits[0].id == "zh-any-price"


def test_a_failing_langchain_retriever_is_a_backend_error():
    from langchain_core.retrievers import BaseRetriever

    class Broken(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            raise ConnectionError("vector store down")

    with pytest.raises(BackendError, match="vector store down"):
        LangChainBackend(Broken()).search("x")
