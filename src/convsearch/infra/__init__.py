"""Infrastructure behind small protocols: rate limiting (``ratelimit``), deadlines (``deadline``)."""
