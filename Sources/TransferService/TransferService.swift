internal import FoundationEssentials
internal import Dispatch
public import Logging
internal import Synchronization
internal import JSONModel
internal import TransferModel
public import TransferStore
package import TransferEngine

/// The heart of transferd: sessions and tasks in memory (authoritative while running), written
/// through to the `Store`, run by the engine (`CurlEngine`), and watched through long-polls.
///
/// Concurrency: one lock guards `ServiceState`. HTTP handler threads and the engine thread take it
/// briefly; under it they change state, queue store writes and engine commands (both non-blocking,
/// and queued under the lock so their order is the order of the changes); long-poll answers are
/// collected as `Deliveries` and run after the lock is released.
public final class TransferService: Sendable {
    let state: Mutex<ServiceState>
    package let store: any TaskStore
    /// Upload bodies sent ahead of their tasks (`POST /v1/blobs`), under `<dataDirectory>/blobs`.
    public let blobs: BlobStore
    /// The cookie jars of every session (`CookieStorage`).
    let cookieStorage: CookieStorage
    /// Runs the transfers: the `CurlEngine`, or a fake in the service's tests.
    let engine: any TransferRunner
    let configuration: ServiceConfiguration
    let logger: Logger
    let resumeSealer: ResumeDataSealer
    /// Signs and checks the dashboard's short-lived file links (`FileGrants`).
    public let fileGrants: FileGrants
    /// URLCredentialStorage: the shared store of default sessions and every session's own.
    let credentials: CredentialStore
    /// URLCache.shared and ephemeral sessions' private caches (`TransferService+URLCache`).
    public let urlCaches: URLCaches
    private let checkpointTimer = HandOffTimer()
    private let retentionTimer = HandOffTimer()
    /// The one timer behind every hold (`TransferService+Holds`).
    let holdTimer = HoldTimer()
    /// Posts events to sessions' webhooks, on its own thread (`WebhookDeliverer`).
    let webhooks: WebhookDeliverer
    /// This daemon's Prometheus registry and instruments (`GET /metrics`).
    public let metrics: TransferMetrics
    /// The daemons sharing the store, this one among them (`TransferService+Cluster`).
    let membership: ClusterMembership
    /// Requests for ephemeral sessions another node holds, passed on to it (`NodeForwarding`).
    let nodeForwarding = NodeForwarding()
    /// This node's share of a cluster's queue: claims and leases (`TransferService+ClusterQueue`);
    /// nil for a daemon alone.
    let clusterWork: ClusterWork?

    /// Opens the store, loads what it holds and settles what a previous run left unfinished.
    /// Transfers run on libcurl (`CurlEngine`).
    public convenience init(
        configuration: ServiceConfiguration, logger: Logger = Logger(label: "transferd.service"),
        metrics: TransferMetrics = TransferMetrics()
    ) throws {
        try self.init(configuration: configuration, logger: logger, metrics: metrics, engine: nil)
    }

    /// As above, with transfers run by `engine` (the service's tests pass a fake); nil makes the
    /// real `CurlEngine`, which puts every connection to the configuration's network policy.
    package init(
        configuration: ServiceConfiguration, logger: Logger = Logger(label: "transferd.service"),
        metrics: TransferMetrics = TransferMetrics(), engine: (any TransferRunner)?
    ) throws {
        // A download's `location` is an absolute path, so relative folders (`./data`) are made absolute.
        var configuration = configuration
        configuration.dataDirectory = FileSystem.absolute(configuration.dataDirectory)
        configuration.downloadsDirectory = configuration.downloadsDirectory.map(FileSystem.absolute)
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        store = try configuration.openStore?(metrics, logger)
            ?? Store(dataDirectory: configuration.dataDirectory, instruments: metrics, logger: logger)
        membership = ClusterMembership(registry: store.nodeRegistry, nodeId: configuration.nodeId,
                                       leaseTimeout: configuration.leaseTimeout, logger: logger)
        clusterWork = store.coordinator == nil ? nil : ClusterWork(leaseTimeout: configuration.leaseTimeout, dataDirectory: configuration.dataDirectory, logger: logger)
        try FileManager.default.createDirectory(atPath: configuration.downloadsRoot, withIntermediateDirectories: true)
        resumeSealer = try ResumeDataSealer(dataDirectory: configuration.dataDirectory)
        fileGrants = try FileGrants(dataDirectory: configuration.dataDirectory)
        credentials = try CredentialStore(store: store, dataDirectory: configuration.dataDirectory, logger: logger)
        // The network policy: every connection made for a tenant, by the engine or the webhook
        // thread, is checked on its resolved address (`NetworkPolicy+Gate`).
        self.engine = try engine ?? CurlEngine(connectionGate: configuration.networkPolicy.connectionGate)
        state = Mutex(ServiceState(scheduler: Scheduler(maxConcurrent: configuration.maxConcurrentTransfers)))
        let limits = Self.startingBandwidthLimits(store: store, configured: configuration.bandwidthLimits, logger: logger)
        state.withLock { $0.bandwidthLimits = limits }
        self.engine.submit(.setLimits(limits))  // taken when the engine thread starts
        blobs = try BlobStore(store: store, directory: configuration.dataDirectory + "/blobs", logger: logger)
        cookieStorage = try CookieStorage(store: store, logger: logger)
        webhooks = try WebhookDeliverer(connectionGate: configuration.networkPolicy.connectionGate)
        urlCaches = try URLCaches(configuration: configuration, store: store, logger: logger)
        try load()
        try loadWebhooks()
    }

