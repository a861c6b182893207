"""`citewall ask "question" [--json]`: answer from the knowledge base, operator view.

An operator tool: it shows everything (markers, every citation including internal cards, the
hybrid_path label), unlike the member API, which goes through the serve boundary.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import typer

from citewall.cli.errors import cli_errors

if TYPE_CHECKING:
    from citewall.chat.pipeline import Answer


def ask(
    question: str = typer.Argument(..., help="The question to answer."),
    as_json: bool = typer.Option(False, "--json", help="Print the full answer as JSON."),
) -> None:
    """Answer a question from the ingested KB and print the citations and the path label."""
    with cli_errors():
        # Deferred: the models cost seconds to import; `citewall --help` should not.
        from citewall.chat.pipeline import answer_question
        from citewall.config import get_settings
        from citewall.generation.factory import build_condenser, build_generator
        from citewall.retrieval.embedder import load_embedder
        from citewall.retrieval.factory import build_decider, build_retriever
        from citewall.runtime import AnswerPolicy
        from citewall.storage.artifacts import shared_store
        from citewall.text.question import clean_question

        settings = get_settings()
        embedder = load_embedder(settings)
        artifacts = shared_store(settings)
        retriever = build_retriever(settings, embedder=embedder, artifacts=artifacts)
        generator = build_generator(settings, embedder)
        policy = AnswerPolicy(
            build_condenser(settings, generator),
            # The server's decision: the KB's calibration (or the operator's thresholds).
            build_decider(settings, artifacts),
            kb_language=settings.kb_language,
        )
        answer = answer_question(
            clean_question(question),
            retriever=retriever,
            generator=generator,
            embedder=embedder,
            policy=policy,
        )
    if as_json:
        typer.echo(json.dumps(_as_json(answer), indent=2, ensure_ascii=False))
        return
    typer.echo(answer.content)
    typer.echo("")
    typer.echo(f"answer_status: {answer.answer_status}")
    typer.echo(f"hybrid_path: {answer.hybrid_path or 'none (nothing retrieved)'}")
    for note in answer.context.notes:
        typer.echo(f"note: {note}")
    if answer.dropped_markers:
        typer.echo(f"dropped markers: {answer.dropped_markers}")
    if not answer.citations:
        typer.echo("citations: none")
        return
    label = "citations (attributed post hoc):" if answer.attributed else "citations:"
    typer.echo(label)
    numbers = {s.card_id: s.n for s in answer.sources}
    for c in answer.citations:
        score = "-" if c.retrieved_score is None else f"{c.retrieved_score:.0f}"
        typer.echo(
            f"  [{numbers.get(c.card_id, '?')}] {c.card_id}  url={c.source_url or '-'}  "
            f"license={c.source_license or '-'}  score={score}"
        )


def _as_json(answer: Answer) -> dict[str, Any]:
    return {
        "content": answer.content,
        "answer_status": answer.answer_status,
        "retrieval_query": answer.retrieval_query,
        "signals": answer.signals.as_dict() if answer.signals else None,
        "hybrid_path": answer.hybrid_path,
        "generator": answer.generator_name,
        "attributed": answer.attributed,
        "dropped_markers": answer.dropped_markers,
        "citations": [c.model_dump(mode="json") for c in answer.citations],
        "sources": [s.model_dump(mode="json") for s in answer.sources],
        "events": [dataclasses.asdict(e) for e in answer.events],
        "notes": list(answer.context.notes),
        "timings_ms": {k: round(v, 2) for k, v in answer.timings_ms.items()},
    }
