"""A `benchmarks/compare.py` result as goals (met/missed), Markdown tables and a PNG chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Series names in the JSON and the chart. "before": citewall's models on torch, fp32 (as they
#: ran before the ONNX runtime path), in the same run.
CW_RRF, CW_FULL = "citewall rrf_only", "citewall full"
CW_RRF_BEFORE, CW_FULL_BEFORE = (
    "citewall rrf_only, before (torch)",
    "citewall full, before (torch fp32)",
)
LC_DENSE, LC_ENS, LC_RR = "langchain dense", "langchain ensemble", "langchain ensemble+rerank"
FLOOR_EMBED, FLOOR_SCAN = "floor: query embedding (torch)", "floor: exact dot-product scan"
FLOOR_EMBED_CW = "floor: query embedding (citewall's runtime)"

#: The performance targets: rrf_only against LangChain's dense retriever, the full path's p50,
#: ingest against its embedding floor (chunks and sentence units).
DENSE_RATIO, FULL_P50_MS, INGEST_RATIO = 0.7, 250.0, 1.15


def goals(result: dict[str, Any]) -> dict[str, Any]:
    """The goals, each with the measured figure and met/missed."""
    m = result["quality"]["metrics"]
    equal_quality = m[CW_RRF]["ndcg@10"] >= m[LC_ENS]["ndcg@10"]
    out: dict[str, Any] = {
        "nDCG@10 citewall rrf_only >= langchain ensemble": {
            "figure": f"{m[CW_RRF]['ndcg@10']} vs {m[LC_ENS]['ndcg@10']}",
            "met": equal_quality,
        }
    }
    for row in result["sizes"]:
        r = row["ratios_p50"]
        dense = r["citewall rrf_only / langchain dense"]
        full_p50 = row["latency_ms"][CW_FULL]["p50"]
        over_floor = r["citewall rrf_only / its query-embedding floor"]
        out[f"{row['chunks']} chunks: rrf_only <= {DENSE_RATIO}x langchain dense"] = {
            "figure": f"{dense:.2f}x",
            "met": equal_quality and dense <= DENSE_RATIO,
        }
        out[f"{row['chunks']} chunks: full (top-20, 256 tokens) p50 <= {FULL_P50_MS:.0f} ms"] = {
            "figure": f"{full_p50:.0f} ms",
            "met": full_p50 <= FULL_P50_MS,
        }
        out[f"{row['chunks']} chunks: rrf_only <= 1.5x its query-embedding floor"] = {
            "figure": f"{over_floor:.2f}x",
            "met": over_floor <= 1.5,
        }
    for ing in result["ingest"]:
        out[f"ingest {ing['chunks']} chunks <= {INGEST_RATIO}x the embedding floor"] = {
            "figure": f"{ing['citewall_over_floor']:.2f}x",
            "met": ing["citewall_over_floor"] <= INGEST_RATIO,
        }
    return out


def chart(result: dict[str, Any], path: Path) -> None:
    """p50 latency (lines) and p95 (dotted) against corpus size, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [row["chunks"] for row in result["sizes"]]
    styles = {
        CW_RRF: ("tab:blue", "-", "o"),
        CW_FULL: ("tab:blue", "--", "s"),
        CW_RRF_BEFORE: ("tab:cyan", "-", "o"),
        CW_FULL_BEFORE: ("tab:cyan", "--", "s"),
        LC_DENSE: ("tab:red", "-", "D"),
        LC_ENS: ("tab:orange", "-", "o"),
        LC_RR: ("tab:orange", "--", "s"),
        FLOOR_EMBED: ("tab:gray", ":", "^"),
        FLOOR_EMBED_CW: ("tab:green", ":", "^"),
        FLOOR_SCAN: ("tab:gray", "-.", "v"),
    }
    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    for name, (color, ls, marker) in styles.items():
        if any(name not in row["latency_ms"] for row in result["sizes"]):
            continue
        p50 = [row["latency_ms"][name]["p50"] for row in result["sizes"]]
        p95 = [row["latency_ms"][name]["p95"] for row in result["sizes"]]
        ax.plot(sizes, p50, color=color, linestyle=ls, marker=marker, label=f"{name} (p50)")
        ax.fill_between(sizes, p50, p95, color=color, alpha=0.08)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("latency per query, ms (band: p50 to p95)")
    ax.set_title("Retrieval latency vs corpus size\n(same models, same queries, one process)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def to_markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables (what docs/performance.md quotes)."""
    q = result["quality"]
    lines = [
        f"Machine: {result['machine']}",
        "",
        f"Quality, demo KB, {q['questions']} test questions:",
        "",
        "| pipeline | nDCG@10 | recall@10 |",
        "|---|---|---|",
        *(f"| {n} | {v['ndcg@10']} | {v['recall@10']} |" for n, v in q["metrics"].items()),
        "",
        "Latency per query, ms (p50 / p95):",
        "",
        "| chunks | " + " | ".join(result["series"]) + " |",
        "|---|" + "---|" * len(result["series"]),
    ]
    for row in result["sizes"]:
        cells = [
            f"{row['latency_ms'][n]['p50']} / {row['latency_ms'][n]['p95']}"
            if n in row["latency_ms"]
            else "-"
            for n in result["series"]
        ]
        lines.append(f"| {row['chunks']:,} | " + " | ".join(cells) + " |")
    lines += ["", "Ratios (p50):", ""]
    for row in result["sizes"]:
        lines += [
            f"- {row['chunks']:,} chunks: "
            + "; ".join(f"{k} = {v}" for k, v in row["ratios_p50"].items())
        ]
    lines += [
        "",
        "| ingest | chunks | sentence units | floor s | citewall s | langchain s "
        "| citewall / floor | langchain / floor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ing in result["ingest"]:
        lines.append(
            f"| {ing['label']} | {ing['chunks']} | {ing.get('sentence_units', '')} "
            f"| {ing['embedding_floor_s']} "
            f"| {ing['citewall_s']} | {ing['langchain_s']} | {ing['citewall_over_floor']} "
            f"| {ing['langchain_over_floor']} |"
        )
    lines += ["", "Goals:", ""]
    lines += [
        f"- {'MET' if g['met'] else 'MISSED'}: {k} ({g['figure']})"
        for k, g in result["goals"].items()
    ]
    return "\n".join(lines) + "\n"
