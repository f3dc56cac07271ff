internal import FoundationEssentials
package import TransferModel

/// Everything the engine needs to open one stream task's connection, decided by the service.
package struct StreamJob: Sendable {
    let taskId: Int
    let endpoint: StreamEndpoint
    /// The session's TLS settings (its proxies do not apply: a stream connects directly).
    package var network = TransferNetwork()
    /// Seconds the connection (and a TLS handshake) may take: the request's timeoutInterval.
    package var connectTimeout: Double = 60
    /// The most received bytes held for reads; the socket is not read beyond it (TCP backpressure).
    var receiveCapacity = StreamJob.defaultBufferCapacity
    /// The most written bytes held until the socket takes them; a write beyond it waits.
    var sendCapacity = StreamJob.defaultBufferCapacity

    package static let defaultBufferCapacity = 4 << 20

    /// The memberwise initializer, for the layers above.
    package init(taskId: Int, endpoint: StreamEndpoint, connectTimeout: Double = 60) {
        self.taskId = taskId
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
    }
}

/// What a client asks of a running stream task; each is answered once through its reply.
package enum StreamCommand: Sendable {
    case write(taskId: Int, bytes: [UInt8], timeout: Double, reply: @Sendable (StreamReply) -> Void)
    case read(taskId: Int, min: Int, max: Int, wait: Double, reply: @Sendable (StreamReply) -> Void)
    case closeWrite(taskId: Int, reply: @Sendable (StreamReply) -> Void)
    case closeRead(taskId: Int, reply: @Sendable (StreamReply) -> Void)
    case startTLS(taskId: Int, reply: @Sendable (StreamReply) -> Void)

    var taskId: Int {
        switch self {
        case .write(let id, _, _, _), .read(let id, _, _, _, _), .closeWrite(let id, _), .closeRead(let id, _), .startTLS(let id, _): id
        }
    }

    var reply: @Sendable (StreamReply) -> Void {
        switch self {
        case .write(_, _, _, let reply), .read(_, _, _, _, let reply), .closeWrite(_, let reply), .closeRead(_, let reply), .startTLS(_, let reply): reply
        }
    }
}


/// What a stream reports to the service besides its completion.
package enum StreamUpdate: Sendable {
    /// The connection (and TLS from the start) is up.
    case connected
    /// start-tls finished its handshake: bytes move over TLS from now on.
    case tlsStarted
    /// The peer closed its sending side (end of stream), or the client closed the read side.
    case readClosed
    /// The sending side is shut down (after every written byte went).
    case writeClosed
    /// Running totals, after a read or a write moved bytes.
    case counts(received: Int, sent: Int)
    /// Both sides closed and the end was read: the task completes without error (a completion,
    /// answered once durable, as `.completed`).
    case finished
}
