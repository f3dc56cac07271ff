/// A socket the multi handle's wait also watches besides its transfers' own (the extra_fds of
/// curl_multi_poll): a connect-only stream's socket, whose bytes the application moves.
public struct SocketWatch: Sendable, Equatable {
    public var socket: Int32
    public var readable: Bool
    public var writable: Bool

    public init(socket: Int32, readable: Bool, writable: Bool) {
        self.socket = socket
        self.readable = readable
        self.writable = writable
    }
}

/// What the wait found on one watched socket.
public struct SocketReadiness: Sendable, Equatable {
    public var socket: Int32
    public var readable: Bool
    public var writable: Bool
}
