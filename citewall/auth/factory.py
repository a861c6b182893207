"""Sign-in built once per process from the settings: the member host sign-in and the admin
proxy, each None when not configured. Verifiers and JWKS caches live as long as the app."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from citewall.auth.jwks import JwksCache
from citewall.auth.keys import KeySource, SharedSecret
from citewall.auth.member import MemberSignIn
from citewall.auth.proxy import MAX_ASSERTION_LIFETIME_S, AdminProxy
from citewall.auth.verifier import JwtVerifier
from citewall.config import Settings


@dataclass(frozen=True, slots=True)
class SignIn:
    """What the settings enable: members by host token, admins by proxy assertion."""

    member: MemberSignIn | None
    admin_proxy: AdminProxy | None


def build_sign_in(settings: Settings, clock: Callable[[], datetime]) -> SignIn:
    """The sign-in ``settings`` configure. ``clock`` (the runtime's) stamps sessions and paces
    JWKS refetches."""

    def seconds() -> float:
        return clock().timestamp()

    member = None
    if settings.member_sign_in:
        assert settings.member_jwt_issuer and settings.member_jwt_audience  # settings check it
        keys: KeySource
        if settings.member_jwt_secret is not None:
            keys = SharedSecret(settings.member_jwt_secret.get_secret_value())
        else:
            assert settings.member_jwks_url
            keys = JwksCache(
                settings.member_jwks_url,
                timeout_s=settings.jwks_timeout_s,
                cache_s=settings.jwks_cache_s,
                clock=seconds,
            )
        verifier = JwtVerifier(
            keys,
            issuer=settings.member_jwt_issuer,
            audience=settings.member_jwt_audience,
            leeway_s=settings.jwt_leeway_s,
            max_lifetime_s=settings.member_jwt_max_lifetime_s,
            groups_claim=settings.member_jwt_groups_claim,
        )
        member = MemberSignIn(verifier, session_ttl_s=settings.session_ttl_s, clock=clock)
    admin_proxy = None
    if settings.admin_proxy_jwks_url:
        assert settings.admin_proxy_issuer and settings.admin_proxy_audience
        proxy_keys = JwksCache(
            settings.admin_proxy_jwks_url,
            timeout_s=settings.jwks_timeout_s,
            cache_s=settings.jwks_cache_s,
            clock=seconds,
        )
        admin_proxy = AdminProxy(
            JwtVerifier(
                proxy_keys,
                issuer=settings.admin_proxy_issuer,
                audience=settings.admin_proxy_audience,
                leeway_s=settings.jwt_leeway_s,
                max_lifetime_s=MAX_ASSERTION_LIFETIME_S,
                groups_claim=settings.admin_proxy_groups_claim,
            ),
            header=settings.admin_proxy_header,
            email_domains=settings.admin_proxy_email_domains,
            groups=settings.admin_proxy_groups,
        )
    return SignIn(member=member, admin_proxy=admin_proxy)
