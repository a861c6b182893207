"""Property tests for ``url_problem``: what it accepts is a plain, credential-free http(s) URL."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from hypothesis import example, given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.kb.urls import url_problem

_ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",))
_PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        "javascript:",
        "//",
        "@",
        ":",
        "\\",
        " ",
        "\t",
        "\n",
        "\x00",
        "\u200b",
        "user:pw@",
        "example.com",
        "/path",
        "?q=1",
        "#f",
        ":80",
        "[::1]",
        "%20",
    ]
)
_URLS = st.one_of(
    st.text(_ALPHABET, max_size=40),
    st.lists(st.one_of(_PIECES, st.text(_ALPHABET, max_size=6)), max_size=8).map("".join),
)


@settings(max_examples=examples(400), deadline=None)
@given(_URLS)
# Random text rarely builds an acceptable URL (2 of 400 generated ones are): these are
# accepted and must still satisfy every check below.
@example("https://help.example/a?b=c#d")
@example("HTTP://EXAMPLE.COM:8080/path")
@example("http://[::1]/x")
@example("https://xn--bcher-kva.example/%20")
def test_accepted_urls_are_http_with_host_and_nothing_unsafe(url: str) -> None:
    if url_problem(url) is not None:
        assert url_problem(url) is not None
        return
    parts = urlsplit(url)
    assert parts.scheme.lower() in {"http", "https"}
    assert url.lower().startswith(("http://", "https://"))
    assert parts.hostname
    assert parts.username is None and parts.password is None and "@" not in parts.netloc
    assert "\\" not in url
    assert not any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url)


@given(
    st.sampled_from(["http", "https"]),
    st.from_regex(r"[a-z][a-z0-9-]{0,20}\.[a-z]{2,6}", fullmatch=True),
)
def test_ordinary_urls_are_accepted(scheme: str, host: str) -> None:
    assert url_problem(f"{scheme}://{host}/docs/page?x=1#top") is None


def test_named_rejections() -> None:
    assert url_problem("javascript:alert(1)") == "scheme 'javascript' is not http or https"
    assert url_problem("https://a:b@example.com") == "contains credentials"
    assert url_problem("https://example.com/a b") == "contains whitespace"
    assert url_problem(None) == "not a string"
