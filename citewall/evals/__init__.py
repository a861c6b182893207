"""The evaluation harness and the red-team gate (``citewall eval``).

One concept per module:

- ``harness``: the run (workspace -> judge -> retrieval -> replay -> dangling references ->
  gate -> baseline -> report); ``cli.run`` is the typer command.
- ``workspace``: a throwaway data dir with the demo and hostile KBs, the real runtime, users.
- ``support`` / ``calibration``: the support judge and its calibration on hand labels.
- ``citation_quality``: ALCE-style citation recall and precision.
- ``member_answers``: questions on ``POST /api/v1/chat`` as a member; what the member got.
- ``replay``: questions through the API; citation quality of the stored answers.
- ``dangling`` / ``dangling_check``: references in member prose to sources the member cannot
  see; the detector against its hand labels, and the rate per generator.
- ``generators`` / ``local_model``: the apps per generator; SmolLM2 on llama.cpp's server.
- ``ir_metrics``: nDCG@10, recall@10, MRR per retrieval path.
- ``catalogue`` / ``leaks`` / ``member_view`` / ``access`` / ``gate`` / ``redteam_cases``: the
  red-team gate; ``adversary``: the OpenAI-compatible model that obeys every injection.
- ``baseline``, ``results``, ``report_markdown``, ``report_html``, ``svg``: the report.
"""
