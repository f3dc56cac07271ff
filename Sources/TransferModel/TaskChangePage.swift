/// What `GET /v1/tasks?after=` serves: the tasks the client may see that changed after its
/// cursor (oldest change first, each once, as it is now), the ids of those deleted since, and the
/// cursor to send next. `resync` says the cursor cannot be followed (removals older than the
/// daemon keeps were dropped, or it comes from before a restart):
/// the client should start again from `after=0` and forget tasks that answer does not list.
public struct TaskChangePage: Encodable, Sendable {
    public var tasks: [ServedTask]
    public var removed: [Int]
    public var next: Int
    public var resync: Bool

    /// The memberwise initializer, for the layers above.
    package init(tasks: [ServedTask], removed: [Int], next: Int, resync: Bool) {
        self.tasks = tasks
        self.removed = removed
        self.next = next
        self.resync = resync
    }
}
