"""Settings, read from the environment (prefix ``CITEWALL_``) and a ``.env`` file, in one place.

Nothing else in citewall reads ``os.environ``. Secrets are ``SecretStr`` so they never show in a
traceback or a log line. A bad value fails at start-up with a message that names the variable.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from citewall.errors import ConfigError

GeneratorName = Literal["extractive", "openai"]
ModelRuntime = Literal["onnx", "torch"]
RerankerPrecision = Literal["fp32", "bf16", "int8"]
#: The languages a knowledge base may be written in (those the other-language reply names).
KbLanguage = Literal["en", "es", "fr", "de", "pt", "it", "nl"]

#: The reranker the design names; loaded from the local model cache or a hub where reachable.
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"

#: Largest document file (PDF, DOCX, HTML, Markdown) ingest reads, checked before reading; also
#: the most a DOCX's zip members or a PDF's pages may inflate to (decompression bombs).
DEFAULT_DOCUMENT_MAX_BYTES = 50 * 1024 * 1024
#: Largest document an admin may upload from the admin pages (the request carries it base64).
DEFAULT_UPLOAD_MAX_BYTES = 10 * 1024 * 1024

#: Limits of ``example_questions``: how many, and how long each.
MAX_EXAMPLE_QUESTIONS = 12
MAX_EXAMPLE_CHARS = 200


def check_example_questions(questions: list[str]) -> list[str]:
    """Example questions as served: trimmed, non-empty, at most 12 of at most 200 characters.

    >>> check_example_questions(["  How do refunds work? "])
    ['How do refunds work?']
    """
    if len(questions) > MAX_EXAMPLE_QUESTIONS:
        raise ValueError(f"at most {MAX_EXAMPLE_QUESTIONS} questions, got {len(questions)}")
    cleaned = [" ".join(q.split()) for q in questions]
    for q in cleaned:
        if not 1 <= len(q) <= MAX_EXAMPLE_CHARS:
            raise ValueError(
                f"each question has 1 to {MAX_EXAMPLE_CHARS} characters, got {len(q)}: {q[:40]!r}"
            )
    return cleaned


_DOMAIN_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def check_origin(origin: str) -> str:
    """A web origin as browsers send it: scheme, host and port only, lower case.

    >>> check_origin("HTTPS://Help.Example.com")
    'https://help.example.com'
    """
    text = origin.strip()
    parts = urlsplit(text)
    if (
        parts.scheme.lower() not in {"http", "https"}
        or not parts.hostname
        or parts.path not in {"", "/"}
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise ValueError(f"not an origin: {origin!r} (e.g. https://help.example.com)")
    return text.rstrip("/").lower()


def is_loopback_host(host: str) -> bool:
    """Whether a URL's host is this machine's loopback: ``localhost``, 127.0.0.0/8 or ``::1``.

    >>> [is_loopback_host(h) for h in ("127.0.0.1", "localhost", "::1", "10.0.0.1")]
    [True, True, True, False]
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_jwks_transport(env: str, url: str, allow_http: bool) -> None:
    """``ValueError`` naming ``env`` unless the JWKS at ``url`` is fetched over https, from a
    loopback host, or ``allow_http`` (CITEWALL_JWKS_ALLOW_HTTP) is set: keys fetched over plain
    http across a network can be swapped by anyone on the path, who then signs anyone in.

    >>> check_jwks_transport("CITEWALL_MEMBER_JWKS_URL", "http://127.0.0.1:9/jwks.json", False)
    """
    parts = urlsplit(url)
    if parts.scheme == "https" or allow_http or is_loopback_host(parts.hostname or ""):
        return
    raise ValueError(
        f"{env} must be an https URL (got {url!r}): plain http is accepted only from a loopback "
        "host (127.0.0.1, ::1, localhost), or everywhere with CITEWALL_JWKS_ALLOW_HTTP=true"
    )


