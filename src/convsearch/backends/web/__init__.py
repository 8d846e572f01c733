"""Web search backends: Tavily, Brave, SerpApi (Google, Bing), SearXNG — one module each, all behind the
SearchBackend contract, sharing ``_http`` (client, errors, the call loop with limiter / retries / breaker) and
``clean`` (snippets, dates, canonical URLs). ``pip install 'convsearch[web]'`` brings httpx.
"""
