import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 3's proof: a 1 GiB upload (from a blob) and a 1 GiB download through the real
/// executable end byte-identical (SHA-256), with the daemon's memory flat: its peak RSS, sampled
/// from /proc/PID/status and taken from the kernel's own high-water mark (VmHWM), stays under
/// 64 MiB. The data is generated on demand, never whole in memory, here or in the origin.
@Suite(.serialized) struct LargeTransferMemoryTests {
    static let size = 1 << 30
    static let peakLimitKiB = 64 * 1024
    /// Flat: the peak exceeds the idle daemon's RSS by less than this (a 1 GiB transfer that
    /// buffered even 1 % of itself would not).
    static let growthLimitKiB = 8 * 1024
    static let json = ["Content-Type": "application/json"]

    @Test func aOneGiBUploadFromABlobArrivesIntactWithFlatDaemonMemory() async throws {
        let resource = GeneratedBytes(count: Self.size, seed: 0x0b10b)
        let sink = try StreamingOrigin(resource: GeneratedBytes(count: 0, seed: 0))
        defer { sink.stop() }
        try await Self.withDaemon { daemon, client in
            let idle = MemorySampler.field("VmRSS", of: daemon.pid) ?? 0
            let sampler = MemorySampler(pid: daemon.pid)
            // 1. The blob, streamed from the generator and hashed on the way.
            let blobStarted = ContinuousClock.now
            let (answer, digest) = try await Self.onThread { [port = daemon.port] in
                let request = try StreamingRequest(port: port, path: "/v1/blobs", headers: ["Content-Type": "application/octet-stream"],
                                                   contentLength: resource.count, timeout: 300)
                var hasher = StreamingSHA256()
                try resource.forEachPiece { piece in
                    hasher.update(piece)
                    try request.write(Array(piece))
                }
                return (try request.finish(), hasher.finalize())
            }
            let blobSeconds = seconds(since: blobStarted)
            try #require(answer.status == 201, "\(answer)")
            let blob = try answer.jsonObject()
            #expect(blob["sha256"] as? String == digest)
            let blobId = try #require(blob["id"] as? String)
            let blobPeak = MemorySampler.field("VmHWM", of: daemon.pid) ?? 0

            // 2. The upload task, streamed from the blob's file to the sink.
            let uploadStarted = ContinuousClock.now
            let task = try await Self.send(client, "POST", "/v1/sessions/shared/tasks", """
                {"kind": "upload", "request": {"url": "\(sink.url("/sink"))", "method": "PUT", "body": {"blob": "\(blobId)"}}}
                """, status: 201)
            let id = try #require(task["id"] as? Int)
            let done = try await pollTask(client, id, timeout: 300, wait: 10) { ($0["state"] as? String) == "completed" }
            let uploadSeconds = seconds(since: uploadStarted)
            let (sampledPeak, samples) = sampler.stop()
            let hwm = MemorySampler.field("VmHWM", of: daemon.pid) ?? 0
            #expect(done["error"] is NSNull, "\(done)")
            let finished = try await Self.send(client, "GET", "/v1/tasks/\(id)", status: 200)
            #expect((finished["response"] as? [String: Any])?["statusCode"] as? Int == 200, "\(finished)")
            let received = try #require(sink.uploads.last, "the sink received nothing")
            #expect(sink.uploads.count == 1, "\(sink.uploads)")
            #expect(received.bytesReceived == Self.size)
            #expect(received.sha256 == digest, "the sink received other bytes than the blob's")

            print(String(format: "LargeTransferMemoryTests upload: blob 1 GiB in %.1f s (%.0f MB/s), upload task 1 GiB in %.1f s (%.0f MB/s); "
                         + "daemon RSS idle %.1f MiB, VmHWM after the blob %.1f MiB, sampled peak %.1f MiB (%d samples), VmHWM %.1f MiB",
                         blobSeconds, Double(Self.size) / blobSeconds / 1e6, uploadSeconds, Double(Self.size) / uploadSeconds / 1e6,
                         Double(idle) / 1024, Double(blobPeak) / 1024, Double(sampledPeak) / 1024, samples, Double(hwm) / 1024))
            #expect(samples > 10)
            #expect(max(hwm, sampledPeak) < Self.peakLimitKiB, "the daemon's peak RSS was \(max(hwm, sampledPeak) / 1024) MiB")
            #expect(max(hwm, sampledPeak) - idle < Self.growthLimitKiB, "the daemon's RSS grew from \(idle / 1024) to \(max(hwm, sampledPeak) / 1024) MiB")
        }
    }

