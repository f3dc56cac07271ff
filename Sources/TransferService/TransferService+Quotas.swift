internal import Synchronization
public import TransferModel
internal import TransferStore

/// The tenant quotas (`TenantQuotas`), checked where tasks and blobs are created, from counts
/// kept as things change (`TenantUsage`, `BlobStore.heldBytes`): no folder is walked.
extension TransferService {
    /// What a tenant holds and may hold (`GET /v1/quota`); a quota without a limit is null.
    public struct QuotaUsage: Codable, Sendable, Equatable {
        public var tasks: Int
        @NullEncoded public var maxTasks: Int?
        public var diskBytes: Int
        @NullEncoded public var maxDiskBytes: Int?
    }

    public func quotaUsage(owner: String?) -> QuotaUsage {
        let (tasks, taskBytes) = state.withLock { ($0.usage.unfinishedTasks(of: owner), $0.usage.heldBytes(of: owner)) }
        let quotas = configuration.tenantQuotas
        return QuotaUsage(tasks: tasks, maxTasks: quotas.maxTasks, diskBytes: taskBytes + blobs.heldBytes(owner: owner), maxDiskBytes: quotas.maxDiskBytes)
    }

    /// Under the lock, before `count` tasks are created for `owner`: refuses them all when they
    /// would pass its task quota, or when it is at or past its disk quota already.
    func checkQuotas(_ s: ServiceState, owner: String?, adding count: Int) throws {
        let quotas = configuration.tenantQuotas
        if let limit = quotas.maxTasks {
            let held = s.usage.unfinishedTasks(of: owner)
            if held + count > limit { throw ServiceError.quotaExceeded(.tasks(limit: limit, held: held, adding: count)) }
        }
        if let limit = quotas.maxDiskBytes {
            let held = s.usage.heldBytes(of: owner) + blobs.heldBytes(owner: owner)
            if held >= limit { throw ServiceError.quotaExceeded(.disk(limit: limit, held: held, adding: 0)) }
        }
    }

    /// The most bytes `owner`'s blobs may hold in all now (its disk quota less what its tasks
    /// hold), for `BlobWriter.commit(limit:)`; nil without a disk quota.
    public func blobByteLimit(owner: String?) -> Int? {
        guard let limit = configuration.tenantQuotas.maxDiskBytes else { return nil }
        return limit - state.withLock { $0.usage.heldBytes(of: owner) }
    }

    /// The refusal of a blob of `size` bytes that would pass `owner`'s disk quota (asked with
    /// its Content-Length before any byte is read, and when its commit found no room); nil when
    /// it fits or there is no quota.
    public func blobQuotaRefusal(owner: String?, size: Int) -> ServiceError? {
        guard let limit = configuration.tenantQuotas.maxDiskBytes else { return nil }
        let held = quotaUsage(owner: owner).diskBytes
        guard held + size > limit else { return nil }
        return .quotaExceeded(.disk(limit: limit, held: held, adding: size))
    }
}
