internal import FoundationEssentials
internal import HTTPServer
internal import TransferService

/// Requests for an ephemeral session another node of the cluster holds (issue 19): this node
/// has nothing of it (it is never stored), so its 404 is replaced by the holder's answer
/// (`NodeForwarding`, `EphemeralRoutes`). Only a 404 for a session or task route is looked up:
/// every other answer, and every request on a daemon alone, is as it was.
extension APIHandler {
    /// The holder's answer to `request`, later; nil when no other node holds what the route names
    /// (the 404 stands) or the request was already passed on once.
    func passedOn(_ request: HTTPRequest, parameters: [String: String], requestId: String) -> RouteResult? {
        guard request.headers[NodeForwarding.header] == nil else { return nil }
        let task = parameters["tid"].flatMap { Int($0) }
        let session = parameters["sid"]
        guard task != nil || session != nil,
              let address = service.ephemeralHolder(session: task == nil ? session : nil, task: task) else { return nil }
        var headers = HTTPHeaders(request.headers.map { ($0.name, $0.value) })
        headers.replaceOrAdd(name: RequestID.header, value: requestId)  // one id in both nodes' logs
        // A long-poll waits on the holder as long as the client asked.
        let wait = request.query["wait"].flatMap { Double($0) }.map { min(max($0, 0), 3600) } ?? 0
        let exchange = NodeForwarding.Exchange(method: request.method, target: Self.target(request),
                                               headers: headers.map { ($0.name, $0.value) }, body: request.body, timeout: wait + 30)
        return .later { [service] respond in
            let answer = ForwardedAnswer(respond: respond) { failure in
                switch failure {
                case .busy:
                    APIError(503, "node_busy", "too many requests are being passed on to other nodes; retry shortly").response
                case .unreachable(let reason):
                    APIError(503, "node_unreachable", "the node at \(address) holds this ephemeral session (it lives only there) and did not answer: \(reason)").response
                }
            }
            service.forward(exchange, to: address, sink: answer)
        }
    }

    /// The request's path and query as sent on (the query re-encoded from its decoded pairs).
    static func target(_ request: HTTPRequest) -> String {
        guard !request.query.isEmpty else { return Self.encoded(request.path, keepSlashes: true) }
        let query = request.query.sorted { $0.key < $1.key }.map { "\(encoded($0.key))=\(encoded($0.value))" }.joined(separator: "&")
        return Self.encoded(request.path, keepSlashes: true) + "?" + query
    }

    /// Percent-encodes all but RFC 3986's unreserved characters (and `/`, `:` in a path).
    static func encoded(_ text: String, keepSlashes: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: "/") where keepSlashes, UInt8(ascii: ":") where keepSlashes:
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(UnicodeScalar(hex[Int(byte >> 4)])) + String(UnicodeScalar(hex[Int(byte & 15)]))
            }
        }
        return out
    }
}
