import LibCrypto
import Foundation
import Testing
import TestSupport

/// TLS per session against nginx with certificates made for the run: a custom CA bundle, the
/// protocol version bounds, SPKI pinning, and certificate failures mapped to URLSession's codes
/// (serverCertificateUntrusted -1202, secureConnectionFailed -1200).
@Suite struct TLSTests {
    /// `tlsCABundle`: the test CA.
    private static func trustingTestCA(_ extra: [String: Any] = [:]) throws -> [String: Any] {
        var configuration: [String: Any] = ["tlsCABundle": try Peers.tlsCertificateAuthorityPEM()]
        configuration.merge(extra) { _, new in new }
        return configuration
    }

    @Test func aCustomCABundleIsTrustedAndWithoutItTheServerIsNot() async throws {
        let url = try Peers.tls(.valid) + "/files/1MiB.bin"
        try await DaemonFixture.with { daemon in
            let trusting = try await daemon.session(configuration: try Self.trustingTestCA())
            #expect(try await daemon.downloadDigest(url, in: trusting) == (try TestFile.digest("1MiB.bin")))
            // The shared session trusts the system store, which has never heard of the test CA.
            let plain = try await daemon.run("download", url, in: "shared")
            #expect(plain.errorName == "serverCertificateUntrusted")
            #expect(plain.object("error")?.int("code") == -1202)
        }
    }

    @Test func theBundleAloneDecidesWhichCAIsTrusted() async throws {
        let valid = try Peers.tls(.valid) + "/files/hello.txt"
        let other = try Peers.tls(.untrusted) + "/files/hello.txt"
        try await DaemonFixture.with { daemon in
            // With the second CA as its only anchor, the server it signed is trusted and the
            // one the test CA signed is not: the bundle replaces, it does not add.
            let session = try await daemon.session(configuration: ["tlsCABundle": try Peers.tlsOtherCertificateAuthorityPEM()])
            #expect(try await daemon.run("data", other, in: session).errorName == nil)
            #expect(try await daemon.run("data", valid, in: session).errorName == "serverCertificateUntrusted")
        }
    }

