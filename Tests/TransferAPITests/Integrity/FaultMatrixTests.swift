import Foundation
import Synchronization
import Testing
import TestSupport

/// Issue 15's fault matrix: an origin that misbehaves on purpose, once for a download task and
/// once for a data task. Each ends in a byte-identical result or a clear URLError, never in a
/// success with wrong bytes, and the daemon answers afterwards with no partial file left.
@Suite struct FaultMatrixTests {
    static let body = Data(count: 96 * 1024) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
    static let gzipped = GzipTool.compress(body)

    /// What the task must end with.
    enum Expected: Sendable, CustomStringConvertible {
        case identical
        case error(code: Int)
        /// A data task completes with this status as its response (URLSession's model).
        case status(Int)

        var description: String {
            switch self {
            case .identical: "identical"
            case .error(let code): "error \(code)"
            case .status(let status): "status \(status)"
            }
        }
    }

    /// One misbehaviour, and what a download and a data task must end with.
    struct Fault: Sendable, CustomTestStringConvertible {
        let name: String
        let behavior: @Sendable (OriginRequest) -> OriginBehavior
        let download: Expected
        let data: Expected
        var testDescription: String { name }
    }

    static let faults: [Fault] = [
        Fault(name: "reset mid-body", behavior: { _ in .resetMidBody(afterBytes: 40_000, body: body) },
              download: .error(code: -1005), data: .error(code: -1005)),
        Fault(name: "stall mid-body", behavior: { _ in .stallAfterHeaders(contentLength: body.count, bodyPrefix: body.prefix(10_000)) },
              download: .error(code: -1001), data: .error(code: -1001)),
        Fault(name: "short body with Content-Length", behavior: { _ in .wrongLength(declared: body.count + 1, body: body) },
              download: .error(code: -1005), data: .error(code: -1005)),
        Fault(name: "chunked body cut", behavior: { _ in .chunkedCut(chunks: [body.prefix(30_000), body.dropFirst(30_000).prefix(30_000)]) },
              download: .error(code: -1005), data: .error(code: -1005)),
        Fault(name: "gzip body cut, Content-Length matching the cut", behavior: { _ in
                  .respond(headers: ["Content-Encoding": "gzip"], body: gzipped.prefix(gzipped.count * 2 / 3)) },
              download: .error(code: -1016), data: .error(code: -1016)),
        Fault(name: "gzip body that is not gzip", behavior: { _ in .respond(headers: ["Content-Encoding": "gzip"], body: body) },
              download: .error(code: -1016), data: .error(code: -1016)),
        Fault(name: "gzip body, whole", behavior: { _ in .respond(headers: ["Content-Encoding": "gzip"], body: gzipped) },
              download: .identical, data: .identical),
        Fault(name: "503 with Retry-After", behavior: { _ in .text("busy", status: 503, headers: ["Retry-After": "1"]) },
              download: .error(code: -1100), data: .status(503)),
        Fault(name: "429 with Retry-After", behavior: { _ in .text("slow down", status: 429, headers: ["Retry-After": "1"]) },
              download: .error(code: -1100), data: .status(429)),
        Fault(name: "redirect loop", behavior: { _ in .redirect(to: "/loop") },
              download: .error(code: -1007), data: .error(code: -1007)),
        Fault(name: "206 to a request without Range", behavior: { _ in
                  .respond(status: 206, headers: ["Content-Range": "bytes 0-999/\(body.count)"], body: body.prefix(1000)) },
              download: .error(code: -1011), data: .status(206)),
        Fault(name: "1 MB header line", behavior: { _ in .respond(headers: ["X-Big": String(repeating: "a", count: 1_000_000)], body: body) },
              download: .error(code: -1011), data: .error(code: -1011)),
        Fault(name: "300 KB of header lines", behavior: { _ in
                  var headers: [String: String] = [:]
                  for index in 0..<300 { headers["X-Filler-\(index)"] = String(repeating: "b", count: 1000) }
                  return .respond(headers: headers, body: body) },
              download: .error(code: -1011), data: .error(code: -1011)),
        Fault(name: "1 byte/s trickle", behavior: { _ in .slowBody(body: Self.trickled, bytesPerWrite: 1, interval: .seconds(1)) },
              download: .identical, data: .identical),
    ]

