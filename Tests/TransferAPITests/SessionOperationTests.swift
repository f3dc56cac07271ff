import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// URLSession's reset and flush: the session's later requests go out on new connections (the
/// origin counts them), other sessions keep theirs, and the routes check what they are given.
@Suite struct SessionOperationTests {
    /// Runs one GET in `session` and returns the connection index the origin saw it on.
    private func connection(of path: String, in session: String, _ daemon: DaemonFixture, _ origin: OriginServer) async throws -> Int {
        let id = try #require(try await daemon.dataTask(in: session, ["url": origin.url(path)]).int("id"))
        #expect(try await daemon.waitForCompletion(id).isNull("error"))
        let request = try #require(origin.requests.last { $0.path == path }, "the origin never saw \(path)")
        return request.connectionIndex
    }

    @Test(arguments: ["reset", "flush"])
    func laterRequestsUseNewConnections(operation: String) async throws {
        let origin = try OriginServer { request in .text("ok \(request.path)") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let other = try #require(try await daemon.createSession().string("id"))
            // The control: without a reset, a session's requests reuse its connection.
            let a = try await connection(of: "/a", in: sid, daemon, origin)
            let b = try await connection(of: "/b", in: sid, daemon, origin)
            #expect(a == b, "requests of one session did not reuse a connection: the test would prove nothing")
            let o = try await connection(of: "/o", in: other, daemon, origin)
            #expect(o != a, "two sessions shared a connection")

            let answer = try await daemon.post("/v1/sessions/\(sid)/\(operation)")
            #expect(answer.status == 200, "\(answer)")
            #expect(try answer.object().string("id") == sid)

            // After it: a connection the origin had not seen, and then that one is reused.
            let c = try await connection(of: "/c", in: sid, daemon, origin)
            #expect(c > o, "the request after \(operation) reused connection \(c)")
            let d = try await connection(of: "/d", in: sid, daemon, origin)
            #expect(d == c, "the session's new pool is not reused")
            // Another session is not affected: it still reuses its connection from before.
            let e = try await connection(of: "/e", in: other, daemon, origin)
            #expect(e == o, "another session lost its connection")
            #expect(origin.connectionCount == 3)
        }
    }

    @Test func operationsAreRefusedWhereTheyCannotApply() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            for operation in ["reset", "flush"] {
                #expect(try await daemon.post("/v1/sessions/nope/\(operation)").status == 404)
                for field in ["everything", "none"] {
                    let unknown = try await daemon.post("/v1/sessions/\(sid)/\(operation)", json: [field: true])
                    #expect(unknown.status == 400)
                    #expect(unknown.errorCode == "unknown_field" && unknown.error?.string("field") == field)
                }
                #expect(try await daemon.post("/v1/sessions/\(sid)/\(operation)", json: [:]).status == 200)
                #expect(try await daemon.get("/v1/sessions/\(sid)/\(operation)").status == 405)
                // The shared session may be reset (URLSession.shared.reset): it empties the shared stores.
                #expect(try await daemon.post("/v1/sessions/shared/\(operation)").status == 200)
            }
            #expect(try await daemon.post("/v1/sessions/\(sid)/invalidate").status == 200)
            for operation in ["reset", "flush"] {
                let refused = try await daemon.post("/v1/sessions/\(sid)/\(operation)")
                #expect(refused.status == 409)
                #expect(refused.errorCode == "session_invalidated")
            }
        }
    }

    /// A session's configuration is its own copy: GET shows every property with its default, and
    /// a reattach with another configuration changes nothing.
    @Test func theEffectiveConfigurationIsShownAndNeverChanges() async throws {
        try await DaemonFixture.with { daemon in
            let created = try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": "com.example.copy", "configuration": ["timeoutIntervalForRequest": 7]])
            let sid = try #require(try created.object().string("id"))
            var expected = SessionTests.configurationDefaults(for: "background")
            expected["timeoutIntervalForRequest"] = 7
            #expect(jsonEqual(try await daemon.session(sid).object("configuration"), expected))
            _ = try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": "com.example.copy", "configuration": ["timeoutIntervalForRequest": 9, "waitsForConnectivity": true]])
            #expect(try await daemon.post("/v1/sessions/\(sid)/reset").status == 200)
            #expect(jsonEqual(try await daemon.session(sid).object("configuration"), expected))
        }
    }
}
