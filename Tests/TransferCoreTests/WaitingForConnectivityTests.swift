import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// waitsForConnectivity: a task whose host cannot be reached waits (phase `waiting`, one
/// taskIsWaitingForConnectivity event) and tries again until it connects. Against a port that
/// nothing listens on until the test opens it; the tries, events and the resource deadline are
/// tested on a fake engine (`FakeEngineConnectivityTests`).
@Suite struct WaitingForConnectivityTests {
    @Test func aBackgroundSessionWaitsEvenWithoutTheSetting() async throws {
        // Held (refusing) until the host comes up, so no other test's server can take the port.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let port = refusing.port
        let harness = try ServiceHarness(RetryTests.fastRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.task(in: session, "http://127.0.0.1:\(port)/later")
        try #require(try await harness.waitFor(created.id, "waiting") { $0.phase == .waiting || $0.state == .completed }.phase == .waiting)
        refusing.close()
        let origin = try OriginServer(port: port) { _ in .text("up") }
        defer { origin.stop() }
        let task = try await harness.completion(created.id, timeout: 10)
        #expect(task.error == nil && task.response?.statusCode == 200)
    }

    @Test func aDownloadWaitingForItsHostKeepsItsPartialFile() async throws {
        let payload = randomBytes(200_000)
        let headers = ["ETag": "\"v1\""]
        // The host sends 80 000 bytes of 200 000, then goes away; it comes back on the same port.
        let first = try OriginServer { _ in .wrongLength(declared: payload.count, headers: headers, body: payload.prefix(80_000)) }
        let port = first.port
        let harness = try ServiceHarness {
            $0.retryBackoff = Backoff(base: 1, cap: 1)  // the retry comes after the host went away
            $0.connectivityBackoff = Backoff(base: 0.2, cap: 0.4)
        }
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.service.createTask(in: session, TaskCreate(kind: .download, request: RequestSpec(url: first.url("/file.bin"))), owner: nil)
        // Gone only once the 80 000 bytes are in (stopping at the first request raced the
        // response and sometimes left nothing to resume), and before the retry 1 s later.
        _ = try await harness.waitFor(created.id, "80 000 bytes") { $0.progress.bytesReceived >= 80_000 || $0.phase == .retrying || $0.state == .completed }
        first.stop()

        try #require(try await harness.waitFor(created.id, "waiting") { $0.phase == .waiting || $0.state == .completed }.phase == .waiting)
        let second = try OriginServer(port: port) { request in .ranged(payload, for: request, headers: headers) }
        defer { second.stop() }
        let task = try await harness.completion(created.id, timeout: 10)
        #expect(task.error == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(task.location))) == payload)
        #expect(second.requests.map { $0.header("Range") } == ["bytes=80000-"])
    }
}
