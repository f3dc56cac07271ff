#!/usr/bin/env python3
"""The floor under part (c) of bench/scheduler.sh: how fast SQLite alone, on this machine, writes
the rows a batch of suspended tasks writes.

    sqlite_floor.py STORE_DB WORK_DB BATCHES BATCH

STORE_DB is the database of the daemon that just took the batches (read only). Its schema
(tables, indexes, triggers: sqlite_master in creation order) is copied to a new WORK_DB, with the
session row the batches went to, and one of its stored task records is taken as the row to write.
Then BATCHES transactions of BATCH rows each insert that record (its id changed) and that row's
columns with the store's own upsert and pragmas (WAL, synchronous=NORMAL, foreign keys). Each transaction
is one set-based statement (a recursive CTE), the cheapest way SQLite has to write these rows: no
statement per row, no binding, no JSON made. The daemon has all of that to do and must commit
before its 201, so its batch rate stays under this one.

Then the same again into WORK_DB-lean with the record's null members left out (every level):
what the floor would be if the stored record held only what a task has. A queued task's record
is mostly keys with null values and a request written out in full; the two rates side by side
show how much of the floor is the record's size.

Prints "SQLITE_FLOOR <rows/s> <seconds> <sqlite version> <lean rows/s> <record bytes> <lean
record bytes>". Standard library only; the sqlite3 module must use the system's libsqlite3 (the
daemon's), which the version printed lets one check.
"""
import json
import os
import sqlite3
import sys
import time


def main():
    store_db, work_db, batches, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    source = sqlite3.connect(f"file:{store_db}?mode=ro", uri=True)
    schema = [sql for (sql,) in source.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    session_id, record, owner, kind, scheduling_class, served_cut = source.execute(
        "SELECT session_id, record, owner, kind, scheduling_class, served_cut FROM tasks"
        " WHERE state = 'suspended' ORDER BY id DESC LIMIT 1").fetchone()
    session_row = source.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    session_columns = [d[1] for d in source.execute("PRAGMA table_info(sessions)")]
    source.close()

    columns = (session_id, owner, kind, scheduling_class, served_cut)
    lean = json.dumps(without_nulls(json.loads(record)), separators=(",", ":"), sort_keys=True)
    rate, seconds = write_rows(work_db, schema, session_row, session_columns, record, columns, batches, batch)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(work_db + "-lean" + suffix):
            os.remove(work_db + "-lean" + suffix)
    lean_rate, _ = write_rows(work_db + "-lean", schema, session_row, session_columns, lean, columns, batches, batch)
    print(f"SQLITE_FLOOR {rate:.0f} {seconds:.3f} {sqlite3.sqlite_version} {lean_rate:.0f} "
          f"{len(record.encode())} {len(lean.encode())}")


def without_nulls(value):
    """`value` with every object member whose value is null left out, at every level."""
    if isinstance(value, dict):
        return {key: without_nulls(member) for key, member in value.items() if member is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def write_rows(work_db, schema, session_row, session_columns, record, columns, batches, batch):
    """Writes BATCHES transactions of BATCH rows of `record` into a new WORK_DB; rows/s, seconds."""
    session_id, owner, kind, scheduling_class, served_cut = columns
    # The record with its id cut out, so each row's id can be put back in (`"id":N,`).
    marker = '"id":'
    start = record.index(marker) + len(marker)
    end = record.index(",", start)
    prefix, suffix = record[:start], record[end:]

    work = sqlite3.connect(work_db, isolation_level=None)
    work.execute("PRAGMA journal_mode=WAL")
    work.execute("PRAGMA synchronous=NORMAL")
    work.execute("PRAGMA foreign_keys=ON")
    for sql in schema:
        work.execute(sql)
    work.execute(f"INSERT INTO sessions({', '.join(session_columns)}) VALUES ({', '.join('?' * len(session_columns))})",
                 session_row)
    # The store's upsert (TaskRowColumns.upsert), its rows from a CTE ("WHERE true" lets SQLite
    # parse an upsert whose rows come from a SELECT).
    upsert = """
        WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO tasks (id, session_id, state, record, request_body, version, owner, kind, scheduling_class, held_bytes, completed_at, feed_seq, served_cut)
        SELECT i, ?, 'suspended', ? || i || ?, NULL, 1, ?, ?, ?, 0, NULL, i, ? FROM n WHERE true
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record, version = excluded.version,
            kind = excluded.kind, scheduling_class = excluded.scheduling_class, held_bytes = excluded.held_bytes,
            completed_at = excluded.completed_at, feed_seq = excluded.feed_seq, served_cut = excluded.served_cut
        WHERE excluded.version > tasks.version
        """
    began = time.perf_counter()
    for b in range(batches):
        first = 1 + b * batch
        work.execute("BEGIN IMMEDIATE")
        work.execute(upsert, (first, first + batch - 1, session_id, prefix, suffix, owner, kind, scheduling_class, served_cut))
        work.execute("COMMIT")
    seconds = time.perf_counter() - began
    written = work.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    work.close()
    if written != batches * batch:
        sys.exit(f"sqlite_floor: wrote {written} rows, expected {batches * batch}")
    return batches * batch / seconds, seconds


if __name__ == "__main__":
    main()
