"""Which files a run reads, and of which kind."""
