internal import Synchronization

/// The resolved form of each downloads root `FileSystem.isInside` has checked against, kept so
/// a check costs one resolution (the path's), not two.
///
/// Why it may be kept: a root is a folder the daemon makes and owns (the downloads root, a
/// tenant's folder in it, the blobs folder); tenants write below a root, never the root itself,
/// so what it resolves to does not change under a running daemon. The path being checked is
/// resolved afresh every time, which is what catches a symlink a tenant planted.
/// Bounded: past `limit` roots the table starts over.
enum ResolvedRoots {
    private static let table = Mutex<[String: String]>([:])
    private static let limit = 1024

    static func resolved(_ root: String) -> String? {
        if let known = table.withLock({ $0[root] }) { return known }
        guard let resolved = FileSystem.resolved(root) else { return nil }
        table.withLock { table in
            if table.count >= limit { table.removeAll(keepingCapacity: true) }
            table[root] = resolved
        }
        return resolved
    }
}