    @Test func aOneGiBDownloadEndsIntactWithFlatDaemonMemory() async throws {
        let resource = GeneratedBytes(count: Self.size, seed: 0xd0d0)
        let origin = try StreamingOrigin(resource: resource)
        defer { origin.stop() }
        try await Self.withDaemon { daemon, client in
            let idle = MemorySampler.field("VmRSS", of: daemon.pid) ?? 0
            let sampler = MemorySampler(pid: daemon.pid)
            let started = ContinuousClock.now
            let task = try await Self.send(client, "POST", "/v1/sessions/shared/tasks",
                                           #"{"kind": "download", "request": {"url": "\#(origin.url("/big.bin"))"}}"#, status: 201)
            let id = try #require(task["id"] as? Int)
            let done = try await pollTask(client, id, timeout: 300, wait: 10) { ($0["state"] as? String) == "completed" }
            let elapsed = seconds(since: started)
            let (sampledPeak, samples) = sampler.stop()
            let hwm = MemorySampler.field("VmHWM", of: daemon.pid) ?? 0
            #expect(done["error"] is NSNull, "\(done)")
            let finished = try await Self.send(client, "GET", "/v1/tasks/\(id)", status: 200)
            let location = try #require(finished["location"] as? String, "\(finished)")
            let digests = try await Self.onThread { (try sha256(ofFile: location), resource.sha256()) }
            #expect(digests.0 == digests.1, "the file is not the resource")
            #expect(origin.responses.count == 1, "\(origin.responses)")

            print(String(format: "LargeTransferMemoryTests download: 1 GiB in %.1f s (%.0f MB/s); daemon RSS idle %.1f MiB, sampled peak %.1f MiB (%d samples), VmHWM %.1f MiB",
                         elapsed, Double(Self.size) / elapsed / 1e6, Double(idle) / 1024, Double(sampledPeak) / 1024, samples, Double(hwm) / 1024))
            #expect(samples > 10)
            #expect(max(hwm, sampledPeak) < Self.peakLimitKiB, "the daemon's peak RSS was \(max(hwm, sampledPeak) / 1024) MiB")
            #expect(max(hwm, sampledPeak) - idle < Self.growthLimitKiB, "the daemon's RSS grew from \(idle / 1024) to \(max(hwm, sampledPeak) / 1024) MiB")
        }
    }

    // MARK: Helpers

    /// Runs `body` with a fresh daemon process on a temporary data folder, then stops both.
    private static func withDaemon(_ body: (DaemonProcess, TestHTTPClient) async throws -> Void) async throws {
        let folder = try TempDirectory(prefix: "transferd-large")
        defer { folder.remove() }
        let daemon = try await DaemonProcess.start(dataDirectory: folder.path)
        do {
            try await body(daemon, TestHTTPClient(port: daemon.port))
        } catch {
            daemon.kill(SIGKILL)
            _ = await daemon.waitForExit(timeout: 10)
            throw error
        }
        daemon.kill(SIGTERM)
        if await daemon.waitForExit(timeout: 10) == nil {
            daemon.kill(SIGKILL)
            _ = await daemon.waitForExit(timeout: 10)
        }
    }

    /// Blocking work on a thread of its own, not one of Swift concurrency's two.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "LargeTransferMemoryTests"
            thread.start()
        }
    }

    private static func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, status: Int) async throws -> [String: Any] {
        let response = try await client.sendAsync(method, path, headers: json == nil ? [:] : Self.json, body: json.map { Data($0.utf8) })
        try #require(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }

}
