/// One byte range of a segmented download's partial file, as a checkpoint recorded it: bytes
/// `start..<next` are on disk (synced before it was recorded), `next..<end` are still to fetch.
public struct ResumePart: Codable, Sendable, Equatable {
    public var start: Int
    public var end: Int
    public var next: Int

    package init(start: Int, end: Int, next: Int) {
        self.start = start
        self.end = end
        self.next = next
    }
}
