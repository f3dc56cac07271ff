internal import FoundationEssentials
internal import PostgreSQL
internal import TransferModel
internal import TransferStore

/// The rows of a commit that `PostgresWrites` writes as one statement per kind instead of one
/// per row (a batch of 10,000 tasks was 10,000 round trips): task rows, task metrics and event
/// rows, each kind as one array per column (`PostgresArrays`), unnested into rows.
///
/// It also collects what the commit changed, for the other nodes' long-polls (`signals`): the
/// sessions whose feed got events, and the tasks whose rows were written.
struct GatheredRows {
    private var tasks: [(columns: TaskRowColumns, placement: TaskPlacement?)] = []
    private var metrics: [(taskId: Int, record: String)] = []
    private var events: [TaskEvent] = []
    /// How many events a session's feed keeps in the store (the service's `eventRetention`).
    let eventRetention: Int
    private var changedFeeds: Set<String> = []
    private var changedTasks: [String: Set<Int>] = [:]
    private var changedSessions: Set<String> = []
    private var changedSettings: Set<String> = []
    /// Whether a row went into the queue or gave its lease up: the claims of every node may find room.
    private var queueChanged = false
    /// The commit's transaction id, once asked for, and how many stamps it has given.
    private var transaction: Int?
    private var stampsGiven = 0

    init(eventRetention: Int) { self.eventRetention = max(1, eventRetention) }

    /// A session row this commit writes (`saveSession`, not gathered: its upsert is its own).
    mutating func noteSession(_ id: String) { changedSessions.insert(id) }

    /// A daemon-wide setting this commit writes (`saveSetting`): every node reads it again.
    mutating func noteSetting(_ name: String) { changedSettings.insert(name) }

    /// More tasks of one session than this in one commit are signalled as one `tasks` signal.
    static let taskSignalsPerSession = 16

    /// The next change-feed stamp of this commit (`feed_seq` of a task row it writes, of a
    /// deletion's tombstone): its transaction id shifted left by `ClusterTaskFeed.stampBits`,
    /// plus the stamps given before it. A reader serves only stamps below the oldest transaction
    /// still running (`ClusterTaskFeed`), so a stamp is served only once its commit, and every
    /// commit that could give a lower one, ended: no change slips in behind a reader's cursor,
    /// and no two nodes' commits wait on each other for the numbers (a commit's stamps go past
    /// its own space only beyond 2^20 rows, which no batch reaches).
    mutating func stamp(_ tx: PostgresConnection.Transaction) throws -> Int {
        if transaction == nil {
            transaction = try tx.run("SELECT pg_current_xact_id()::text::bigint").first?.int(0) ?? 0
        }
        defer { stampsGiven += 1 }
        return ((transaction ?? 0) << ClusterTaskFeed.stampBits) + stampsGiven
    }

    /// A task row this commit deleted: its feed's followers are woken.
    mutating func noteDeleted(session: String, id: Int) { changedTasks[session, default: []].insert(id) }

    /// What the commit changed, as the signals the nodes listen for.
    func signals() -> [ClusterSignal] {
        var signals = changedFeeds.sorted().map { ClusterSignal.feed(session: $0) }
        if queueChanged { signals.append(.queue) }
        signals += changedSessions.sorted().map { ClusterSignal.session($0) }
        signals += changedSettings.sorted().map { ClusterSignal.setting($0) }
        for (session, ids) in changedTasks.sorted(by: { $0.key < $1.key }) {
            if ids.count > Self.taskSignalsPerSession {
                signals.append(.tasks(session: session))
            } else {
                signals += ids.sorted().map { .task(session: session, id: $0) }
            }
        }
        return signals
    }

    /// Takes `operation` if it is of a gathered kind; false for any other.
    mutating func add(_ operation: StoreOperation) -> Bool {
        switch operation {
        case .saveTask(let task, let body, let feedSeq, let placement):
            tasks.append((TaskRowColumns(task, record: Store.record(task), requestBody: body, feedSeq: feedSeq), placement))
        case .saveTasks(let rows):
            for (row, record) in zip(rows, Store.records(of: rows)) {
                tasks.append((TaskRowColumns(row.task, record: record, requestBody: row.requestBody, feedSeq: row.feedSeq), row.placement))
            }
        case .saveMetrics(let taskId, let taskMetrics):
            metrics.append((taskId, String(decoding: taskMetrics.storedJSONData(), as: UTF8.self)))
        case .appendEvent(let event):
            events.append(event)
        default:
            return false
        }
        return true
    }

