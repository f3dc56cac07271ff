import Foundation
import Testing
import TestSupport

/// Basic and Digest against httpbin with stored credentials: data and download tasks succeed,
/// fail cleanly without a credential (data: the 401 response; download: userAuthenticationRequired)
/// and after one try with a wrong password; didReceiveChallenge comes before the response.
@Suite struct HTTPAuthenticationTests {
    /// httpbin's address and port.
    static func httpbin() throws -> (base: String, port: Int) {
        let base = try Peers.httpbin()
        return (base, try #require(URL(string: base)?.port))
    }

    @Test(arguments: [
        ("basic-auth", "HTTPBasic", "Fake Realm" as String?),
        ("digest-auth/auth", "HTTPDigest", nil),
    ] as [(String, String, String?)])
    func storedCredentialsAnswerTheChallengeForDataAndDownloadTasks(path: String, method: String, realm: String?) async throws {
        let (httpbin, port) = try Self.httpbin()
        let user = "user-\(UUID().uuidString.prefix(8))", password = "pw-\(UUID().uuidString.prefix(8))"
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            // Digest: stored for any realm, bound to the method; Basic: the realm httpbin names, any method.
            try await daemon.putCredential(in: sid, port: port, realm: realm, method: realm == nil ? method : "default",
                                           user: user, password: password, persistence: "forSession")
            let url = "\(httpbin)/\(path)/\(user)/\(password)"
            let data = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            let download = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": url]]).int("id"))
            for id in [data, download] {
                let task = try await daemon.waitForCompletion(id)
                #expect(task.isNull("error"), "\(path) task \(id): \(task)")
                #expect(task.value(at: "response.statusCode") as? Int == 200)
            }
            let echo = try await daemon.body(data).object()
            #expect(echo.bool("authenticated") == true && echo.string("user") == user, "\(echo)")
            let file = try #require(try await daemon.task(download).string("location"))
            #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self).contains("\"authenticated\": true"))

            // The feed: one challenge, answered with the stored user, before the one response (200).
            for id in [data, download] {
                let events = try await daemon.events(of: id, in: sid)
                let types = events.compactMap { $0.string("type") }
                let challenges = events.filter { $0.string("type") == "didReceiveChallenge" }
                #expect(challenges.count == 1, "\(types)")
                #expect(types.firstIndex(of: "didReceiveChallenge")! < types.firstIndex(of: "didReceiveResponse")!, "\(types)")
                #expect(types.filter { $0 == "didReceiveResponse" }.count == 1, "\(types)")
                let challenge = try #require(challenges.first)
                #expect(challenge.value(at: "protectionSpace.host") as? String == "127.0.0.1")
                #expect(challenge.value(at: "protectionSpace.port") as? Int == port)
                #expect(challenge.value(at: "protectionSpace.protocol") as? String == "http")
                #expect(challenge.value(at: "protectionSpace.authenticationMethod") as? String == method)
                if let realm { #expect(challenge.value(at: "protectionSpace.realm") as? String == realm) }
                #expect(challenge.int("previousFailureCount") == 0)
                #expect(challenge.value(at: "proposedCredential.user") as? String == user)
                #expect(challenge.value(at: "proposedCredential.password") == nil)
            }
        }
    }

    @Test(arguments: ["basic-auth", "digest-auth/auth"])
    func withoutACredentialADataTaskGetsThe401AndADownloadFails(path: String) async throws {
        let (httpbin, _) = try Self.httpbin()
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let url = "\(httpbin)/\(path)/u/p"
            let data = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            let download = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": url]]).int("id"))
            let dataTask = try await daemon.waitForCompletion(data)
            #expect(dataTask.isNull("error"), "\(dataTask)")
            #expect(dataTask.value(at: "response.statusCode") as? Int == 401)
            let downloadTask = try await daemon.waitForCompletion(download)
            #expect(downloadTask.value(at: "error.code") as? Int == -1013, "\(downloadTask)")
            #expect(downloadTask.value(at: "error.name") as? String == "userAuthenticationRequired")
            let challenge = try #require(try await daemon.events(of: data, in: sid).first { $0.string("type") == "didReceiveChallenge" })
            #expect(challenge["proposedCredential"] is NSNull)
            #expect(challenge.int("previousFailureCount") == 0)
        }
    }

    @Test(arguments: ["basic-auth", "digest-auth/auth"])
    func aWrongPasswordIsTriedOnceThenThe401Stands(path: String) async throws {
        let (httpbin, port) = try Self.httpbin()
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: sid, port: port, realm: nil, user: "u", password: "wrong", persistence: "permanent")
            let data = try #require(try await daemon.dataTask(in: sid, ["url": "\(httpbin)/\(path)/u/right"]).int("id"))
            let download = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": "\(httpbin)/\(path)/u/right"]]).int("id"))
            let dataTask = try await daemon.waitForCompletion(data)
            #expect(dataTask.value(at: "response.statusCode") as? Int == 401, "\(dataTask)")
            #expect(try await daemon.waitForCompletion(download).value(at: "error.code") as? Int == -1013)
            let challenges = try await daemon.events(of: data, in: sid).filter { $0.string("type") == "didReceiveChallenge" }
            #expect(challenges.compactMap { $0.int("previousFailureCount") } == [0, 1])
            #expect(challenges.first?.value(at: "proposedCredential.user") as? String == "u")
            #expect(challenges.last?["proposedCredential"] is NSNull)
        }
    }
}
