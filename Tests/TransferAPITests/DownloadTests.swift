import Foundation
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Download tasks end to end: the body streams to a partial file under the data folder and is
/// moved into place only on success (a destination under the downloads root, or
/// `<data>/files/<id>/<suggestedFilename>`); `GET /v1/tasks/{tid}/file` serves it with ranges;
/// error statuses, resets and cancels leave no file anywhere; memory stays flat.
@Suite struct DownloadTests {
    // MARK: nginx: byte-identical files, progress, events, ranges

    @Test func sixteenMiBFromNginxIsByteIdenticalWithOrderedEvents() async throws {
        let nginx = try Peers.nginx()
        let original = try Peers.nginxDocumentRoot().appendingPathComponent("16MiB.bin")
        let size = try #require(FileSystemProbe.size(original.path))
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let created = try await daemon.downloadTask(in: sid, ["url": nginx + "/files/16MiB.bin"])
            let id = try #require(created.int("id"))
            #expect(created.string("kind") == "download")
            #expect(created.isNull("location"))
            #expect(created.isNull("destination"))

            let task = try await daemon.waitForCompletion(id, timeout: 60)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.statusCode") as? Int == 200)
            #expect(task.value(at: "response.suggestedFilename") as? String == "16MiB.bin")
            #expect(task.value(at: "progress.bytesReceived") as? Int == size)
            #expect(task.value(at: "progress.bytesExpectedToReceive") as? Int == size)
            #expect(task.value(at: "progress.fractionCompleted") as? Double == 1)
            let location = try #require(task.string("location"))
            #expect(location == daemon.dataPath + "/files/\(id)/16MiB.bin")
            #expect(FileSystemProbe.size(location) == size)
            let actual = try await sha256sum(location)
            #expect(actual == (try await sha256sum(original.path)))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)

            // Events: (response,) didWriteData..., didFinishDownloadingTo,
            // didFinishCollectingMetrics, didCompleteWithError.
            let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }
            let types = events.compactMap { $0.string("type") }
            #expect(Array(types.suffix(3)) == ["didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
            let body = types.dropLast(3).drop { $0 == "didReceiveResponse" }
            #expect(!body.isEmpty && body.allSatisfy { $0 == "didWriteData" }, "\(types)")
            #expect(!types.contains("didReceiveData"))
            let writes = events.filter { $0.string("type") == "didWriteData" }
            #expect(writes.compactMap { $0.int("bytesWritten") }.reduce(0, +) == size)
            let totals = writes.compactMap { $0.int("totalBytesWritten") }
            #expect(totals.count == writes.count && totals == totals.sorted() && totals.last == size)
            #expect(writes.allSatisfy { $0.int("totalBytesExpectedToWrite") == size })
            let finished = events.first { $0.string("type") == "didFinishDownloadingTo" }
            #expect(finished?.string("location") == location)
            #expect(events.last?.isNull("error") == true)

            // GET /file: the same bytes, as an attachment named after the suggested filename.
            let file = try await daemon.file(id)
            #expect(file.status == 200)
            #expect(file.body.count == size)
            #expect(file.body == (try Data(contentsOf: original)))
            #expect(file.header("Accept-Ranges") == "bytes")
            #expect(file.header("Content-Length") == "\(size)")
            #expect(file.header("Content-Type") == "application/octet-stream")
            #expect(file.header("Content-Disposition") == ContentDisposition.attachment(filename: "16MiB.bin"))

