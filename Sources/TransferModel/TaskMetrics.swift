internal import FoundationEssentials
package import JSONModel

/// What a task measured (URLSessionTaskMetrics, same names), collected when it completes and
/// kept with it: `GET /v1/tasks/{tid}/metrics`. Built by `TransferService` from the
/// transactions the engine reports; stored as JSON in the `task_metrics` table.
public struct TaskMetrics: Codable, Sendable, Equatable {
    /// From the task's creation to its completion (URLSession: from resume to metrics).
    public struct Interval: Codable, Sendable, Equatable {
        public var start: MetricsDate
        /// Seconds.
        public var duration: Double

        /// The memberwise initializer, for the layers above.
        package init(start: MetricsDate, duration: Double) {
            self.start = start
            self.duration = duration
        }
    }

    public var taskInterval: Interval
    /// Redirects followed (all attempts of the task together).
    public var redirectCount: Int
    /// Every request the task made, in order, retries' and redirects' included.
    public var transactionMetrics: [TransactionMetrics]

    /// The small form carried by the didFinishCollectingMetrics event (the full object is at
    /// the endpoint).
    package var eventFields: [String: JSONValue] {
        [
            "redirectCount": .integer(Int64(redirectCount)),
            "transactionCount": .integer(Int64(transactionMetrics.count)),
            // Built directly (JSONValue(encoding:) round-trips through JSON text): a whole
            // number of seconds reads back as an integer, as it would from that text.
            "taskInterval": .object([
                "duration": taskInterval.duration == taskInterval.duration.rounded() && abs(taskInterval.duration) < 1e15
                    ? .integer(Int64(taskInterval.duration)) : .number(taskInterval.duration),
                "start": .string(taskInterval.start.text),
            ]),
        ]
    }

    /// The memberwise initializer, for the layers above.
    package init(taskInterval: Interval, redirectCount: Int, transactionMetrics: [TransactionMetrics]) {
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.transactionMetrics = transactionMetrics
    }
}
