"""The evaluation package that `citewall eval` and `citewall bench` run.

The harness is not part of citewall's wheel: it is its own distribution in the ``evals/`` folder
of a source checkout (``citewall-evals``, package ``citewall_evals``), installed by the test
command (``scripts/install --test``). The commands import it when they run; without it they stop
with exit code 2 and say how to install it.
"""

from __future__ import annotations

import importlib.util

from citewall.errors import UserError

PACKAGE = "citewall_evals"
MISSING = (
    "the evaluation package (citewall_evals) is not installed: `citewall eval` and "
    "`citewall bench` measure the labelled data of a citewall source checkout; from the "
    "checkout, install it with `pip install -e evals/` (or `scripts/install --test`)"
)


def require_evals() -> None:
    """Nothing when ``citewall_evals`` can be imported; else a ``UserError`` saying how to
    install it (the CLI turns it into exit code 2)."""
    if importlib.util.find_spec(PACKAGE) is None:
        raise UserError(MISSING)
