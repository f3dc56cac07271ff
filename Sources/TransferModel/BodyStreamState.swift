/// A request body the client streams (`{"stream": true}`): the bytes `body-chunks` delivered so
/// far and whether `body-end` came. Served as the task's `bodyStream`.
public struct BodyStreamState: Codable, Sendable, Equatable {
    public var bytesReceived = 0
    public var ended = false

    /// The memberwise initializer, for the layers above.
    package init() {
    }
}
