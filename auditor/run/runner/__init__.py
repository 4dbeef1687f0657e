"""Scanning many files: worker processes, isolation and time budgets, the result cache, progress."""
