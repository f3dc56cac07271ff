internal import ArgumentParser
internal import JSONModel

/// `transferctl events SID [--follow]`: a session's event feed, one line per event, through
/// the feed's long-poll (`GET /v1/sessions/{sid}/events?after=N&wait=S`).
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Print a session's events (its delegate callbacks), one a line.",
        discussion: "Text: SEQ TIME TASK TYPE FIELDS (the event's other fields as JSON). --json: each event's JSON on a line.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The session's id (or shared).", valueName: "SID")) var session: String

    @Flag(name: [.short, .long], help: "Keep waiting for new events until Ctrl-C.")
    var follow = false

    @Option(name: .long, help: ArgumentHelp("Start after this seq (0: from the start).", valueName: "SEQ"))
    var after: Int64 = 0

    func run() throws {
        let client = connection.client
        var after = after
        let wait = follow ? 30 : 0
        while true {
            let path = APIClient.path("v1", "sessions", session, "events")
                + APIClient.query([("after", String(after)), ("wait", String(wait)), ("limit", "1000")])
            let page = try client.send("GET", path, seconds: wait + 30).decode(EventPage.self)
            for event in page.events {
                StandardStreams.out((connection.json ? event.compact : Self.line(event)) + "\n")
            }
            after = page.next
            if page.events.isEmpty && !follow { return }
        }
    }

    /// "12 2025-01-01T00:00:00Z task 3 didWriteData {"bytesWritten":...}".
    static func line(_ event: JSONValue) -> String {
        var rest: [String: JSONValue] = [:]
        if case .object(let fields) = event { rest = fields }
        let head = ["seq", "time", "taskId", "type"].map { rest.removeValue(forKey: $0) }
        let task = head[2].map { $0 == .null ? "session" : "task \($0.text)" } ?? "session"
        var line = "\(head[0]?.text ?? "?") \(head[1]?.text ?? "?") \(task) \(head[3]?.text ?? "?")"
        rest["sessionId"] = nil  // the feed is one session's: the id would only repeat the argument
        if !rest.isEmpty { line += " " + JSONValue.object(rest).compact }
        return line
    }
}
