internal import FoundationEssentials
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Every cookie jar of the daemon, as URLSession keeps them: default and background sessions
/// share one persistent jar (HTTPCookieStorage.shared; here one per owner, so clients with
/// different tokens never see each other's cookies), each ephemeral session has a private jar
/// in memory. Owned by `TransferService`; read and written from the engine thread (every
/// response head) and from API handlers, under its own lock.
///
/// Persistence: a persistent cookie of a shared jar is written through the store's queued
/// writer, in the order of the changes, never waiting on the disk. Session cookies (no
/// Expires or Max-Age) are kept in memory for the daemon's lifetime only, as URLSession keeps
/// them for the process's; ephemeral jars are never written.
final class CookieStorage: Sendable {
    /// Which jar a session uses.
    enum JarID: Hashable, Sendable {
        case shared(owner: String)
        case ephemeral(session: String)
    }

    private let jars = Mutex<[JarID: CookieJar]>([:])
    private let store: any TaskStore
    let suffixes: PublicSuffixList

    /// Loads the persistent jars. Without a public suffix list, Domain attributes other than the
    /// request host are refused (`PublicSuffixList.unavailable`), and that is logged once here.
    init(store: any TaskStore, suffixes: PublicSuffixList? = PublicSuffixList.load(), logger: Logger = Logger(label: "transferd.cookies")) throws {
        self.store = store
        if let suffixes {
            self.suffixes = suffixes
        } else {
            self.suffixes = .unavailable
            logger.warning("public suffix list not found: cookies are kept for the exact host that sets them", metadata: [
                "cookies.public_suffix_list": "\(PublicSuffixList.systemPath)",
            ])
        }
        let loaded = try store.loadCookies(now: Date())
        jars.withLock { jars in
            for (owner, cookies) in loaded { jars[.shared(owner: owner)] = CookieJar(cookies) }
        }
    }

    /// The jar of `session` as `requester` (a token fingerprint) uses it. A session without an
    /// owner (the `shared` session, or any made without tokens) is used by every client, each
    /// with its own jar: one client's cookies never reach another's requests.
    static func jar(for session: Session, requester: String? = nil) -> JarID {
        session.kind == .ephemeral ? .ephemeral(session: session.id) : .shared(owner: session.owner ?? requester ?? "")
    }

    // MARK: what transfers do (engine thread)

    /// The Cookie header of a request to `url`, nil when no cookie goes there.
    func header(for url: String, in jar: JarID, now: Date = Date()) -> String? {
        jars.withLock { jars in
            // A jar never given a cookie (most transfers') needs no parse of the URL.
            guard jars[jar] != nil, let url = CookieRequestURL(url) else { return nil }
            return CookieJar.header(jars[jar]!.cookies(for: url, now: now, touch: true))
        }
    }

    /// Stores the cookies of Set-Cookie `lines` received from `url` that `accepts` lets in.
    func receive(_ lines: [String], from url: String, in jar: JarID, now: Date = Date(), accepts: (Cookie) -> Bool = { _ in true }) {
        guard !lines.isEmpty, let url = CookieRequestURL(url) else { return }
        let cookies = lines.compactMap { CookieJar.cookie(from: $0, url: url, suffixes: suffixes, now: now) }.filter(accepts)
        guard !cookies.isEmpty else { return }
        change(jar) { contents in cookies.flatMap { contents.insert($0, now: now) } }
    }

    // MARK: what the API does

    /// Every cookie of the jar, or those a request to `url` would carry.
    func cookies(in jar: JarID, for url: String? = nil, now: Date = Date()) -> [Cookie] {
        jars.withLock { jars in
            guard var contents = jars[jar] else { return [] }
            guard let url else { return contents.all(now: now) }
            return CookieRequestURL(url).map { contents.cookies(for: $0, now: now, touch: false) } ?? []
        }
    }

    /// Adds or replaces `cookies` (already checked); an expired one removes its namesake.
    func set(_ cookies: [Cookie], in jar: JarID, now: Date = Date()) {
        change(jar) { contents in cookies.flatMap { contents.insert($0, now: now) } }
    }

    /// Removes the cookies `predicate` selects; returns how many went.
    @discardableResult
    func remove(in jar: JarID, where predicate: (Cookie) -> Bool) -> Int {
        change(jar) { contents in contents.remove(where: predicate) }.count
    }

    /// Empties a jar (reset), and its rows when it is persistent.
    func removeAll(in jar: JarID) {
        jars.withLock { jars in
            jars[jar] = nil
            if case .shared(let owner) = jar { store.enqueue(.cookies([.deleteAll(owner: owner)])) }
        }
    }

    /// Waits until every cookie change so far is committed.
    func flush() { store.flush() }

    /// Runs `body` on the jar and queues the rows its changes touch (shared jars only), under
    /// the lock so the writes keep the order of the changes.
    @discardableResult
    private func change(_ jar: JarID, _ body: (inout CookieJar) -> [CookieJar.Change]) -> [CookieJar.Change] {
        jars.withLock { jars in
            var contents = jars[jar] ?? CookieJar()
            let changes = body(&contents)
            jars[jar] = contents.isEmpty ? nil : contents
            if case .shared(let owner) = jar {
                let rows = changes.compactMap { Self.row(for: $0, owner: owner) }
                if !rows.isEmpty { store.enqueue(.cookies(rows)) }
            }
            return changes
        }
    }

    /// The row change a jar change needs: only persistent cookies have rows.
    private static func row(for change: CookieJar.Change, owner: String) -> CookieRowChange? {
        switch change {
        case .saved(let cookie, let replaced):
            if !cookie.isSessionOnly { return .save(owner: owner, cookie) }
            return replaced.map { $0.isSessionOnly ? nil : .delete(owner: owner, $0.key) } ?? nil
        case .removed(let cookie):
            return cookie.isSessionOnly ? nil : .delete(owner: owner, cookie.key)
        }
    }
}
