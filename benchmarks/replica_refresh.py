"""How long an admin's change to a card takes to reach every replica: a card disabled, the same
card enabled again, a playbook edited (saved as a new version), each written through replica 1's
admin API and timed until replica 1 and replica 2 serve it.

    python benchmarks/replica_refresh.py                # 5 rounds
    python benchmarks/replica_refresh.py --rounds 10 --out benchmarks/results/replica_refresh.json

Two ``citewall serve`` processes on shared services only, as ``tests/reliability/
test_replicas.py`` runs them (``tests/reliability/replica_set.py``): a temporary database on the
PostgreSQL at 127.0.0.1:5432 (trust; created from the maintenance database ``postgres`` and
dropped after), a ``chroma run`` server this script starts on a free loopback port, Redis at
127.0.0.1:6379, each replica on an empty data dir of its own, the small slice of the demo KB
ingested first, the rate limit off. Each round the clock starts when the admin's request is
sent, and each replica is asked every 50 ms until it serves the change: a disabled card absent
from member search, an enabled one present again, an edited playbook found by admin search with
its new text. The times include the write itself (replica 1 ingests the change: Chroma, the
lexical index, the catalogue, the shared artifact) and each replica's pickup of the new lexical
index version (asked at most once a second).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
for extra in (REPO / "evals", REPO / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from reliability.replica_set import Replicas, first_seen, running_replicas  # noqa: E402
from reliability.services import ServeProcess  # noqa: E402
from testenv import PG_ADMIN_URL, REDIS_URL  # noqa: E402

from citewall.config import load_settings  # noqa: E402
from citewall.retrieval.embedder import load_embedder  # noqa: E402

#: An external card of the small KB and a question it answers.
CARD = "help-labels-void-label"
CARD_QUESTION = "How do I void a label I did not use?"
PLAYBOOK = "pb-warehouse-damage-claims"
PLAYBOOK_TITLE = "Damage claims for parcels broken in a partner warehouse"
PLAYBOOK_QUESTION = "damage claim for a parcel broken in a partner warehouse"
ACTIONS = ("disable", "enable", "playbook edit")


def playbook_body(code: str) -> str:
    return (
        "A parcel broken in a partner warehouse is claimed from the warehouse, not the carrier. "
        "Ask the merchant for photos of the box and the label, and open the claim from the "
        f"shipment page under Warehouse damage with the claim code {code}."
    )


def member_finds(replicas: Replicas, server: ServeProcess) -> bool:
    r = replicas.search(server, "reader", CARD_QUESTION)
    r.raise_for_status()
    return CARD in [hit["card_id"] for hit in r.json()["results"]]


def admin_finds(replicas: Replicas, code: str) -> Callable[[ServeProcess], bool]:
    def finds(server: ServeProcess) -> bool:
        r = httpx.post(
            f"{server.base_url}/api/v1/admin/search",
            json={"query": PLAYBOOK_QUESTION},
            headers=replicas.headers("operator"),
            timeout=60,
        )
        r.raise_for_status()
        return any(h["card_id"] == PLAYBOOK and code in h["text"] for h in r.json()["results"])

    return finds


def timed_change(
    replicas: Replicas,
    write: Callable[[], httpx.Response],
    served: Callable[[ServeProcess], bool],
    limit_s: float,
) -> tuple[float, list[float | None]]:
    """The write's own seconds, and each replica's seconds from sending it until ``served``."""
    sent = time.monotonic()
    r = write()
    r.raise_for_status()
    wrote = time.monotonic() - sent
    return wrote, first_seen(replicas.servers, served, since=sent, limit_s=limit_s)


def rounds(replicas: Replicas, n: int, limit_s: float) -> Iterator[dict[str, list[float | None]]]:
    """Per round, per action: [write s, replica 1 s, replica 2 s]."""
    first = replicas.servers[0]
    admin = replicas.headers("operator")

    def post(path: str, body: object = None) -> httpx.Response:
        return httpx.post(f"{first.base_url}{path}", json=body, headers=admin, timeout=60)

    r = post(
        "/api/v1/admin/playbooks",
        {"id": PLAYBOOK, "title": PLAYBOOK_TITLE, "body": playbook_body("WD-0")},
    )
    r.raise_for_status()
    version = int(r.json()["version"])
    for i in range(n):
        out: dict[str, list[float | None]] = {}
        wrote, seen = timed_change(
            replicas,
            lambda: post(f"/api/v1/admin/cards/{CARD}/disable"),
            lambda server: not member_finds(replicas, server),
            limit_s,
        )
        out["disable"] = [wrote, *seen]
        wrote, seen = timed_change(
            replicas,
            lambda: post(f"/api/v1/admin/cards/{CARD}/enable"),
            lambda server: member_finds(replicas, server),
            limit_s,
        )
        out["enable"] = [wrote, *seen]
        code = f"WD-{i:03d}-{time.time_ns() % 10**6:06d}"
        body = {"title": PLAYBOOK_TITLE, "body": playbook_body(code), "base_version": version}
        wrote, seen = timed_change(
            replicas,
            partial(
                httpx.put,
                f"{first.base_url}/api/v1/admin/playbooks/{PLAYBOOK}",
                json=body,
                headers=admin,
                timeout=60,
            ),
            admin_finds(replicas, code),
            limit_s,
        )
        version += 1
        out["playbook edit"] = [wrote, *seen]
        yield out


def _cell(values: list[float | None], how: Callable[[list[float]], float]) -> str:
    if None in values:
        return f"{sum(v is None for v in values)} not served"
    return f"{how([v for v in values if v is not None]):.2f} s"


def table(results: list[dict[str, list[float | None]]]) -> str:
    lines = [
        "| action | write (replica 1's API call) median | replica 1 median | replica 1 max | "
        "replica 2 median | replica 2 max |",
        "|---|---|---|---|---|---|",
    ]
    for action in ACTIONS:
        col = [[r[action][k] for r in results] for k in range(3)]
        lines.append(
            f"| {action} | {_cell(col[0], statistics.median)} | "
            f"{_cell(col[1], statistics.median)} | {_cell(col[1], max)} | "
            f"{_cell(col[2], statistics.median)} | {_cell(col[2], max)} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--limit-s", type=float, default=30.0, help="give up on a replica after this long"
    )
    parser.add_argument("--out", type=Path, default=None, help="write JSON here too")
    args = parser.parse_args()
    embedder = load_embedder(load_settings())
    with (
        tempfile.TemporaryDirectory(prefix="citewall-replica-refresh-") as tmp,
        running_replicas(
            Path(tmp),
            embedder,
            pg_admin_url=PG_ADMIN_URL,
            redis_url=REDIS_URL,
            roles={"reader": "member"},
            settings={"CITEWALL_RATE_LIMIT_PER_MINUTE": "0"},
        ) as replicas,
    ):
        results = list(rounds(replicas, args.rounds, args.limit_s))
    print(
        f"{args.rounds} rounds; seconds from sending the admin's request (to replica 1) until "
        "each replica serves the change:"
    )
    print()
    print(table(results))
    if args.out is not None:
        keys = ("write_s", "replica_1_s", "replica_2_s")
        named = [{a: dict(zip(keys, r[a], strict=True)) for a in ACTIONS} for r in results]
        report = {"rounds": named, "table": table(results)}
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    missed = any(None in r[a] for r in results for a in ACTIONS)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
