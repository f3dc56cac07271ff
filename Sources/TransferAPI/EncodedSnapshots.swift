internal import HTTPServer
internal import Synchronization
internal import TransferModel

/// The JSON response of each task's latest progress snapshot, so that when a change wakes a
/// thousand long-polls on one task the snapshot is encoded once, not a thousand times.
final class EncodedSnapshots: Sendable {
    private let cache = Mutex<[Int: (version: Int, response: HTTPResponse)]>([:])
    /// Entries kept at most; past this the cache starts over (it only saves work, never changes answers).
    private let capacity = 4096

    func response(for snapshot: ProgressSnapshot) -> HTTPResponse {
        if let hit = cache.withLock({ $0[snapshot.taskId] }), hit.version == snapshot.version {
            return hit.response
        }
        let response = HTTPResponse.json(snapshot)
        cache.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            if (entries[snapshot.taskId]?.version ?? -1) <= snapshot.version {
                entries[snapshot.taskId] = (snapshot.version, response)
            }
        }
        return response
    }
}
