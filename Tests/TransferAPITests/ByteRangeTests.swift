import Testing
@testable import TransferAPI

/// `ByteRange`: the single `Range: bytes=...` requests `GET /v1/tasks/{tid}/file` serves
/// (RFC 9110 14.1.2); anything else is answered whole or, beyond the end, with 416.
@Suite struct ByteRangeTests {
    @Test(arguments: [
        ("bytes=0-0", 0, 0),
        ("bytes=100-199", 100, 199),
        ("bytes=0-999", 0, 999),
        ("bytes=990-", 990, 999),
        ("bytes=0-", 0, 999),
        ("bytes=999-999", 999, 999),
        // A last position past the end is clipped.
        ("bytes=500-5000", 500, 999),
        // Suffixes: the last N bytes, the whole file when N exceeds it.
        ("bytes=-10", 990, 999),
        ("bytes=-1", 999, 999),
        ("bytes=-1000", 0, 999),
        ("bytes=-5000", 0, 999),
        // Positions too large for an Int mean "to the end".
        ("bytes=0-99999999999999999999", 0, 999),
        ("bytes=-99999999999999999999", 0, 999),
        // Whitespace around the numbers is tolerated.
        ("bytes= 10 - 19", 10, 19),
    ] as [(String, Int, Int)])
    func satisfiableSingleRanges(header: String, first: Int, last: Int) {
        #expect(ByteRange.parse(header, size: 1000) == .part(first: first, last: last))
    }

    @Test(arguments: ["bytes=1000-", "bytes=1000-1000", "bytes=5000-6000", "bytes=-0", "bytes=99999999999999999999-"])
    func rangesBeyondTheEndAreUnsatisfiable(header: String) {
        #expect(ByteRange.parse(header, size: 1000) == .unsatisfiable)
    }

    @Test(arguments: [
        // No header, several ranges, another unit, or a malformed spec: the whole file.
        nil, "bytes=0-0,100-199", "bytes=0-1, 5-6", "items=0-10", "bytes=", "bytes=-", "bytes=abc-def",
        "bytes=10", "bytes=20-10", "bytes=-5-10", "bytes=-abc", "bytes=-+5", "bytes=+5-10", "bytes=5-+10", "0-10",
    ] as [String?])
    func otherRequestsGetTheWholeFile(header: String?) {
        #expect(ByteRange.parse(header, size: 1000) == .whole)
    }

    @Test func anEmptyFileHasNoSatisfiableRange() {
        #expect(ByteRange.parse("bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-0", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-5", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse(nil, size: 0) == .whole)
    }

    @Test func oneByteFile() {
        #expect(ByteRange.parse("bytes=0-0", size: 1) == .part(first: 0, last: 0))
        #expect(ByteRange.parse("bytes=-1", size: 1) == .part(first: 0, last: 0))
        #expect(ByteRange.parse("bytes=0-100", size: 1) == .part(first: 0, last: 0))
        #expect(ByteRange.parse("bytes=1-", size: 1) == .unsatisfiable)
    }
}
