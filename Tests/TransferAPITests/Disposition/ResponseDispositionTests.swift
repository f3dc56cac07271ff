import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// A data task's declared `responseDisposition` (URLSession's didReceiveResponse answer): allow,
/// cancel, or becomeDownload by length, media type or status, judged at the final response; a
/// converted task goes on as a download (same id), its body never in memory nor in
/// didReceiveData, and continues as a download across a restart.
@Suite struct ResponseDispositionTests {
    static var becomeDownloadAbove10MiB: [String: Any] { ["rules": [["when": ["minLength": 10_485_760], "then": "becomeDownload"]]] }

    /// The task's event types, runs of the same type collapsed (progress events are coalesced,
    /// so how many there are is timing; their order is not).
    static func collapsedTypes(_ events: [[String: Any]], task id: Int) -> [String] {
        var types: [String] = []
        for type in events.filter({ $0.int("taskId") == id }).compactMap({ $0.string("type") }) where types.last != type {
            types.append(type)
        }
        return types
    }

    @Test func allowIsTheDefaultAndWhenNoRuleMatches() async throws {
        let payload = Data(count: 20_000) { UInt8(truncatingIfNeeded: $0 &* 31) }
        let origin = try OriginServer { _ in .respond(headers: ["Content-Type": "application/json"], body: payload) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let created = try await daemon.dataTask(in: sid, ["url": origin.url("/small")], extra: ["responseDisposition": Self.becomeDownloadAbove10MiB])
            let id = try #require(created.int("id"))
            #expect(created.value(at: "responseDisposition.default") as? String == "allow")
            let rules = try #require(created.value(at: "responseDisposition.rules") as? [[String: Any]])
            #expect(rules.count == 1 && rules[0].value(at: "when.minLength") as? Int == 10_485_760 && rules[0].string("then") == "becomeDownload")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("kind") == "data")
            #expect(try await daemon.body(id).body == payload)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(types == ["didReceiveResponse", "didReceiveData", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")

            // An explicit default allow with no rules is the same as none.
            let plain = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/plain")], extra: ["responseDisposition": ["default": "allow"]]).int("id"))
            #expect(try await daemon.waitForCompletion(plain).isNull("error"))
            #expect(try await daemon.body(plain).body == payload)
        }
    }

