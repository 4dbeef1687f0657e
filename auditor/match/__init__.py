"""Rules matched on a parsed file: the input kinds and their engines, the cross-language link, the rulebook, the
HIPIFY table, and the inline suppressions that silence a match."""
