"""The pure parts of `citewall demo` (users, example questions), and the benchmarks'
percentile rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.cli.demo import REPO_KB, demo_tokens, with_demo_examples
from citewall.config import load_settings
from citewall.errors import ConfigError
from citewall_evals.bench.stats import percentile

from .conftest import ApiEnv


def test_demo_users_are_created_once_and_get_fresh_working_tokens(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    first = demo_tokens(env.runtime.session_factory)
    second = demo_tokens(env.runtime.session_factory)
    assert set(first) == {"demo-member", "demo-enterprise", "demo-admin"}
    assert all(first[k] != second[k] for k in first)  # fresh each run
    for tokens in (first, second):
        me = env.client.get(
            "/api/v1/me", headers={"Authorization": f"Bearer {tokens['demo-admin']}"}
        )
        assert me.json() == {
            "name": "demo-admin",
            "role": "admin",
            "session": False,
            "regenerate_varies": False,
            "handoff": False,
        }
        me = env.client.get(
            "/api/v1/me", headers={"Authorization": f"Bearer {tokens['demo-member']}"}
        )
        assert me.json() == {
            "name": "demo-member",
            "role": "member",
            "session": False,
            "regenerate_varies": False,
            "handoff": False,
        }


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200), st.floats(0, 1))
def test_percentile_is_bounded_and_monotone(values: list[float], q: float) -> None:
    p = percentile(values, q)
    assert min(values) <= p <= max(values)
    assert percentile(values, 0.0) == min(values) and percentile(values, 1.0) == max(values)
    assert percentile(values, min(1.0, q + 0.1)) >= p - 1e-9


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 0.5))


def test_the_demo_serves_the_example_questions_beside_its_kb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEWALL_EXAMPLE_QUESTIONS", raising=False)
    settings = load_settings(data_dir=tmp_path)
    shipped = json.loads((REPO_KB / "examples.json").read_text(encoding="utf-8"))
    for kb in (REPO_KB, REPO_KB / "cards.jsonl"):  # the folder, or a file in it
        assert with_demo_examples(settings, kb).example_questions == shipped
    assert settings.example_questions == []  # the settings given are left alone
    assert with_demo_examples(settings, tmp_path).example_questions == []  # no file there
    # CITEWALL_EXAMPLE_QUESTIONS wins, even when it asks for none.
    monkeypatch.setenv("CITEWALL_EXAMPLE_QUESTIONS", '["  Where is my   parcel? "]')
    chosen = load_settings(data_dir=tmp_path)
    assert with_demo_examples(chosen, REPO_KB).example_questions == ["Where is my parcel?"]
    monkeypatch.setenv("CITEWALL_EXAMPLE_QUESTIONS", "[]")
    assert with_demo_examples(load_settings(data_dir=tmp_path), REPO_KB).example_questions == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("not json", "CITEWALL_EXAMPLE_QUESTIONS is not valid JSON"),
        ('["ok", ""]', "CITEWALL_EXAMPLE_QUESTIONS: Value error, each question has 1 to 200"),
        (json.dumps(["x" * 201]), "1 to 200 characters, got 201"),
        (json.dumps(["q"] * 13), "at most 12 questions, got 13"),
        ('"a string"', "CITEWALL_EXAMPLE_QUESTIONS"),
    ],
)
def test_bad_example_questions_are_config_errors_naming_the_variable(
    value: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWALL_EXAMPLE_QUESTIONS", value)
    with pytest.raises(ConfigError, match="invalid configuration") as info:
        load_settings()
    assert message in str(info.value)


def test_a_bad_demo_examples_file_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEWALL_EXAMPLE_QUESTIONS", raising=False)
    settings = load_settings(data_dir=tmp_path)
    for text in ("{nope", '{"q": 1}', '["", "x"]'):
        (tmp_path / "examples.json").write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=r"examples\.json"):
            with_demo_examples(settings, tmp_path)
