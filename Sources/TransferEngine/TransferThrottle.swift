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
    /// The task's own limit per direction.
    var own: [TransferDirection: TokenBucket] = [:]
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
