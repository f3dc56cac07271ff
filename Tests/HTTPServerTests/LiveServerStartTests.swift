import Glibc
import HTTPServer
import Testing

extension LiveServerTests {
    @Suite struct Start {
        @Test func portInUseIsAClearError() throws {
            try withServer(handler: echoHandler()) { running in
                let configuration = HTTPServerConfiguration(port: running.port)
                let second = HTTPServer(configuration: configuration, handler: echoHandler())
                #expect(throws: HTTPServerError.bindFailed(
                    host: "127.0.0.1", port: running.port, reason: "Address already in use"
                )) { try second.start() }
                second.stop()
            }
        }

        @Test func invalidHostAndSecondStartAreRefused() throws {
            let bad = HTTPServer(configuration: HTTPServerConfiguration(host: "localhost", port: 0), handler: echoHandler())
            #expect(throws: HTTPServerError.invalidAddress(host: "localhost", port: 0)) { try bad.start() }
            try withServer(handler: echoHandler()) { server in
                #expect(throws: HTTPServerError.notStartable) { try server.start() }
            }
        }

        @Test(.enabled(if: access("/proc/net/if_inet6", F_OK) == 0, "needs IPv6"))
        func servesOnIPv6Loopback() throws {
            try withServer(host: "::1", handler: echoHandler()) { server in
                let response = try RawHTTPConnection(host: "::1", port: server.port).request("GET", "/six")
                #expect(response.status == 200)
                #expect(response.headers["X-Remote"]?.hasPrefix("[::1]:") == true)
            }
        }
    }
}