    /// Writes the gathered task rows, then the metrics (their foreign key), and starts over.
    ///
    /// One statement may not change a row twice, so of the rows of one task the newest version is
    /// written: what the version rule keeps when they are written one by one (of equal versions,
    /// the first), with the first one's request body, which is the one a first insert writes (the
    /// upsert never changes it). Of one task's metrics, the last, as row by row.
    mutating func writeTasksAndMetrics(_ tx: PostgresConnection.Transaction) throws {
        defer {
            tasks.removeAll()
            metrics.removeAll()
        }
        if !tasks.isEmpty {
            var kept: [(columns: TaskRowColumns, placement: TaskPlacement?)] = []
            var index: [Int: Int] = [:]
            for row in tasks {
                if let at = index[row.columns.id] {
                    if row.columns.version > kept[at].columns.version {
                        var newer = row
                        newer.columns.requestBody = kept[at].columns.requestBody
                        kept[at] = newer
                    }
                } else {
                    index[row.columns.id] = kept.count
                    kept.append(row)
                }
            }
            // A row the cluster places (every write of the service in cluster mode) takes the
            // commit's stamp; a row without a place keeps the one it came with.
            for index in kept.indices where kept[index].placement != nil { kept[index].columns.feedSeq = try stamp(tx) }
            var plain: [TaskRowColumns] = [], free: [(TaskRowColumns, QueueColumns?)] = [], held: [(TaskRowColumns, Int, TaskPlacement.Release?)] = []
            for (columns, placement) in kept {
                changedTasks[columns.sessionId, default: []].insert(columns.id)
                switch placement {
                case nil: plain.append(columns)
                case .free(let queue):
                    free.append((columns, queue))
                    if queue != nil { queueChanged = true }
                case .held(let epoch, let release):
                    held.append((columns, epoch, release))
                    if release != nil { queueChanged = true }
                }
            }
            if !plain.isEmpty { try tx.run(Self.taskUpsert, parameters: Self.columnArrays(plain)) }
            if !free.isEmpty {
                try tx.run(Self.freeUpsert, parameters: Self.columnArrays(free.map(\.0)) + Self.queueArrays(free.map(\.1)))
            }
            if !held.isEmpty {
                let written = try tx.run(Self.heldUpdate, parameters: Self.columnArrays(held.map(\.0)) + [
                    PostgresArrays.integers(held.map(\.1)), PostgresArrays.booleans(held.map { $0.2 != nil }),
                ] + Self.queueArrays(held.map { release -> QueueColumns? in
                    if case .queued(let queue) = release.2 { return queue }
                    return nil
                }))
                if written.count < held.count { try noteFenced(held.map { ($0.0.id, $0.1) }, written: written, tx) }
            }
        }
        if !metrics.isEmpty {
            var last: [Int: Int] = [:]
            for (index, entry) in metrics.enumerated() { last[entry.taskId] = index }
            let kept = metrics.indices.filter { last[metrics[$0].taskId] == $0 }.map { metrics[$0] }
            try tx.run("""
                INSERT INTO task_metrics (task_id, record) SELECT * FROM unnest($1::bigint[], $2::text[])
                ON CONFLICT (task_id) DO UPDATE SET record = excluded.record
                """, PostgresArrays.integers(kept.map(\.taskId)), PostgresArrays.texts(kept.map(\.record)))
        }
    }

    /// The tasks of this commit whose held write was refused because their lease is another's
    /// (or none's) now: their events of this commit are not written either (`writeEvents`), so
    /// a node that lost a lease adds nothing to the feed with its late completion. (A write
    /// refused only for its version, a repeated one, is not fenced.)
    private var fenced: Set<Int> = []

    private mutating func noteFenced(_ held: [(id: Int, epoch: Int)], written: [PostgresRow], _ tx: PostgresConnection.Transaction) throws {
        let done = Set(written.compactMap { $0.int(0) })
        let refused = held.filter { !done.contains($0.id) }
        let current = try tx.run("SELECT id, lease_epoch, node IS NOT NULL FROM tasks WHERE id = ANY($1::bigint[])",
                                 PostgresArrays.integers(refused.map(\.id)))
        var leases: [Int: (epoch: Int, held: Bool)] = [:]
        for row in current { if let id = row.int(0) { leases[id] = (row.int(1) ?? 0, row.bool(2) ?? false) } }
        for (id, epoch) in refused where leases[id].map({ $0.epoch != epoch || !$0.held }) ?? true { fenced.insert(id) }
    }

