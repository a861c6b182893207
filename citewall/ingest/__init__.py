"""citewall.ingest"""
