internal import FoundationEssentials
internal import HTTPServer
internal import JSONModel
internal import TransferModel
internal import TransferService

/// GET /v1/sessions in a cluster (issue 19). Every node knows the stored sessions, but an
/// ephemeral session lives only in the memory of the node that made it (never stored). So the
/// node asked lists its own sessions, then the other nodes' ephemeral ones: it asks each node
/// that holds some (`EphemeralRoutes`) for `GET /v1/sessions?kind=ephemeral`, with the client's
/// own token (and no other header of the client's), passed on once (the holder checks the token as for its own clients and never asks
/// further). A node that does not answer is left out: its sessions cannot be reached either.
///
/// Order: this node's list as on a daemon alone, then the others' ephemeral sessions by
/// creation time and id. The cursor is the last id of a page, wherever it came from.
enum ClusterSessionList {
    /// One listed session: this node's (encoded as always), or another node's as that node wrote it.
    enum Item: Encodable {
        case here(Session)
        case elsewhere(id: String, createdAt: String, json: JSONValue)

        var id: String {
            switch self {
            case .here(let session): session.id
            case .elsewhere(let id, _, _): id
            }
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .here(let session): try session.encode(to: encoder)
            case .elsewhere(_, _, let json): try json.encode(to: encoder)
            }
        }

        /// Another node's session as listed there; nil for anything without an id.
        static func elsewhere(_ json: JSONValue) -> Item? {
            guard case .object(let fields) = json, case .string(let id)? = fields["id"] else { return nil }
            var created = ""
            if case .string(let text)? = fields["createdAt"] { created = text }
            return .elsewhere(id: id, createdAt: created, json: json)
        }
    }

    /// The route's answer: later, from a thread of its own that asks each of `holders` in turn
    /// (no HTTP worker waits for another node).
    static func answer(_ request: APIRequest, here: [Session], holders: [String], limit: Int, cursor: String?,
                       service: TransferService) -> RouteResult {
        // Only who asks (the holder checks the token) and the request's id: nothing of the
        // client's own framing or ranges, since the answer is read here, not passed through.
        let headers = request.http.headers.filter { header in
            ["authorization", RequestID.header.lowercased()].contains(header.name.lowercased())
        }.map { (name: $0.name, value: $0.value) }
        return .later { respond in
            let started = service.onExchangeThread {
                let elsewhere = holders.flatMap { ephemeralSessions(at: $0, headers: headers, service: service) ?? [] }
                do {
                    let page = try page(here: here, elsewhere: elsewhere, limit: limit, cursor: cursor)
                    respond(.json(Page(items: page.items, next: page.next)))
                } catch {
                    respond(APIError.from(error).response)
                }
            }
            if !started {
                respond(APIError(503, "node_busy", "too many lists are asking other nodes for their ephemeral sessions; retry shortly").response)
            }
        }
    }

    /// The page after `cursor` of `here` followed by `elsewhere` (ordered by creation time, then
    /// id; an id `here` lists too is left out). A cursor in neither is an invalid query.
    static func page(here: [Session], elsewhere: [Item], limit: Int, cursor: String?) throws -> (items: [Item], next: String?) {
        let known = Set(here.map(\.id))
        // RFC 3339 times in UTC with whole seconds, as the daemon writes them: they sort as text.
        let others = elsewhere.filter { !known.contains($0.id) }.sorted { a, b in
            guard case .elsewhere(let idA, let createdA, _) = a, case .elsewhere(let idB, let createdB, _) = b else { return false }
            return (createdA, idA) < (createdB, idB)
        }
        let all = here.map(Item.here) + others
        var start = 0
        if let cursor {
            guard let index = all.firstIndex(where: { $0.id == cursor }) else {
                throw APIError(400, "invalid_query", "unknown cursor", field: "cursor")
            }
            start = index + 1
        }
        let end = min(all.count, start + limit)
        let items = Array(all[start..<end])
        return (items, end < all.count ? items.last?.id : nil)
    }

    /// The ephemeral sessions the node at `address` holds that the client may see, asked with
    /// the client's headers, page by page (at most `maxPages` of 1,000); nil when it did not
    /// answer with them.
    static func ephemeralSessions(at address: String, headers: [(name: String, value: String)],
                                  service: TransferService) -> [Item]? {
        var items: [Item] = []
        var cursor: String?
        for _ in 0..<maxPages {
            var target = "/v1/sessions?kind=ephemeral&limit=1000"
            if let cursor { target += "&cursor=" + APIHandler.encoded(cursor) }
            let exchange = NodeForwarding.Exchange(method: "GET", target: target, headers: headers, body: Data(), timeout: 10)
            guard let answer = try? service.fetch(exchange, from: address, limit: 16 << 20), answer.status == 200,
                  case .object(let page)? = try? JSONCoding.decoder.decode(JSONValue.self, from: answer.body),
                  case .array(let listed)? = page["items"] else { return nil }
            items += listed.compactMap(Item.elsewhere)
            guard case .string(let next)? = page["next"] else { return items }
            cursor = next
        }
        return items
    }

    static let maxPages = 10
}
