"""Fixtures for the pipeline tests: a scripted OpenAI-compatible server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from citewall_evals.llm_server import ScriptedOpenAIServer


@pytest.fixture
def llm() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server
