import Foundation
import Testing
import TestSupport

/// Where credentials live: permanent ones survive a restart (sealed, in 0600 files), forSession
/// ones do not, and nothing of an ephemeral session's credentials reaches the disk.
@Suite struct CredentialStorageTests {
    /// Files under `folder` that contain `text`'s bytes.
    static func files(under folder: String, containing text: String) -> [String] {
        let needle = Data(text.utf8)
        return FileSystemProbe.tree(folder).filter { path in
            (try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)))?.range(of: needle) != nil
        }
    }

    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test func permanentCredentialsSurviveARestartSealedAndSessionOnesDoNot() async throws {
        let suffix = UUID().uuidString.prefix(8)
        let (permanentUser, permanentPassword) = ("perm-user-\(suffix)", "perm-pass-\(suffix)")
        let (sessionUser, sessionPassword) = ("sess-user-\(suffix)", "sess-pass-\(suffix)")
        let origin = try BasicProtectedOrigin.start(["/vault": .init(realm: "Vault", user: permanentUser, password: permanentPassword)])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let first = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: first, port: origin.port, realm: "Vault", user: permanentUser, password: permanentPassword, persistence: "permanent")
            try await daemon.putCredential(in: first, port: origin.port, realm: "Vault", user: sessionUser, password: sessionPassword, persistence: "forSession")
            // The session's own credential is tried first and fails; the permanent one follows.
            let id = try #require(try await daemon.dataTask(in: first, ["url": origin.url("/vault")]).int("id"))
            #expect(try await daemon.waitForCompletion(id).value(at: "response.statusCode") as? Int == 200)
            let challenges = try await daemon.events(of: id, in: first).filter { $0.string("type") == "didReceiveChallenge" }
            #expect(challenges.compactMap { $0.value(at: "proposedCredential.user") as? String } == [sessionUser, permanentUser])
            #expect(challenges.compactMap { $0.int("previousFailureCount") } == [0, 1])
            let other = try #require(try await daemon.createSession(["kind": "background", "identifier": "creds-\(suffix)"]).string("id"))
            #expect(try await daemon.credentialUsers(in: other) == [permanentUser], "the shared store is not shared")
            daemon.stop()

            let data = daemon.dataPath
            #expect(!Self.files(under: data, containing: permanentUser).filter { $0.hasPrefix("transferd.sqlite3") }.isEmpty,
                    "the control (the permanent credential's user) was not found: the scan proves nothing")
            // (User names are not secret: the feed records the proposed user, and the database keeps the feed.)
            for secret in [permanentPassword, sessionPassword] {
                #expect(Self.files(under: data, containing: secret).isEmpty, "\(secret) reached the disk")
            }
            for name in ["credentials.key", "transferd.sqlite3", "transferd.sqlite3-wal", "transferd.sqlite3-shm"] where FileManager.default.fileExists(atPath: data + "/" + name) {
                #expect(Self.mode(data + "/" + name) == 0o600, "\(name)")
            }
            #expect(FileManager.default.fileExists(atPath: data + "/credentials.key"))

            let second = try daemon.restarted()
            defer { second.stop() }
            let fresh = try #require(try await second.createSession().string("id"))
            #expect(try await second.credentialUsers(in: fresh) == [permanentUser])
            #expect(try await second.credentialUsers(in: first) == [permanentUser], "the forSession credential outlived the daemon")
            let again = try #require(try await second.dataTask(in: fresh, ["url": origin.url("/vault")]).int("id"))
            #expect(try await second.waitForCompletion(again).value(at: "response.statusCode") as? Int == 200)
        }
    }

    @Test func anEphemeralSessionsCredentialsNeverReachTheDisk() async throws {
        let suffix = UUID().uuidString.prefix(8)
        let (user, password) = ("eph-user-\(suffix)", "eph-pass-\(suffix)")
        let control = "control-user-\(suffix)"
        let origin = try BasicProtectedOrigin.start(["/private": .init(realm: "Eph", user: user, password: password)])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let recorded = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: ephemeral, port: origin.port, realm: "Eph", user: user, password: password, persistence: "permanent")
            try await daemon.putCredential(in: recorded, port: origin.port, realm: "Other", user: control, password: "x", persistence: "permanent")
            #expect(try await daemon.credentialUsers(in: ephemeral) == [user], "an ephemeral session sees only its own")
            #expect(try await daemon.credentialUsers(in: recorded) == [control])
            let id = try #require(try await daemon.dataTask(in: ephemeral, ["url": origin.url("/private")]).int("id"))
            #expect(try await daemon.waitForCompletion(id).value(at: "response.statusCode") as? Int == 200)
            #expect(try await daemon.body(id).text == "hello \(user)")
            // The same request from the default session has no credential for that realm.
            let denied = try #require(try await daemon.dataTask(in: recorded, ["url": origin.url("/private")]).int("id"))
            #expect(try await daemon.waitForCompletion(denied).value(at: "response.statusCode") as? Int == 401)
            daemon.stop()

            #expect(!Self.files(under: daemon.dataPath, containing: control).isEmpty, "the control was not found: the scan proves nothing")
            for secret in [user, password] {
                #expect(Self.files(under: daemon.dataPath, containing: secret).isEmpty, "\(secret) reached the disk")
            }
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.get("/v1/sessions/\(ephemeral)/credentials").status == 404)
        }
    }

    @Test func aCredentialOfPersistenceNoneAnswersOneChallengeOnly() async throws {
        let origin = try BasicProtectedOrigin.start(["/once": .init(realm: "R", user: "u", password: "p")])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: sid, port: origin.port, realm: "R", user: "u", password: "p", persistence: "none")
            #expect(try await daemon.credentialUsers(in: sid) == ["u"])
            let first = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/once")]).int("id"))
            #expect(try await daemon.waitForCompletion(first).value(at: "response.statusCode") as? Int == 200)
            #expect(try await daemon.credentialUsers(in: sid).isEmpty)
            let second = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/once")]).int("id"))
            #expect(try await daemon.waitForCompletion(second).value(at: "response.statusCode") as? Int == 401)
        }
    }
}
