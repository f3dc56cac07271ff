import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// connectionProxyDictionary as a client writes it: Apple's keys, validated one by one, 422
/// naming the key on anything wrong, and passwords that are stored but never served.
@Suite struct ProxyDictionaryTests {
    private func configuration(_ proxies: String) throws -> SessionConfiguration {
        try JSONCoding.decoder.decode(SessionConfiguration.self, from: Data("{\"connectionProxyDictionary\": \(proxies)}".utf8))
    }

    /// The InputError decoding `proxies` throws (or a recorded issue).
    private func refusal(_ proxies: String, sourceLocation: SourceLocation = #_sourceLocation) -> InputError? {
        #expect(throws: InputError.self, sourceLocation: sourceLocation) { try configuration(proxies) }
    }

    @Test func acceptsApplesKeysWithNumbersOrBooleansForFlags() throws {
        let proxies = try #require(try configuration("""
            {"HTTPEnable": 1, "HTTPProxy": "proxy.internal", "HTTPPort": 3128,
             "HTTPSEnable": true, "HTTPSProxy": "10.0.0.1", "HTTPSPort": 8443,
             "SOCKSEnable": 0, "SOCKSProxy": "::1", "SOCKSPort": 1080,
             "HTTPProxyUsername": "alice", "HTTPProxyPassword": "pw",
             "ExceptionsList": ["*.local", "169.254/16"], "ExcludeSimpleHostnames": 1}
            """).connectionProxyDictionary)
        #expect(proxies.http.host == "proxy.internal" && proxies.http.port == 3128 && proxies.http.enabled == true)
        #expect(proxies.https.host == "10.0.0.1" && proxies.https.enabled == true)
        #expect(proxies.socks.enabled == false)
        #expect(proxies.http.username == "alice" && proxies.http.password == "pw")
        #expect(proxies.exceptions.map(\.pattern) == ["*.local", "169.254/16"])
        #expect(proxies.excludeSimpleHostnames == true)
    }

    @Test(arguments: [
        (#"{"HTTPProxyHost": "p"}"#, "connectionProxyDictionary.HTTPProxyHost"),
        (#"{"HTTPPort": "8080"}"#, "connectionProxyDictionary.HTTPPort"),
        (#"{"HTTPPort": 70000}"#, "connectionProxyDictionary.HTTPPort"),
        (#"{"HTTPEnable": 2}"#, "connectionProxyDictionary.HTTPEnable"),
        (#"{"HTTPSProxy": "http://proxy:3128"}"#, "connectionProxyDictionary.HTTPSProxy"),
        (#"{"SOCKSProxy": "bad host"}"#, "connectionProxyDictionary.SOCKSProxy"),
        (#"{"HTTPSEnable": 1, "HTTPSPort": 3128}"#, "connectionProxyDictionary.HTTPSProxy"),
        (#"{"SOCKSEnable": 1, "SOCKSProxy": "p"}"#, "connectionProxyDictionary.SOCKSPort"),
        (#"{"HTTPProxyPassword": "x"}"#, "connectionProxyDictionary.HTTPProxyUsername"),
        (#"{"HTTPProxyUsername": "a:b"}"#, "connectionProxyDictionary.HTTPProxyUsername"),
        (#"{"ExceptionsList": "*.local"}"#, "connectionProxyDictionary.ExceptionsList"),
        (#"{"ExceptionsList": ["ok.example", "*bad*"]}"#, "connectionProxyDictionary.ExceptionsList[1]"),
        (#"{"ExceptionsList": ["10.0.0.0/33"]}"#, "connectionProxyDictionary.ExceptionsList[0]"),
        (#"{"ExceptionsList": [7]}"#, "connectionProxyDictionary.ExceptionsList[0]"),
        (#"{"ExcludeSimpleHostnames": "yes"}"#, "connectionProxyDictionary.ExcludeSimpleHostnames"),
    ])
    func refusesBadKeysAndValuesNamingTheKey(proxies: String, field: String) {
        guard case .invalidValue(let named, _) = refusal(proxies) else { Issue.record("not invalidValue: \(proxies)"); return }
        #expect(named == field)
    }

    @Test func proxyAutoConfigurationIsNotImplemented() {
        guard case .notImplemented(let field, _) = refusal(#"{"ProxyAutoConfigEnable": 1}"#) else { Issue.record("not notImplemented"); return }
        #expect(field == "connectionProxyDictionary.ProxyAutoConfigEnable")
    }

    @Test func aRefusalNeverRepeatsThePassword() {
        let secret = "s3cret-\(UUID().uuidString)"
        for json in [#"{"HTTPProxyPassword": "\#(secret)"}"#, #"{"HTTPProxyUsername": "a:b", "HTTPProxyPassword": "\#(secret)"}"#,
                     #"{"SOCKSProxyUsername": "u", "SOCKSProxyPassword": "\#(secret)\u0001"}"#] {
            let error = refusal(json)
            #expect(!String(describing: error).contains(secret))
        }
    }

    @Test func passwordsAreServedNeverAndStoredAlways() throws {
        let secret = "s3cret-\(UUID().uuidString)"
        let configuration = try configuration(#"{"HTTPSEnable": 1, "HTTPSProxy": "p", "HTTPSPort": 1, "HTTPSProxyUsername": "u", "HTTPSProxyPassword": "\#(secret)"}"#)
        let served = String(decoding: try JSONCoding.encoder.encode(configuration), as: UTF8.self)
        #expect(!served.contains(secret))
        #expect(served.contains(#""HTTPSProxyUsername":"u""#))
        let stored = try JSONCoding.recordEncoder.encode(configuration)
        #expect(String(decoding: stored, as: UTF8.self).contains(secret))
        #expect(try JSONCoding.decoder.decode(SessionConfiguration.self, from: stored) == configuration)
        #expect(!String(describing: configuration.connectionProxyDictionary!.https).contains(secret))
    }
}
