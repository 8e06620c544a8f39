"""Analyses over Encodings and arrays: contextual similarity, contextuality, sense geometry,
attention, fill-mask, static vectors."""
