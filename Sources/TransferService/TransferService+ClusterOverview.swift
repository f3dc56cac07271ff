internal import FoundationEssentials
internal import Synchronization
public import TransferModel
internal import TransferStore

/// The answers that in a cluster are the whole cluster's, not one node's: the queue (the
/// store's), the figures of `GET /v1/stats` (every live node's, added up) and a tenant's usage
/// for its quotas (its tasks and blobs on every node). A daemon alone answers from its memory.
///
/// Tenancy: the queue is read scoped to the caller (`ClusterOverviewQueries`: its own rows and
/// the anonymous ones, numbered over every tenant's only for an admin); usage is read for the
/// caller's owner alone; the figures are counts without any task or owner (an admin's route).
extension TransferService {
    /// `GET /v1/queue` from the store's queue, with the same visibility as `queue(owner:...)`.
    func clusterQueue(_ coordinator: any ClusterCoordinator, owner: String?, limit: Int, countsEveryone: Bool) throws -> QueuePage {
        let page: StoredQueuePage
        do {
            page = try coordinator.queue(owner: owner, everyone: countsEveryone, limit: limit)
        } catch {
            throw StoreReadFailure(reason: "the cluster's queue cannot be read: \(error)")
        }
        return QueuePage(total: page.total, tasks: page.entries.map { entry in
            QueueEntry(position: entry.position, taskId: entry.task.id, sessionId: entry.task.sessionId, kind: entry.task.kind,
                       schedulingClass: entry.task.schedulingClass, priority: entry.task.priority,
                       networkServiceType: entry.task.networkServiceType, discretionary: entry.discretionary,
                       waitingFor: entry.waitingFor, createdAt: entry.task.createdAt)
        })
    }

    /// This node's figures (`mine`, current) added to those the other live nodes sent with their
    /// last heartbeat (up to a third of the lease timeout old), and the store's queue.
    func clusterStats(adding mine: ServiceStats) throws -> ServiceStats {
        guard let coordinator = store.coordinator else { return mine }
        let others: [ServiceStats]
        let counts: StoredClassCounts
        do {
            others = try membership.otherNodesStats().compactMap { try? JSONCoding.decoder.decode(ServiceStats.self, from: Data($0.utf8)) }
            counts = try coordinator.classCounts()
        } catch {
            throw StoreReadFailure(reason: "the cluster's figures cannot be read: \(error)")
        }
        var total = mine
        for node in others {
            total.maxConcurrentTransfers += node.maxConcurrentTransfers
            total.running += node.running
            total.queued += node.queued
            total.waiting += node.waiting
            total.suspended += node.suspended
            total.downloadBytesPerSecond += node.downloadBytesPerSecond
            total.uploadBytesPerSecond += node.uploadBytesPerSecond
            for (name, figures) in node.classes {
                total.classes[name, default: .zero] = total.classes[name, default: .zero].adding(figures)
            }
        }
        // A node's `queued` is what it claimed and has not started; the rest waits in the store.
        for (name, queued) in counts.queued {
            total.queued += queued
            total.classes[name, default: .zero].queued += queued
        }
        // A suspended task that keeps no connection leaves its node for the store.
        total.suspended = max(total.suspended, counts.suspended)
        return total
    }

    /// What this node tells the others at its heartbeat: its load, and its figures in a cluster.
    var nodeLoad: NodeLoad {
        let stats = store.coordinator == nil ? nil : (try? JSONCoding.encoder.encode(localStats())).map { String(decoding: $0, as: UTF8.self) }
        return state.withLock { s in
            NodeLoad(running: s.scheduler.runningCount, queued: s.scheduler.queuedCount, maxConcurrentTransfers: s.scheduler.maxConcurrent,
                     stats: stats)
        }
    }
}

extension ServiceStats.ClassStats {
    static let zero = ServiceStats.ClassStats(running: 0, queued: 0, downloadBytesPerSecond: 0, uploadBytesPerSecond: 0,
                                              totalBytesReceived: 0, totalBytesSent: 0)

    func adding(_ other: Self) -> Self {
        Self(running: running + other.running, queued: queued + other.queued,
             downloadBytesPerSecond: downloadBytesPerSecond + other.downloadBytesPerSecond,
             uploadBytesPerSecond: uploadBytesPerSecond + other.uploadBytesPerSecond,
             totalBytesReceived: totalBytesReceived + other.totalBytesReceived, totalBytesSent: totalBytesSent + other.totalBytesSent)
    }
}
