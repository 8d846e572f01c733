"""convsearch inside LangChain, LlamaIndex and Haystack, and any LangChain retriever as a convsearch backend.

Each module imports its framework lazily and says which extra to install when it is missing:

- ``convsearch.integrations.langchain``: ``ConvSearchRetriever`` (a LangChain ``BaseRetriever``, history-aware)
  and ``LangChainBackend`` (a LangChain retriever as a ``SearchBackend``) — ``pip install 'convsearch[langchain]'``
- ``convsearch.integrations.llamaindex``: ``ConvSearchRetriever`` (``NodeWithScore``s) — ``[llamaindex]``
- ``convsearch.integrations.haystack``: the ``ConvSearchRetriever`` component — ``[haystack]``

All three run one conversational turn through ``convsearch.integrations.core`` (gate → rewrite → variants →
search → fuse → dedup → rerank with the original query) and put the standalone query, the rewrite's reason and
each result's citation number into the framework's document metadata.
"""
