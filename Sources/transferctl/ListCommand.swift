internal import ArgumentParser
internal import JSONModel

/// `transferctl ls [--session SID]`: the tasks of one session, or of every session the token sees.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List tasks: of one session, or of all your sessions.")

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .long, help: ArgumentHelp("Only this session's tasks.", valueName: "SID"))
    var session: String?

    @Option(name: .long, help: ArgumentHelp("Only tasks in this state: suspended, running, canceling, completed.", valueName: "STATE"))
    var state: String?

    func run() throws {
        let client = connection.client
        let sessions = try session.map { [$0] } ?? Lists.all(client, "/v1/sessions", SessionInfo.self).map(\.id)
        let paths = sessions.map { APIClient.path("v1", "sessions", $0, "tasks") }
        let query = [("state", state)]
        if connection.json {
            let tasks = try paths.flatMap { try Lists.all(client, $0, JSONValue.self, query: query) }
            StandardStreams.out(JSONValue.object(["items": .array(tasks), "next": .null]).compact + "\n")
            return
        }
        let tasks = try paths.flatMap { try Lists.all(client, $0, TaskInfo.self, query: query) }
        StandardStreams.out(TaskText.tableHeader + "\n")
        for task in tasks { StandardStreams.out(TaskText.row(task) + "\n") }
    }
}

/// Reads a list to its end, page after page (`limit`, `cursor`, `next`).
enum Lists {
    static func all<Item: Decodable>(_ client: APIClient, _ path: String, _ type: Item.Type,
                                     query: [(String, String?)] = []) throws -> [Item] {
        var items: [Item] = []
        var cursor: String?
        repeat {
            let page = try client.send("GET", path + APIClient.query(query + [("limit", "1000"), ("cursor", cursor)]))
                .decode(Page<Item>.self)
            items += page.items
            cursor = page.next
        } while cursor != nil
        return items
    }
}
