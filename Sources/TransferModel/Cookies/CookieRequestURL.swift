internal import FoundationEssentials

/// The parts of a request URL that cookies depend on: its canonical host, path and whether it
/// is secure. nil for a URL that cannot carry cookies (not http or https, or without a host).
package struct CookieRequestURL: Equatable {
    package var host: String
    var path: String
    var isSecure: Bool

    package init?(_ text: String) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }  // "example.com." is example.com
        self.host = host
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : path
        isSecure = scheme == "https"
    }
}
