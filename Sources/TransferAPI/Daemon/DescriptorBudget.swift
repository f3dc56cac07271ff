/// How the daemon shares its open-file limit, so that no one consumer starves the others: a
/// flood of idle API connections must not stop transfers from opening files and sockets, and
/// busy transfers must not stop `/healthz` from being answered.
///
/// - reserve: the store (SQLite database, WAL, shm), logs, cache and blob files, webhook and
///   stream connections, and the listening socket; never handed out.
/// - API connections: at most half of the rest, and no more than asked for.
/// - one client address: at most a quarter of the API's connections, unless set.
/// - transfers: what is left, at four descriptors each (the socket, the file written, an idle
///   pooled connection, a spare for a redirect's or retry's new connection).
struct DescriptorBudget: Equatable {
    static let reserve = 64
    static let descriptorsPerTransfer = 4

    let limit: Int
    let apiConnections: Int
    let perClient: Int
    let transfers: Int

    /// The budget for a process allowed `limit` descriptors (the soft limit, once raised).
    init(limit: Int, maxConnections: Int, maxConnectionsPerClient: Int?, maxTransfers: Int) {
        self.limit = limit
        let shareable = max(2, limit - Self.reserve)
        let api = max(1, min(maxConnections, shareable / 2))
        apiConnections = api
        perClient = maxConnectionsPerClient.map { min($0, api) } ?? max(1, api / 4)
        transfers = max(1, min(maxTransfers, (shareable - api) / Self.descriptorsPerTransfer))
    }
}
