"""The examples in citewall's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

from .test_imports import _modules

MODULES = sorted(_modules())


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
