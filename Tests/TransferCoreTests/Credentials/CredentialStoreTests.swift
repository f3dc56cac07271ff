import Foundation
import Logging
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The credential store on a real SQLite file: what each kind of session sees, what reaches the
/// disk (permanent credentials only, passwords sealed), and what a reopened store finds.
@Suite struct CredentialStoreTests {
    static func session(_ id: String, kind: SessionKind = .default, owner: String? = nil) -> Session {
        Session(id: id, kind: kind, state: .active, configuration: SessionConfiguration(), createdAt: Date(), version: 1, owner: owner)
    }

    static func credential(_ user: String, password: String, realm: String? = "R", persistence: CredentialPersistence, port: Int = 80) -> Credential {
        Credential(space: ProtectionSpace(host: "Example.ORG", port: port, protocol: .http, realm: realm, authenticationMethod: .httpBasic),
                   user: user, password: password, persistence: persistence)
    }

    static func open(_ folder: TempDirectory) throws -> (Store, CredentialStore) {
        let store = try Store(dataDirectory: folder.path)
        return (store, try CredentialStore(store: store, dataDirectory: folder.path, logger: Logger(label: "test")))
    }

    /// Every file of the folder that holds `text`'s bytes.
    static func files(in folder: TempDirectory, containing text: String) -> [String] {
        let needle = Data(text.utf8)
        return ((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []).filter { name in
            (try? Data(contentsOf: folder.file(name)))?.range(of: needle) != nil
        }
    }

    @Test func permanentCredentialsAreSharedSealedOnDiskAndBackAfterReopening() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let password = "secret-\(UUID().uuidString)"
        let (store, credentials) = try Self.open(folder)
        let a = CredentialScope(Self.session("a"), requester: nil), b = CredentialScope(Self.session("b"), requester: nil)
        try credentials.put(Self.credential("perm-user", password: password, persistence: .permanent), a)
        try credentials.put(Self.credential("session-user", password: password + "-s", persistence: .forSession), a)
        #expect(credentials.list(b).map(\.user) == ["perm-user"], "another default session sees the shared store only")
        #expect(Set(credentials.list(a).map(\.user)) == ["perm-user", "session-user"])
        // Another owner (API token) has a shared store of its own.
        #expect(credentials.list(CredentialScope(Self.session("c", owner: "token-2"), requester: nil)).isEmpty)
        store.close()

        #expect(!Self.files(in: folder, containing: "perm-user").isEmpty, "the control: the row is on disk")
        #expect(Self.files(in: folder, containing: password).isEmpty, "the password is on disk in plain text")
        #expect(Self.files(in: folder, containing: "session-user").isEmpty, "a forSession credential reached the disk")
        let mode = try FileManager.default.attributesOfItem(atPath: folder.path + "/credentials.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let (again, reopened) = try Self.open(folder)
        defer { again.close() }
        let found = reopened.candidates(for: ProtectionSpace(host: "example.org", port: 80, protocol: .http, realm: "R", authenticationMethod: .httpBasic), in: b)
        #expect(found.map(\.user) == ["perm-user"])
        #expect(found.first?.password == password)
    }

    /// The `shared` session has no owner: each token that uses it has its own part, its
    /// permanent rows (owner column) and its session credentials alike (issue 16, item 2).
    @Test func anOwnerlessSessionKeepsEachRequestersCredentialsApart() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let (store, credentials) = try Self.open(folder)
        let shared = Self.session("shared")
        let a = CredentialScope(shared, requester: "token-a"), b = CredentialScope(shared, requester: "token-b")
        try credentials.put(Self.credential("a-perm", password: "pa", persistence: .permanent), a)
        try credentials.put(Self.credential("a-session", password: "ps", persistence: .forSession), a)
        let space = ProtectionSpace(host: "example.org", port: 80, protocol: .http, realm: "R", authenticationMethod: .httpBasic)
        #expect(credentials.list(b).isEmpty)
        #expect(credentials.candidates(for: space, in: b).isEmpty, "b's challenge was answered with a's credential")
        #expect(try credentials.delete(CredentialFilter(), b) == 0)
        try credentials.removeAll(b)
        #expect(credentials.list(CredentialScope(shared, requester: nil)).isEmpty, "the no-token owner saw a's")
        // A's own session of a token is that token's: the same store as its `shared` part.
        #expect(credentials.list(CredentialScope(Self.session("mine", owner: "token-a"), requester: "token-b")).map(\.user) == ["a-perm"])
        #expect(Set(credentials.list(a).map(\.user)) == ["a-perm", "a-session"])
        #expect(try store.loadCredentialRows().map(\.ownerKey) == ["token-a"])
        store.close()

        let (again, reopened) = try Self.open(folder)
        defer { again.close() }
        #expect(reopened.candidates(for: space, in: a).map(\.user) == ["a-perm"])
        #expect(reopened.candidates(for: space, in: b).isEmpty)
    }

