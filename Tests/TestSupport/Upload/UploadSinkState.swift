import Foundation

/// The shared state of one ``UploadSink``: its pace and the requests received, shared by the
/// sink object, its accept thread and its connection threads.
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked
/// (the listener and the threads are `ServerThreads`').
final class UploadSinkState: @unchecked Sendable {
    /// The accept and connection threads; its `condition` also guards this state's fields.
    let threads: ServerThreads
    var listener: LoopbackListener { threads.listener }
    var port: Int { listener.port }
    var condition: NSCondition { threads.condition }

    var bytesPerSecond: Int?
    private(set) var requests: [UploadSinkRequest] = []

    init(bytesPerSecond: Int?) throws {
        self.bytesPerSecond = bytesPerSecond
        threads = try ServerThreads()
    }

    func locked<T>(_ body: (UploadSinkState) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(self)
    }

    /// Blocks until `predicate` holds or `timeout` passes; returns whether it holds.
    func wait(timeout: Duration, until predicate: (UploadSinkState) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.roundedUpMilliseconds) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(self) {
            if !condition.wait(until: deadline) { return predicate(self) }
        }
        return true
    }

    /// Records a request whose head was read; returns its index for the appends that follow.
    func begin(method: String, path: String, declaredLength: Int?) -> Int {
        locked { state in
            state.requests.append(UploadSinkRequest(method: method, path: path, declaredLength: declaredLength, body: Data(), complete: false, ended: false))
            state.condition.broadcast()
            return state.requests.count - 1
        }
    }

    func append(_ bytes: ArraySlice<UInt8>, to index: Int) {
        locked { state in
            state.requests[index].body.append(contentsOf: bytes)
            state.condition.broadcast()
        }
    }

    func finish(_ index: Int) {
        locked { state in
            state.requests[index].complete = true
            state.requests[index].ended = true
            state.condition.broadcast()
        }
    }

    func end(_ index: Int) {
        locked { state in
            state.requests[index].ended = true
            state.condition.broadcast()
        }
    }
}
