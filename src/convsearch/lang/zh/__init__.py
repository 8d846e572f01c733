"""Chinese: the language pack (``PACK``) and its rule steps (``steps``)."""
