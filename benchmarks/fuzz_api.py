"""Full schema-driven fuzzing run of the citewall API (schemathesis v4, in process).

Every operation of the OpenAPI schema, ``--cases`` generated cases per operation in positive
mode and as many in negative (schema-violating) mode, against a real runtime (SQLite, embedded
Chroma, the packaged embedder, the extractive generator) over 14 demo-KB cards. In positive
mode the ``{id}`` routes also get one case per real record (3 conversations the member starts
first, the 14 cards), so their 200 path is fuzzed too. Checks, per case: no 5xx, declared
content type and headers, body matching the declared schema, and ``ignored_auth`` (the same
request without a token and with a bad one must be refused). The status codes the schema does
not declare are counted separately (a known gap, see docs/reliability.md). Exit 1 on any server
error or check failure, or when an ``{id}`` route answered no real id with a 2xx.

    python benchmarks/fuzz_api.py --cases 100 --out benchmarks/results/fuzz_api

The test suite runs the same code at 3 cases per operation (tests/reliability/test_fuzz_api.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}.items():
    os.environ.setdefault(key, value)
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table, one row per operation and mode."""
    lines = [
        f"Fuzzing: {report['cases_per_operation']} cases per operation and mode, "
        f"{report['total_cases']} cases in {report['seconds']:.0f} s; "
        f"server errors: {report['server_errors']}, check failures: {report['failures']}; "
        f"{report['real_id_cases']} of the cases name real records.",
        "",
        "| operation | mode | cases | real ids | statuses | 5xx | failures | undocumented |",
        "|---|---|---:|---:|---|---:|---:|---|",
    ]
    for op in report["operations"]:
        statuses = ", ".join(f"{k}: {v}" for k, v in op["statuses"].items()) or op["note"]
        undocumented = ", ".join(f"{k}: {v}" for k, v in op["undocumented_statuses"].items())
        lines.append(
            f"| `{op['operation']}` | {op['mode']} | {op['cases']} | {op['real_id_cases']} | "
            f"{statuses} | {op['server_errors']} | {op['failures']} | {undocumented or '-'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100, help="cases per operation and mode")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks/results/fuzz_api")
    args = parser.parse_args(argv)

    from reliability.fuzzing import fuzz_operation, load_schema, operations, real_path_ids
    from reliability.rig import build_rig

    from citewall.config import load_settings
    from citewall.retrieval.embedder import load_embedder

    embedder = load_embedder(load_settings())
    with tempfile.TemporaryDirectory(prefix="citewall-fuzz-") as tmp:
        data_dir = Path(tmp) / "data"
        rig = build_rig(data_dir, embedder)
        try:
            schema = load_schema(rig.app)
            path_ids = real_path_ids(rig)
            t0 = time.perf_counter()
            results = []
            for op in operations(schema):
                for negative in (False, True):
                    stats = fuzz_operation(
                        op,
                        rig.tokens,
                        max_examples=args.cases,
                        negative=negative,
                        path_ids=path_ids,
                    )
                    results.append(stats.as_dict())
                    print(
                        f"{stats.label:55s} {stats.mode:8s} cases={stats.cases:4d} "
                        f"real_ids={stats.real_id_cases:2d} 5xx={stats.server_errors} "
                        f"failures={len(stats.failures)} statuses={dict(stats.statuses)}",
                        flush=True,
                    )
            seconds = time.perf_counter() - t0
        finally:
            rig.close()
    report = {
        "cases_per_operation": args.cases,
        "operations_in_schema": len({r["operation"] for r in results}),
        "total_cases": sum(r["cases"] for r in results),
        "real_id_cases": sum(r["real_id_cases"] for r in results),
        "server_errors": sum(r["server_errors"] for r in results),
        "failures": sum(r["failures"] for r in results),
        "seconds": round(seconds, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "operations": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    # An {id} route whose real ids were all refused never reached its 200 path.
    unreached = [
        r["operation"]
        for r in results
        if r["real_id_cases"] and not any(200 <= int(k) < 300 for k in r["statuses"])
    ]
    for label in unreached:
        print(f"error: no real id reached the 2xx path of {label}", file=sys.stderr)
    return 1 if report["server_errors"] or report["failures"] or unreached else 0


if __name__ == "__main__":
    sys.exit(main())
