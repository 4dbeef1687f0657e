"""Migration progress over time (docs/history.md): runs recorded in an SQLite store, past commits
scanned straight from git objects, and the trend between them.

The store's API, for every command that records or reads runs (`check --record`, `history`, `fleet`):

    from auditor.history.store import open_store
    from auditor.history.record import run_record

    with open_store(path_or_None) as store:           # None: the user's default database
        store.record(run_record(report, where))       # one transaction: the whole run or nothing
        store.last_run(repo_key)                      # RunRecord | None
        store.points(repo_key, since, until)          # RunRecords, oldest commit first

`open_store(path, readonly=True)` never writes (a missing database is an empty one). Every failure is a
StoreError (a ToolError: exit 2, one line); a newer or damaged file is left exactly as it was.
"""
