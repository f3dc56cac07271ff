internal import CZlib

/// Decodes a gzip or deflate body as it arrives, and knows whether it reached its end: libcurl
/// 7.88's own decoding reports a gzip body cut short at its Content-Length as a success (599,805
/// of 1 MiB decoded, exit 0), so transferd decodes these codings itself. One zlib stream
/// (`z_stream`), owned by one transfer on one thread: not Sendable.
/// - SeeAlso: https://zlib.net/manual.html (inflateInit2, inflate, inflateReset, inflateEnd)
public final class Inflater {
    /// The codings decoded (RFC 9110 8.4.1): gzip (x-gzip) and deflate (a zlib stream, or the raw
    /// deflate some servers send instead).
    public enum Coding: Sendable {
        case gzip
        case deflate

        /// The coding of a `Content-Encoding` value, nil for any other (or several).
        public init?(contentEncoding: String) {
            switch contentEncoding.lowercased().filter({ $0 != " " && $0 != "\t" }) {
            case "gzip", "x-gzip": self = .gzip
            case "deflate": self = .deflate
            default: return nil
            }
        }
    }

    /// What decoding a chunk came to.
    public enum Failure: Error, Sendable, Equatable {
        /// The bytes are not of the coding (zlib's message).
        case corrupt(String)
        /// zlib could not get memory, or the stream could not be set up.
        case resources
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<UInt8>
    private let outputSize = 256 * 1024
    private let coding: Coding
    private var started = false
    private var triedRawDeflate = false
    /// The encoded bytes seen so far.
    public private(set) var consumed = 0
    /// Whether the last member's end (and, for gzip, its CRC-32 and length check) was reached.
    public private(set) var isFinished = false

    public init(_ coding: Coding) throws(Failure) {
        self.coding = coding
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(capacity: outputSize)
        // 15 + 16: a gzip wrapper (its trailer checked); 15: a zlib wrapper.
        guard transferd_inflate_init2(stream, coding == .gzip ? 15 + 16 : 15) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            output.deallocate()
            throw .resources
        }
    }

    /// Decodes `input`, handing each decoded piece to `sink` (which returns false to stop).
    /// Returns false when `sink` stopped it.
    public func inflate(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Bool) throws(Failure) -> Bool {
        guard var base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), !input.isEmpty else { return true }
        var remaining = input.count
        consumed += input.count
        while remaining > 0 {
            if isFinished {
                // Another gzip member follows (gzip(1) decodes concatenated members); anything
                // else after a complete, checked stream is trailing garbage, which gzip ignores too.
                guard coding == .gzip, remaining >= 2, base[0] == 0x1f, base[1] == 0x8b, inflateReset(stream) == Z_OK else { return true }
                isFinished = false
            }
            // next_in is not const without ZLIB_CONST; zlib only reads through it.
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
            stream.pointee.avail_in = UInt32(min(remaining, Int(UInt32.max)))
            stream.pointee.next_out = output
            stream.pointee.avail_out = UInt32(outputSize)
            let before = Int(stream.pointee.avail_in)
            let result = CZlib.inflate(stream, Z_NO_FLUSH)
            let used = before - Int(stream.pointee.avail_in)
            let produced = outputSize - Int(stream.pointee.avail_out)
            switch result {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                isFinished = true
            case Z_DATA_ERROR where coding == .deflate && !started && !triedRawDeflate:
                // "deflate" without its zlib wrapper, as some servers send it: start again raw.
                triedRawDeflate = true
                inflateEnd(stream)
                guard transferd_inflate_init2(stream, -15) == Z_OK else { throw .resources }
                continue
            case Z_MEM_ERROR:
                throw .resources
            default:
                throw .corrupt(stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(result)")
            }
            started = true
            if produced > 0, !sink(UnsafeRawBufferPointer(start: output, count: produced)) { return false }
            base += used
            remaining -= used
            // No input taken and no output made: zlib needs more input than it has (Z_BUF_ERROR).
            if used == 0 && produced == 0 && !isFinished { return true }
        }
        return true
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }
}
