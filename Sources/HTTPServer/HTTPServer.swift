internal import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: a pool of epoll threads that read requests, pass
/// them to an `HTTPRequestHandler` and send its answers, with keep-alive, and long-polls and
/// streamed bodies waiting for data that hold no thread (suspended connections).
///
/// Owned by the service that runs it, which calls `start()` once and `stop()` on shutdown
/// (`stop()` must run before the last reference goes: nothing is torn down in `deinit`).
/// All members may be used from any thread.
public final class HTTPServer: Sendable {
    private enum Lifecycle {
        case idle
        case running(Daemon)
        case stopped
    }

    private let core: ServerCore
    private let lifecycle = Mutex(Lifecycle.idle)
    private let boundPort = Atomic<Int>(0)

    public init(configuration: HTTPServerConfiguration, handler: any HTTPRequestHandler) {
        core = ServerCore(handler: handler, configuration: configuration)
    }

    /// Binds and starts serving. Throws `HTTPServerError` (address in use, bad address, a
    /// second start) with a message that says what to change. Raises the process's
    /// open-file limit to its hard limit first (every held connection keeps a socket).
    public func start() throws {
        try lifecycle.withLock { (state: inout Lifecycle) throws(HTTPServerError) in
            guard case .idle = state else { throw .notStartable }
            FileDescriptorLimit.raiseToHardLimit()
            let daemon = try Daemon.start(core: core)
            boundPort.store(daemon.port, ordering: .releasing)
            state = .running(daemon)
        }
    }

    /// The bound port (after start), also when 0 was asked; 0 before start.
    public var port: Int {
        boundPort.load(ordering: .acquiring)
    }

    /// Connections currently held: suspended after handle() returned without an answer,
    /// and not yet answered.
    public var suspendedCount: Int {
        core.suspendedCount.load(ordering: .relaxed)
    }

    /// Streamed response bodies whose connection is suspended waiting for their stream's data.
    var suspendedStreamCount: Int {
        core.suspendedStreamCount.load(ordering: .relaxed)
    }

    /// Answers new requests and every still-suspended one with errorResponse(503,"shutting_down",...),
    /// ends streamed bodies with an error at their next read, resumes them all, lets them flush
    /// briefly, then MHD_stop_daemon. Idempotent.
    ///
    /// Blocks up to a few seconds. Never call it from inside a handler: MHD_stop_daemon
    /// joins the pool thread the handler runs on.
    public func stop() {
        lifecycle.withLock { state in
            guard case .running(let daemon) = state else {
                state = .stopped
                return
            }
            state = .stopped
            ShutdownDrain(core: core).run(daemon)
        }
    }
}
