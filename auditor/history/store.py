"""The SQLite store of recorded runs (stdlib sqlite3): WAL, a schema versioned with `PRAGMA user_version` and
moved forward by MIGRATIONS, one transaction per run, so two processes recording at once both land and a killed
run leaves no half row.

A database this rocm-audit does not understand is never changed: a newer schema is refused before anything is
written (WAL mode is only set after the version check), and a damaged file is reported where it lies, left
as it is for the user to keep or move aside; SQLite never rewrites a whole file, so nothing overwrites it.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from auditor.util.errors import ToolError
from auditor.history.record import ComponentRow, DependencyRow, RuleCount, RunRecord, Where

BUSY_TIMEOUT_MS = 60_000          # a writer waits this long for another one's transaction
DATABASE_NAME = "history.sqlite3"

MIGRATIONS: tuple[str, ...] = (   # MIGRATIONS[n] takes the schema from version n to n + 1; never edit one shipped
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        repo TEXT NOT NULL, label TEXT NOT NULL, commit_id TEXT NOT NULL, committed_at TEXT NOT NULL,
        author TEXT NOT NULL, recorded_at TEXT NOT NULL, tool_version TEXT NOT NULL, rules_digest TEXT NOT NULL,
        verdict TEXT NOT NULL, live INTEGER NOT NULL, effort_low REAL NOT NULL, effort_high REAL NOT NULL,
        coverage REAL NOT NULL, complete INTEGER NOT NULL, source TEXT NOT NULL
    );
    CREATE INDEX runs_by_repo ON runs (repo, committed_at, id);
    CREATE TABLE counts (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        rule TEXT NOT NULL, disposition TEXT NOT NULL, severity TEXT NOT NULL, n INTEGER NOT NULL
    );
    CREATE INDEX counts_by_run ON counts (run);
    CREATE TABLE dependencies (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        rule TEXT NOT NULL, name TEXT NOT NULL, first_site TEXT NOT NULL, guarded INTEGER NOT NULL
    );
    CREATE INDEX dependencies_by_run ON dependencies (run);
    CREATE TABLE components (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        path TEXT NOT NULL, verdict TEXT NOT NULL, effort_low REAL NOT NULL, effort_high REAL NOT NULL
    );
    CREATE INDEX components_by_run ON components (run);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
RUN_COLUMNS = ("repo, label, commit_id, committed_at, author, recorded_at, tool_version, rules_digest, verdict, "
               "live, effort_low, effort_high, coverage, complete, source")


class StoreError(ToolError):
    """The database cannot be used: exit 2 with one line."""


def default_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("rocm-audit", appauthor=False)) / DATABASE_NAME


def open_store(path: Path | None = None, readonly: bool = False) -> Store:
    """The store at `path` (None: the user's default database). Read-only: nothing is created or written, and a
    database that does not exist reads as empty."""
    where = Path(path) if path is not None else default_path()
    if readonly:
        return Store(where, None if not where.exists() else _connect(where, readonly=True))
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StoreError(f"cannot create the history database's directory {where.parent}: "
                         f"{err.strerror or err}") from None
    return Store(where, _connect(where, readonly=False))


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    try:
        if readonly:
            connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True,
                                         timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        else:
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as err:
        raise StoreError(f"cannot open the history database {path}: {err}") from None
    try:
        version = _read_version(connection, path)
        if version > SCHEMA_VERSION:
            raise StoreError(f"{path} was written by a newer rocm-audit (schema {version}, this one reads up to "
                             f"{SCHEMA_VERSION}): upgrade rocm-audit, or use another database with --db")
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            _while_locked(lambda: connection.execute("PRAGMA journal_mode = WAL"))
            connection.execute("PRAGMA synchronous = NORMAL")
            _while_locked(lambda: _migrate(connection, path))
        connection.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as err:
        connection.close()
        raise _damaged(path, err) from None
    except StoreError:
        connection.close()
        raise
    return connection


def _while_locked(step):
    """`step()`, tried again while another process holds the lock it needs: SQLite's busy handler does not cover
    every step (switching a new database to WAL answers "locked" at once), so two first records would collide."""
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return step()
        except sqlite3.OperationalError as err:
            if not any(word in str(err) for word in ("locked", "busy")) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _read_version(connection: sqlite3.Connection, path: Path) -> int:
    try:
        row = connection.execute("PRAGMA user_version").fetchone()
        connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()   # reads the schema: a damaged file fails
    except sqlite3.Error as err:
        raise _damaged(path, err) from None
    return int(row[0])


def _damaged(path: Path, err: sqlite3.Error) -> StoreError:
    return StoreError(f"the history database {path} cannot be read ({err}); it was left as it is: keep it as a "
                      "backup or move it aside, and record into a new one (--db PATH)")


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Each step in its own transaction, the version read again under the write lock (another process may have
    migrated meanwhile)."""
    while True:
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            if version >= SCHEMA_VERSION:
                connection.execute("COMMIT")
                return
            for statement in MIGRATIONS[version].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {version + 1}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise


@dataclass
class Store:
    """Recorded runs, by repository key. Use as a context manager (closes the connection)."""

    path: Path
    connection: sqlite3.Connection | None       # None: a read-only store whose file does not exist

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def record(self, run: RunRecord) -> int:
        """Append one run, all its rows in one transaction; its id."""
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                w = run.where
                cursor = db.execute(
                    f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join('?' * 15)})",
                    (w.repo, w.label, w.commit, w.committed_at, w.author, run.recorded_at, run.tool_version,
                     run.rules_digest, run.verdict, run.live, run.effort_low_days, run.effort_high_days, run.coverage,
                     int(run.complete), run.source))
                run_id = int(cursor.lastrowid or 0)
                db.executemany("INSERT INTO counts VALUES (?, ?, ?, ?, ?)",
                               [(run_id, c.rule, c.disposition, c.severity, c.count) for c in run.counts])
                db.executemany("INSERT INTO dependencies VALUES (?, ?, ?, ?, ?)",
                               [(run_id, d.rule, d.name, d.first_site, int(d.guarded)) for d in run.dependencies])
                db.executemany("INSERT INTO components VALUES (?, ?, ?, ?, ?)",
                               [(run_id, c.path, c.verdict, c.effort_low_days, c.effort_high_days)
                                for c in run.components])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error as err:
            raise StoreError(f"cannot record into {self.path}: {err}") from None
        return run_id

    def last_run(self, repo: str) -> RunRecord | None:
        """The run recorded last for `repo`."""
        found = self._runs("WHERE repo = ? ORDER BY id DESC LIMIT 1", (repo,))
        return next(iter(found), None)

    def points(self, repo: str, since: str | None = None, until: str | None = None) -> list[RunRecord]:
        """One run per commit of `repo` (the latest recorded for it), oldest commit first; `since`/`until`:
        ISO times of the commits, inclusive."""
        where, args = ["repo = ?", "commit_id != ''"], [repo]
        if since:
            where.append("committed_at >= ?")
            args.append(since)
        if until:
            where.append("committed_at <= ?")
            args.append(until)
        runs = self._runs(f"WHERE id IN (SELECT max(id) FROM runs WHERE {' AND '.join(where)} GROUP BY commit_id) "
                          "ORDER BY committed_at, id", tuple(args))
        return runs

    def run_for(self, repo: str, commit: str, rules_digest: str) -> RunRecord | None:
        """A run of this commit recorded with the same rules and rocm-audit, to reuse instead of scanning again."""
        found = self._runs("WHERE repo = ? AND commit_id = ? AND rules_digest = ? ORDER BY id DESC LIMIT 1",
                           (repo, commit, rules_digest))
        return next(iter(found), None)

    def repositories(self) -> list[tuple[str, str, int]]:
        """(key, label, runs) of every repository in the store."""
        if self.connection is None:
            return []
        return [(r, label, n) for r, label, n in self._query(
            "SELECT repo, max(label), count(*) FROM runs GROUP BY repo ORDER BY repo", ())]

    def _db(self) -> sqlite3.Connection:
        if self.connection is None:
            raise StoreError(f"the history database {self.path} is not open for writing")
        return self.connection

    def _query(self, sql: str, args: tuple) -> list[tuple]:
        if self.connection is None:
            return []
        try:
            return self.connection.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            raise _damaged(self.path, err) from None

    def _runs(self, clause: str, args: tuple) -> list[RunRecord]:
        rows = self._query(f"SELECT id, {RUN_COLUMNS} FROM runs {clause}", args)
        if not rows:
            return []
        ids = [row[0] for row in rows]
        marks = ", ".join("?" * len(ids))
        counts: dict[int, list[RuleCount]] = {i: [] for i in ids}
        for run, rule, disposition, severity, n in self._query(
                f"SELECT run, rule, disposition, severity, n FROM counts WHERE run IN ({marks})", tuple(ids)):
            counts[run].append(RuleCount(rule, disposition, severity, n))
        deps: dict[int, list[DependencyRow]] = {i: [] for i in ids}
        for run, rule, name, site, guarded in self._query(
                f"SELECT run, rule, name, first_site, guarded FROM dependencies WHERE run IN ({marks})", tuple(ids)):
            deps[run].append(DependencyRow(rule, name, site, bool(guarded)))
        comps: dict[int, list[ComponentRow]] = {i: [] for i in ids}
        for run, path, verdict, low, high in self._query(
                f"SELECT run, path, verdict, effort_low, effort_high FROM components WHERE run IN ({marks})",
                tuple(ids)):
            comps[run].append(ComponentRow(path, verdict, low, high))
        return [_run(row, counts[row[0]], deps[row[0]], comps[row[0]]) for row in rows]


def _run(row: tuple, counts, deps, comps) -> RunRecord:
    (_, repo, label, commit, committed_at, author, recorded_at, version, digest, verdict, live, low, high, coverage,
     complete, source) = row
    return RunRecord(Where(repo, label, commit, committed_at, author), recorded_at, version, digest, verdict, live,
                     low, high, coverage, bool(complete), tuple(counts), tuple(deps), tuple(comps), source)

