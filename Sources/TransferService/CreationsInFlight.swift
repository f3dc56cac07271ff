internal import TransferModel

/// In a cluster, this node's task creations per tenant that its quota read may not have seen
/// (`TransferService+Quotas`): those created and not yet committed (`pending`), and a running
/// count of those committed (`landed`), so a check knows which commits came after its read of
/// the store. A value type in `ServiceState`, under the service's lock. Keyed by owner
/// (`TenantUsage.key`): a tenant's counts never mix with another's.
struct CreationsInFlight: Sendable {
    private var pending: [String: Int] = [:]
    private var landed: [String: Int] = [:]

    /// How many of `owner`'s creations have been committed (or refused) so far: a mark.
    func landed(of owner: String?) -> Int { landed[TenantUsage.key(owner)] ?? 0 }

    /// What a store read made after `mark` may have missed: creations still pending, and
    /// those that landed since the mark (counted even if the read saw them: a check that errs
    /// refuses early, never lets a quota pass).
    func unseen(of owner: String?, since mark: Int) -> Int {
        let key = TenantUsage.key(owner)
        return (pending[key] ?? 0) + (landed[key] ?? 0) - mark
    }

    mutating func begin(owner: String?, count: Int) {
        pending[TenantUsage.key(owner), default: 0] += count
    }

    /// The creation's commit settled (committed or refused).
    mutating func end(owner: String?, count: Int) {
        let key = TenantUsage.key(owner)
        let left = (pending[key] ?? 0) - count
        pending[key] = left > 0 ? left : nil
        landed[key, default: 0] += count
    }
}
