"""Text handling every stage shares: cleaning untrusted strings."""
