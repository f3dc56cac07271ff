internal import CMicroHTTPD

/// The C entry points libmicrohttpd calls, as file-scope non-capturing functions.
/// `cls` is the `ServerCore` (unretained here: the daemon holds a retain for its lifetime);
/// `con_cls` is the request's `RequestContext`. They never throw, block or trap.
enum MHDCallbacks {
    /// The access handler: dispatches the three kinds of call to `ServerCore`.
    /// Sets `*upload_data_size = 0` after taking each body chunk (0.9.75 calls again with
    /// whatever is left otherwise), and answers MHD_NO when the client has gone mid-body.
    /// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dcb.html
    static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, _, uploadData, uploadDataSize, slot in
        guard let cls, let connection, let uploadDataSize, let slot else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        guard let raw = slot.pointee else {
            return core.requestStarted(connection: connection, url: url, method: method, slot: slot)
        }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if uploadDataSize.pointee > 0 {
            var clientPresent = true
            if let uploadData {
                let bytes = UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee)
                clientPresent = core.bodyReceived(context, bytes: bytes, connection: connection)
            }
            uploadDataSize.pointee = 0
            // MHD_NO closes the connection (the request-completed callback follows).
            return clientPresent ? .YES : .NO
        }
        return core.requestReceived(context, connection: connection)
    }

    /// MHD_OPTION_NOTIFY_COMPLETED: the request ended (sent, failed or the daemon stopped);
    /// releases its context.
    static let requestCompleted: MHD_RequestCompletedCallback = { cls, _, slot, _ in
        guard let cls, let slot, let raw = slot.pointee else { return }
        slot.pointee = nil
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.requestCompleted(Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue())
    }
}
