import Foundation

/// The accept thread of an ``OriginServer``: starts one thread per connection. It alone closes
/// the listener.
enum OriginAcceptLoop {
    static func start(_ state: OriginState) {
        let thread = Thread {
            defer { state.acceptLoopEnded() }
            state.listener.acceptConnections { fd in
                guard let index = state.connectionAccepted(fd: fd) else { return false }
                let thread = Thread { OriginConnection(fd: fd, index: index, state: state).run() }
                thread.name = "OriginServer connection \(index)"
                thread.start()
                return true
            }
        }
        thread.name = "OriginServer accept :\(state.port)"
        thread.start()
    }
}
