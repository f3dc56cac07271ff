/// One configured bearer token: its name (for logs), its secret and its role. Made from
/// `--token`/`TRANSFERD_TOKENS` entries and `--token-file` lines by `TokenConfiguration`.
public struct AccessToken: Sendable, Equatable {
    public var name: String
    public var secret: String
    public var role: TokenRole

    public init(name: String, secret: String, role: TokenRole) {
        self.name = name
        self.secret = secret
        self.role = role
    }
}

/// Why the tokens cannot be used; the daemon refuses to start with it.
public struct TokenConfigurationError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Reads the token configuration: `--token` entries (`NAME:SECRET:ROLE`, `NAME:SECRET` for a
/// tenant, or the older bare `SECRET`) and a token file of `NAME:SECRET[:ROLE]` lines.
///
/// A bare `SECRET` is an admin when it is the only token configured, a tenant otherwise: one
/// bare token is the single user who protects the port (every operation stays theirs, as
/// before roles), several are several users, none of whom may change what the others share.
/// The owner of what a token creates is the fingerprint of its secret alone, so naming a bare
/// token (`--token ops:SECRET:admin`) keeps its sessions, tasks and blobs.
public enum TokenConfiguration {
    /// One entry as written, before a bare token's role is decided.
    struct Entry: Equatable {
        var name: String?
        var secret: String
        var role: TokenRole?
    }

    /// Every token of `entries` and the file's `fileText` (read from `filePath`, named in errors).
    public static func tokens(entries: [String], fileText: String? = nil, filePath: String = "token file") throws(TokenConfigurationError) -> [AccessToken] {
        var parsed: [Entry] = []
        for entry in entries where !entry.isEmpty {
            do throws(TokenConfigurationError) {
                parsed.append(try parse(entry))
            } catch {
                throw TokenConfigurationError("--token/TRANSFERD_TOKENS: \(error)")
            }
        }
        if let fileText { parsed += try parseFile(fileText, path: filePath) }
        return try resolve(parsed)
    }

    /// `SECRET`, `NAME:SECRET` or `NAME:SECRET:ROLE`. An error never repeats what it was given
    /// but a valid name: a mistyped line may hold a secret where the name should be.
    static func parse(_ text: String) throws(TokenConfigurationError) -> Entry {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1:
            return Entry(name: nil, secret: parts[0], role: nil)
        case 2, 3:
            guard isValidName(parts[0]) else {
                throw TokenConfigurationError("a token's name (before the first ':') must be 1 to 64 letters, digits, '.', '_' or '-'")
            }
            guard !parts[1].isEmpty else { throw TokenConfigurationError("token \(parts[0]) has an empty secret") }
            // SECRET:admin would name a token by its secret (and log it): a role needs a name.
            guard parts.count == 3 || TokenRole(rawValue: parts[1]) == nil else {
                throw TokenConfigurationError("a role needs a name: write NAME:SECRET:\(parts[1])")
            }
            var role = TokenRole.tenant
            if parts.count == 3 {
                guard let named = TokenRole(rawValue: parts[2]) else {
                    throw TokenConfigurationError("token \(parts[0]) has the role \"\(parts[2])\"; use admin or tenant")
                }
                role = named
            }
            return Entry(name: parts[0], secret: parts[1], role: role)
        default:
            throw TokenConfigurationError("write a token as NAME:SECRET:ROLE, NAME:SECRET or SECRET (a secret holds no ':')")
        }
    }

    /// A token file: one `NAME:SECRET[:ROLE]` a line; blank lines and lines starting with `#`
    /// are skipped, spaces around a line are ignored. A bad line is named by its number.
    static func parseFile(_ text: String, path: String) throws(TokenConfigurationError) -> [Entry] {
        var entries: [Entry] = []
        // \r\n is one Character in Swift: splitting on isNewline also takes a file written on Windows.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingCharacters(in: [" ", "\t", "\r"])
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            do throws(TokenConfigurationError) {
                let entry = try parse(line)
                guard entry.name != nil else { throw TokenConfigurationError("write NAME:SECRET or NAME:SECRET:ROLE (a file's tokens are named)") }
                entries.append(entry)
            } catch {
                throw TokenConfigurationError("\(path) line \(index + 1): \(error)")
            }
        }
        if entries.isEmpty { throw TokenConfigurationError("\(path) holds no token") }
        return entries
    }

    /// Decides bare tokens' roles and names (their fingerprint) and refuses repeated names or secrets.
    static func resolve(_ entries: [Entry]) throws(TokenConfigurationError) -> [AccessToken] {
        var names = Set<String>(), secrets = Set<String>()
        var tokens: [AccessToken] = []
        for entry in entries {
            let name = entry.name ?? Authenticator.fingerprint(entry.secret)
            guard names.insert(name).inserted else { throw TokenConfigurationError("the token name \(name) is used twice") }
            guard secrets.insert(entry.secret).inserted else { throw TokenConfigurationError("token \(name) has the same secret as another token") }
            tokens.append(AccessToken(name: name, secret: entry.secret, role: entry.role ?? (entries.count == 1 ? .admin : .tenant)))
        }
        return tokens
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

extension StringProtocol {
    /// The text without the characters of `set` at either end.
    func trimmingCharacters(in set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
