import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// A tour of the API against a real daemon and a local origin (127.0.0.1 only), each JSON
/// answer checked by a `SchemaFieldAudit` against the schema openapi.yaml gives it.
struct APITour {
    let daemon: DaemonFixture
    let origin: OriginServer
    /// A tus server whose first PATCH answers 503, so the upload resumes.
    let tus: TusServer
    var audit: SchemaFieldAudit

    /// The origin's resources: each answer leads the daemon to send more of its fields (a
    /// cookie, a cacheable response, a redirect, a ranged file, a slow body, a challenge).
    static func origin() throws -> OriginServer {
        let file = Data(count: 64 * 1024) { UInt8($0 % 251) }
        return try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/text":
                .text("hello", headers: ["Set-Cookie": "sid=abc; Path=/; Max-Age=600", "Cache-Control": "max-age=600", "ETag": "\"t1\""])
            case "/redirect":
                .redirect(to: "/text")
            case "/redirect-auth":
                .redirect(to: "/auth")
            case "/file":
                .ranged(file, for: request, headers: ["ETag": "\"f1\"", "Content-Disposition": "attachment; filename=\"f.bin\""])
            case "/slow":
                .slowBody(headers: ["ETag": "\"s1\""], body: file, bytesPerWrite: 512, interval: .milliseconds(200))
            case "/unavailable":
                .respond(status: 503)
            case "/auth":
                request.header("Authorization") == nil
                    ? .respond(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"r\""])
                    : .text("welcome")
            default:
                .respond(status: 200)
            }
        }
    }

    static func run(index: OpenAPISchemaIndex) async throws -> SchemaFieldAudit {
        let origin = try origin()
        defer { origin.stop() }
        let tus = try TusServer { head in head.method == "PATCH" && head.index == 1 ? .status(503) : .none }
        defer { tus.stop() }
        let uploads = try TempDirectory(prefix: "transferd-tour-uploads")
        defer { uploads.remove() }
        try Data("a file to upload".utf8).write(to: uploads.file("report.txt"))
        return try await DaemonFixture.with(configure: { $0.service.uploadsDirectory = uploads.path }) { daemon in
            var tour = APITour(daemon: daemon, origin: origin, tus: tus, audit: SchemaFieldAudit(index))
            try await tour.visit()
            return tour.audit
        }
    }

    /// Sends a request, requires `status`, and audits a JSON answer against the schema of
    /// `template` (the path as openapi.yaml writes it).
    @discardableResult
    mutating func call(
        _ method: String, _ template: String, _ path: String? = nil, json: Any? = nil, body: Data? = nil,
        status: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        let response = try await daemon.request(method, path ?? template, json: json, body: body, timeout: 40)
        try #require(response.status == status, "\(method) \(path ?? template): \(response)", sourceLocation: sourceLocation)
        guard response.header("Content-Type")?.hasPrefix("application/json") == true else { return [:] }
        guard let schema = audit.index.responseSchema(method, template, status: status) else {
            Issue.record("openapi.yaml gives \(method) \(template) no JSON answer \(status)", sourceLocation: sourceLocation)
            return [:]
        }
        let value = try JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed])
        audit.check(value, against: schema, at: "\(method) \(template) \(status)")
        return value as? [String: Any] ?? [:]
    }

    /// Creates a task and long-polls its progress (each answer audited) until `until` holds.
    mutating func task(in session: String, _ spec: [String: Any], until: String = "completed") async throws -> Int {
        let id = try #require(try await call("POST", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(session)/tasks", json: spec, status: 201).int("id"))
        try await follow(id, until: until)
        return id
    }

    /// Long-polls a task's progress until its state is `state`, or its phase is, for a phase.
    mutating func follow(_ id: Int, until state: String) async throws {
        var after = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let snapshot = try await call("GET", "/v1/tasks/{tid}/progress", "/v1/tasks/\(id)/progress?after=\(after)&wait=5", status: 200)
            if snapshot.string("state") == state || snapshot.string("phase") == state { return }
            after = snapshot.int("version") ?? after
        }
        Issue.record("task \(id) did not reach \(state) in 20 s: \(try await daemon.task(id))")
    }

    /// A redirect, a challenge (the session's stored credential proposed) and a response,
    /// each decided live (issue 21), with an answer of the wrong kind, one for a decision no
    /// longer pending, and the body's bytes in the events.
    mutating func visitDecisions(session sid: String) async throws {
        let id = try #require(try await call("POST", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(sid)/tasks", json: [
            "kind": "data", "decisions": ["redirect", "challenge", "response"], "dataInEvents": true,
            "request": ["url": origin.url("/redirect-auth"), "cachePolicy": "reloadIgnoringLocalCacheData"],
        ], status: 201).int("id"))
        var answered: String?
        for (kind, answer) in [("redirect", "follow"), ("challenge", "performDefaultHandling"), ("response", "allow")] {
            let deadline = ContinuousClock.now + .seconds(20)
            var pending: [String: Any]?
            while pending == nil, ContinuousClock.now < deadline {
                let task = try await call("GET", "/v1/tasks/{tid}", "/v1/tasks/\(id)", status: 200)
                if let decision = task["decision"] as? [String: Any], decision.string("kind") == kind { pending = decision } else { try await Task.sleep(for: .milliseconds(50)) }
            }
            let decision = try #require(pending?.string("id"), "no \(kind) decision for task \(id)")
            let path = "/v1/tasks/\(id)/decisions/\(decision)"
            if kind == "redirect" {
                try await call("POST", "/v1/tasks/{tid}/decisions/{did}", path, json: ["answer": "allow"], status: 422)
            }
            try await call("POST", "/v1/tasks/{tid}/decisions/{did}", path, json: ["answer": answer], status: 200)
            answered = decision
        }
        try await follow(id, until: "completed")
        try await call("POST", "/v1/tasks/{tid}/decisions/{did}", "/v1/tasks/\(id)/decisions/\(answered ?? "0")", json: ["answer": "allow"], status: 409)
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(sid)/events?after=0&task=\(id)", status: 200)

        // willCacheResponse decided: a cacheable answer, not stored.
        let cached = try #require(try await call("POST", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(sid)/tasks", json: [
            "kind": "data", "decisions": ["cache"], "request": ["url": origin.url("/text?decided")],
        ], status: 201).int("id"))
        let deadline = ContinuousClock.now + .seconds(20)
        var decision: String?
        while decision == nil, ContinuousClock.now < deadline {
            let task = try await call("GET", "/v1/tasks/{tid}", "/v1/tasks/\(cached)", status: 200)
            decision = (task["decision"] as? [String: Any])?.string("id")
            if decision == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let cacheDecision = try #require(decision, "no cache decision for task \(cached)")
        try await call("POST", "/v1/tasks/{tid}/decisions/{did}", "/v1/tasks/\(cached)/decisions/\(cacheDecision)", json: ["answer": "doNotStore"], status: 200)
        try await follow(cached, until: "completed")
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(sid)/events?after=0&task=\(cached)", status: 200)
    }

    mutating func visit() async throws {
        try await call("GET", "/healthz", status: 200)
        try await call("GET", "/readyz", status: 200)

        // Sessions: one with a webhook and a configuration, a background one, an ephemeral one.
        let session = try await call("POST", "/v1/sessions", json: [
            "description": "contract", "kind": "default",
            "configuration": ["timeoutIntervalForRequest": 30, "httpAdditionalHeaders": ["X-Tour": "1"]],
            "webhook": ["url": origin.url("/hook"), "secret": "a secret of 16 bytes or more", "mode": "digest"],
        ], status: 201)
        let sid = try #require(session.string("id"))
        let background = try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": "tour"])
        let attachment = try #require(background.header("Transferd-Attachment"), "\(background)")
        let bsid = try #require(try background.object().string("id"))
        // Attached by an events poll, a second client is refused with URLSession's error code.
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(bsid)/events?after=0&attachment=\(attachment)", status: 200)
        try await call("POST", "/v1/sessions", json: ["kind": "background", "identifier": "tour"], status: 409)
        try await call("POST", "/v1/sessions", json: ["kind": "default", "bogus": 1], status: 400)
        try await visitRarerPaths(session: sid, background: bsid, attachment: attachment)
        let ephemeral = try #require(try await call("POST", "/v1/sessions", json: ["kind": "ephemeral"], status: 201).string("id"))
        try await call("GET", "/v1/sessions", status: 200)

        // Credentials, then tasks: a challenge, a cacheable response with a cookie (twice: from
        // the cache the second time), a redirect, a download, an upload, a data: URL, a batch.
        try await call("PUT", "/v1/sessions/{sid}/credentials", "/v1/sessions/\(sid)/credentials", json: [
            "protectionSpace": ["host": "127.0.0.1", "port": origin.port, "protocol": "http", "realm": "r", "authenticationMethod": "default"],
            "user": "u", "password": "p", "persistence": "forSession",
        ], status: 200)
        try await call("GET", "/v1/sessions/{sid}/credentials", "/v1/sessions/\(sid)/credentials", status: 200)
        _ = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/auth")]])
        let cached = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/text")]])
        _ = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/text")]])
        _ = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/redirect"), "cachePolicy": "reloadIgnoringLocalCacheData"]])
        let download = try await task(in: sid, [
            "kind": "download", "destination": "tour/f.bin", "conflict": "rename", "priority": 0.6,
            "request": ["url": origin.url("/file"), "networkServiceType": "responsiveData"],
            "bandwidthLimit": ["downloadBytesPerSecond": 1_000_000],
        ])
        try await call("GET", "/v1/tasks/{tid}", "/v1/tasks/\(download)", status: 200)
        // The same destination again, under the default policy: the task fails with a reason.
        _ = try await task(in: sid, ["kind": "download", "destination": "tour/f.bin", "request": ["url": origin.url("/file")]])
        try await call("GET", "/v1/tasks/{tid}/metrics", "/v1/tasks/\(download)/metrics", status: 200)
        try await call("GET", "/v1/tasks/{tid}/metrics", "/v1/tasks/\(cached)/metrics", status: 200)
        try await visitDecisions(session: sid)
        let blob = try #require(try await call("POST", "/v1/blobs", body: Data("blob body".utf8), status: 201).string("id"))
        try await call("GET", "/v1/blobs/{id}", "/v1/blobs/\(blob)", status: 200)
        _ = try await task(in: sid, ["kind": "upload", "request": ["url": origin.url("/sink"), "method": "PUT", "body": ["blob": blob]]])
        _ = try await task(in: ephemeral, ["kind": "data", "request": ["url": "data:text/plain;base64,aGVsbG8="],
                                           "responseDisposition": ["default": "allow", "rules": [["when": ["minLength": 1_000_000, "mimeType": "video/*", "statusCodes": [200]], "then": "becomeDownload"]]]])
        try await call("POST", "/v1/sessions/{sid}/tasks:batch", "/v1/sessions/\(sid)/tasks:batch", json: [
            "tasks": [["kind": "data", "state": "suspended", "request": ["url": origin.url("/text")]]],
        ], status: 201)

        // A slow download: queued behind the session's cap, patched, suspended, resumed,
        // cancelled with resume data, and continued from it.
        let capped = try #require(try await call("POST", "/v1/sessions", json: ["configuration": ["maximumConcurrentTasks": 1]], status: 201).string("id"))
        let slow = try await task(in: capped, ["kind": "download", "request": ["url": origin.url("/slow")]], until: "transferring")
        let waiting = try #require(try await call("POST", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(capped)/tasks", json: [
            "kind": "data", "request": ["url": origin.url("/text")],
        ], status: 201).int("id"))
        try await call("GET", "/v1/queue", status: 200)
        try await call("GET", "/v1/stats", status: 200)
        try await call("GET", "/v1/cluster", status: 200)
        try await call("PATCH", "/v1/tasks/{tid}", "/v1/tasks/\(waiting)", json: ["priority": "high"], status: 200)
        try await call("POST", "/v1/tasks/{tid}/suspend", "/v1/tasks/\(slow)/suspend", status: 200)
        try await call("POST", "/v1/tasks/{tid}/resume", "/v1/tasks/\(slow)/resume", status: 200)
        try await follow(slow, until: "transferring")
        let cancelled = try await call("POST", "/v1/tasks/{tid}/cancel", "/v1/tasks/\(slow)/cancel", json: ["produceResumeData": true], status: 200)
        let resumeData = try #require((cancelled["error"] as? [String: Any])?.string("resumeData"), "no resume data: \(cancelled)")
        let continued = try await task(in: capped, ["kind": "download", "resumeData": resumeData], until: "transferring")
        try await call("POST", "/v1/tasks/{tid}/cancel", "/v1/tasks/\(continued)/cancel", status: 200)
        try await follow(waiting, until: "completed")

        // A stream task: an HTTP request written by hand to the origin, its answer read.
        let stream = try await task(in: sid, ["kind": "stream", "host": "127.0.0.1", "port": origin.port], until: "transferring")
        try await call("POST", "/v1/tasks/{tid}/write", "/v1/tasks/\(stream)/write", body: Data("GET /text HTTP/1.0\r\n\r\n".utf8), status: 200)
        try await call("POST", "/v1/tasks/{tid}/close-write", "/v1/tasks/\(stream)/close-write", status: 204)
        _ = try await daemon.request("GET", "/v1/tasks/\(stream)/read?min=1000000&max=65536&wait=3")
        try await call("POST", "/v1/tasks/{tid}/cancel", "/v1/tasks/\(stream)/cancel", status: 200)
        try await follow(stream, until: "completed")

        // Lists, feeds, cookies, limits, quota.
        try await call("GET", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(sid)/tasks", status: 200)
        try await call("GET", "/v1/tasks", "/v1/tasks?after=0", status: 200)
        let events = try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(sid)/events?after=0&limit=1000", status: 200)
        try await call("POST", "/v1/sessions/{sid}/events/ack", "/v1/sessions/\(sid)/events/ack", json: ["through": events.int("next") ?? 1], status: 200)
        try await call("PUT", "/v1/sessions/{sid}/cookies", "/v1/sessions/\(sid)/cookies", json: [
            "cookies": [["name": "c", "value": "v", "domain": "127.0.0.1", "path": "/", "expiresDate": "2030-01-01T00:00:00Z",
                         "isSecure": false, "isHTTPOnly": true, "sameSitePolicy": "lax"]],
        ], status: 200)
        try await call("GET", "/v1/sessions/{sid}/cookies", "/v1/sessions/\(sid)/cookies", status: 200)
        try await call("DELETE", "/v1/sessions/{sid}/cookies", "/v1/sessions/\(sid)/cookies", status: 200)
        try await call("DELETE", "/v1/sessions/{sid}/credentials", "/v1/sessions/\(sid)/credentials", status: 200)
        try await call("GET", "/v1/limits", status: 200)
        try await call("PATCH", "/v1/limits", json: ["background": ["downloadBytesPerSecond": 1_000_000]], status: 200)
        try await call("GET", "/v1/quota", status: 200)
        try await call("POST", "/v1/sessions/{sid}/flush", "/v1/sessions/\(sid)/flush", status: 200)
        try await call("POST", "/v1/sessions/{sid}/reset", "/v1/sessions/\(sid)/reset", status: 200)
        try await call("GET", "/v1/sessions/{sid}", "/v1/sessions/\(sid)", status: 200)
        try await call("GET", "/v1/tasks/{tid}", "/v1/tasks/999999", status: 404)
        try await call("POST", "/v1/sessions/{sid}/invalidate", "/v1/sessions/\(capped)/invalidate", json: ["cancelTasks": true], status: 200)
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(capped)/events?after=0&limit=1000&wait=5", status: 200)
    }
}
