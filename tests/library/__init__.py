"""The probing library on real models and real data (marked slow)."""
