"""citewall.boundary"""
