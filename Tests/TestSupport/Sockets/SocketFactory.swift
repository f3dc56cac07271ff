internal import Glibc

/// Creates the descriptors the test helpers use: a loopback listener, client connections, a stop pipe.
/// Each function hands back a descriptor that the caller owns and must close.
enum SocketFactory {
    /// A TCP listener on 127.0.0.1 (or ::1) on `port`, or with 0 a port chosen by the kernel;
    /// returns the descriptor and the port. `address` picks another IPv4 loopback address
    /// (Linux routes all of 127.0.0.0/8 to lo), e.g. 127.0.0.2 for a host the daemon must not reach.
    /// With `listening` false the socket is only bound: the port is held, and the kernel refuses
    /// every connection to it.
    static func listenOnLoopback(port: Int = 0, backlog: Int32 = 128, ipv6: Bool = false, address ipv4: String = "127.0.0.1", listening: Bool = true) throws -> (fd: Int32, port: Int) {
        if ipv6 { return try listenOnIPv6Loopback(port: port, backlog: backlog) }
        // Non-blocking: poll(2) said a connection was pending, but it may be gone by accept4(2).
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw SocketError.lastError("socket") }
        do {
            // Without SO_REUSEADDR a held port is shared with no other socket.
            var one: Int32 = listening ? 1 : 0
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr(ipv4)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw SocketError.lastError("bind") }
            guard !listening || listen(fd, backlog) == 0 else { throw SocketError.lastError("listen") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    getsockname(fd, socketAddress, &length)
                }
            }
            guard named == 0 else { throw SocketError.lastError("getsockname") }
            return (fd, Int(UInt16(bigEndian: address.sin_port)))
        } catch {
            _ = close(fd)
            throw error
        }
    }

    /// A TCP listener on ::1 (IPv6 only) with a port chosen by the kernel.
    private static func listenOnIPv6Loopback(port: Int, backlog: Int32) throws -> (fd: Int32, port: Int) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_INET6, type, 0)
        guard fd >= 0 else { throw SocketError.lastError("socket") }
        do {
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = in6addr_loopback
            let size = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
            }
            guard bound == 0 else { throw SocketError.lastError("bind") }
            guard listen(fd, backlog) == 0 else { throw SocketError.lastError("listen") }
            var length = size
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw SocketError.lastError("getsockname") }
            return (fd, Int(UInt16(bigEndian: address.sin6_port)))
        } catch {
            _ = close(fd)
            throw error
        }
    }

    /// A blocking TCP connection to `host:port` (a name or a numeric address, IPv4 or IPv6).
    static func connect(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw SocketError.malformed("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = SocketError.malformed("no address for \(host)")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = SocketError.lastError("socket")
                continue
            }
            var result: Int32
            repeat {
                result = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
            } while result != 0 && errno == EINTR
            if result == 0 { return fd }
            lastError = SocketError.lastError("connect")
            _ = close(fd)
        }
        throw lastError
    }

    /// Accepts one connection; returns nil when none is pending (EAGAIN) or it vanished first.
    static func accept(from listener: Int32) throws -> Int32? {
        // accept4(2) and pipe2(2) are GNU extensions that Glibc's Swift module does not export:
        // set FD_CLOEXEC right after, so a daemon the test spawns does not inherit the socket.
        // The accepted socket does not inherit O_NONBLOCK; its owner waits in poll(2) anyway.
        let fd = Glibc.accept(listener, nil, nil)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return fd
        }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
            return nil
        default:
            throw SocketError.lastError("accept")
        }
    }

    /// A pipe (read end, write end): one byte written makes the read end readable for good,
    /// which every waiting thread sees in its poll(2).
    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SocketError.lastError("pipe") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }
}