    @Test func aRowTheKeyCannotOpenIsDroppedNotServedAndNotFatal() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let (store, credentials) = try Self.open(folder)
        try credentials.put(Self.credential("u", password: "p", persistence: .permanent), CredentialScope(Self.session("a"), requester: nil))
        store.close()
        try FileManager.default.removeItem(atPath: folder.path + "/credentials.key")
        let (again, reopened) = try Self.open(folder)
        defer { again.close() }
        #expect(reopened.list(CredentialScope(Self.session("a"), requester: nil)).isEmpty)
        #expect(try again.loadCredentialRows().isEmpty)
    }

    @Test func ephemeralSessionsKeepEverythingInMemoryAndToThemselves() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let (store, credentials) = try Self.open(folder)
        let ephemeral = Self.session("e", kind: .ephemeral)
        try credentials.put(Self.credential("eph-user", password: "eph-pass", persistence: .permanent), CredentialScope(ephemeral, requester: nil))
        #expect(credentials.list(CredentialScope(ephemeral, requester: nil)).map(\.user) == ["eph-user"])
        #expect(credentials.list(CredentialScope(Self.session("d"), requester: nil)).isEmpty)
        credentials.discard(session: ephemeral)
        #expect(credentials.list(CredentialScope(ephemeral, requester: nil)).isEmpty)
        store.close()
        #expect(Self.files(in: folder, containing: "eph-user").isEmpty)
    }

    @Test func putReplacesTheSameSpaceAndUserAcrossPersistencesAndDeleteFilters() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let (store, credentials) = try Self.open(folder)
        defer { store.close() }
        let scope = CredentialScope(Self.session("a"), requester: nil)
        try credentials.put(Self.credential("u", password: "1", persistence: .permanent), scope)
        try credentials.put(Self.credential("u", password: "2", persistence: .forSession), scope)
        #expect(credentials.list(scope).map(\.persistence) == [.forSession])
        #expect(try store.loadCredentialRows().isEmpty, "the replaced permanent row stayed")
        try credentials.put(Self.credential("u", password: "3", realm: nil, persistence: .permanent), scope)
        try credentials.put(Self.credential("v", password: "4", persistence: .permanent, port: 8080), scope)
        #expect(credentials.list(scope).count == 3)
        #expect(try credentials.delete(CredentialFilter(port: 8080), scope) == 1)
        #expect(try credentials.delete(CredentialFilter(host: "EXAMPLE.org", realm: "R"), scope) == 1)
        #expect(credentials.list(scope).map(\.user) == ["u"])
        #expect(try store.loadCredentialRows().map(\.user) == ["u"])
        #expect(try credentials.delete(CredentialFilter(), scope) == 1)
        #expect(credentials.list(scope).isEmpty)
    }

    @Test func aNoneCredentialAnswersOneChallengeAndTheRealmSpecificOneComesFirst() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let (store, credentials) = try Self.open(folder)
        defer { store.close() }
        let scope = CredentialScope(Self.session("a"), requester: nil)
        try credentials.put(Self.credential("any-realm", password: "1", realm: nil, persistence: .none), scope)
        try credentials.put(Self.credential("permanent", password: "2", persistence: .permanent), scope)
        try credentials.put(Self.credential("once", password: "3", persistence: .none), scope)
        let space = ProtectionSpace(host: "example.org", port: 80, protocol: .http, realm: "R", authenticationMethod: .httpBasic)
        let found = credentials.candidates(for: space, in: scope)
        #expect(found.map(\.user) == ["once", "permanent", "any-realm"])
        credentials.used(found[0], in: scope)
        credentials.used(found[1], in: scope)  // permanent: stays
        #expect(credentials.candidates(for: space, in: scope).map(\.user) == ["permanent", "any-realm"])
        // Another port, protocol or a Digest challenge is another space.
        #expect(credentials.candidates(for: ProtectionSpace(host: "example.org", port: 81, protocol: .http, realm: "R", authenticationMethod: .httpBasic), in: scope).isEmpty)
        #expect(credentials.candidates(for: ProtectionSpace(host: "example.org", port: 80, protocol: .https, realm: "R", authenticationMethod: .httpBasic), in: scope).isEmpty)
        #expect(credentials.candidates(for: ProtectionSpace(host: "example.org", port: 80, protocol: .http, realm: "R", authenticationMethod: .httpDigest), in: scope).isEmpty)
    }

    @Test func theDatabaseFilesAreTheOwnersOnly() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        // A file a previous version left readable by all is tightened at open.
        _ = FileManager.default.createFile(atPath: folder.path + "/transferd.sqlite3", contents: nil, attributes: [.posixPermissions: 0o644])
        let (store, credentials) = try Self.open(folder)
        try credentials.put(Self.credential("u", password: "p", persistence: .permanent), CredentialScope(Self.session("a"), requester: nil))
        for name in ["transferd.sqlite3", "transferd.sqlite3-wal", "transferd.sqlite3-shm", "credentials.key"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name) is \(String(mode ?? 0, radix: 8))")
        }
        store.close()
    }
}
