"""What keeps the cache out of a scanned tree's reach: the per-user secret that authenticates entries
(key.py; a tree can compute every cache key and write files, but cannot write an entry that is read back) and
where a cache directory may lie (place.py)."""
from auditor.run.runner.cachetrust.key import KEY_BYTES, cache_secret, secret_path

__all__ = ["KEY_BYTES", "cache_secret", "secret_path"]
