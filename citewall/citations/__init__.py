"""citewall.citations"""
