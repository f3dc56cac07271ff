import Foundation

/// The shared state of one ``TusServer``: its uploads and the log of exchanges, shared by the
/// server object, its accept thread and its connection threads.
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked
/// (the listener and the threads are `ServerThreads`').
final class TusState: @unchecked Sendable {
    let faults: @Sendable (TusRequestHead) -> TusFault
    /// The accept and connection threads; its `condition` also guards this state's fields.
    let threads: ServerThreads
    var listener: LoopbackListener { threads.listener }
    var port: Int { listener.port }
    var condition: NSCondition { threads.condition }

    private(set) var uploads: [String: TusStoredUpload] = [:]
    private(set) var exchanges: [TusExchange] = []
    private var nextUpload = 1
    private var headsRead = 0

    init(faults: @escaping @Sendable (TusRequestHead) -> TusFault) throws {
        self.faults = faults
        threads = try ServerThreads()
    }

    func locked<T>(_ body: (TusState) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(self)
    }

    /// Blocks until `predicate` holds or `timeout` passes; returns whether it holds.
    func wait(timeout: Duration, until predicate: (TusState) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.roundedUpMilliseconds) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(self) {
            if !condition.wait(until: deadline) { return predicate(self) }
        }
        return true
    }

    // MARK: Uploads

    func createUpload(length: Int, metadata: [String: String?]) -> String {
        locked { state in
            let id = "u\(state.nextUpload)"
            state.nextUpload += 1
            state.uploads[id] = TusStoredUpload(id: id, length: length, metadata: metadata, data: Data())
            state.condition.broadcast()
            return id
        }
    }

    func upload(_ id: String) -> TusStoredUpload? { locked { $0.uploads[id] } }

    /// Appends bytes a PATCH delivered (they are kept even if the PATCH never completes), if the
    /// upload still ends at `offset`, where this PATCH's bytes so far end. Otherwise a newer
    /// PATCH took the upload over (the client came back after losing this connection, while
    /// its last bytes still sat in our socket) and this one must stop, as tusd's upload lock
    /// makes an old request stop: false.
    func append(_ bytes: ArraySlice<UInt8>, to id: String, at offset: Int) -> Bool {
        locked { state in
            guard state.uploads[id]?.data.count == offset else { return false }
            state.uploads[id]?.data.append(contentsOf: bytes)
            state.condition.broadcast()
            return true
        }
    }

    func record(method: String, path: String, headers: [String: String], kept: Int, status: Int?) {
        locked { state in
            state.exchanges.append(TusExchange(index: state.exchanges.count, method: method, path: path, headers: headers, bodyBytesKept: kept, status: status))
            state.condition.broadcast()
        }
    }

    /// The next request's index among all requests whose head was read.
    func nextHeadIndex() -> Int {
        locked { state in
            defer { state.headsRead += 1 }
            return state.headsRead
        }
    }
}
