"""Command line: ``python -m probing COMMAND``; one module per command, dispatch in main."""