    /// The trickle's body: five bytes a second apart, so the whole answer (5 s) outlasts the 3 s
    /// idle timeout that no single gap reaches.
    private static let trickled = Data("tick!".utf8)

    /// Bytes the fault's origin serves when the task succeeds.
    private static func expectedBytes(_ fault: Fault) -> Data {
        fault.name == "1 byte/s trickle" ? Self.trickled : body
    }

    @Test(arguments: faults)
    func downloadEndsIdenticalOrWithAClearError(_ fault: Fault) async throws {
        try await run(fault, kind: "download", expected: fault.download)
    }

    @Test(arguments: faults)
    func dataTaskEndsIdenticalOrWithAClearError(_ fault: Fault) async throws {
        try await run(fault, kind: "data", expected: fault.data)
    }

    private func run(_ fault: Fault, kind: String, expected: Expected) async throws {
        let origin = try OriginServer(handler: fault.behavior)
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            // A 3 s idle timeout: the trickle (a byte a second) must pass it, the stall must not.
            let sid = try #require(try await daemon.createSession(["configuration": ["timeoutIntervalForRequest": 3]]).string("id"))
            let sampler = RSSSampler()
            let before = sampler.start()
            let created = try await daemon.createTask(in: sid, ["kind": kind, "request": ["url": origin.url("/fault")]])
            let id = try #require(created.int("id"))
            let task = try await daemon.waitForCompletion(id, timeout: 30)
            let peak = sampler.stop()
            // The bodies here are 96 KiB and heads at most 1 MB: nothing may make the daemon hold much more.
            #expect(peak - before < 64 << 20, "\(fault.name): RSS grew by \((peak - before) >> 20) MiB")
            let error = task.object("error")
            switch expected {
            case .identical:
                #expect(error == nil, "\(fault.name): \(error ?? [:])")
                let bytes = kind == "download" ? try await daemon.file(id).body : try await daemon.body(id).body
                #expect(bytes == Self.expectedBytes(fault), "\(fault.name): \(bytes.count) bytes")
            case .error(let code):
                #expect(error?.int("code") == code, "\(fault.name): \(error ?? [:])")
                #expect((error?.string("message") ?? "").count > 10, "\(fault.name): the error says what happened")
                if kind == "download" {
                    #expect(task.isNull("location"), "\(fault.name): a failed download has no file")
                    #expect(try await daemon.file(id).status == 409, "\(fault.name): no file is served")
                }
            case .status(let status):
                #expect(error == nil, "\(fault.name): \(error ?? [:])")
                #expect(task.value(at: "response.statusCode") as? Int == status)
            }
            // A failure that carries resume data keeps its partial file for it; nothing else does.
            if error?.string("resumeData") == nil {
                #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty, "\(fault.name): partial files left")
            }
            #expect(try await daemon.get("/readyz").status == 200, "\(fault.name): the daemon still serves")
        }
    }

    /// A malformed head is the server's fault and will not pass by trying again: background
    /// sessions, which retry lost connections, do not retry it (the 300 KB head was once
    /// networkConnectionLost, retried forever).
    @Test func anOversizedHeadIsNotRetriedByABackgroundSession() async throws {
        let origin = try OriginServer { _ in
            var headers: [String: String] = [:]
            for index in 0..<300 { headers["X-Filler-\(index)"] = String(repeating: "c", count: 1000) }
            return .respond(headers: headers, body: Self.body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["kind": "background", "identifier": "heads"]).string("id"))
            let id = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": origin.url("/big-head")]]).int("id"))
            let task = try await daemon.waitForCompletion(id, timeout: 20)
            #expect(task.object("error")?.int("code") == -1011)
            #expect(origin.requests.count == 1, "tried \(origin.requests.count) times")
        }
    }
}
