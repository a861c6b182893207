"""A response body decoded as it arrives, never past the page cap.

httpx decodes a Content-Encoding chunk by chunk with no limit on what one chunk inflates to: a
few kilobytes of zstd or gzip become gigabytes in memory before any size cap is checked. The
crawler asks for ``gzip, deflate`` only (``ACCEPT_ENCODING``), refuses any other coding a
server sends anyway (before reading the body), reads the raw bytes and inflates them with
``zlib`` asking each time for no more than what is left under the cap. A compression bomb then
costs at most the cap in memory, and is refused as soon as it passes it.
"""

from __future__ import annotations

import zlib

#: What the crawler sends as Accept-Encoding: the codings ``BodyDecoder`` can bound.
ACCEPT_ENCODING = "gzip, deflate"

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class BodyRefused(Exception):
    """A body the crawler will not decode, and why (the message is the reason)."""


class BodyDecoder:
    """Decodes one body of ``content_encoding`` into at most ``max_bytes`` bytes.

    >>> import gzip
    >>> d = BodyDecoder("gzip", max_bytes=100)
    >>> d.feed(gzip.compress(b"hello"))
    b'hello'
    >>> d.finish()
    >>> BodyDecoder("br", max_bytes=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    citewall.ingest.crawl.decoding.BodyRefused: Content-Encoding 'br' refused: ...
    """

    def __init__(self, content_encoding: str, *, max_bytes: int) -> None:
        codings = [c for c in (c.strip().lower() for c in content_encoding.split(",")) if c]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1:
            raise BodyRefused(
                f"Content-Encoding {content_encoding!r} refused: more than one compression layer"
            )
        self.coding = codings[0] if codings else None
        if self.coding is not None and self.coding not in _WBITS:
            raise BodyRefused(
                f"Content-Encoding {self.coding!r} refused: the crawler asks for "
                f"{ACCEPT_ENCODING} only"
            )
        self._max_bytes = max_bytes
        self._raw = 0
        self._size = 0
        self._inflater = zlib.decompressobj(_WBITS[self.coding]) if self.coding else None
        # "deflate" should be zlib-wrapped (RFC 9110) but some servers send it raw: zlib tells
        # by the first two bytes, which are kept until then to be read again as raw deflate.
        self._may_be_raw = self.coding == "deflate"
        self._head = b""

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes of the next raw chunk; ``BodyRefused`` once past the cap."""
        self._raw += len(data)
        if self._raw > self._max_bytes:
            compressed = " compressed" if self.coding else ""
            raise BodyRefused(f"larger than {self._max_bytes} bytes{compressed}")
        return self._counted(data if self._inflater is None else self._inflate(data))

    def finish(self) -> None:
        """Check the body once it has ended: ``BodyRefused`` if it was cut short.

        Nothing is left to return: ``feed`` inflates all it is given or passes the cap.
        """
        if self._inflater is not None and not self._inflater.eof:
            raise BodyRefused(f"the {self.coding} body ends before its compressed stream does")

    def _inflate(self, data: bytes) -> bytes:
        assert self._inflater is not None
        if self._inflater.eof:
            return b""  # bytes after the end of the stream are ignored, as browsers do
        # At most one byte past the cap: enough to know it was passed, never more in memory.
        room = self._max_bytes - self._size + 1
        if self._may_be_raw:
            self._head += data
        try:
            out = self._inflater.decompress(data, room)
        except zlib.error as exc:
            if not self._may_be_raw:
                raise BodyRefused(f"not valid {self.coding} ({exc})") from None
            self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
            self._may_be_raw = False
            head, self._head = self._head, b""
            return self._inflate(head)
        if len(self._head) >= 2:
            self._may_be_raw, self._head = False, b""
        return out

    def _counted(self, out: bytes) -> bytes:
        self._size += len(out)
        if self._size > self._max_bytes:
            where = f" once inflated (Content-Encoding {self.coding})" if self.coding else ""
            raise BodyRefused(f"larger than {self._max_bytes} bytes{where}")
        return out