            // GET /body is for data tasks.
            let body409 = try await daemon.body(id)
            #expect(body409.status == 409, "\(body409)")
            #expect(body409.errorCode == "no_body")
        }
    }

    struct RangeCase: Sendable, CustomTestStringConvertible {
        let header: String
        /// The inclusive byte range expected in a 206, nil for a whole 200.
        let range: ClosedRange<Int>?
        var testDescription: String { "Range: \(header)" }
    }

    @Test func fileEndpointServesSingleRanges() async throws {
        let nginx = try Peers.nginx()
        let original = try Data(contentsOf: try Peers.nginxDocumentRoot().appendingPathComponent("1MiB.bin"))
        let size = original.count
        let cases: [RangeCase] = [
            RangeCase(header: "bytes=0-0", range: 0...0),
            RangeCase(header: "bytes=100-199", range: 100...199),
            RangeCase(header: "bytes=-10", range: (size - 10)...(size - 1)),
            RangeCase(header: "bytes=\(size - 1000)-", range: (size - 1000)...(size - 1)),
            RangeCase(header: "bytes=\(size - 5)-\(size + 100)", range: (size - 5)...(size - 1)),
            RangeCase(header: "bytes=-\(size * 2)", range: 0...(size - 1)),
            // Several ranges: answered whole (RFC 9110 allows it).
            RangeCase(header: "bytes=0-0,100-199", range: nil),
            // Not a valid range: ignored.
            RangeCase(header: "bytes=200-100", range: nil),
            RangeCase(header: "items=0-10", range: nil),
        ]
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": nginx + "/files/1MiB.bin"]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            for item in cases {
                let response = try await daemon.file(id, headers: ["Range": item.header])
                #expect(response.header("Accept-Ranges") == "bytes", "\(item.header)")
                if let range = item.range {
                    #expect(response.status == 206, "\(item.header): \(response)")
                    #expect(response.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound)/\(size)", "\(item.header)")
                    #expect(response.header("Content-Length") == "\(range.count)", "\(item.header)")
                    #expect(response.body == original.subdata(in: range.lowerBound..<(range.upperBound + 1)), "\(item.header)")
                } else {
                    #expect(response.status == 200, "\(item.header): \(response)")
                    #expect(response.header("Content-Range") == nil, "\(item.header)")
                    #expect(response.body == original, "\(item.header)")
                }
            }
            // Beyond the end: 416 with the size, as JSON.
            for header in ["bytes=\(size)-", "bytes=\(size + 10)-\(size + 20)", "bytes=-0"] {
                let response = try await daemon.file(id, headers: ["Range": header])
                #expect(response.status == 416, "\(header): \(response)")
                #expect(response.errorCode == "range_not_satisfiable", "\(header)")
                #expect(response.header("Content-Range") == "bytes */\(size)", "\(header)")
                #expect(response.header("Content-Type") == "application/json", "\(header)")
            }
            // HEAD-less clients fetching in parts reassemble the file exactly.
            var assembled = Data()
            var offset = 0
            while offset < size {
                let last = min(size, offset + 300_000) - 1
                let part = try await daemon.file(id, headers: ["Range": "bytes=\(offset)-\(last)"])
                #expect(part.status == 206)
                assembled.append(part.body)
                offset = last + 1
            }
            #expect(assembled == original)
        }
    }

    @Test func fileEndpointConflictsAndMissingFiles() async throws {
        let payload = Data(count: 50_000) { UInt8(truncatingIfNeeded: $0 &* 31) }
        let origin = try OriginServer { request in
            request.path == "/stall" ? .stallAfterHeaders(contentLength: 10_000, bodyPrefix: Data("abc".utf8)) : .respond(body: payload)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            // A data task has a body, not a file.
            let data = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/d.bin")]).int("id"))
            _ = try await daemon.waitForCompletion(data)
            let notDownload = try await daemon.file(data)
            #expect(notDownload.status == 409, "\(notDownload)")
            #expect(notDownload.errorCode == "not_a_download")

            // A running or suspended download has no file yet.
            let running = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/stall")]).int("id"))
            let suspended = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/s.bin")], extra: ["state": "suspended"]).int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didWriteData" && $0.int("taskId") == running }
            for id in [running, suspended] {
                let response = try await daemon.file(id)
                #expect(response.status == 409, "\(response)")
                #expect(response.errorCode == "task_not_completed")
            }
            #expect(try await daemon.post("/v1/tasks/\(running)/cancel").status == 200)
            #expect(try await daemon.post("/v1/tasks/\(suspended)/cancel").status == 200)
            _ = try await daemon.waitForCompletion(running)
            // A failed download has none either.
            let cancelled = try await daemon.file(running)
            #expect(cancelled.status == 409, "\(cancelled)")
            #expect(cancelled.errorCode == "no_body")

            // A file removed on the host: 404.
            let done = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/gone.bin")]).int("id"))
            let location = try #require(try await daemon.waitForCompletion(done).string("location"))
            #expect(try await daemon.file(done).body == payload)
            try FileManager.default.removeItem(atPath: location)
            let gone = try await daemon.file(done)
            #expect(gone.status == 404, "\(gone)")
            #expect(gone.errorCode == "not_found")

            // Unknown tasks: 404.
            #expect(try await daemon.file(9999).status == 404)
        }
    }

    // MARK: Destinations

    @Test func slowDownloadAppearsAtItsDestinationOnlyWhenComplete() async throws {
        // 3.2 s of body, so the download still runs when the first didWriteData reaches the test
        // on a loaded machine (see symlinkPlantedBeforeCompletionFailsTheTask).
        let payload = Data(count: 256 * 1024) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }
        let origin = try OriginServer { _ in
            .slowBody(headers: ["Content-Type": "application/x-report"], body: payload, bytesPerWrite: 8192, interval: .milliseconds(100))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let destination = "reports/2026/november/report.bin"
            let created = try await daemon.downloadTask(in: sid, ["url": origin.url("/export")], destination: destination)
            let id = try #require(created.int("id"))
            #expect(created.string("destination") == destination)
            let final = daemon.downloadsRoot + "/" + destination

            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didWriteData" && $0.int("taskId") == id }
            // While it runs, the bytes are in the partial folder and nothing is at the destination.
            #expect(!FileManager.default.fileExists(atPath: final))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial") == ["\(id).part"])
            #expect(try await daemon.task(id).string("state") == "running", "the download ended too fast to observe it running")

            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("location") == final)
            #expect(task.string("destination") == destination)
            #expect(try Data(contentsOf: URL(fileURLWithPath: final)) == payload)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.downloadsRoot) == [
                "reports", "reports/2026", "reports/2026/november", "reports/2026/november/report.bin",
            ])
            #expect(!FileManager.default.fileExists(atPath: daemon.dataPath + "/files/\(id)"))
            let file = try await daemon.file(id)
            #expect(file.body == payload)
            #expect(file.header("Content-Type") == "application/x-report")
        }
    }

    @Test func aConfiguredDownloadsRootIsUsedAndAnExistingFileIsReplacedWhenAsked() async throws {
        let origin = try OriginServer { request in .text("version \(request.path.dropFirst())") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.downloadsDirectory = $0.service.dataDirectory + "/elsewhere/root" }) { daemon in
            #expect(daemon.downloadsRoot.hasSuffix("/elsewhere/root"))
            let first = try #require(try await daemon.downloadTask(["url": origin.url("/1")], destination: "notes.txt").int("id"))
            #expect(try await daemon.waitForCompletion(first).string("location") == daemon.downloadsRoot + "/notes.txt")
            let second = try #require(try await daemon.downloadTask(["url": origin.url("/2")], destination: "notes.txt", extra: ["conflict": "replace"]).int("id"))
            #expect(try await daemon.waitForCompletion(second).string("location") == daemon.downloadsRoot + "/notes.txt")
            #expect(try String(contentsOfFile: daemon.downloadsRoot + "/notes.txt", encoding: .utf8) == "version 2")
            #expect(!FileManager.default.fileExists(atPath: daemon.dataPath + "/downloads/notes.txt"))
        }
    }

    /// `--data-dir ./data` (the default) is relative; `location` is still an absolute path.
    @Test func aRelativeDataDirectoryStillGivesAbsoluteLocations() async throws {
        let origin = try OriginServer { _ in .text("relative") }
        defer { origin.stop() }
        let cwd = FileManager.default.currentDirectoryPath.split(separator: "/").count
        try await DaemonFixture.with(configure: {
            // The same temp folder, spelled relative to the working directory.
            $0.service.dataDirectory = String(repeating: "../", count: cwd) + "." + $0.service.dataDirectory
        }) { daemon in
            #expect(!daemon.dataPath.hasPrefix("/"))
            let named = try #require(try await daemon.downloadTask(["url": origin.url("/r.txt")], destination: "sub/r.txt").int("id"))
            let unnamed = try #require(try await daemon.downloadTask(["url": origin.url("/r.txt")]).int("id"))
            #expect(try await daemon.waitForCompletion(named).string("location") == daemon.directory.path + "/downloads/sub/r.txt")
            #expect(try await daemon.waitForCompletion(unnamed).string("location") == daemon.directory.path + "/files/\(unnamed)/r.txt")
            let events = try await daemon.allEvents("shared").filter { $0.string("type") == "didFinishDownloadingTo" }
            #expect(events.compactMap { $0.string("location") }.allSatisfy { $0.hasPrefix(daemon.directory.path + "/") }, "\(events)")
            #expect(try await daemon.file(named).text == "relative")
        }
    }

    @Test(arguments: [
        "../escape.bin", "a/../../escape.bin", "a/..", "..", "/etc/passwd", "/tmp/x.bin", "./x.bin", "a/./b.bin",
        "folder/", "", "line\nbreak.bin", "nul\u{0}.bin", String(repeating: "a", count: 1025),
    ])
    func destinationsThatCouldLeaveTheRootAreRefused(destination: String) async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "download", "request": ["url": "http://127.0.0.1:9/x"], "destination": destination,
            ])
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == "invalid_destination")
            #expect(response.error?.string("field") == "destination")
            let tasks = try await daemon.get("/v1/sessions/shared/tasks").object()
            #expect((tasks["items"] as? [Any])?.isEmpty == true, "no task was created: \(tasks)")
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).isEmpty)
        }
    }

    @Test func symlinkInsideTheRootPointingOutsideIsRefused() async throws {
        try await DaemonFixture.with(configure: { $0.service.downloadsDirectory = $0.service.dataDirectory + "/root" }) { daemon in
            let outside = daemon.dataPath + "/outside"
            try FileManager.default.createDirectory(atPath: outside + "/inner", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: daemon.downloadsRoot + "/link", withDestinationPath: outside)
            try FileManager.default.createDirectory(atPath: daemon.downloadsRoot + "/fine", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: daemon.downloadsRoot + "/fine/back", withDestinationPath: "../link/inner")
            for destination in ["link/file.bin", "link/inner/file.bin", "link/new/folder/file.bin", "fine/back/file.bin"] {
                let response = try await daemon.post("/v1/sessions/shared/tasks", json: [
                    "kind": "download", "request": ["url": "http://127.0.0.1:9/x"], "destination": destination,
                ])
                #expect(response.status == 400, "\(destination): \(response)")
                #expect(response.errorCode == "invalid_destination", "\(destination)")
                #expect(response.error?.string("field") == "destination", "\(destination)")
            }
            // A symlink that stays inside the root is fine.
            try FileManager.default.createSymbolicLink(atPath: daemon.downloadsRoot + "/alias", withDestinationPath: "fine")
            let allowed = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "download", "request": ["url": "http://127.0.0.1:9/x"], "destination": "alias/file.bin", "state": "suspended",
            ])
            #expect(allowed.status == 201, "\(allowed)")
            #expect(FileSystemProbe.tree(outside) == ["inner"])
        }
    }

    /// The destination is checked again when the file is moved: a symlink planted meanwhile
    /// fails the task, and nothing (not even a folder) is written outside the root.
    @Test(arguments: ["planted/file.bin", "planted/deeper/file.bin"])
    func symlinkPlantedBeforeCompletionFailsTheTask(destination: String) async throws {
        // 3.2 s of body (4 KiB every 100 ms): the symlink is planted after the first didWriteData,
        // and on a loaded machine that event once reached the test after a 0.8 s body had ended
        // and its folder was made (a cold run of the test command, 2026-11-29).
        let payload = Data(repeating: 0x5a, count: 128 * 1024)
        let origin = try OriginServer { _ in .slowBody(body: payload, bytesPerWrite: 4096, interval: .milliseconds(100)) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.downloadsDirectory = $0.service.dataDirectory + "/root" }) { daemon in
            let outside = daemon.dataPath + "/outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/f")], destination: destination).int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didWriteData" && $0.int("taskId") == id }
            try FileManager.default.createSymbolicLink(atPath: daemon.downloadsRoot + "/planted", withDestinationPath: outside)
            #expect(try await daemon.task(id).string("state") == "running", "the download ended before the symlink was planted")

            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "error.code") as? Int == -3003, "\(task["error"] ?? "")")
            #expect(task.value(at: "error.name") as? String == "cannotWriteToFile")
            #expect(task.isNull("location"))
            #expect(FileSystemProbe.tree(outside).isEmpty, "written outside the root: \(FileSystemProbe.tree(outside))")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(!types.contains("didFinishDownloadingTo"))
            #expect(Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
        }
    }

    @Test func destinationOnADataTaskIsInvalid() async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "data", "request": ["url": "http://127.0.0.1:9/x"], "destination": "a.bin",
            ])
            #expect(response.status == 422, "\(response)")
            #expect(response.errorCode == "invalid_value")
            #expect(response.error?.string("field") == "destination")
        }
    }

    // MARK: Failures leave no file

    struct StatusCase: Sendable, CustomTestStringConvertible {
        let status: Int
        let code: Int
        let name: String
        var testDescription: String { "\(status) → \(name)" }
    }

    @Test(arguments: [
        StatusCase(status: 401, code: -1013, name: "userAuthenticationRequired"),
        StatusCase(status: 403, code: -1102, name: "noPermissionsToReadFile"),
        StatusCase(status: 404, code: -1100, name: "fileDoesNotExist"),
        StatusCase(status: 407, code: -1013, name: "userAuthenticationRequired"),
        StatusCase(status: 410, code: -1100, name: "fileDoesNotExist"),
        StatusCase(status: 500, code: -1100, name: "fileDoesNotExist"),
    ])
    func errorStatusesBecomeURLErrorsWithNoFile(item: StatusCase) async throws {
        let page = Data(String(repeating: "<p>error page</p>\n", count: 2000).utf8)
        let origin = try OriginServer { request in
            .respond(status: item.status, headers: ["Content-Type": "text/html"], body: request.path == "/empty" ? Data() : page)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let named = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/named")], destination: "out/named.bin").int("id"))
            let unnamed = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/unnamed.bin")]).int("id"))
            let empty = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/empty")]).int("id"))
            for id in [named, unnamed, empty] {
                let task = try await daemon.waitForCompletion(id)
                #expect(task.value(at: "error.code") as? Int == item.code, "task \(id): \(task["error"] ?? "")")
                #expect(task.value(at: "error.name") as? String == item.name)
                #expect(task.value(at: "response.statusCode") as? Int == item.status)
                #expect(task.isNull("location"))
                let file = try await daemon.file(id)
                #expect(file.status == 409)
                #expect(file.errorCode == "no_body")
                let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }
                let types = events.compactMap { $0.string("type") }
                #expect(!types.contains("didFinishDownloadingTo"), "\(types)")
                #expect(Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
                #expect(events.last?.value(at: "error.code") as? Int == item.code)
            }
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty)
        }
    }

    @Test func resetMidBodyFailsWithNetworkConnectionLostAndNoFile() async throws {
        let payload = Data(repeating: 7, count: 1 << 20)
        let origin = try OriginServer { _ in .resetMidBody(afterBytes: 200_000, body: payload) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/big.bin")], destination: "big.bin").int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "error.code") as? Int == -1005, "\(task["error"] ?? "")")
            #expect(task.value(at: "error.name") as? String == "networkConnectionLost")
            #expect(task.isNull("location"))
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty)
        }
    }

    @Test func cancellingARunningDownloadLeavesNoPartialFile() async throws {
        let origin = try OriginServer { _ in .stallAfterHeaders(contentLength: 10 << 20, bodyPrefix: Data(repeating: 1, count: 64 * 1024)) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/huge.bin")], destination: "huge.bin").int("id"))
            _ = try await daemon.waitForTask(id) { ($0.value(at: "progress.bytesReceived") as? Int ?? 0) == 64 * 1024 }
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial") == ["\(id).part"])
            #expect(FileSystemProbe.size(daemon.dataPath + "/partial/\(id).part") == 64 * 1024)

            let cancelled = try await daemon.post("/v1/tasks/\(id)/cancel", json: [:] as [String: Any])
            #expect(cancelled.status == 200, "\(cancelled)")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "error.code") as? Int == -999)
            #expect(task.value(at: "error.name") as? String == "cancelled")
            #expect(task.isNull("location"))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).isEmpty)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(!types.contains("didFinishDownloadingTo"))
            #expect(Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
        }
    }

    // MARK: suggestedFilename and the default location

    struct FilenameCase: Sendable, CustomTestStringConvertible {
        let disposition: String?
        let path: String
        let expected: String
        var testDescription: String { "\(disposition ?? "no Content-Disposition") at \(path) → \(expected)" }
    }

    @Test(arguments: [
        FilenameCase(disposition: "attachment; filename*=UTF-8''na%C3%AFve%20file.txt", path: "/dl/x.bin", expected: "naïve file.txt"),
        FilenameCase(disposition: "attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt", path: "/dl/x.bin", expected: "€ rates.txt"),
        FilenameCase(disposition: "attachment; filename=\"..\\\\..\\\\evil\"", path: "/dl/x.bin", expected: "evil"),
        FilenameCase(disposition: "attachment; filename=\"../../etc/passwd\"", path: "/dl/x.bin", expected: "passwd"),
        FilenameCase(disposition: "attachment; filename=\".hidden\"", path: "/dl/x.bin", expected: "hidden"),
        FilenameCase(disposition: nil, path: "/reports/q3.pdf?token=1", expected: "q3.pdf"),
        FilenameCase(disposition: nil, path: "/", expected: "Unknown"),
    ])
    func suggestedFilenameNamesTheDefaultLocation(item: FilenameCase) async throws {
        let payload = Data("contents of \(item.expected)".utf8)
        let origin = try OriginServer { _ in
            var headers = ["Content-Type": "text/plain"]
            if let disposition = item.disposition { headers["Content-Disposition"] = disposition }
            return .respond(headers: headers, body: payload)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url(item.path)]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.suggestedFilename") as? String == item.expected)
            let location = try #require(task.string("location"))
            #expect(location == daemon.dataPath + "/files/\(id)/" + item.expected)
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == payload)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files/\(id)") == [item.expected])

            let file = try await daemon.file(id)
            #expect(file.body == payload)
            let disposition = try #require(file.header("Content-Disposition"))
            #expect(disposition == ContentDisposition.attachment(filename: item.expected))
            #expect(ContentDisposition.filename(in: disposition) == item.expected)
            #expect(disposition.unicodeScalars.allSatisfy { $0.isASCII }, "header values are ASCII: \(disposition)")
        }
    }

    // MARK: Other paths to the file

    @Test func redirectBodiesAreNotWrittenAndTheFinalURLNamesTheFile() async throws {
        let payload = Data(count: 100_000) { UInt8(truncatingIfNeeded: $0 &* 3) }
        let origin = try OriginServer { request in
            switch request.path {
            case "/start": return .respond(status: 302, headers: ["Location": "/middle", "Content-Type": "text/html"], body: Data(repeating: 0x21, count: 5000))
            case "/middle": return .respond(status: 301, headers: ["Location": "/final/archive.tar"], body: Data("moved".utf8))
            default: return .respond(headers: ["Content-Type": "application/x-tar"], body: payload)
            }
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/start")]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.url") as? String == origin.url("/final/archive.tar"))
            #expect(task.value(at: "progress.bytesReceived") as? Int == payload.count)
            let location = try #require(task.string("location"))
            #expect(location.hasSuffix("/files/\(id)/archive.tar"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == payload)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(types.filter { $0 == "willPerformHTTPRedirection" }.count == 2, "\(types)")
        }
    }

    @Test func anEmptyBodyDownloadsAsAnEmptyFile() async throws {
        let origin = try OriginServer { _ in .respond(headers: ["Content-Type": "text/plain"], body: Data()) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": origin.url("/empty.txt")], destination: "empty.txt").int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("location") == daemon.downloadsRoot + "/empty.txt")
            #expect(FileSystemProbe.size(daemon.downloadsRoot + "/empty.txt") == 0)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(Array(types.suffix(3)) == ["didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
            let file = try await daemon.file(id)
            #expect(file.status == 200, "\(file)")
            #expect(file.body.isEmpty)
            let range = try await daemon.file(id, headers: ["Range": "bytes=0-"])
            #expect(range.status == 416, "\(range)")
            #expect(range.header("Content-Range") == "bytes */0")
        }
    }

    @Test func idleTimeoutLeavesNoPartialFile() async throws {
        let origin = try OriginServer { _ in .stallAfterHeaders(contentLength: 1 << 20, bodyPrefix: Data(repeating: 9, count: 10_000)) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/stall.bin"), "timeoutInterval": 1], destination: "stall.bin").int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "error.code") as? Int == -1001, "\(task["error"] ?? "")")
            #expect(task.value(at: "error.name") as? String == "timedOut")
            #expect(task.isNull("location"))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.downloadsRoot).isEmpty)
        }
    }

    @Test func suspendedAndResumedDownloadEndsByteIdentical() async throws {
        let payload = Data(count: 400_000) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        // Honours Range (a reconnect may ask for the rest), trickling what it sends.
        let slow = try OriginServer { request in
            switch OriginBehavior.ranged(payload, for: request, headers: ["ETag": "\"v1\""]) {
            case .respond(let status, let headers, let body):
                return .slowBody(status: status, headers: headers, body: body, bytesPerWrite: 8192, interval: .milliseconds(70))
            case let other:
                return other
            }
        }
        defer { slow.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": slow.url("/big.bin")], destination: "big.bin").int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didWriteData" && $0.int("taskId") == id }
            #expect(try await daemon.post("/v1/tasks/\(id)/suspend").status == 200)
            let paused = try await daemon.task(id)
            #expect(paused.string("state") == "suspended")
            let pausedAt = try #require(paused.value(at: "progress.bytesReceived") as? Int)
            #expect(pausedAt < payload.count, "the download ended before it was suspended")
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/big.bin"))
            #expect(try await daemon.file(id).errorCode == "task_not_completed")

            #expect(try await daemon.post("/v1/tasks/\(id)/resume").status == 200)
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.downloadsRoot + "/big.bin")) == payload)
            #expect(task.value(at: "progress.bytesReceived") as? Int == payload.count)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            let writes = try await daemon.allEvents(sid).filter { $0.int("taskId") == id && $0.string("type") == "didWriteData" }
            #expect(writes.last?.int("totalBytesWritten") == payload.count)
        }
    }

    /// URLSession fails a task suspended past its timeoutInterval; a download instead lets its
    /// connection go and, resumed, asks for the rest with a range (or, with no validator to make
    /// the range safe, for the whole resource again).
    @Test(arguments: [true, false])
    func aDownloadSuspendedPastItsTimeoutReconnectsOnResume(withValidator: Bool) async throws {
        let payload = Data(count: 400_000) { UInt8(truncatingIfNeeded: $0 &* 11 &+ $0 >> 9) }
        // The first answer trickles (about 3.4 s, so the suspend finds it running even when the
        // event reaches the test late); the reconnect is answered at once.
        let answers = Mutex(0)
        let slow = try OriginServer { request in
            switch OriginBehavior.ranged(payload, for: request, headers: withValidator ? ["ETag": "\"v1\""] : [:]) {
            case .respond(let status, let headers, let body):
                let first = answers.withLock { count in
                    count += 1
                    return count == 1
                }
                return first ? .slowBody(status: status, headers: headers, body: body, bytesPerWrite: 8192, interval: .milliseconds(70))
                             : .respond(status: status, headers: headers, body: body)
            case let other:
                return other
            }
        }
        defer { slow.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": ["timeoutIntervalForRequest": 1]]).string("id"))
            let id = try #require(try await daemon.downloadTask(in: sid, ["url": slow.url("/big.bin")], destination: "big.bin").int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didWriteData" && $0.int("taskId") == id }
            #expect(try await daemon.post("/v1/tasks/\(id)/suspend").status == 200)
            try await Task.sleep(for: .milliseconds(2500))
            let waiting = try await daemon.task(id)
            #expect(waiting.string("state") == "suspended", "\(waiting)")
            #expect(waiting.isNull("error"))
            let kept = FileSystemProbe.tree(daemon.dataPath + "/partial")
            #expect(kept.isEmpty != withValidator, "partial files: \(kept)")

            #expect(try await daemon.post("/v1/tasks/\(id)/resume").status == 200)
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.downloadsRoot + "/big.bin")) == payload)
            let requests = slow.requests
            #expect(requests.count == 2, "one request, then one reconnect: \(requests.count)")
            let range = requests.last?.header("Range")
            let resumes = try await daemon.allEvents(sid).filter { $0.int("taskId") == id && $0.string("type") == "didResumeAtOffset" }
            if withValidator {
                let offset = try #require(range.flatMap { Int($0.dropFirst("bytes=".count).prefix { $0.isNumber }) }, "no range: \(range ?? "nil")")
                #expect(offset > 0 && offset < payload.count)
                #expect(requests.last?.header("If-Range") == "\"v1\"")
                #expect(resumes.first?.int("fileOffset") == offset)
            } else {
                #expect(range == nil)
                #expect(resumes.isEmpty)
            }
        }
    }

    @Test func aCompletedDownloadIsServedAfterARestart() async throws {
        let payload = Data(count: 70_000) { UInt8(truncatingIfNeeded: $0 &* 5) }
        let origin = try OriginServer { _ in
            .respond(headers: ["Content-Disposition": "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"], body: payload)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { first in
            let named = try #require(try await first.downloadTask(["url": origin.url("/a")], destination: "kept/a.pdf").int("id"))
            let unnamed = try #require(try await first.downloadTask(["url": origin.url("/b")]).int("id"))
            let before = [try await first.waitForCompletion(named), try await first.waitForCompletion(unnamed)]
            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            for (id, old) in zip([named, unnamed], before) {
                let task = try await second.task(id)
                #expect(jsonEqual(task, old), "task \(id) changed across the restart: \(task)")
                let file = try await second.file(id)
                #expect(file.status == 200, "\(file)")
                #expect(file.body == payload)
                #expect(file.header("Content-Disposition") == ContentDisposition.attachment(filename: "résumé.pdf"))
            }
            #expect(try await second.task(unnamed).string("location")?.hasSuffix("/files/\(unnamed)/résumé.pdf") == true)
        }
    }

    /// A downloads root on another file system (tmpfs): the file is copied beside its final
    /// name and renamed, and no temporary file is left.
    @Test func aDownloadsRootOnAnotherFileSystem() async throws {
        let shm = "/dev/shm/transferd-downloadtests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: shm, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: shm) }
        let payload = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 11) }
        let origin = try OriginServer { _ in .respond(body: payload) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.downloadsDirectory = shm }) { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/x.bin")], destination: "sub/x.bin").int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("location") == shm + "/sub/x.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: shm + "/sub/x.bin")) == payload)
            #expect(FileSystemProbe.tree(shm) == ["sub", "sub/x.bin"])
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
        }
    }

    @Test func anotherTokensFileIsNotFound() async throws {
        let origin = try OriginServer { _ in .text("secret") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = ["token-one-0123456789", "token-two-0123456789"] }, token: "token-one-0123456789") { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/s.txt")]).int("id"))
            _ = try await daemon.waitForCompletion(id)
            #expect(try await daemon.file(id).text == "secret")
            let other = try await daemon.request("GET", "/v1/tasks/\(id)/file", token: "token-two-0123456789")
            #expect(other.status == 404, "\(other)")
            #expect(!other.text.contains("secret"))
        }
    }

    // MARK: Memory

    /// Four 16 MiB downloads at once: the daemon (in this process) must not hold the bodies.
    @Test func concurrentDownloadsKeepMemoryFlat() async throws {
        let nginx = try Peers.nginx()
        let original = try Peers.nginxDocumentRoot().appendingPathComponent("16MiB.bin").path
        let size = try #require(FileSystemProbe.size(original))
        let expected = try await sha256sum(original)
        try await DaemonFixture.with(exclusive: true) { daemon in
            // Warm up: the engine, the store and a first transfer allocate what they keep.
            let warm = try #require(try await daemon.downloadTask(["url": nginx + "/files/1MiB.bin"]).int("id"))
            _ = try await daemon.waitForCompletion(warm)
            let sampler = RSSSampler()
            let baseline = sampler.start()
            var ids: [Int] = []
            for index in 0..<4 {
                ids.append(try #require(try await daemon.downloadTask(["url": nginx + "/files/16MiB.bin"], destination: "copies/\(index).bin").int("id")))
            }
            for id in ids {
                let task = try await daemon.waitForCompletion(id, timeout: 120)
                #expect(task.isNull("error"), "\(task["error"] ?? "")")
                #expect(task.value(at: "progress.bytesReceived") as? Int == size)
            }
            let peak = sampler.stop()
            let growth = peak - baseline
            #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB (baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB) for 4 × 16 MiB downloads")
            for index in 0..<4 {
                #expect(try await sha256sum(daemon.downloadsRoot + "/copies/\(index).bin") == expected)
            }
        }
    }
}

