import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// A file: URL is copied on a worker thread, not the engine thread: a large local file holds up
/// no HTTP transfer, and the copy still obeys suspend, resume and cancel.
@Suite struct LocalFileCopyTests {
    /// 256 MiB of real (not sparse) bytes: 1 MiB of noise written 256 times.
    static func writeLargeFile(_ url: URL, mebibytes: Int = 256) throws {
        var generator = SystemRandomNumberGenerator()
        let block = Data(count: 1 << 20) { _ in UInt8.random(in: 0...255, using: &generator) }
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        for _ in 0..<mebibytes { try handle.write(contentsOf: block) }
    }

    /// With the copy on the engine thread (before this change) the HTTP task, started once the
    /// copy was under way, could only complete after it: this fails there.
    @Test func anHTTPTransferCompletesWhileALargeFileIsCopied() async throws {
        let root = try TempDirectory(prefix: "transferd-large-file")
        defer { root.remove() }
        try Self.writeLargeFile(root.file("large.bin"))
        let origin = try OriginServer { _ in .text("small and quick") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.fileURLRoots = [root.path] }, exclusive: true) { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let copy = try #require(try await daemon.downloadTask(in: sid, ["url": "file://" + root.file("large.bin").path]).int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didReceiveResponse" && $0.int("taskId") == copy }
            let copyUnderWay = ContinuousClock.now
            let http = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/quick")]).int("id"))
            let httpTask = try await daemon.waitForCompletion(http)
            let httpSeconds = seconds(since: copyUnderWay)
            #expect(httpTask.isNull("error"), "\(httpTask["error"] ?? "")")
            let copyTask = try await daemon.waitForCompletion(copy, timeout: 120)
            let copySeconds = seconds(since: copyUnderWay)
            #expect(copyTask.isNull("error"), "\(copyTask["error"] ?? "")")
            print("256 MiB file: URL copy went on \(copySeconds) s after its response; the HTTP task started then completed after \(httpSeconds) s")
            // The feed's seq orders the two completions exactly (timestamps are whole seconds).
            let completions = try await daemon.allEvents(sid).filter { $0.string("type") == "didCompleteWithError" }
            let httpSeq = try #require(completions.first { $0.int("taskId") == http }?.int("seq"))
            let copySeq = try #require(completions.first { $0.int("taskId") == copy }?.int("seq"))
            #expect(httpSeq < copySeq, "the HTTP task completed after the file copy: the copy held up the engine")
            let location = try #require(copyTask.string("location"))
            #expect(FileSystemProbe.size(location) == 256 << 20)
        }
    }

    @Test func aCopyIsSuspendedResumedAndCancelledMidway() async throws {
        let root = try TempDirectory(prefix: "transferd-large-file")
        defer { root.remove() }
        try Self.writeLargeFile(root.file("large.bin"))
        try await DaemonFixture.with(configure: { $0.service.fileURLRoots = [root.path] }) { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let url = "file://" + root.file("large.bin").path
            // Created suspended then resumed and suspended at once: the copy stops part-way.
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": url], extra: ["state": "suspended"]).int("id"))
            #expect(try await daemon.post("/v1/tasks/\(id)/resume").status == 200)
            #expect(try await daemon.post("/v1/tasks/\(id)/suspend").status == 200)
            try await Task.sleep(for: .milliseconds(300))
            let paused = try await daemon.task(id)
            let atPause = paused.value(at: "progress.bytesReceived") as? Int ?? 0
            try #require(paused.string("state") == "suspended" && atPause < 256 << 20, "the copy ended before the suspend reached it: \(atPause) bytes")
            try await Task.sleep(for: .milliseconds(300))
            let still = try await daemon.task(id)
            #expect(still.string("state") == "suspended")
            #expect(still.value(at: "progress.bytesReceived") as? Int == atPause, "a suspended copy moved on")
            #expect(try await daemon.post("/v1/tasks/\(id)/resume").status == 200)
            let done = try await daemon.waitForCompletion(id, timeout: 60)
            #expect(done.isNull("error"), "\(done["error"] ?? "")")
            #expect(FileSystemProbe.size(try #require(done.string("location"))) == 256 << 20)

            // Cancelled while suspended mid-copy: cancelled, and no partial file stays.
            let cancelled = try #require(try await daemon.downloadTask(in: sid, ["url": url], extra: ["state": "suspended"]).int("id"))
            #expect(try await daemon.post("/v1/tasks/\(cancelled)/resume").status == 200)
            #expect(try await daemon.post("/v1/tasks/\(cancelled)/suspend").status == 200)
            #expect(try await daemon.post("/v1/tasks/\(cancelled)/cancel").status == 200)
            let ended = try await daemon.waitForCompletion(cancelled)
            #expect(ended.value(at: "error.code") as? Int == -999, "\(ended["error"] ?? "")")
            #expect(ended.isNull("location"))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
        }
    }
}
