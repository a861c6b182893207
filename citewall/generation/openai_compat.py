"""A generator over any OpenAI-compatible ``/chat/completions`` endpoint (httpx).

Works with vLLM, llama.cpp's server, llama-cpp-python's server, Ollama (``/v1``) and hosted
APIs: it speaks only the standard wire format. Timeouts, connection errors, 429 and 5xx are
retried with exponential backoff (before any streamed text was yielded); other 4xx and an
empty or unparseable reply raise ``GenerationError`` with a message saying what came back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from citewall.errors import GenerationError
from citewall.generation.framing import FramingFilter, drop_framing
from citewall.generation.prompt import build_messages
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.types import ContextChunk

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class _Retryable(Exception):
    """A failure worth another attempt (carries the message for the final error)."""


def _excerpt(body: str, limit: int = 200) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


class OpenAICompatGenerator:
    """Chat completions over HTTP; ``base_url`` is the API root, e.g. ``http://h:8080/v1``."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        timeout_s: float = 60.0,
        retries: int = 2,
        max_tokens: int = 512,
        temperature: float = 0.0,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.retries = retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff_s = backoff_s
        headers = {"Accept": "application/json"}
        if api_key is not None and api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport
        )

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def close(self) -> None:
        self._client.close()

    def _payload(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn], stream: bool
    ) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": build_messages(question, context, history),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stream": stream,
        }

    def _sleep_before(self, attempt: int) -> None:
        if attempt > 0:
            time.sleep(self.backoff_s * (2 ** (attempt - 1)))

    def _fail(self, last: str) -> GenerationError:
        tries = self.retries + 1
        return GenerationError(f"generator at {self.url} failed after {tries} attempt(s): {last}")

    # -- non-streaming -------------------------------------------------------------------------
    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        """One completion; the reply text with whatever markers the model wrote."""
        payload = self._payload(question, context, history, stream=False)
        t0 = time.perf_counter()
        last = ""
        for attempt in range(self.retries + 1):
            self._sleep_before(attempt)
            try:
                response = self._client.post(self.url, json=payload)
                self._check_status(response.status_code, response.text)
            except _Retryable as exc:
                last = str(exc)
                continue
            except httpx.TimeoutException:
                last = "timed out"
                continue
            except httpx.TransportError as exc:
                last = f"connection error: {exc}"
                continue
            text = _shown(_content_of(response.text))
            return GeneratedReply(
                text=text,
                generator=self.name,
                timings_ms={"generate": (time.perf_counter() - t0) * 1000.0},
            )
        raise self._fail(last)

    def _check_status(self, status: int, body: str) -> None:
        if status in _RETRYABLE_STATUS:
            raise _Retryable(f"HTTP {status}: {_excerpt(body)}")
        if status >= 400:
            raise GenerationError(
                f"generator at {self.url} refused the request: HTTP {status}: {_excerpt(body)}"
            )

    # -- a short side call ---------------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]], *, max_tokens: int, timeout_s: float) -> str:
        """One completion of ``messages`` with its own timeout and no retry (for a quick side
        task such as rewriting a follow-up question); ``GenerationError`` on any failure."""
        payload = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "stream": False,
        }
        try:
            response = self._client.post(self.url, json=payload, timeout=timeout_s)
        except httpx.TimeoutException:
            raise GenerationError(
                f"generator at {self.url} timed out after {timeout_s} s"
            ) from None
        except httpx.TransportError as exc:
            raise GenerationError(f"generator at {self.url}: connection error: {exc}") from None
        if response.status_code >= 400:
            raise GenerationError(
                f"generator at {self.url} answered HTTP {response.status_code}: "
                f"{_excerpt(response.text)}"
            )
        return _content_of(response.text)

    # -- streaming -----------------------------------------------------------------------------
    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        """Yield text deltas from an SSE stream (``data: {...}`` lines, ending ``[DONE]``)."""
        payload = self._payload(question, context, history, stream=True)
        last = ""
        for attempt in range(self.retries + 1):
            self._sleep_before(attempt)
            yielded = False
            try:
                with self._client.stream("POST", self.url, json=payload) as response:
                    if response.status_code >= 400:
                        self._check_status(
                            response.status_code, response.read().decode(errors="replace")
                        )
                    ctype = response.headers.get("content-type", "")
                    if "text/event-stream" not in ctype:
                        # Some servers ignore "stream": true and answer in one JSON body.
                        text = _content_of(response.read().decode(errors="replace"))
                        yield _shown(text)
                        return
                    framing = FramingFilter()
                    for delta in _sse_deltas(response.iter_lines()):
                        if shown := framing.push(delta):
                            yielded = True
                            yield shown
                    if shown := framing.flush():
                        yielded = True
                        yield shown
                if not yielded:
                    raise GenerationError(
                        f"generator at {self.url} streamed an empty reply (nothing but the"
                        " prompt's framing, or no text)"
                    )
                return
            except _Retryable as exc:
                last = str(exc)
            except httpx.TimeoutException:
                last = "timed out"
            except httpx.TransportError as exc:
                last = f"connection error: {exc}"
            if yielded:
                # Text already went out; a retry would duplicate it.
                raise GenerationError(f"generator at {self.url} stream broke off: {last}")
        raise self._fail(last)


def _shown(text: str) -> str:
    """A whole reply without the prompt's framing; ``GenerationError`` when nothing is left."""
    shown = drop_framing(text)
    if not shown.strip():
        raise GenerationError("generator reply held nothing but the prompt's framing")
    return shown


def _content_of(body: str) -> str:
    """The message text of a non-streaming completion body, or GenerationError."""
    try:
        data = json.loads(body)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise GenerationError(
            f"generator reply is not an OpenAI chat completion: {_excerpt(body) or '(empty body)'}"
        ) from None
    if not isinstance(content, str) or not content.strip():
        raise GenerationError("generator reply has no text (empty message content)")
    return content


def _sse_deltas(lines: Iterator[str]) -> Iterator[str]:
    """Text deltas from SSE lines; comments, other fields and empty deltas are skipped."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            chunk = json.loads(data)
            choices = chunk.get("choices") or [{}]
            content = (choices[0].get("delta") or {}).get("content")
        except (ValueError, AttributeError, IndexError, TypeError):
            raise GenerationError(
                f"generator stream sent an unparseable event: {_excerpt(data)}"
            ) from None
        if isinstance(content, str) and content:
            yield content
