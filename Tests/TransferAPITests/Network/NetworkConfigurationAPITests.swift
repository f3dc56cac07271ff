import Foundation
import Testing
import TestSupport

/// The proxy and TLS fields of a session's configuration through the API: 422 naming the
/// field, a proxy password that is never served nor echoed yet survives a restart.
@Suite struct NetworkConfigurationAPITests {
    /// (configuration JSON, field, code): arguments are strings, as test arguments must be Sendable.
    @Test(arguments: [
        (#"{"connectionProxyDictionary": {"HTTPProxyHost": "p"}}"#, "configuration.connectionProxyDictionary.HTTPProxyHost", "invalid_value"),
        (#"{"connectionProxyDictionary": {"SOCKSPort": "1080"}}"#, "configuration.connectionProxyDictionary.SOCKSPort", "invalid_value"),
        (#"{"connectionProxyDictionary": {"HTTPSEnable": 1, "HTTPSPort": 3128}}"#, "configuration.connectionProxyDictionary.HTTPSProxy", "invalid_value"),
        (#"{"connectionProxyDictionary": {"ExceptionsList": ["ok", "a*b"]}}"#, "configuration.connectionProxyDictionary.ExceptionsList[1]", "invalid_value"),
        (#"{"connectionProxyDictionary": {"ProxyAutoConfigURLString": "http://wpad/wpad.dat"}}"#, "configuration.connectionProxyDictionary.ProxyAutoConfigURLString", "not_implemented"),
        (#"{"tlsCABundle": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}"#, "configuration.tlsCABundle", "invalid_value"),
        (#"{"tlsPinnedPublicKeys": ["sha256//abc"]}"#, "configuration.tlsPinnedPublicKeys[0]", "invalid_value"),
    ])
    func badNetworkSettingsAre422NamingTheField(configuration: String, field: String, code: String) async throws {
        let json = try JSONSerialization.jsonObject(with: Data(configuration.utf8))
        try await DaemonFixture.with { daemon in
            let before = try await daemon.get("/v1/sessions").object()
            let response = try await daemon.post("/v1/sessions", json: ["configuration": json])
            #expect(response.status == 422, "\(response)")
            #expect(response.error?.string("field") == field)
            #expect(response.errorCode == code)
            #expect(jsonEqual(try await daemon.get("/v1/sessions").object()["items"], before["items"]), "a refused session was created")
        }
    }

    @Test func theProxyPasswordIsWriteOnlyAndSurvivesARestart() async throws {
        let proxy = try Peers.authenticatingHTTPProxy()
        let (username, password) = try Peers.proxyCredentials()
        let url = try Peers.nginx() + "/files/hello.txt"
        try await DaemonFixture.with { first in
            // Never echoed, even in a refusal.
            let refused = try await first.post("/v1/sessions", json: ["configuration": ["connectionProxyDictionary": [
                "HTTPProxyUsername": "bad:name", "HTTPProxyPassword": password]]])
            #expect(refused.status == 422 && !refused.text.contains(password))

            let created = try await first.post("/v1/sessions", json: ["configuration": ["connectionProxyDictionary": [
                "HTTPEnable": 1, "HTTPProxy": proxy.host, "HTTPPort": proxy.port, "HTTPProxyUsername": username, "HTTPProxyPassword": password,
            ]]])
            #expect(created.status == 201 && !created.text.contains(password))
            let session = try #require(try created.object().string("id"))
            let served = try await first.get("/v1/sessions/\(session)")
            #expect(!served.text.contains(password), "GET served the password")
            let proxies = try #require(try served.object().value(at: "configuration.connectionProxyDictionary") as? [String: Any])
            #expect(proxies["HTTPProxyUsername"] as? String == username)
            #expect(proxies["HTTPProxyPassword"] == nil, "the password key is absent, not a placeholder")
            #expect(!(try await first.get("/v1/sessions").text.contains(password)))
            #expect(try await first.run("data", url, in: session).object("response")?.int("statusCode") == 200)

            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            // The stored record kept the password: the proxy still lets the session through.
            let after = try await second.run("data", url, in: session)
            #expect(after.object("response")?.int("statusCode") == 200, "\(after)")
            #expect(!(try await second.get("/v1/sessions/\(session)").text.contains(password)))
        }
    }
}
