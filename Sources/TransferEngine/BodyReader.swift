internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// Reads a streamed request body into libcurl's buffer, segment after segment, opening each
/// file only when its turn comes. Engine thread only (not Sendable).
final class BodyReader {
    private let segments: [BodySegment]
    private var index = 0
    /// Bytes already taken from the current segment.
    private var offset = 0
    private var descriptor: Int32 = -1
    /// The bytes this reader sends: the body's size less `start`.
    let size: Int
    /// Where in the body this reader starts.
    private let start: Int

    /// Every file must still have the size recorded when the task was made: the request
    /// announced that length, and a changed file would make it lie. `start` skips the body's
    /// first bytes (a tus PATCH sends from the server's offset on).
    init(_ segments: [BodySegment], from start: Int = 0) throws(TaskError) {
        for case .file(let path, let size) in segments where FileSystem.size(of: path) != size {
            throw TaskError(.fileDoesNotExist, "the request body's file \(path) is gone or changed size")
        }
        self.segments = segments
        let total = segments.reduce(0) { $0 + $1.size }
        precondition((0...total).contains(start), "a body offset beyond the body")
        size = total - start
        self.start = start
        seek(to: start)
    }

    /// Reads again from `position` bytes past the start (a 307/308 redirect or a retry on a
    /// reused connection sends the body again).
    func rewind(to position: Int) -> Bool {
        guard (0...size).contains(position) else { return false }
        seek(to: start + position)
        return true
    }

    /// Points the reader at byte `position` of the whole body.
    private func seek(to position: Int) {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        index = 0
        var skipped = position
        while index < segments.count, skipped >= segments[index].size, skipped > 0 {
            skipped -= segments[index].size
            index += 1
        }
        offset = skipped
    }

    /// Fills the buffer from the current segment: the byte count (0 at the end), nil on failure.
    func fill(_ buffer: inout MutableRawSpan) -> Int? {
        while index < segments.count {
            switch segments[index] {
            case .bytes(let data):
                let count = min(data.count - offset, buffer.byteCount)
                if count > 0 {
                    buffer.withUnsafeMutableBytes { raw in
                        data.withUnsafeBytes { source in
                            raw.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
                        }
                    }
                    offset += count
                    return count
                }
            case .file(let path, let size):
                if descriptor < 0 {
                    descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    guard descriptor >= 0 else { return nil }
                    // A reader that starts inside this file (from an offset) reads on from there.
                    if offset > 0, lseek(descriptor, off_t(offset), SEEK_SET) != off_t(offset) { return nil }
                }
                let wanted = min(size - offset, buffer.byteCount)
                if wanted > 0 {
                    let count = buffer.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress, wanted) }
                    guard count > 0 else { return nil }  // an error, or the file shrank under us
                    offset += count
                    return count
                }
                close(descriptor)
                descriptor = -1
            }
            index += 1
            offset = 0
        }
        return 0
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
