internal import CCurl
internal import Synchronization

/// Wakes the thread blocked in `MultiHandle.poll` from any thread.
///
/// `@unchecked Sendable` because it holds the multi handle's pointer, but it only ever calls
/// `curl_multi_wakeup` (documented thread-safe), under a lock that `invalidate()` also takes
/// before the multi handle is cleaned up, so it never touches a freed handle.
public final class MultiWaker: @unchecked Sendable {
    private let lock = Mutex(())
    private var raw: UnsafeMutableRawPointer?  // read and cleared only under `lock`

    init(_ raw: UnsafeMutableRawPointer) { self.raw = raw }

    /// - SeeAlso: https://curl.se/libcurl/c/curl_multi_wakeup.html
    public func wakeup() {
        lock.withLock { _ in
            if let raw { curl_multi_wakeup(raw) }
        }
    }

    func invalidate() { lock.withLock { _ in raw = nil } }
}
