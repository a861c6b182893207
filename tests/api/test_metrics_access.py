"""``/metrics`` behind ``CITEWALL_METRICS_TOKEN``: a bearer token when set, open when unset."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from citewall.config import load_settings
from citewall.errors import ConfigError

from .conftest import ApiEnv, client_with

TOKEN = "metrics-0123456789abcdef"


def test_with_a_metrics_token_metrics_need_it(env_sqlite: ApiEnv) -> None:
    _, client = client_with(env_sqlite, metrics_token=SecretStr(TOKEN))
    refused = []
    attempts: tuple[dict[str, str | bytes], ...] = (
        {},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Bearer {TOKEN[:-1]}"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": TOKEN},
        {"Authorization": f"Bearer {env_sqlite.tokens['admin']}"},  # an API token is not it
        {"Authorization": "Bearer é".encode()},
    )
    for headers in attempts:
        r = client.get("/metrics", headers=headers)
        assert r.status_code == 401, (headers, r.status_code)
        assert r.headers["www-authenticate"] == "Bearer"
        assert "citewall_" not in r.text and TOKEN not in r.text
        refused.append(r.json())
    assert all(body == refused[0] for body in refused)  # missing or wrong: one answer
    assert "CITEWALL_METRICS_TOKEN" in refused[0]["detail"]
    ok = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and "citewall_http_request_duration_seconds" in ok.text
    assert ok.headers["content-type"].startswith("text/plain")


def test_without_a_metrics_token_metrics_stay_open(env_sqlite: ApiEnv) -> None:
    assert env_sqlite.runtime.settings.metrics_token is None
    r = env_sqlite.client.get("/metrics")
    assert r.status_code == 200 and "citewall_answers_total" in r.text


def test_the_metrics_token_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEWALL_METRICS_TOKEN", TOKEN)
    settings = load_settings()
    assert settings.metrics_token is not None
    assert settings.metrics_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings)
    monkeypatch.setenv("CITEWALL_METRICS_TOKEN", "")
    assert load_settings().metrics_token is None  # empty: unset
    monkeypatch.setenv("CITEWALL_METRICS_TOKEN", "short")
    with pytest.raises(ConfigError, match=r"CITEWALL_METRICS_TOKEN.*at least 16"):
        load_settings()
