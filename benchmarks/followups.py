"""Follow-up retrieval on the labelled conversations of the three knowledge bases, side by side:
recall@5 (and nDCG@10) of the gold cards of the second message retrieved alone, with the
conversation by the product's rule (``RuleCondenser``, the extractive generator's), and with
another conversation's first question (the negative control); topic switches alone and with the
conversation (which must not be hurt).

    python benchmarks/followups.py                 # dev and test, demo, Zulip and FastAPI
    python benchmarks/followups.py --split dev --kb zulip

Each KB is ingested into a throwaway data dir with the production settings (the packaged
embedder, Chroma, bm25s); scoring is ``citewall_evals.retrieval.followups.score_followups``,
the same as ``citewall eval``'s follow-up stage.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from citewall.generation.followup import RuleCondenser
from citewall_evals.data import DATASETS
from citewall_evals.retrieval.followups import load_followups, score_followups
from citewall_evals.workspace import build_workspace

COLUMNS = ("alone", "context", "control", "switch_alone", "switch_context")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "test", "both"], default="both")
    parser.add_argument("--kb", choices=[*DATASETS, "all"], default="all")
    args = parser.parse_args()
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    kbs = list(DATASETS) if args.kb == "all" else [args.kb]
    lines = [
        "| KB | split | follow-ups | alone | with the conversation | control | "
        "switches | switch alone | switch with the conversation |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kb in kbs:
        dataset = DATASETS[kb]
        with tempfile.TemporaryDirectory(prefix=f"citewall-followups-{kb}-") as tmp:
            ws = build_workspace(Path(tmp) / "data", kb_paths=(dataset.corpus,))
            try:
                for split in splits:
                    scores = score_followups(
                        ws.runtime.retriever, RuleCondenser(), load_followups(split, dataset)
                    ).as_dict()
                    cells = {
                        c: f"{scores[f'{c}_recall5']:.3f} ({scores[f'{c}_ndcg']:.3f})"
                        for c in COLUMNS
                    }
                    lines.append(
                        f"| {kb} | {split} | {scores['followups']} | {cells['alone']} | "
                        f"{cells['context']} | {cells['control']} | {scores['switches']} | "
                        f"{cells['switch_alone']} | {cells['switch_context']} |"
                    )
                    print(lines[-1], flush=True)
            finally:
                ws.close()
    print("\nrecall@5 (nDCG@10 in brackets); the rule: citewall/generation/followup.py\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
