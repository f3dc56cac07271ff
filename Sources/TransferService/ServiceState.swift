internal import FoundationEssentials
internal import TransferModel
internal import TransferEngine

/// A task as the service holds it: the served record plus what only the service needs.
struct TaskEntry: Sendable {
    var task: TransferTask
    /// The request body, kept to start (or restart) the transfer.
    var requestBody: Data?
    /// The user and password its URL carried (`URLLogin`): this task's alone (sealed in its row).
    var urlLogin: URLLogin? {
        get { rare?.urlLogin }
        set { changeRare { $0.urlLogin = newValue } }
    }
    /// Whether the engine holds a transfer for it (running or paused).
    var inEngine = false
    /// A cancel sent to the engine asked to keep the partial file (cancel producing resume data).
    var cancelKeepsPartial = false
    /// In a cluster, for a task a command brought here (`holdForCommand`): whether it goes
    /// back once the command is applied.
    var commandReturn = CommandReturn.no

    /// In a cluster, the epoch of this node's lease on the task (0: none yet, made here and not
    /// claimed, or of an ephemeral session, which never leaves its node). Every write of the
    /// task's row names it (`TaskPlacement.held`).
    /// Four bytes, beside the three flags above: with them in one word the entry stays at 488 bytes
    /// (a task claimed two billion times would wrap it).
    var leaseEpoch: Int32 = 0
    enum CommandReturn: UInt8, Sendable {
        /// A task this node claimed, or made: it stays while it runs here.
        case no
        /// Taken for a command, which is running: its writes keep the lease.
        case pending
        /// Its next write gives it back to the queue, where a claim decides where it runs.
        case toQueue
    }
    /// A completed data task's response body, for sessions whose bodies are not stored
    /// (ephemeral); others read it from the store.
    var responseBody: Data? {
        get { rare?.responseBody }
        set { changeRare { $0.responseBody = newValue } }
    }
    /// A running data task's body as it arrives (nil once the attempt ended).
    var liveBody: LiveBody? {
        get { rare?.liveBody }
        set { changeRare { $0.liveBody = newValue } }
    }
    /// The stream a data task became by becomeStream (`BodyStreamReads`).
    var streamOfBody: BodyStreamReads? {
        get { rare?.bodyStream }
        set { changeRare { $0.bodyStream = newValue } }
    }
    /// A completion held for a cache decision (`TransferService+URLCache`).
    var cacheDecision: CacheDecisionHold? {
        get { rare?.cacheDecision }
        set { changeRare { $0.cacheDecision = newValue } }
    }
    /// While the task waits for connectivity: how many tries it made in this wait; nil otherwise.
    var connectivityTries: Int? {
        get { rare?.connectivityTries }
        set { changeRare { $0.connectivityTries = newValue } }
    }
    /// The parts above, which few tasks have, in one box: one pointer in every entry instead
    /// of three (the entry stays at 488 bytes, a 512-byte block with its box in `TaskTable`).
    @Indirect var rare: RareParts?
    /// What the URL cache is doing for the task's current attempt (`TransferService+URLCache`).
    @Indirect var cache: CacheTaskContext?
    /// When the task last entered the scheduler's queue, until it starts (`transferd_admission_wait_seconds`).
    var queuedAt: ContinuousClock.Instant? {
        get { queuedSince < 0 ? nil : Self.clockStart.advanced(by: .nanoseconds(queuedSince)) }
        set { queuedSince = newValue.map { Self.nanoseconds(Self.clockStart.duration(to: $0)) } ?? -1 }
    }
    /// `queuedAt` as nanoseconds after `clockStart` (-1: none): 8 bytes, where the optional
    /// instant took 24 in every queued task's entry.
    var queuedSince: Int64 = -1
    /// The requests the task made so far, as the engine reported them (its metrics at completion).
    var transactions: [TransactionMetrics] = []
    /// A completed task's metrics, for sessions whose records are not stored (ephemeral);
    /// others read them from the store.
    @Indirect var metrics: TaskMetrics?