    @Test func cancelByMediaTypeOrStatusEndsCancelledWithoutABody() async throws {
        let page = Data(String(repeating: "<p>not this</p>", count: 20_000).utf8)
        let origin = try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/page": return .respond(headers: ["Content-Type": "text/HTML; charset=utf-8"], body: page)
            case "/gone": return .text("gone", status: 410)
            default: return .text("fine")
            }
        }
        defer { origin.stop() }
        let disposition: [String: Any] = ["rules": [
            ["when": ["mimeType": "text/html"], "then": "cancel"],
            ["when": ["statusCodes": [404, 410]], "then": "cancel"],
        ]]
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            for path in ["/page", "/gone"] {
                let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url(path)], extra: ["responseDisposition": disposition]).int("id"))
                let task = try await daemon.waitForCompletion(id)
                #expect(task.value(at: "error.code") as? Int == -999, "\(path): \(task["error"] ?? "")")
                #expect(task.value(at: "progress.bytesReceived") as? Int == 0, "\(path)")
                #expect(task.string("kind") == "data")
                let body = try await daemon.body(id)
                #expect(body.status == 409 && body.errorCode == "no_body", "\(path): \(body)")
                let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
                #expect(types == ["didReceiveResponse", "didFinishCollectingMetrics", "didCompleteWithError"], "\(path): \(types)")
            }
            // Neither rule holds: allowed.
            let fine = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/fine")], extra: ["responseDisposition": disposition]).int("id"))
            #expect(try await daemon.waitForCompletion(fine).isNull("error"))
            #expect(try await daemon.body(fine).text == "fine")
        }
    }

    @Test func becomeDownloadByLengthWritesTheBodyToAFileAsADownload() async throws {
        let nginx = try Peers.nginx()
        let original = try Peers.nginxDocumentRoot().appendingPathComponent("16MiB.bin")
        let size = try #require(FileSystemProbe.size(original.path))
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let created = try await daemon.dataTask(in: sid, ["url": nginx + "/files/16MiB.bin"], extra: ["responseDisposition": Self.becomeDownloadAbove10MiB])
            let id = try #require(created.int("id"))
            #expect(created.string("kind") == "data")
            let task = try await daemon.waitForCompletion(id, timeout: 60)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("kind") == "download")
            let location = try #require(task.string("location"))
            #expect(location == daemon.dataPath + "/files/\(id)/16MiB.bin")
            #expect(try await sha256sum(location) == (try await sha256sum(original.path)))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)

            let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }
            #expect(Self.collapsedTypes(events, task: id) == [
                "didReceiveResponse", "didBecomeDownloadTask", "didWriteData", "didFinishDownloadingTo",
                "didFinishCollectingMetrics", "didCompleteWithError",
            ], "\(events.compactMap { $0.string("type") })")
            #expect(events.filter { $0.string("type") == "didBecomeDownloadTask" }.count == 1)
            #expect(events.first { $0.string("type") == "didBecomeDownloadTask" }?.int("downloadTaskId") == id)
            let writes = events.filter { $0.string("type") == "didWriteData" }
            #expect(writes.compactMap { $0.int("bytesWritten") }.reduce(0, +) == size)
            #expect(writes.allSatisfy { $0.int("totalBytesExpectedToWrite") == size })

            // The download endpoints serve it; the data endpoint says where it went.
            let file = try await daemon.file(id)
            #expect(file.status == 200 && file.body.count == size)
            let body = try await daemon.body(id)
            #expect(body.status == 409 && body.errorCode == "no_body", "\(body)")
        }
    }

    @Test func becomeDownloadByMediaTypeWildcardWhenTheLengthIsUnknown() async throws {
        let chunks = (0..<24).map { index in Data(count: 65_536) { UInt8(truncatingIfNeeded: $0 &+ index &* 7) } }
        let whole = chunks.reduce(Data(), +)
        let origin = try OriginServer { _ in .chunked(headers: ["Content-Type": "video/mp4"], chunks: chunks) }
        defer { origin.stop() }
        // minLength never matches a chunked response: the media type rule decides.
        let disposition: [String: Any] = ["default": "cancel", "rules": [
            ["when": ["minLength": 0], "then": "cancel"],
            ["when": ["mimeType": "VIDEO/*"], "then": "becomeDownload"],
        ]]
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/clip.mp4")], extra: ["responseDisposition": disposition]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("kind") == "download")
            #expect(task.value(at: "response.expectedContentLength") is NSNull)
            let location = try #require(task.string("location"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == whole)
            let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }
            #expect(Self.collapsedTypes(events, task: id) == [
                "didReceiveResponse", "didBecomeDownloadTask", "didWriteData", "didFinishDownloadingTo",
                "didFinishCollectingMetrics", "didCompleteWithError",
            ], "\(events.compactMap { $0.string("type") })")
            #expect(events.filter { $0.string("type") == "didWriteData" }.allSatisfy { $0["totalBytesExpectedToWrite"] is NSNull })
        }
    }

    @Test func aFileURLBecomesADownloadToo() async throws {
        let root = try TempDirectory(prefix: "transferd-disposition-root")
        defer { root.remove() }
        let payload = Data(count: 3_000_000) { UInt8(truncatingIfNeeded: $0 &* 11 &+ 1) }
        try payload.write(to: root.file("big.bin"))
        try await DaemonFixture.with(configure: { $0.service.fileURLRoots = [root.path] }) { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let disposition: [String: Any] = ["rules": [["when": ["minLength": 1_000_000], "then": "becomeDownload"]]]
            let id = try #require(try await daemon.dataTask(in: sid, ["url": "file://" + root.file("big.bin").path], extra: ["responseDisposition": disposition]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("kind") == "download")
            let location = try #require(task.string("location"))
            #expect(location == daemon.dataPath + "/files/\(id)/big.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == payload)
            let events = try await daemon.allEvents(sid)
            #expect(Self.collapsedTypes(events, task: id) == [
                "didReceiveResponse", "didBecomeDownloadTask", "didWriteData", "didFinishDownloadingTo",
                "didFinishCollectingMetrics", "didCompleteWithError",
            ], "\(events.compactMap { $0.string("type") })")
        }
    }

    struct InvalidCase: Sendable, CustomTestStringConvertible {
        let name: String
        let kind: String
        /// JSON text of the responseDisposition field.
        let disposition: String
        let code: String
        let field: String
        let says: String
        var testDescription: String { name }
    }

    static let invalidCases: [InvalidCase] = [
        InvalidCase(name: "becomeStream", kind: "data", disposition: #"{"default": "becomeStream"}"#, code: "invalid_response_disposition", field: "responseDisposition.default", says: "decide the response live"),
        InvalidCase(name: "unknown action", kind: "data", disposition: #"{"rules": [{"when": {"minLength": 1}, "then": "download"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].then", says: "becomeDownload"),
        InvalidCase(name: "empty condition", kind: "data", disposition: #"{"rules": [{"when": {}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when", says: "minLength, mimeType or statusCodes"),
        InvalidCase(name: "no then", kind: "data", disposition: #"{"rules": [{"when": {"minLength": 1}}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].then", says: "required"),
        InvalidCase(name: "no when", kind: "data", disposition: #"{"rules": [{"then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when", says: "required"),
        InvalidCase(name: "negative length", kind: "data", disposition: #"{"rules": [{"when": {"minLength": -1}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.minLength", says: "whole number"),
        InvalidCase(name: "fractional length", kind: "data", disposition: #"{"rules": [{"when": {"minLength": 1.5}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.minLength", says: "whole number"),
        InvalidCase(name: "media type without subtype", kind: "data", disposition: #"{"rules": [{"when": {"mimeType": "video"}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.mimeType", says: "type/*"),
        InvalidCase(name: "media type with parameters", kind: "data", disposition: #"{"rules": [{"when": {"mimeType": "text/html; charset=utf-8"}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.mimeType", says: "without parameters"),
        InvalidCase(name: "wildcard type only", kind: "data", disposition: #"{"rules": [{"when": {"mimeType": "*/html"}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.mimeType", says: "type/*"),
        InvalidCase(name: "status out of range", kind: "data", disposition: #"{"rules": [{"when": {"statusCodes": [99]}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.statusCodes", says: "100 to 599"),
        InvalidCase(name: "no status codes", kind: "data", disposition: #"{"rules": [{"when": {"statusCodes": []}, "then": "cancel"}]}"#, code: "invalid_response_disposition", field: "responseDisposition.rules[0].when.statusCodes", says: "1 to 100"),
        InvalidCase(name: "too many rules", kind: "data", disposition: #"{"rules": ["# + Array(repeating: #"{"when": {"minLength": 1}, "then": "cancel"}"#, count: 17).joined(separator: ",") + "]}", code: "invalid_response_disposition", field: "responseDisposition.rules", says: "at most 16"),
        InvalidCase(name: "unknown key in a rule", kind: "data", disposition: #"{"rules": [{"when": {"minLength": 1}, "then": "cancel", "else": "allow"}]}"#, code: "unknown_field", field: "responseDisposition.rules[0].else", says: "not a known field"),
        InvalidCase(name: "unknown condition", kind: "data", disposition: #"{"rules": [{"when": {"maxLength": 1}, "then": "cancel"}]}"#, code: "unknown_field", field: "responseDisposition.rules[0].when.maxLength", says: "not a known field"),
        InvalidCase(name: "null default", kind: "data", disposition: #"{"default": null}"#, code: "invalid_type", field: "responseDisposition.default", says: "null"),
        InvalidCase(name: "null rules", kind: "data", disposition: #"{"rules": null}"#, code: "invalid_type", field: "responseDisposition.rules", says: "null"),
        InvalidCase(name: "null disposition", kind: "data", disposition: "null", code: "invalid_type", field: "responseDisposition", says: "null"),
        InvalidCase(name: "not an object", kind: "data", disposition: #""becomeDownload""#, code: "invalid_type", field: "responseDisposition", says: "must be an object"),
        InvalidCase(name: "download task", kind: "download", disposition: #"{"default": "allow"}"#, code: "invalid_response_disposition", field: "responseDisposition", says: "data tasks only"),
        InvalidCase(name: "upload task", kind: "upload", disposition: #"{"default": "cancel"}"#, code: "invalid_response_disposition", field: "responseDisposition", says: "data tasks only"),
    ]

    @Test(arguments: invalidCases)
    func invalidDispositionsAreRefusedWithAClearError(item: InvalidCase) async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let body = #"{"kind": "\#(item.kind)", "request": {"url": "http://127.0.0.1:9/x", "method": "PUT", "body": {"text": "x"}}, "responseDisposition": \#(item.disposition)}"#
            let response = try await daemon.request("POST", "/v1/sessions/\(sid)/tasks", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == item.code, "\(response)")
            #expect(response.error?.string("field") == item.field, "\(response)")
            #expect(response.error?.string("message")?.contains(item.says) == true, "\(response)")
            // Nothing was created.
            let tasks = try await daemon.get("/v1/sessions/\(sid)/tasks").object()
            #expect((tasks["items"] as? [Any])?.isEmpty == true, "\(tasks)")
        }
    }

    /// Killed mid-download after the conversion, a background session's task continues as a
    /// download from its checkpoint (a ranged request), not as a data task from zero.
    @Test func aConvertedDownloadContinuesAsADownloadAfterARestart() async throws {
        let nginx = try Peers.nginx()
        let original = try Peers.nginxDocumentRoot().appendingPathComponent("1MiB.bin")
        let size = try #require(FileSystemProbe.size(original.path))
        try await DaemonFixture.with { first in
            let sid = try #require(try await first.createSession(["kind": "background", "identifier": "com.example.disposition"]).string("id"))
            let disposition: [String: Any] = ["rules": [["when": ["mimeType": "application/*"], "then": "becomeDownload"]]]
            // /slower/ is 64 KiB/s: about 16 s for the whole file. At /slow/'s 256 KiB/s the rest
            // (3.6 s after 100 KB) finished before the restart twice in full runs on two cores.
            let id = try #require(try await first.dataTask(in: sid, ["url": nginx + "/slower/1MiB.bin"], extra: ["responseDisposition": disposition]).int("id"))
            // Past a checkpoint (one a second) with most of the file still to come.
            try await first.waitForTask(id, timeout: 30) { ($0.value(at: "progress.bytesReceived") as? Int ?? 0) >= 100_000 }
            try await Task.sleep(for: .milliseconds(1100))
            let before = try await first.task(id)
            #expect(before.string("kind") == "download")
            #expect(before.string("state") == "running")
            first.stop()

            let second = try first.restarted()
            defer { second.stop() }
            let task = try await second.waitForCompletion(id, timeout: 60)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.string("kind") == "download")
            let location = try #require(task.string("location"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == (try Data(contentsOf: original)))
            let events = try await second.allEvents(sid).filter { $0.int("taskId") == id }
            let types = events.compactMap { $0.string("type") }
            #expect(types.filter { $0 == "didBecomeDownloadTask" }.count == 1, "\(types)")
            #expect(!types.contains("didReceiveData"), "\(types)")
            let resumed = try #require(events.first { $0.string("type") == "didResumeAtOffset" }, "\(types)")
            let offset = try #require(resumed.int("fileOffset"))
            #expect(offset > 0 && offset < size, "\(resumed)")
            #expect(resumed.int("expectedTotalBytes") == size)
            #expect(Array(types.suffix(3)) == ["didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
            #expect(Self.collapsedTypes(events, task: id).prefix(3) == ["didReceiveResponse", "didBecomeDownloadTask", "didWriteData"], "\(types)")
        }
    }
}
