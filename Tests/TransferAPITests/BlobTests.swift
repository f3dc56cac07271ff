import LibCrypto
import Foundation
import HTTPServer
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// /v1/blobs end to end: bodies streamed to disk with their SHA-256, limits, owners, deletion,
/// restarts, and memory that stays flat for a 1 GiB upload.
@Suite struct BlobTests {
    static let alpha = "token-alpha-0123456789"
    static let beta = "token-beta-9876543210"

    static func hex(_ digest: [UInt8]) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    static func blobFolder(_ daemon: DaemonFixture) -> String { daemon.directory.path + "/blobs" }

    /// The names in the daemon's blob folder (temporary files included).
    static func files(_ daemon: DaemonFixture) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: blobFolder(daemon))) ?? []).sorted()
    }

    /// POSTs `body` as a blob and checks the 201 answer against the body's own digest.
    @discardableResult
    static func upload(
        _ body: Data, to daemon: DaemonFixture, contentType: String? = "application/octet-stream",
        token: String?? = .none, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        var headers: [String: String] = [:]
        if let contentType { headers["Content-Type"] = contentType }
        let response = try await daemon.request("POST", "/v1/blobs", body: body, headers: headers, token: token, timeout: 120)
        try #require(response.status == 201, "upload: \(response)", sourceLocation: sourceLocation)
        let blob = try response.object()
        let id = try #require(blob.string("id"), sourceLocation: sourceLocation)
        #expect(Blob.isWellFormedID(id), sourceLocation: sourceLocation)
        #expect(blob.int("size") == body.count, sourceLocation: sourceLocation)
        #expect(blob.string("sha256") == hex(HashFunction.sha256.hash(body)), sourceLocation: sourceLocation)
        #expect(parseTimestamp(blob["createdAt"]) != nil, sourceLocation: sourceLocation)
        #expect(Set(blob.keys) == ["id", "size", "sha256", "createdAt"], sourceLocation: sourceLocation)
        #expect(response.header("Location") == "/v1/blobs/\(id)", sourceLocation: sourceLocation)
        return blob
    }

    @Test(arguments: [0, 1, 100_000, 64 << 20])
    func roundTrip(size: Int) async throws {
        try await DaemonFixture.with { daemon in
            // Made inside the gate, so it never counts against the 1 GiB test's memory.
            let body = try randomBytes(size)
            // Any Content-Type, or none; the API's 16 MiB request limit does not apply.
            let blob = try await Self.upload(body, to: daemon, contentType: size == 1 ? nil : "image/x-test")
            let id = try #require(blob.string("id"))
            let fetched = try await daemon.get("/v1/blobs/\(id)")
            #expect(fetched.status == 200)
            #expect(jsonEqual(try fetched.object(), blob))
            let stored = try Data(contentsOf: URL(fileURLWithPath: Self.blobFolder(daemon) + "/" + id))
            #expect(stored == body)
            #expect(Self.files(daemon) == [id])
        }
    }

    @Test func contentLengthOverTheLimitIs413AtOnceAndLeavesNothing() async throws {
        try await DaemonFixture.with(configure: { $0.maxBlobSize = 1 << 20 }) { daemon in
            let response = try await onThread { [port = daemon.port] in
                // Only the head: the answer must not wait for the 2 MiB.
                try StreamingRequest(port: port, path: "/v1/blobs", contentLength: 2 << 20, timeout: 10).readResponse()
            }
            #expect(response.status == 413)
            #expect(try response.jsonObject().value(at: "error.code") as? String == "payload_too_large")
            #expect(response.text.contains("\(1 << 20)"))
            #expect(Self.files(daemon).isEmpty)
            // Exactly at the limit is accepted.
            try await Self.upload(Data(repeating: 7, count: 1 << 20), to: daemon)
        }
    }

    @Test func chunkedBodyOverTheLimitIs413AndItsPartialFileIsRemoved() async throws {
        try await DaemonFixture.with(configure: { $0.maxBlobSize = 1 << 20 }) { daemon in
            let folder = Self.blobFolder(daemon)
            let files: @Sendable () -> [String] = { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }
            let (response, seenPartial, goneBeforeEnd) = try await onThread { [port = daemon.port] in
                let upload = try StreamingRequest(port: port, path: "/v1/blobs", contentLength: nil)
                let piece = [UInt8](repeating: 3, count: 256 << 10)
                for _ in 0..<3 { try upload.write(piece) }
                let seenPartial = waitUntil { files().contains { $0.hasPrefix(".upload-") } }
                // Over the limit: the partial file goes at once, before the client ends the body.
                for _ in 0..<3 { try upload.write(piece) }
                let goneBeforeEnd = waitUntil { files().isEmpty }
                return (try upload.finish(), seenPartial, goneBeforeEnd)
            }
            #expect(seenPartial)
            #expect(goneBeforeEnd)
            #expect(response.status == 413)
            #expect(try response.jsonObject().value(at: "error.code") as? String == "payload_too_large")
            #expect(Self.files(daemon).isEmpty)
        }
    }

    @Test func anInterruptedUploadLeavesNoFileAndNoBlob() async throws {
        try await DaemonFixture.with { daemon in
            let folder = Self.blobFolder(daemon)
            let files: @Sendable () -> [String] = { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }
            let (seenPartial, cleaned) = try await onThread { [port = daemon.port] in
                let upload = try StreamingRequest(port: port, path: "/v1/blobs", contentLength: 10 << 20)
                try upload.write([UInt8](repeating: 1, count: 1 << 20))
                let seenPartial = waitUntil { files().contains { $0.hasPrefix(".upload-") } }
                upload.close()
                return (seenPartial, waitUntil { files().isEmpty })
            }
            #expect(seenPartial)
            #expect(cleaned)
            // The daemon still serves blobs.
            try await Self.upload(Data("after".utf8), to: daemon)
        }
    }

    @Test func anotherTokensBlobIsNotFound() async throws {
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            let id = try #require(try await Self.upload(Data("mine".utf8), to: daemon).string("id"))
            let theirs = try await daemon.get("/v1/blobs/\(id)", token: .some(Self.beta))
            #expect(theirs.status == 404)
            #expect(theirs.errorCode == "not_found")
            let theirDelete = try await daemon.request("DELETE", "/v1/blobs/\(id)", token: .some(Self.beta))
            #expect(theirDelete.status == 404)
            #expect(try await daemon.get("/v1/blobs/\(id)").status == 200)
            // Without a token: 401 before a byte is stored, also past the API's 16 MiB request limit.
            let anonymous = try await daemon.request("POST", "/v1/blobs", body: Data(repeating: 1, count: 1000), token: .some(nil))
            #expect(anonymous.status == 401)
            let large = try await onThread { [port = daemon.port] in
                try StreamingRequest(port: port, path: "/v1/blobs", contentLength: 100 << 20, timeout: 10).readResponse()
            }
            #expect(large.status == 401)
            #expect(large.header("WWW-Authenticate") == "Bearer")
            #expect(Self.files(daemon) == [id])
            // Unknown and malformed ids.
            for path in ["/v1/blobs/0123456789abcdef0123456789abcdef", "/v1/blobs/..", "/v1/blobs/\(id.uppercased())"] {
                #expect(try await daemon.get(path).status == 404, "\(path)")
            }
        }
    }

    @Test func deleteRemovesTheFile() async throws {
        try await DaemonFixture.with { daemon in
            let keep = try #require(try await Self.upload(Data("keep".utf8), to: daemon).string("id"))
            let gone = try #require(try await Self.upload(Data("gone".utf8), to: daemon).string("id"))
            #expect(Self.files(daemon) == [keep, gone].sorted())
            let deleted = try await daemon.request("DELETE", "/v1/blobs/\(gone)")
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(Self.files(daemon) == [keep])
            #expect(try await daemon.get("/v1/blobs/\(gone)").status == 404)
            #expect(try await daemon.request("DELETE", "/v1/blobs/\(gone)").status == 404)
            let other = try await daemon.request("PUT", "/v1/blobs/\(keep)", body: Data())
            #expect(other.status == 405)
        }
    }

    @Test func blobsSurviveARestart() async throws {
        try await DaemonFixture.with { first in
            let body = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let blob = try await Self.upload(body, to: first)
            let id = try #require(blob.string("id"))
            let deleted = try #require(try await Self.upload(Data("deleted".utf8), to: first).string("id"))
            #expect(try await first.request("DELETE", "/v1/blobs/\(deleted)").status == 204)
            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            let fetched = try await second.get("/v1/blobs/\(id)")
            #expect(fetched.status == 200)
            #expect(jsonEqual(try fetched.object(), blob))
            #expect(try await second.get("/v1/blobs/\(deleted)").status == 404)
            #expect(try Data(contentsOf: URL(fileURLWithPath: Self.blobFolder(second) + "/" + id)) == body)
        }
    }

    /// `APIHandler.route` without a server (so without a sink): the in-memory body is stored the
    /// same way, within the blob limit.
    @Test func routeWithoutASinkStoresTheInMemoryBody() async throws {
        try await DaemonFixture.with { daemon in
            let handler = APIHandler(service: daemon.daemon.service, authenticator: Authenticator(tokens: []), maxBlobSize: 4)
            func post(_ body: String) async throws -> HTTPResponse {
                let request = HTTPRequest(head: HTTPRequestHead(id: 1, method: "POST", path: "/v1/blobs"), body: Data(body.utf8))
                switch handler.route(request) {
                case .now(let response):
                    return response
                case .later(let start), .held(let start):
                    return try await withCheckedThrowingContinuation { continuation in
                        do { try start { continuation.resume(returning: $0) } } catch { continuation.resume(throwing: error) }
                    }
                }
            }
            let stored = try await post("abc")
            #expect(stored.status == 201)
            guard case .data(let json) = stored.body else { Issue.record("not a data body"); return }
            let blob = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(blob.string("sha256") == Self.hex(HashFunction.sha256.hash(Data("abc".utf8))))
            #expect(Self.files(daemon) == [blob.string("id") ?? ""])
            let tooLarge = try await post("abcde")
            #expect(tooLarge.status == 413)
            #expect(Self.files(daemon).count == 1)
        }
    }

    /// 1 GiB streamed over a raw socket from a generated stream (never whole in memory, here or
    /// in the daemon): the digest matches and the process's peak RSS grows by less than 64 MiB.
    @Test func oneGiBStreamsWithFlatMemory() async throws {
        try await DaemonFixture.with(exclusive: true) { daemon in
            let total = 1 << 30
            let before = MemoryStatus.read()
            let peakReset = MemoryStatus.resetPeak()
            let started = ContinuousClock.now
            let (response, digest) = try await onThread { [port = daemon.port] in
                let upload = try StreamingRequest(port: port, path: "/v1/blobs", headers: ["Content-Type": "application/octet-stream"], contentLength: total, timeout: 300)
                var piece = [UInt8](try randomBytes(1 << 20))
                var hasher = StreamingHash(.sha256)
                for index in 0..<(total >> 20) {
                    // Each MiB differs from the others: its first 8 bytes are its index.
                    withUnsafeBytes(of: UInt64(index).littleEndian) { piece.replaceSubrange(0..<8, with: $0) }
                    hasher.update(piece)
                    try upload.write(piece)
                }
                return (try upload.finish(), Self.hex(hasher.finalize()))
            }
            let elapsed = seconds(since: started)
            let after = MemoryStatus.read()
            #expect(response.status == 201, "\(response)")
            let blob = try response.jsonObject()
            #expect(blob.int("size") == total)
            #expect(blob.string("sha256") == digest)
            let peak = peakReset ? after.peakKiB : max(before.rssKiB, after.rssKiB)
            let growthMiB = Double(peak - before.rssKiB) / 1024
            print(String(format: "blob upload: 1 GiB in %.2f s (%.0f MB/s), RSS growth %.1f MiB%@",
                         elapsed, Double(total) / elapsed / 1e6, growthMiB, peakReset ? "" : " (end sample; VmHWM could not be reset)"))
            #expect(growthMiB < 64, "RSS grew \(growthMiB) MiB")
            let size = try FileManager.default.attributesOfItem(atPath: Self.blobFolder(daemon) + "/" + (blob.string("id") ?? ""))[.size] as? Int
            #expect(size == total)
        }
    }
}

/// `count` bytes from /dev/urandom (a per-byte generator takes seconds for 64 MiB in debug builds).
func randomBytes(_ count: Int) throws -> Data {
    let source = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
    defer { try? source.close() }
    var data = Data()
    while data.count < count {
        data.append(try #require(try source.read(upToCount: count - data.count)))
    }
    return data
}

/// Polls `condition` every 5 ms for up to `seconds`: for effects only visible in the file system.
func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(5_000)
    }
    return true
}

/// This process's resident memory from /proc/self/status (the daemon runs in-process).
struct MemoryStatus {
    var rssKiB = 0
    /// VmHWM: the peak RSS since start or since the last `resetPeak()`.
    var peakKiB = 0

    static func read() -> MemoryStatus {
        var status = MemoryStatus()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return status }
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let value = Int(fields[1]) else { continue }
            if fields[0] == "VmRSS:" { status.rssKiB = value }
            if fields[0] == "VmHWM:" { status.peakKiB = value }
        }
        return status
    }

    /// Resets VmHWM to the current RSS (writing 5 to /proc/self/clear_refs); false if refused.
    /// - SeeAlso: https://man7.org/linux/man-pages/man5/proc_pid_clear_refs.5.html
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