// MARK: Helpers

extension DaemonFixture {
    var dataPath: String { configuration.service.dataDirectory }
    var downloadsRoot: String { configuration.service.downloadsRoot }

    /// Creates a download task for `request` (a RequestSpec), optionally with a destination.
    @discardableResult
    func downloadTask(
        in session: String = "shared",
        _ request: [String: Any],
        destination: String? = nil,
        extra: [String: Any] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        var body: [String: Any] = ["kind": "download", "request": request]
        if let destination { body["destination"] = destination }
        body.merge(extra) { _, new in new }
        return try await createTask(in: session, body, sourceLocation: sourceLocation)
    }

    /// GET /v1/tasks/{id}/file.
    func file(_ id: Int, headers: [String: String] = [:]) async throws -> APIResponse {
        try await request("GET", "/v1/tasks/\(id)/file", headers: headers, timeout: 60)
    }
}

/// What is on disk, for tests that check where files did (not) appear.
enum FileSystemProbe {
    /// Every path below `path` (folders and files, relative, sorted); empty when it does not exist.
    static func tree(_ path: String) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []).sorted()
    }

    static func size(_ path: String) -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (attributes[.size] as? NSNumber)?.intValue
    }
}

/// sha256sum of a file, computed by coreutils in a child process (nothing read into this one).
func sha256sum(_ path: String) async throws -> String {
    try await onThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let digest = String(decoding: output, as: UTF8.self).split(separator: " ").first else {
            throw CocoaError(.fileReadUnknown)
        }
        return String(digest)
    }
}

/// Samples this process's resident set size (VmRSS) every 10 ms on a thread of its own, and
/// returns the peak.
final class RSSSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = false
    private var peak = 0
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    /// VmRSS in bytes, from /proc/self/status.
    static func current() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kilobytes * 1024
    }

    /// Starts sampling; returns the RSS now (the baseline).
    func start() -> Int {
        let baseline = Self.current()
        lock.withLock {
            running = true
            peak = baseline
        }
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = Self.current()
                lock.withLock { peak = max(peak, now) }
                Thread.sleep(forTimeInterval: 0.01)
            }
            done.signal()
        }
        thread.name = "RSSSampler"
        self.thread = thread
        thread.start()
        return baseline
    }

    /// Stops sampling and returns the peak seen (including one last sample).
    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        let last = Self.current()
        return lock.withLock { max(peak, last) }
    }
}
