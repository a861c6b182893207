"""Fixtures for the generation tests: the demo KB cards the project ships."""

from __future__ import annotations

import pytest

from citewall.kb.card import Card

from .demo_context import demo_cards


@pytest.fixture(scope="session")
def cards() -> dict[str, Card]:
    return demo_cards()
