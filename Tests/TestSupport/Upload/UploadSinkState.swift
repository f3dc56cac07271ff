import Foundation

/// The shared state of one ``UploadSink``: its pace and the requests received, shared by the
/// sink object, its accept thread and its connection threads.
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked; the
/// listener is closed only by the accept thread and its stop pipe only in `deinit`, when no
/// thread can hold a reference any more.
final class UploadSinkState: @unchecked Sendable {
    let listener: LoopbackListener
    var port: Int { listener.port }
    let condition = NSCondition()

    var bytesPerSecond: Int?
    private(set) var requests: [UploadSinkRequest] = []
    private var openConnections = 0
    private var acceptLoopRunning = true
    private var stopped = false

    init(bytesPerSecond: Int?) throws {
        self.bytesPerSecond = bytesPerSecond
        listener = try LoopbackListener()
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

    // MARK: Connections and stopping

    func connectionAccepted() -> Bool {
        locked { state in
            guard !state.stopped else { return false }
            state.openConnections += 1
            return true
        }
    }

    func connectionClosed() {
        locked { state in
            state.openConnections -= 1
            state.condition.broadcast()
        }
    }

    func acceptLoopEnded() {
        locked { state in
            state.acceptLoopRunning = false
            state.condition.broadcast()
        }
    }

    /// Signals every thread to finish, then waits (at most `timeout`) until all have.
    func stop(timeout: Duration = .seconds(5)) {
        condition.lock()
        defer { condition.unlock() }
        if !stopped {
            stopped = true
            listener.signalStop()
        }
        let deadline = Date(timeIntervalSinceNow: Double(timeout.roundedUpMilliseconds) / 1000)
        while acceptLoopRunning || openConnections > 0 {
            if !condition.wait(until: deadline) { return }
        }
    }
}
