"""Infrastructure behind small protocols: rate limiting (``ratelimit``)."""
