/// The SQLite store's queued writes go through its `QueuedWriter`, which commits through
/// `SQLiteWrites` (`QueuedWrites`).
extension Store: QueuedWrites {}
