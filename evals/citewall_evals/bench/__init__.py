"""Benchmark machinery shared by ``citewall bench`` and the scripts in ``benchmarks/``: one
percentile rule, one way to start a real server, the synthetic corpus, retrieval and API load."""
