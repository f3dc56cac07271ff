internal import TransferModel

/// The engine's rate limits: global and background-share token buckets per direction, shared by
/// every transfer, on top of each transfer's own (`TransferThrottle`). Owned by `EngineLoop`,
/// engine thread only.
///
/// Design (issue 4): a transfer takes tokens for every chunk it moves; with none left it pauses
/// itself (a download from its write callback with CURL_WRITEFUNC_PAUSE, so the chunk comes back
/// on unpause; an upload, counted after the fact from the progress callback, with
/// curl_easy_pause(CURLPAUSE_SEND)), and the engine loop unpauses it once tokens are back,
/// waking as soon as that is due. Chosen over CURLOPT_MAX_RECV/SEND_SPEED_LARGE set to fair
/// shares because curl's limit is an average since the transfer started: after a pause (a
/// suspended task, or a share that was low) it bursts to catch up, and a global limit would
/// need feedback from measured rates to share what slow transfers leave unused. Buckets cap
/// the burst at a tenth of a second of the rate, share unused bandwidth by construction, and a
/// runtime change applies at the next chunk. Measured in BandwidthLimitTests (within ±15 % over
/// seconds).
///
/// Fairness: transfers waiting on a shared bucket are released oldest first, one at a time
/// while tokens last; a transfer that was not released may not take from a bucket others wait
/// on, so one fast connection cannot starve the rest.
final class BandwidthGovernor {
    private(set) var limits = BandwidthLimits()
    private var global: [TransferDirection: TokenBucket] = [:]
    private var background: [TransferDirection: TokenBucket] = [:]
    /// Task ids waiting on each shared bucket.
    private var waiting: [SharedBucket: Set<Int>] = [:]

    private struct SharedBucket: Hashable {
        let direction: TransferDirection
        let background: Bool
    }

    init() {}

    func setLimits(_ limits: BandwidthLimits, now: Double) {
        self.limits = limits
        for direction in TransferDirection.allCases {
            Self.update(&global[direction], rate: Self.rate(limits.global, direction), now: now)
            Self.update(&background[direction], rate: Self.rate(limits.background, direction), now: now)
        }
        // A bucket that went away has no line; its waiters are released by the next sweep.
        for key in waiting.keys where (key.background ? background[key.direction] : global[key.direction]) == nil { waiting[key] = nil }
    }

    /// The lowest rate that will apply to a new transfer in `direction` (it sizes curl's
    /// receive buffer, which cannot change once the transfer runs), or nil when unlimited.
    func startingRate(_ direction: TransferDirection, own: BandwidthLimit?, background isBackground: Bool) -> Int? {
        let rates = [Self.rate(own, direction), Self.rate(limits.global, direction), isBackground ? Self.rate(limits.background, direction) : nil]
        return rates.compactMap { $0 }.min()
    }

    /// Whether `transfer` may move its next chunk in `direction` now; if not it is marked
    /// waiting and must pause.
    func mayMove(_ taskId: Int, _ throttle: inout TransferThrottle, _ direction: TransferDirection, now: Double) -> Bool {
        if var own = throttle.own[direction] {
            own.refill(now: now)
            throttle.own[direction] = own
            // Held back by its own limit only: it does not queue for the shared buckets.
            if !own.hasTokens { return wait(taskId, &throttle, direction, now: now, on: []) }
        }
        let shared = sharedBuckets(direction, background: throttle.background)
        for key in shared {
            refill(key, now: now)
            let othersWait = waiting[key].map { !$0.subtracting([taskId]).isEmpty } ?? false
            if !hasTokens(key) || othersWait && !throttle.granted.contains(direction) {
                return wait(taskId, &throttle, direction, now: now, on: shared)
            }
        }
        stopWaiting(taskId, &throttle, direction)
        return true
    }

