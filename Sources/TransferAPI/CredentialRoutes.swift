internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/sessions/{sid}/credentials: the session's view of URLCredentialStorage. Passwords are
/// write-only: PUT takes one, nothing ever returns one.
enum CredentialRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/sessions/{sid}/credentials") { request in
            let all = try service.credentials(in: request.parameter("sid"), owner: request.owner)
            let limit = try request.limit()
            var start = 0
            if let cursor = request.http.query["cursor"] {
                guard let value = Int(cursor), value >= 0 else {
                    throw APIError(400, "invalid_query", "unknown cursor", field: "cursor")
                }
                start = value
            }
            let items = Array(all.dropFirst(start).prefix(limit))
            let end = start + items.count
            return .json(Page(items: items, next: end < all.count ? String(end) : nil))
        }
        router.add("PUT", "/v1/sessions/{sid}/credentials") { request in
            let body = try request.decode(CredentialPut.self)
            return .json(try service.putCredential(body, in: request.parameter("sid"), owner: request.owner))
        }
        router.add("DELETE", "/v1/sessions/{sid}/credentials") { request in
            let filter = try Self.filter(request.http.query)
            let deleted = try service.deleteCredentials(matching: filter, in: request.parameter("sid"), owner: request.owner)
            return .json(DeletedCredentials(deleted: deleted))
        }
    }

    /// The DELETE filter from the query. An unknown name is refused: a misspelt filter must not
    /// widen into "delete everything".
    static func filter(_ query: [String: String]) throws -> CredentialFilter {
        let known: Set<String> = ["host", "port", "protocol", "realm", "authenticationMethod", "user"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError(400, "invalid_query", "\(unknown) is not a credential filter; use host, port, protocol, realm, authenticationMethod or user", field: unknown)
        }
        var filter = CredentialFilter(realm: query["realm"], user: query["user"])
        if let host = query["host"] {
            guard CredentialPut.isHost(host) else {
                throw APIError(400, "invalid_query", "host must be a host name or an IP address", field: "host")
            }
            filter = CredentialFilter(host: host, realm: filter.realm, user: filter.user)
        }
        if let text = query["port"] {
            guard let port = Int(text), (1...65_535).contains(port) else {
                throw APIError(400, "invalid_query", "port must be an integer from 1 to 65535", field: "port")
            }
            filter.port = port
        }
        if let text = query["protocol"] {
            guard let value = ProtectionSpaceProtocol(rawValue: text) else {
                throw APIError(400, "invalid_query", "protocol must be one of http, https, ftp, ftps, sftp", field: "protocol")
            }
            filter.protocol = value
        }
        if let text = query["authenticationMethod"] {
            guard let value = AuthenticationMethod(rawValue: text) else {
                throw APIError(400, "invalid_query", "authenticationMethod must be one of default, HTTPBasic, HTTPDigest", field: "authenticationMethod")
            }
            filter.authenticationMethod = value
        }
        return filter
    }
}

/// The answer of DELETE /v1/sessions/{sid}/credentials.
struct DeletedCredentials: Encodable {
    let deleted: Int
}
