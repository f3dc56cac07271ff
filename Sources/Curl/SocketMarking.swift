internal import Glibc

/// Marks a socket's packets with a DSCP code point (RFC 2474): the upper six bits of the IPv4
/// TOS byte (IP_TOS) or of the IPv6 traffic class (IPV6_TCLASS); the lower two bits are ECN and
/// stay 0. Called from curl's sockopt callback, before the socket connects, so the SYN is
/// marked too. - SeeAlso: ip(7) IP_TOS, ipv6(7) IPV6_TCLASS
enum SocketMarking {
    /// Returns whether the marking was set. A socket of another family (a Unix socket) is left
    /// alone.
    static func mark(_ fd: Int32, dscp: Int) -> Bool {
        var value = Int32(truncatingIfNeeded: (dscp & 0x3f) << 2)
        let size = socklen_t(MemoryLayout<Int32>.size)
        switch family(of: fd) {
        case AF_INET: return setsockopt(fd, Int32(IPPROTO_IP), IP_TOS, &value, size) == 0
        case AF_INET6: return setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_TCLASS, &value, size) == 0
        default: return false
        }
    }

    /// SO_DOMAIN (Linux): the family the socket was created with, also before it is bound.
    private static func family(of fd: Int32) -> Int32 {
        var domain: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) == 0 else { return -1 }
        return domain
    }
}
