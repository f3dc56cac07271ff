internal import TransferModel

/// The two directions a rate limit applies to.
enum TransferDirection: CaseIterable, Hashable {
    case download, upload
}

/// One transfer's side of the rate limits: its own buckets (the task's `bandwidthLimit`), and
/// whether it waits for tokens in a direction. Owned by its `Transfer`, changed by the
/// `BandwidthGovernor`, on the engine thread.
///
/// A throttle pause is kept apart from the two other reasons a transfer is paused (the client
/// suspended it: `Transfer.pausedAt`; a client-streamed body has no bytes yet:
/// `Transfer.waitsForBody`): only the governor's release unpauses a throttled transfer, and it
/// leaves a suspended one paused; throttled time does not count as idle time.
struct TransferThrottle {
    /// The task's own limit per direction: this transfer's, or the one its task's connections
    /// share (a segmented download's, `share`).
    var own: [TransferDirection: TokenBucket] {
        get { shared?.buckets ?? local }
        set { if let shared { shared.buckets = newValue } else { local = newValue } }
    }
    private var local: [TransferDirection: TokenBucket] = [:]
    private var shared: SharedBuckets?
    /// Since when it waits for tokens, per direction (monotonic seconds).
    var waitingSince: [TransferDirection: Double] = [:]
    /// Released by the governor: it may take the next chunk even though others wait.
    var granted: Set<TransferDirection> = []
    /// A background-class task: it also draws on the background share.
    let background: Bool

    init(limit: BandwidthLimit?, background: Bool, now: Double) {
        self.background = background
        set(limit, now: now)
    }

    var isThrottled: Bool { !waitingSince.isEmpty }

    /// Its own buckets become ones other transfers of its task may share.
    mutating func shareOwnBuckets() {
        guard shared == nil else { return }
        shared = SharedBuckets(local)
        local = [:]
    }

    /// From now on it draws on `other`'s own buckets (made sharable first), not its own: the
    /// task's limit stays one limit over all its connections, and a slow one's unused tokens
    /// go to the others.
    mutating func share(_ other: inout TransferThrottle) {
        other.shareOwnBuckets()
        shared = other.shared
        local = [:]
    }

    /// A new limit for the task; a bucket already there keeps its debt.
    mutating func set(_ limit: BandwidthLimit?, now: Double) {
        for direction in TransferDirection.allCases {
            let rate = direction == .download ? limit?.downloadBytesPerSecond : limit?.uploadBytesPerSecond
            if let rate {
                if own[direction] != nil { own[direction]?.setRate(rate, now: now) } else { own[direction] = TokenBucket(rate: rate, now: now) }
            } else {
                own[direction] = nil
            }
        }
    }
}

/// The token buckets of one task's limit, shared by its connections (a segmented download's
/// transfer and its workers). Engine thread only, like the transfers that hold it.
final class SharedBuckets {
    var buckets: [TransferDirection: TokenBucket]

    init(_ buckets: [TransferDirection: TokenBucket]) { self.buckets = buckets }
}
