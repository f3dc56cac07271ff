import Foundation
internal import Glibc

/// The shared state of one ``StreamingOrigin``: listener, stop pipe, rate and records, shared by
/// the server object, its accept thread and its connection threads (which retain this, not the
/// server, so dropping the server stops everything).
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked; the
/// descriptors are `let`s, the listener is closed only by the accept thread and the stop pipe
/// only in `deinit`.
final class StreamingOriginState: @unchecked Sendable {
    let resource: GeneratedBytes
    let etag: String
    let listener: LoopbackListener
    var port: Int { listener.port }
    private let condition = NSCondition()

    var bytesPerSecond: Int?
    var responses: [ServedResponse] = []
    var uploads: [ReceivedUpload] = []
    private var threads = 0
    private var stopped = false

    init(resource: GeneratedBytes, etag: String, bytesPerSecond: Int?) throws {
        self.resource = resource
        self.etag = etag
        self.bytesPerSecond = bytesPerSecond
        listener = try LoopbackListener()
    }

    func locked<T>(_ body: (StreamingOriginState) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(self)
    }

    /// Starts a thread counted by ``stop()``; false once stopped.
    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let admitted = locked { state in
            guard !state.stopped else { return false }
            state.threads += 1
            return true
        }
        guard admitted else { return false }
        let thread = Thread { [self] in
            body()
            locked { state in
                state.threads -= 1
                state.condition.broadcast()
            }
        }
        thread.name = name
        thread.start()
        return true
    }

    func startAccepting() {
        let started = spawn("StreamingOrigin accept :\(port)") { [self] in
            listener.acceptConnections { fd in
                spawn("StreamingOrigin connection") { [self] in StreamingConnection(fd: fd, state: self).run() }
            }
        }
        if !started { listener.closeUnused() }
    }

    // MARK: Records

    /// Appends a response record; returns its index.
    func begin(_ response: ServedResponse) -> Int {
        locked { state in
            state.responses.append(response)
            return state.responses.count - 1
        }
    }

    func sent(_ count: Int, response index: Int, finished: Bool = false) {
        locked { state in
            state.responses[index].bytesSent += count
            if finished { state.responses[index].finished = true }
        }
    }

    func begin(_ upload: ReceivedUpload) -> Int {
        locked { state in
            state.uploads.append(upload)
            return state.uploads.count - 1
        }
    }

    func received(_ count: Int, upload index: Int, sha256: String? = nil) {
        locked { state in
            state.uploads[index].bytesReceived += count
            if let sha256 { state.uploads[index].sha256 = sha256 }
        }
    }

    // MARK: Stopping

    /// Signals every thread to finish, then waits (at most `timeout`) until all have.
    func stop(timeout: Double = 5) {
        condition.lock()
        defer { condition.unlock() }
        if !stopped {
            stopped = true
            listener.signalStop()
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while threads > 0, condition.wait(until: deadline) {}
    }
}
