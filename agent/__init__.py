"""Parley's engine (filled in as the modules land)."""
