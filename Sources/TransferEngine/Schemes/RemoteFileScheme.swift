internal import FoundationEssentials
internal import TransferModel

/// The file-transfer schemes libcurl runs besides HTTP: `ftp:` (RFC 959; TLS upgraded with AUTH
/// TLS when the session's `ftpRequiresTLS` says so, RFC 4217), `ftps:` (implicit FTPS: TLS from
/// the first byte, port 990) and `sftp:` (SSH File Transfer over libssh2, port 22). A task of
/// these schemes runs through `Transfer` as HTTP does, configured by `Transfer+RemoteFile.swift`:
/// GET downloads a file or, for a URL ending in "/", lists the folder; PUT uploads the request
/// body as the file. There is no status code, header, redirect, cookie or cache for them.
package enum RemoteFileScheme: String, Sendable, CaseIterable {
    case ftp, ftps, sftp

    /// The remote-file scheme of `url`, nil for any other scheme.
    package init?(url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        self.init(rawValue: url[..<colon].lowercased())
    }

    /// The scheme's name in CURLOPT_PROTOCOLS_STR.
    var curlProtocol: String { rawValue }

    /// The protection space protocol its credentials are stored under.
    var spaceProtocol: ProtectionSpaceProtocol {
        switch self {
        case .ftp: .ftp
        case .ftps: .ftps
        case .sftp: .sftp
        }
    }

    /// Whether a URL names a folder (its path ends in "/"): its task's body is the listing.
    static func isListing(_ url: String) -> Bool {
        guard let parsed = URL(string: url) else { return false }
        let path = parsed.path(percentEncoded: true)
        return path.isEmpty || path.hasSuffix("/")
    }
}
