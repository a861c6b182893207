"""Server-sent event framing (``event: NAME`` + one ``data:`` line of JSON)."""

from __future__ import annotations

import json
from typing import Any

from citewall.text.cleaning import encodable


def sse_event(event: str, data: dict[str, Any]) -> str:
    """One SSE frame. JSON escapes newlines, so the payload always fits on one data line."""
    payload = encodable(json.dumps(data, ensure_ascii=False, default=str))
    return f"event: {event}\ndata: {payload}\n\n"
