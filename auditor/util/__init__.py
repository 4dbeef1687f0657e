"""Small tools every stage uses: bounded reads, escaping, deadlines, the tool's errors, git without the scanned
repository's hooks, the cache's value codec."""
