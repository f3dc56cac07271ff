import LibCrypto
import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Checksums (issue 15): a download or data task names the digest its bytes must have
/// (`"checksum": "sha-256=<hex>"`, aria2's spelling), a server's Repr-Digest / Content-Digest /
/// Digest header is checked the same way, a mismatch fails the task with badServerResponse and
/// leaves no file anywhere, and every completed task reports `"digest": {"sha-256": ...}`.
@Suite struct ChecksumTests {
    static let size = 256 * 1024
    static let body = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
    static let etag = "\"sums-v1\""

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static let sha256 = hex(HashFunction.sha256.hash(body))
    static let sha512 = hex(HashFunction.sha512.hash(body))
    static let wrong = String(repeating: "ab", count: 32)

    /// The hex digest of `body` under aria2's algorithm name.
    static func digest(_ algorithm: String, of data: Data = body) -> String {
        switch algorithm {
        case "md5": hex(HashFunction.md5.hash(data))
        case "sha-1": hex(HashFunction.sha1.hash(data))
        case "sha-384": hex(HashFunction.sha384.hash(data))
        case "sha-512": hex(HashFunction.sha512.hash(data))
        default: hex(HashFunction.sha256.hash(data))
        }
    }

    /// RFC 9530's `:BASE64:` of a hex digest.
    static func byteSequence(_ hex: String) -> String {
        Data(bytes(hex: hex)).base64EncodedString()
    }

    private func partialFiles(_ daemon: DaemonFixture) -> [String] { FileSystemProbe.tree(daemon.dataPath + "/partial") }

