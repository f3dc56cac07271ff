internal import CCurl
internal import Glibc

/// The address curl is about to connect a socket to: resolved, after every redirect, retry and
/// Happy Eyeballs choice, right before connect(2) (CURLOPT_OPENSOCKETFUNCTION). A plain value:
/// no C pointer leaves this module.
public struct PeerAddress: Sendable, Equatable {
    /// The address in network order: 4 bytes (IPv4) or 16 (IPv6, an IPv4-mapped one included).
    public let bytes: [UInt8]
    public let port: Int

    public init(bytes: [UInt8], port: Int) {
        self.bytes = bytes
        self.port = port
    }

    /// The IPv4 or IPv6 address of curl's `curl_sockaddr`; nil for any other family (curl
    /// connects to nothing else for transferd: it sets no Unix socket path).
    init?(_ address: UnsafePointer<curl_sockaddr>) {
        // `addr` is declared a `struct sockaddr` but curl stores a whole sockaddr_in6 there.
        guard let offset = MemoryLayout<curl_sockaddr>.offset(of: \.addr) else { return nil }
        let raw = UnsafeRawPointer(address) + offset
        switch address.pointee.family {
        case AF_INET where Int(address.pointee.addrlen) >= MemoryLayout<sockaddr_in>.size:
            let socket = raw.loadUnaligned(as: sockaddr_in.self)
            let ip = withUnsafeBytes(of: socket.sin_addr) { Array($0) }
            self.init(bytes: ip, port: Int(UInt16(bigEndian: socket.sin_port)))
        case AF_INET6 where Int(address.pointee.addrlen) >= MemoryLayout<sockaddr_in6>.size:
            let socket = raw.loadUnaligned(as: sockaddr_in6.self)
            let ip = withUnsafeBytes(of: socket.sin6_addr) { Array($0) }
            self.init(bytes: ip, port: Int(UInt16(bigEndian: socket.sin6_port)))
        default:
            return nil
        }
    }
}

/// Decides, for every connection curl is about to make for a handle, whether it may: checked in
/// CURLOPT_OPENSOCKETFUNCTION on the address curl will connect(2) to, so a name that resolves
/// differently between a check and the connect (DNS rebinding) cannot slip past, and every
/// redirect hop, retry, FTP data connection and connect-only stream goes through it.
///
/// `decide` returns nil to allow, or the rule that refuses (kept in the handle's
/// `connectionRefusal` for the error). A refused attempt gets no socket: curl tries the host's
/// next address, if any, and otherwise fails with CURLE_COULDNT_CONNECT.
///
/// A connection to a proxy is judged like any other: a session's proxy is set by whoever made
/// the session (a tenant), so an exemption would let a tenant reach a denied address by naming it
/// as its proxy, or by a no-proxy entry that sends the request direct. An operator who runs a
/// proxy in a denied range allows its address (`--allow-networks`); what the proxy then reaches
/// is the proxy's policy.
public struct ConnectionGate: Sendable {
    let decide: @Sendable (PeerAddress) -> String?

    public init(_ decide: @escaping @Sendable (PeerAddress) -> String?) {
        self.decide = decide
    }
}

/// A connection the gate refused: where to, and the rule that said no.
public struct ConnectionRefusal: Sendable, Equatable {
    public let peer: PeerAddress
    public let rule: String
}

extension EasyHandle {
    /// Runs in the open-socket callback: the gate's verdict on `address`, recorded when it
    /// refuses. True when curl may open the socket.
    func mayConnect(to address: UnsafePointer<curl_sockaddr>) -> Bool {
        guard let gate = connectionGate else { return true }
        guard let peer = PeerAddress(address) else {
            connectionRefusal = ConnectionRefusal(peer: PeerAddress(bytes: [], port: 0), rule: "not an IP address")
            return false
        }
        guard let rule = gate.decide(peer) else { return true }
        connectionRefusal = ConnectionRefusal(peer: peer, rule: rule)
        return false
    }
}
