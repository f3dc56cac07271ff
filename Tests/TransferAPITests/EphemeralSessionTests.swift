import Foundation
import Testing
import TestSupport

/// Ephemeral sessions keep nothing on disk: no session or task rows, events, request or response
/// bodies, and no download checkpoints. After a restart they are gone, files included.
@Suite struct EphemeralSessionTests {
    /// Whether any file under `folder` (the database, its WAL) contains `marker`.
    private static func files(under folder: String, containing marker: String) -> [String] {
        let needle = Data(marker.utf8)
        return FileSystemProbe.tree(folder).filter { path in
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)) else { return false }
            return data.range(of: needle) != nil
        }
    }

    @Test func nothingOfAnEphemeralSessionReachesTheDiskAndARestartForgetsIt() async throws {
        let marker = "marker-\(UUID().uuidString)"
        let origin = try OriginServer { request in
            .respond(headers: ["ETag": "\"e1\""], body: Data("\(marker) for \(request.path)".utf8))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let recorded = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            var ids: [Int] = []
            for session in [ephemeral, recorded] {
                let data = try #require(try await daemon.createTask(in: session, [
                    "kind": "upload", "request": ["url": origin.url("/\(session)/data"), "method": "POST", "body": ["text": "\(marker) request"]],
                ]).int("id"))
                let download = try #require(try await daemon.createTask(in: session, ["kind": "download", "request": ["url": origin.url("/\(session)/file")]]).int("id"))
                for id in [data, download] { #expect(try await daemon.waitForCompletion(id).isNull("error")) }
                #expect(try await daemon.body(data).text == "\(marker) for /\(session)/data")
                ids += [data, download]
            }
            daemon.stop()
            // The default session's rows carry the marker and its id (the control: the scan
            // works); the ephemeral session's id is in nothing but its downloaded file, which
            // must exist until the restart (the client may still fetch it).
            let database = Self.files(under: daemon.dataPath, containing: marker).filter { $0.hasPrefix("transferd.sqlite3") }
            #expect(!database.isEmpty, "the control (a default session) was not found: the scan proves nothing")
            #expect(!Self.files(under: daemon.dataPath, containing: recorded).filter { $0.hasPrefix("transferd.sqlite3") }.isEmpty)
            let leaks = Self.files(under: daemon.dataPath, containing: ephemeral).filter { !$0.hasPrefix("files/\(ids[1])/") }
            #expect(leaks.isEmpty, "the ephemeral session reached: \(leaks)")

            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.get("/v1/sessions/\(ephemeral)").status == 404)
            #expect(try await second.get("/v1/sessions/\(recorded)").status == 200)
            for id in ids.prefix(2) { #expect(try await second.get("/v1/tasks/\(id)").status == 404) }
            for id in ids.suffix(2) { #expect(try await second.get("/v1/tasks/\(id)").status == 200) }
            // The ephemeral download's file went with it; the default one's stays.
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").filter { !$0.contains("/") } == ["\(ids[3])"])
            let next = try #require(try await second.createTask(in: recorded, ["kind": "data", "request": ["url": origin.url("/n")], "state": "suspended"]).int("id"))
            #expect(next > ids.max()!, "an ephemeral task's id was given again")
        }
    }
}