    /// Writes the gathered events, a row per session and owner (`EventRows`), and starts over.
    ///
    /// Each session's events are numbered here, in the commit, from its `event_feeds` row: the
    /// row's lock, held until the commit, makes two nodes' commits for one session take turns,
    /// so the numbers of a feed follow commit order (a reader after N never misses an event that
    /// commits later with a lower number). Within the commit they keep the order the node gave
    /// them in memory, across tenants too. Sessions are locked in id order, so two commits
    /// never wait on each other in a cycle. Then the feed keeps its newest `eventRetention` events: rows wholly older are
    /// deleted, a quarter of the retention at a time.
    mutating func writeEvents(_ tx: PostgresConnection.Transaction) throws {
        if !fenced.isEmpty { events.removeAll { $0.taskId.map(fenced.contains) ?? false } }
        guard !events.isEmpty else { return }
        defer { events.removeAll(keepingCapacity: true) }
        var counts: [String: Int] = [:]
        for event in events { counts[event.sessionId, default: 0] += 1 }
        let sessions = counts.keys.sorted()
        let numbered = try tx.run("""
            INSERT INTO event_feeds (session_id, seq) SELECT * FROM unnest($1::text[], $2::bigint[])
            ON CONFLICT (session_id) DO UPDATE SET seq = event_feeds.seq + excluded.seq
            RETURNING session_id, seq
            """, PostgresArrays.texts(sessions), PostgresArrays.integers(sessions.map { counts[$0]! }))
        var next: [String: Int] = [:]
        for row in numbered {
            guard let session = row.string(0), let last = row.int(1), let count = counts[session] else { continue }
            next[session] = last - count + 1
        }
        // Numbered in the order they came, whatever their tenant, and written as runs: a row
        // holds a session's consecutive events of one owner, so each row is a run of numbers
        // and a page of rows in key order is a page of events in seq order
        // (`PostgresCoordinator.events`). One owner's events (the usual case) make one row.
        var taken: [EventRows.Row] = []
        var runs: [String: (owner: String?, rows: EventRows)] = [:]
        for var event in events.sorted(by: { $0.seq < $1.seq }) {
            guard let seq = next[event.sessionId] else { continue }
            event.seq = seq
            next[event.sessionId] = seq + 1
            if var run = runs[event.sessionId], run.owner != event.owner {
                taken += run.rows.take()
                runs[event.sessionId] = nil
            }
            runs[event.sessionId, default: (event.owner, EventRows())].rows.add(event)
        }
        for session in runs.keys.sorted() {
            if var run = runs[session] { taken += run.rows.take() }
        }
        try tx.run("""
            INSERT INTO events (seq, session_id, record, owner)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
            ON CONFLICT (session_id, seq) DO NOTHING
            """, PostgresArrays.integers(taken.map(\.seq)), PostgresArrays.texts(taken.map(\.session)),
            PostgresArrays.texts(taken.map(\.record)), PostgresArrays.texts(taken.map(\.owner)))
        changedFeeds.formUnion(sessions)
        // Retention: when a session's numbers crossed a quarter-retention step.
        let step = max(1, eventRetention / 4)
        var floors: [(String, Int)] = []
        for session in sessions {
            guard let end = next[session], let count = counts[session] else { continue }
            let last = end - 1
            if last / step != (last - count) / step, last - eventRetention > 0 { floors.append((session, last - eventRetention)) }
        }
        if !floors.isEmpty {
            try tx.run("""
                DELETE FROM events e USING unnest($1::text[], $2::bigint[]) AS k(session_id, floor)
                WHERE e.session_id = k.session_id AND e.seq <= k.floor
                """, PostgresArrays.texts(floors.map(\.0)), PostgresArrays.integers(floors.map(\.1)))
        }
    }

    /// The thirteen arrays of `TaskRowColumns`' fields, in the upsert's order.
    private static func columnArrays(_ rows: [TaskRowColumns]) -> [any PostgresBindable] {
        [PostgresArrays.integers(rows.map(\.id)), PostgresArrays.texts(rows.map(\.sessionId)),
         PostgresArrays.texts(rows.map(\.state)), PostgresArrays.texts(rows.map(\.record)),
         PostgresArrays.byteas(rows.map(\.requestBody)), PostgresArrays.integers(rows.map(\.version)),
         PostgresArrays.texts(rows.map(\.owner)), PostgresArrays.texts(rows.map(\.kind)),
         PostgresArrays.texts(rows.map(\.schedulingClass)), PostgresArrays.integers(rows.map(\.heldBytes)),
         PostgresArrays.doubles(rows.map(\.completedAt)), PostgresArrays.integers(rows.map(\.feedSeq)),
         PostgresArrays.texts(rows.map(\.servedCut))]
    }

