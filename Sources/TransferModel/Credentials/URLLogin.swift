internal import FoundationEssentials

/// The user and password a request URL carries (`http://user:pass@host/`). They are taken out
/// of the URL when the task is made, so the task's JSON, its events, resume data, rows, logs
/// and metrics only ever hold the URL without them, and they are used as curl uses them:
/// percent-decoded, sent with Basic at once (an FTP or SFTP login), only to that URL's own
/// origin (libcurl keeps them from other hosts on redirects, and a challenge answered after a
/// redirect is answered from the store, not with them). They belong to the task alone, never
/// put in the tenant's credential store: kept with the task in memory, sealed in its stored
/// row (`TransferService.sealLogin`, so a background task still has them after a restart)
/// and inside its sealed resume data.
package struct URLLogin: Codable, Sendable, Equatable {
    package let user: String
    package let password: String
    /// Where they may be sent (nil for a URL that is not http or https: the whole transfer).
    package let origin: ChallengeOrigin?

    /// Splits `url` into the URL without its userinfo and the login it carried (nil when it
    /// had none, or when it is not a hierarchical URL with an authority, e.g. data:).
    package static func split(_ url: String) -> (url: String, login: URLLogin?) {
        // Most URLs have no `@` at all: a byte scan spares them the generic substring search
        // (5% of a batch's creation, issue 18).
        guard url.utf8.contains(UInt8(ascii: "@")), let colonSlashSlash = url.firstRange(of: "://") else { return (url, nil) }
        let authorityStart = colonSlashSlash.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return (url, nil) }
        let userinfo = url[authorityStart..<at]
        let clean = String(url[..<authorityStart]) + String(url[url.index(after: at)...])
        let colon = userinfo.firstIndex(of: ":")
        let user = String(userinfo[..<(colon ?? userinfo.endIndex)])
        let password = colon.map { String(userinfo[userinfo.index(after: $0)...]) } ?? ""
        let login = URLLogin(user: String(decoding: PercentDecoding.bytes(Substring(user)), as: UTF8.self),
                             password: String(decoding: PercentDecoding.bytes(Substring(password)), as: UTF8.self),
                             origin: ChallengeOrigin(url: clean))
        return (clean, login)
    }

    /// `url` without userinfo (a URL that is only shown, such as mainDocumentURL).
    package static func strip(_ url: String) -> String { split(url).url }
}
