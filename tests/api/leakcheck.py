"""The member-payload leak checker (decision 0003: what a member may receive of an internal
card; docs/decisions/0003-data-path-contracts.md).

- title and metadata canaries, internal card ids and internal card titles: nowhere at all
  (headers, bodies, every SSE event; prose included);
- internal metadata keys (author, path, team, owner_note, content_hash): never a JSON key;
- body canaries: only inside the prose fields ``answer``, ``content`` and ``delta``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from .conftest import KbFacts

INTERNAL_KEYS = frozenset({"author", "path", "team", "owner_note", "content_hash"})
PROSE_KEYS = frozenset({"answer", "content", "delta"})


class Leak(AssertionError):
    """A member payload carried something of an internal card."""


def _walk(value: Any, key: str | None, where: str) -> Iterator[tuple[str | None, Any, str]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield k, None, f"{where}.{k}"  # the key itself
            yield from _walk(v, k, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, key, f"{where}[{i}]")
    else:
        yield key, value, where


def check_json(data: Any, facts: KbFacts, where: str) -> None:
    """Keys and body-canary placement inside one JSON document."""
    for key, value, path in _walk(data, None, where):
        if value is None and key in INTERNAL_KEYS and path.endswith(f".{key}"):
            raise Leak(f"{path}: internal metadata key {key!r} as a JSON key")
        if isinstance(value, str) and key not in PROSE_KEYS:
            for canary in facts.body_canaries:
                if canary in value:
                    raise Leak(f"{path}: body canary {canary} outside the answer prose")


def sse_frames(text: str) -> list[tuple[str, str]]:
    frames = []
    for frame in text.split("\n\n"):
        if not frame.strip():
            continue
        name, data = "message", []
        for line in frame.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        frames.append((name, "\n".join(data)))
    return frames


def check_response(
    facts: KbFacts, where: str, headers: Mapping[str, str], content_type: str, text: str
) -> None:
    """Raise ``Leak`` if a member response (headers + body) carries internal material."""
    whole = "\n".join(f"{k}: {v}" for k, v in headers.items()) + "\n" + text
    never = (
        *facts.title_canaries,
        *facts.metadata_canaries,
        *facts.internal_ids,
        *facts.internal_titles,
    )
    for needle in never:
        if needle in whole:
            raise Leak(f"{where}: {needle!r} appears in a member response")
    for canary in facts.body_canaries:
        if any(canary in v for v in headers.values()):
            raise Leak(f"{where}: body canary {canary} in a header")
    if content_type.startswith("application/json"):
        check_json(json.loads(text), facts, where)
    elif content_type.startswith("text/event-stream"):
        for i, (name, data) in enumerate(sse_frames(text)):
            check_json(json.loads(data), facts, f"{where} event#{i}({name})")
    else:
        for canary in facts.body_canaries:
            if canary in text:
                raise Leak(f"{where}: body canary {canary} in a non-JSON body")
