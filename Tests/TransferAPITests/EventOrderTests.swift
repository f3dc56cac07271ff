import Foundation
import Testing
import TestSupport

/// The delegate callbacks of URLSESSION.md, in its order per task: (body stream, send
/// progress), response, redirect, resume offset, data or written bytes, finish location,
/// completion; and didBecomeInvalid after the last of them.
@Suite struct EventOrderTests {
    // Trickled (4 KiB every 40 ms) and 1 MiB long, so the cancel lands long before its end even on
    // a loaded machine (256 KiB every 8 ms left 0.4 s: the full test command once missed it).
    static let fileSize = 1024 * 1024
    static let file = Data(count: fileSize) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) }
    static let etag = "\"order-v1\""

    /// A task's event types with runs of one type written once with "+" (didReceiveData+).
    private static func pattern(_ events: [[String: Any]], task: Int) -> [String] {
        var result: [String] = []
        for type in events.filter({ $0.int("taskId") == task }).compactMap({ $0.string("type") }) {
            if result.last == type || result.last == type + "+" {
                result[result.count - 1] = type + "+"
            } else {
                result.append(type)
            }
        }
        return result
    }

    @Test func everyCallbackArrivesInURLSessionsOrder() async throws {
        let chunks = (0..<4).map { Data(repeating: UInt8(97 + $0), count: 2000) }
        let origin = try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/moved": return .redirect(to: "/target", status: 302)
            case "/target": return .chunked(headers: ["Content-Type": "text/plain"], chunks: chunks, interval: .milliseconds(150))
            case "/upload": return .text("got \(request.body.count)")
            case "/file.bin" where request.header("Range") == nil:
                return .slowBody(headers: ["ETag": Self.etag], body: Self.file, bytesPerWrite: 4096, interval: .milliseconds(40))
            case "/file.bin": return .ranged(Self.file, for: request, headers: ["ETag": Self.etag])
            default: return .respond(status: 404)
            }
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let redirected = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/moved")]).int("id"))
            let upload = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0) }
            let uploaded = try #require(try await daemon.createTask(in: sid, [
                "kind": "upload", "request": ["url": origin.url("/upload"), "method": "POST", "body": ["base64": upload.base64EncodedString()]],
            ]).int("id"))
            let cut = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": origin.url("/file.bin")]]).int("id"))
            try await daemon.waitForTask(cut) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= 64 * 1024 }
            let cancelled = try await daemon.post("/v1/tasks/\(cut)/cancel", json: ["produceResumeData": true]).object()
            let resumeData = try #require(cancelled.object("error")?.string("resumeData"))
            let resumed = try #require(try await daemon.createTask(in: sid, ["kind": "download", "resumeData": resumeData]).int("id"))
            for id in [redirected, uploaded, resumed] { #expect(try await daemon.waitForCompletion(id).isNull("error")) }
            #expect(try await daemon.post("/v1/sessions/\(sid)/invalidate").status == 200)
            let events = try await daemon.waitForEvent(sid) { $0.string("type") == "didBecomeInvalid" }

            // A response that may be stored in the URL cache is announced after its data.
            #expect(Self.pattern(events, task: redirected) == ["willPerformHTTPRedirection", "didReceiveResponse", "didReceiveData+", "willCacheResponse", "didFinishCollectingMetrics", "didCompleteWithError"])
            #expect(Self.pattern(events, task: uploaded) == ["didSendBodyData+", "didReceiveResponse", "didReceiveData", "didFinishCollectingMetrics", "didCompleteWithError"])
            #expect(Self.pattern(events, task: cut) == ["didReceiveResponse", "didWriteData+", "didFinishCollectingMetrics", "didCompleteWithError"])
            // The rest arrives at once: one coalesced didWriteData or several.
            #expect(Self.pattern(events, task: resumed).map { $0.replacingOccurrences(of: "+", with: "") } == ["didReceiveResponse", "didResumeAtOffset", "didWriteData", "didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"])
            let redirect = try #require(events.first { $0.int("taskId") == redirected })
            #expect(redirect.int("statusCode") == 302 && redirect.string("newURL") == origin.url("/target"))
            let resume = try #require(events.first { $0.int("taskId") == resumed && $0.string("type") == "didResumeAtOffset" })
            #expect((resume.int("fileOffset") ?? 0) >= 64 * 1024)
            #expect(resume.int("expectedTotalBytes") == Self.fileSize)
            #expect(try await daemon.get("/v1/tasks/\(resumed)/file").body == Self.file)
            // The session's own event comes once, after every task's completion.
            #expect(events.filter { $0.string("type") == "didBecomeInvalid" }.count == 1)
            #expect(events.last?.string("type") == "didBecomeInvalid" && events.last?.isNull("taskId") == true)
        }
    }
}
