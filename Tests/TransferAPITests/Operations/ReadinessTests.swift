import Foundation
import Testing
import TestSupport
@testable import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService
import HTTPServer

/// `GET /readyz`: 200 only while the daemon accepts work, its store is open and its engine thread
/// runs; 503 with a JSON error naming what is missing otherwise.
@Suite struct ReadinessTests {
    @Test func readyWhileRunning() async throws {
        try await DaemonFixture.with { daemon in
            let ready = try await daemon.get("/readyz")
            #expect(ready.status == 200)
            #expect(try ready.object().string("status") == "ready")
        }
    }

    @Test func notReadyOnceShutdownBegins() async throws {
        try await DaemonFixture.with { daemon in
            daemon.daemon.service.beginShutdown()
            let answer = try await daemon.get("/readyz")
            #expect(answer.status == 503)
            #expect(answer.errorCode == "shutting_down")
            // Liveness is another question: the process still serves HTTP.
            #expect(try await daemon.get("/healthz").status == 200)
        }
    }

    @Test func notReadyWhenTheStoreIsClosed() async throws {
        try await DaemonFixture.with { daemon in
            daemon.daemon.service.store.close()
            let answer = try await daemon.get("/readyz")
            #expect(answer.status == 503)
            #expect(answer.errorCode == "not_ready")
            #expect(answer.error?.string("message")?.contains("store") == true, "\(answer)")
        }
    }

    /// A service whose engine thread was never started (and one whose engine stopped) is not ready.
    @Test func notReadyWithoutTheEngineThread() throws {
        let directory = try TempDirectory(prefix: "transferd-apitest-ready")
        defer { directory.remove() }
        let service = try TransferService(configuration: ServiceConfiguration(dataDirectory: directory.path))
        let handler = APIHandler(service: service, authenticator: Authenticator(tokens: []))
        func readyz() -> HTTPResponse? {
            guard case .now(let response) = handler.route(HTTPRequest(head: HTTPRequestHead(id: 1, method: "GET", path: "/readyz"))) else { return nil }
            return response
        }
        #expect(service.readiness == .engineStopped)
        let refused = try #require(readyz())
        #expect(refused.status == 503)
        guard case .data(let body) = refused.body else { Issue.record("no body"); return }
        #expect(String(decoding: body, as: UTF8.self).contains("\"not_ready\""))
        service.start()
        #expect(service.readiness == .ready)
        #expect(readyz()?.status == 200)
        service.stop()
        #expect(service.readiness == .shuttingDown)
    }
}
