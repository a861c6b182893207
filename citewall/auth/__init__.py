"""Sign-in: host sites' member tokens, an identity-aware proxy's admin assertions, CSRF.

One file per concept: ``rejection`` (why a token was refused), ``keys`` and ``jwks`` (where
verification keys come from), ``verifier`` (the JWT rules), ``member`` (host token -> session),
``proxy`` (assertion -> admin), ``csrf`` (the rule for the proxy's ambient credential) and
``factory`` (built once per process from the settings). Nothing here imports ``citewall.api``.
"""
