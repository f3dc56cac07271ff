/// The engine's answer to one `StreamCommand`.
public enum StreamReply: Sendable, Equatable {
    /// Bytes read, in order; `ended`: these are the last ones (the peer closed its side).
    case read([UInt8], ended: Bool)
    /// How many of the write's bytes the stream took (all, unless the timeout came first).
    case written(accepted: Int, timedOut: Bool)
    /// close-write, close-read or start-tls is done.
    case done
    /// Not possible in the stream's state (409): `code` says why.
    case refused(code: String, message: String)
    /// The stream ended with this error before the command could be carried out.
    case failed(TaskError)
}
