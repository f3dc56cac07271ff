internal import CMicroHTTPD
internal import Glibc

/// An IPv4 or IPv6 socket address parsed from a literal, stored in a `sockaddr_storage`.
/// A plain value owned by whoever built it (the server, while starting).
struct SocketAddress {
    private(set) var storage = sockaddr_storage()
    let length: socklen_t
    let isIPv6: Bool

    /// Parses `host` ("127.0.0.1", "::1", "[::1]") and `port`; nil if either is invalid.
    init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        let networkPort = UInt16(port).bigEndian
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = networkPort
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            isIPv6 = false
        } else if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = networkPort
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            isIPv6 = true
        } else {
            return nil
        }
    }

    /// Calls `body` with the address as the `sockaddr` pointer C APIs take.
    mutating func withSockaddr<R>(_ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> R) -> R {
        let length = self.length
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// Formats a peer address as "127.0.0.1:53422" or "[::1]:53422"; nil for other families.
    static func describe(_ address: UnsafePointer<sockaddr>) -> String? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            // Every request's peer is formatted: by hand, what inet_ntop and interpolation gave
            // (dotted decimal, then the port), at a tenth of their cost.
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                let ip = UInt32(bigEndian: v4.pointee.sin_addr.s_addr)
                var utf8: [UInt8] = []
                utf8.reserveCapacity(21)
                for shift in stride(from: 24, through: 0, by: -8) {
                    if shift != 24 { utf8.append(UInt8(ascii: ".")) }
                    appendDecimal(Int((ip >> UInt32(shift)) & 0xff), to: &utf8)
                }
                utf8.append(UInt8(ascii: ":"))
                appendDecimal(Int(UInt16(bigEndian: v4.pointee.sin_port)), to: &utf8)
                return String(decoding: utf8, as: UTF8.self)
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
                var ip = v6.pointee.sin6_addr
                guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                return "[\(Self.string(text))]:\(UInt16(bigEndian: v6.pointee.sin6_port))"
            }
        default:
            return nil
        }
    }

    /// `value` (0 or more) in decimal digits.
    private static func appendDecimal(_ value: Int, to utf8: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        repeat {
            utf8.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        } while divisor > 0
    }

    /// The NUL-terminated text inet_ntop wrote into `buffer`.
    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Why binding this address fails, found by trying it on a throw-away socket set up as
    /// libmicrohttpd sets up its own (SO_REUSEADDR). libmicrohttpd reports start failures
    /// only through its error log, so this is how `start()` explains itself. Nil if the probe
    /// binds (the failure was something else).
    mutating func bindFailureReason() -> String? {
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if isIPv6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let result = withSockaddr { bind(fd, $0, $1) }
        return result == 0 ? nil : String(cString: strerror(errno))
    }
}
