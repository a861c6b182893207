"""Pipelines users would assemble instead of citewall, for `benchmarks/compare.py`.

They need the ``bench`` extra: ``pip install -e '.[bench]'``.
"""
