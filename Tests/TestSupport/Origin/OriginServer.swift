import Foundation

/// An HTTP/1.1 origin on 127.0.0.1 for tests that need exact control over what a server sends:
/// resets mid-body, stalls, wrong lengths, ignored ranges, changing ETags.
///
/// It listens on a port the kernel picks, accepts on its own thread and serves each connection on
/// a thread of its own (keep-alive; request bodies by `Content-Length` or chunked; answers
/// `Expect: 100-continue`). For every request the `handler` decides the ``OriginBehavior``; it
/// runs on the connection's thread, so it must not block for long.
///
/// ```swift
/// let origin = try OriginServer { request in
///     request.path == "/hi" ? .text("hi") : .respond(status: 404)
/// }
/// defer { origin.stop() }
/// let url = origin.url("/hi")
/// ```
///
/// Call ``stop()`` when done (it also runs when the last reference goes away): it closes the
/// listener and every connection, waking stalled responses, and returns once all threads ended.
public final class OriginServer: Sendable {
    private let state: OriginState

    /// The port on 127.0.0.1 (on ::1 when made with `ipv6`, on `address` when given).
    public let port: Int
    /// `127.0.0.1`, `[::1]` or the address given, as it goes in a URL.
    public let host: String

    /// Starts listening at once, on 127.0.0.1 (or on ::1 with `ipv6`, or on another IPv4
    /// loopback `address` such as 127.0.0.2: Linux routes all of 127.0.0.0/8 to lo); requests
    /// are served as soon as this returns. `port` 0 lets the kernel pick one; a given port (one
    /// seen free a moment ago) makes "a host that comes up later".
    public init(port: Int = 0, ipv6: Bool = false, address: String = "127.0.0.1", handler: @escaping @Sendable (OriginRequest) -> OriginBehavior) throws {
        state = try OriginState(port: port, ipv6: ipv6, address: address, handler: handler)
        self.port = state.port
        host = ipv6 ? "[::1]" : address
        OriginAcceptLoop.start(state)
    }

    deinit {
        state.stop()
    }

    /// `http://127.0.0.1:PORT` (or `http://[::1]:PORT`), without a trailing slash.
    public var baseURL: String {
        "http://\(host):\(port)"
    }

    /// ``baseURL`` followed by `path` (which should start with "/").
    public func url(_ path: String) -> String {
        baseURL + path
    }

    /// Every request received so far, in order, bodies complete.
    public var requests: [OriginRequest] {
        state.snapshot.requests
    }

    /// How many connections were accepted so far.
    public var connectionCount: Int {
        state.snapshot.connectionCount
    }

    /// How many accepted connections are still open.
    public var openConnections: Int {
        state.snapshot.openConnections
    }

    /// The most connections open at once so far (a connection the client had closed counts as
    /// closed, even before the server noticed).
    public var peakOpenConnections: Int {
        state.peak
    }

    /// Closes the listener and every connection, then waits (at most 5 s) for their threads to end.
    /// Idempotent. Do not call it from a handler: that handler's connection cannot end while it waits.
    public func stop() {
        state.stop()
    }

    /// Waits until at least `count` requests have been received; returns false on timeout.
    /// The wait blocks a dedicated thread, not one of Swift concurrency's.
    public func waitForRequests(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        let state = self.state
        return await BlockingBridge.run {
            state.wait(timeout: timeout) { requests, _ in requests >= count }
        }
    }

    /// Waits until exactly `count` connections are open (0: the client closed them all);
    /// returns false on timeout. The wait blocks a dedicated thread, not one of Swift concurrency's.
    public func waitForOpenConnections(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        let state = self.state
        return await BlockingBridge.run {
            state.wait(timeout: timeout) { _, open in open == count }
        }
    }
}
