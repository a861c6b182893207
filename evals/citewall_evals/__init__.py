"""Measurement, apart from what it measures: ``citewall eval`` and ``citewall bench``.

Development commands: they measure citewall on the labelled data of a source checkout
(``data``). Everything they run is production code, called rather than copied.

- ``harness``: the evaluation run (workspace -> judge -> retrieval -> replay -> dangling
  references -> red-team gate -> baseline -> report); ``workspace``: a throwaway data dir with
  the demo and hostile KBs, the real runtime and users; ``questions``: the labelled questions and
  their one loader; ``member_answers``: asking as a member; ``generators``: the app per
  generator; ``llm_server``: the scripted OpenAI-compatible server (the one outer boundary);
  ``local_model``: SmolLM2 on llama.cpp's server.
- ``retrieval/``: ranking metrics, per-path rankings through the retriever's stages, ANN recall,
  ``citewall eval retrieval``.
- ``quality/``: the support judge and its calibration, citation recall and precision, the replay,
  dangling references in member prose.
- ``redteam/``: the cases, the adversarial model, the leak rules, the access probes, the gate.
- ``extraction/``: ``citewall eval extraction``: extraction attackers with a member token, the
  corpus protection off and on, the honest workload against the exposure budget.
- ``report/``: the result, the baseline comparison, the Markdown and HTML reports.
- ``bench/``: one percentile, one server starter, the synthetic corpus, retrieval and API load.
"""
