import Foundation

/// The accept thread of a ``TusServer``: starts one thread per connection. It alone closes the
/// listener.
enum TusAcceptLoop {
    static func start(_ state: TusState) {
        let thread = Thread {
            defer { state.acceptLoopEnded() }
            state.listener.acceptConnections { fd in
                guard state.connectionAccepted() else { return false }
                let thread = Thread { TusConnection(fd: fd, state: state).run() }
                thread.name = "TusServer connection"
                thread.start()
                return true
            }
        }
        thread.name = "TusServer accept :\(state.port)"
        thread.start()
    }
}
