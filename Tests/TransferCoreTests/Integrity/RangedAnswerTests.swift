import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `RangedAnswer`: which 206 answers may be appended to a partial file of 1,000 bytes of a
/// 4,000-byte resource, fetched with ETag "A" (or, without a strong ETag, Last-Modified).
@Suite struct RangedAnswerTests {
    static let byETag = ResumeState(offset: 1000, etag: "\"A\"", lastModified: "Tue, 01 Sep 2026 10:00:00 GMT", expectedLength: 4000)
    static let byDate = ResumeState(offset: 1000, etag: "W/\"A\"", lastModified: "Tue, 01 Sep 2026 10:00:00 GMT", expectedLength: 4000)

    private func check(_ range: String?, length: String? = nil, etag: String? = "\"A\"", lastModified: String? = nil, resume: ResumeState = byETag) -> RangedAnswer {
        RangedAnswer.check(contentRange: range, contentLength: length, etag: etag, lastModified: lastModified, offset: 1000, resume: resume)
    }

    /// libcurl reads a body to its Content-Length: one that is not the range's length would
    /// leave the file short or carry other bytes, so it is refused before a byte is written.
    @Test func aContentLengthThatIsNotTheRangesLengthIsAMismatch() {
        #expect(check("bytes 1000-3999/4000", length: "3000") == .continues(total: 4000))
        #expect(check("bytes 1000-3999/4000", length: " 3000 ") == .continues(total: 4000))
        for length in ["2000", "2999", "3001", "4000", "0"] {
            guard case .mismatch(let reason) = check("bytes 1000-3999/4000", length: length) else {
                Issue.record("Content-Length \(length) accepted")
                continue
            }
            #expect(reason.contains("Content-Length of \(length)"), "\(reason)")
        }
    }

    /// With Last-Modified as the validator (the ETag was weak), a 206 whose weak ETag is another
    /// one is of another version, though its date did not change.
    @Test func aWeakETagThatChangedIsAMismatchEvenWithTheSameDate() {
        let date = Self.byDate.lastModified
        #expect(check("bytes 1000-3999/4000", etag: "W/\"A\"", lastModified: date, resume: Self.byDate) == .continues(total: 4000))
        #expect(check("bytes 1000-3999/4000", etag: "W/\"B\"", lastModified: date, resume: Self.byDate) != .continues(total: 4000))
        #expect(check("bytes 1000-3999/4000", etag: "\"B\"", lastModified: date, resume: Self.byDate) != .continues(total: 4000))
    }

    @Test func theRestOfTheSameVersionContinues() {
        #expect(check("bytes 1000-3999/4000") == .continues(total: 4000))
        #expect(check("bytes 1000-3999/*") == .continues(total: 4000))
    }

    @Test func anotherETagIsAMismatch() {
        guard case .mismatch(let reason) = check("bytes 1000-3999/4000", etag: "\"B\"") else { Issue.record("accepted"); return }
        #expect(reason.contains("\"B\""))
    }

    @Test(arguments: [nil, "W/\"A\""])
    func aMissingOrWeakETagCannotProveTheVersion(_ etag: String?) {
        #expect(check("bytes 1000-3999/4000", etag: etag) != .continues(total: 4000))
    }

    @Test(arguments: ["bytes 900-3999/4000", "bytes 1100-3999/4000", "bytes 1000-2999/4000", "bytes 1000-4999/5000", "bytes */4000", "octets 1000-3999/4000", "garbage"])
    func aRangeThatDoesNotContinueTheFileIsAMismatch(_ range: String) {
        #expect(check(range) != .continues(total: 4000))
    }

    @Test func noContentRangeIsAMismatch() {
        #expect(check(nil) != .continues(total: 4000))
    }

    @Test func lastModifiedIsComparedWhenItWasTheValidator() {
        let date = Self.byDate.lastModified
        #expect(check("bytes 1000-3999/4000", etag: nil, lastModified: date, resume: Self.byDate) == .continues(total: 4000))
        #expect(check("bytes 1000-3999/4000", etag: nil, lastModified: "Wed, 02 Sep 2026 10:00:00 GMT", resume: Self.byDate) != .continues(total: 4000))
        #expect(check("bytes 1000-3999/4000", etag: nil, lastModified: nil, resume: Self.byDate) != .continues(total: 4000))
    }
}

/// `DecodedSizeLimit` and `ResponseHeadLimit`: the bounds on what a response may make us hold.
@Suite struct ResponseBoundsTests {
    @Test func aDecodedBodyPastTheRatioAndTheFloorIsTooLarge() {
        let limit = DecodedSizeLimit(ratio: 200, floor: 32 << 20)
        #expect(!limit.isExceeded(decoded: 30 << 20, encoded: 1))  // below the floor, whatever the ratio
        #expect(!limit.isExceeded(decoded: 64 << 20, encoded: 1 << 20))  // 64 times: text-like
        #expect(limit.isExceeded(decoded: 64 << 20, encoded: 64 << 10))  // 1,024 times: gzip of zeros
        #expect(!limit.isExceeded(decoded: 200 << 20, encoded: 1 << 20))
        #expect(limit.isExceeded(decoded: (200 << 20) + 1, encoded: 1 << 20))
    }

    @Test func aHeadPastTheBoundIsRefusedAndEachHeadCountsAlone() {
        var limit = ResponseHeadLimit()
        let line = "X-Filler: " + String(repeating: "a", count: 1000)
        let statusAccepted = limit.count("HTTP/1.1 200 OK")
        #expect(statusAccepted)
        var accepted = 0
        while limit.count(line) { accepted += 1 }
        #expect(accepted > 100 && accepted < 140, "accepted \(accepted) lines of 1 KiB")
        // A new head (after a redirect or a 100 Continue) starts from zero.
        let newHead = limit.count("HTTP/1.1 200 OK") && limit.count(line)
        #expect(newHead)
    }
}
