"""citewall: retrieval-augmented chat with honest citations and a protected corpus."""

__version__ = "0.1.0"
