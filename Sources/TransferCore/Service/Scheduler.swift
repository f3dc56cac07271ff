internal import FoundationEssentials

/// Admission of queued tasks to the engine: a global cap on running transfers and a per-host cap
/// (httpMaximumConnectionsPerHost of the task's session). Higher priority first; equal priority
/// first come, first served. A value type with no I/O, so it is tested on its own.
struct Scheduler: Sendable {
    struct Entry: Sendable, Equatable {
        let taskId: Int
        var priority: Double
        let order: Int
        let host: String
        let hostLimit: Int
    }

    var maxConcurrent: Int
    private(set) var queue: [Entry] = []
    private(set) var running: [Int: String] = [:]
    private var perHost: [String: Int] = [:]
    private var order = 0

    init(maxConcurrent: Int) { self.maxConcurrent = max(1, maxConcurrent) }

    /// The key transfers share a connection limit under: session and origin.
    static func hostKey(sessionId: String, url: String) -> String {
        let origin = RequestURL.origin(of: url) ?? url
        return sessionId + " " + origin
    }

    mutating func enqueue(taskId: Int, priority: Double, host: String, hostLimit: Int) {
        guard running[taskId] == nil, !queue.contains(where: { $0.taskId == taskId }) else { return }
        order += 1
        insert(Entry(taskId: taskId, priority: priority, order: order, host: host, hostLimit: max(1, hostLimit)))
    }

    private mutating func insert(_ entry: Entry) {
        let index = queue.firstIndex { $0.priority < entry.priority || ($0.priority == entry.priority && $0.order > entry.order) } ?? queue.count
        queue.insert(entry, at: index)
    }

    /// Takes a task out, whether queued or running (its slot is freed).
    mutating func remove(taskId: Int) {
        if let host = running.removeValue(forKey: taskId) {
            perHost[host, default: 1] -= 1
            if perHost[host] == 0 { perHost[host] = nil }
        }
        queue.removeAll { $0.taskId == taskId }
    }

    /// Re-orders a queued task at once (a running task keeps its slot).
    mutating func reprioritise(taskId: Int, priority: Double) {
        guard let index = queue.firstIndex(where: { $0.taskId == taskId }) else { return }
        var entry = queue.remove(at: index)
        entry.priority = priority
        insert(entry)
    }

    /// Admits as many queued tasks as the caps allow, in admission order.
    mutating func admit() -> [Int] {
        var admitted: [Int] = []
        var index = 0
        while running.count < maxConcurrent, index < queue.count {
            let entry = queue[index]
            if perHost[entry.host, default: 0] < entry.hostLimit {
                queue.remove(at: index)
                running[entry.taskId] = entry.host
                perHost[entry.host, default: 0] += 1
                admitted.append(entry.taskId)
            } else {
                index += 1
            }
        }
        return admitted
    }

    func isQueued(_ taskId: Int) -> Bool { queue.contains { $0.taskId == taskId } }
}

extension RequestURL {
    /// "scheme://host:port" with the scheme's default port filled in.
    static func origin(of text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
