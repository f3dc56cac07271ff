internal import FoundationEssentials
internal import TransferModel
internal import TransferEngine

/// What one transfer does with cookies, decided by the service when the job starts (the
/// session's jar and accept policy, the request's main document). Only made for a request that
/// handles cookies (httpShouldSetCookies and httpShouldHandleCookies both true).
struct TransferCookies: CookieHandling {
    let storage: CookieStorage
    let jar: CookieStorage.JarID
    /// False when the request carries its own Cookie header: it keeps it and gets no jar cookies.
    let sends: Bool
    let acceptPolicy: CookieAcceptPolicy
    /// The main document's URL: under onlyFromMainDocumentDomain a cookie is accepted only for
    /// its host's site (same registrable domain). Parsed only when a response sets a cookie.
    let mainDocumentURL: String

    /// The Cookie header for the request to `url`, or nil.
    func header(for url: String) -> String? {
        sends ? storage.header(for: url, in: jar) : nil
    }

    /// Stores the Set-Cookie fields of a response head received from `url`, as the policy allows.
    func receive(_ head: ResponseHead, from url: String) {
        guard acceptPolicy != .never else { return }
        let lines = head.fields.filter { $0.name.equalsIgnoringASCIICase("set-cookie") }.map(\.value)
        guard !lines.isEmpty else { return }
        switch acceptPolicy {
        case .always, .never:
            storage.receive(lines, from: url, in: jar)
        case .onlyFromMainDocumentDomain:
            let suffixes = storage.suffixes
            let site = CookieRequestURL(mainDocumentURL).map { suffixes.site(of: $0.host) }
            storage.receive(lines, from: url, in: jar) { cookie in site == suffixes.site(of: cookie.domain) }
        }
    }
}
