/// The cluster's PostgreSQL schema as an ordered list of migrations (`ClusterMigrator` applies
/// the missing ones). A migration is never edited once released: later changes append one.
/// docs/cluster.md says what each table is for.
enum ClusterSchema {
    static let migrations: [String] = [
        // 1: the nodes, and the tasks with their place in the queue and their lease.
        //    Queue columns (only meaningful while `queued`): the admission order of
        //    docs/scheduling.md (discretionary last, then class rank, then higher priority, then
        //    arrival) and the caps the claim checks (`host_cap` per host, `session_cap` per
        //    session, NULL for none). Lease columns: `node` runs it until `lease_expires`;
        //    `lease_epoch`, bumped by every claim, fences the writes of a node that lost it.
        """
        CREATE TABLE cluster_nodes (
            id text PRIMARY KEY,
            address text NOT NULL DEFAULT '',
            started_at timestamptz NOT NULL DEFAULT now(),
            heartbeat_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE tasks (
            id bigint PRIMARY KEY,
            session_id text NOT NULL,
            owner text NOT NULL DEFAULT '',
            state text NOT NULL,
            record text NOT NULL,
            version bigint NOT NULL,
            queued boolean NOT NULL DEFAULT false,
            discretionary boolean NOT NULL DEFAULT false,
            class_rank smallint NOT NULL DEFAULT 2,
            priority double precision NOT NULL DEFAULT 0.5,
            queue_order bigint NOT NULL DEFAULT 0,
            host text NOT NULL DEFAULT '',
            host_cap integer NOT NULL DEFAULT 6,
            session_cap integer,
            node text,
            lease_epoch bigint NOT NULL DEFAULT 0,
            lease_expires timestamptz
        );
        CREATE INDEX tasks_queue ON tasks (discretionary, class_rank, priority DESC, queue_order) WHERE queued;
        CREATE INDEX tasks_leased_by_host ON tasks (host) WHERE node IS NOT NULL;
        CREATE INDEX tasks_leased_by_session ON tasks (session_id) WHERE node IS NOT NULL;
        CREATE INDEX tasks_leases ON tasks (lease_expires) WHERE node IS NOT NULL;
        CREATE INDEX tasks_by_session ON tasks (session_id, id);
        CREATE SEQUENCE task_queue_order;
        """,
        // 2: what the single daemon's SQLite store keeps, for the same queued writes
        //    (`PostgresWrites`): sessions, the task columns completed tasks are served and found
        //    by, response bodies, metrics, the event feed (rows of one session and owner per
        //    commit, `EventRows`), counters, webhook secrets and the persistent cookie jars.
        """
        CREATE TABLE sessions (
            id text PRIMARY KEY,
            owner text,
            identifier text,
            record text NOT NULL,
            version bigint NOT NULL,
            created bigserial
        );
        CREATE UNIQUE INDEX sessions_by_identifier ON sessions (COALESCE(owner, ''), identifier) WHERE identifier IS NOT NULL;
        ALTER TABLE tasks
            ADD COLUMN request_body bytea,
            ADD COLUMN kind text NOT NULL DEFAULT '',
            ADD COLUMN scheduling_class text NOT NULL DEFAULT '',
            ADD COLUMN held_bytes bigint NOT NULL DEFAULT 0,
            ADD COLUMN completed_at double precision,
            ADD COLUMN feed_seq bigint NOT NULL DEFAULT 0,
            ADD COLUMN served_cut text;
        CREATE INDEX tasks_unfinished ON tasks (id) WHERE state <> 'completed';
        CREATE INDEX tasks_completed_feed ON tasks (owner, feed_seq) WHERE state = 'completed';
        CREATE INDEX tasks_completed_at ON tasks (completed_at) WHERE state = 'completed';
        CREATE TABLE task_bodies (
            task_id bigint PRIMARY KEY REFERENCES tasks (id),
            body bytea NOT NULL
        );
        CREATE TABLE task_metrics (
            task_id bigint PRIMARY KEY REFERENCES tasks (id),
            record text NOT NULL
        );
        CREATE TABLE events (
            seq bigint PRIMARY KEY,
            session_id text NOT NULL,
            record text NOT NULL,
            owner text
        );
        CREATE INDEX events_by_session ON events (session_id, seq);
        CREATE TABLE counters (
            name text PRIMARY KEY,
            value bigint NOT NULL
        );
        CREATE TABLE webhook_secrets (
            session_id text PRIMARY KEY REFERENCES sessions (id),
            secret text NOT NULL
        );
        CREATE TABLE cookies (
            owner text NOT NULL,
            name text NOT NULL,
            domain text NOT NULL,
            path text NOT NULL,
            value text NOT NULL,
            host_only boolean NOT NULL,
            expires double precision NOT NULL,
            secure boolean NOT NULL,
            http_only boolean NOT NULL,
            same_site text,
            created_at double precision NOT NULL,
            PRIMARY KEY (owner, name, domain, path)
        );
        """,
        // 3: the rows the single daemon's SQLite store writes at once, for `PostgresStore`: the
        //    shared credential store (passwords sealed with <data>/credentials.key, which the
        //    nodes share through the data folder), the persistent URL cache's index (bodies in
        //    <data>/cache) and the blobs (content in <data>/blobs). `position` keeps the order
        //    of insertion that SQLite's rowid gives. Each row carries its owner, as in SQLite.
        """
        CREATE TABLE credentials (
            position bigserial PRIMARY KEY,
            owner text NOT NULL,
            host text NOT NULL,
            port integer NOT NULL,
            protocol text NOT NULL,
            realm text,
            authentication_method text NOT NULL,
            user_name text NOT NULL,
            password bytea NOT NULL
        );
        CREATE INDEX credentials_by_space ON credentials (owner, host, port, protocol);
        CREATE TABLE url_cache (
            key text PRIMARY KEY,
            file text NOT NULL UNIQUE,
            size bigint NOT NULL,
            response text NOT NULL,
            last_used double precision NOT NULL
        );
        CREATE TABLE blobs (
            id text PRIMARY KEY,
            owner text,
            size bigint NOT NULL,
            sha256 text NOT NULL,
            created_at double precision NOT NULL
        );
        """,
        // 4: each node's load as its heartbeat reports it (`GET /v1/cluster`).
        """
        ALTER TABLE cluster_nodes
            ADD COLUMN running integer NOT NULL DEFAULT 0,
            ADD COLUMN queued integer NOT NULL DEFAULT 0,
            ADD COLUMN max_transfers integer NOT NULL DEFAULT 0;
        """,
        // 5: the service in cluster mode. Numbers every node takes in blocks from a counter
        //    (`PostgresCoordinator.numbers`), starting above what the single daemon handed out;
        //    unfinished rows it left, which no node holds and the queue does not know, go into
        //    the queue (a claim settles what each was doing, as a restart did).
        """
        INSERT INTO counters (name, value)
        SELECT 'task_ids', GREATEST(COALESCE((SELECT max(id) FROM tasks), 0),
                                    COALESCE((SELECT value FROM counters WHERE name = 'max_task_id'), 0))
        ON CONFLICT (name) DO NOTHING;
        INSERT INTO counters (name, value) SELECT 'event_seqs', COALESCE((SELECT max(seq) FROM events), 0)
        ON CONFLICT (name) DO NOTHING;
        UPDATE tasks SET queued = true, queue_order = nextval('task_queue_order')
        WHERE state IN ('running', 'canceling') AND node IS NULL AND NOT queued;
        """,
        // 6: events across nodes and commands between them. A session's events are numbered
        //    when they commit, from the session's row in `event_feeds` (its row lock orders two
        //    nodes' commits for one session), so a feed's numbers follow commit order; numbers
        //    are per session from here on (the key becomes the session and the number), each
        //    session starting above every number handed out before. `task_commands` holds a
        //    command for the node that runs its task, and the answer (`PostgresCoordinator`).
        """
        CREATE TABLE event_feeds (
            session_id text PRIMARY KEY,
            seq bigint NOT NULL
        );
        INSERT INTO event_feeds (session_id, seq)
        SELECT id, GREATEST(COALESCE((SELECT value FROM counters WHERE name = 'event_seqs'), 0),
                            COALESCE((SELECT max(seq) FROM events), 0))
        FROM sessions;
        ALTER TABLE events DROP CONSTRAINT events_pkey;
        DROP INDEX events_by_session;
        ALTER TABLE events ADD PRIMARY KEY (session_id, seq);
        CREATE TABLE task_commands (
            id bigserial PRIMARY KEY,
            task_id bigint NOT NULL,
            node text NOT NULL,
            owner text,
            command text NOT NULL,
            taken boolean NOT NULL DEFAULT false,
            answer text,
            requested timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX task_commands_untaken ON task_commands (node, id) WHERE NOT taken;
        """,
        // 7: answers for the whole cluster (`ClusterOverviewQueries`): a tenant's unfinished
        //    tasks and its blobs by owner, for its quotas, and each node's figures at its
        //    heartbeat (`ServiceStats` as JSON), which `GET /v1/stats` adds up over the live nodes.
        """
        CREATE INDEX tasks_unfinished_by_owner ON tasks (owner) WHERE state <> 'completed';
        CREATE INDEX blobs_by_owner ON blobs ((COALESCE(owner, '')));
        ALTER TABLE cluster_nodes ADD COLUMN stats text;
        """,
        // 8: the change feed of tasks across nodes (`ClusterTaskFeed`): a row's `feed_seq` is
        //    its writer's transaction id shifted left (`GatheredRows.stamp`), read by owner in
        //    stamp order (replacing the index of completed tasks, which the same index serves);
        //    a deleted task leaves a tombstone, the newest `ClusterTaskFeed.removalsKept` kept.
        """
        CREATE INDEX tasks_feed ON tasks (owner, feed_seq);
        DROP INDEX tasks_completed_feed;
        CREATE TABLE task_removals (
            feed_seq bigint PRIMARY KEY,
            task_id bigint NOT NULL,
            owner text NOT NULL
        );
        CREATE INDEX task_removals_by_owner ON task_removals (owner, feed_seq);
        INSERT INTO counters (name, value) VALUES ('removals_forgotten', 0) ON CONFLICT (name) DO NOTHING;
        """,
        // 9: webhooks across nodes (`ClusterWebhooks`): a session's delivered cursor, shared,
        //    and which node posts its events now, under a lease (one node at a time, another
        //    once it stops renewing). Seeded from the cursor each webhook's session row kept.
        """
        CREATE TABLE webhook_cursors (
            session_id text PRIMARY KEY,
            delivered_through bigint NOT NULL DEFAULT 0,
            node text,
            lease_expires timestamptz
        );
        INSERT INTO webhook_cursors (session_id, delivered_through)
        SELECT s.id, COALESCE((s.record::jsonb -> 'webhook' ->> 'deliveredThrough')::bigint, 0)
        FROM sessions s JOIN webhook_secrets w ON w.session_id = s.id;
        """,
        // 10: daemon-wide settings changed over the API, kept across restarts (the daemon-wide
        //     rate limits): a name and its JSON. Every node reads them at its start.
        """
        CREATE TABLE settings (
            name text PRIMARY KEY,
            value text NOT NULL
        );
        """,
        // 11: where an ephemeral session and its tasks live (`EphemeralRoutes`). They are never
        //     stored; these rows only name the node that holds them, so another node can pass a
        //     request for them on. They go with their node's registry row.
        """
        CREATE TABLE ephemeral_routes (
            key text PRIMARY KEY,
            session_id text NOT NULL,
            node text NOT NULL REFERENCES cluster_nodes (id) ON DELETE CASCADE
        );
        CREATE INDEX ephemeral_routes_by_node ON ephemeral_routes (node);
        """,
        // 12: a list of sessions asks for those made after the last it learned
        //     (`sessions(createdAfter:)`, every GET /v1/sessions): by index, not a scan.
        """
        CREATE INDEX sessions_by_created ON sessions (created);
        """,
        // 13: the server-side name (`application_name`) of a node's sessions, so the others can
        //     end them once it falls silent (`ClusterNodes.endSessions`).
        """
        ALTER TABLE cluster_nodes ADD COLUMN instance text;
        """,
    ]
}
