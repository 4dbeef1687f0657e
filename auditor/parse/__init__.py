"""Parsers: each file is parsed once, by the one module that owns its parser library."""
