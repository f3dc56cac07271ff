public import Foundation

/// One request as ``OriginServer`` received it, body complete, handed to its handler and kept in
/// ``OriginServer/requests`` for assertions.
public struct OriginRequest: Sendable, CustomStringConvertible {
    /// The method as sent, e.g. `GET`.
    public let method: String
    /// The request target as sent: path and query, e.g. `/file?x=1`.
    public let path: String
    /// The protocol version as sent, e.g. `HTTP/1.1`.
    public let version: String
    /// Header fields keyed by the name as first sent; repeated fields joined with ", ".
    /// Use ``header(_:)`` for a case-insensitive lookup.
    public let headers: [String: String]
    /// The body, with chunked framing removed.
    public let body: Data
    /// The order in which the server received this request, from 0, across all connections.
    public let index: Int
    /// Which accepted connection carried it, from 0 in accept order: equal values mean a reused connection.
    public let connectionIndex: Int
    /// When the request was complete (its body read): gaps between retries are measured from it.
    public let receivedAt: ContinuousClock.Instant

    public init(
        method: String,
        path: String,
        version: String = "HTTP/1.1",
        headers: [String: String] = [:],
        body: Data = Data(),
        index: Int = 0,
        connectionIndex: Int = 0,
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.path = path
        self.version = version
        self.headers = headers
        self.body = body
        self.index = index
        self.connectionIndex = connectionIndex
        self.receivedAt = receivedAt
    }

    /// The value of the header field `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        HeaderLookup.value(name, in: headers)
    }

    /// The path without its query.
    public var pathWithoutQuery: String {
        String(path.prefix { $0 != "?" })
    }

    public var description: String {
        "#\(index) \(method) \(path) (connection \(connectionIndex), \(body.count) body bytes)"
    }

    /// True if the client asked to close the connection after this request.
    var wantsClose: Bool {
        if HeaderLookup.contains(token: "close", in: header("Connection")) { return true }
        if version == "HTTP/1.0" {
            return !HeaderLookup.contains(token: "keep-alive", in: header("Connection"))
        }
        return false
    }
}
