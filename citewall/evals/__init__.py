"""citewall.evals"""
