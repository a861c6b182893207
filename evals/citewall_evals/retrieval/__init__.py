"""Retrieval evaluation: ranking metrics, per-path rankings through the production retriever's
own stages, fusion tuning, ANN recall."""
