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
    ]
}
