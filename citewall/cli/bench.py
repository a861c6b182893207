"""`citewall bench retrieval | api | models | answering | crawl`: latency per retrieval stage
and size; API load; model runtimes; follow-ups and abstention; crawling a help center.

Development commands: they measure on the demo KB and labelled questions of a source checkout
(``citewall_evals.data``), with the evaluation package (``evals/``, see
``citewall.cli.evals_package``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from citewall.cli.errors import cli_errors
from citewall.cli.evals_package import require_evals
from citewall.errors import UserError

app = typer.Typer(
    help="Benchmarks: retrieval latency per stage and size; API load; torch vs onnx models; the "
    "cost of follow-up condensation and abstention; crawling a help center.",
    no_args_is_help=True,
)


@app.command("retrieval")
def retrieval(
    sizes: str = typer.Option("1000,10000", "--sizes", help="Comma-separated chunk counts."),
    ingest_cards: int = typer.Option(500, "--ingest-cards", help="0 skips the ingest run."),
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
    demo: Path | None = typer.Option(
        None, "--demo", help="Demo KB (default: kb/demo/cards.jsonl of the checkout)."
    ),
    questions: Path | None = typer.Option(
        None, "--questions", help="Default: kb/eval/questions.test.jsonl of the checkout."
    ),
    minilm_reranker: bool = typer.Option(
        True,
        "--minilm-reranker/--configured-reranker",
        help="Time the full path with a CrossEncoder built from the packaged MiniLM (untrained "
        "head: same architecture and cost as ms-marco-MiniLM-L-6-v2) when none is configured.",
    ),
) -> None:
    """p50/p95 per stage at each size (rrf_only and full), and ingest vs the embedding floor."""
    with cli_errors():
        require_evals()
        # Deferred: models and indexes cost seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.retrieval.embedder import default_embedding_model_path, load_embedder
        from citewall.retrieval.factory import rerank_settings
        from citewall.retrieval.reranker import (
            CrossEncoderReranker,
            build_cross_encoder,
            load_reranker,
        )
        from citewall_evals.bench.retrieval import run, to_markdown
        from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR, require

        settings = get_settings()
        rerank = rerank_settings(settings)
        reranker, status = load_reranker(rerank)
        if reranker is None and minilm_reranker:
            model = build_cross_encoder(
                default_embedding_model_path(),
                max_length=rerank.max_length,
                local_only=True,
            )
            reranker = CrossEncoderReranker(
                model,
                name="packaged MiniLM, untrained head",
                precision="bf16" if rerank.precision == "bf16" else "fp32",
            )
            status = reranker.name
        result = run(
            settings,
            sizes=[int(x) for x in sizes.split(",") if x.strip()],
            demo_path=require(demo or DEMO_CARDS),
            questions_path=require(questions or QUESTIONS_DIR / "questions.test.jsonl"),
            embedder=load_embedder(settings),
            reranker=reranker,
            reranker_name=status,
            ingest_cards_n=ingest_cards,
        )
    _write(out, "retrieval", result, to_markdown(result))


@app.command("api")
def api(
    clients: int = typer.Option(4, "--clients", "-c", min=1, max=64, help="Concurrent clients."),
    duration: float = typer.Option(20.0, "--duration", "-t", min=1, max=600, help="Seconds/path."),
    paths: str = typer.Option(
        "rrf_only,full", "--paths", help="Comma-separated paths to load: rrf_only,full."
    ),
    kb: Path | None = typer.Option(
        None, "--kb", help="KB to ingest (default: kb/demo/cards.jsonl of the checkout)."
    ),
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="Directory for JSON + MD."),
    warmup: int = typer.Option(
        3, "--warmup", min=0, max=50, help="Questions that only warm each server up."
    ),
    single: int | None = typer.Option(
        None,
        "--single",
        min=0,
        help="Questions per single-client series (streams; turn vs search), each asked once. "
        "Default: all the dev + test questions, split between the two; 0 skips them.",
    ),
    rerank_budget_ms: int = typer.Option(
        60_000,
        "--rerank-budget-ms",
        min=1,
        help="CITEWALL_RERANK_BUDGET_MS for the full path (high by default, so the full path "
        "is what gets measured rather than its over-budget rrf_only fallback).",
    ),
) -> None:
    """Time to first token (extractive and OpenAI-compatible), a turn vs a search, and
    requests/s with p50/p95 and CPU share for the rrf_only and full paths under load."""
    with cli_errors():
        require_evals()
        # Deferred: the load generator imports the embedding model's package.
        from citewall_evals.bench.api import PATHS, markdown, run
        from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR, require
        from citewall_evals.questions import load_questions

        wanted = [p.strip() for p in paths.split(",") if p.strip()]
        if not wanted or not set(wanted) <= set(PATHS):
            typer.echo(f"error: --paths {paths!r}: use rrf_only and/or full", err=True)
            raise typer.Exit(2)
        splits = [require(QUESTIONS_DIR / f"questions.{s}.jsonl") for s in ("dev", "test")]
        asked = [q.question for split in splits for q in load_questions(split)]
        questions = list(dict.fromkeys(asked))  # distinct, in file order
        typer.echo(
            f"single client on {len(questions)} questions, then {', '.join(wanted)}: "
            f"{clients} clients for {duration:.0f} s each...",
            err=True,
        )
        report = run(
            kb=require(kb or DEMO_CARDS),
            questions=questions,
            paths=wanted,
            clients=clients,
            duration_s=duration,
            warmup=warmup,
            rerank_budget_ms=rerank_budget_ms,
            single_questions=single,
        )
    _write(out, "bench_api", report.as_json(), markdown(report))
    if report.errors:
        typer.echo(f"error: {report.errors} request(s) failed", err=True)
        raise typer.Exit(1)


@app.command("models")
def models(
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
    rerank_questions: int = typer.Option(
        40,
        "--rerank-questions",
        min=1,
        help="Test questions reranked at every precision (bf16 is slow without native bf16).",
    ),
    sweep_questions: int = typer.Option(
        20, "--sweep-questions", min=1, help="Questions for the batch and int8-option sweeps."
    ),
) -> None:
    """torch vs onnx for the embedder and the cross-encoder: latency, throughput, agreement."""
    with cli_errors():
        require_evals()
        # Deferred: models and indexes cost seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.retrieval.embedder import default_embedding_model_path
        from citewall_evals.bench.models import markdown, run
        from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR, require
        from citewall_evals.questions import load_questions

        with tempfile.TemporaryDirectory(prefix="citewall-bench-models-") as tmp:
            report = run(
                demo=require(DEMO_CARDS),
                questions=load_questions(require(QUESTIONS_DIR / "questions.test.jsonl")),
                model_dir=default_embedding_model_path(),
                work_dir=Path(tmp),
                threads=get_settings().torch_threads,
                rerank_questions=rerank_questions,
                sweep_questions=sweep_questions,
            )
    _write(out, "bench_models", report, markdown(report))


@app.command("answering")
def answering(
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
    rounds: int = typer.Option(2, "--rounds", min=1, max=20, help="Passes over the set."),
    limit: int = typer.Option(40, "--limit", min=1, help="Dev conversations used."),
) -> None:
    """Turn latency with follow-up condensation and abstention on vs off (extractive)."""
    with cli_errors():
        require_evals()
        # Deferred: models and indexes cost seconds to import; `citewall --help` should not.
        from citewall_evals.bench.answering import markdown, run
        from citewall_evals.data import DEMO_CARDS, require
        from citewall_evals.retrieval.followups import load_followups
        from citewall_evals.workspace import build_workspace

        with tempfile.TemporaryDirectory(prefix="citewall-bench-") as tmp:
            ws = build_workspace(Path(tmp) / "data", kb_paths=(require(DEMO_CARDS),))
            try:
                # The server's decision: the KB's calibration fitted at ingest.
                thresholds = ws.runtime.thresholds
                if thresholds is None:
                    raise UserError("CITEWALL_ABSTENTION=false: nothing to measure")
                report = run(
                    load_followups("dev")[:limit],
                    retriever=ws.runtime.retriever,
                    generator=ws.runtime.generator,
                    embedder=ws.embedder,
                    thresholds=thresholds,
                    rounds=rounds,
                )
            finally:
                ws.close()
    _write(out, "bench_answering", report, markdown(report))


@app.command("crawl")
def crawl(
    pages: int = typer.Option(500, "--pages", min=1, max=20_000, help="Pages in the local site."),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        max=32,
        help="Crawl threads (default CITEWALL_CRAWL_CONCURRENCY).",
    ),
    via: str = typer.Option(
        "ingest",
        "--via",
        help="ingest: `citewall ingest --site` (one thread, then the full ingest twice); "
        "sync: the site registered as a source, `citewall sync` twice.",
    ),
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
) -> None:
    """`citewall ingest --site` (or `citewall sync`, with --via sync) on a local help center:
    pages/s; fetching vs extraction vs embedding; a re-ingest (re-sync) answered by 304s."""
    with cli_errors():
        require_evals()
        # Deferred: models, indexes and trafilatura cost seconds to import.
        from citewall.config import get_settings
        from citewall.ingest.loaders import load_cards
        from citewall.retrieval.embedder import load_embedder
        from citewall_evals.bench.crawl import markdown, markdown_sync, run, run_sync
        from citewall_evals.data import DEMO_CARDS, require

        if via not in ("ingest", "sync"):
            raise UserError(f"--via is ingest or sync, not {via!r}")
        settings = get_settings()
        if concurrency is not None:
            settings = settings.model_copy(update={"crawl_concurrency": concurrency})
        measure = run if via == "ingest" else run_sync
        report = measure(
            settings,
            demo=load_cards([require(DEMO_CARDS)]).cards,
            pages=pages,
            embedder=load_embedder(settings),
        )
    if via == "ingest":
        _write(out, "bench_crawl", report, markdown(report))
    else:
        _write(out, "bench_crawl_sync", report, markdown_sync(report))


@app.command("capacity")
def capacity(
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
    workers: str = typer.Option("1,2", "--workers", help="Comma-separated worker counts."),
    paths: str = typer.Option(
        "search,chat,chat_full", "--paths", help="Comma-separated: search, chat, chat_full."
    ),
    clients: int = typer.Option(4, "--clients", "-c", min=1, max=64, help="Concurrent clients."),
    duration: float = typer.Option(20.0, "--duration", "-t", min=1, max=600, help="Seconds/path."),
    kb_sizes: str = typer.Option(
        "1000,10000", "--kb-sizes", help="Chunk counts of the KB-growth runs; empty skips them."
    ),
    work_requests: int = typer.Option(
        20, "--work-requests", min=1, help="Requests per endpoint for the per-request counts."
    ),
    members: int = typer.Option(100, "--members", min=1, help="Active members to size for."),
    every: float = typer.Option(
        120.0, "--every-s", min=1, help="Seconds between one member's questions."
    ),
    headroom: float = typer.Option(
        2.0, "--headroom", min=1, help="Measured req/s is divided by this for planning."
    ),
    kb: Path | None = typer.Option(
        None, "--kb", help="KB for the worker runs (default: kb/demo/cards.jsonl of the checkout)."
    ),
) -> None:
    """One vs several workers: req/s, p50/p95 and RSS per worker per path; the SQL and vector
    calls per request; one process's memory and the KB on disk as the KB grows; the sizing."""
    with cli_errors():
        require_evals()
        # Deferred: the load client, the ingest and the embedder import the models' packages.
        from citewall.config import get_settings
        from citewall.ingest.loaders import load_cards
        from citewall.retrieval.embedder import load_embedder
        from citewall_evals.bench.capacity import PATHS, run
        from citewall_evals.bench.capacity_report import Plan, as_json, markdown
        from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR, require
        from citewall_evals.questions import load_questions

        wanted = [p.strip() for p in paths.split(",") if p.strip()]
        if not wanted or not set(wanted) <= set(PATHS):
            raise UserError(f"--paths {paths!r}: use {', '.join(PATHS)}")
        counts = [int(x) for x in workers.split(",") if x.strip()]
        sizes = [int(x) for x in kb_sizes.split(",") if x.strip()]
        splits = [require(QUESTIONS_DIR / f"questions.{s}.jsonl") for s in ("dev", "test")]
        questions = list(dict.fromkeys(q.question for s in splits for q in load_questions(s)))
        settings = get_settings()
        dimension = load_embedder(settings).dimension if sizes else 0
        plan = Plan(members=members, seconds_between_questions=every, headroom=headroom)
        report = run(
            settings=settings,
            command="citewall bench capacity " + " ".join(sys.argv[3:]),
            kb=require(kb or DEMO_CARDS),
            demo=load_cards([require(DEMO_CARDS)]).cards,
            questions=questions,
            workers=counts,
            paths=wanted,
            clients=clients,
            duration_s=duration,
            kb_sizes=sizes,
            dimension=dimension,
            work_requests=work_requests,
        )
    _write(out, "bench_capacity", as_json(report, plan), markdown(report, plan))
    if any(r.load.errors for r in report.runs):
        typer.echo("error: some requests failed", err=True)
        raise typer.Exit(1)


def _write(out: Path, name: str, result: dict[str, Any], md: str) -> None:
    """``out/NAME.json`` and ``out/NAME.md``; the Markdown is printed too."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / f"{name}.md").write_text(md, encoding="utf-8")
    typer.echo(md)
    typer.echo(f"wrote {out / (name + '.json')} and {out / (name + '.md')}", err=True)
