import Foundation
import Testing
import TestSupport
import Zlib

/// `Inflater` on gzip(1)'s output: whole, cut short, concatenated, corrupt; and deflate in both
/// of its forms (zlib-wrapped and raw, which some servers send).
@Suite struct InflaterTests {
    static let original = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    static let gzipped = GzipTool.compress(original)

    /// Feeds `input` in `chunk`-byte pieces; returns the decoded bytes and the inflater.
    private func inflate(_ input: Data, _ coding: Inflater.Coding = .gzip, chunk: Int = 1000) throws -> (Data, Inflater) {
        let inflater = try Inflater(coding)
        var output = Data()
        var offset = 0
        while offset < input.count {
            let piece = input.subdata(in: offset..<min(input.count, offset + chunk))
            _ = try piece.withUnsafeBytes { raw in try inflater.inflate(raw) { output.append(contentsOf: $0); return true } }
            offset += chunk
        }
        return (output, inflater)
    }

    @Test(arguments: [1, 7, 1000, 1 << 20])
    func aWholeGzipBodyDecodesAndFinishes(chunk: Int) throws {
        let (output, inflater) = try inflate(Self.gzipped, chunk: chunk)
        #expect(output == Self.original)
        #expect(inflater.isFinished)
        #expect(inflater.consumed == Self.gzipped.count)
    }

    @Test func aGzipBodyCutShortDoesNotFinish() throws {
        let (output, inflater) = try inflate(Self.gzipped.dropLast(9))  // the CRC and length trailer, and a byte
        #expect(output.count < Self.original.count || !inflater.isFinished)
        #expect(!inflater.isFinished)
    }

    @Test func concatenatedMembersDecodeAsOne() throws {
        let (output, inflater) = try inflate(Self.gzipped + Self.gzipped)
        #expect(output == Self.original + Self.original)
        #expect(inflater.isFinished)
    }

    @Test func aCorruptTrailerIsAnError() throws {
        var corrupt = Self.gzipped
        corrupt[corrupt.count - 6] ^= 0xff  // the CRC-32
        #expect(throws: Inflater.Failure.self) { try inflate(corrupt) }
    }

    @Test func bytesThatAreNotGzipAreAnError() throws {
        #expect(throws: Inflater.Failure.self) { try inflate(Self.original) }
    }

    @Test func deflateWithOrWithoutItsZlibWrapperDecodes() throws {
        // A gzip member is a 10-byte header, raw deflate, and an 8-byte trailer (no name stored: -c from stdin).
        let raw = Self.gzipped.subdata(in: 10..<(Self.gzipped.count - 8))
        let (fromRaw, rawInflater) = try inflate(raw, .deflate)
        #expect(fromRaw == Self.original)
        #expect(rawInflater.isFinished)
        // The zlib form (RFC 1950): a 2-byte header, the same deflate data, Adler-32 big-endian.
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in Self.original { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        let adler = (b << 16) | a
        let wrapped = Data([0x78, 0x9c]) + raw + Data([UInt8(adler >> 24), UInt8(adler >> 16 & 0xff), UInt8(adler >> 8 & 0xff), UInt8(adler & 0xff)])
        let (fromWrapped, wrappedInflater) = try inflate(wrapped, .deflate)
        #expect(fromWrapped == Self.original)
        #expect(wrappedInflater.isFinished)
    }

    @Test(arguments: [("gzip", true), ("x-gzip", true), ("Deflate", true), ("br", false), ("gzip, br", false), ("identity", false)])
    func codingsFromContentEncoding(_ value: String, _ decoded: Bool) {
        #expect((Inflater.Coding(contentEncoding: value) != nil) == decoded)
    }
}