class Settings(BaseSettings):
    """Every knob citewall has. See README "Configuration" for the table."""

    model_config = SettingsConfigDict(
        env_prefix="CITEWALL_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        validate_default=True,
    )

    # -- where things live -------------------------------------------------------------------
    data_dir: Path = Field(default=Path("./data"), description="SQLite file, Chroma, BM25 index.")
    model_cache_dir: Path | None = Field(
        default=None,
        description="Where ONNX exports are cached (default: <data dir>/models). Several data "
        "dirs on one host (replicas, test runs) can share one, so a model is exported once.",
    )
    database_url: str | None = Field(default=None, description="Overrides the SQLite file.")
    chroma_url: str | None = Field(default=None, description="Use a Chroma server over HTTP.")
    chroma_collection: str = "citewall_cards"

    # -- models --------------------------------------------------------------------------------
    embedding_model: str | None = Field(
        default=None, description="Name or path; default: the packaged all-MiniLM-L6-v2."
    )
    reranker_model: str = DEFAULT_RERANKER
    reranker_enabled: bool = True
    reranker_max_length: int = Field(default=256, ge=16, le=4096)
    rerank_top_n: int = Field(default=20, ge=1, le=200)
    rerank_budget_ms: int = Field(default=1500, ge=1)
    model_runtime: ModelRuntime = Field(
        default="onnx",
        description="Runtime of the embedder and the cross-encoder. onnx: exported once into "
        "the data dir, run by onnxruntime (faster at equal output, docs/performance.md); "
        "torch: sentence-transformers. A failed onnx load falls back to torch, saying why.",
    )
    reranker_precision: RerankerPrecision = Field(
        default="fp32",
        description="Cross-encoder precision. int8: dynamically quantised ONNX (onnx runtime "
        "only); bf16: CPU bfloat16 autocast (torch runtime only, fast only on CPUs with "
        "native bf16). Elsewhere fp32 runs, with a logged reason.",
    )
    torch_threads: int | None = Field(
        default=1,
        ge=1,
        le=256,
        description="Intra-op threads per model call (torch and onnxruntime). 1: the server "
        "runs requests in parallel, and on a busy 2-core machine two threads per call made a "
        "query embedding 10-30x slower (docs/performance.md). 'auto' lets the runtime choose.",
    )

    # -- retrieval -----------------------------------------------------------------------------
    dense_top_k: int = Field(default=40, ge=1, le=1000)
    bm25_top_k: int = Field(default=40, ge=1, le=1000)
    # Tuned on kb/eval/questions.dev.jsonl by `citewall eval retrieval` (docs/retrieval.md).
    rrf_k: int = Field(default=10, ge=1)
    rrf_dense_weight: float = Field(default=1.0, ge=0.0)
    rrf_bm25_weight: float = Field(default=1.0, ge=0.0)
    context_k: int = Field(default=5, ge=1, le=50, description="Cards given to the generator.")

    # -- answering -----------------------------------------------------------------------------
    conversation_context: bool = Field(
        default=True,
        description="Retrieve a follow-up question with the conversation (the rule, or a model "
        "rewrite with the openai generator); false: every message alone.",
    )
    condense_timeout_s: float = Field(
        default=5.0, gt=0, description="Timeout of the model call that rewrites a follow-up."
    )
    kb_language: KbLanguage = Field(
        default="en",
        description="The language of the knowledge base: a question confidently written in "
        "another gets one sentence, in its own language where possible, saying so.",
    )
    abstention: bool = Field(
        default=True,
        description="Answer 'not found' when the retrieved context cannot answer the question.",
    )
    # Tuned on kb/eval/{questions,unanswerable}.dev.jsonl (`citewall eval` reports the dev tuning)
    # (docs/evaluation.md).
    # Applied when no calibration is stored; set explicitly, they override the calibration.
    abstain_min_dense: float = Field(default=0.43, ge=-1.0, le=1.0)
    abstain_min_coverage: float = Field(default=0.0, ge=0.0, le=1.0)
    calibration: bool = Field(
        default=True,
        description="Fit the abstention thresholds on the KB at every ingest that changes it "
        "(retrieval.calibration); false: the abstain_* settings apply.",
    )
    calibration_max_cards: int = Field(
        default=200,
        ge=1,
        description="Cards sampled (deterministically) for the calibration's pseudo-questions "
        "and near misses: bounds its cost on a large KB.",
    )
    knowledge_gap_support: float = Field(
        default=0.5,
        ge=-1.0,
        le=1.0,
        description="Covered questions answered with support (best dense similarity) below "
        "this are listed as answered badly in the knowledge-gaps report.",
    )
    # Chosen on the demo's dev split (docs/evaluation.md, "Knowledge gaps").
    knowledge_gap_min_coverage: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="Answered questions with low support that no retrieved card covers this "
        "share of (of the question's content terms) are listed as knowledge gaps, with the "
        "not_found ones.",
    )
    chunk_max_words: int = Field(default=180, ge=20, le=2000)
    document_max_bytes: int = Field(
        default=DEFAULT_DOCUMENT_MAX_BYTES,
        ge=1,
        description="A document file larger than this is refused before it is read, and so "
        "is a DOCX or PDF whose content would inflate past it.",
    )
    upload_max_bytes: int = Field(
        default=DEFAULT_UPLOAD_MAX_BYTES,
        ge=1,
        description="A document uploaded from the admin pages larger than this is refused "
        "(413) before it is stored; it is then read under CITEWALL_DOCUMENT_MAX_BYTES as any "
        "document is.",
    )

    # -- corpus protection (docs/distillation.md) ---------------------------------------------
    exposure_budget_cards: int = Field(
        default=25,
        ge=0,
        description="Distinct internal cards whose knowledge may reach one member in a rolling "
        "window; past it, that member's answers use external cards only. 0 disables.",
    )
    exposure_window_hours: float = Field(
        default=168.0, gt=0, le=24 * 366, description="The rolling window of the budget."
    )
    max_internal_sentences: int = Field(
        default=3,
        ge=0,
        description="Sentences of one answer that may repeat internal text verbatim; the rest "
        "are dropped. 0 disables the cap.",
    )
    staff_only_check: bool = Field(
        default=True,
        description="Remove answer sentences the staff-only detector flags (internal tools, "
        "codes, handoffs, instructions to staff) before the member sees them.",
    )
    verbatim_span_words: int = Field(
        default=10,
        ge=4,
        le=200,
        description="Consecutive words shared with an internal card that make an answer "
        "sentence a verbatim copy.",
    )

    # -- members' data (docs/privacy.md) -------------------------------------------------------
    retention_days: int | None = Field(
        default=None,
        ge=1,
        le=36600,
        description="Remove the words of conversations not updated for this many days "
        "(questions, answers, feedback comments, retrieval queries); the analytics rows stay. "
        "Unset: kept until a member's data is erased.",
    )
    audit_retention_days: int | None = Field(
        default=None,
        ge=1,
        le=36600,
        description="Keep audit log lines this many days (unset: forever). Retention of "
        "conversations never trims the audit log.",
    )
    retention_interval_s: float = Field(
        default=3600.0,
        ge=1.0,
        le=7 * 24 * 3600.0,
        description="How often `citewall serve` runs retention (one replica at a time).",
    )

    # -- generation ----------------------------------------------------------------------------
    generator: GeneratorName = "extractive"
    openai_base_url: str | None = None
    openai_model: str = "gpt-4o-mini"
    openai_api_key: SecretStr | None = None
    openai_timeout_s: float = Field(default=60.0, gt=0)
    openai_retries: int = Field(default=2, ge=0, le=10)
    openai_max_tokens: int = Field(default=512, ge=16)
    openai_temperature: float = Field(default=0.0, ge=0.0, le=2.0)

    # -- the web UI ----------------------------------------------------------------------------
    example_questions: list[str] = Field(
        default_factory=list,
        description="Questions suggested on an empty conversation, a JSON list "
        "('[\"How long do refunds take?\"]'). Write them about public (external) content: "
        "every member sees them. `citewall demo` uses the demo KB's examples.json when unset.",
    )

    # -- sign-in (docs/sign-in.md) ---------------------------------------------------------------
    member_jwt_secret: SecretStr | None = Field(
        default=None,
        description="Members signed in by the host site with HS256 tokens under this shared "
        "secret (at least 32 bytes). Exclusive with CITEWALL_MEMBER_JWKS_URL.",
    )
    member_jwks_url: str | None = Field(
        default=None, description="Members signed in with RS256/ES256 tokens under this JWKS."
    )
    member_jwt_issuer: str | None = Field(
        default=None, description="The `iss` member tokens must carry (required with either)."
    )
    member_jwt_audience: str | None = Field(
        default=None, description="The `aud` member tokens must carry (required with either)."
    )
    member_jwt_groups_claim: str = Field(
        default="groups",
        min_length=1,
        max_length=100,
        description="The member token's claim holding the member's groups (a list of strings, "
        "or one string), read at every sign-in: the audiences whose cards they may be answered "
        "from (docs/audiences.md).",
    )
    member_jwt_max_lifetime_s: int = Field(
        default=3600,
        ge=10,
        le=86400,
        description="Longest a host token may live (`exp` - `iat`): host tokens are short-lived.",
    )
    jwt_leeway_s: int = Field(
        default=30, ge=0, le=300, description="Clock skew allowed on `exp`, `iat`, `nbf`."
    )
    jwks_timeout_s: float = Field(default=3.0, gt=0, le=30, description="JWKS fetch timeout.")
    jwks_allow_http: bool = Field(
        default=False,
        description="Accept JWKS URLs over plain http from any host. Off, a JWKS is fetched over "
        "https, or over http from a loopback host (127.0.0.0/8, ::1, localhost) only.",
    )
    jwks_cache_s: int = Field(
        default=300, ge=1, description="How long a fetched JWKS is used before it is refetched."
    )
    session_ttl_s: int = Field(
        default=3600,
        ge=60,
        le=30 * 86400,
        description="Life of the session citewall issues for a host token; when it ends, the "
        "member needs a fresh host token (a member the host no longer signs for is out).",
    )
    admin_proxy_jwks_url: str | None = Field(
        default=None,
        description="Trust an identity-aware proxy's signed assertion for the admin role: its "
        "JWKS (Cloudflare Access: https://TEAM.cloudflareaccess.com/cdn-cgi/access/certs). "
        "Set, admin routes accept only the assertion; admin bearer tokens stop working there.",
    )
    admin_proxy_issuer: str | None = Field(default=None, description="The assertion's `iss`.")
    admin_proxy_audience: str | None = Field(
        default=None, description="The assertion's `aud` (Cloudflare: the application AUD tag)."
    )
    admin_proxy_header: str = Field(
        default="Cf-Access-Jwt-Assertion",
        description="The request header carrying the assertion (a bare JWT or 'Bearer JWT').",
    )
    admin_proxy_email_domains: list[str] = Field(
        default_factory=list,
        description="Email domains whose verified `email` claim makes an admin, a JSON list.",
    )
    admin_proxy_groups: list[str] = Field(
        default_factory=list, description="Groups (in the groups claim) that make an admin."
    )
    admin_proxy_groups_claim: str = Field(default="groups", min_length=1, max_length=100)
    embed_origins: list[str] = Field(
        default_factory=list,
        description="Origins that may embed the member chat (`frame-ancestors`) and call the API "
        "from their pages (CORS), a JSON list: ['https://help.example.com'].",
    )

    # -- crawling a help center (citewall ingest --site; docs/knowledge.md) --------------------
    crawl_allow_private: bool = Field(
        default=False,
        description="Let the crawler connect to private and loopback addresses. Off, a page "
        "whose host resolves there is refused (a sitemap must not reach the internal network); "
        "an intranet site, tests and benchmarks on a local server turn it on.",
    )
    crawl_allow_link_local: bool = Field(
        default=False,
        description="Let the crawler connect to link-local addresses (169.254.0.0/16, "
        "fe80::/10) and cloud metadata endpoints (169.254.169.254, fd00:ec2::254, "
        "100.100.100.200, ...), which CITEWALL_CRAWL_ALLOW_PRIVATE does not allow: they hold "
        "a machine's credentials, not a help center.",
    )
    crawl_concurrency: int = Field(
        default=4, ge=1, le=32, description="Pages fetched at once (all sites together)."
    )
    crawl_delay_s: float = Field(
        default=0.5,
        ge=0.0,
        le=60.0,
        description="Least time between two requests to one host; a robots.txt Crawl-delay "
        "or Request-rate asking for more wins.",
    )
    crawl_timeout_s: float = Field(
        default=15.0,
        gt=0.0,
        le=300.0,
        description="Longest one response may take, connection to last byte; past it the URL "
        "is refused as timed out.",
    )
    crawl_max_bytes: int = Field(
        default=5_000_000,
        ge=1024,
        le=100_000_000,
        description="Largest page body read; a larger page is refused without reading it all.",
    )
    crawl_max_pages: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="Most pages one ingest fetches; pages past it are refused and --prune is "
        "skipped for their site (its list was not read to the end).",
    )
    sync_scheduler: bool = Field(
        default=True,
        description="Whether `citewall serve` syncs the registered sources whose schedule is "
        "due (on or off); off leaves syncing to `citewall sync` and the admin pages.",
    )
    sync_poll_s: float = Field(
        default=60.0,
        ge=0.0,
        le=24 * 3600.0,
        description="How often `citewall serve` looks for registered sources whose schedule is "
        "due and syncs them (one replica per source); 0 turns the schedule off.",
    )
    sync_stale_after: int = Field(
        default=3,
        ge=1,
        le=1000,
        description="Syncs in a row that could not read a page (a timeout, a 5xx) before the "
        "page is marked stale for admins; it stays served until the site says it is gone.",
    )
    crawl_user_agent: str = Field(
        default="citewall-crawler/0.1",
        min_length=1,
        max_length=200,
        description="The User-Agent the crawler sends and matches robots.txt groups with.",
    )

    # -- handoff to a person (docs/handoff.md) -------------------------------------------------
    handoff_webhook_url: str | None = Field(
        default=None,
        description="The helpdesk endpoint that receives a member's request for a person (a "
        "signed JSON POST). Unset: members are not offered the handoff.",
    )
    handoff_webhook_secret: SecretStr | None = Field(
        default=None,
        description="Signs each delivery (X-Citewall-Signature); at least 16 characters, e.g. "
        "`openssl rand -hex 32`. Required with CITEWALL_HANDOFF_WEBHOOK_URL.",
    )
    handoff_include_internal: bool = Field(
        default=False,
        description="Put the answers' internal sources in the handoff too. The helpdesk is "
        "staff, but another system: off by default.",
    )
    handoff_retry_hours: float = Field(
        default=24.0,
        gt=0,
        le=24 * 30,
        description="How long a handoff the helpdesk does not accept is retried before it is "
        "marked failed.",
    )
    handoff_timeout_s: float = Field(
        default=10.0, gt=0, le=120, description="How long one delivery attempt may take."
    )
    handoff_poll_s: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="How often `citewall serve` looks for handoffs due for delivery.",
    )
    public_url: str | None = Field(
        default=None,
        description="Where people reach this citewall, e.g. https://help.example.com: the "
        "start of the admin links a handoff carries (unset: links are paths).",
    )

    resolution_window_hours: float = Field(
        default=72.0,
        gt=0,
        le=24 * 90,
        description="How long after its last message a conversation with no sign of failure "
        "waits before it counts as resolved (docs/handoff.md, resolution analytics).",
    )

    # -- API limits ----------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    max_message_chars: int = Field(default=4000, ge=1)
    max_conversation_messages: int = Field(default=200, ge=2)
    rate_limit_per_minute: int = Field(default=120, ge=0, description="Per member; 0 disables.")
    redis_url: str | None = Field(
        default=None,
        description="Redis shared by every replica for the rate limit, e.g. "
        "redis://127.0.0.1:6379/0. Unset: each process keeps its own window.",
    )
    redis_key_prefix: str = Field(
        default="citewall:",
        min_length=1,
        max_length=100,
        description="Prefix of citewall's Redis keys: deployments sharing one Redis each need "
        "their own.",
    )
    rate_limit_redis_down: Literal["open", "closed"] = Field(
        default="open",
        description="With Redis unreachable: open lets requests through, closed refuses them "
        "with a 503. Either way /readyz and citewall_rate_limit_redis_errors_total say so.",
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description="Set, /metrics answers only requests with `Authorization: Bearer <token>` "
        "(at least 16 characters, e.g. `openssl rand -hex 32`). Unset, /metrics is open: keep "
        "it off the public internet (a proxy rule, or this token).",
    )
    keep_alive_timeout_s: int = Field(
        default=5,
        ge=1,
        le=300,
        description="How long `citewall serve` keeps an idle connection open between requests.",
    )
    body_read_timeout_s: float = Field(
        default=15.0,
        gt=0,
        le=600,
        description="Longest a request body may take to arrive, from the end of its headers; "
        "past it the request is answered 408 and the connection closed.",
    )
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    malloc_arena_max: int | None = Field(
        default=2, ge=0, le=64, description="glibc malloc arenas for `citewall serve` (0: off)."
    )

    @field_validator("torch_threads", mode="before")
    @classmethod
    def _auto_threads(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() in {"", "auto"} else value

    @field_validator("example_questions")
    @classmethod
    def _check_examples(cls, value: list[str]) -> list[str]:
        return check_example_questions(value)

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        try:
            url = make_url(value)
        except (ArgumentError, ValueError) as exc:  # ValueError: e.g. a non-numeric port
            raise ValueError(
                "not a database URL; expected e.g. sqlite:///path/citewall.db or "
                "postgresql+psycopg://user@host:5432/dbname"
            ) from exc
        if url.get_backend_name() not in {"sqlite", "postgresql"}:
            raise ValueError(
                f"unsupported database {url.get_backend_name()!r}; use sqlite or postgresql"
            )
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in {"redis", "rediss", "unix"}:
            raise ValueError("must be a redis:// (or rediss://, unix://) URL")
        return value

    @field_validator("chroma_url", "openai_base_url", "handoff_webhook_url", "public_url")
    @classmethod
    def _check_http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host, e.g. http://127.0.0.1:8001")
        return value.rstrip("/")

    @field_validator("member_jwks_url", "admin_proxy_jwks_url")
    @classmethod
    def _check_jwks_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host")
        return value

    @field_validator("metrics_token")
    @classmethod
    def _check_metrics_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or value.get_secret_value() == "":
            return None
        if len(value.get_secret_value()) < 16:
            raise ValueError(
                "must be at least 16 characters, e.g. the output of openssl rand -hex 32"
            )
        return value

    @field_validator("crawl_user_agent")
    @classmethod
    def _check_user_agent(cls, value: str) -> str:
        if not all(" " <= ch <= "~" for ch in value) or value != value.strip():
            raise ValueError(
                "must be printable ASCII without leading or trailing spaces, "
                "e.g. 'citewall-crawler/0.1 (+https://help.example.com/bot)'"
            )
        return value

    @field_validator("embed_origins")
    @classmethod
    def _check_origins(cls, value: list[str]) -> list[str]:
        return [check_origin(origin) for origin in value]

    @field_validator("admin_proxy_email_domains")
    @classmethod
    def _check_domains(cls, value: list[str]) -> list[str]:
        domains = [d.strip().lower().lstrip("@") for d in value]
        for domain in domains:
            if not _DOMAIN_RE.fullmatch(domain):
                raise ValueError(f"not an email domain: {domain!r} (e.g. example.com)")
        return domains

    @model_validator(mode="after")
    def _check_sign_in(self) -> Settings:
        if self.member_jwt_secret is not None and self.member_jwks_url:
            raise ValueError(
                "set CITEWALL_MEMBER_JWT_SECRET (HS256) or CITEWALL_MEMBER_JWKS_URL "
                "(RS256/ES256), not both"
            )
        secret = self.member_jwt_secret.get_secret_value() if self.member_jwt_secret else None
        if secret is not None and len(secret.encode("utf-8")) < 32:
            raise ValueError("CITEWALL_MEMBER_JWT_SECRET must be at least 32 bytes")
        for env, url in (
            ("CITEWALL_MEMBER_JWKS_URL", self.member_jwks_url),
            ("CITEWALL_ADMIN_PROXY_JWKS_URL", self.admin_proxy_jwks_url),
        ):
            if url:
                check_jwks_transport(env, url, self.jwks_allow_http)
        if self.member_sign_in and not (self.member_jwt_issuer and self.member_jwt_audience):
            raise ValueError(
                "member sign-in needs CITEWALL_MEMBER_JWT_ISSUER and CITEWALL_MEMBER_JWT_AUDIENCE"
            )
        if self.admin_proxy:
            if not (self.admin_proxy_issuer and self.admin_proxy_audience):
                raise ValueError(
                    "CITEWALL_ADMIN_PROXY_JWKS_URL needs CITEWALL_ADMIN_PROXY_ISSUER and "
                    "CITEWALL_ADMIN_PROXY_AUDIENCE"
                )
            if not (self.admin_proxy_email_domains or self.admin_proxy_groups):
                raise ValueError(
                    "CITEWALL_ADMIN_PROXY_JWKS_URL needs CITEWALL_ADMIN_PROXY_EMAIL_DOMAINS or "
                    "CITEWALL_ADMIN_PROXY_GROUPS: who may be an admin"
                )
        return self

    @model_validator(mode="after")
    def _check_handoff(self) -> Settings:
        if not self.handoff_webhook_url:
            return self
        secret = self.handoff_webhook_secret
        if secret is None or len(secret.get_secret_value()) < 16:
            raise ValueError(
                "CITEWALL_HANDOFF_WEBHOOK_URL needs CITEWALL_HANDOFF_WEBHOOK_SECRET of at least "
                "16 characters (e.g. the output of openssl rand -hex 32): the helpdesk checks "
                "the signature with it"
            )
        return self

    @model_validator(mode="after")
    def _check_generator(self) -> Settings:
        if self.generator == "openai" and not self.openai_base_url:
            raise ValueError(
                "CITEWALL_GENERATOR=openai needs CITEWALL_OPENAI_BASE_URL "
                "(e.g. http://127.0.0.1:8080/v1)"
            )
        return self

    # -- derived -------------------------------------------------------------------------------
    @property
    def member_sign_in(self) -> bool:
        """Whether members may sign in with a host site's token."""
        return self.member_jwt_secret is not None or bool(self.member_jwks_url)

    @property
    def shared_kb(self) -> bool:
        """Whether the KB's published artifacts are shared through the database: on PostgreSQL
        with a Chroma server, every replica reads the KB from shared services alone (its data
        dir is a local cache)."""
        return bool(self.chroma_url) and self.sqlalchemy_url.startswith("postgresql")

    @property
    def admin_proxy(self) -> bool:
        """Whether the admin role comes from an identity-aware proxy's assertion."""
        return bool(self.admin_proxy_jwks_url)

    @property
    def handoff(self) -> bool:
        """Whether members may ask for a person (a helpdesk webhook is configured)."""
        return bool(self.handoff_webhook_url)

    @property
    def regenerate_varies(self) -> bool:
        """Whether answering a question again can give a different answer. The extractive
        generator is deterministic (same question and KB, same answer); a model may word it
        anew."""
        return self.generator != "extractive"

    # -- derived paths -------------------------------------------------------------------------
    @property
    def sqlalchemy_url(self) -> str:
        """The database URL in use: CITEWALL_DATABASE_URL, else a SQLite file in the data dir."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'citewall.db').resolve()}"

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def bm25_dir(self) -> Path:
        return self.data_dir / "bm25"

    @property
    def calibration_dir(self) -> Path:
        """The abstention calibration fitted at ingest (``retrieval.calibrated``)."""
        return self.data_dir / "calibration"

    @property
    def abstain_override(self) -> bool:
        """Whether the operator set an abstention threshold explicitly (it then wins over the
        calibration)."""
        return bool({"abstain_min_dense", "abstain_min_coverage"} & self.model_fields_set)

    @property
    def sentences_dir(self) -> Path:
        """Sentence vectors computed at ingest (``retrieval.sentence_store``)."""
        return self.data_dir / "sentences"

    @property
    def onnx_dir(self) -> Path:
        """The cache of ONNX exports, one folder per model content and export format."""
        return (self.model_cache_dir or self.data_dir / "models") / "onnx"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, turning a validation error into a ConfigError.

    >>> load_settings(data_dir="/tmp/cw").data_dir.name
    'cw'
    """
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except SettingsError as exc:  # a list or object setting whose text is not JSON
        named = re.search(r'field "(\w+)"', str(exc))
        env = f"CITEWALL_{named.group(1).upper()}" if named else "a setting"
        raise ConfigError(
            f"invalid configuration: {env} is not valid JSON; write a JSON list, "
            'e.g. ["How long do refunds take?"]'
        ) from None
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err.get("loc", ())) or "settings"
            env = f"CITEWALL_{field.upper()}" if field != "settings" else "settings"
            problems.append(f"{env}: {err.get('msg', 'invalid value')}")
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return load_settings()


def hf_offline_env() -> dict[str, str]:
    """Environment that keeps Hugging Face libraries from reaching a hub for packaged models."""
    return {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