    /// Takes `bytes` that moved from every bucket that applies; a released transfer has used
    /// its turn and leaves the line.
    func moved(_ taskId: Int, _ bytes: Int, _ throttle: inout TransferThrottle, _ direction: TransferDirection, now: Double) {
        guard bytes > 0 else { return }
        if throttle.granted.remove(direction) != nil { stopWaiting(taskId, &throttle, direction) }
        throttle.own[direction]?.take(bytes)
        for key in sharedBuckets(direction, background: throttle.background) {
            if key.background { background[direction]?.take(bytes) } else { global[direction]?.take(bytes) }
        }
    }

    /// Whether a waiting transfer could go on now (every bucket it needs has tokens); if so it
    /// is released: allowed past the others once. It keeps its place in line until it moved
    /// (an upload sends in the next curl_multi_perform), so others do not overtake it.
    func release(_ taskId: Int, _ throttle: inout TransferThrottle, now: Double) -> Bool {
        var released = false
        for direction in throttle.waitingSince.keys {
            if var own = throttle.own[direction] {
                own.refill(now: now)
                throttle.own[direction] = own
                if !own.hasTokens { continue }
            }
            let shared = sharedBuckets(direction, background: throttle.background)
            guard shared.allSatisfy({ refill($0, now: now); return hasTokens($0) }) else { continue }
            throttle.waitingSince[direction] = nil
            throttle.granted.insert(direction)
            released = true
        }
        return released
    }

    /// Seconds until a waiting transfer's buckets all have tokens again (0: now).
    func secondsUntilRelease(_ throttle: TransferThrottle) -> Double {
        var soonest = Double.infinity
        for direction in throttle.waitingSince.keys {
            var wait = throttle.own[direction]?.secondsUntilTokens ?? 0
            for key in sharedBuckets(direction, background: throttle.background) {
                let bucket = key.background ? background[direction] : global[direction]
                wait = max(wait, bucket?.secondsUntilTokens ?? 0)
            }
            soonest = min(soonest, wait)
        }
        return soonest
    }

    /// A transfer left the engine (or was suspended): it no longer holds a place in line.
    func forget(_ taskId: Int, _ throttle: inout TransferThrottle) {
        for direction in TransferDirection.allCases { stopWaiting(taskId, &throttle, direction) }
        throttle.granted.removeAll()
    }

    // MARK: internals

    private func wait(_ taskId: Int, _ throttle: inout TransferThrottle, _ direction: TransferDirection, now: Double, on shared: [SharedBucket]) -> Bool {
        if throttle.waitingSince[direction] == nil { throttle.waitingSince[direction] = now }
        for key in shared { waiting[key, default: []].insert(taskId) }
        return false
    }

    private func stopWaiting(_ taskId: Int, _ throttle: inout TransferThrottle, _ direction: TransferDirection) {
        throttle.waitingSince[direction] = nil
        for background in [false, true] {
            let key = SharedBucket(direction: direction, background: background)
            waiting[key]?.remove(taskId)
        }
    }

    private func sharedBuckets(_ direction: TransferDirection, background isBackground: Bool) -> [SharedBucket] {
        var keys: [SharedBucket] = []
        if isBackground, background[direction] != nil { keys.append(SharedBucket(direction: direction, background: true)) }
        if global[direction] != nil { keys.append(SharedBucket(direction: direction, background: false)) }
        return keys
    }

    private func refill(_ key: SharedBucket, now: Double) {
        if key.background { background[key.direction]?.refill(now: now) } else { global[key.direction]?.refill(now: now) }
    }

    private func hasTokens(_ key: SharedBucket) -> Bool {
        (key.background ? background[key.direction] : global[key.direction])?.hasTokens ?? true
    }

    private static func rate(_ limit: BandwidthLimit?, _ direction: TransferDirection) -> Int? {
        direction == .download ? limit?.downloadBytesPerSecond : limit?.uploadBytesPerSecond
    }

    private static func update(_ bucket: inout TokenBucket?, rate: Int?, now: Double) {
        guard let rate else {
            bucket = nil
            return
        }
        if bucket != nil { bucket?.setRate(rate, now: now) } else { bucket = TokenBucket(rate: rate, now: now) }
    }
}
