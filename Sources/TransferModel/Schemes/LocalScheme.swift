/// The URL schemes the daemon answers itself instead of libcurl: `data:` (RFC 2397, which
/// libcurl lacks) and `file:` (libcurl has it, but reads must be confined to the daemon's roots).
package enum LocalScheme {
    case data
    case file

    /// The local scheme of `url`, nil for any other scheme.
    package init?(url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        switch url[..<colon].lowercased() {
        case "data": self = .data
        case "file": self = .file
        default: return nil
        }
    }
}
