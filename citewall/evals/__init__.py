"""The evaluation harness and the red-team gate (``citewall eval``).

One concept per module:

- ``harness``: the run (workspace -> judge -> retrieval -> replay -> gate -> baseline -> report);
  ``cli.run`` is the typer command.
- ``workspace``: a throwaway data dir with the demo and hostile KBs, the real runtime, users.
- ``support`` / ``calibration``: the support judge and its calibration on hand labels.
- ``citation_quality``: ALCE-style citation recall and precision.
- ``replay``: questions through the API; full stored answer vs the member's view.
- ``ir_metrics``: nDCG@10, recall@10, MRR per retrieval path.
- ``catalogue`` / ``leaks`` / ``member_view`` / ``access`` / ``gate`` / ``redteam_cases``: the
  red-team gate; ``adversary``: the OpenAI-compatible model that obeys every injection.
- ``baseline``, ``results``, ``report_markdown``, ``report_html``, ``svg``: the report.
"""
