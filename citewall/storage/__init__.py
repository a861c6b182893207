"""citewall.storage"""
