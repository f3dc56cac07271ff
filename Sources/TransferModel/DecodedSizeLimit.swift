/// The bound on how far a Content-Encoding may inflate a body (issue 15: a 1 MiB gzip answer
/// became a 1 GiB file). libcurl decodes gzip, deflate, br and zstd as bytes arrive and has no
/// bound of its own; a transfer asks this after every decoded chunk.
///
/// A ratio rather than a size, so large legitimately compressed files still pass: the decoded
/// bytes may be at most `ratio` times the encoded bytes received so far. Below `floor` decoded
/// bytes it never trips (headers and small, very repetitive bodies compress past any ratio).
public struct DecodedSizeLimit: Sendable, Equatable {
    /// Decoded bytes per encoded byte. gzip's own maximum is about 1,030; text and JSON
    /// compress 5 to 50 times.
    public var ratio: Int
    public var floor: Int

    public init(ratio: Int = 200, floor: Int = 32 << 20) {
        self.ratio = ratio
        self.floor = floor
    }

    /// Whether `decoded` bytes out of `encoded` bytes off the wire exceed the bound.
    package func isExceeded(decoded: Int, encoded: Int) -> Bool {
        decoded > floor && decoded > ratio * encoded
    }

    /// The failure of a transfer past the bound.
    package func error(decoded: Int, encoded: Int) -> TaskError {
        TaskError(.dataLengthExceedsMaximum, "the response's Content-Encoding inflated \(encoded) bytes to more than \(decoded), past the daemon's limit of \(ratio) times (--max-decompression-ratio)")
    }
}
