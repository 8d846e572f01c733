"""English: the language pack (``PACK``), its markers (``markers``) and its rule steps (``steps``)."""
