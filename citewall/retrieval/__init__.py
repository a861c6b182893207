"""citewall.retrieval"""
