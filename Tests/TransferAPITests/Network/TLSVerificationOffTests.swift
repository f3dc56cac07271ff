import LibCrypto
import Foundation
import Logging
import Testing
import TestSupport

/// `tlsVerifiesServerCertificate: false`, curl's `-k` for one session (issue 20, `transferctl
/// -k`), against the TLS nginx whose certificates nothing on this machine trusts: the untrusted
/// server (a CA nobody trusts), the expired one, and the valid one, whose test CA the system
/// store has never heard of. A default session fails on each with serverCertificateUntrusted
/// (-1202); a session with verification off gets the bytes, and nothing it did reaches a
/// verifying session (connections, TLS sessions, the URL cache). Pins are still checked.
@Suite struct TLSVerificationOffTests {
    static var insecure: [String: Any] { ["tlsVerifiesServerCertificate": false] }
    static let warning = "TLS certificate verification is off (tlsVerifiesServerCertificate false)"

    @Test(arguments: [Peers.TLSOrigin.untrusted, .expired, .valid])
    func anUntrustedServerFailsByDefaultAndDownloadsByteIdenticalWithVerificationOff(origin: Peers.TLSOrigin) async throws {
        let url = try Peers.tls(origin) + "/files/1MiB.bin"
        let captured = CapturedLines()
        try await DaemonFixture.with(logger: captured.logger(level: .warning)) { daemon in
            let verifying = try await daemon.session(configuration: [:])
            let refused = try await daemon.run("download", url, in: verifying)
            #expect(refused.errorName == "serverCertificateUntrusted", "\(origin): \(refused.object("error") ?? [:])")
            #expect(refused.object("error")?.int("code") == -1202)

            let insecure = try await daemon.session(configuration: Self.insecure)
            #expect(try await daemon.downloadDigest(url, in: insecure) == (try TestFile.digest("1MiB.bin")))
            // A data task too, and its body is the file's.
            let data = try await daemon.run("data", url + "?data", in: insecure)
            #expect(data.isNull("error"), "\(data.object("error") ?? [:])")
            let body = try await daemon.body(try #require(data.int("id")))
            #expect(sha256(of: body.body) == (try TestFile.digest("1MiB.bin")))

            // What the insecure session did leaves nothing a verifying session could reuse:
            // a new verifying session, and the first one again, still refuse the server.
            let later = try await daemon.session(configuration: [:])
            for session in [later, verifying, "shared"] {
                let again = try await daemon.run("download", url, in: session)
                #expect(again.errorName == "serverCertificateUntrusted", "\(origin) in \(session) after the insecure download: \(again.object("error") ?? [:])")
            }

            // One warning, for the insecure session's creation, naming it.
            let warnings = captured.all.map(CapturedLines.fields).filter { $0["msg"]?.hasSuffix(Self.warning) == true }
            #expect(warnings.map { $0["msg"] } == ["session \(insecure): \(Self.warning)"], "\(captured.all)")
            #expect(warnings.first?["level"] == "warning")
        }
    }

    @Test func theServedSessionShowsThePropertyAndEachTaskItsSession() async throws {
        try await DaemonFixture.with { daemon in
            let created = try await daemon.createSession(["configuration": Self.insecure])
            let id = try #require(created.string("id"))
            #expect(created.object("configuration")?.bool("tlsVerifiesServerCertificate") == false)
            #expect(try await daemon.session(id).object("configuration")?.bool("tlsVerifiesServerCertificate") == false)
            let listed = try await daemon.get("/v1/sessions").object()["items"] as? [[String: Any]] ?? []
            #expect(listed.first { $0.string("id") == id }?.object("configuration")?.bool("tlsVerifiesServerCertificate") == false, "\(listed)")
            // Left out it is true, and so is true given.
            let plain = try await daemon.createSession()
            #expect(plain.object("configuration")?.bool("tlsVerifiesServerCertificate") == true)
            let explicit = try await daemon.createSession(["configuration": ["tlsVerifiesServerCertificate": true]])
            #expect(explicit.object("configuration")?.bool("tlsVerifiesServerCertificate") == true)
            // A task of the session names it; the session says what it trusts.
            let task = try await daemon.createTask(in: id, ["kind": "data", "request": ["url": try Peers.tls(.untrusted) + "/files/hello.txt"]])
            #expect(task.string("sessionId") == id, "\(task)")
        }
    }

    @Test func aValueThatIsNotABooleanIsRefusedAndCreatesNothing() async throws {
        try await DaemonFixture.with { daemon in
            let before = try await daemon.get("/v1/sessions").object()["items"] as? [Any] ?? []
            for value: Any in ["false", 0, NSNull()] {
                let response = try await daemon.post("/v1/sessions", json: ["configuration": ["tlsVerifiesServerCertificate": value]])
                #expect((400...422).contains(response.status), "\(value): \(response)")
                #expect(response.error?.string("field") == "configuration.tlsVerifiesServerCertificate", "\(value): \(response)")
            }
            let after = try await daemon.get("/v1/sessions").object()["items"] as? [Any] ?? []
            #expect(after.count == before.count)
        }
    }

    /// Pins are checked with verification off (libcurl: CURLOPT_PINNEDPUBLICKEY is independent
    /// of CURLOPT_SSL_VERIFYPEER), so the combination is allowed and means "this key, whatever
    /// its certificate": a wrong pin still fails, the right one succeeds though the system store
    /// does not trust the server's CA.
    @Test func pinsAreStillCheckedWithVerificationOff() async throws {
        let url = try Peers.tls(.valid) + "/files/hello.txt"
        let wrong = "sha256//" + Data(HashFunction.sha256.hash(Data("not the server's key".utf8))).base64EncodedString()
        try await DaemonFixture.with { daemon in
            // First a connection with verification off and no pin, for the pinned ones to skip.
            let insecure = try await daemon.session(configuration: Self.insecure)
            #expect(try await daemon.downloadDigest(url, in: insecure) == (try TestFile.digest("hello.txt")))
            let mismatched = try await daemon.session(configuration: ["tlsVerifiesServerCertificate": false, "tlsPinnedPublicKeys": [wrong]])
            let failed = try await daemon.run("download", url, in: mismatched)
            #expect(failed.errorName == "serverCertificateUntrusted", "a wrong pin was not checked: \(failed.object("error") ?? [:])")
            // The pin failed it (curl's 90), not a verification that should have been off.
            #expect(failed.object("error")?.string("message")?.contains("pinned public key") == true, "\(failed.object("error") ?? [:])")
            let pinned = try await daemon.session(configuration: ["tlsVerifiesServerCertificate": false, "tlsPinnedPublicKeys": [try Peers.tlsValidServerPin()]])
            #expect(try await daemon.downloadDigest(url, in: pinned) == (try TestFile.digest("hello.txt")))
            #expect(try await daemon.session(pinned).object("configuration")?["tlsPinnedPublicKeys"] as? [String] == [try Peers.tlsValidServerPin()])
        }
    }

    /// A response a session fetched without verifying is never served from the URL cache to a
    /// session that verifies (`CachePartition`'s trust digest).
    @Test func aResponseFetchedUnverifiedIsNotServedToAVerifyingSession() async throws {
        let url = try Peers.tls(.untrusted) + "/files/hello.txt?unverified-partition"
        try await DaemonFixture.with { daemon in
            func data(in session: String) async throws -> [String: Any] {
                let created = try await daemon.createTask(in: session, ["kind": "data", "request": ["url": url, "cachePolicy": "returnCacheDataElseLoad"]])
                return try await daemon.waitForCompletion(try #require(created.int("id")))
            }
            let insecure = try await daemon.session(configuration: Self.insecure)
            #expect(try await data(in: insecure).string("cacheStatus") == "network")
            #expect(try await data(in: insecure).string("cacheStatus") == "cache", "nothing was cached: the test would prove nothing")
            let sameTrust = try await daemon.session(configuration: Self.insecure)
            #expect(try await data(in: sameTrust).string("cacheStatus") == "cache")
            let verifying = try await daemon.session(configuration: [:])
            let refused = try await data(in: verifying)
            #expect(refused.errorName == "serverCertificateUntrusted", "a verifying session was served an unverified response: \(refused)")
            #expect(try await data(in: "shared").errorName == "serverCertificateUntrusted")
        }
    }

    /// A stream task with TLS from the start takes the session's setting too.
    @Test func aTLSStreamConnectsToAnUntrustedServerOnlyWithVerificationOff() async throws {
        let base = try #require(URLComponents(string: try Peers.tls(.untrusted)))
        let host = try #require(base.host), port = try #require(base.port)
        try await DaemonFixture.with { daemon in
            let verifying = try await daemon.session(configuration: [:])
            let refused = try await daemon.createTask(in: verifying, ["kind": "stream", "host": host, "port": port, "tls": true])
            let failed = try await daemon.waitForCompletion(try #require(refused.int("id")))
            #expect(failed.errorName == "serverCertificateUntrusted", "\(failed.object("error") ?? [:])")

            let insecure = try await daemon.session(configuration: Self.insecure)
            let stream = try #require(try await daemon.createTask(in: insecure, ["kind": "stream", "host": host, "port": port, "tls": true]).int("id"))
            let written = try await daemon.request("POST", "/v1/tasks/\(stream)/write?timeout=10",
                                                   body: Data("GET /files/hello.txt HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8),
                                                   headers: ["Content-Type": "application/octet-stream"])
            #expect(written.status == 200, "\(written)")
            var answer = Data()
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let read = try await daemon.request("GET", "/v1/tasks/\(stream)/read?min=1&max=65536&wait=5")
                try #require(read.status == 200, "\(read)")
                answer.append(read.body)
                if read.header("X-Stream-End") == "true" { break }
            }
            #expect(String(decoding: answer.prefix(17), as: UTF8.self) == "HTTP/1.1 200 OK\r\n", "\(String(decoding: answer.prefix(200), as: UTF8.self))")
            #expect(answer.range(of: try Data(contentsOf: Peers.nginxDocumentRoot().appendingPathComponent("hello.txt"))) != nil)
        }
    }

    /// FTPS (implicit, and explicit with AUTH TLS) takes the session's setting as https does:
    /// the system store does not know the FTPS test CA.
    @Test(arguments: [Peers.FileServer.ftps, .ftpsExplicit])
    func anFTPSDownloadSucceedsOnlyWithVerificationOff(_ server: Peers.FileServer) async throws {
        let url = try Peers.fileServer(server) + "/1MiB.bin"
        let port = try #require(URL(string: url)?.port)
        let expected = try Data(contentsOf: Peers.fileServerRoot().appendingPathComponent("1MiB.bin"))
        try await DaemonFixture.with { daemon in
            func session(verifying: Bool) async throws -> String {
                let sid = try await daemon.session(configuration: ["tlsVerifiesServerCertificate": verifying, "ftpRequiresTLS": server == .ftpsExplicit])
                let login = try Peers.fileServerLogin()
                let stored = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: [
                    "protectionSpace": ["host": "127.0.0.1", "port": port, "protocol": server.spaceProtocol] as [String: Any],
                    "user": login.user, "password": login.password, "persistence": "forSession",
                ])
                try #require(stored.status == 200, "put credential: \(stored)")
                return sid
            }
            let refused = try await daemon.run("download", url, in: try await session(verifying: true))
            #expect(refused.value(at: "error.code") as? Int == -1202, "\(server): \(refused.object("error") ?? [:])")
            let task = try await daemon.run("download", url, in: try await session(verifying: false))
            #expect(task.isNull("error"), "\(server): \(task.object("error") ?? [:])")
            let file = try await daemon.get("/v1/tasks/\(try #require(task.int("id")))/file")
            #expect(file.status == 200 && file.body == expected, "\(server): \(file.body.count) bytes")
        }
    }

    /// The setting is kept with the session: after a restart it is served and still applied.
    @Test func theSettingSurvivesARestart() async throws {
        let url = try Peers.tls(.untrusted) + "/files/1MiB.bin"
        try await DaemonFixture.with { first in
            let insecure = try await first.session(configuration: Self.insecure)
            let verifying = try await first.session(configuration: [:])
            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            #expect(try await second.session(insecure).object("configuration")?.bool("tlsVerifiesServerCertificate") == false)
            #expect(try await second.session(verifying).object("configuration")?.bool("tlsVerifiesServerCertificate") == true)
            #expect(try await second.downloadDigest(url, in: insecure) == (try TestFile.digest("1MiB.bin")))
            #expect(try await second.run("download", url, in: verifying).errorName == "serverCertificateUntrusted")
        }
    }
}
