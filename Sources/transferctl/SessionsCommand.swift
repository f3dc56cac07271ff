internal import ArgumentParser
internal import JSONModel

/// `transferctl sessions`: the sessions the token sees.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sessions", abstract: "List your sessions.")

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let client = connection.client
        if connection.json {
            let sessions = try Lists.all(client, "/v1/sessions", JSONValue.self)
            StandardStreams.out(JSONValue.object(["items": .array(sessions), "next": .null]).compact + "\n")
            return
        }
        let sessions = try Lists.all(client, "/v1/sessions", SessionInfo.self)
        StandardStreams.out(TaskText.sessionHeader + "\n")
        for session in sessions {
            StandardStreams.out(TaskText.sessionRow(session) + "\n")
        }
    }
}
