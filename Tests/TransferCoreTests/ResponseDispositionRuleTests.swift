import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `ResponseDisposition` without I/O: first matching rule wins, every condition of a rule must
/// hold, unknown lengths never satisfy minLength, media ranges ignore case and parameters; the
/// stored form reads back equal.
@Suite struct ResponseDispositionRuleTests {
    static let disposition = ResponseDisposition(default: .allow, rules: [
        .init(when: .init(statusCodes: [404, 410]), then: .cancel),
        .init(when: .init(minLength: 10_485_760), then: .becomeDownload),
        .init(when: .init(minLength: 1000, mimeType: "video/*"), then: .becomeDownload),
        .init(when: .init(mimeType: "text/html"), then: .cancel),
    ])

    @Test(arguments: [
        (200, "application/json", 100, ResponseDisposition.Action.allow),
        (200, "application/octet-stream", 10_485_760, .becomeDownload),
        (200, "application/octet-stream", 10_485_759, .allow),
        (404, "application/octet-stream", 20_000_000, .cancel),  // the first rule wins
        (200, "video/mp4", 1000, .becomeDownload),
        (200, "video/mp4", 999, .allow),  // both conditions of the rule must hold
        (200, "video/mp4", nil, .allow),  // unknown length never satisfies minLength
        (200, "text/html", nil, .cancel),
        (0, "text/html", 5, .cancel),  // a data:/file: response is judged by its type too
        (200, "text/htmlx", 5, .allow),
    ] as [(Int, String, Int?, ResponseDisposition.Action)])
    func theFirstMatchingRuleDecides(status: Int, mimeType: String, length: Int?, expected: ResponseDisposition.Action) {
        #expect(Self.disposition.action(statusCode: status, mimeType: mimeType, expectedLength: length) == expected)
    }

    @Test func mediaRangesIgnoreCaseAndParameters() {
        typealias Condition = ResponseDisposition.Condition
        #expect(Condition.mediaType("Video/MP4; codecs=avc1", matches: "video/*"))
        #expect(Condition.mediaType("text/html;charset=utf-8", matches: "text/html"))
        #expect(Condition.mediaType("anything/else", matches: "*/*"))
        #expect(!Condition.mediaType("", matches: "*/*"))
        #expect(!Condition.mediaType("videos/mp4", matches: "video/*"))
        #expect(!Condition.mediaType("text/plain", matches: "text/html"))
        #expect(Condition.isMediaRange("video/*") && Condition.isMediaRange("*/*") && Condition.isMediaRange("application/vnd.api+json"))
        #expect(!Condition.isMediaRange("*/html") && !Condition.isMediaRange("video") && !Condition.isMediaRange("a/b*") && !Condition.isMediaRange("a/b/c"))
    }

    @Test func theStoredFormReadsBackEqual() throws {
        let data = try JSONEncoder().encode(Self.disposition)
        #expect(try JSONDecoder().decode(ResponseDisposition.self, from: data) == Self.disposition)
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("null"), "\(text)")
    }
}
