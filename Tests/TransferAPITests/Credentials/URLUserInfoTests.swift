import Foundation
import Testing
import TestSupport

/// A URL with a user and password (issue 16, item 8): the task is answered without them
/// everywhere (task JSON, events, rows), and they are used as curl uses them: percent-decoded,
/// Basic at once, for this task only (never put in the credential store).
@Suite struct URLUserInfoTests {
    @Test func userinfoIsTakenOutOfTheURLAndStillAuthenticatesThisTaskOnly() async throws {
        let suffix = UUID().uuidString.prefix(8)
        let (user, password) = ("us er-\(suffix)", "p@ss:w%rd-\(suffix)")
        let origin = try BasicProtectedOrigin.start(["/vault": .init(realm: "Vault", user: user, password: password)])
        defer { origin.stop() }
        let encodedUser = "us%20er-\(suffix)", encodedPassword = "p%40ss%3Aw%25rd-\(suffix)"
        let clean = origin.url("/vault?q=1")
        let withUserinfo = clean.replacingOccurrences(of: "http://", with: "http://\(encodedUser):\(encodedPassword)@")
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let created = try await daemon.dataTask(in: sid, ["url": withUserinfo, "mainDocumentURL": withUserinfo])
            let id = try #require(created.int("id"))
            #expect(created.value(at: "originalRequest.url") as? String == clean, "\(created)")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "response.statusCode") as? Int == 200, "\(task)")
            #expect(try await daemon.body(id).text == "hello \(user)")
            #expect(task.value(at: "originalRequest.url") as? String == clean)
            #expect(task.value(at: "currentRequest.url") as? String == clean)
            #expect(task.value(at: "originalRequest.mainDocumentURL") as? String == clean)
            #expect(task.value(at: "response.url") as? String == clean)
            // Sent at once, as curl does: one request, with the decoded pair.
            #expect(origin.requests.count == 1)
            #expect(origin.requests.first?.header("Authorization") == "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())

            // Not kept: the store has nothing, and the same URL without them is refused.
            #expect(try await daemon.credentialUsers(in: sid).isEmpty)
            let bare = try #require(try await daemon.dataTask(in: sid, ["url": clean]).int("id"))
            #expect(try await daemon.waitForCompletion(bare).value(at: "response.statusCode") as? Int == 401)

            // Nowhere in what is served or stored.
            let events = try await daemon.allEvents(sid)
            let served = [String(decoding: try JSONSerialization.data(withJSONObject: task), as: UTF8.self),
                          String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self),
                          try await daemon.get("/v1/tasks/\(id)/metrics").text]
            for text in served {
                #expect(!text.contains(encodedPassword) && !text.contains(encodedUser + ":") && !text.contains("p@ss"), "\(text.prefix(400))")
            }
            daemon.stop()
            #expect(CredentialStorageTests.files(under: daemon.dataPath, containing: "p%40ss").isEmpty)
            #expect(CredentialStorageTests.files(under: daemon.dataPath, containing: "p@ss").isEmpty)
        }
    }

    /// A background task made suspended keeps its URL's login across a restart (sealed in its
    /// row: the database shows no password), and the login goes when the task completes.
    @Test func aBackgroundTaskKeepsItsURLLoginAcrossARestartSealed() async throws {
        let suffix = UUID().uuidString.prefix(8)
        let (user, password) = ("bg-user-\(suffix)", "bg-pass-\(suffix)")
        let origin = try BasicProtectedOrigin.start(["/vault": .init(realm: "Vault", user: user, password: password)])
        defer { origin.stop() }
        let withUserinfo = origin.url("/vault").replacingOccurrences(of: "http://", with: "http://\(user):\(password)@")
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["kind": "background", "identifier": "login-\(suffix)"]).string("id"))
            let created = try await daemon.createTask(in: sid, ["kind": "download", "state": "suspended", "request": ["url": withUserinfo]])
            let id = try #require(created.int("id"))
            daemon.stop()
            #expect(CredentialStorageTests.files(under: daemon.dataPath, containing: password).isEmpty, "the password reached the disk")

            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.post("/v1/tasks/\(id)/resume").status == 200)
            let done = try await second.waitForCompletion(id)
            #expect(done.isNull("error"), "\(done)")
            #expect(try await second.file(id).text == "hello \(user)")
            #expect(origin.requests.last?.header("Authorization") == "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        }
    }

    /// A Location with a user and password is followed, and never shown either.
    @Test func aRedirectsUserinfoIsNotShown() async throws {
        let origin = try OriginServer { request in
            request.pathWithoutQuery == "/go" ? .redirect(to: "http://loc-user:loc-secret@\(request.header("Host") ?? "")/landing") : .text("landed")
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/go")]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(try await daemon.body(id).text == "landed")
            let shown = String(decoding: try JSONSerialization.data(withJSONObject: [task, try await daemon.allEvents(sid)]), as: UTF8.self)
                + (try await daemon.get("/v1/tasks/\(id)/metrics").text)
            #expect(shown.contains("/landing") && !shown.contains("loc-secret"), "\(shown.prefix(600))")
        }
    }
}
