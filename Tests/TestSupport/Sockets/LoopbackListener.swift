import Foundation
internal import Glibc

/// A listening socket on 127.0.0.1 and the pipe that tells every thread of its server to stop:
/// what each test server here (origin, tus, streaming) accepts on.
///
/// `@unchecked Sendable`: the descriptors are `let`s; the listener is closed only by the thread
/// running ``acceptConnections(_:)`` (or by ``closeUnused()`` when none ever ran), the pipe only
/// in `deinit`, when no thread can hold a reference any more.
final class LoopbackListener: @unchecked Sendable {
    let fd: Int32
    let port: Int
    /// Readable once ``signalStop()`` was called; connection threads poll it too.
    let stopPipe: (read: Int32, write: Int32)

    /// Listens on 127.0.0.1 (or ::1, or another IPv4 loopback `address`) on `port`, or with 0
    /// on a port the kernel picks.
    init(port: Int = 0, ipv6: Bool = false, address: String = "127.0.0.1") throws {
        (fd, self.port) = try SocketFactory.listenOnLoopback(port: port, ipv6: ipv6, address: address)
        do {
            stopPipe = try SocketFactory.makePipe()
        } catch {
            _ = close(fd)
            throw error
        }
    }

    deinit {
        _ = close(stopPipe.read)
        _ = close(stopPipe.write)
    }

    /// Wakes the accept loop and every connection polling the stop pipe.
    func signalStop() {
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    /// Closes a listener whose accept loop never started.
    func closeUnused() { _ = close(fd) }

    /// Accepts connections until stopped (or the listener fails), handing each to `accepted`;
    /// when that returns false the connection is closed and accepting ends. Closes the listener.
    func acceptConnections(_ accepted: (Int32) -> Bool) {
        defer { _ = close(fd) }
        while true {
            var fds = [
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 { return }  // stopped
            guard fds[1].revents != 0 else { continue }
            let connection: Int32?
            do {
                connection = try SocketFactory.accept(from: fd)
            } catch {
                return  // The listener itself failed: nothing more will connect.
            }
            guard let connection else { continue }
            guard accepted(connection) else {
                _ = close(connection)
                return
            }
        }
    }
}
