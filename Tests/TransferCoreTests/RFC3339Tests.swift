import Foundation
import Testing
@testable import TransferModel

/// `RFC3339` writes what Foundation's ISO 8601 styles write, so the served metrics and task dates
/// stay the same bytes (it replaced `Date.ISO8601FormatStyle` on the hot paths).
@Suite struct RFC3339Tests {
    private static let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    @Test func millisecondsAreFoundationsOverEveryMillisecondOfAMinuteAndRandomInstants() {
        var generator = SystemRandomNumberGenerator()
        let exact = (0..<60_000).map { 1_764_300_000.0 + Double($0) / 1000 }
        let random = (0..<100_000).map { _ in Double.random(in: -2e9...4e9, using: &generator) }
        let edges = [0, -0.0005, -1.5, 0.9999999, 253_402_300_799.999, -62_135_596_800]
        for seconds in exact + random + edges {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.millisecondsText(date) == date.formatted(Self.foundation), "\(seconds)")
        }
    }

    @Test func wholeSecondsInATaskAreJSONEncodersAndFarYearsFallBack() throws {
        for seconds in [0.0, 1_764_300_000.999, -1.5, 253_402_300_800, -62_135_596_801, 1e12] {
            let date = Date(timeIntervalSince1970: seconds)
            var writer = TaskJSONWriter()
            writer.date(date)
            let written = writer.data()
            let reference = try JSONCoding.encoder.encode([date])
            #expect("[" + String(decoding: written, as: UTF8.self) + "]" == String(decoding: reference, as: UTF8.self), "\(seconds)")
        }
    }
}
