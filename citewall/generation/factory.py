"""Choose the generator from settings (the one place that does)."""

from __future__ import annotations

from citewall.config import Settings
from citewall.errors import ConfigError
from citewall.generation.extractive import ExtractiveGenerator
from citewall.generation.followup import Condenser, ModelCondenser, PlainCondenser, RuleCondenser
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.generation.protocols import Generator
from citewall.retrieval.protocols import Embedder


def build_generator(settings: Settings, embedder: Embedder) -> Generator:
    """``extractive`` (default, offline) or ``openai`` (any OpenAI-compatible endpoint)."""
    if settings.generator == "extractive":
        return ExtractiveGenerator(
            embedder,
            max_internal_sentences=settings.max_internal_sentences or None,
            span_words=settings.verbatim_span_words,
        )
    if settings.generator == "openai":
        if not settings.openai_base_url:
            raise ConfigError("CITEWALL_GENERATOR=openai needs CITEWALL_OPENAI_BASE_URL")
        return OpenAICompatGenerator(
            base_url=settings.openai_base_url,
            model=settings.openai_model,
            api_key=settings.openai_api_key,
            timeout_s=settings.openai_timeout_s,
            retries=settings.openai_retries,
            max_tokens=settings.openai_max_tokens,
            temperature=settings.openai_temperature,
        )
    raise ConfigError(f"CITEWALL_GENERATOR={settings.generator!r}: use extractive or openai")


def build_condenser(settings: Settings, generator: Generator) -> Condenser:
    """How follow-ups become retrieval queries: the model rewrites them when the generator is
    a model (falling back to the rule), the rule otherwise; ``PlainCondenser`` (the message
    alone) when ``CITEWALL_CONVERSATION_CONTEXT=false``."""
    if not settings.conversation_context:
        return PlainCondenser()
    if isinstance(generator, OpenAICompatGenerator):
        return ModelCondenser(generator, timeout_s=settings.condense_timeout_s)
    return RuleCondenser()
