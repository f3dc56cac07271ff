internal import Curl

/// The connection pools of sessions, one each (`Session.connectionPool` names it), as URLSession
/// keeps a pool per session: a share handle with a connection cache of its own (`ShareHandle`),
/// made at the session's first transfer. Connections are reused among a session's own requests
/// and never carry another session's (or, for the `shared` session, another tenant's), so no
/// TLS, proxy or connection-bound authentication (NTLM, Negotiate) state crosses. Reset and
/// flush renew a session's pool; the pool it leaves is closed once no transfer uses it.
/// Each pool keeps at most the multi handle's MAXCONNECTS idle connections.
///
/// Not Sendable: the engine thread's own (`EngineLoop`).
final class ConnectionPools {
    private var current: [String: ShareHandle] = [:]
    private var retired: [ShareHandle] = []

    /// The pool of `key`, made now when it has none. Separate pools also keep a session that
    /// chose its HTTP version from mixing with others (an HTTP/1.1 connection it made would
    /// otherwise serve an `auto` session's request to an h2 origin). nil only when a share
    /// handle cannot be made (out of memory).
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
