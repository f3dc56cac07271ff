package import TransferModel

/// What a segmented download asks of the scheduler (`TransferUpdate.segmentConnections`): the
/// engine opens no connection beyond a task's first that the scheduler did not grant
/// (`EngineCommand.grantConnection`), so each counts against the per-host cap of the host it
/// goes to and the scheduler's order decides which task gets a free one.
package struct SegmentConnections: Sendable, Equatable {
    /// Extra connections (beyond the task's own) it wants to hold in all, granted or not.
    package var wanted: Int
    /// The origins (`scheme://host:port`) new ones may go to: its source's and its mirrors'
    /// that are still usable.
    package var origins: [String]
    /// Granted connections it gives back, one origin per connection.
    package var returned: [String]
    /// Sources dropped since the last report (the task URL's or a mirror's), each with why:
    /// the service tells the client (`didDropSource`).
    package var dropped: [DroppedSource] = []

    package init(wanted: Int, origins: [String], returned: [String], dropped: [DroppedSource] = []) {
        self.wanted = wanted
        self.origins = origins
        self.returned = returned
        self.dropped = dropped
    }
}

/// A source of a segmented download that is not used again, and why (its answer was not the
/// range of the same representation, or its connection failed: the network policy's refusal
/// keeps its own `reason`).
package struct DroppedSource: Sendable, Equatable {
    package let url: String
    package let error: TaskError
}
