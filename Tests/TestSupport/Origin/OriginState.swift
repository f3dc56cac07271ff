import Foundation

/// The shared state of one ``OriginServer``: the listener, the stop pipe, the handler and the
/// counters, shared by the server object, its accept thread and its connection threads.
///
/// The threads retain this object, not the ``OriginServer``, so dropping the server runs its
/// `deinit` (which stops everything) even while connections are open.
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked;
/// the descriptors are `let`s, the listener is closed only by the accept thread and the stop
/// pipe only in `deinit`, when no thread can hold a reference any more.
final class OriginState: @unchecked Sendable {
    let handler: @Sendable (OriginRequest) -> OriginBehavior
    let listener: LoopbackListener
    var port: Int { listener.port }
    let condition = NSCondition()

    private var requests: [OriginRequest] = []
    private var connectionCount = 0
    private var openConnections = 0
    /// The open connections' sockets, and the most open at once (`peakConnections`).
    private var sockets: Set<Int32> = []
    private var peakConnections = 0
    private var acceptLoopRunning = true
    private var stopped = false

    init(port: Int = 0, ipv6: Bool = false, address: String = "127.0.0.1", handler: @escaping @Sendable (OriginRequest) -> OriginBehavior) throws {
        self.handler = handler
        listener = try LoopbackListener(port: port, ipv6: ipv6, address: address)
    }

    // MARK: Reading the counters

    /// Runs `body` with the condition locked.
    func locked<T>(_ body: (OriginState) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(self)
    }

    var snapshot: (requests: [OriginRequest], connectionCount: Int, openConnections: Int) {
        locked { ($0.requests, $0.connectionCount, $0.openConnections) }
    }

    /// Blocks until `predicate` holds for the counters or `timeout` passes; returns whether it holds.
    func wait(
        timeout: Duration,
        until predicate: (_ requests: Int, _ openConnections: Int) -> Bool
    ) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.roundedUpMilliseconds) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(requests.count, openConnections) {
            if !condition.wait(until: deadline) {
                return predicate(requests.count, openConnections)
            }
        }
        return true
    }

    // MARK: Transitions

    /// The most connections open at once, counted at each accept. A connection its client
    /// already closed counts as closed even if its thread has not noticed yet: the client
    /// closing one connection and opening the next is not two at once.
    var peak: Int { locked { $0.peakConnections } }

    /// Counts a newly accepted connection; returns its index, or nil if the server has stopped
    /// (the caller then closes it at once).
    func connectionAccepted(fd: Int32? = nil) -> Int? {
        locked { state in
            guard !state.stopped else { return nil }
            if let fd {
                let open = state.sockets.filter { !Self.closedByPeer($0) }.count + 1
                state.peakConnections = max(state.peakConnections, open)
                state.sockets.insert(fd)
            }
            defer { state.connectionCount += 1 }
            state.openConnections += 1
            state.condition.broadcast()
            return state.connectionCount
        }
    }

    /// Called by a connection thread before it closes its socket (whose number may then be reused).
    func socketClosing(_ fd: Int32) {
        _ = locked { $0.sockets.remove(fd) }
    }

    /// Whether the client closed (or reset) the connection: a peek reads end of file or an error.
    private static func closedByPeer(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Called by a connection thread after it closed its socket.
    func connectionClosed() {
        locked { state in
            state.openConnections -= 1
            state.condition.broadcast()
        }
    }

    /// Records a fully received request, giving it the next index.
    func record(_ makeRequest: (_ index: Int) -> OriginRequest) -> OriginRequest {
        locked { state in
            let request = makeRequest(state.requests.count)
            state.requests.append(request)
            state.condition.broadcast()
            return request
        }
    }

    /// Called by the accept thread after it closed the listener.
    func acceptLoopEnded() {
        locked { state in
            state.acceptLoopRunning = false
            state.condition.broadcast()
        }
    }

    /// Signals every thread to finish, then waits (at most `timeout`) until all have.
    /// Returns false if some thread was still running at the deadline (for example when called
    /// from a handler, whose own connection cannot end while it waits).
    @discardableResult
    func stop(timeout: Duration = .seconds(5)) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !stopped {
            stopped = true
            listener.signalStop()
        }
        let deadline = Date(timeIntervalSinceNow: Double(timeout.roundedUpMilliseconds) / 1000)
        while acceptLoopRunning || openConnections > 0 {
            if !condition.wait(until: deadline) {
                return !(acceptLoopRunning || openConnections > 0)
            }
        }
        return true
    }
}
