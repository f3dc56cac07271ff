internal import Synchronization

/// Answers one request exactly once, from any thread. Extra calls are ignored.
///
/// Created by the server for each request that reaches `HTTPRequestHandler.handle`, and kept
/// by the handler for as long as it likes (a long-poll keeps it until there is news). The
/// server's connection thread and `respond` callers share it; a lock orders them (see
/// `ResponderState` for the transitions).
public final class Responder: Sendable {
    /// Where an answer goes.
    private enum Target: Sendable {
        /// A libmicrohttpd connection, driven by the access handler.
        case connection(ConnectionResumer)
        /// A plain callback, for testing handlers without a server.
        case callback(@Sendable (HTTPResponse) -> Void)
    }

    private let state = Mutex(ResponderState())
    private let target: Target

    /// A responder that hands the first answer to `deliver` (on the calling thread) and
    /// ignores later ones. For testing a handler without sockets.
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        target = .callback(deliver)
    }

    init(resumer: ConnectionResumer) {
        target = .connection(resumer)
    }

    /// Answers the request. The first call wins; later calls are ignored (a stream body of an
    /// ignored answer is closed at once, on the calling thread).
    /// Never blocks beyond a short lock; may be called from any thread, also from inside
    /// `handle` (the normal case) or after it returned (the connection is then suspended and
    /// this resumes it).
    public func respond(_ response: HTTPResponse) {
        let action = state.withLock { $0.respond(response) }
        switch (target, action) {
        case (.connection(let resumer), .resume):
            resumer.resume()
        case (.callback(let deliver), .none):
            deliver(response)
        case (_, .ignored):
            response.dropped()
        default:
            break
        }
    }

    // MARK: Connection thread (access handler) only

    func handlerReturned() -> ResponderState.Action {
        state.withLock { $0.handlerReturned() }
    }

    func suspendCompleted() -> ResponderState.Action {
        state.withLock { $0.suspendCompleted() }
    }

    func resumedCallReached() -> ResponderState.Action {
        state.withLock { $0.resumedCallReached() }
    }

    /// Performs the `.resume` decided by `suspendCompleted` (connection thread).
    func resumeConnection() {
        if case .connection(let resumer) = target { resumer.resume() }
    }
}
