import Foundation
import Logging
import Synchronization
import Testing
@testable import TransferAPI

/// The daemon's log lines: one logfmt line per event, values quoted and escaped so an event can
/// never break a line or forge a field.
@Suite struct LogfmtTests {
    @Test func plainValuesStayBareAndOthersAreQuotedAndEscaped() {
        var line = LogfmtLine()
        line.append("http.port", "8080")
        line.append("msg", "transferd listening")
        line.append("empty", "")
        line.append("tricky", "a=\"b\"\\c\nd\te\u{1}")
        line.append("bad key=", "x")
        #expect(String(decoding: line.finished(), as: UTF8.self)
            == #"http.port=8080 msg="transferd listening" empty="" tricky="a=\"b\"\\c\nd\te\u0001" bad_key_=x"# + "\n")
    }

    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (951_782_400.5, "2000-02-29T00:00:00.500Z"),
        (1_780_000_000.25, "2026-05-28T20:26:40.250Z"),
        (4_102_444_799.75, "2099-12-31T23:59:59.750Z"),
    ])
    func timestampsAreUTCWithMilliseconds(seconds: Double, expected: String) {
        #expect(LogTimestamp.format(secondsSince1970: seconds) == expected)
    }

    @Test func oneLinePerEventWithLevelLabelAndSortedMetadata() throws {
        let lines = CapturedLines()
        var logger = Logger(label: "transferd") { label in LogfmtLogHandler(label: label, level: .info, sink: lines.sink) }
        logger[metadataKey: "daemon"] = "a"
        logger.debug("not shown")
        logger.info("two\nlines", metadata: ["z": "1", "http.request.id": "abc"])
        let all = lines.all
        try #require(all.count == 1)
        let line = all[0]
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false)
        #expect(line.hasPrefix("ts="))
        #expect(line.contains(#" level=info label=transferd msg="two\nlines" daemon=a http.request.id=abc z=1"#), "\(line)")
    }
}
