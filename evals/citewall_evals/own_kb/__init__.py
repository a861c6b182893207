"""``citewall eval kb``: the harness's figures on a team's own knowledge base and questions."""
