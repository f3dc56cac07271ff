public import Foundation

/// An HTTP/1.1 origin on 127.0.0.1 for transfers too large or too long to hold: it serves one
/// ``GeneratedBytes`` resource to every `GET` (single `Range`s honoured, `If-Range` against its
/// strong ETag, optionally paced to a rate) and consumes every `PUT`/`POST` body without keeping
/// it, hashing it (SHA-256) as it arrives.
///
/// It counts what it actually did: for each response, the body bytes the kernel accepted
/// (``ServedResponse/bytesSent``, updated as they go); for each upload, the bytes received and
/// their digest. So a test can check how much was downloaded twice across crashes, or that a
/// 1 GiB upload arrived intact, without ``OriginServer``'s in-memory request log.
///
/// One thread accepts, one thread serves each connection (keep-alive). Request bodies need a
/// `Content-Length` (chunked ones are answered 411). Call ``stop()`` when done.
public final class StreamingOrigin: Sendable {
    let state: StreamingOriginState

    /// The port on 127.0.0.1.
    public let port: Int
    public let resource: GeneratedBytes
    public let etag: String

    /// Starts listening at once. `bytesPerSecond` paces every response body (nil: as fast as the
    /// socket takes it); ``setRate(_:)`` changes it, also for responses under way.
    public init(resource: GeneratedBytes, etag: String = "\"generated-v1\"", bytesPerSecond: Int? = nil) throws {
        self.resource = resource
        self.etag = etag
        state = try StreamingOriginState(resource: resource, etag: etag, bytesPerSecond: bytesPerSecond)
        port = state.port
        state.startAccepting()
    }

    deinit {
        state.stop()
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which should start with "/").
    public func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)" + path
    }

    /// Paces response bodies from now on (nil: unpaced).
    public func setRate(_ bytesPerSecond: Int?) {
        state.locked { $0.bytesPerSecond = bytesPerSecond }
    }

    /// Every `GET`/`HEAD` answered so far, in order, with the body bytes sent so far.
    public var responses: [ServedResponse] {
        state.locked { $0.responses }
    }

    /// Every `PUT`/`POST` body received so far, in order (complete or not).
    public var uploads: [ReceivedUpload] {
        state.locked { $0.uploads }
    }

    /// Closes the listener and every connection and waits (at most 5 s) for their threads.
    public func stop() {
        state.stop()
    }
}

/// One response of a ``StreamingOrigin`` to a `GET` or `HEAD`.
public struct ServedResponse: Sendable, CustomStringConvertible {
    /// The `Range` header of the request, if any.
    public let range: String?
    /// 200, 206 or 416.
    public let status: Int
    /// Where the body starts in the resource, and how long it was declared.
    public let offset: Int
    public let length: Int
    /// Body bytes the kernel accepted so far (all of `length` once finished).
    public internal(set) var bytesSent = 0
    /// Whether the whole body went out.
    public internal(set) var finished = false

    public var description: String {
        "\(status) \(range ?? "whole") @\(offset): \(bytesSent)/\(length)\(finished ? "" : " (cut)")"
    }
}

/// One request body a ``StreamingOrigin`` consumed.
public struct ReceivedUpload: Sendable, CustomStringConvertible {
    public let method: String
    public let path: String
    /// The declared `Content-Length`.
    public let contentLength: Int
    public internal(set) var bytesReceived = 0
    /// The SHA-256 of the body (lowercase hex), once it arrived whole.
    public internal(set) var sha256: String?

    public var description: String {
        "\(method) \(path): \(bytesReceived)/\(contentLength) \(sha256 ?? "(incomplete)")"
    }
}
