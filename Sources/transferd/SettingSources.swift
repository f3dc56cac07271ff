import ArgumentParser
import FoundationEssentials
internal import Glibc
internal import JSONModel

/// Where a setting comes from when no flag gives it: the environment (`TRANSFERD_*`), a
/// variable's `_FILE` twin (its value read from that file: Docker and Kubernetes secrets), then
/// the configuration file (`--config FILE` / `TRANSFERD_CONFIG`), then the default. Everything is
/// turned into the environment's form first, so `TransferdCommand.resolve` checks each value in
/// one place whatever its source.
enum SettingSources {
    /// The keys a configuration file may hold: the long flags' names.
    static let keys = [
        "listen", "data-dir", "database-url", "node-id", "lease-timeout", "downloads-dir", "uploads-dir", "file-url-roots",
        "ssh-known-hosts", "token", "token-file", "allow-unauthenticated", "deny-networks", "allow-networks", "max-transfers",
        "discretionary-window", "max-body-size", "max-decompression-ratio", "max-request-size", "max-blob-size",
        "tenant-max-tasks", "tenant-max-disk", "task-retention", "retry-backoff", "connectivity-backoff", "max-download-rate",
        "max-upload-rate", "attachment-lease", "webhook-retry", "webhook-attempts", "url-cache-memory", "url-cache-disk",
        "http-threads", "max-connections", "max-connections-per-client", "idle-connection-timeout", "log-level",
    ]

    /// The variable a key stands for: TRANSFERD_ and the name in capitals (`--token` is the
    /// plural TRANSFERD_TOKENS, a comma-separated list, and `--token-file` TRANSFERD_TOKENS_FILE).
    static func variable(of key: String) -> String {
        switch key {
        case "token": "TRANSFERD_TOKENS"
        case "token-file": "TRANSFERD_TOKENS_FILE"
        default: "TRANSFERD_" + String(key.uppercased().map { $0 == "-" ? "_" : $0 })
        }
    }

    /// Keys whose values are secrets: a file holding them must not be readable by every user.
    static let secretKeys: Set<String> = ["token", "database-url"]

    /// The process environment with the `_FILE` twins read and the configuration file's values
    /// under both: what `resolve` reads as its environment.
    static func environment(_ process: [String: String], configFile: String?) throws -> [String: String] {
        var environment = try readingFileTwins(process)
        if let path = configFile ?? process["TRANSFERD_CONFIG"], !path.isEmpty {
            environment.merge(try configuration(at: path)) { fromEnvironment, _ in fromEnvironment }
        }
        return environment
    }

    /// `TRANSFERD_X_FILE=/run/secrets/x` gives TRANSFERD_X the file's text (one trailing line
    /// break dropped). TRANSFERD_TOKENS_FILE is not a twin of TRANSFERD_TOKENS: it is
    /// `--token-file`, a file of token lines, read as such.
    static func readingFileTwins(_ process: [String: String]) throws -> [String: String] {
        var environment = process
        for key in keys where key != "token" && key != "token-file" {
            let name = variable(of: key)
            guard let path = process[name + "_FILE"] else { continue }
            guard process[name] == nil else { throw ValidationError("set \(name) or \(name)_FILE, not both") }
            guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
                throw ValidationError("\(name)_FILE: cannot read \(path)")
            }
            if text.hasSuffix("\n") { text.removeLast() }  // "\r\n" is one Character
            environment[name] = text
        }
        return environment
    }

    /// The configuration file: one JSON object whose keys are the long flags' names and whose
    /// values are strings, integers, booleans (`allow-unauthenticated`) or arrays of strings
    /// (`token`, `deny-networks`, `allow-networks`, `file-url-roots`). An unknown key or another
    /// kind of value stops the start, named; so does a file every user may read when it holds a
    /// token or the database URL.
    static func configuration(at path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--config/TRANSFERD_CONFIG: cannot read \(path)")
        }
        let object: [String: JSONValue]
        do {
            guard case .object(let members) = try JSONDecoder().decode(JSONValue.self, from: data) else {
                throw ValidationError("\(path): the configuration must be one JSON object")
            }
            object = members
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(path) is not valid JSON: \(error)")
        }
        var values: [String: String] = [:]
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard keys.contains(key) else {
                throw ValidationError("\(path): unknown setting \"\(key)\" (the keys are the long flags' names: \(keys.joined(separator: ", ")))")
            }
            values[variable(of: key)] = try text(of: value, key: key, path: path)
        }
        if object.keys.contains(where: secretKeys.contains) {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o004 != 0 {
                throw ValidationError("\(path) holds a token or the database URL and every user may read it: chmod o-r \(path)")
            }
        }
        return values
    }

    private static func text(of value: JSONValue, key: String, path: String) throws -> String {
        switch value {
        case .string(let text):
            return text
        case .integer(let number):
            return String(number)
        case .bool(let on):
            return on ? "1" : "0"
        case .array(let items):
            return try items.map { item in
                guard case .string(let text) = item, !text.contains(",") else {
                    throw ValidationError("\(path): \"\(key)\" must be a string, a number or an array of strings without commas")
                }
                return text
            }.joined(separator: ",")
        default:
            throw ValidationError("\(path): \"\(key)\" must be a string, a number, true/false or an array of strings")
        }
    }
}
