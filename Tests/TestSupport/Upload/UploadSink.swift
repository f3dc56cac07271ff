public import Foundation

/// A plain HTTP/1.1 upload receiver on 127.0.0.1 for crash tests of uploads: it reads every
/// request body (any method; `Content-Length` or chunked) at a throttled rate and keeps each body as it
/// arrives, so a body cut short by a dying client stays behind truncated, as a real server's
/// would. A complete body is answered `201` with an empty body.
///
/// ```swift
/// let sink = try UploadSink(bytesPerSecond: 512 * 1024)
/// defer { sink.stop() }
/// let url = sink.url("/incoming/a.bin")
/// ```
public final class UploadSink: Sendable {
    private let state: UploadSinkState

    /// The port on 127.0.0.1.
    public let port: Int

    /// Starts listening at once. `bytesPerSecond` paces the reading of every body (nil: as fast
    /// as it comes).
    public init(bytesPerSecond: Int? = nil) throws {
        state = try UploadSinkState(bytesPerSecond: bytesPerSecond)
        port = state.port
        state.threads.startAcceptLoop(name: "UploadSink") { [state] fd in UploadSinkConnection(fd: fd, state: state).run() }
    }

    deinit { state.threads.stop() }

    /// `http://127.0.0.1:PORT` followed by `path` (which should start with "/").
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)" + path }

    /// Changes the pace for the bytes read from now on (nil: unthrottled).
    public func setRate(_ bytesPerSecond: Int?) { state.locked { $0.bytesPerSecond = bytesPerSecond } }

    /// Every request whose head was read, in order of arrival, bodies as far as they came.
    public var requests: [UploadSinkRequest] { state.locked { $0.requests } }

    /// Waits until `predicate` holds for the requests; false on timeout. It blocks a thread of
    /// its own, not one of Swift concurrency's.
    public func wait(timeout: Duration = .seconds(20), until predicate: @escaping @Sendable ([UploadSinkRequest]) -> Bool) async -> Bool {
        let state = self.state
        return await BlockingBridge.run { state.wait(timeout: timeout) { predicate($0.requests) } }
    }

    /// Closes the listener and every connection, then waits for their threads.
    public func stop() { state.threads.stop() }
}

/// One request an ``UploadSink`` received and how much of its body arrived.
public struct UploadSinkRequest: Sendable, CustomStringConvertible {
    public let method: String
    public let path: String
    /// The declared `Content-Length` (nil for a chunked body).
    public let declaredLength: Int?
    /// The body bytes read so far.
    public internal(set) var body: Data
    /// Whether the whole declared body arrived (and was answered 201).
    public internal(set) var complete: Bool
    /// Whether reading it is over: complete, or cut when the client went away.
    public internal(set) var ended: Bool

    public var description: String { "\(method) \(path) \(body.count)/\(declaredLength.map(String.init) ?? "chunked")\(complete ? "" : " (cut)")" }
}
