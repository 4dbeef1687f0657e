"""One file: read it, pick its engine, apply suppressions."""
