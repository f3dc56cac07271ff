internal import ArgumentParser
internal import Glibc

/// The options every subcommand takes: which daemon, which token, and JSON output. The server and
/// token come from the flags, else from TRANSFERD_SERVER and TRANSFERD_TOKEN.
struct ConnectionOptions: ParsableArguments {
    static let defaultServer = "http://127.0.0.1:8080"

    @Option(name: .long, help: ArgumentHelp("The daemon's base URL (else $TRANSFERD_SERVER, else \(defaultServer)).", valueName: "URL"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("The bearer token (else $TRANSFERD_TOKEN). Never printed.", valueName: "TOKEN"))
    var token: String?

    @Flag(name: .long, help: "Print the daemon's JSON on stdout instead of text, for scripts.")
    var json = false

    var client: APIClient {
        APIClient(server: server ?? Self.environment("TRANSFERD_SERVER") ?? Self.defaultServer,
                  token: token ?? Self.environment("TRANSFERD_TOKEN"))
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
