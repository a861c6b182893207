"""Retrieval benchmark script: same as `citewall bench retrieval` (see --help).

python benchmarks/retrieval.py --sizes 1000,10000,50000
"""

from citewall.cli.bench import app

if __name__ == "__main__":
    app(["retrieval", *__import__("sys").argv[1:]])
