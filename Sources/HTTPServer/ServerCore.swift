internal import Synchronization

/// What libmicrohttpd's callbacks reach through their `cls` pointer: the handler, the
/// configuration and the bookkeeping shared by all pool threads.
///
/// Created and owned by `HTTPServer`; while a daemon runs, that daemon holds one extra
/// retain (`Unmanaged.passRetained`) released after MHD_stop_daemon returns, so the
/// callbacks can never see it freed. Sendable: immutable apart from atomics and a lock.
final class ServerCore: Sendable {
    /// Requests that reached handle() and are not answered yet, streamed bodies not yet
    /// destroyed, and whether stop() began.
    private struct Registry {
        var stopping = false
        var unanswered: [UInt64: Responder] = [:]
        var streams: [ObjectIdentifier: StreamedBody] = [:]
    }

    let handler: any HTTPRequestHandler
    let configuration: HTTPServerConfiguration
    /// Connections suspended by the access handler and not yet answered after resuming.
    let suspendedCount = Atomic<Int>(0)
    /// Streamed bodies whose connection is suspended, or being resumed (until
    /// MHD_resume_connection returned), waiting for their stream's data.
    let suspendedStreamCount = Atomic<Int>(0)
    /// Requests whose context exists (first call seen, completion not yet reported).
    let inFlightCount = Atomic<Int>(0)
    private let lastRequestID = Atomic<UInt64>(0)
    private let registry = Mutex(Registry())

    init(handler: any HTTPRequestHandler, configuration: HTTPServerConfiguration) {
        self.handler = handler
        self.configuration = configuration
    }

    func nextRequestID() -> UInt64 {
        lastRequestID.add(1, ordering: .relaxed).newValue
    }

    /// Records a responder about to be given to handle(); false once stop() has begun
    /// (the request is then answered 503 without reaching the handler).
    func admit(_ responder: Responder, id: UInt64) -> Bool {
        registry.withLock { registry in
            guard !registry.stopping else { return false }
            registry.unanswered[id] = responder
            return true
        }
    }

    /// Forgets a request once its answer is queued or its connection is gone.
    func retire(id: UInt64) {
        _ = registry.withLock { $0.unanswered.removeValue(forKey: id) }
    }

    /// Lists a streamed body until its response is destroyed; false once stop() has begun
    /// (it is not listed then, and must end at its first read).
    func register(_ body: StreamedBody) -> Bool {
        registry.withLock { registry in
            guard !registry.stopping else { return false }
            registry.streams[ObjectIdentifier(body)] = body
            return true
        }
    }

    func unregister(_ body: StreamedBody) {
        _ = registry.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(body)) }
    }

    /// Refuses new handler calls and streams from now on; returns every unanswered responder
    /// and every streamed body still being sent.
    func beginStopping() -> (responders: [Responder], streams: [StreamedBody]) {
        registry.withLock { registry in
            registry.stopping = true
            return (Array(registry.unanswered.values), Array(registry.streams.values))
        }
    }

    var unansweredCount: Int {
        registry.withLock { $0.unanswered.count }
    }

    /// The server's own error answer, built by the configured function.
    func errorResponse(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        configuration.errorResponse(status, code, message)
    }

    /// The 413 for a body over `limit` bytes (the server's maxBodySize or a sink's).
    func bodyTooLargeResponse(limit: Int) -> HTTPResponse {
        errorResponse(413, "body_too_large", "The request body is larger than \(limit) bytes.")
    }

    var shuttingDownResponse: HTTPResponse {
        errorResponse(503, "shutting_down", "The server is shutting down; retry later.")
    }
}
