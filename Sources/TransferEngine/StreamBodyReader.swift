internal import Glibc

/// Where a client-streamed body stands when the engine is told: its spool file, the bytes
/// written there so far, and whether the client ended it.
package struct BodyStreamSnapshot: Sendable {
    let path: String
    var available: Int
    var ended: Bool

    /// The memberwise initializer, for the layers above.
    package init(path: String, available: Int, ended: Bool) {
        self.path = path
        self.available = available
        self.ended = ended
    }
}

/// Reads a client-streamed request body from its spool file as the chunks arrive. The service
/// appends each chunk to the file before it tells the engine (`bodyAvailable`), so every byte
/// below `available` is there to read. Engine thread only (not Sendable).
final class StreamBodyReader {
    enum Fill {
        case bytes(Int)
        /// Every byte is sent and the client ended the body.
        case end
        /// Every byte so far is sent: wait for the next chunk.
        case wait
        case failed
    }

    private var snapshot: BodyStreamSnapshot
    private var offset = 0
    private var descriptor: Int32 = -1

    init(_ snapshot: BodyStreamSnapshot) { self.snapshot = snapshot }

    /// Bytes sent so far.
    var sent: Int { offset }
    /// The body's length once the client ended it.
    var length: Int? { snapshot.ended ? snapshot.available : nil }

    func update(available: Int, ended: Bool) {
        snapshot.available = max(snapshot.available, available)
        snapshot.ended = ended
    }

    /// Reads again from `position` (a 307/308 redirect sends the body again): every chunk stays
    /// in the spool file until the task completes, so any position received so far can be read.
    func rewind(to position: Int) -> Bool {
        guard position >= 0, position <= snapshot.available else { return false }
        offset = position
        return true
    }

    func fill(_ buffer: inout MutableRawSpan) -> Fill {
        let wanted = min(snapshot.available - offset, buffer.byteCount)
        guard wanted > 0 else { return snapshot.ended ? .end : .wait }
        if descriptor < 0 {
            descriptor = open(snapshot.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return .failed }
        }
        let count = buffer.withUnsafeMutableBytes { raw in pread(descriptor, raw.baseAddress, wanted, off_t(offset)) }
        guard count > 0 else { return .failed }
        offset += count
        return .bytes(count)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
