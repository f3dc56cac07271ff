/// One ExceptionsList entry of a `ProxyDictionary`: a request to a matching host connects
/// directly. The forms macOS's proxy settings take:
/// - `host.example` or an IP address: that host only (case-insensitive);
/// - `*.example.com` or `.example.com`: every name under example.com (not example.com itself);
/// - `10.0.0.0/8`, `169.254/16` (missing octets are zero), `fd00::/8`: addresses in that range.
/// Address ranges match only URLs whose host is an IP address: names are not resolved to decide.
public struct ProxyException: Sendable, Equatable {
    /// The entry as given, served back as it was.
    public let pattern: String
    let rule: Rule

    enum Rule: Equatable, Sendable {
        case host(String)
        case subdomains(of: String)
        case network(IPAddress, prefixLength: Int)
    }

    init(_ pattern: String, field: String) throws {
        self.pattern = pattern
        let text = pattern.lowercased()
        func refuse() -> InputError {
            InputError.invalidValue(field: field, message: "must be a host (example.com), a domain (*.example.com or .example.com), an IP address, or an address range (10.0.0.0/8, 169.254/16, fd00::/8)")
        }
        if let slash = text.firstIndex(of: "/") {
            guard let length = Int(text[text.index(after: slash)...]), let network = Self.network(String(text[..<slash])),
                  (0...network.bytes.count * 8).contains(length) else { throw refuse() }
            rule = .network(network, prefixLength: length)
        } else if let address = IPAddress(text) {
            rule = .network(address, prefixLength: address.bytes.count * 8)
        } else {
            var name = Substring(text)
            if name.hasPrefix("*.") { name = name.dropFirst(2) } else if name.hasPrefix(".") { name = name.dropFirst() }
            let isDomain = name.count < text.count
            guard !name.isEmpty, name.utf8.count <= 253, Self.isHostName(name) else { throw refuse() }
            rule = isDomain ? .subdomains(of: String(name)) : .host(String(name))
        }
    }

    /// An address, or for IPv4 its first octets with the rest zero ("169.254" is 169.254.0.0).
    private static func network(_ text: String) -> IPAddress? {
        if let address = IPAddress(text) { return address }
        let octets = text.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard (1...3).contains(octets.count), octets.allSatisfy({ $0 != nil }) else { return nil }
        return IPAddress(bytes: octets.map { $0! } + [UInt8](repeating: 0, count: 4 - octets.count))
    }

    private static func isHostName(_ name: Substring) -> Bool {
        name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._".unicodeScalars.contains($0)) }
    }

    /// Whether a request to `host` (lowercased, as a URL gives it) bypasses the proxy.
    func matches(host: String, address: IPAddress?) -> Bool {
        switch rule {
        case .host(let name): return host == name
        case .subdomains(of: let domain): return host.hasSuffix("." + domain)
        case .network(let network, let length): return address?.isIn(network, prefixLength: length) ?? false
        }
    }
}
