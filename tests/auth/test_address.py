"""Email addresses in signed tokens (``auth.address``) and the admin proxy's domain rule, as
properties: a built well-formed address gives its domain; anything accepted has exactly one
``@`` and only address characters; one bad character anywhere refuses it; an identity is an
admin by email only when its address is well formed and its domain is exactly an allowlisted
one, in any case."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.auth.address import email_domain
from citewall.auth.keys import SharedSecret
from citewall.auth.proxy import AdminProxy
from citewall.auth.verifier import Claims, JwtVerifier

ATEXT = string.ascii_letters + string.digits + "!#$%&'*+/=?^_`{|}~-"
LDH = string.ascii_lowercase + string.digits
ATOM = st.text(alphabet=ATEXT, min_size=1, max_size=12)
LOCAL = st.lists(ATOM, min_size=1, max_size=4).map(".".join).filter(lambda s: len(s) <= 64)
LABEL = st.builds(
    lambda first, middle, last: first + middle + last if middle or last else first,
    st.sampled_from(LDH),
    st.text(alphabet=LDH + "-", max_size=8),
    st.sampled_from(LDH),
)
DOMAIN = st.lists(LABEL, min_size=2, max_size=4).map(".".join)
#: Characters no address here may hold (``@`` included: a second one).
BAD = ' \t\r\n\x00\x1f\x7f"(),:;<>[\\]@\u00e9\u200b'
ALLOWED = ("admins.test", "example.com")
PROXY = AdminProxy(
    JwtVerifier(SharedSecret("s" * 40), issuer="i", audience="a", leeway_s=0, max_lifetime_s=60),
    header="Cf-Access-Jwt-Assertion",
    email_domains=list(ALLOWED),
    groups=[],
)


def qualifies(email: str) -> bool:
    claims = Claims(
        issuer="i",
        subject="s",
        issued_at=0,
        expires_at=60,
        email=email,
        name=None,
        groups=(),
        token_id=None,
    )
    return PROXY.qualifies(claims)


def random_case(text: str, flips: list[bool]) -> str:
    """``text`` with the characters ``flips`` marks in upper case."""
    marks = (flips + [False] * len(text))[: len(text)]
    return "".join(c.upper() if flip else c for c, flip in zip(text, marks, strict=True))


@settings(max_examples=examples(300))
@given(LOCAL, DOMAIN)
def test_a_well_formed_address_gives_its_domain_in_lower_case(local: str, domain: str) -> None:
    assert email_domain(f"{local}@{domain.upper()}") == domain


@settings(max_examples=examples(300))
@given(st.text(alphabet=ATEXT + BAD + ".", max_size=40))
def test_anything_accepted_is_one_at_and_address_characters(text: str) -> None:
    domain = email_domain(text)
    if domain is None:
        return
    local, _, rest = text.partition("@")
    assert text.count("@") == 1 and rest.lower() == domain
    assert not set(text) & set(BAD.replace("@", ""))
    assert local and not local.startswith(".") and not local.endswith(".") and ".." not in local


@settings(max_examples=examples(300))
@given(LOCAL, DOMAIN, st.sampled_from(BAD), st.data())
def test_one_bad_character_anywhere_refuses_the_address(
    local: str, domain: str, bad: str, data: st.DataObject
) -> None:
    address = f"{local}@{domain}"
    at = data.draw(st.integers(min_value=0, max_value=len(address)))
    assert email_domain(address[:at] + bad + address[at:]) is None


NEAR_MISSES = ("sub.admins.test", "admins.test.evil.test", "evil-admins.test", "example.co")


@settings(max_examples=examples(300))
@given(
    LOCAL,
    st.one_of(st.sampled_from(ALLOWED + NEAR_MISSES), DOMAIN),
    st.lists(st.booleans(), max_size=20),
    st.sampled_from(["", "x@evil.test@", '"', "Name <", " "]),
    st.sampled_from(["", ">", ".", " ", "\n", ".evil.test", "@evil.test"]),
)
def test_an_admin_by_email_is_well_formed_at_exactly_an_allowlisted_domain(
    local: str, domain: str, flips: list[bool], before: str, after: str
) -> None:
    """Every ``before`` and ``after`` but the empty one makes the address malformed or moves
    it to another domain."""
    email = f"{before}{local}@{random_case(domain, flips)}{after}"
    assert qualifies(email) == (before == after == "" and domain in ALLOWED), email
