internal import Curl

/// The connection pools of sessions, one each (`Session.connectionPool` names it), as URLSession
/// keeps a pool per session: a share handle with a connection cache of its own (`ShareHandle`),
/// made at the session's first transfer. Connections are reused among a session's own requests
/// and never carry another session's (or, for the `shared` session, another tenant's), so no
/// TLS, proxy or connection-bound authentication (NTLM, Negotiate) state crosses. Reset and
/// flush renew a session's pool; the pool it leaves is closed once no transfer uses it.
/// Each pool keeps at most the multi handle's MAXCONNECTS idle connections, and a pool no
/// transfer has used for `maxIdle` seconds is closed (`retireIdle`): curl prunes a cache only when
/// it is used, so the idle connections of a session that stopped transferring would otherwise
/// hold their descriptors until the session is invalidated.
///
/// Not Sendable: the engine thread's own (`EngineLoop`).
final class ConnectionPools {
    /// curl reuses no connection idle for longer than CURLOPT_MAXAGE_CONN (118 s by default), so
    /// closing a pool unused for longer loses no reuse.
    static let maxIdle = 120.0

    private var current: [String: ShareHandle] = [:]
    private var retired: [ShareHandle] = []
    /// When a transfer last took or gave back a connection of each current pool (`now()` seconds).
    private var lastUse: [String: Double] = [:]

    /// The pool of `key`, made now when it has none. Separate pools also keep a session that
    /// chose its HTTP version from mixing with others (an HTTP/1.1 connection it made would
    /// otherwise serve an `auto` session's request to an h2 origin). nil only when a share
    /// handle cannot be made (out of memory).
    func ownPool(for key: String, now: Double) -> ShareHandle? {
        lastUse[key] = now
        if let pool = current[key] { return pool }
        guard let fresh = try? ShareHandle() else { return nil }
        current[key] = fresh
        return fresh
    }

    /// A transfer of `key` ended: its connection went back to the pool now.
    func used(_ key: String, now: Double) {
        if current[key] != nil { lastUse[key] = now }
    }

    /// Closes the pools no transfer used for `maxIdle` seconds, with their idle connections; a
    /// pool a transfer still holds stays (it is tried again after that transfer ends). The next
    /// transfer of such a session gets a new pool.
    func retireIdle(now: Double, maxIdle: Double = ConnectionPools.maxIdle) {
        for (key, time) in lastUse where now - time > maxIdle {
            guard let pool = current[key], pool.close() else { continue }
            current[key] = nil
            lastUse[key] = nil
        }
    }

    /// New requests of `key` go to a new, empty pool; its old one is closed once unused.
    func renew(_ key: String) {
        do {
            let fresh = try ShareHandle()
            if let old = current.updateValue(fresh, forKey: key) { retired.append(old) }
            // Never used: closed at the next sweep, as any pool idle for long enough.
            lastUse[key] = lastUse[key] ?? 0
        } catch {
            // Out of memory: keep the old pool rather than fail the session's next transfers.
        }
        closeUnused()
    }

    /// The session is gone (invalidated): its pool goes with its last transfer.
    func forget(_ key: String) {
        if let old = current.removeValue(forKey: key) { retired.append(old) }
        lastUse[key] = nil
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
        lastUse.removeAll()
        closeUnused()
    }
}
