import Foundation
import Testing
import TestSupport

/// An existing destination is never silently replaced (issue 16, item 3): the task's `conflict`
/// is `fail` (the default: error cannotCreateFile with reason destination_exists, the file kept
/// at the task's default location and served), `replace`, or `rename` (`name (1).ext`, ...).
@Suite struct DownloadConflictTests {
    /// Each path answers its own body: "body of /N".
    static func origin() throws -> OriginServer {
        try OriginServer { request in .text("body of \(request.path)") }
    }

    @Test func failKeepsTheExistingFileAndTheDownloadAtItsDefaultLocation() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let final = daemon.downloadsRoot + "/c/f.bin"
            let first = try await daemon.download(origin.url("/1"), to: "c/f.bin")
            #expect(first.isNull("error") && first.string("location") == final && first.string("conflict") == "fail", "\(first)")

            let second = try await daemon.download(origin.url("/2"), to: "c/f.bin")
            let id = try #require(second.int("id"))
            #expect(second.value(at: "error.code") as? Int == -3000, "\(second)")
            #expect(second.value(at: "error.name") as? String == "cannotCreateFile")
            #expect(second.value(at: "error.reason") as? String == "destination_exists")
            #expect(fileBytes(final) == Data("body of /1".utf8), "the existing file was replaced")
            let kept = try #require(second.string("location"))
            #expect(kept.hasPrefix(daemon.dataPath + "/files/\(id)/"), "\(kept)")
            #expect(fileBytes(kept) == Data("body of /2".utf8))
            let served = try await daemon.file(id)
            #expect(served.status == 200 && served.body == Data("body of /2".utf8), "\(served)")
            let types = try await daemon.allEvents("shared").filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(types.contains("didFinishDownloadingTo") && types.last == "didCompleteWithError", "\(types)")
        }
    }

    @Test func replaceAndRenameAreDoneOnlyWhenAsked() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let root = daemon.downloadsRoot
            _ = try await daemon.download(origin.url("/1"), to: "d/report.tar.gz")
            let replaced = try await daemon.download(origin.url("/2"), to: "d/report.tar.gz", conflict: "replace")
            #expect(replaced.isNull("error") && replaced.string("location") == root + "/d/report.tar.gz", "\(replaced)")
            #expect(fileBytes(root + "/d/report.tar.gz") == Data("body of /2".utf8))

            let renamed = try await daemon.download(origin.url("/3"), to: "d/report.tar.gz", conflict: "rename")
            #expect(renamed.isNull("error") && renamed.string("location") == root + "/d/report.tar (1).gz", "\(renamed)")
            let again = try await daemon.download(origin.url("/4"), to: "d/report.tar.gz", conflict: "rename")
            #expect(again.string("location") == root + "/d/report.tar (2).gz", "\(again)")
            #expect(again.string("destination") == "d/report.tar.gz" && again.string("conflict") == "rename")
            #expect(fileBytes(root + "/d/report.tar.gz") == Data("body of /2".utf8))
            #expect(fileBytes(root + "/d/report.tar (1).gz") == Data("body of /3".utf8))
            #expect(fileBytes(root + "/d/report.tar (2).gz") == Data("body of /4".utf8))
            #expect(try await daemon.file(try #require(again.int("id"))).body == Data("body of /4".utf8))
            // A free destination is used as named, whatever the policy.
            let fresh = try await daemon.download(origin.url("/5"), to: "d/new", conflict: "rename")
            #expect(fresh.string("location") == root + "/d/new")
            #expect(FileSystemProbe.tree(root + "/d") == ["new", "report.tar (1).gz", "report.tar (2).gz", "report.tar.gz"])
        }
    }

    @Test func anUnknownPolicyIsRefusedAndNothingIsCreated() async throws {
        try await DaemonFixture.with { daemon in
            let refused = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "download", "request": ["url": "http://127.0.0.1:9/x"], "destination": "x.bin", "conflict": "overwrite",
            ])
            #expect(refused.status == 400, "\(refused)")
            #expect(refused.errorCode == "invalid_conflict")
            #expect(refused.error?.string("field") == "conflict")
            #expect(refused.error?.string("message")?.contains("fail, replace, rename") == true, "\(refused)")
            let onData = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "data", "request": ["url": "http://127.0.0.1:9/x"], "conflict": "replace",
            ])
            #expect(onData.status == 422 && onData.error?.string("field") == "conflict", "\(onData)")
            let tasks = try await daemon.get("/v1/sessions/shared/tasks").object()
            #expect((tasks["items"] as? [Any])?.isEmpty == true, "\(tasks)")
        }
    }

    /// Two downloads finishing to one name at the same moment: exactly one gets it under
    /// `fail`, and under `rename` each gets a name of its own, no bytes lost. (The engine
    /// finishes transfers on one thread; threads racing for a name, as file: copies and
    /// other processes do, are in `DestinationPlacementTests`.)
    @Test func downloadsFinishingTogetherNeverBothWin() async throws {
        let barrier = RequestBarrier(count: 4)
        let origin = try OriginServer { request in
            barrier.wait()
            return .respond(body: Data("body of \(request.path) ".utf8) + Data(repeating: UInt8(request.path.utf8.last ?? 0), count: 64 * 1024))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let ids = [
                try await daemon.startDownload(origin.url("/f1"), to: "race/f.bin"),
                try await daemon.startDownload(origin.url("/f2"), to: "race/f.bin"),
                try await daemon.startDownload(origin.url("/r1"), to: "race/r.bin", conflict: "rename"),
                try await daemon.startDownload(origin.url("/r2"), to: "race/r.bin", conflict: "rename"),
            ]
            var tasks: [[String: Any]] = []
            for id in ids { tasks.append(try await daemon.waitForCompletion(id)) }
            let failing = tasks[0...1]
            #expect(failing.filter { $0.isNull("error") }.count == 1, "\(failing)")
            #expect(failing.filter { $0.value(at: "error.reason") as? String == "destination_exists" }.count == 1)
            let winner = try #require(failing.first { $0.isNull("error") })
            let loser = try #require(failing.first { !$0.isNull("error") })
            #expect(try await daemon.file(try #require(winner.int("id"))).body == fileBytes(daemon.downloadsRoot + "/race/f.bin"))
            let lost = try await daemon.file(try #require(loser.int("id"))).body
            #expect(lost != fileBytes(daemon.downloadsRoot + "/race/f.bin") && lost.starts(with: Data("body of /f".utf8)))

            let renamed = tasks[2...3].compactMap { $0.string("location") }.sorted()
            #expect(renamed == [daemon.downloadsRoot + "/race/r (1).bin", daemon.downloadsRoot + "/race/r.bin"], "\(tasks[2...3])")
            let bodies = Set(renamed.compactMap { fileBytes($0)?.prefix(9) })
            #expect(bodies == [Data("body of /".utf8)] && Set(renamed.compactMap { fileBytes($0) }).count == 2, "one file replaced the other")
        }
    }
}
