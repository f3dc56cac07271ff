internal import CMicroHTTPD

/// One connection's suspend and resume: MHD_resume_connection may be called from any thread,
/// MHD_suspend_connection only from that connection's pool thread inside the access handler or
/// the content reader. Held by that connection's `Responder` or `StreamedBody`; owns nothing.
///
/// `@unchecked Sendable` because it carries the connection pointer across threads. Safe
/// because: MHD_resume_connection only takes the daemon's cleanup mutex, sets flags and
/// signals the worker's inter-thread channel ("It is safe to resume a suspended connection
/// at any time"), and `ResponderState` / `StreamedBodyState` guarantee it is called at most
/// once per suspension, only after MHD_suspend_connection returned; a suspended connection is
/// never freed by libmicrohttpd (it neither times out nor notices disconnects, and
/// `HTTPServer.stop()` resumes every one before MHD_stop_daemon), so the pointer is valid when used.
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dflow.html
struct ConnectionResumer: @unchecked Sendable {
    private let connection: OpaquePointer

    init(_ connection: OpaquePointer) {
        self.connection = connection
    }

    /// Connection thread only (0.9.75 asserts it).
    func suspend() {
        MHD_suspend_connection(connection)
    }

    func resume() {
        MHD_resume_connection(connection)
    }
}
