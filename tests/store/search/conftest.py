"""The search tests written before stemming pin the index word for word: they run with
words kept as typed (ARTICLES_SEARCH_LANGUAGE = "", a setting a host may choose), and a
module that sets STEMMED = True runs with the default English stemmer."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _search_language(request, settings):
    if not getattr(request.module, "STEMMED", False):
        settings.ARTICLES_SEARCH_LANGUAGE = ""
