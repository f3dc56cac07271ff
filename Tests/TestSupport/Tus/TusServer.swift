import Foundation

/// A tus 1.0.0 server on 127.0.0.1 (core protocol and creation extension) for tests of
/// resumable uploads, with faults: a PATCH cut or stalled after K bytes (the bytes that arrived
/// are kept, as real tus servers do), a throttled PATCH, or any status instead of an answer.
///
/// Uploads are created with `POST /files/` (answered `201` with a relative `Location:
/// /files/ID`), asked with `HEAD /files/ID` (`Upload-Offset`, `Upload-Length`, `Cache-Control:
/// no-store`) and appended with `PATCH /files/ID` (409 on an offset mismatch, 415 on another
/// Content-Type, 404 for unknown uploads); every request but OPTIONS needs `Tus-Resumable:
/// 1.0.0` (412 otherwise, with Tus-Version). One thread per connection, keep-alive.
///
/// ```swift
/// let server = try TusServer { request in request.method == "PATCH" && request.patchIndex == 0 ? .cutAfter(bytes: 1 << 20) : .none }
/// defer { server.stop() }
/// let url = server.creationURL
/// ```
public final class TusServer: Sendable {
    private let state: TusState

    /// The port on 127.0.0.1.
    public let port: Int

    /// Starts listening at once. `faults` runs on the connection's thread for every request, once
    /// its head is read, and picks what goes wrong with it.
    public init(faults: @escaping @Sendable (TusRequestHead) -> TusFault = { _ in .none }) throws {
        state = try TusState(faults: faults)
        port = state.port
        state.threads.startAcceptLoop(name: "TusServer") { [state] fd in TusConnection(fd: fd, state: state).run() }
    }

    deinit { state.threads.stop() }

    /// `http://127.0.0.1:PORT/files/`: where uploads are created.
    public var creationURL: String { "http://127.0.0.1:\(port)/files/" }

    /// Every exchange so far, in order of completion (a cut or stalled PATCH when it was cut).
    public var exchanges: [TusExchange] { state.locked { $0.exchanges } }

    /// Every upload, by id.
    public var uploads: [TusStoredUpload] { state.locked { $0.uploads.values.sorted { $0.id < $1.id } } }

    /// Waits until `predicate` holds for the uploads and exchanges; false on timeout. It blocks a
    /// thread of its own, not one of Swift concurrency's.
    public func wait(timeout: Duration = .seconds(20), until predicate: @escaping @Sendable ([TusStoredUpload], [TusExchange]) -> Bool) async -> Bool {
        let state = self.state
        return await BlockingBridge.run {
            state.wait(timeout: timeout) { state in predicate(state.uploads.values.sorted { $0.id < $1.id }, state.exchanges) }
        }
    }

    /// Closes the listener and every connection (waking stalled ones), then waits for their threads.
    public func stop() { state.threads.stop() }
}

/// A request's head as the `faults` closure of ``TusServer`` sees it.
public struct TusRequestHead: Sendable {
    public let method: String
    public let path: String
    public let headers: [String: String]
    /// The order of arrival, from 0, across all connections.
    public let index: Int

    public func header(_ name: String) -> String? { HeaderLookup.value(name, in: headers) }
}
