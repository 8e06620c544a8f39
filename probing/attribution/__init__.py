"""Which input words a masked LM used: gradient attributions for a fill-mask guess and
per-layer context mixing (Value Zeroing, ALTI), one module per method."""
