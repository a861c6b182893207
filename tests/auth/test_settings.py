"""The sign-in settings' checks: a JWKS is fetched over https, or over plain http from a
loopback host only, unless CITEWALL_JWKS_ALLOW_HTTP says otherwise; a bad value stops start-up
with a message naming the variable. Loopback hosts as a property."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.config import Settings, is_loopback_host, load_settings
from citewall.errors import ConfigError

MEMBER = {"member_jwt_issuer": "https://host.test", "member_jwt_audience": "citewall"}
PROXY = {
    "admin_proxy_issuer": "https://team.access.test",
    "admin_proxy_audience": "aud",
    "admin_proxy_email_domains": ["example.com"],
}
#: Each JWKS setting with the settings it needs beside it.
JWKS_SETTINGS = [
    ("member_jwks_url", "CITEWALL_MEMBER_JWKS_URL", MEMBER),
    ("admin_proxy_jwks_url", "CITEWALL_ADMIN_PROXY_JWKS_URL", PROXY),
]
IDS = [name for name, _, _ in JWKS_SETTINGS]


def with_jwks(field: str, url: str, needs: dict[str, object], **more: object) -> Settings:
    return load_settings(**{field: url}, **needs, **more)


@pytest.mark.parametrize(("field", "env", "needs"), JWKS_SETTINGS, ids=IDS)
@pytest.mark.parametrize(
    "url",
    [
        "http://keys.example.com/jwks.json",
        "http://10.0.0.7/jwks.json",
        "http://0.0.0.0:8080/jwks.json",
        "http://localhost.evil.test/jwks.json",
        "http://127.0.0.1.evil.test/jwks.json",
        "http://[::ffff:10.0.0.1]/jwks.json",
        "HTTP://keys.example.com/jwks.json",
    ],
)
def test_a_plain_http_jwks_off_loopback_stops_start_up(
    field: str, env: str, needs: dict[str, object], url: str
) -> None:
    with pytest.raises(ConfigError) as info:
        with_jwks(field, url, needs)
    message = str(info.value)
    assert env in message and "https" in message and "CITEWALL_JWKS_ALLOW_HTTP" in message
    assert "\n" not in message


@pytest.mark.parametrize(("field", "env", "needs"), JWKS_SETTINGS, ids=IDS)
@pytest.mark.parametrize(
    "url",
    [
        "https://keys.example.com/jwks.json",
        "http://127.0.0.1:8080/jwks.json",
        "http://127.201.3.4/jwks.json",
        "http://[::1]:9000/jwks.json",
        "http://localhost:8000/jwks.json",
        "http://LocalHost/jwks.json",
    ],
)
def test_https_or_a_loopback_host_is_accepted(
    field: str, env: str, needs: dict[str, object], url: str
) -> None:
    assert getattr(with_jwks(field, url, needs), field) == url


@pytest.mark.parametrize(("field", "env", "needs"), JWKS_SETTINGS, ids=IDS)
def test_jwks_allow_http_lets_plain_http_through(
    field: str, env: str, needs: dict[str, object]
) -> None:
    url = "http://keys.internal.test/jwks.json"
    assert getattr(with_jwks(field, url, needs, jwks_allow_http=True), field) == url


def test_jwks_allow_http_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEWALL_MEMBER_JWKS_URL", "http://keys.internal.test/jwks.json")
    with pytest.raises(ConfigError, match="CITEWALL_MEMBER_JWKS_URL"):
        load_settings(**MEMBER)
    monkeypatch.setenv("CITEWALL_JWKS_ALLOW_HTTP", "true")
    assert load_settings(**MEMBER).jwks_allow_http is True


@settings(max_examples=examples(200))
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_an_ipv4_host_is_loopback_exactly_in_127_slash_8(value: int) -> None:
    address = ipaddress.IPv4Address(value)
    assert is_loopback_host(str(address)) == (str(address).split(".")[0] == "127")


@settings(max_examples=examples(200))
@given(st.from_regex(r"[a-z0-9][a-z0-9.-]{0,40}", fullmatch=True))
def test_a_name_is_loopback_only_when_it_is_localhost(name: str) -> None:
    assert is_loopback_host(name) == (name == "localhost" or _is_loopback_ip(name))


def _is_loopback_ip(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


def test_ipv6_loopback_is_only_one_address() -> None:
    assert is_loopback_host("::1") and is_loopback_host("0:0:0:0:0:0:0:1")
    assert not is_loopback_host("::2") and not is_loopback_host("::ffff:127.0.0.1")
    assert not is_loopback_host("") and not is_loopback_host("localhost.")
