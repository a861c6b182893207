"""The per-host delay on a simulated clock: slots a delay apart per host, hosts independent."""

from __future__ import annotations

from citewall.ingest.crawl.pacing import HostPacer


def test_requests_to_one_host_start_a_delay_apart() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    pacer = HostPacer(0.5, clock=lambda: now[0], sleep=sleep)
    starts = []
    for _ in range(3):
        pacer.wait("a")
        starts.append(now[0])
    pacer.wait("b")  # another host does not wait for the first
    assert starts == [100.0, 100.5, 101.0] and slept == [0.5, 0.5]
    pacer.ask_at_least("a", 2.0)  # robots.txt asks for more
    pacer.ask_at_least("a", 0.1)  # but never less
    now[0] += 10
    slept.clear()
    for host in ("a", "a", "b", "b"):
        pacer.wait(host)
    assert slept == [2.0, 0.5]
