"""The bounded body decoder: exact for gzip and deflate (zlib-wrapped or raw) however the body
is chunked, refused one byte past the cap, and refusing every other coding."""

from __future__ import annotations

import gzip
import itertools
import zlib

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.ingest.crawl.decoding import BodyDecoder, BodyRefused

ENCODERS = {
    "identity": ("identity", lambda data: data),
    "gzip": ("gzip", gzip.compress),
    "zlib": ("deflate", zlib.compress),
    "raw": ("deflate", lambda data: _raw_deflate(data)),
}


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _decode(coding: str, body: bytes, cuts: list[int], max_bytes: int) -> bytes:
    decoder = BodyDecoder(coding, max_bytes=max_bytes)
    bounds = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    out = b"".join(decoder.feed(body[a:b]) for a, b in itertools.pairwise(bounds))
    decoder.finish()
    return out


@hsettings(max_examples=examples(300))
@given(
    st.binary(max_size=3000) | st.integers(0, 20_000).map(lambda n: b"ab" * n),
    st.sampled_from(sorted(ENCODERS)),
    st.lists(st.integers(0, 50_000), max_size=6),
    st.integers(1, 30_000),
)
def test_decodes_exactly_or_refuses_past_the_cap(
    data: bytes, encoder: str, cuts: list[int], max_bytes: int
) -> None:
    coding, encode = ENCODERS[encoder]
    body = encode(data)
    if len(data) <= max_bytes and len(body) <= max_bytes:
        assert _decode(coding, body, cuts, max_bytes) == data
    else:
        with pytest.raises(BodyRefused, match=f"larger than {max_bytes} bytes"):
            _decode(coding, body, cuts, max_bytes)


def test_a_bomb_is_stopped_at_the_cap_without_inflating_it() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    decoder = BodyDecoder("gzip", max_bytes=100_000)
    with pytest.raises(BodyRefused, match="once inflated"):
        decoder.feed(bomb)


@pytest.mark.parametrize(
    ("coding", "reason"),
    [
        ("br", "Content-Encoding 'br' refused: the crawler asks for gzip, deflate only"),
        ("zstd", "Content-Encoding 'zstd' refused: the crawler asks for gzip, deflate only"),
        ("compress", "Content-Encoding 'compress' refused"),
        ("gzip, gzip", "Content-Encoding 'gzip, gzip' refused: more than one compression layer"),
    ],
)
def test_other_codings_are_refused_before_any_byte(coding: str, reason: str) -> None:
    with pytest.raises(BodyRefused, match=reason):
        BodyDecoder(coding, max_bytes=1024)


@pytest.mark.parametrize("coding", ["", "identity", "GZIP", " gzip ", "identity, deflate"])
def test_codings_accepted_as_spelled(coding: str) -> None:
    body = b"<p>x</p>"
    encoded = zlib.compress(body) if "deflate" in coding else body
    encoded = gzip.compress(body) if "gzip" in coding.lower() else encoded
    assert _decode(coding, encoded, [1, 3], 1024) == body


@pytest.mark.parametrize(
    ("coding", "body", "reason"),
    [
        ("gzip", gzip.compress(b"hello world")[:-9], "ends before its compressed stream"),
        ("gzip", b"not gzip at all", "not valid gzip"),
        ("deflate", b"\xff\xff\xff not deflate", "not valid deflate"),
    ],
)
def test_broken_bodies_are_refused(coding: str, body: bytes, reason: str) -> None:
    with pytest.raises(BodyRefused, match=reason):
        _decode(coding, body, [], 1024)
