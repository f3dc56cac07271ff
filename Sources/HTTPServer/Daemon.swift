internal import CMicroHTTPD
internal import Glibc

/// A running libmicrohttpd daemon: its handle, bound port and the retain it holds on the
/// `ServerCore` its callbacks use.
///
/// Owned by `HTTPServer`, which keeps it behind its lifecycle lock; only the thread holding
/// that lock calls `start`/`stop`. Not Sendable, so the handle cannot leak to other threads.
final class Daemon {
    private let handle: OpaquePointer
    private let core: Unmanaged<ServerCore>
    /// The port actually bound (the one asked for, or the kernel's choice for 0).
    let port: Int

    private init(handle: OpaquePointer, core: Unmanaged<ServerCore>, port: Int) {
        self.handle = handle
        self.core = core
        self.port = port
    }

    /// Starts libmicrohttpd with an internal epoll thread pool and suspend/resume allowed,
    /// bound to `configuration.host`/`port` (MHD_OPTION_SOCK_ADDR). Error logging stays off
    /// (no MHD_USE_ERROR_LOG): failures are explained by `HTTPServerError` instead.
    /// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinit.html
    static func start(core: ServerCore) throws(HTTPServerError) -> Daemon {
        let configuration = core.configuration
        guard var address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw .invalidAddress(host: configuration.host, port: configuration.port)
        }
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }

        let retained = Unmanaged.passRetained(core)
        let handle = address.withSockaddr { sockaddr, _ in
            var options = options(configuration, sockaddr: sockaddr, core: retained.toOpaque())
            return options.withUnsafeMutableBufferPointer { items in
                let arguments: [any CVarArg] = [
                    Int32(bitPattern: MHD_OPTION.ARRAY.rawValue), items.baseAddress!,
                    Int32(bitPattern: MHD_OPTION.END.rawValue),
                ]
                return withVaList(arguments) { list in
                    MHD_start_daemon_va(
                        flags, UInt16(configuration.port), nil, nil,
                        MHDCallbacks.accessHandler, retained.toOpaque(), list
                    )
                }
            }
        }
        guard let handle else {
            retained.release()
            if let reason = address.bindFailureReason() {
                throw .bindFailed(host: configuration.host, port: configuration.port, reason: reason)
            }
            throw .startFailed(reason: "libmicrohttpd refused the configuration (threads: "
                + "\(configuration.threadCount), connection limit: \(configuration.connectionLimit))")
        }
        let port = mhd_get_daemon_info(handle, .DAEMON_INFO_BIND_PORT).map { Int($0.pointee.port) }
        return Daemon(handle: handle, core: retained, port: port ?? configuration.port)
    }

    /// The option array passed with MHD_OPTION_ARRAY; `sockaddr` must stay valid until
    /// MHD_start_daemon_va returns (libmicrohttpd binds during the call).
    private static func options(
        _ configuration: HTTPServerConfiguration, sockaddr: UnsafeMutablePointer<sockaddr>,
        core: UnsafeMutableRawPointer
    ) -> [MHD_OptionItem] {
        // Two-pointer options carry the function in `value` (daemon.c, parse_options_va).
        let completed = Int(bitPattern: unsafeBitCast(MHDCallbacks.requestCompleted, to: UnsafeRawPointer.self))
        var items = [
            MHD_OptionItem(option: MHD_OPTION.SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(sockaddr)),
            MHD_OptionItem(option: MHD_OPTION.NOTIFY_COMPLETED, value: completed, ptr_value: core),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_LIMIT, value: max(1, configuration.connectionLimit), ptr_value: nil),
            MHD_OptionItem(
                option: MHD_OPTION.CONNECTION_TIMEOUT, value: max(0, configuration.idleConnectionTimeout), ptr_value: nil
            ),
        ]
        if configuration.perClientConnectionLimit > 0 {
            items.append(MHD_OptionItem(option: MHD_OPTION.PER_IP_CONNECTION_LIMIT, value: configuration.perClientConnectionLimit, ptr_value: nil))
        }
        if configuration.threadCount > 1 {
            items.append(MHD_OptionItem(option: MHD_OPTION.THREAD_POOL_SIZE, value: configuration.threadCount, ptr_value: nil))
        }
        items.append(MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil))
        return items
    }

    /// MHD_stop_daemon, then drops the daemon's retain on the core. Every connection must
    /// have been resumed before: 0.9.75 aborts when stopped with one still suspended.
    func stop() {
        MHD_stop_daemon(handle)
        core.release()
    }
}

@available(*, unavailable, message: "the daemon handle belongs to the server's lifecycle lock")
extension Daemon: Sendable {}
