internal import Logging
internal import Synchronization
public import TransferModel
internal import TransferStore

/// The tenant quotas (`TenantQuotas`), checked where tasks and blobs are created, from counts
/// kept as things change (`TenantUsage`, `BlobStore.heldBytes`): no folder is walked.
///
/// In a cluster a tenant's tasks and blobs are on every node and in the store's queue, so its
/// usage is the store's (`ClusterCoordinator.usage`, a read per check), plus what only this node
/// knows: the tasks of its ephemeral sessions (never stored; `TenantUsage` counts only those
/// here) and the creations still on their way to the store (`CreationsInFlight`). A creation
/// reads and commits in the tenant's turn (`beginTenantCreations`): what another node creates
/// for the same tenant at the same moment waits for it, so the task quota holds across nodes.
extension TransferService {
    /// What a tenant holds and may hold (`GET /v1/quota`); a quota without a limit is null.
    public struct QuotaUsage: Codable, Sendable, Equatable {
        public var tasks: Int
        @NullEncoded public var maxTasks: Int?
        public var diskBytes: Int
        @NullEncoded public var maxDiskBytes: Int?
    }

    /// What `owner` holds against its quotas. Throws when a cluster's store cannot be read.
    public func quotaUsage(owner: String?) throws -> QuotaUsage {
        let held = try heldUsage(owner: owner)
        let quotas = configuration.tenantQuotas
        return QuotaUsage(tasks: held.tasks, maxTasks: quotas.maxTasks, diskBytes: held.taskBytes + held.blobBytes, maxDiskBytes: quotas.maxDiskBytes)
    }

    /// In a cluster, whether this node counts `task` in its own `TenantUsage`: only an
    /// ephemeral session's task, which the store never holds. Alone, every task.
    func countsUsageHere(_ s: ServiceState, _ task: TransferTask) -> Bool {
        !isClustered || !isRecorded(s, session: task.sessionId)
    }

    /// What a tenant holds: its tasks not completed, the bytes they keep, the bytes its blobs
    /// keep. A cluster's read starts from the store's figures; `mark` is what this node had
    /// committed of its creations before that read, so the creations committed since (which
    /// the read may or may not have seen) are counted once more rather than missed.
    struct HeldUsage {
        var tasks: Int
        var taskBytes: Int
        var blobBytes: Int
    }

    func heldUsage(owner: String?) throws -> HeldUsage {
        let stored = try storedUsage(owner: owner)
        return state.withLock { s in heldUsage(s, owner: owner, stored: stored) }
    }

    /// A tenant's creation turn across the cluster, held from the usage read to the commit.
    struct CreationTurn {
        let end: () -> Void
    }

    func beginTenantCreations(owner: String?) throws -> CreationTurn? {
        guard let coordinator = store.coordinator else { return nil }
        do {
            try coordinator.beginTenantCreations(owner: owner)
        } catch {
            throw StoreReadFailure(reason: "the tenant's creations cannot take their turn in the store: \(error)")
        }
        return CreationTurn { coordinator.endTenantCreations(owner: owner) }
    }

    /// The store's figures for `owner` and this node's count of landed creations before the read
    /// (nil for a daemon alone).
    func storedUsage(owner: String?) throws -> (usage: StoredUsage, mark: Int)? {
        guard let coordinator = store.coordinator else { return nil }
        let mark = state.withLock { $0.creationsInFlight.landed(of: owner) }
        do {
            return (try coordinator.usage(owner: owner), mark)
        } catch {
            throw StoreReadFailure(reason: "the tenant's usage cannot be read from the store: \(error)")
        }
    }

    func heldUsage(_ s: ServiceState, owner: String?, stored: (usage: StoredUsage, mark: Int)?) -> HeldUsage {
        var held = HeldUsage(tasks: s.usage.unfinishedTasks(of: owner), taskBytes: s.usage.heldBytes(of: owner),
                             blobBytes: blobs.heldBytes(owner: owner))
        if let stored {
            held.tasks += stored.usage.unfinishedTasks + s.creationsInFlight.unseen(of: owner, since: stored.mark)
            held.taskBytes += stored.usage.taskBytes
            held.blobBytes = stored.usage.blobBytes
        }
        return held
    }

    /// Under the lock, before `count` tasks are created for `owner`: refuses them all when they
    /// would pass its task quota, or when it is at or past its disk quota already. `stored` is
    /// the cluster's read, made before the lock (`storedUsage`).
    func checkQuotas(_ s: ServiceState, owner: String?, adding count: Int, stored: (usage: StoredUsage, mark: Int)?) throws {
        let quotas = configuration.tenantQuotas
        guard quotas.maxTasks != nil || quotas.maxDiskBytes != nil else { return }
        let held = heldUsage(s, owner: owner, stored: stored)
        if let limit = quotas.maxTasks, held.tasks + count > limit {
            throw ServiceError.quotaExceeded(.tasks(limit: limit, held: held.tasks, adding: count))
        }
        if let limit = quotas.maxDiskBytes, held.taskBytes + held.blobBytes >= limit {
            throw ServiceError.quotaExceeded(.disk(limit: limit, held: held.taskBytes + held.blobBytes, adding: 0))
        }
    }

    /// Whether a creation must read the store's usage first (a cluster with a quota).
    var readsStoredUsage: Bool {
        isClustered && (configuration.tenantQuotas.maxTasks != nil || configuration.tenantQuotas.maxDiskBytes != nil)
    }

    /// The most bytes `owner`'s blobs may hold in all now (its disk quota less what its tasks
    /// hold), for `BlobWriter.commit(limit:)`; nil without a disk quota. `BlobStore` checks it
    /// against the blobs it counts itself; in a cluster the other nodes' blobs are taken off
    /// the limit, so its check is the cluster's. A store that cannot be read leaves this node's
    /// own counts.
    public func blobByteLimit(owner: String?) -> Int? {
        guard let limit = configuration.tenantQuotas.maxDiskBytes else { return nil }
        let held: HeldUsage
        do {
            held = try heldUsage(owner: owner)
        } catch {
            logger.warning("a blob's quota is checked against this node's counts alone", metadata: ["error": "\(error)"])
            return limit - state.withLock { $0.usage.heldBytes(of: owner) }
        }
        let elsewhere = held.blobBytes - blobs.heldBytes(owner: owner)
        return limit - held.taskBytes - elsewhere
    }

    /// The refusal of a blob of `size` bytes that would pass `owner`'s disk quota (asked with
    /// its Content-Length before any byte is read, and when its commit found no room); nil when
    /// it fits, when there is no quota, or when a cluster's store cannot be read (the commit
    /// checks again).
    public func blobQuotaRefusal(owner: String?, size: Int) -> ServiceError? {
        guard let limit = configuration.tenantQuotas.maxDiskBytes, let usage = try? quotaUsage(owner: owner) else { return nil }
        let held = usage.diskBytes
        guard held + size > limit else { return nil }
        return .quotaExceeded(.disk(limit: limit, held: held, adding: size))
    }
}
