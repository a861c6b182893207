"""citewall.api"""
