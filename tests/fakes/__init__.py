"""Test doubles for true outer boundaries only (a remote LLM)."""
