import Foundation
internal import Glibc

/// The accept thread of a ``TusServer``: waits for connections or the stop signal and starts one
/// thread per connection. It alone closes the listener.
enum TusAcceptLoop {
    static func start(_ state: TusState) {
        let thread = Thread { run(state) }
        thread.name = "TusServer accept :\(state.port)"
        thread.start()
    }

    private static func run(_ state: TusState) {
        defer {
            _ = close(state.listenFD)
            state.acceptLoopEnded()
        }
        while true {
            var fds = [
                pollfd(fd: state.stopPipe.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: state.listenFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 { return }
            guard fds[1].revents != 0 else { continue }
            let accepted: Int32?
            do {
                accepted = try SocketFactory.accept(from: state.listenFD)
            } catch {
                return  // The listener itself failed: nothing more will connect.
            }
            guard let fd = accepted else { continue }
            guard state.connectionAccepted() else {
                _ = close(fd)
                return
            }
            let thread = Thread { TusConnection(fd: fd, state: state).run() }
            thread.name = "TusServer connection"
            thread.start()
        }
    }
}