    @Test(arguments: [Peers.TLSOrigin.expired, .untrusted])
    func badCertificatesAreUntrusted(origin: Peers.TLSOrigin) async throws {
        let url = try Peers.tls(origin) + "/files/hello.txt"
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: try Self.trustingTestCA())
            for kind in ["data", "download"] {
                let task = try await daemon.run(kind, url, in: session)
                #expect(task.errorName == "serverCertificateUntrusted", "\(origin) \(kind): \(task.object("error") ?? [:])")
            }
        }
    }

    @Test func aMatchingPinSucceedsAndAMismatchFailsEvenOnAWarmConnection() async throws {
        let url = try Peers.tls(.valid) + "/files/hello.txt"
        let wrong = "sha256//" + Data(HashFunction.sha256.hash(Data("not the server's key".utf8))).base64EncodedString()
        try await DaemonFixture.with { daemon in
            // First a session with no pin, leaving a verified connection in curl's cache...
            let unpinned = try await daemon.session(configuration: try Self.trustingTestCA())
            #expect(try await daemon.run("data", url, in: unpinned).errorName == nil)
            // ...which a pinned session must not reuse without checking its pin.
            let mismatched = try await daemon.session(configuration: try Self.trustingTestCA(["tlsPinnedPublicKeys": [wrong]]))
            // Another query, so the answer cannot come from the shared URL cache instead.
            let failed = try await daemon.run("data", url + "?pinned", in: mismatched)
            #expect(failed.errorName == "serverCertificateUntrusted", "\(failed.object("error") ?? [:])")
            let pinned = try await daemon.session(configuration: try Self.trustingTestCA(["tlsPinnedPublicKeys": [wrong, try Peers.tlsValidServerPin()]]))
            #expect(try await daemon.downloadDigest(url, in: pinned) == (try TestFile.digest("hello.txt")))
        }
    }

    /// A cached https response is served only to a session whose trust would have accepted the
    /// connection it came over (issue 16, item 6): not to one with a pin the server fails, nor
    /// to one trusting another CA; a session with the same trust settings is served.
    @Test func aCachedResponseIsServedOnlyWhereItsConnectionWouldBeTrusted() async throws {
        let url = try Peers.tls(.valid) + "/files/hello.txt?trust-partition"
        let wrong = "sha256//" + Data(HashFunction.sha256.hash(Data("not the server's key".utf8))).base64EncodedString()
        try await DaemonFixture.with { daemon in
            // Any stored response answers: freshness does not hide what is served.
            func data(in session: String) async throws -> [String: Any] {
                let created = try await daemon.createTask(in: session, ["kind": "data", "request": ["url": url, "cachePolicy": "returnCacheDataElseLoad"]])
                return try await daemon.waitForCompletion(try #require(created.int("id")))
            }
            let trusting = try await daemon.session(configuration: try Self.trustingTestCA())
            #expect(try await data(in: trusting).string("cacheStatus") == "network")
            // The control: the same session is answered from the cache.
            #expect(try await data(in: trusting).string("cacheStatus") == "cache", "nothing was cached: the test would prove nothing")
            let sameTrust = try await daemon.session(configuration: try Self.trustingTestCA())
            #expect(try await data(in: sameTrust).string("cacheStatus") == "cache")

            let pinnedWrong = try await daemon.session(configuration: try Self.trustingTestCA(["tlsPinnedPublicKeys": [wrong]]))
            let refused = try await data(in: pinnedWrong)
            #expect(refused.errorName == "serverCertificateUntrusted", "a pinned session was served: \(refused)")
            let otherCA = try await daemon.session(configuration: ["tlsCABundle": try Peers.tlsOtherCertificateAuthorityPEM()])
            #expect(try await data(in: otherCA).errorName == "serverCertificateUntrusted")
            // The system store does not know the test CA either.
            #expect(try await data(in: "shared").errorName == "serverCertificateUntrusted")
        }
    }

    /// The version bounds decide the handshake, and each transaction's metrics report what it
    /// negotiated: the version and the cipher suite's IANA number.
    @Test func protocolVersionBoundsDecideTheHandshake() async throws {
        let legacy = try Peers.tls(.tls12Only) + "/files/hello.txt"
        let modern = try Peers.tls(.valid) + "/files/hello.txt"
        try await DaemonFixture.with { daemon in
            let tls13 = try await daemon.session(configuration: try Self.trustingTestCA(["tlsMinimumSupportedProtocolVersion": "TLSv13"]))
            let failed = try await daemon.run("data", legacy, in: tls13)
            #expect(failed.errorName == "secureConnectionFailed", "\(failed.object("error") ?? [:])")
            #expect(failed.object("error")?.int("code") == -1200)
            let modernTask = try await daemon.run("data", modern, in: tls13)
            #expect(modernTask.errorName == nil, "TLS 1.3 only still reaches a TLS 1.3 server")
            let negotiated13 = try await Self.negotiatedTLS(daemon, modernTask)
            #expect(negotiated13.version == "TLSv13")
            // TLS 1.3's suites are 0x1301...0x1305 (RFC 8446 B.4).
            #expect(negotiated13.cipherSuite.map { (0x1301...0x1305).contains($0) } == true, "\(negotiated13)")

            let tls12 = try await daemon.session(configuration: try Self.trustingTestCA(["tlsMaximumSupportedProtocolVersion": "TLSv12"]))
            let legacyTask = try await daemon.run("download", legacy, in: tls12)
            #expect(legacyTask.errorName == nil, "\(legacyTask.object("error") ?? [:])")
            #expect(try sha256(ofFile: try #require(legacyTask.string("location"))) == (try TestFile.digest("hello.txt")))
            let negotiated12 = try await Self.negotiatedTLS(daemon, legacyTask)
            #expect(negotiated12.version == "TLSv12")
            #expect(negotiated12.cipherSuite.map { $0 > 0 && !(0x1301...0x1305).contains($0) } == true, "\(negotiated12)")

            // Plain http negotiates nothing: both are null.
            let plain = try await daemon.run("data", try Peers.nginx() + "/files/hello.txt", in: tls12)
            let transaction = try await Self.lastTransaction(daemon, plain)
            #expect(transaction.isNull("negotiatedTLSProtocolVersion") && transaction.isNull("negotiatedTLSCipherSuite"), "\(transaction)")
        }
    }

    private static func lastTransaction(_ daemon: DaemonFixture, _ task: [String: Any]) async throws -> [String: Any] {
        let transactions = try await daemon.transactions(ofTask: try #require(task.int("id")))
        return try #require(transactions.last, "\(task)")
    }

    private static func negotiatedTLS(_ daemon: DaemonFixture, _ task: [String: Any]) async throws -> (version: String?, cipherSuite: Int?) {
        let transaction = try await lastTransaction(daemon, task)
        return (transaction.string("negotiatedTLSProtocolVersion"), transaction.int("negotiatedTLSCipherSuite"))
    }

    /// An upload over https, to nginx storing PUTs: a 6 MiB blob body arrives byte-identical over
    /// HTTP/1.1 (the valid server) and over h2 (the h2 server), and downloads back the same.
    @Test(arguments: [Peers.TLSOrigin.valid, .http2])
    func anUploadOverTLSIsStoredByteIdentical(_ origin: Peers.TLSOrigin) async throws {
        let payload = Data(count: 6 << 20) { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let name = "upload-\(origin)-\(UUID().uuidString).bin"
        let url = try Peers.tls(origin) + "/uploads/" + name
        let stored = URL(fileURLWithPath: try Peers.tlsUploadsFolder()).appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: stored) }
        try await DaemonFixture.with { daemon in
            let blob = try await daemon.request("POST", "/v1/blobs", body: payload, headers: ["Content-Type": "application/octet-stream"], timeout: 120)
            let blobId = try #require(try blob.object().string("id"), "\(blob)")
            let session = try await daemon.session(configuration: try Self.trustingTestCA())
            let created = try await daemon.createTask(in: session, [
                "kind": "upload", "request": ["url": url, "method": "PUT", "body": ["blob": blobId]],
            ])
            let upload = try await daemon.waitForCompletion(try #require(created.int("id")), timeout: 60)
            #expect(upload.isNull("error"), "\(upload.object("error") ?? [:])")
            #expect(upload.value(at: "response.statusCode") as? Int == 201)
            #expect(upload.value(at: "progress.bytesSent") as? Int == payload.count)
            #expect(try Data(contentsOf: stored) == payload, "the stored file differs from what was sent")
            let transaction = try await Self.lastTransaction(daemon, upload)
            #expect(transaction.string("networkProtocolName") == (origin == .http2 ? "h2" : "http/1.1"), "\(transaction)")
            #expect(transaction.int("countOfRequestBodyBytesSent") == payload.count, "\(transaction)")
            #expect(try await daemon.downloadDigest(url, in: session) == sha256(of: payload))
        }
    }
}
