"""Parse a Server-Sent Events body into ``(event, data)`` pairs (data JSON-decoded)."""

from __future__ import annotations

import json
from typing import Any


def sse_events(body: str) -> list[tuple[str, Any]]:
    """``event:``/``data:`` blocks separated by blank lines, in order."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events
