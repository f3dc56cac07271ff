internal import ArgumentParser

/// A task priority as the API takes it: 0.0 to 1.0, or `low`, `default`, `high`.
enum PriorityArgument: ExpressibleByArgument, Encodable, Equatable {
    case named(String)
    case value(Double)

    init?(argument: String) {
        if ["low", "default", "high"].contains(argument) { self = .named(argument) }
        else if let value = Double(argument), (0...1).contains(value) { self = .value(value) }
        else { return nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .named(let name): try container.encode(name)
        case .value(let value): try container.encode(value)
        }
    }
}

/// `--limit-rate`: bytes per second, with K, M or G as curl takes it.
struct RateArgument: ExpressibleByArgument, Equatable {
    var bytesPerSecond: Int64

    init?(argument: String) {
        guard let rate = ByteFormat.parseRate(argument) else { return nil }
        bytesPerSecond = rate
    }
}

/// `-H "Name: value"`, as curl takes it.
struct HeaderArgument: ExpressibleByArgument, Equatable {
    var name: String
    var value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        name = argument[..<colon].trimmingSpaces
        value = argument[argument.index(after: colon)...].trimmingSpaces
        guard !name.isEmpty, !name.contains(" ") else { return nil }
    }

    /// The headers as the API's `headers` object; nil when there are none.
    static func object(_ headers: [HeaderArgument]) -> [String: String]? {
        guard !headers.isEmpty else { return nil }
        return Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}

/// `-u USER:PASSWORD`, as curl takes it: sent to the daemon as the URL's user information, which
/// the daemon takes out of the URL and keeps sealed as the task's own login (never served).
struct UserArgument: ExpressibleByArgument, Equatable {
    var user: String
    var password: String

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        user = String(argument[..<colon])
        password = String(argument[argument.index(after: colon)...])
        guard !user.isEmpty else { return nil }
    }

    /// `url` with this login as its user information (any it had replaced); nil for a URL
    /// without "scheme://".
    func applied(to url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let restStart = url.index(colon, offsetBy: 3)
        let rest = url[restStart...]
        let authorityEnd: String.Index = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority: Substring = rest[..<authorityEnd]
        let host: Substring = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        // Unreserved characters only: nothing in it can end the user information early.
        let login: String = APIClient.percentEncoded(user) + ":" + APIClient.percentEncoded(password)
        let scheme = String(url[..<restStart])
        let tail = String(rest[authorityEnd...])
        return scheme + login + "@" + String(host) + tail
    }
}
