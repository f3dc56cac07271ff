/// A background session's attachment: the one client that may call itself attached, as one app
/// process holds a background URLSession (a second gets backgroundSessionInUseByAnotherProcess).
///
/// Issued by every create or reattach; it becomes live when an events poll first carries it
/// (so clients that never send one are never locked out) and stays live while such polls keep
/// coming within the lease. Not stored: after a restart nothing is attached.
struct Attachment: Sendable, Equatable {
    let id: String
    /// Whether an events poll has carried it.
    var claimed = false
    /// When a poll last carried it (or it was issued), monotonic seconds.
    var lastSeen: Double

    /// Whether it still holds the session at `now`.
    func isLive(now: Double, lease: Double) -> Bool {
        claimed && now - lastSeen <= lease
    }
}
