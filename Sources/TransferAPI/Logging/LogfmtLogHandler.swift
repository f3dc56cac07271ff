public import Logging

/// The daemon's log handler: one line per event in logfmt,
/// `ts=2026-05-01T09:30:00.123Z level=info label=transferd msg="transferd listening" http.port=8080`,
/// the metadata (handler's, provider's, then the event's) as `key=value` pairs in key order.
/// Installed by the executable with `LoggingSystem.bootstrap`; lines go to a `LogSink`.
///
/// Why logfmt: it is one line per event that both people and log shippers (Loki, Vector,
/// `grep key=value`) read without a schema, and it keeps the `http.port=N` form the tests and
/// scripts already look for.
public struct LogfmtLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: LogSink

    public init(label: String, level: Logger.Level, sink: LogSink, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.logLevel = level
        self.sink = sink
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let own = event.metadata { all.merge(own) { $1 } }
        var line = LogfmtLine()
        line.append("ts", LogTimestamp.now())
        line.append("level", event.level.rawValue)
        line.append("label", label)
        line.append("msg", event.message.description)
        for key in all.keys.sorted() {
            line.append(key, Self.text(all[key]!))
        }
        if let error = event.error { line.append("error.type", String(describing: type(of: error))) }
        sink.write(line.finished())
    }

    /// A metadata value as one logfmt value: lists and dictionaries in their bracketed form.
    private static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return "[" + values.map(text).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            return "{" + dictionary.keys.sorted().map { "\($0):\(text(dictionary[$0]!))" }.joined(separator: ",") + "}"
        }
    }
}
