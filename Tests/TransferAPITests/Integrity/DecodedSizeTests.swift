import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// A Content-Encoding may not inflate a body without bound (a 1 MiB gzip answer once became a
/// 1 GiB file, reported as a success): past 200 times its encoded size, and 32 MiB, the task
/// fails with dataLengthExceedsMaximum. Ordinary compressed bodies still arrive decoded.
@Suite struct DecodedSizeTests {
    /// gzip of 64 MiB of zeros (about 65 KiB: 1,030 times smaller).
    static let bomb = GzipTool.zeros(64 << 20)
    /// 2 MiB of varied text, and its gzip (about 8 times smaller).
    static let text = Data((0..<(2 << 20) / 16).map { "line \(String($0, radix: 7).padding(toLength: 10, withPad: " ", startingAt: 0))\n" }.joined().utf8)
    static let gzippedText = GzipTool.compress(text)

    @Test(arguments: ["download", "data"])
    func aGzipBombFailsWithDataLengthExceedsMaximum(kind: String) async throws {
        #expect(Self.bomb.count > 1000 && Self.bomb.count < 1 << 20, "gzip made \(Self.bomb.count) bytes")
        let origin = try OriginServer { _ in .respond(headers: ["Content-Encoding": "gzip", "Content-Type": "application/octet-stream"], body: Self.bomb) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sampler = RSSSampler()
            let before = sampler.start()
            let id = try #require(try await daemon.createTask(["kind": kind, "request": ["url": origin.url("/bomb")]]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            let peak = sampler.stop()
            let error = try #require(task.object("error"), "the bomb was accepted: \(task)")
            #expect(error.int("code") == -1103)
            #expect(error.string("message")?.contains("Content-Encoding") == true, "\(error)")
            #expect((task.value(at: "progress.bytesReceived") as? Int ?? 0) < 48 << 20, "it stopped soon after the bound")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty)
            #expect(peak - before < 160 << 20, "RSS grew by \((peak - before) >> 20) MiB")
        }
    }

    @Test(arguments: ["download", "data"])
    func anOrdinaryGzipBodyArrivesDecoded(kind: String) async throws {
        let origin = try OriginServer { _ in .respond(headers: ["Content-Encoding": "gzip", "Content-Type": "text/plain"], body: Self.gzippedText) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.createTask(["kind": kind, "request": ["url": origin.url("/text")]]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.object("error") == nil, "\(task)")
            let bytes = kind == "download" ? try await daemon.file(id).body : try await daemon.body(id).body
            #expect(bytes == Self.text)
        }
    }

    /// The bound is the daemon's to set (--max-decompression-ratio): raised, the same body passes.
    @Test func aRaisedRatioLetsAHighlyCompressibleBodyThrough() async throws {
        let origin = try OriginServer { _ in .respond(headers: ["Content-Encoding": "gzip"], body: Self.bomb) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.decodedSizeLimit.ratio = 2000 }) { daemon in
            let id = try #require(try await daemon.createTask(["kind": "download", "request": ["url": origin.url("/zeros")]]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.object("error") == nil, "\(task)")
            #expect(task.value(at: "progress.bytesReceived") as? Int == 64 << 20)
        }
    }
}
