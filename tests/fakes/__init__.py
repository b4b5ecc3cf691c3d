"""Fakes for what we cannot reach from a test: real servers on loopback, never patched modules."""
