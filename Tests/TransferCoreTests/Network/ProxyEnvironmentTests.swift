import Foundation
import Glibc
import TestSupport
import Testing

/// The real executable with http_proxy, https_proxy and all_proxy set in its environment: a
/// session without connectionProxyDictionary still connects directly (the environment is never
/// read), while one with a dictionary goes through the proxy it names.
@Suite struct ProxyEnvironmentTests {
    private static let json = ["Content-Type": "application/json"]

    /// Runs a data task for `url` in `session` and returns the completed task.
    private func run(_ client: TestHTTPClient, session: String, url: String) async throws -> [String: Any] {
        let body = try JSONSerialization.data(withJSONObject: ["kind": "data", "request": ["url": url]])
        let created = try await client.sendAsync("POST", "/v1/sessions/\(session)/tasks", headers: Self.json, body: body)
        let id = try #require(try created.jsonObject()["id"] as? Int, "\(created)")
        try await pollTask(client, id, timeout: 20, wait: 5) { $0["state"] as? String == "completed" }
        return try await client.sendAsync("GET", "/v1/tasks/\(id)").jsonObject()
    }

    @Test func proxyEnvironmentVariablesAreIgnored() async throws {
        let proxy = try Peers.httpProxy()
        let nginx = try Peers.nginx()
        let address = "http://\(proxy.host):\(proxy.port)"
        let folder = try TempDirectory(prefix: "transferd-coretests-proxyenv")
        defer { folder.remove() }
        let daemon = try await DaemonProcess.start(dataDirectory: folder.path, environment: [
            "http_proxy": address, "HTTP_PROXY": address, "https_proxy": address, "HTTPS_PROXY": address, "all_proxy": address, "ALL_PROXY": address,
        ])
        defer { daemon.terminate() }
        let client = TestHTTPClient(port: daemon.port)
        let mark = proxy.log.mark()
        let direct = "\(nginx)/files/hello.txt?probe=\(UUID().uuidString)"
        #expect((try await run(client, session: "shared", url: direct))["error"] is NSNull)

        // The control: the same process reaches the proxy when a session names it.
        let configuration = ["configuration": ["connectionProxyDictionary": ["HTTPEnable": 1, "HTTPProxy": proxy.host, "HTTPPort": proxy.port]]]
        let created = try await client.sendAsync("POST", "/v1/sessions", headers: Self.json, body: try JSONSerialization.data(withJSONObject: configuration))
        let session = try #require(try created.jsonObject()["id"] as? String, "\(created)")
        let proxied = "\(nginx)/files/hello.txt?probe=\(UUID().uuidString)"
        #expect((try await run(client, session: session, url: proxied))["error"] is NSNull)
        #expect(await proxy.log.waitForLine(containing: proxied, since: mark) != nil)
        #expect(!proxy.log.lines(since: mark).contains { $0.contains(direct) }, "the environment's proxy was used")
    }
}
