package import FoundationEssentials
package import TransferModel

/// Rows back into values, for every database the store runs on (`StoredColumns`): the SQLite
/// `Store` and the cluster's PostgreSQL store select the same columns in the same order (the
/// `…Columns` lists) and decode them here, so the two stores cannot drift apart in what a row
/// means.
package enum StoredRows {
    /// `record, owner` of `sessions`.
    package static let sessionColumns = "record, owner"

    package static func session(_ row: some StoredColumns) throws -> Session {
        var session = try JSONCoding.decoder.decode(Session.self, from: row.data(0) ?? Data())
        session.owner = row.string(1)
        return session
    }

    package static func task(from record: Data?) throws -> TransferTask {
        try JSONCoding.decoder.decode(TransferTask.self, from: record ?? Data())
    }

    /// `record, request_body` rows as tasks with their request bodies, in order.
    ///
    /// Decoded on every core: JSONDecoder is most of a start-up with many unfinished tasks
    /// (100,000 suspended ones took 6 s to start, three quarters of it decoding on one thread).
    package static func tasksWithBodies(_ rows: [some StoredColumns & Sendable]) throws -> [(TransferTask, Data?)] {
        let parts = PartsOnEveryCore.map(rows, minimumPart: minimumDecodedPart) { part in
            part.map { row in Result { (try task(from: row.data(0)), row.data(1)) } }
        }
        return try parts.flatMap { $0 }.map { try $0.get() }
    }

    /// Fewer records than this per part are not worth a thread (about 40 µs each).
    static let minimumDecodedPart = 256

    /// The columns `served` reads, in its order.
    package static let servedColumns = "id, session_id, owner, state, record, served_cut"

    /// A row's served JSON: its record cut to the served form by its note, or (written by another
    /// version) decoded and encoded again.
    package static func served(_ row: some StoredColumns) throws -> StoredTaskJSON {
        let record = row.data(4) ?? Data()
        let json = try TransferTask.servedJSON(fromStored: record, cut: row.string(5)) ?? task(from: record).jsonData()
        let owner = row.string(2) ?? ""
        return StoredTaskJSON(id: row.int(0) ?? 0, sessionId: row.string(1) ?? "", owner: owner.isEmpty ? nil : owner,
                              state: row.string(3).flatMap(TaskState.init(rawValue:)) ?? .completed, json: json)
    }

    /// `owner, kind, scheduling_class, tasks, held_bytes`; nil for a kind or class this version
    /// does not know.
    package static func summary(_ row: some StoredColumns) -> CompletedTaskSummary? {
        guard let kind = row.string(1).flatMap(TaskKind.init(rawValue:)),
              let schedulingClass = row.string(2).flatMap(SchedulingClass.init(rawValue:)) else { return nil }
        let owner = row.string(0) ?? ""
        return CompletedTaskSummary(owner: owner.isEmpty ? nil : owner, kind: kind, schedulingClass: schedulingClass,
                                    tasks: row.int(3) ?? 0, heldBytes: row.int(4) ?? 0)
    }

    /// One session's event rows (`record, owner`, newest first, `EventRows`) as its newest
    /// `limit` events, oldest first. A write retried after a failed commit may have put an event
    /// in two rows: it is kept once.
    package static func newestEvents(_ rows: [some StoredColumns], limit: Int) throws -> [TaskEvent] {
        var kept: [TaskEvent] = []
        for row in rows { kept += try EventRows.decode(row.data(0) ?? Data(), owner: row.string(1)) }
        kept.sort { $0.seq < $1.seq }
        var last = Int.min
        kept.removeAll { event in
            defer { last = event.seq }
            return event.seq == last
        }
        return Array(kept.suffix(limit))
    }

    package static let cookieColumns = "owner, name, domain, path, value, host_only, expires, secure, http_only, same_site, created_at"

    /// A cookie row (`cookieColumns`) with its jar's owner ('' for none).
    package static func cookie(_ row: some StoredColumns) -> (owner: String, cookie: Cookie) {
        let cookie = Cookie(
            name: row.string(1) ?? "", value: row.string(4) ?? "", domain: row.string(2) ?? "", path: row.string(3) ?? "/",
            isHostOnly: row.bool(5) ?? false, expiresDate: Date(timeIntervalSince1970: row.double(6) ?? 0),
            isSecure: row.bool(7) ?? false, isHTTPOnly: row.bool(8) ?? false,
            sameSitePolicy: row.string(9).flatMap(SameSitePolicy.init(rawValue:)),
            createdAt: Date(timeIntervalSince1970: row.double(10) ?? 0))
        return (row.string(0) ?? "", cookie)
    }

    package static let credentialColumns = "owner, host, port, protocol, realm, authentication_method, user_name, password"

    /// A credential row (`credentialColumns`); nil for a protocol or method this version does not know.
    package static func credential(_ row: some StoredColumns) -> Store.CredentialRow? {
        guard let proto = row.string(3).flatMap(ProtectionSpaceProtocol.init(rawValue:)),
              let method = row.string(5).flatMap(AuthenticationMethod.init(rawValue:)) else { return nil }
        let space = ProtectionSpace(host: row.string(1) ?? "", port: row.int(2) ?? 0, protocol: proto, realm: row.string(4), authenticationMethod: method)
        return Store.CredentialRow(ownerKey: row.string(0) ?? "", space: space, user: row.string(6) ?? "", sealedPassword: row.data(7) ?? Data())
    }

    package static let urlCacheColumns = "key, file, size, response, last_used"

    /// A URL cache row (`urlCacheColumns`); nil when its head no longer decodes.
    package static func urlCache(_ row: some StoredColumns) -> Store.URLCacheRow? {
        guard let key = row.string(0), let file = row.string(1), let size = row.int(2), let json = row.data(3),
              let response = try? JSONCoding.decoder.decode(CachedResponse.self, from: json) else { return nil }
        return Store.URLCacheRow(key: key, file: file, size: size, response: response, lastUsed: row.double(4) ?? 0)
    }

    package static let blobColumns = "id, owner, size, sha256, created_at"

    package static func blob(_ row: some StoredColumns) -> Blob {
        Blob(id: row.string(0) ?? "", size: row.int(2) ?? 0, sha256: row.string(3) ?? "",
             createdAt: Date(timeIntervalSince1970: row.double(4) ?? 0), owner: row.string(1))
    }

    /// A cached response's head as stored (`url_cache.response`).
    package static func json(_ response: CachedResponse) throws -> String {
        String(decoding: try JSONCoding.encoder.encode(response), as: UTF8.self)
    }
}
