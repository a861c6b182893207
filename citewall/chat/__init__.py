"""citewall.chat"""
