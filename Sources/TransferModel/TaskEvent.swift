public import FoundationEssentials
public import JSONModel

/// The delegate callbacks, as a feed.
public enum EventType: String, Codable, Sendable, CaseIterable {
    case didReceiveResponse, didReceiveData, didSendBodyData, willPerformHTTPRedirection
    case didWriteData, didResumeAtOffset, didFinishDownloadingTo
    /// URLSession's didBecomeDownloadTask: the data task's responseDisposition made it a
    /// download; `downloadTaskId` is the task's own id (the same task goes on as the download).
    case didBecomeDownloadTask
    /// Not URLSession's: a resumable (tus) upload continues at the server's offset.
    case didResumeUpload
    case didCompleteWithError, didBecomeInvalid
    /// URLSession's didFinishCollectingMetrics, right before didCompleteWithError: the redirect
    /// and transaction counts and the task interval; the whole `TaskMetrics` is at
    /// GET /v1/tasks/{tid}/metrics.
    case didFinishCollectingMetrics
    /// A 401 challenged the task: the protection space, the failures so far, and the stored
    /// credential (user only) the daemon answers with, or null when the 401 stands.
    case didReceiveChallenge
    /// A client-streamed body has sent every chunk so far and waits for the next.
    case needNewBodyStream
    /// Not URLSession's: a background transfer gave its slot to a higher class; it is queued
    /// again and continues from its partial file when admitted.
    case wasPreempted
    /// URLSession's willBeginDelayedRequest: a task held by its earliestBeginDate starts now.
    case willBeginDelayedRequest
    /// URLSession's: the task cannot reach its host and waits for connectivity (once per wait).
    case taskIsWaitingForConnectivity
    /// Not URLSession's: a transient failure, the task is tried again after `delay` seconds.
    case willRetry
    /// URLSession's urlSessionDidFinishEvents(forBackgroundURLSession:): appended once per
    /// reattach of a background session, right after the events it had not acknowledged.
    case didFinishEvents
    /// URLSession's willCacheResponse: the response is about to be stored in the URL cache
    /// (`storagePolicy`: allowed or allowedInMemoryOnly).
    case willCacheResponse
    /// URLSession's readClosedFor(streamTask:): the peer closed its side (end of stream), or the
    /// client closed the read side.
    case readClosed
    /// URLSession's writeClosedFor(streamTask:): every written byte went and the sending side
    /// is shut down.
    case writeClosed
    /// Not URLSession's: a segmented download stopped using one of its sources (`url`, the
    /// task URL's or a mirror's) for `error`; the download goes on from the others.
    case didDropSource
    /// Not URLSession's: a decision (`decisionId`, issue 21) was answered, by the client or, when
    /// no answer came in time, by the default handling (`timedOut` true).
    case didResolveDecision
    /// URLSession's didBecome streamTask: the data task's response was answered becomeStream;
    /// `streamTaskId` is the task's own id, whose stream reads give the body.
    case didBecomeStreamTask
}

/// One delegate callback in a session's event feed. `seq` is global and increasing, so it is the
/// feed's cursor. The callback's own fields sit flat beside the common ones.
public struct TaskEvent: Codable, Sendable, Equatable {
    public var seq: Int
    public var sessionId: String
    public var taskId: Int?
    public var type: EventType
    public var time: Date
    public var fields: [String: JSONValue]
    /// The owner of its task (the token's fingerprint): who may see it in the shared session,
    /// after the task itself has left memory. Not served; the store keeps it in its own column.
    package var owner: String?

    public init(seq: Int, sessionId: String, taskId: Int?, type: EventType, time: Date, fields: [String: JSONValue]) {
        self.seq = seq
        self.sessionId = sessionId
        self.taskId = taskId
        self.type = type
        self.time = time
        self.fields = fields
    }

    /// The most body bytes one didReceiveData event carries (`dataInEvents`); more arrived at
    /// once are told in several events.
    public static let maxDataPerEvent = 64 * 1024

    /// The keys every event has, named once in `TaskJSONWriter.CommonEventKey`.
    static let commonKeys = Set(TaskJSONWriter.CommonEventKey.allCases.map { "\($0.name)" })

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        seq = try c.decode(Int.self, forKey: AnyCodingKey(stringValue: "seq"))
        sessionId = try c.decode(String.self, forKey: AnyCodingKey(stringValue: "sessionId"))
        taskId = try c.decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: "taskId"))
        type = try c.decode(EventType.self, forKey: AnyCodingKey(stringValue: "type"))
        time = try c.decode(Date.self, forKey: AnyCodingKey(stringValue: "time"))
        var fields: [String: JSONValue] = [:]
        for key in c.allKeys where !Self.commonKeys.contains(key.stringValue) {
            fields[key.stringValue] = try c.decode(JSONValue.self, forKey: key)
        }
        self.fields = fields
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        try c.encode(seq, forKey: AnyCodingKey(stringValue: "seq"))
        try c.encode(sessionId, forKey: AnyCodingKey(stringValue: "sessionId"))
        try c.encode(taskId, forKey: AnyCodingKey(stringValue: "taskId"))
        try c.encode(type, forKey: AnyCodingKey(stringValue: "type"))
        try c.encode(time, forKey: AnyCodingKey(stringValue: "time"))
        for (key, value) in fields where !Self.commonKeys.contains(key) {
            try c.encode(value, forKey: AnyCodingKey(stringValue: key))
        }
    }
}

/// A page of a session's feed: events after the cursor, and the cursor to pass next.
public struct EventPage: Codable, Sendable {
    public var events: [TaskEvent]
    public var next: Int

    /// The memberwise initializer, for the layers above.
    package init(events: [TaskEvent], next: Int) {
        self.events = events
        self.next = next
    }
}
