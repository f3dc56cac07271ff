import Foundation

/// The accept thread of an ``UploadSink``: starts one thread per connection. It alone closes the
/// listener.
enum UploadSinkAcceptLoop {
    static func start(_ state: UploadSinkState) {
        let thread = Thread {
            defer { state.acceptLoopEnded() }
            state.listener.acceptConnections { fd in
                guard state.connectionAccepted() else { return false }
                let thread = Thread { UploadSinkConnection(fd: fd, state: state).run() }
                thread.name = "UploadSink connection"
                thread.start()
                return true
            }
        }
        thread.name = "UploadSink accept :\(state.port)"
        thread.start()
    }
}
