import Foundation
import Testing
import TransferAPI
@testable import TransferModel

/// The `types` parameter of the event feed is documented with a pattern that names every event
/// type the daemon accepts there: a type added to `EventType` and not to the pattern would be
/// refused by every client that validates against openapi.yaml (schemathesis found the reverse).
@Suite struct EventTypesPatternTests {
    @Test func thePatternNamesEveryEventTypeAndNothingElse() throws {
        let document = String(decoding: OpenAPIDocument.data, as: UTF8.self)
        let line = try #require(document.split(separator: "\n").first { $0.contains("pattern: '^(didReceiveResponse|") })
        let inner = try #require(line.split(separator: "(").dropFirst().first?.split(separator: ")").first)
        let named = Set(inner.split(separator: "|").map(String.init))
        #expect(named == Set(EventType.allCases.map(\.rawValue)))
        // Both halves of the pattern (the first type, then ",type" repeated) list the same names.
        #expect(line.components(separatedBy: String(inner)).count == 3)
    }
}
