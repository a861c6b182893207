#!/usr/bin/env python
"""Measure storage costs on SQLite and PostgreSQL: save_turn latency and the analytics queries.

Usage: python scripts/bench_storage.py [--turns 2000] [--pg postgresql+psycopg://postgres@127.0.0.1:5432/postgres]
Creates (and drops) a scratch PostgreSQL database; the SQLite file lives in a temp dir.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, text, update

from citewall.retrieval.types import RetrievalRecord
from citewall.storage.analytics import entry_performance, retrieval_events
from citewall.storage.models import Message, RetrievalEvent, new_uuid
from citewall.storage.schema import open_database
from citewall.storage.sources import StoredSource
from citewall.storage.turns import AnswerRecord, NewConversation, TurnRecord, save_turn
from citewall.storage.users import create_user


def run(url: str, turns: int, seed: int = 7) -> dict[str, float]:
    rng = random.Random(seed)
    db = open_database(url)
    cards = [f"card-{i:03d}" for i in range(300)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    save_ms = []
    with db.sessions() as s:
        user, _ = create_user(s, f"bench-{uuid.uuid4().hex[:6]}", "member")
        conv_id = new_uuid()
        for i in range(turns):
            start = None
            if i % 20 == 0:  # 20 turns per conversation
                conv_id, start = new_uuid(), NewConversation(user.id, "bench")
            retrieved = rng.sample(cards, 5)
            cited = retrieved[: rng.randint(0, 3)]
            sources = tuple(
                StoredSource(n=n, card_id=c, title=c, text="x" * 400, metadata={"k": "v"})
                for n, c in enumerate(cited, 1)
            )
            events = [
                RetrievalRecord(
                    card_id=c,
                    final_rank=r,
                    dense_rank=r,
                    dense_score=0.5,
                    bm25_rank=None,
                    bm25_score=None,
                    rrf_rank=r,
                    rrf_score=0.01,
                    rerank_rank=None,
                    rerank_logit=None,
                    hybrid_path="rrf_only",
                    cited=c in cited,
                    is_external=False,
                )
                for r, c in enumerate(retrieved, 1)
            ]
            t0 = time.perf_counter()
            save_turn(
                s,
                TurnRecord(
                    conversation_id=conv_id,
                    new_conversation=start,
                    question="q",
                    answer=AnswerRecord(
                        content="a [1]",
                        sources=sources,
                        hybrid_path="rrf_only",
                        timings_ms={"total_ms": 1.0},
                        generator_name="extractive",
                        events=tuple(events),
                    ),
                ),
            )
            save_ms.append((time.perf_counter() - t0) * 1000)
        # spread the turns over 90 days so day/week periods have many groups
        at = start
        step = timedelta(days=90) / max(turns, 1)
        ids = [
            m
            for (m,) in s.execute(
                text("SELECT id FROM messages WHERE role='assistant' ORDER BY created_at")
            )
        ]
        for mid in ids:
            s.execute(update(Message).where(Message.id == mid).values(created_at=at))
            s.execute(
                update(RetrievalEvent).where(RetrievalEvent.message_id == mid).values(created_at=at)
            )
            at += step
        s.commit()
        out = {
            "save_turn_p50_ms": statistics.median(save_ms),
            "save_turn_p95_ms": statistics.quantiles(save_ms, n=20)[-1],
        }
        for period in ("all", "day", "week"):
            t0 = time.perf_counter()
            rows = entry_performance(s, period=period, limit=100_000)
            out[f"entry_performance_{period}_ms"] = (time.perf_counter() - t0) * 1000
            out[f"entry_performance_{period}_rows"] = len(rows)
        t0 = time.perf_counter()
        retrieval_events(s, card_id="card-007", limit=100)
        out["retrieval_events_card_ms"] = (time.perf_counter() - t0) * 1000
    db.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--pg", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {"sqlite": run(f"sqlite:///{tmp}/bench.db", args.turns)}
    name = f"citewall_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(args.pg, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        results["postgresql"] = run(args.pg.rsplit("/", 1)[0] + f"/{name}", args.turns)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    print(f"{args.turns} turns, 5 retrieval events and 0-3 cited sources each")
    for backend, figures in results.items():
        for key, value in figures.items():
            print(f"{backend:10s} {key:32s} {value:10.1f}")


if __name__ == "__main__":
    main()
