"""Collect what a member receives, as ``PayloadText`` pieces: JSON bodies, SSE events, headers.

The rules in ``leaks`` decide; this module only knows the wire: which JSON keys the UI shows
as prose (``answer``, message ``content``, stream ``delta``), how SSE frames look, and which
pieces are the member's own words echoed back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from citewall_evals.redteam.leaks import PayloadText, flatten

#: Response headers that are the same for every response and carry no data.
_BORING_HEADERS = frozenset({"content-length", "date", "server"})


@dataclass(slots=True)
class Exchange:
    """One member request and what came back."""

    label: str
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    events: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """``event:``/``data:`` frames -> ``(event, json-or-text)``; unnamed events are ``message``.

    >>> parse_sse('event: token\\ndata: {"delta": "Hi"}\\n\\n')
    [('token', {'delta': 'Hi'})]
    """
    events: list[tuple[str, Any]] = []
    for frame in text.replace("\r\n", "\n").split("\n\n"):
        if not frame.strip():
            continue
        name, data_lines = "message", []
        for line in frame.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].lstrip())
        data = "\n".join(data_lines)
        try:
            events.append((name, json.loads(data)))
        except ValueError:
            events.append((name, data))
    return events


def exchange_from(label: str, response: Any, *, sse: bool = False) -> Exchange:
    """Wrap an httpx/TestClient response (body parsed as JSON, or as SSE when ``sse``)."""
    headers = {k.lower(): v for k, v in response.headers.items()}
    if sse and headers.get("content-type", "").startswith("text/event-stream"):
        return Exchange(label, response.status_code, None, headers, parse_sse(response.text))
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return Exchange(label, response.status_code, body, headers)


def _is_own(text: str, own_texts: Sequence[str]) -> bool:
    stripped = text.strip().rstrip("…").rstrip(".").strip()
    if len(stripped) < 4:
        return False
    return any(stripped in own or own.strip().startswith(stripped) for own in own_texts)


def pieces_of(exchange: Exchange, own_texts: Sequence[str] = ()) -> list[PayloadText]:
    """Every string the member got in ``exchange``, prose labelled, own words marked."""
    pieces: list[PayloadText] = []
    for name, value in exchange.headers.items():
        if name not in _BORING_HEADERS:
            pieces.append(PayloadText(f"{exchange.label} header {name}", value, prose=False))
    if exchange.events:
        stream_prose = []
        for i, (event, data) in enumerate(exchange.events):
            root = f"{exchange.label} event[{i}]:{event}"
            pieces.append(PayloadText(f"{root}.<event>", event, prose=False))
            pieces.extend(flatten(data, root))
            if event == "token" and isinstance(data, dict) and isinstance(data.get("delta"), str):
                stream_prose.append(data["delta"])
        # Canaries or link syntax split across deltas only show in the joined text.
        pieces.append(PayloadText(f"{exchange.label} tokens(joined)", "".join(stream_prose), True))
    else:
        pieces.extend(flatten(exchange.body, f"{exchange.label} $"))
    return [PayloadText(p.where, p.text, p.prose, own=_is_own(p.text, own_texts)) for p in pieces]


def final_event(exchange: Exchange) -> dict[str, Any] | None:
    """The ``final`` event's data of a stream, if any."""
    for event, data in exchange.events:
        if event == "final" and isinstance(data, dict):
            return data
    return None
