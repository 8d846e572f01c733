"""Infrastructure behind small protocols: TTL caches (``cache``), rate limiting (``ratelimit``), deadlines
(``deadline``)."""
