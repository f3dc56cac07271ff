internal import CMicroHTTPD
internal import Synchronization

/// One streamed response body while libmicrohttpd sends it: the stream, the connection to
/// suspend and resume, and the state of the reads (`StreamedBodyState`).
///
/// Created by `MHDResponse` when the answer is queued, so the connection is known before the
/// first read. Owned by its MHD_Response through the callbacks' `cls` (one retain, given back
/// by the free callback, which closes the stream), and listed in `ServerCore` until then so
/// that stop() can end it. Sendable: immutable apart from its lock.
final class StreamedBody: Sendable {
    /// The most bytes one read is asked for (with a Content-Length, libmicrohttpd's buffer).
    static let blockSize = 64 << 10
    /// MHD_CONTENT_READER_END_OF_STREAM and _END_WITH_ERROR (macros with casts, not imported).
    private static let endOfStream = -1
    private static let endWithError = -2

    private let stream: any HTTPBodyStream
    private let length: Int?
    private let core: ServerCore
    private let resumer: ConnectionResumer
    private let state = Mutex(StreamedBodyState())

    private init(stream: any HTTPBodyStream, length: Int?, core: ServerCore, connection: OpaquePointer) {
        self.stream = stream
        self.length = length
        self.core = core
        resumer = ConnectionResumer(connection)
    }

    /// The MHD_Response for `stream`, to be queued on `connection` (connection thread). Nil
    /// when it cannot be made (negative length, out of memory); the stream is closed then.
    static func makeResponse(
        _ stream: any HTTPBodyStream, length: Int?, connection: OpaquePointer, core: ServerCore
    ) -> OpaquePointer? {
        guard (length ?? 0) >= 0 else {
            stream.close()
            return nil
        }
        let body = StreamedBody(stream: stream, length: length, core: core, connection: connection)
        if !core.register(body) {
            // Queued while stop() runs: its first read ends it, it never suspends.
            _ = body.state.withLock { $0.cancel() }
        }
        let retained = Unmanaged.passRetained(body)
        // MHD_SIZE_UNKNOWN is UINT64_MAX: chunked for HTTP/1.1 clients.
        let size = length.map { UInt64($0) } ?? UInt64.max
        guard let response = MHD_create_response_from_callback(size, blockSize, reader, retained.toOpaque(), freed) else {
            retained.release()
            body.closed()
            return nil
        }
        return response
    }

    /// stop(): the next read ends the body with an error; a suspended connection is resumed for it.
    func cancel() {
        if state.withLock({ $0.cancel() }) == .resume { resume() }
    }

    // MARK: Callbacks

    /// MHD_ContentReaderCallback: runs on the connection's pool thread with the response's mutex held.
    private static let reader: MHD_ContentReaderCallback = { cls, _, buffer, max in
        guard let cls, let buffer else { return endWithError }
        let body = Unmanaged<StreamedBody>.fromOpaque(cls).takeUnretainedValue()
        return body.next(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
    }

    /// MHD_ContentReaderFreeCallback: the response is destroyed (sent, connection closed,
    /// daemon stopped, or never queued).
    private static let freed: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        Unmanaged<StreamedBody>.fromOpaque(cls).takeRetainedValue().closed()
    }

    /// Bytes copied, 0 (after suspending, or to be asked again), or an end code.
    private func next(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard state.withLock({ $0.readStarting() }) == .read else { return Self.endWithError }
        // Weak: a wake kept by the stream after close() must neither keep this alive nor act.
        let result = stream.read(into: buffer) { [weak self] in self?.wake() }
        switch result {
        case .bytes(let count):
            state.withLock { $0.readGaveData() }
            return count > 0 && count <= buffer.count ? count : Self.endWithError
        case .end:
            state.withLock { $0.readGaveData() }
            // With a length libmicrohttpd stops asking once it is reached: an end here is early.
            return length == nil ? Self.endOfStream : Self.endWithError
        case .failed:
            state.withLock { $0.readGaveData() }
            return Self.endWithError
        case .wait:
            return waitForWake()
        }
    }

    private func waitForWake() -> Int {
        switch state.withLock({ $0.readGaveWait() }) {
        case .retry:
            return 0
        case .suspend:
            // Counted before suspending, so stop() never sees 0 while this one is suspended.
            core.suspendedStreamCount.add(1, ordering: .relaxed)
            resumer.suspend()
            if state.withLock({ $0.suspendCompleted() }) == .resume { resume() }
            return 0
        default:
            return Self.endWithError
        }
    }

    /// The stream's wake, from any thread.
    private func wake() {
        if state.withLock({ $0.wake() }) == .resume { resume() }
    }

    /// Performs a `.resume`: the connection is suspended, so it is not freed before this returns.
    /// Uncounted only afterwards, so stop() cannot stop the daemon under a resume in progress.
    private func resume() {
        resumer.resume()
        core.suspendedStreamCount.subtract(1, ordering: .relaxed)
    }

    private func closed() {
        state.withLock { $0.close() }
        core.unregister(self)
        stream.close()
    }
}

extension HTTPResponse {
    /// Closes the stream of an answer that will never be queued (a second answer), keeping
    /// `HTTPBodyStream.close()` exactly once.
    func dropped() {
        if case .stream(let stream, _) = body { stream.close() }
    }
}
