public import FoundationEssentials
internal import Synchronization
public import TransferModel
internal import TransferEngine
internal import TransferStore

/// A queued task as `GET /v1/queue` lists it.
public struct QueueEntry: Codable, Sendable, Equatable {
    /// 1-based place in admission order: among every queued task for an admin (or without
    /// tokens), among the caller's own for a tenant, who learns nothing of the others' tasks.
    public var position: Int
    public var taskId: Int
    public var sessionId: String
    public var kind: TaskKind
    public var schedulingClass: SchedulingClass
    public var priority: TaskPriority
    public var networkServiceType: NetworkServiceType
    /// From an isDiscretionary session: starts only when nothing else waits.
    public var discretionary: Bool
    /// Why it has not started: globalCap, hostCap, sessionCap or discretionary.
    public var waitingFor: String
    public var createdAt: Date
}

public struct QueuePage: Codable, Sendable, Equatable {
    /// Queued tasks in all: every tenant's for an admin (or without tokens), the caller's own for a tenant.
    public var total: Int
    public var tasks: [QueueEntry]
}

/// `GET /v1/stats`: what runs and waits, and how fast, per scheduling class.
public struct ServiceStats: Codable, Sendable, Equatable {
    public struct ClassStats: Codable, Sendable, Equatable {
        public var running: Int
        public var queued: Int
        public var downloadBytesPerSecond: Double
        public var uploadBytesPerSecond: Double
        public var totalBytesReceived: Int
        public var totalBytesSent: Int
    }

    public var maxConcurrentTransfers: Int
    /// Admitted transfers (a suspended one that keeps its connection counts: it holds its slot).
    public var running: Int
    public var queued: Int
    /// Running tasks held out of the queue: waiting for connectivity, a retry or their begin date.
    public var waiting: Int
    public var suspended: Int
    public var downloadBytesPerSecond: Double
    public var uploadBytesPerSecond: Double
    public var classes: [String: ClassStats]
}

extension TransferService {
    /// Queued tasks in the order they will be admitted (as far as the caps let them), the first
    /// `limit` of those the caller may see. `total` and `position` count every queued task when
    /// `countsEveryone`, else only those the caller may see (a tenant learns nothing of the
    /// others' tasks, not even how many wait before its own).
    ///
    /// In a cluster the queue is the store's (`clusterQueue`). Throws when the store cannot be read.
    public func queue(owner: String?, limit: Int, countsEveryone: Bool = true) throws -> QueuePage {
        if let coordinator = store.coordinator { return try clusterQueue(coordinator, owner: owner, limit: limit, countsEveryone: countsEveryone) }
        // A page costs the page, not the queue (`Scheduler.listing`): the lock is held briefly
        // with 100,000 queued as with 10.
        return state.withLock { s in
            let (total, listed) = s.scheduler.listing(requester: owner, everyone: countsEveryone, limit: limit)
            let entries = listed.compactMap { item, position -> QueueEntry? in
                guard let task = s.tasks[item.taskId]?.task else { return nil }
                return QueueEntry(
                    position: position, taskId: task.id, sessionId: task.sessionId, kind: task.kind,
                    schedulingClass: item.schedulingClass, priority: task.priority, networkServiceType: task.networkServiceType,
                    discretionary: item.discretionary, waitingFor: item.blockedBy.rawValue, createdAt: task.createdAt)
            }
            return QueuePage(total: total, tasks: entries)
        }
    }

    /// Counts and rates over the whole daemon (not filtered by owner: it is the daemon's load);
    /// in a cluster, over every live node (`clusterStats`). Throws when the store cannot be read.
    public func stats() throws -> ServiceStats {
        let mine = localStats()
        guard store.coordinator != nil else { return mine }
        return try clusterStats(adding: mine)
    }

    /// This daemon's own counts and rates.
    func localStats() -> ServiceStats {
        let now = EngineLoop.now()
        return state.withLock { s in
            var waiting = 0, suspended = 0
            for (key, count) in s.tasks.census.counts {
                switch (key.state, key.phase) {
                case (.suspended, _): suspended += count
                case (.running, .waiting), (.running, .retrying): if !key.inEngine { waiting += count }
                default: break
                }
            }
            var classes: [String: ServiceStats.ClassStats] = [:]
            var download = 0.0, upload = 0.0
            for schedulingClass in SchedulingClass.allCases {
                let rates = s.rates.rates(schedulingClass, now: now)
                let totals = s.rates.totals[schedulingClass] ?? ClassRates.Totals()
                download += rates.received
                upload += rates.sent
                classes[schedulingClass.rawValue] = ServiceStats.ClassStats(
                    running: s.scheduler.runningByClass[schedulingClass] ?? 0, queued: s.scheduler.queuedByClass[schedulingClass] ?? 0,
                    downloadBytesPerSecond: rates.received, uploadBytesPerSecond: rates.sent,
                    totalBytesReceived: totals.received, totalBytesSent: totals.sent)
            }
            return ServiceStats(
                maxConcurrentTransfers: s.scheduler.maxConcurrent, running: s.scheduler.runningCount, queued: s.scheduler.queuedCount,
                waiting: waiting, suspended: suspended, downloadBytesPerSecond: download, uploadBytesPerSecond: upload, classes: classes)
        }
    }
}
