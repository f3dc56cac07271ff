internal import Glibc

/// Unbuffered writes to stdout and stderr (file descriptors 1 and 2), so progress on stderr and
/// data on stdout never interleave out of order through stdio buffers.
enum StandardStreams {
    static func out(_ text: String) { write(text, to: 1) }
    static func err(_ text: String) { write(text, to: 2) }

    /// Writes a whole string; a closed stream (EPIPE) is ignored here, the caller goes on.
    static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in _ = writeAll(UnsafeRawBufferPointer(bytes), to: descriptor) }
    }

    /// Writes every byte, retrying short writes and EINTR; false on any other error.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
