"""The crawler's HTTP client: it checks the address it actually connects to, and does nothing
the fetcher does not ask for.

Resolving a host, checking its addresses and then letting httpx resolve it again would leave a
window for DNS rebinding (the second answer can differ). Here the check happens where the
connection is opened: ``GuardedBackend.connect_tcp`` resolves the host once, refuses it if any
address it resolves to is refused by ``addresses.address_problem``, and connects to those very
addresses. TLS still verifies the certificate against the host name. The client ignores proxy
environment variables (``trust_env=False``): a proxy would connect on the crawler's behalf and
defeat the check.

``CrawlClient`` sends each GET straight to that transport rather than through ``httpx.Client``:
the client builds the next request of every redirect it sees, even when told not to follow
it, and a Location it cannot parse (``http:ok2``) raises ``httpx.InvalidURL`` out of the
request; the fetcher reads and checks each Location itself. Nor does it keep cookies (the
crawler reads what an anonymous visitor reads), and it asks only for the encodings
``decoding.py`` can bound.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Self

import httpcore
import httpx

from citewall.ingest.crawl.addresses import address_problem
from citewall.ingest.crawl.decoding import ACCEPT_ENCODING

#: httpcore's type of a socket option.
SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class AddressRefused(Exception):
    """A host resolves to an address the crawler may not connect to (the message says which);
    ``allowed_by`` is the setting that would allow it, if one would."""

    def __init__(self, message: str, allowed_by: str | None = None) -> None:
        super().__init__(message)
        self.allowed_by = allowed_by


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend, connecting only to allowed addresses."""

    def __init__(self, *, allow_private: bool, allow_link_local: bool) -> None:
        self._allow_private = allow_private
        self._allow_link_local = allow_link_local
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        for address in addresses:
            problem = address_problem(
                address, allow_private=self._allow_private, allow_link_local=self._allow_link_local
            )
            if problem is not None:
                raise AddressRefused(f"{host} resolves to a {problem.reason}", problem.allowed_by)
        last: Exception | None = None
        for address in addresses:
            try:
                return self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or httpcore.ConnectError(f"{host} resolves to no address")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        raise AddressRefused(f"the crawler does not connect to Unix sockets ({path})")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport with its connections opened by a ``GuardedBackend``.

    httpx takes no network backend, so the connection pool it builds is replaced by the same
    httpcore ``ConnectionPool`` (public API) given one.
    """

    def __init__(self, backend: GuardedBackend, *, max_connections: int) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            network_backend=backend,
        )


class CrawlClient:
    """One GET at a time through a ``GuardedTransport`` (module docstring); safe to share by
    threads (the transport's connection pool is)."""

    def __init__(self, transport: httpx.BaseTransport, *, timeout_s: float, user_agent: str):
        self._transport = transport
        self._timeout = httpx.Timeout(timeout_s).as_dict()
        self._user_agent = user_agent

    @contextmanager
    def stream(self, url: str, headers: Mapping[str, str]) -> Iterator[httpx.Response]:
        """The response to a GET of ``url``, its body not read yet; closed on the way out."""
        request = httpx.Request(
            "GET",
            url,
            headers={"User-Agent": self._user_agent, "Accept-Encoding": ACCEPT_ENCODING, **headers},
            extensions={"timeout": self._timeout},
        )
        response = self._transport.handle_request(request)
        try:
            yield response
        finally:
            response.close()

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def crawl_client(
    *,
    allow_private: bool,
    allow_link_local: bool,
    max_connections: int,
    timeout_s: float,
    user_agent: str,
) -> CrawlClient:
    """The client every crawl request goes through; redirects are followed by the fetcher
    itself, one checked hop at a time."""
    transport = GuardedTransport(
        GuardedBackend(allow_private=allow_private, allow_link_local=allow_link_local),
        max_connections=max_connections,
    )
    return CrawlClient(transport, timeout_s=timeout_s, user_agent=user_agent)
