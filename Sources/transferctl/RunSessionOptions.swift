internal import ArgumentParser
internal import JSONModel

/// The options that need a session configured for them (`get`, `resume-from`): `--proxy` and
/// `-k`. A run with either makes a session of its own (`SessionChoice.ofItsOwn`).
struct RunSessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A proxy for these downloads, [http|https|socks5|socks5h://][USER:PASSWORD@]HOST[:PORT] (port 1080 by default, as curl). The daemon connects through it; the run gets a session of its own.", valueName: "URL"))
    var proxy: ProxyArgument?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the server's TLS certificate (dangerous: anyone on the path can read and change the file). The run gets a session of its own.")
    var insecure = false

    func validate(session: String?) throws {
        if (proxy != nil || insecure) && session != nil {
            throw ValidationError("--proxy and -k make a session of their own for the run: leave --session out")
        }
    }

    /// What the run's own session needs, nil when transferctl's usual session serves.
    var configuration: [String: JSONValue]? {
        var configuration: [String: JSONValue] = [:]
        if let proxy { configuration["connectionProxyDictionary"] = proxy.dictionary }
        if insecure { configuration["tlsVerifiesServerCertificate"] = .bool(false) }
        return configuration.isEmpty ? nil : configuration
    }

    /// The same options for the command that continues this run (Ctrl-C's resume hint).
    var again: String {
        (insecure ? " -k" : "") + (proxy.map { " --proxy \(DownloadRun.shellQuoted($0.argument))" } ?? "")
    }

    /// The session to use: one of the run's own when these options ask for it (with -k's
    /// warning), else `SessionChoice.resolve`. `own` is set when it is the run's own.
    func session(_ explicit: String?, client: APIClient) throws -> (id: String, own: Bool) {
        if insecure {
            StandardStreams.err("transferctl: WARNING: -k: the server's TLS certificate is not verified; anyone on the path can read and change what is downloaded\n")
        }
        if let configuration { return (try SessionChoice.ofItsOwn(configuration, client: client), true) }
        return (try SessionChoice.resolve(explicit, client: client), false)
    }
}
