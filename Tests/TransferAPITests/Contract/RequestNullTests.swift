import Foundation
import Testing

/// Regressions found by the schemathesis contract run (Tests/System/test_contract.py): an
/// optional field sent as `null` where openapi.yaml has no `null` is refused, not taken as
/// "left out" (negative_data_rejection), and a too-long interval says what the limit is.
@Suite struct RequestNullTests {
    @Test func aNullWebhookModeIsRefusedAndNoSessionIsCreated() async throws {
        try await DaemonFixture.with { daemon in
            let before = try await daemon.get("/v1/sessions").object()["items"] as? [Any]
            let response = try await daemon.post("/v1/sessions", json: [
                "webhook": ["url": "http://127.0.0.1:9/hook", "secret": String(repeating: "s", count: 16), "mode": NSNull()] as [String: Any],
            ])
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == "invalid_type")
            #expect(response.error?.string("field") == "webhook.mode")
            let after = try await daemon.get("/v1/sessions").object()["items"] as? [Any]
            #expect(after != nil && after?.count == before?.count)
        }
    }

    @Test func aNullCredentialPersistenceIsRefusedAndNothingIsStored() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let response = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: [
                "protectionSpace": ["host": "example.org", "protocol": "https"], "user": "u", "password": "p", "persistence": NSNull(),
            ] as [String: Any])
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == "invalid_type")
            #expect(response.error?.string("field") == "persistence")
            let items = try await daemon.get("/v1/sessions/\(sid)/credentials").object()["items"] as? [Any]
            #expect(items?.count == 0)
        }
    }

    /// One optional, non-nullable field of each request body that decodes its own fields.
    @Test(arguments: [
        ("/v1/sessions", #"{"configuration": {"allowsCellularAccess": null}}"#, "configuration.allowsCellularAccess"),
        ("/v1/sessions", #"{"configuration": {"httpMaximumConnectionsPerHost": null}}"#, "configuration.httpMaximumConnectionsPerHost"),
        ("/v1/sessions", #"{"configuration": {"urlCache": {"diskCapacity": null}}}"#, "configuration.urlCache.diskCapacity"),
        ("/v1/sessions", #"{"kind": null}"#, "kind"),
        ("/v1/sessions/shared/tasks", #"{"kind": "data", "request": {"url": "http://127.0.0.1:9/", "method": null}}"#, "request.method"),
        ("/v1/sessions/shared/tasks", #"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "state": null}"#, "state"),
        ("/v1/sessions/shared/tasks", #"{"kind": "data", "request": null}"#, "request"),
    ])
    func aNullForAFieldWithoutNullIsInvalidType(path: String, body: String, field: String) async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.request("POST", path, body: Data(body.utf8), headers: ["Content-Type": "application/json"])
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == "invalid_type", "\(response)")
            #expect(response.error?.string("field") == field, "\(response)")
        }
    }

    @Test func anIntervalOverTenYearsNamesTheLimit() async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.post("/v1/sessions", json: ["configuration": ["timeoutIntervalForRequest": 6.9e16]])
            #expect(response.status == 422, "\(response)")
            #expect(response.error?.string("field") == "configuration.timeoutIntervalForRequest")
            #expect(response.error?.string("message")?.contains("at most 315360000") == true, "\(response)")
        }
    }
}
