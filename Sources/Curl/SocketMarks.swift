internal import Glibc

/// The DSCP marking of every socket curl opened for one multi handle's transfers, so that a
/// kept-alive connection reused by a transfer of another service type is marked again before
/// its request goes (the sockopt callback only sees new sockets). Owned by `MultiHandle`, which
/// outlives every connection (curl_multi_cleanup closes the last ones); engine thread only.
final class SocketMarks {
    private struct Mark {
        var dscp: Int
        /// Filled in when first needed (after connect): local port, peer address and port.
        var endpoints: Endpoints?
    }

    struct Endpoints: Equatable {
        let localPort: Int
        let peerAddress: String
        let peerPort: Int
    }

    private var marks: [Int32: Mark] = [:]

    var count: Int { marks.count }

    /// A socket curl just opened, marked (or left at best effort) with `dscp`.
    func opened(_ fd: Int32, dscp: Int) {
        marks[fd] = Mark(dscp: dscp)
    }

    func closed(_ fd: Int32) {
        marks[fd] = nil
    }

    /// Before a request goes on the connection curl chose (CURLOPT_PREREQFUNCTION tells its
    /// endpoints, not its socket): re-marks that socket if it carries another code point.
    func ensure(_ endpoints: Endpoints, dscp: Int) {
        for (fd, var mark) in marks {
            if mark.endpoints == nil {
                mark.endpoints = Self.endpoints(of: fd)
                marks[fd] = mark
            }
            guard mark.endpoints == endpoints else { continue }
            if mark.dscp != dscp, SocketMarking.mark(fd, dscp: dscp) { marks[fd]?.dscp = dscp }
            return
        }
    }

    /// getsockname/getpeername of a connected TCP socket; nil before it is connected.
    private static func endpoints(of fd: Int32) -> Endpoints? {
        guard let local = address(fd, getsockname), let peer = address(fd, getpeername) else { return nil }
        return Endpoints(localPort: local.port, peerAddress: peer.address, peerPort: peer.port)
    }

    private static func address(_ fd: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> (address: String, port: Int)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var ip = address.pointee.sin_addr
                    inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                    return (String(cString: text), Int(UInt16(bigEndian: address.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var ip = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                    return (String(cString: text), Int(UInt16(bigEndian: address.pointee.sin6_port)))
                }
            }
        default:
            return nil
        }
    }
}