    /// Starts the engine thread and the progress checkpoints; queued tasks begin.
    public func start() {
        engine.start(observer: EngineObserver(service: self))
        webhooks.start(feed: self, policy: configuration.webhookPolicy)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.checkpoint"))
        timer.schedule(deadline: .now() + configuration.checkpointInterval, repeating: configuration.checkpointInterval)
        timer.setEventHandler { [weak self] in self?.checkpoint() }
        timer.resume()
        checkpointTimer.set(timer)
        if let interval = retentionSweepInterval {
            let sweep = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.retention"))
            sweep.schedule(deadline: .now() + interval, repeating: interval)
            sweep.setEventHandler { [weak self] in self?.expireTasks(now: Date()) }
            sweep.resume()
            retentionTimer.set(sweep)
        }
        holdTimer.start { [weak self] in self?.releaseDueHolds() }
        let deliveries = state.withLock { s in
            var deliveries = Deliveries()
            admit(&s, &deliveries)
            return deliveries
        }
        deliveries.run()
    }

    /// First half of a clean stop: refuses new work and answers every held long-poll with the
    /// current state. Transfers go on until `stop()`. Idempotent.
    public func beginShutdown() {
        let waiting = state.withLock { s in
            s.accepting = false
            return s.waiters.takeAll()
        }
        answer(waiting)
        wakeAllTaskChangeWaiters()
        clusterWork?.waits.wakeAll()  // each answers with what it has: no longer accepting
    }

    /// Stops cleanly: refuses new work, answers held long-polls, stops transfers, checkpoints
    /// progress and closes the database. Idempotent.
    public func stop() {
        beginShutdown()
        checkpointTimer.cancel()
        retentionTimer.cancel()
        holdTimer.cancel()
        if !engine.stop(timeout: 3) {
            logger.warning("engine thread did not stop in time")
        }
        webhooks.stop(timeout: 3)
        checkpoint()
        urlCaches.flush()  // body files and their rows, before the database closes
        // The last checkpoints committed, the leases go back for the other nodes to continue.
        store.flush()
        clusterWork?.stop(store: store)
        membership.leave()
        store.close()
    }

    /// Whether the service takes requests: not stopping, the store open, the engine thread running.
    public var isReady: Bool { readiness == .ready }

    /// How many long-polls are held right now.
    public var heldLongPolls: Int { state.withLock { $0.heldLongPolls } + (clusterWork?.waits.count ?? 0) }

    /// Writes the progress of tasks that moved since the last checkpoint, in one transaction.
    func checkpoint() {
        if configuration.discretionaryWindow != nil {
            // The window opens with no event to wake the scheduler: look once a checkpoint.
            let deliveries = state.withLock { s in
                var deliveries = Deliveries()
                admit(&s, &deliveries)
                return deliveries
            }
            deliveries.run()
        }
        let now = EngineLoop.now()
        state.withLock { s in
            s.rates.sample(at: now)
            guard !s.dirty.isEmpty else { return }
            let operations = s.dirty.compactMap { id in
                s.tasks[id].flatMap { entry in
                    isRecorded(s, session: entry.task.sessionId)
                        ? taskWrite(s, entry, feedSeq: s.taskChanges.stamp(of: id)) : nil
                }
            }
            s.dirty.removeAll()
            store.enqueue(operations)
        }
        letGoOfCommittedCompletions()
        forgetDeleting(Array(state.withLock { $0.deletingStored }))  // marks a failed commit kept
    }

    // MARK: helpers used under the lock

    /// Bumps a task's version after a change, persists it (now, or at the next checkpoint for
    /// mere progress) and answers the long-polls waiting for it.
    func changed(_ s: inout ServiceState, task id: Int, persist: Bool, _ deliveries: inout Deliveries) {
        guard var entry = s.tasks[id] else { return }
        entry.task.version += 1
        s.tasks[id] = entry
        // Stamped first: the row carries the stamp of its change (a completed row is found in
        // the change feed by it once the task left memory).
        noteTaskChange(&s, task: entry.task, &deliveries)
        if persist {
            s.dirty.remove(id)
            record(s, session: entry.task.sessionId, taskWrite(s, entry, feedSeq: s.taskChanges.seq))
            // A write that gives the lease up: the task leaves this node once it is committed.
            if releases(entry) { markLeaving(&s, task: id) }
        } else {
            s.dirty.insert(id)
        }
        let snapshot = ProgressSnapshot(entry.task)
        for waiter in s.waiters.takeProgress(task: id, below: entry.task.version) {
            deliveries.add { waiter.callback(snapshot) }
        }
    }

