import Foundation
import JSONModel
import Testing
@testable import TransferAPI
@testable import TransferModel

/// A node's list of sessions in a cluster: its own, then the other nodes' ephemeral sessions by
/// creation time and id, one cursor through both (`ClusterSessionList`).
@Suite struct ClusterSessionListTests {
    private static func here(_ id: String) -> Session {
        Session(id: id, kind: .default, state: .active, configuration: SessionConfiguration(), createdAt: Date(timeIntervalSince1970: 1_700_000_000), version: 1)
    }

    private static func elsewhere(_ id: String, _ created: String) -> ClusterSessionList.Item {
        ClusterSessionList.Item.elsewhere(.object(["id": .string(id), "kind": .string("ephemeral"), "createdAt": .string(created)]))!
    }

    @Test func pagesGoThroughThisNodesSessionsThenTheOthersInCreationOrder() throws {
        let here = [Self.here("a"), Self.here("b")]
        let elsewhere = [Self.elsewhere("y", "2026-11-28T10:00:02Z"), Self.elsewhere("x", "2026-11-28T10:00:01Z"),
                         Self.elsewhere("w", "2026-11-28T10:00:02Z"), Self.elsewhere("b", "2026-11-28T09:00:00Z")]
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try ClusterSessionList.page(here: here, elsewhere: elsewhere, limit: 2, cursor: cursor)
            seen += page.items.map(\.id)
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 10
        // "b" is listed once (this node's own); the others by time, then id.
        #expect(seen == ["a", "b", "x", "w", "y"])
        #expect(pages == 3)
    }

    @Test func aCursorInNeitherListIsAnInvalidQuery() {
        #expect(throws: APIError.self) {
            try ClusterSessionList.page(here: [Self.here("a")], elsewhere: [Self.elsewhere("x", "2026-11-28T10:00:01Z")], limit: 10, cursor: "gone")
        }
    }

    @Test func anotherNodesSessionIsServedAsItWroteItAndOneWithoutAnIdIsLeftOut() throws {
        #expect(ClusterSessionList.Item.elsewhere(.object(["kind": .string("ephemeral")])) == nil)
        #expect(ClusterSessionList.Item.elsewhere(.string("x")) == nil)
        let page = try ClusterSessionList.page(here: [], elsewhere: [Self.elsewhere("x", "2026-11-28T10:00:01Z")], limit: 10, cursor: nil)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(page.items)) as? [[String: String]]
        #expect(json == [["id": "x", "kind": "ephemeral", "createdAt": "2026-11-28T10:00:01Z"]])
        #expect(page.next == nil)
    }
}
