internal import Synchronization
internal import FoundationEssentials
public import TransferModel
internal import TransferStore

/// The cookie side of sessions: what a transfer gets from its session's jar, and the cookie API
/// (`GET|PUT|DELETE /v1/sessions/{sid}/cookies`). A default or background session acts on the
/// shared jar of its owner, as HTTPCookieStorage.shared; an ephemeral session on its own.
extension TransferService {
    /// The cookie handling of a request of `session`; nil when cookies are off for it.
    func cookieHandling(for request: RequestInfo, in session: Session, owner: String?) -> TransferCookies? {
        guard session.configuration.httpShouldSetCookies, request.httpShouldHandleCookies else { return nil }
        let ownCookieHeader = request.headers.keys.contains { $0.equalsIgnoringASCIICase("cookie") }
        return TransferCookies(
            storage: cookieStorage, jar: CookieStorage.jar(for: session, requester: owner), sends: !ownCookieHeader,
            acceptPolicy: session.configuration.httpCookieAcceptPolicy,
            mainDocumentURL: request.mainDocumentURL ?? request.url)
    }

    /// The session's cookies, or those a request to `url` would carry (in Cookie-header order).
    public func cookies(in sessionId: String, for url: String?, owner: String?) throws -> [Cookie] {
        let session = try state.withLock { s in try visibleSession(s, sessionId, owner) }
        return cookieStorage.cookies(in: CookieStorage.jar(for: session, requester: owner), for: try Self.checkedCookieURL(url))
    }

    /// The `url` a cookie query names: an absolute http or https URL.
    static func checkedCookieURL(_ url: String?) throws -> String? {
        guard let url else { return nil }
        guard CookieRequestURL(url) != nil, (try? RequestURL.check(url, field: "url")) != nil else {
            throw InputError.refused(field: "url", code: "invalid_query", message: "url must be an absolute http or https URL")
        }
        return url
    }

    /// Adds or replaces cookies (all checked first: all or none); returns the jar afterwards.
    public func setCookies(_ list: [CookieInput], in sessionId: String, owner: String?) throws -> [Cookie] {
        let session = try state.withLock { s in try visibleSession(s, sessionId, owner) }
        if session.kind == .ephemeral, session.state == .invalidated {
            throw ServiceError.conflict(code: "session_invalidated", message: "session \(sessionId) is invalidated: its cookies are gone")
        }
        let now = Date()
        let made = try list.enumerated().map { index, input in try input.cookie(suffixes: cookieStorage.suffixes, now: now, field: "cookies[\(index)]") }
        let jar = CookieStorage.jar(for: session, requester: owner)
        cookieStorage.set(made, in: jar, now: now)
        try store.commit()  // what the client is told is stored is on disk
        return cookieStorage.cookies(in: jar)
    }

    /// Removes the session's cookies that `filter` selects; returns how many went.
    public func deleteCookies(in sessionId: String, _ filter: CookieFilter, owner: String?) throws -> Int {
        let session = try state.withLock { s in try visibleSession(s, sessionId, owner) }
        _ = try Self.checkedCookieURL(filter.url)
        let jar = CookieStorage.jar(for: session, requester: owner)
        let removed: Int
        if filter.selectsAll {
            removed = cookieStorage.cookies(in: jar).count
            cookieStorage.removeAll(in: jar)
        } else if let url = filter.url {
            let keys = Set(cookieStorage.cookies(in: jar, for: url).map(\.key))
            removed = cookieStorage.remove(in: jar) { keys.contains($0.key) }
        } else {
            removed = cookieStorage.remove(in: jar) { filter.matches($0) }
        }
        try store.commit()
        return removed
    }
}
