internal import Curl

/// The connection pools of sessions that asked for new connections (reset or flush). A session
/// starts on the multi handle's shared cache; renewing gives it a share handle with an empty
/// cache of its own (`ShareHandle`), so every request it starts afterwards opens a new
/// connection, and those are then reused among its own later requests, as URLSession's
/// per-session pool after `reset`. The pool it leaves is closed once no transfer uses it.
///
/// Not Sendable: the engine thread's own (`EngineLoop`).
final class ConnectionPools {
    private var current: [String: ShareHandle] = [:]
    private var retired: [ShareHandle] = []

    /// The pool for transfers of `key` (a session id); nil: the multi handle's.
    func pool(for key: String?) -> ShareHandle? {
        key.flatMap { current[$0] }
    }

    /// The pool of `key`, made now when it has none: for a session whose connections must not
    /// mix with other sessions' (one that chose its HTTP version: an HTTP/1.1 connection it made
    /// would otherwise serve an `auto` session's request to an h2 origin, and a prior-knowledge
    /// h2c connection a plain one's). nil only when a share handle cannot be made.
    func ownPool(for key: String) -> ShareHandle? {
        if let pool = current[key] { return pool }
        guard let fresh = try? ShareHandle() else { return nil }
        current[key] = fresh
        return fresh
    }

    /// New requests of `key` go to a new, empty pool; its old one is closed once unused.
    func renew(_ key: String) {
        do {
            let fresh = try ShareHandle()
            if let old = current.updateValue(fresh, forKey: key) { retired.append(old) }
        } catch {
            // Out of memory: keep the old pool rather than fail the session's next transfers.
        }
        closeUnused()
    }

    /// The session is gone (invalidated): its pool goes with its last transfer.
    func forget(_ key: String) {
        if let old = current.removeValue(forKey: key) { retired.append(old) }
        closeUnused()
    }

    /// Closes every retired pool no easy handle uses any more (their idle connections with them).
    func closeUnused() {
        retired.removeAll { $0.close() }
    }

    /// At engine stop, after every easy handle was cleaned up.
    func closeAll() {
        for pool in current.values { pool.close() }
        current.removeAll()
        closeUnused()
    }
}
