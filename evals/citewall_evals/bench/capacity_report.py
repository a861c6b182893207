"""The ``citewall bench capacity`` report: measured tables, the memory fit and the sizing.

Everything derived (the per-chunk lines, the extrapolations, replicas per members) comes from
``sizing`` over the measured figures, so the JSON and the Markdown carry the same numbers and
docs/capacity.md can quote either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TypedDict

from citewall_evals.bench.capacity import CapacityReport, WorkerRun
from citewall_evals.bench.kb_growth import KBPoint
from citewall_evals.bench.sizing import (
    LinearFit,
    demand_rps,
    fit_line,
    members_per_replica,
    replicas_needed,
)

MB = 1024 * 1024
#: The parts of a KB whose bytes on disk are measured, in report order.
DISK_PARTS = ("chroma", "bm25", "sentences", "database")


@dataclass(frozen=True, slots=True)
class Plan:
    """The load a sizing assumes: ``members`` active members asking one question every
    ``seconds_between_questions`` each, planned at ``1 / headroom`` of measured throughput."""

    members: int = 100
    seconds_between_questions: float = 120.0
    headroom: float = 2.0
    extrapolate_to: tuple[int, ...] = (100_000, 1_000_000)


class FitRow(TypedDict):
    """One straight line of the KB-growth table, in MB over chunks."""

    name: str
    intercept_mb: float
    per_chunk_bytes: float
    max_residual_mb: float
    at: dict[int, float]


class SizingRow(TypedDict):
    """Replicas for the plan's members from one path's measured throughput."""

    workers: int
    path: str
    replica_rps: float
    demand_rps: float
    replicas: int
    members_per_replica: int


def memory_fits(points: Sequence[KBPoint], plan: Plan) -> list[FitRow]:
    """A line over chunks for the served process's RSS and each part on disk (MB); none with
    fewer than two distinct sizes."""
    if len({p.chunks for p in points}) < 2:
        return []
    xs = [float(p.chunks) for p in points]
    series = {
        "process RSS": [p.rss_kb * 1024 / MB for p in points],
        "process RSS, private (RssAnon)": [p.anon_rss_kb * 1024 / MB for p in points],
    }
    series |= {f"disk: {k}": [p.disk_bytes.get(k, 0) / MB for p in points] for k in DISK_PARTS}
    rows: list[FitRow] = []
    for name, ys in series.items():
        fit = fit_line(xs, ys)
        rows.append(_fit_row(name, fit, plan))
    return rows


def _fit_row(name: str, fit: LinearFit, plan: Plan) -> FitRow:
    return FitRow(
        name=name,
        intercept_mb=round(fit.intercept, 1),
        per_chunk_bytes=round(fit.slope * MB, 1),
        max_residual_mb=round(fit.max_residual, 2),
        at={n: round(fit.at(n), 1) for n in plan.extrapolate_to},
    )


def sizing_rows(runs: Sequence[WorkerRun], plan: Plan) -> list[SizingRow]:
    """For every measured worker count and path: the demand of ``plan``, the replicas (one
    ``citewall serve --workers N`` on a machine like this one) it needs and the members one
    replica serves."""
    demand = demand_rps(plan.members, plan.seconds_between_questions)
    return [
        SizingRow(
            workers=r.workers,
            path=r.path,
            replica_rps=r.load.requests_per_s,
            demand_rps=round(demand, 3),
            replicas=replicas_needed(demand, r.load.requests_per_s, plan.headroom),
            members_per_replica=members_per_replica(
                r.load.requests_per_s, plan.seconds_between_questions, plan.headroom
            ),
        )
        for r in runs
        if r.load.requests_per_s > 0
    ]


def as_json(report: CapacityReport, plan: Plan) -> dict[str, object]:
    """Every measured figure, the plan, the fits and the sizing."""
    return {
        **asdict(report),
        "plan": asdict(plan),
        "memory_fits": memory_fits(report.kb_growth, plan),
        "sizing": sizing_rows(report.runs, plan),
    }


def _mb(kb: int | None) -> str:
    return "n/a" if kb is None else f"{kb / 1024:.0f}"


def _workers_table(report: CapacityReport) -> list[str]:
    lines = [
        f"| workers | path | requests | req/s | p50 ms | p95 ms | errors | server CPU, cores "
        f"(of {report.cpus}) | client CPU, cores | RSS per worker, MB | supervisor RSS, MB "
        "| load 1m |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report.runs:
        x = r.load
        rss = " + ".join(_mb(k) for k in r.worker_rss_kb)
        lines.append(
            f"| {r.workers} | {r.path} | {x.requests} | {x.requests_per_s} | {x.p50_ms} | "
            f"{x.p95_ms} | {x.errors} | {x.server_cpu_cores} | {x.client_cpu_cores} | {rss} | "
            f"{_mb(r.supervisor_rss_kb)} | {x.loadavg_1m_before} -> {x.loadavg_1m_after} |"
        )
    by = {(r.workers, r.path): r.load.requests_per_s for r in report.runs}
    counts = sorted({r.workers for r in report.runs})
    if len(counts) > 1:
        lo, hi = counts[0], counts[-1]
        ratios = [
            f"{path} {by[(hi, path)] / by[(lo, path)]:.2f}x"
            for path in dict.fromkeys(r.path for r in report.runs)
            if by.get((lo, path)) and (hi, path) in by
        ]
        lines += ["", f"req/s with {hi} workers over {lo}: " + ", ".join(ratios) + "."]
    return lines


def _work_table(report: CapacityReport) -> list[str]:
    lines = [
        "| per request | requests | SQL statements by verb | SQL writes | commits | "
        "vector queries | vector gets |",
        "|---|---|---|---|---|---|---|",
    ]
    for w in report.work:
        verbs = ", ".join(f"{k} {v:g}" for k, v in w.sql_by_verb.items())
        lines.append(
            f"| {w.endpoint} | {w.requests} | {verbs} | {w.sql_writes:g} | {w.commits:g} | "
            f"{w.vector_queries:g} | {w.vector_gets:g} |"
        )
    return lines


def _growth_table(report: CapacityReport, plan: Plan) -> list[str]:
    lines = [
        "| chunks | sentence units | build s | process RSS, MB | private (RssAnon), MB | "
        "peak RSS, MB | " + " | ".join(f"{k}, MB" for k in DISK_PARTS) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(DISK_PARTS),
    ]
    for p in report.kb_growth:
        disk = " | ".join(f"{p.disk_bytes.get(k, 0) / MB:.1f}" for k in DISK_PARTS)
        lines.append(
            f"| {p.chunks:,} | {p.sentence_units:,} | {p.build_s} | {_mb(p.rss_kb)} | "
            f"{_mb(p.anon_rss_kb)} | {_mb(p.peak_rss_kb)} | {disk} |"
        )
    fits = memory_fits(report.kb_growth, plan)
    if fits:
        heads = " | ".join(f"at {n:,} chunks, MB" for n in plan.extrapolate_to)
        lines += [
            "",
            "Fitted by least squares over the sizes above: MB(n) = a + b * n / 1,048,576, "
            "b in bytes per chunk.",
            "",
            f"| line | a, MB | b, bytes/chunk | largest residual, MB | {heads} |",
            "|---|---|---|---|" + "---|" * len(plan.extrapolate_to),
        ]
        for f in fits:
            at = " | ".join(f"{f['at'][n]:,.0f}" for n in plan.extrapolate_to)
            lines.append(
                f"| {f['name']} | {f['intercept_mb']} | {f['per_chunk_bytes']:,.0f} | "
                f"{f['max_residual_mb']} | {at} |"
            )
    return lines


def _sizing_table(report: CapacityReport, plan: Plan) -> list[str]:
    rows = sizing_rows(report.runs, plan)
    if not rows:
        return []
    demand = rows[0]["demand_rps"]
    lines = [
        f"Plan: {plan.members} active members, one question each every "
        f"{plan.seconds_between_questions:g} s = {plan.members} / "
        f"{plan.seconds_between_questions:g} = {demand:.3f} req/s; a replica planned at its "
        f"measured req/s / {plan.headroom:g} (headroom). replicas = ceil(demand x "
        f"{plan.headroom:g} / req/s), at least 1; members per replica = "
        f"floor(req/s x {plan.seconds_between_questions:g} / {plan.headroom:g}).",
        "",
        "| replica | path | measured req/s | replicas for the plan | members per replica |",
        "|---|---|---|---|---|",
    ]
    for s in rows:
        lines.append(
            f"| serve --workers {s['workers']} | {s['path']} | {s['replica_rps']} | "
            f"{s['replicas']} | {s['members_per_replica']:,} |"
        )
    return lines


def markdown(report: CapacityReport, plan: Plan) -> str:
    """The report: worker runs, per-request work, KB growth with its fit, the sizing."""
    lines = [
        f"`{report.command}` started {report.started}, {report.wall_s:.0f} s; "
        f"{report.machine}, {report.cpus} CPUs, the load client on the same cores; "
        f"load average (1 min) {report.loadavg_1m_start} at the start, "
        f"{report.loadavg_1m_end} at the end. KB for the worker runs: {report.kb}; "
        f"{report.clients} clients x {report.duration_s:g} s per path (closed loop).",
        "",
        "## Workers",
        "",
        *_workers_table(report),
        "",
        "## Per-request work on the shared parts (in-process, SQLite, embedded Chroma)",
        "",
        *_work_table(report),
        "",
        "## One process as the KB grows (synthetic KB, seeded vectors; rrf_only, extractive)",
        "",
        *_growth_table(report, plan),
        "",
        "## Sizing",
        "",
        *_sizing_table(report, plan),
    ]
    return "\n".join(lines) + "\n"
