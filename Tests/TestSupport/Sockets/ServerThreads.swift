import Foundation

/// The threads of a thread-per-connection test server on a ``LoopbackListener``: the accept
/// thread, one thread per connection, and stopping them all. Shared by ``TusServer`` and
/// ``UploadSink``, whose states keep their own fields under the same `condition`.
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked; the
/// listener is closed only by the accept thread and its stop pipe only in `deinit`, when no
/// thread can hold a reference any more.
final class ServerThreads: @unchecked Sendable {
    let listener: LoopbackListener
    let condition = NSCondition()
    private var openConnections = 0
    private var acceptLoopRunning = true
    private var stopped = false

    init() throws {
        listener = try LoopbackListener()
    }

    /// Starts the accept thread: each connection runs `serve(fd)` on a thread of its own, and
    /// is counted until it returns. The accept thread alone closes the listener.
    func startAcceptLoop(name: String, serve: @escaping @Sendable (Int32) -> Void) {
        let thread = Thread { [self] in
            defer { ended { $0.acceptLoopRunning = false } }
            listener.acceptConnections { fd in
                guard connectionAccepted() else { return false }
                let connection = Thread { [self] in
                    defer { ended { $0.openConnections -= 1 } }
                    serve(fd)
                }
                connection.name = "\(name) connection"
                connection.start()
                return true
            }
        }
        thread.name = "\(name) accept :\(listener.port)"
        thread.start()
    }

    private func connectionAccepted() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        openConnections += 1
        return true
    }

    private func ended(_ change: (ServerThreads) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        change(self)
        condition.broadcast()
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
