internal import TransferModel

/// How a segmented download's resource is cut into byte ranges, which connection holds which,
/// and how far each got. A value with no I/O (`SegmentPlanTests`); `SegmentedDownload` drives it.
///
/// Part 0 is the first connection's: its plain GET reads the resource from byte 0, so its part
/// always starts there. When a connection is free and no part is unowned, the owned part with the
/// most left is split in two and the free connection takes the second half (aria2's
/// min-split-size): the end does not wait on one slow connection.
struct SegmentPlan: Equatable {
    struct Part: Equatable {
        /// The first byte of the part.
        let start: Int
        /// One past its last byte; lowered when the part is split.
        var end: Int
        /// The next byte to write: bytes `start..<next` are in the file.
        var next: Int
        /// The worker holding it (nil: free to take).
        var owner: Int?

        var remaining: Int { end - next }
        var isDone: Bool { next >= end }
    }

    /// Below twice this, a part is not split (its two halves would be too small to pay for a
    /// new request).
    static let minimumSplitSize = 1024 * 1024

    let total: Int
    private(set) var parts: [Part]

    /// `count` parts of about equal size over `total` bytes, the first already holding
    /// `written` bytes (what the first connection wrote before the plan was made: a server's
    /// first burst may be a MiB or more). Equal parts of the whole, so that connections of
    /// equal speed end together; when the first already holds about its share, what is left
    /// is shared out instead. Fewer parts when they would be smaller than
    /// `minimumSplitSize`; nil when one part is all there is.
    init?(total: Int, count: Int, written: Int, firstOwner: Int) {
        var count = min(count, total / Self.minimumSplitSize)
        guard count > 1 else { return nil }
        var size = (total + count - 1) / count
        var firstEnd = size
        if written + Self.minimumSplitSize > size {
            let remaining = total - written
            count = min(count, remaining / Self.minimumSplitSize)
            guard count > 1 else { return nil }
            size = (remaining + count - 1) / count
            firstEnd = written + size
        }
        self.total = total
        var parts = [Part(start: 0, end: firstEnd, next: written, owner: firstOwner)]
        var start = firstEnd
        while start < total {
            let end = min(total, start + size)
            parts.append(Part(start: start, end: end, next: start, owner: nil))
            start = end
        }
        self.parts = parts
    }

    /// A plan restored from a checkpoint's parts, the first connection (continuing the file
    /// from `resumedAt`, its bytes from 0 without a gap) owning the part that goes on from
    /// there; bytes past `fileSize` are fetched again. Nil when the parts do not tile
    /// `0..<total` or none goes on from `resumedAt`.
    init?(total: Int, restoring saved: [ResumePart], resumedAt offset: Int, fileSize: Int, firstOwner: Int) {
        let sorted = saved.sorted { $0.start < $1.start }
        var expected = 0
        for part in sorted {
            guard part.start == expected, part.next >= part.start, part.next <= part.end else { return nil }
            expected = part.end
        }
        guard expected == total, !sorted.isEmpty else { return nil }
        self.total = total
        parts = sorted.map { Part(start: $0.start, end: $0.end, next: max($0.start, min($0.next, fileSize)), owner: nil) }
        guard let first = parts.firstIndex(where: { $0.next == offset && !$0.isDone }) else { return nil }
        parts[first].owner = firstOwner
    }

    /// The parts as a checkpoint records them.
    var resumeParts: [ResumePart] { parts.map { ResumePart(start: $0.start, end: $0.end, next: $0.next) } }

    var isComplete: Bool { parts.allSatisfy(\.isDone) }
    /// Bytes written in all parts.
    var written: Int { parts.reduce(0) { $0 + ($1.next - $1.start) } }
    /// Bytes from 0 without a gap: what a download over one connection can continue from.
    var contiguous: Int {
        var end = 0
        for part in parts {
            guard part.start == end else { break }
            end = part.next
            guard part.isDone else { break }
        }
        return end
    }
    /// How many parts are held by a worker and not done.
    var active: Int { parts.filter { $0.owner != nil && !$0.isDone }.count }

    /// Whether `claim` would find a part for a new worker.
    var hasWorkToClaim: Bool {
        parts.contains { $0.owner == nil && !$0.isDone } || parts.contains { $0.owner != nil && $0.remaining >= 2 * Self.minimumSplitSize }
    }

    /// The part `worker` may fetch next: a free part with bytes left, else the second half of
    /// the owned part with the most left when that is at least twice `minimumSplitSize`.
    mutating func claim(for worker: Int) -> Int? {
        if let index = parts.indices.first(where: { parts[$0].owner == nil && !parts[$0].isDone }) {
            parts[index].owner = worker
            return index
        }
        guard let largest = parts.indices.filter({ parts[$0].owner != nil }).max(by: { parts[$0].remaining < parts[$1].remaining }),
              parts[largest].remaining >= 2 * Self.minimumSplitSize else { return nil }
        let straggler = parts[largest]
        let middle = straggler.next + straggler.remaining / 2
        parts[largest].end = middle
        parts.insert(Part(start: middle, end: straggler.end, next: middle, owner: worker), at: largest + 1)
        return largest + 1
    }

    /// The part `worker` holds, if any.
    func part(of worker: Int) -> Int? { parts.firstIndex { $0.owner == worker && !$0.isDone } }

    /// `count` bytes were written at the part's `next`.
    mutating func wrote(_ count: Int, in index: Int) {
        parts[index].next = min(parts[index].end, parts[index].next + count)
    }

    /// The worker let its part go (done or failed): a part with bytes left is free to take.
    mutating func release(_ index: Int) {
        parts[index].owner = nil
    }

    /// Every connection but the first is gone: the first one's part reaches to the end, so its
    /// GET brings the rest (a server that will not serve ranges after all).
    mutating func extendFirst() {
        guard let first = parts.first(where: { $0.owner == 0 && !$0.isDone }) else { return }
        parts = [Part(start: 0, end: total, next: first.next, owner: 0)]
    }
}
