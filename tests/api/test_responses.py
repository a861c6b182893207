"""JSON and SSE bodies always encode: a lone surrogate from anywhere (a row another tool wrote,
an id echoed in an error) becomes U+FFFD rather than a failed response."""

from __future__ import annotations

import json

from citewall.api.responses import EncodableJSONResponse
from citewall.api.sse import sse_event


def test_json_response_encodes_lone_surrogates() -> None:
    body = EncodableJSONResponse({"detail": "conversation 'x\ud800' not found", "n": [1]}).body
    assert json.loads(body) == {"detail": "conversation 'x\ufffd' not found", "n": [1]}


def test_sse_event_encodes_lone_surrogates() -> None:
    frame = sse_event("token", {"delta": "a\udfffb"})
    frame.encode("utf-8")
    assert frame == 'event: token\ndata: {"delta": "a\ufffdb"}\n\n'