    struct RareParts: Sendable {
        var urlLogin: URLLogin?
        var responseBody: Data?
        var connectivityTries: Int?
        /// A running data task's body as it arrives (`LiveBody`), for readers that follow it.
        var liveBody: LiveBody?
        /// A completion held while the client decides whether its response is cached.
        var cacheDecision: CacheDecisionHold?
        /// The stream a data task became (becomeStream): its reads follow the body.
        var bodyStream: BodyStreamReads?
        var isEmpty: Bool { urlLogin == nil && responseBody == nil && connectivityTries == nil && liveBody == nil && cacheDecision == nil && bodyStream == nil }
    }

    private mutating func changeRare(_ change: (inout RareParts) -> Void) {
        var parts = rare ?? RareParts()
        change(&parts)
        rare = parts.isEmpty ? nil : parts
    }

    /// Set at the first use, so the very first instant recorded, taken just before, counts as it.
    private static let clockStart = ContinuousClock.now

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// Everything `TransferService` guards with its one lock.
struct ServiceState: Sendable {
    var sessions: [String: Session] = [:]
    /// Session ids in creation order (the list order and its cursor).
    var sessionOrder: [String] = []
    /// In a cluster, the store's creation number of the last session a list learned
    /// (`learnNewSessions`): the next list asks only for those after it.
    var learnedSessionsThrough = 0
    var tasks = TaskTable()
    /// Task ids per session, ascending.
    var tasksBySession: [String: [Int]] = [:]
    var events: [String: EventLog] = [:]
    var scheduler: Scheduler
    /// Bytes moved per scheduling class, for the rates `GET /v1/stats` serves.
    var rates = ClassRates()
    /// Running tasks kept out of the scheduler until a date (`TransferService+Holds`).
    var holds = Holds()
    var waiters = Waiters()
    /// The change feed of every task and its long-polls (`GET /v1/tasks?after=`).
    var taskChanges = TaskChangeLog()
    /// Each tenant's unfinished tasks and bytes held, for its quotas.
    var usage = TenantUsage()
    /// In a cluster, this node's creations its quota reads may not have seen.
    var creationsInFlight = CreationsInFlight()
    /// Tasks whose progress changed since the last checkpoint.
    var dirty: Set<Int> = []
    /// Completed tasks of recorded sessions that leave memory once their completion is
    /// committed (`TransferService+StoredTasks`).
    var leaving: Set<Int> = []
    /// How many ids in each session's `tasksBySession` list are of tasks that left memory.
    var staleSessionIds: [String: Int] = [:]
    /// Completed tasks kept only in the store, by their /metrics labels.
    var storedCompleted: [MetricsSnapshot.TaskLabels: Int] = [:]
    /// Stored completed tasks whose delete is queued, so a second delete finds nothing.
    var deletingStored: Set<Int> = []
    /// The change feed may hand out stamps up to this one (reserved in the store).
    var feedSeqReserved = 0
    /// Tasks whose client-streamed body is taking a chunk right now (one at a time per task).
    var appendingChunks: Set<Int> = []
    var nextTaskId = 1
    /// Where the block of ids `nextTaskId` counts in ends: a cluster's node takes blocks from the
    /// store (`TransferService+ClusterQueue`); a daemon alone counts on without end.
    var taskIdsEnd = Int.max
    /// The daemon-wide rate limits in effect (TransferService+Limits).
    var bandwidthLimits = BandwidthLimits()
    var nextEventSeq = 1
    /// Where the block of event sequence numbers ends (as `taskIdsEnd`).
    var eventSeqsEnd = Int.max
    var accepting = true
    /// Background sessions' live attachments, by session id (`TransferService+Attachments`).
    var attachments: [String: Attachment] = [:]

    /// Long-polls held open: progress and event waiters, and the task change feed's.
    var heldLongPolls: Int { waiters.count + taskChanges.waiterCount }
}

/// Work decided under the lock and carried out after releasing it (long-poll answers call into
/// the HTTP server, which must never happen with the service locked).
struct Deliveries: Sendable {
    private var actions: [@Sendable () -> Void] = []
    mutating func add(_ action: @escaping @Sendable () -> Void) { actions.append(action) }
    mutating func add(_ other: Deliveries) { actions += other.actions }
    func run() { for action in actions { action() } }
}
