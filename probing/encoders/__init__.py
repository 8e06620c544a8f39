"""Encoders: one module per family, all returning :class:`probing.encoding.Encoding`."""
