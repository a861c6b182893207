"""The knowledge base's contract, shared by every stage: the card and URL verification."""
