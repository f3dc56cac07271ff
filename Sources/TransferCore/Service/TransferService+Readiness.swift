internal import Synchronization

/// Whether the daemon can do its work now (`GET /readyz`), and if not, why.
public enum ServiceReadiness: Sendable, Equatable, CustomStringConvertible {
    case ready
    /// `beginShutdown` ran: no new work is taken.
    case shuttingDown
    case storeClosed
    /// The transfer engine's thread is not running (not started yet, or stopped).
    case engineStopped

    public var description: String {
        switch self {
        case .ready: "ready"
        case .shuttingDown: "the daemon is shutting down"
        case .storeClosed: "the store is closed"
        case .engineStopped: "the transfer engine is not running"
        }
    }
}

extension TransferService {
    /// Ready when it accepts work, its store is open and its engine thread runs.
    public var readiness: ServiceReadiness {
        if !state.withLock({ $0.accepting }) { return .shuttingDown }
        if !store.isOpen { return .storeClosed }
        if !engine.isRunning { return .engineStopped }
        return .ready
    }
}
