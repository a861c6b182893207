"""citewall.cli"""
