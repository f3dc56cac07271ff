import Glibc
import Testing
@testable import HTTPServer

/// A peer's "address:port", formatted by hand for IPv4 (every request's head has one): the text
/// inet_ntop and the port's decimal give, at the edges of both.
@Suite struct SocketAddressDescribeTests {
    @Test(arguments: ["0.0.0.0", "127.0.0.1", "10.0.200.3", "192.168.1.10", "255.255.255.255"], [0, 1, 80, 8080, 53422, 65535])
    func anIPv4PeerIsItsDottedAddressAndPort(host: String, port: Int) throws {
        var address = try #require(SocketAddress(host: host, port: port))
        let described = address.withSockaddr { pointer, _ in SocketAddress.describe(pointer) }
        #expect(described == "\(host):\(port)")
    }

    @Test func anIPv6PeerIsBracketed() throws {
        var address = try #require(SocketAddress(host: "::1", port: 443))
        #expect(address.withSockaddr { pointer, _ in SocketAddress.describe(pointer) } == "[::1]:443")
    }
}
