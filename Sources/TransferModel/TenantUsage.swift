/// What each tenant holds, for its quotas (`TenantQuotas`): how many of its tasks are unfinished
/// and how many bytes its tasks keep (what they received: a download's file, a kept response
/// body; a stream task's bytes pass through and are not kept). Blobs are counted by `BlobStore`.
///
/// Held in `ServiceState` under the service's lock and updated where every task change and
/// removal passes (`noteTaskChange`, `noteTaskRemoval`) and at load, so it is right after a
/// restart and costs O(1) a change, never a walk of the data folder. Keyed by owner (the token's
/// fingerprint; "" for the anonymous user without tokens).
package struct TenantUsage: Sendable {
    /// What a task was counted as, in 8 bytes (the table holds one per live task).
    private struct Counted: Sendable, Equatable {
        private let bits: Int
        init(unfinished: Bool, bytes: Int) { bits = max(0, bytes) << 1 | (unfinished ? 1 : 0) }
        var unfinished: Bool { bits & 1 == 1 }
        var bytes: Int { bits >> 1 }
    }

    private var unfinished: [String: Int] = [:]
    private var bytes: [String: Int] = [:]
    /// What each live task was last counted as.
    private var counted: [Int: Counted] = [:]

    package static func key(_ owner: String?) -> String { owner ?? "" }

    /// The bytes a task keeps for its tenant (the store's `held_bytes` column too).
    package static func heldBytes(of task: TransferTask) -> Int {
        task.kind == .stream ? 0 : max(0, task.progress.bytesReceived)
    }

    /// Counts a new or changed task (replacing what it was counted as before).
    package mutating func note(_ task: TransferTask) {
        let now = Counted(unfinished: task.state != .completed, bytes: Self.heldBytes(of: task))
        let before = counted.updateValue(now, forKey: task.id)
        // Most changes (a phase, an event, a start) move neither count: nothing to add. Every
        // update of a task passes here; the two adds' lookups were 26 string-keyed dictionary
        // finds per 16 KiB download (callgrind).
        if before == now { return }
        add(task.owner, now, sign: 1)
        if let before { add(task.owner, before, sign: -1) }
    }

    /// Stops counting a deleted task.
    package mutating func remove(_ task: TransferTask) {
        guard let before = counted.removeValue(forKey: task.id) else { return }
        add(task.owner, before, sign: -1)
    }

    /// Stops tracking a completed task that left memory for the store: what it keeps stays
    /// counted, as the store's (`removeStored` takes it off when the task is deleted).
    package mutating func forget(_ id: Int) {
        counted.removeValue(forKey: id)
    }

    /// Counts what completed tasks kept only in the store hold (at start, from its summary).
    package mutating func addStored(owner: String?, bytes: Int) {
        add(owner, Counted(unfinished: false, bytes: bytes), sign: 1)
    }

    /// Stops counting a deleted completed task that was kept only in the store.
    package mutating func removeStored(_ task: TransferTask) {
        add(task.owner, Counted(unfinished: false, bytes: Self.heldBytes(of: task)), sign: -1)
    }

    package func unfinishedTasks(of owner: String?) -> Int { unfinished[Self.key(owner)] ?? 0 }

    package func heldBytes(of owner: String?) -> Int { bytes[Self.key(owner)] ?? 0 }

    private mutating func add(_ owner: String?, _ value: Counted, sign: Int) {
        let key = Self.key(owner)
        if value.unfinished { unfinished[key, default: 0] += sign }
        if value.bytes != 0 { bytes[key, default: 0] += sign * value.bytes }
        if unfinished[key] == 0 { unfinished[key] = nil }
        if bytes[key] == 0 { bytes[key] = nil }
    }

    /// The memberwise initializer, for the layers above.
    package init() {
    }
}
