internal import Synchronization
public import TransferStore
internal import TransferEngine

/// Whether the daemon can do its work now (`GET /readyz`), and if not, why.
public enum ServiceReadiness: Sendable, Equatable, CustomStringConvertible {
    case ready
    /// `beginShutdown` ran: no new work is taken.
    case shuttingDown
    case storeClosed
    /// The store's last commit failed (disk full, I/O error): writes are refused until one
    /// succeeds again (`QueuedWriter` retries on its own every second).
    case storeFailing(StoreFailure)
    /// The transfer engine's thread is not running (not started yet, or stopped).
    case engineStopped

    public var description: String {
        switch self {
        case .ready: "ready"
        case .shuttingDown: "the daemon is shutting down"
        case .storeClosed: "the store is closed"
        case .storeFailing(let failure): "the store cannot commit writes: \(failure)"
        case .engineStopped: "the transfer engine is not running"
        }
    }
}

extension TransferService {
    /// Ready when it accepts work, its store is open and commits, and its engine thread runs.
    public var readiness: ServiceReadiness {
        if !state.withLock({ $0.accepting }) { return .shuttingDown }
        if !store.isOpen { return .storeClosed }
        if let failure = store.failure { return .storeFailing(failure) }
        if !engine.isRunning { return .engineStopped }
        return .ready
    }
}
