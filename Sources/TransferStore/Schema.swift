/// The database schema as an ordered list of migrations; `PRAGMA user_version` records how many
/// have run. A migration is never edited once released: later changes append a new one.
enum Schema {
    static let migrations: [String] = [
        // 1: sessions, tasks (the served record as JSON plus the columns we query by), response
        //    bodies, and the event feed.
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            owner TEXT,
            identifier TEXT,
            record TEXT NOT NULL,
            version INTEGER NOT NULL
        );
        CREATE UNIQUE INDEX sessions_by_identifier ON sessions(COALESCE(owner, ''), identifier) WHERE identifier IS NOT NULL;
        CREATE TABLE tasks (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            state TEXT NOT NULL,
            record TEXT NOT NULL,
            request_body BLOB,
            version INTEGER NOT NULL
        );
        CREATE INDEX tasks_by_session ON tasks(session_id, id);
        CREATE TABLE task_bodies (
            task_id INTEGER PRIMARY KEY REFERENCES tasks(id),
            body BLOB NOT NULL
        );
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            record TEXT NOT NULL
        );
        CREATE INDEX events_by_session ON events(session_id, seq);
        """,
        // 2: blobs (upload bodies sent ahead of their task); the content is the file
        //    <dataDirectory>/blobs/<id>.
        """
        CREATE TABLE blobs (
            id TEXT PRIMARY KEY,
            owner TEXT,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        """,
        // 3: counters that must outlive the rows they count: the highest task id ever given, so
        //    a deleted task's id is never given again (a client may still hold it).
        """
        CREATE TABLE counters (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        );
        """,
        // 4: the persistent cookies of default and background sessions, one jar per owner
        //    ('' without tokens). Session cookies are never written (CookieStorage).
        """
        CREATE TABLE cookies (
            owner TEXT NOT NULL,
            name TEXT NOT NULL,
            domain TEXT NOT NULL,
            path TEXT NOT NULL,
            value TEXT NOT NULL,
            host_only INTEGER NOT NULL,
            expires REAL NOT NULL,
            secure INTEGER NOT NULL,
            http_only INTEGER NOT NULL,
            same_site TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (owner, name, domain, path)
        );
        """,
        // 5: webhook secrets, kept apart from the session record (which is
        //    the served JSON) so no answer can carry one.
        """
        CREATE TABLE webhook_secrets (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id),
            secret TEXT NOT NULL
        );
        """,
        // 6: the permanent credentials of the shared credential store, one row per owner,
        //    protection space and user; the password sealed with <dataDirectory>/credentials.key
        //    (CredentialVault). A null realm means any realm of that origin.
        """
        CREATE TABLE credentials (
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            port INTEGER NOT NULL,
            protocol TEXT NOT NULL,
            realm TEXT,
            authentication_method TEXT NOT NULL,
            user_name TEXT NOT NULL,
            password BLOB NOT NULL
        );
        CREATE INDEX credentials_by_space ON credentials(owner, host, port, protocol);
        """,
        // 7: the persistent URL cache's index (default sessions' URLCache.shared): one stored
        //    response per key ("GET <url>"), its head as JSON, its body in <dataDirectory>/cache/<file>.
        """
        CREATE TABLE url_cache (
            key TEXT PRIMARY KEY,
            file TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            response TEXT NOT NULL,
            last_used REAL NOT NULL
        );
        """,
        // 8: completed tasks' metrics (TaskMetrics as its served JSON), deleted with the task.
        """
        CREATE TABLE task_metrics (
            task_id INTEGER PRIMARY KEY REFERENCES tasks(id),
            record TEXT NOT NULL
        );
        """,
        // 9: completed tasks live in the store, not in the daemon's memory (issue 18): the
        //    columns they are found by (owner '' without tokens; feed_seq, the change feed's
        //    stamp of the row's last change; completed_at in seconds since 1970; held_bytes, what
        //    the task keeps for its tenant's quota; served_cut, where the record's stored-only
        //    members are, so a page serves the rest as it is), partial indexes that only unfinished or only
        //    completed rows enter, and a summary of the completed ones per owner, kind and class
        //    that triggers keep, so a start reads a few rows instead of every completed task.
        //    Events carry their task's owner, so one tenant's events in the shared session stay
        //    hidden from another after the task left memory.
        """
        ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT '';
        ALTER TABLE tasks ADD COLUMN kind TEXT NOT NULL DEFAULT '';
        ALTER TABLE tasks ADD COLUMN scheduling_class TEXT NOT NULL DEFAULT '';
        ALTER TABLE tasks ADD COLUMN held_bytes INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE tasks ADD COLUMN completed_at REAL;
        ALTER TABLE tasks ADD COLUMN feed_seq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE tasks ADD COLUMN served_cut TEXT;
        UPDATE tasks SET
            owner = COALESCE(json_extract(record, '$.owner'), ''),
            kind = json_extract(record, '$.kind'),
            scheduling_class = json_extract(record, '$.schedulingClass'),
            held_bytes = CASE json_extract(record, '$.kind') WHEN 'stream' THEN 0
                         ELSE MAX(0, COALESCE(json_extract(record, '$.progress.bytesReceived'), 0)) END,
            completed_at = unixepoch(json_extract(record, '$.completedAt')),
            feed_seq = id;
        CREATE INDEX tasks_unfinished ON tasks(id) WHERE state != 'completed';
        CREATE INDEX tasks_completed_feed ON tasks(owner, feed_seq) WHERE state = 'completed';
        CREATE INDEX tasks_completed_at ON tasks(completed_at) WHERE state = 'completed';
        CREATE TABLE completed_tasks (
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            scheduling_class TEXT NOT NULL,
            tasks INTEGER NOT NULL,
            held_bytes INTEGER NOT NULL,
            PRIMARY KEY (owner, kind, scheduling_class)
        );
        INSERT INTO completed_tasks(owner, kind, scheduling_class, tasks, held_bytes)
            SELECT owner, kind, scheduling_class, COUNT(*), SUM(held_bytes) FROM tasks
            WHERE state = 'completed' GROUP BY owner, kind, scheduling_class;
        CREATE TRIGGER completed_tasks_on_insert AFTER INSERT ON tasks WHEN NEW.state = 'completed' BEGIN
            INSERT INTO completed_tasks(owner, kind, scheduling_class, tasks, held_bytes)
                VALUES (NEW.owner, NEW.kind, NEW.scheduling_class, 1, NEW.held_bytes)
                ON CONFLICT(owner, kind, scheduling_class) DO UPDATE SET
                    tasks = tasks + 1, held_bytes = held_bytes + excluded.held_bytes;
        END;
        CREATE TRIGGER completed_tasks_on_delete AFTER DELETE ON tasks WHEN OLD.state = 'completed' BEGIN
            UPDATE completed_tasks SET tasks = tasks - 1, held_bytes = held_bytes - OLD.held_bytes
                WHERE owner = OLD.owner AND kind = OLD.kind AND scheduling_class = OLD.scheduling_class;
        END;
        CREATE TRIGGER completed_tasks_on_leave AFTER UPDATE ON tasks WHEN OLD.state = 'completed' BEGIN
            UPDATE completed_tasks SET tasks = tasks - 1, held_bytes = held_bytes - OLD.held_bytes
                WHERE owner = OLD.owner AND kind = OLD.kind AND scheduling_class = OLD.scheduling_class;
        END;
        CREATE TRIGGER completed_tasks_on_enter AFTER UPDATE ON tasks WHEN NEW.state = 'completed' BEGIN
            INSERT INTO completed_tasks(owner, kind, scheduling_class, tasks, held_bytes)
                VALUES (NEW.owner, NEW.kind, NEW.scheduling_class, 1, NEW.held_bytes)
                ON CONFLICT(owner, kind, scheduling_class) DO UPDATE SET
                    tasks = tasks + 1, held_bytes = held_bytes + excluded.held_bytes;
        END;
        ALTER TABLE events ADD COLUMN owner TEXT;
        UPDATE events SET owner = (SELECT NULLIF(tasks.owner, '') FROM tasks WHERE tasks.id = json_extract(events.record, '$.taskId'));
        """,
        // Daemon-wide settings changed over the API, kept across restarts (`StoreOperation.saveSetting`):
        // a name and its JSON.
        """
        CREATE TABLE settings (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ]
}
