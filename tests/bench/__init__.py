"""Timing, memory and speed claims, and the bench/ scripts (marked slow)."""
