"""Read request bodies as strict JSON (RFC 8259): UTF-8 without a byte order mark, no ``NaN``.

FastAPI turns only a ``json.JSONDecodeError`` from ``Request.json()`` into the JSON error
(``api/errors.py`` answers it with the documented 400); any other failure while reading the
body (invalid UTF-8, an integer over Python's 4,300-digit limit, nesting deeper than the
recursion limit) became its own "There was an error parsing the body". And Python's parser
takes what JSON does not: a byte order mark, UTF-16 and UTF-32, ``NaN`` and ``Infinity``.
``parse_json_body`` accepts exactly JSON and raises ``JSONDecodeError`` for everything else,
with a reason that names the problem and never the body; ``StrictJsonRoute`` makes every route
of a router read its body with it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON; send a number or null")


def parse_json_body(body: bytes) -> Any:
    """The JSON value of ``body``, or ``json.JSONDecodeError`` saying why it is not JSON.

    >>> parse_json_body(b'{"message": "hi"}')
    {'message': 'hi'}
    >>> parse_json_body(b'{"limit": NaN}')
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: NaN is not JSON; send a number or null: line 1 column 1 (char 0)
    >>> parse_json_body(b'{"message": "hi"')
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: Expecting ',' delimiter at character 16: line 1 column 17 ...
    """
    if body.startswith(GZIP_MAGIC):
        raise json.JSONDecodeError("the body is gzip-compressed; send it uncompressed", "", 0)
    if body.startswith(UTF8_BOM):
        raise json.JSONDecodeError("the body starts with a byte order mark; remove it", "", 0)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(f"byte {exc.start} is not UTF-8", "", 0) from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise json.JSONDecodeError(f"{exc.msg} at character {exc.pos}", "", exc.pos) from None
    except RecursionError:
        raise json.JSONDecodeError("the body is nested too deeply", "", 0) from None
    except ValueError as exc:  # NaN above, or an integer over int's digit limit
        reason = str(exc)
        if "integer string conversion" in reason:  # CPython's advice is for the server
            reason = f"an integer has over {sys.get_int_max_str_digits()} digits"
        raise json.JSONDecodeError(reason, "", 0) from None


class StrictJsonRequest(Request):
    """A request whose ``json()`` is ``parse_json_body``."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json_body(await self.body())
        return self._json


class StrictJsonRoute(APIRoute):
    """A route that reads its JSON body with ``parse_json_body``: ``APIRouter(route_class=...)``
    of every router with a route that takes a body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_json(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict_json
