import Foundation
import Testing
import TransferAPI

/// openapi.yaml's schemas and the JSON the daemon sends, in step: a real daemon answers a tour
/// of the API (sessions with a webhook, data, download, upload and stream tasks against a local
/// origin, events, cookies, credentials, queue, limits, blobs, errors), and every key of every
/// answer must be a property of the schema the document gives that answer, down every nested
/// object; every property of every schema reached must have been sent by some answer, unless
/// `neverAnswered` names it with the reason.
@Suite struct OpenAPIFieldsTests {
    /// Properties that a schema declares and no answer of this tour carries, with the reason.
    static let neverAnswered: [String: Set<String>] = [
        // Write-only: stored with the session, never in an answer (docs/schemes.md, "Proxies and TLS").
        "ProxyDictionary": ["HTTPProxyPassword", "HTTPSProxyPassword", "SOCKSProxyPassword"],
        // Only a cluster's node (PostgreSQL) says which node runs a task; the tour runs on
        // SQLite. Tests/System/test_cluster.py reads it through a node that does not run the task.
        "Task": ["node"],
        // A server-trust challenge needs a TLS origin the system does not trust; the tour's is
        // plain HTTP. Tests/System/test_decisions.py answers one.
        "DidReceiveChallengeEvent": ["serverTrust"],
    ]

    @Test func everyFieldSentIsInTheSchemaAndEverySchemaFieldIsSent() async throws {
        let index = OpenAPISchemaIndex(String(decoding: OpenAPIDocument.data, as: UTF8.self))
        #expect(index.schema(named: "Task") != nil, "the reader found no components/schemas/Task")
        let audit = try await APITour.run(index: index)

        #expect(audit.reached.count >= 60, "the tour reached only \(audit.reached.sorted())")
        #expect(audit.undocumented == [], "fields the daemon sends that openapi.yaml does not declare")
        var neverSent = audit.neverSent
        for (schema, fields) in Self.neverAnswered {
            neverSent[schema] = neverSent[schema].map { $0.filter { !fields.contains($0) } }
            if neverSent[schema]?.isEmpty == true { neverSent[schema] = nil }
        }
        #expect(neverSent == [:], "properties of openapi.yaml that no answer of the tour carried")
    }

    @Test func theAuditFindsAKeyTheSchemaLacksAndAPropertyNeverSent() {
        let index = OpenAPISchemaIndex("""
            components:
              schemas:
                Thing:
                  type: object
                  properties:
                    id:
                      type: integer
                    inner:
                      $ref: '#/components/schemas/Inner'
                    gone:
                      type: string
                Inner:
                  oneOf:
                    - $ref: '#/components/schemas/Leaf'
                    - type: 'null'
                Leaf:
                  type: object
                  properties:
                    a:
                      type: string
            """)
        var audit = SchemaFieldAudit(index)
        audit.check(["id": 1, "inner": ["a": "x", "b": "y"], "extra": true], against: index.schema(named: "Thing")!, at: "$")
        #expect(audit.undocumented.sorted() == ["Leaf.b (at $.inner)", "Thing.extra (at $)"])
        #expect(audit.neverSent == ["Thing": ["gone"]])
    }

    @Test func theReaderKeepsTheDocumentsShape() {
        let yaml = YAMLSubset.parse("""
            a:
              # a comment
              b: 'quoted: value'
              list:
                - $ref: '#/x'
                - type: 'null'
                  c: [1, 2]
              text: |
                line one
                  line two
              flow: {x: 1,
                y: 2}
              '/p/{id}:batch':
                get: {}
            z: last
            """)
        #expect(yaml["a"]?["b"]?.text == "quoted: value")
        #expect(yaml["a"]?["list"]?.items.count == 2)
        #expect(yaml["a"]?["list"]?.items[1]["c"]?.text == "[1, 2]")
        #expect(yaml["a"]?["text"]?.text == "line one\n  line two")
        #expect(yaml["a"]?["/p/{id}:batch"]?["get"]?.text == "{}")
        #expect(yaml["z"]?.text == "last")
    }
}