    private func download(_ daemon: DaemonFixture, _ url: String, checksum: String?, destination: String = "sums/file.bin") async throws -> [String: Any] {
        var extra: [String: Any] = [:]
        if let checksum { extra["checksum"] = checksum }
        let created = try await daemon.downloadTask(["url": url], destination: destination, extra: extra)
        return try await daemon.waitForCompletion(try #require(created.int("id")))
    }

    // MARK: the task's checksum

    @Test func aMatchingSHA256CompletesAndReportsTheDigest() async throws {
        let origin = try OriginServer { _ in .respond(headers: ["Content-Type": "application/octet-stream"], body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            // Upper-case hex is accepted and kept in lower case.
            let task = try await download(daemon, origin.url("/a.bin"), checksum: "SHA-256=" + Self.sha256.uppercased())
            #expect(task.isNull("error"), "\(task)")
            #expect(task.string("checksum") == "sha-256=" + Self.sha256)
            #expect(task.object("digest")?.string("sha-256") == Self.sha256, "\(task)")
            #expect(task.object("digest")?.count == 1)
            let location = try #require(task.string("location"))
            #expect(location == daemon.downloadsRoot + "/sums/file.bin")
            #expect(try await sha256sum(location) == Self.sha256)
            #expect(partialFiles(daemon).isEmpty)
        }
    }

    /// Without a checksum a download still reports its SHA-256.
    @Test func everyCompletedDownloadReportsItsSHA256() async throws {
        let origin = try OriginServer { _ in .respond(body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await download(daemon, origin.url("/a.bin"), checksum: nil)
            #expect(task.isNull("error"), "\(task)")
            #expect(task.isNull("checksum"))
            #expect(task.object("digest")?.string("sha-256") == Self.sha256, "\(task)")
            // The list and the progress endpoints serve the same task JSON writer.
            let list = try await daemon.get("/v1/sessions/shared/tasks").object()
            let listed = (list["items"] as? [[String: Any]])?.first { $0.int("id") == task.int("id") }
            #expect(listed?.object("digest")?.string("sha-256") == Self.sha256)
        }
    }

    @Test func aMismatchFailsWithNoFileAnywhere() async throws {
        let origin = try OriginServer { _ in .respond(body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await download(daemon, origin.url("/a.bin"), checksum: "sha-256=" + Self.wrong)
            let error = try #require(task.object("error"), "\(task)")
            #expect(error.int("code") == -1011)
            #expect(error.string("name") == "badServerResponse")
            let message = error.string("message") ?? ""
            #expect(message.contains("checksum mismatch: expected sha-256=\(Self.wrong)"), "\(message)")
            #expect(message.contains("got sha-256=\(Self.sha256)"), "\(message)")
            #expect(error["resumeData"] == nil || error.isNull("resumeData"))
            #expect(task.isNull("location"))
            #expect(task.isNull("digest"))
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/sums/file.bin"))
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).filter { $0.hasSuffix(".bin") }.isEmpty)
            #expect(partialFiles(daemon).isEmpty, "\(partialFiles(daemon))")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty)
        }
    }

    @Test(arguments: ["md5", "sha-1", "sha-384", "sha-512"])
    func otherAlgorithmsAreAcceptedAndReportedBesideSHA256(_ algorithm: String) async throws {
        let origin = try OriginServer { _ in .respond(body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let good = try await download(daemon, origin.url("/a.bin"), checksum: "\(algorithm)=\(Self.digest(algorithm))", destination: "good.bin")
            #expect(good.isNull("error"), "\(good)")
            #expect(good.object("digest")?.string(algorithm) == Self.digest(algorithm), "\(good)")
            #expect(good.object("digest")?.string("sha-256") == Self.sha256)

            let wrongHex = String(repeating: "0", count: Self.digest(algorithm).count)
            let bad = try await download(daemon, origin.url("/a.bin"), checksum: "\(algorithm)=\(wrongHex)", destination: "bad.bin")
            #expect(bad.object("error")?.int("code") == -1011, "\(bad)")
            #expect(bad.object("error")?.string("message")?.contains("got \(algorithm)=\(Self.digest(algorithm))") == true, "\(bad)")
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/bad.bin"))
        }
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let json: String
        let status: Int
        let code: String
        var testDescription: String { json }
    }

    static let badInputs: [BadInput] = [
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": "sha-256=abc"}"#, status: 422, code: "invalid_value"),
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": "sha-256=\#(String(repeating: "g", count: 64))"}"#, status: 422, code: "invalid_value"),
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": "sha-224=\#(String(repeating: "a", count: 56))"}"#, status: 422, code: "invalid_value"),
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": "sha256"}"#, status: 422, code: "invalid_value"),
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": "md5=\#(String(repeating: "a", count: 64))"}"#, status: 422, code: "invalid_value"),
        BadInput(json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "checksum": 42}"#, status: 400, code: "invalid_type"),
        BadInput(json: #"{"kind": "upload", "request": {"url": "http://127.0.0.1:9/", "method": "PUT", "body": {"text": "x"}}, "checksum": "md5=\#(String(repeating: "a", count: 32))"}"#, status: 422, code: "invalid_value"),
    ]

    @Test(arguments: badInputs)
    func badChecksumInputIsRefusedWithItsField(_ input: BadInput) async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.request("POST", "/v1/sessions/shared/tasks", body: Data(input.json.utf8), headers: ["Content-Type": "application/json"])
            #expect(response.status == input.status, "\(response)")
            #expect(response.errorCode == input.code, "\(response)")
            #expect(response.error?.string("field") == "checksum", "\(response)")
            // The batch form names the item.
            let batch = try await daemon.request("POST", "/v1/sessions/shared/tasks:batch", body: Data(#"{"tasks": [\#(input.json)]}"#.utf8), headers: ["Content-Type": "application/json"])
            #expect(batch.error?.string("field") == "tasks[0].checksum", "\(batch)")
        }
    }

    // MARK: resume

    /// First request: the first 96 KiB of the body with an ETag, then nothing until the client
    /// closes, so a cancel after 64 KiB always lands mid-body however loaded the machine (a
    /// trickled body raced it and lost under CI's load); ranged ones get 206 (with `extra` headers).
    private static func stallingRangedOrigin(extra: @escaping @Sendable (OriginRequest) -> [String: String] = { _ in [:] }) throws -> OriginServer {
        try OriginServer { request in
            if request.header("Range") == nil {
                return .stallAfterHeaders(headers: ["ETag": etag], contentLength: size, bodyPrefix: body.prefix(96 * 1024))
            }
            return .ranged(body, for: request, headers: ["ETag": etag].merging(extra(request)) { $1 })
        }
    }

    /// Cancels a running download with resume data once `bytes` arrived.
    private func cancelForResume(_ daemon: DaemonFixture, _ id: Int, after bytes: Int) async throws -> String {
        try await daemon.waitForTask(id) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= bytes }
        let task = try await daemon.post("/v1/tasks/\(id)/cancel", json: ["produceResumeData": true]).object()
        return try #require(task.object("error")?.string("resumeData"), "\(task)")
    }

    private func resumeOffset(_ daemon: DaemonFixture, task id: Int) async throws -> Int? {
        try await daemon.allEvents("shared").first { $0.int("taskId") == id && $0.string("type") == "didResumeAtOffset" }?.int("fileOffset")
    }

    /// The resumed task hashes the kept prefix (read back once) and the rest: its digest is the
    /// whole file's. The checksum travels in the resume data.
    @Test func aDownloadResumedFromResumeDataVerifiesTheWholeFile() async throws {
        let origin = try Self.stallingRangedOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let created = try await daemon.downloadTask(["url": origin.url("/r.bin")], extra: ["checksum": "sha-512=" + Self.sha512])
            let resumeData = try await cancelForResume(daemon, try #require(created.int("id")), after: 64 * 1024)
            let resumed = try await daemon.createTask(["kind": "download", "resumeData": resumeData])
            let id = try #require(resumed.int("id"))
            #expect(resumed.string("checksum") == "sha-512=" + Self.sha512, "the checksum did not travel in the resume data: \(resumed)")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task)")
            let offset = try #require(try await resumeOffset(daemon, task: id))
            #expect(offset >= 64 * 1024 && offset < Self.size)
            #expect(task.object("digest")?.string("sha-256") == Self.sha256, "\(task)")
            #expect(task.object("digest")?.string("sha-512") == Self.sha512, "\(task)")
            #expect(try await sha256sum(try #require(task.string("location"))) == Self.sha256)
            #expect(partialFiles(daemon).isEmpty)
        }
    }

    /// A checksum given with the resume data replaces the one inside; a wrong one fails the
    /// resumed task and deletes the partial file it took over.
    @Test func aResumedDownloadWithAWrongChecksumFailsAndKeepsNothing() async throws {
        let origin = try Self.stallingRangedOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let created = try await daemon.downloadTask(["url": origin.url("/r.bin")], destination: "r.bin", extra: ["checksum": "sha-256=" + Self.sha256])
            let resumeData = try await cancelForResume(daemon, try #require(created.int("id")), after: 64 * 1024)
            let resumed = try await daemon.createTask(["kind": "download", "resumeData": resumeData, "checksum": "sha-256=" + Self.wrong])
            let task = try await daemon.waitForCompletion(try #require(resumed.int("id")))
            #expect(task.object("error")?.int("code") == -1011, "\(task)")
            #expect(task.object("error")?.string("message")?.contains("got sha-256=\(Self.sha256)") == true, "\(task)")
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/r.bin"))
            #expect(partialFiles(daemon).isEmpty, "\(partialFiles(daemon))")
        }
    }

    /// A 206's Content-Digest describes only the part sent: it is not checked against the file.
    /// Its Repr-Digest describes the whole: a wrong one fails the task.
    @Test(arguments: [false, true])
    func aResumedDownloadChecksOnlyTheRangesReprDigest(wrongReprDigest: Bool) async throws {
        let origin = try Self.stallingRangedOrigin { request in
            let offset = Int(request.header("Range")?.dropFirst("bytes=".count).split(separator: "-").first ?? "0") ?? 0
            let part = Self.body.subdata(in: offset..<Self.size)
            return [
                "Content-Digest": "sha-256=:\(Self.byteSequence(Self.digest("sha-256", of: part))):",
                "Repr-Digest": "sha-256=:\(Self.byteSequence(wrongReprDigest ? Self.wrong : Self.sha256)):",
            ]
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let created = try await daemon.downloadTask(["url": origin.url("/r.bin")])
            let resumeData = try await cancelForResume(daemon, try #require(created.int("id")), after: 64 * 1024)
            let resumed = try await daemon.createTask(["kind": "download", "resumeData": resumeData])
            let task = try await daemon.waitForCompletion(try #require(resumed.int("id")))
            if wrongReprDigest {
                #expect(task.object("error")?.int("code") == -1011, "\(task)")
                #expect(task.object("error")?.string("message")?.contains("the server's Repr-Digest") == true, "\(task)")
            } else {
                #expect(task.isNull("error"), "\(task)")
                #expect(task.object("digest")?.string("sha-256") == Self.sha256)
            }
        }
    }

    // MARK: the server's digest headers

    struct ServerDigestCase: Sendable, CustomTestStringConvertible {
        let headers: [String: String]
        /// The header named in the error, nil when the download must succeed.
        let failsWith: String?
        var testDescription: String { "\(headers) → \(failsWith ?? "ok")" }
    }

    static let serverDigestCases: [ServerDigestCase] = [
        ServerDigestCase(headers: ["Repr-Digest": "sha-256=:\(byteSequence(sha256)):"], failsWith: nil),
        ServerDigestCase(headers: ["Repr-Digest": "sha-256=:\(byteSequence(wrong)):"], failsWith: "Repr-Digest"),
        ServerDigestCase(headers: ["Content-Digest": "sha-512=:\(byteSequence(sha512)):"], failsWith: nil),
        ServerDigestCase(headers: ["Content-Digest": "sha-256=:\(byteSequence(wrong)):"], failsWith: "Content-Digest"),
        ServerDigestCase(headers: ["Digest": "SHA-256=\(byteSequence(sha256))"], failsWith: nil),
        ServerDigestCase(headers: ["Digest": "SHA-256=\(byteSequence(wrong))"], failsWith: "Digest"),
        // The strongest algorithm is the one checked.
        ServerDigestCase(headers: ["Repr-Digest": "sha-256=:\(byteSequence(wrong)):, sha-512=:\(byteSequence(sha512)):"], failsWith: nil),
        ServerDigestCase(headers: ["Repr-Digest": "sha-256=:\(byteSequence(sha256)):, sha-512=:\(byteSequence(String(repeating: "cd", count: 64))):"], failsWith: "Repr-Digest"),
        // Unknown algorithms and malformed values are ignored.
        ServerDigestCase(headers: ["Repr-Digest": "sha-999=:AAAA:, unixsum=:AAAA:", "Digest": "UNIXsum=30637"], failsWith: nil),
        ServerDigestCase(headers: ["Content-Digest": "sha-256=:AAAA:"], failsWith: nil),
    ]

    @Test(arguments: serverDigestCases)
    func aServerDigestIsChecked(_ testCase: ServerDigestCase) async throws {
        let origin = try OriginServer { _ in .respond(headers: testCase.headers, body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await download(daemon, origin.url("/s.bin"), checksum: nil)
            if let header = testCase.failsWith {
                let error = try #require(task.object("error"), "\(task)")
                #expect(error.int("code") == -1011)
                #expect(error.string("message")?.contains("(the server's \(header))") == true, "\(error)")
                #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/sums/file.bin"))
                #expect(partialFiles(daemon).isEmpty)
            } else {
                #expect(task.isNull("error"), "\(task)")
                #expect(task.object("digest")?.string("sha-256") == Self.sha256)
            }
        }
    }

    /// A gzip answer's digest headers describe the gzip bytes (RFC 9530 3.1), while the task gets
    /// them decoded: they are not checked, and the reported digest is the decoded body's.
    @Test func aContentCodedResponsesDigestIsNotCheckedAgainstTheDecodedBytes() async throws {
        // gzip.compress(b"hello checksum\n" * 50, mtime=0), and its SHA-256.
        let gzip = try #require(Data(base64Encoded: "H4sIAAAAAAACA8tIzcnJV0jOSE3OLi7N5coY5Y5yhy8XAIGPq4TuAgAA"))
        let gzipSHA256 = "33552adfe29636385d3447a204cd4ffb3d30622063b16ecc1297666aba96843c"
        let decoded = Data(String(repeating: "hello checksum\n", count: 50).utf8)
        #expect(Self.digest("sha-256", of: gzip) == gzipSHA256)
        let origin = try OriginServer { _ in
            .respond(headers: ["Content-Encoding": "gzip", "Repr-Digest": "sha-256=:\(Self.byteSequence(gzipSHA256)):",
                               "Content-Digest": "sha-256=:\(Self.byteSequence(gzipSHA256)):"], body: gzip)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await download(daemon, origin.url("/z.txt"), checksum: nil)
            #expect(task.isNull("error"), "\(task)")
            #expect(task.object("digest")?.string("sha-256") == Self.digest("sha-256", of: decoded), "\(task)")
        }
    }

    // MARK: data tasks

    @Test func aDataTaskChecksItsBodyAndReportsItsDigest() async throws {
        let origin = try OriginServer { request in
            request.path.hasSuffix("/lying") ? .respond(headers: ["Content-Digest": "sha-256=:\(Self.byteSequence(Self.wrong)):"], body: Self.body) : .respond(body: Self.body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let plain = try await daemon.createTask(["kind": "data", "request": ["url": origin.url("/d")]])
            let done = try await daemon.waitForCompletion(try #require(plain.int("id")))
            #expect(done.isNull("error"), "\(done)")
            #expect(done.object("digest")?.string("sha-256") == Self.sha256, "\(done)")

            let good = try await daemon.createTask(["kind": "data", "request": ["url": origin.url("/d")], "checksum": "md5=" + Self.digest("md5")])
            let goodDone = try await daemon.waitForCompletion(try #require(good.int("id")))
            #expect(goodDone.isNull("error"), "\(goodDone)")
            #expect(goodDone.object("digest")?.string("md5") == Self.digest("md5"))
            #expect(try await daemon.body(try #require(good.int("id"))).body == Self.body)

            let bad = try await daemon.createTask(["kind": "data", "request": ["url": origin.url("/d")], "checksum": "sha-256=" + Self.wrong])
            let badDone = try await daemon.waitForCompletion(try #require(bad.int("id")))
            #expect(badDone.object("error")?.int("code") == -1011, "\(badDone)")
            #expect(badDone.object("error")?.string("message")?.contains("checksum mismatch: expected sha-256=\(Self.wrong)") == true)
            #expect(badDone.isNull("digest"))

            let lying = try await daemon.createTask(["kind": "data", "request": ["url": origin.url("/lying")]])
            let lyingDone = try await daemon.waitForCompletion(try #require(lying.int("id")))
            #expect(lyingDone.object("error")?.string("message")?.contains("the server's Content-Digest") == true, "\(lyingDone)")
        }
    }

    /// A file: URL (copied on a worker thread, `LocalDelivery`) is checked the same way, as a
    /// download and as a data task; so is a data task its disposition turned into a download.
    @Test func fileURLsAndDataTasksThatBecomeDownloadsAreCheckedToo() async throws {
        let root = try TempDirectory(prefix: "transferd-checksum-file")
        defer { root.remove() }
        try Self.body.write(to: root.file("local.bin"))
        let url = "file://" + root.file("local.bin").path
        let origin = try OriginServer { _ in .respond(headers: ["Content-Type": "video/mp4"], body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.fileURLRoots = [root.path] }) { daemon in
            for (kind, checksum) in [("download", Self.sha256), ("download", Self.wrong), ("data", Self.sha256), ("data", Self.wrong)] {
                let created = try await daemon.createTask(["kind": kind, "request": ["url": url], "checksum": "sha-256=" + checksum])
                let task = try await daemon.waitForCompletion(try #require(created.int("id")))
                if checksum == Self.sha256 {
                    #expect(task.isNull("error"), "\(kind): \(task)")
                    #expect(task.object("digest")?.string("sha-256") == Self.sha256, "\(kind): \(task)")
                } else {
                    #expect(task.object("error")?.int("code") == -1011, "\(kind): \(task)")
                    #expect(task.isNull("location"))
                }
            }
            let disposition: [String: Any] = ["default": "allow", "rules": [["when": ["mimeType": "video/*"], "then": "becomeDownload"]]]
            for checksum in [Self.sha256, Self.wrong] {
                let created = try await daemon.createTask(["kind": "data", "request": ["url": origin.url("/v.mp4")], "responseDisposition": disposition, "checksum": "sha-256=" + checksum])
                let task = try await daemon.waitForCompletion(try #require(created.int("id")))
                #expect(task.string("kind") == "download", "\(task)")
                if checksum == Self.sha256 {
                    #expect(task.isNull("error"), "\(task)")
                    #expect(task.object("digest")?.string("sha-256") == Self.sha256)
                } else {
                    #expect(task.object("error")?.int("code") == -1011, "\(task)")
                    #expect(task.isNull("location"))
                }
            }
            #expect(partialFiles(daemon).isEmpty, "\(partialFiles(daemon))")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").filter { $0.hasSuffix(".bin") || $0.hasSuffix(".mp4") }.count == 2,
                    "only the two good downloads have files: \(FileSystemProbe.tree(daemon.dataPath + "/files"))")
        }
    }

    // MARK: persistence

    /// The checksum is in the task record: a task created suspended, checked after a restart.
    @Test(arguments: [false, true])
    func theChecksumSurvivesARestart(wrong: Bool) async throws {
        let origin = try OriginServer { _ in .respond(body: Self.body) }
        defer { origin.stop() }
        try await DaemonFixture.with { first in
            let sid = try #require(try await first.createSession().string("id"))
            let checksum = "sha-256=" + (wrong ? Self.wrong : Self.sha256)
            let created = try await first.downloadTask(in: sid, ["url": origin.url("/p.bin")], destination: "p.bin", extra: ["checksum": checksum, "state": "suspended"])
            let id = try #require(created.int("id"))
            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            #expect(try await second.task(id).string("checksum") == checksum)
            #expect(try await second.post("/v1/tasks/\(id)/resume").status == 200)
            let task = try await second.waitForCompletion(id)
            if wrong {
                #expect(task.object("error")?.int("code") == -1011, "\(task)")
                #expect(!FileManager.default.fileExists(atPath: second.downloadsRoot + "/p.bin"))
            } else {
                #expect(task.isNull("error"), "\(task)")
                #expect(task.object("digest")?.string("sha-256") == Self.sha256)
            }
            // The digest is stored too.
            second.stop()
            let third = try second.restarted()
            defer { third.stop() }
            let reloaded = try await third.task(id)
            #expect(jsonEqual(reloaded["digest"], task["digest"]), "\(reloaded)")
            #expect(reloaded.string("checksum") == checksum)
        }
    }
}
