public import Foundation

/// What ``TusServer`` does wrong on purpose with one request (chosen by its `faults` closure).
public enum TusFault: Sendable, Equatable {
    /// Serve the request as the spec says.
    case none
    /// PATCH: keep the first `bytes` bytes of the body (the upload's offset moves by that much,
    /// as real tus servers keep what arrived), then reset the connection (RST) without answering.
    case cutAfter(bytes: Int)
    /// PATCH: keep the first `bytes` bytes, then stop reading and never answer, until the client
    /// gives up and closes (or the server stops).
    case stallAfter(bytes: Int)
    /// PATCH: read the body at about this rate (bytes per second), keeping every byte as it
    /// is read; a client that dies meanwhile leaves the upload at what was read before the
    /// server noticed (bytes still queued in the kernel are dropped).
    case throttle(bytesPerSecond: Int)
    /// Answer with this status (and no body) instead of serving the request.
    case status(Int)
}

/// One request ``TusServer`` received and what became of it, for assertions.
public struct TusExchange: Sendable, CustomStringConvertible {
    /// The order of arrival, from 0.
    public let index: Int
    public let method: String
    public let path: String
    public let headers: [String: String]
    /// Body bytes of this request that the server kept (a PATCH's appended bytes).
    public let bodyBytesKept: Int
    /// The status answered; nil when the connection was cut or stalled instead.
    public let status: Int?

    /// The value of the header field `name`, compared case-insensitively.
    public func header(_ name: String) -> String? { HeaderLookup.value(name, in: headers) }

    /// The request's Upload-Offset as a number.
    public var uploadOffset: Int? { header("Upload-Offset").flatMap { Int($0) } }

    public var description: String {
        "#\(index) \(method) \(path) offset=\(header("Upload-Offset") ?? "-") kept=\(bodyBytesKept) -> \(status.map(String.init) ?? "cut")"
    }
}

/// An upload resource of ``TusServer``.
public struct TusStoredUpload: Sendable {
    public let id: String
    /// Upload-Length as declared at creation.
    public let length: Int
    /// Upload-Metadata as sent at creation, decoded: key to value (nil for a key without value).
    public let metadata: [String: String?]
    /// The bytes received so far; `data.count` is the upload's offset.
    public internal(set) var data: Data
}
