import Testing
import TestSupport
import TransferAPI

/// Every answer carries `X-Request-Id`: the client's when it is sane, else one the daemon made.
@Suite struct RequestIDTests {
    private static func isGenerated(_ id: String?) -> Bool {
        guard let id else { return false }
        return id.count == 16 && id.allSatisfy(\.isHexDigit)
    }

    @Test func aSaneIdIsEchoedAndOthersAreReplaced() async throws {
        try await DaemonFixture.with(configure: { $0.tokens = ["request-id-token"] }, token: "request-id-token") { daemon in
            let echoed = try await daemon.request("GET", "/v1/sessions", headers: ["X-Request-Id": "client-42.a:b_c"])
            #expect(echoed.header("X-Request-Id") == "client-42.a:b_c")
            // Refused before routing (401) still carries the id.
            let refused = try await daemon.request("GET", "/v1/sessions", headers: ["X-Request-Id": "no-token-1"], token: .some(nil))
            #expect(refused.status == 401 && refused.header("X-Request-Id") == "no-token-1")
            for insane in ["has space", "quote\"d", String(repeating: "a", count: 129), "x=1"] {
                let replaced = try await daemon.request("GET", "/healthz", headers: ["X-Request-Id": insane])
                #expect(Self.isGenerated(replaced.header("X-Request-Id")), "\(insane) -> \(replaced.header("X-Request-Id") ?? "none")")
            }
            let first = try await daemon.get("/healthz").header("X-Request-Id")
            let second = try await daemon.get("/healthz").header("X-Request-Id")
            #expect(Self.isGenerated(first) && Self.isGenerated(second) && first != second)
        }
    }
}
