"""Model-card templates (Markdown with ``${name}`` fields), shipped as package data."""