    /// Appends a delegate event to the session's feed, persists it, and answers its long-polls.
    func emit(_ s: inout ServiceState, session: String, task: Int?, _ type: EventType, _ fields: [String: JSONValue], _ deliveries: inout Deliveries) {
        var event = TaskEvent(seq: takeEventSeq(&s), sessionId: session, taskId: task, type: type, time: Date(), fields: fields)
        event.owner = task.flatMap { s.tasks[$0]?.task.owner }  // who may see it once the task left memory
        let hasWebhook = s.sessions[session]?.webhook != nil
        if isClustered, isRecorded(s, session: session) {
            // The feed is the store's: it numbers the event when it commits it, keeps the
            // session's newest events, and signals the nodes whose long-polls wait for it. Only
            // the webhook reads this node's copy (its own events; docs/cluster.md, gaps).
            if hasWebhook { _ = s.events[session, default: EventLog(capacity: configuration.eventRetention)].append(event) }
            record(s, session: session, .appendEvent(event))
            if hasWebhook { webhooks.nudge(session: session) }
            return
        }
        // Appended in place: a copy of the log taken out of the dictionary would make every
        // append copy the whole array (the log is shared until written back).
        let oldestKept = s.events[session, default: EventLog(capacity: configuration.eventRetention)].append(event)
        record(s, session: session, .appendEvent(event))
        if hasWebhook { webhooks.nudge(session: session) }
        if let oldestKept { record(s, session: session, .pruneEvents(sessionId: session, oldestKept: oldestKept)) }
        for waiter in s.waiters.takeEvents(session: session, for: event) {
            let page = visibleEvents(s, waiting: waiter, in: session)
            deliveries.add { waiter.callback(page) }
        }
    }

    func saveSession(_ s: inout ServiceState, _ session: Session) {
        var session = session
        session.version += 1
        session.configuration.urlCache = urlCaches.resolve(session.configuration.urlCache, kind: session.kind)
        s.sessions[session.id] = session
        record(s, session: session.id, .saveSession(session))
    }

    /// Whether a session's state reaches the store: an ephemeral session's never does (its
    /// sessions, tasks, events and bodies live in memory, as URLSession's ephemeral
    /// configuration keeps nothing on disk), so it is gone after a restart.
    func isRecorded(_ s: ServiceState, session id: String) -> Bool {
        s.sessions[id]?.kind != .ephemeral
    }

    /// Queues a store write for a session that is recorded.
    func record(_ s: ServiceState, session id: String, _ operation: StoreOperation) {
        if isRecorded(s, session: id) { store.enqueue(operation) }
    }

    private func answer(_ waiting: (progress: [Int: [Waiters.ProgressWaiter]], events: [String: [Waiters.EventsWaiter]])) {
        let (progress, events) = state.withLock { s in
            (waiting.progress.compactMap { id, list in s.tasks[id].map { (ProgressSnapshot($0.task), list) } },
             waiting.events.flatMap { session, list in
                 list.map { w in (visibleEvents(s, waiting: w, in: session), w) }
             })
        }
        for (snapshot, list) in progress { for waiter in list { waiter.callback(snapshot) } }
        for (page, waiter) in events { waiter.callback(page) }
    }
}

extension EventPage {
    /// Sets `next` to the last event's seq, or keeps the client's cursor when there is none.
    func withNext(after: Int) -> EventPage {
        EventPage(events: events, next: events.last?.seq ?? after)
    }
}

/// Forwards engine updates to the service. A separate small type so the engine thread holds the
/// service only while it runs (the service stops the engine before it goes away).
struct EngineObserver: TransferObserver {
    let service: TransferService
    func transfer(_ taskId: Int, _ update: TransferUpdate) { service.handle([(taskId, update)]) }
    func transfers(_ batch: [(taskId: Int, update: TransferUpdate)]) { service.handle(batch) }
    func transfersEnded(_ taskIds: [Int]) { service.transfersEnded(taskIds) }
}

/// The checkpoint timer, set at start and cancelled at stop.
///
/// `@unchecked Sendable`: the timer is only touched under `lock`, and DispatchSource's
/// `cancel` is documented thread-safe.
final class HandOffTimer: @unchecked Sendable {
    private let lock = Mutex(())
    private var timer: (any DispatchSourceTimer)?

    func set(_ timer: any DispatchSourceTimer) { lock.withLock { _ in self.timer = timer } }

    func cancel() {
        lock.withLock { _ in
            timer?.cancel()
            timer = nil
        }
    }
}
