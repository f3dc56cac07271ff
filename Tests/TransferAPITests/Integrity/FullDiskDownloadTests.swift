import Foundation
import Testing
import TestSupport

/// A download onto a full disk fails clearly (cannotWriteToFile), leaves no partial file and no
/// file at its destination, and the daemon goes on: a download that fits succeeds next. The
/// partial files' folder is a 2 MiB tmpfs (`SmallDisk`, root, as the test command runs).
@Suite(.serialized) struct FullDiskDownloadTests {
    static let large = Data(count: 4 << 20) { UInt8(truncatingIfNeeded: $0 &* 3 &+ $0 >> 12) }
    static let small = large.prefix(256 * 1024)

    @Test func aDownloadOntoAFullDiskFailsClearlyAndTheNextOneThatFitsSucceeds() async throws {
        let origin = try OriginServer { request in
            .respond(headers: ["ETag": "\"x\""], body: request.path.hasSuffix("large") ? Self.large : Self.small)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            // The partial files' folder is a link to the small disk (the database stays on a big one).
            let disk = try SmallDisk(megabytes: 2)
            defer { disk.unmount() }
            let partial = daemon.dataPath + "/partial"
            try? FileManager.default.removeItem(atPath: partial)
            try FileManager.default.createSymbolicLink(atPath: partial, withDestinationPath: disk.path)

            let id = try #require(try await daemon.createTask(["kind": "download", "destination": "big.bin", "request": ["url": origin.url("/large")]]).int("id"))
            let failed = try await daemon.waitForCompletion(id)
            #expect(failed.object("error")?.int("code") == -3003, "\(failed)")
            #expect(failed.object("error")?.isNull("resumeData") ?? true, "a full disk is not a place to continue from")
            #expect(FileSystemProbe.tree(disk.path).isEmpty, "partial files left on the small disk")
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/big.bin"))

            let next = try #require(try await daemon.createTask(["kind": "download", "request": ["url": origin.url("/small")]]).int("id"))
            let done = try await daemon.waitForCompletion(next)
            #expect(done.object("error") == nil, "\(done)")
            #expect(try await daemon.file(next).body == Self.small)
            #expect(try await daemon.get("/readyz").status == 200)
        }
    }
}