    /// Whether each row goes into the queue, then its queue columns (any value when it does not).
    private static func queueArrays(_ queues: [QueueColumns?]) -> [any PostgresBindable] {
        [PostgresArrays.booleans(queues.map { $0 != nil }), PostgresArrays.booleans(queues.map { $0?.discretionary ?? false }),
         PostgresArrays.integers(queues.map { $0?.classRank ?? 2 }), PostgresArrays.doubles(queues.map { $0?.priority ?? 0.5 }),
         PostgresArrays.texts(queues.map { $0?.host ?? "" }), PostgresArrays.integers(queues.map { $0?.hostCap ?? 6 }),
         PostgresArrays.integers(queues.map { $0?.sessionCap })]
    }

    private static let columnTypes = "$1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::double precision[], $12::bigint[], $13::text[]"

    private static let rowNames = "id, session_id, state, record, request_body, version, owner, kind, scheduling_class, held_bytes, completed_at, feed_seq, served_cut"

    private static let taskUpsert = TaskRowColumns.upsert(rows: "SELECT * FROM unnest(\(columnTypes))")

    /// A row no node holds (`TaskPlacement.free`): created, or changed by a command on a queued
    /// or suspended task. Written only while no node holds it; put in the queue (a new place,
    /// unless it waits there already) or taken out of it.
    private static let freeUpsert = """
        INSERT INTO tasks (id, session_id, state, record, request_body, version, owner, kind, scheduling_class, held_bytes,
                           completed_at, feed_seq, served_cut, queued, discretionary, class_rank, priority, host, host_cap,
                           session_cap, queue_order)
        SELECT id, session_id, state, record, request_body, version, owner, kind, scheduling_class, held_bytes, completed_at,
               feed_seq, served_cut, queued, discretionary, class_rank, priority, host, host_cap, session_cap,
               nextval('task_queue_order')
        FROM unnest(\(columnTypes), $14::boolean[], $15::boolean[], $16::smallint[], $17::double precision[], $18::text[],
                    $19::integer[], $20::integer[])
            WITH ORDINALITY AS u(\(rowNames), queued, discretionary, class_rank, priority, host, host_cap, session_cap, position)
        ORDER BY position
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record, version = excluded.version,
            kind = excluded.kind, scheduling_class = excluded.scheduling_class, held_bytes = excluded.held_bytes,
            completed_at = excluded.completed_at, feed_seq = excluded.feed_seq, served_cut = excluded.served_cut,
            queued = excluded.queued, discretionary = excluded.discretionary, class_rank = excluded.class_rank,
            priority = excluded.priority, host = excluded.host, host_cap = excluded.host_cap, session_cap = excluded.session_cap,
            queue_order = CASE WHEN tasks.queued THEN tasks.queue_order ELSE excluded.queue_order END
        WHERE excluded.version > tasks.version AND tasks.node IS NULL
        """

    /// A row the writer holds under a lease (`TaskPlacement.held`): changed only while the row
    /// still carries that epoch and a holder, so a node that lost the lease changes nothing (the
    /// fencing token). A release clears the holder; one into the queue puts it at the back.
    private static let heldUpdate = """
        UPDATE tasks SET state = u.state, record = u.record, version = u.version, kind = u.kind,
            scheduling_class = u.scheduling_class, held_bytes = u.held_bytes, completed_at = u.completed_at,
            feed_seq = u.feed_seq, served_cut = u.served_cut,
            node = CASE WHEN u.release THEN NULL ELSE tasks.node END,
            lease_expires = CASE WHEN u.release THEN NULL ELSE tasks.lease_expires END,
            queued = u.queued,
            discretionary = CASE WHEN u.queued THEN u.discretionary ELSE tasks.discretionary END,
            class_rank = CASE WHEN u.queued THEN u.class_rank ELSE tasks.class_rank END,
            priority = CASE WHEN u.queued THEN u.priority ELSE tasks.priority END,
            host = CASE WHEN u.queued THEN u.host ELSE tasks.host END,
            host_cap = CASE WHEN u.queued THEN u.host_cap ELSE tasks.host_cap END,
            session_cap = CASE WHEN u.queued THEN u.session_cap ELSE tasks.session_cap END,
            queue_order = CASE WHEN u.queued THEN nextval('task_queue_order') ELSE tasks.queue_order END
        FROM unnest(\(columnTypes), $14::bigint[], $15::boolean[], $16::boolean[], $17::boolean[], $18::smallint[],
                    $19::double precision[], $20::text[], $21::integer[], $22::integer[])
            AS u(\(rowNames), epoch, release, queued, discretionary, class_rank, priority, host, host_cap, session_cap)
        WHERE tasks.id = u.id AND tasks.node IS NOT NULL AND tasks.lease_epoch = u.epoch AND u.version > tasks.version
        RETURNING tasks.id
        """
}
