internal import Dispatch
internal import FoundationEssentials
internal import HTTPServer
internal import Synchronization
internal import TransferService

/// The answer of another node to a request passed on to it (`NodeForwarding`), sent to the
/// client as it arrives: the head as soon as the holder's is complete, then the body through a
/// bounded buffer. The exchange's thread waits while `capacity` bytes are not yet taken, so a slow
/// client slows the exchange down instead of filling memory; a client that goes away stops it.
final class ForwardedAnswer: HTTPBodyStream, ForwardedAnswerSink {
    static let capacity = 1 << 20

    private struct State {
        var buffer: [UInt8] = []
        /// Where the unread bytes start in `buffer`.
        var start = 0
        var ended = false
        var complete = false
        var closed = false
        var wake: (@Sendable () -> Void)?
        var unread: Int { buffer.count - start }
    }

    private let state = Mutex(State())
    /// Signalled when the reader took bytes or closed: the exchange's thread waits on it.
    private let room = DispatchSemaphore(value: 0)
    private let respond: @Sendable (HTTPResponse) -> Void
    private let failure: @Sendable (NodeForwarding.Failure) -> HTTPResponse

    init(respond: @escaping @Sendable (HTTPResponse) -> Void, failure: @escaping @Sendable (NodeForwarding.Failure) -> HTTPResponse) {
        self.respond = respond
        self.failure = failure
    }

    // MARK: the exchange's side

    func head(status: Int, headers: [(name: String, value: String)], length: Int?) {
        respond(HTTPResponse(status: status, headers: HTTPHeaders(headers.map { ($0.name, $0.value) }), body: .stream(self, length: length)))
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        while true {
            let (accepted, wake) = state.withLock { s -> (Bool?, (@Sendable () -> Void)?) in
                if s.closed { return (false, nil) }
                guard s.unread < Self.capacity else { return (nil, nil) }
                // The bytes the client took go once they are half the buffer: it never holds more
                // than twice the unread ones, and each byte is moved at most once on average.
                if s.start > 0, s.start * 2 >= s.buffer.count { s.buffer.removeFirst(s.start); s.start = 0 }
                s.buffer.append(contentsOf: bytes)
                defer { s.wake = nil }
                return (true, s.wake)
            }
            if let accepted {
                wake?()
                return accepted
            }
            room.wait()  // the reader takes bytes or closes, then signals
        }
    }

    func end(complete: Bool) {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            s.ended = true
            s.complete = complete
            defer { s.wake = nil }
            return s.wake
        }
        wake?()
    }

    func failed(_ failure: NodeForwarding.Failure) {
        respond(self.failure(failure))
    }

    // MARK: the client's side (a server pool thread)

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead {
        let result = state.withLock { s -> HTTPBodyStreamRead in
            guard s.unread == 0 else {
                let count = min(buffer.count, s.unread)
                s.buffer.withUnsafeBytes { source in
                    buffer.baseAddress!.copyMemory(from: source.baseAddress! + s.start, byteCount: count)
                }
                s.start += count
                return .bytes(count)
            }
            if s.ended { return s.complete ? .end : .failed }
            s.wake = wake
            return .wait
        }
        if case .bytes = result { room.signal() }
        return result
    }

    func close() {
        state.withLock { s in
            s.closed = true
            s.wake = nil
            s.buffer = []
            s.start = 0
        }
        room.signal()
    }
}
