"""citewall.generation"""
