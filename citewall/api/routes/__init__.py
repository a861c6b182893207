"""Routers, one module per area of the API."""
