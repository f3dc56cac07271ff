import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `CookieStorage` over a real `Store` in a temp folder: which jar a session uses, what is
/// written, and what a reopened store gives back.
@Suite struct CookieStorageTests {
    private static func session(_ kind: SessionKind, owner: String? = nil) -> Session {
        Session(id: UUID().uuidString.lowercased(), kind: kind, state: .active, configuration: SessionConfiguration(),
                createdAt: Date(), version: 1, owner: owner)
    }

    private static func withStorage(_ directory: TempDirectory, _ body: (CookieStorage) throws -> Void) throws {
        let store = try Store(dataDirectory: directory.path)
        defer { store.close() }
        try body(try CookieStorage(store: store))
    }

    @Test func persistentCookiesOfSharedJarsSurviveAReopenSessionCookiesAndEphemeralJarsDoNot() throws {
        let directory = try TempDirectory()
        defer { directory.remove() }
        let shared = CookieStorage.jar(for: Self.session(.default))
        let other = CookieStorage.jar(for: Self.session(.background, owner: "token-b"))
        let ephemeral = CookieStorage.jar(for: Self.session(.ephemeral))
        try Self.withStorage(directory) { storage in
            storage.receive(["kept=1; Max-Age=3600", "session=1"], from: "http://h.example/", in: shared)
            storage.receive(["theirs=1; Max-Age=3600"], from: "http://h.example/", in: other)
            storage.receive(["private=1; Max-Age=3600"], from: "http://h.example/", in: ephemeral)
            #expect(storage.header(for: "http://h.example/", in: shared) == "kept=1; session=1")
            #expect(storage.header(for: "http://h.example/", in: other) == "theirs=1")
            #expect(storage.header(for: "http://h.example/", in: ephemeral) == "private=1")
        }
        try Self.withStorage(directory) { storage in
            #expect(storage.header(for: "http://h.example/", in: shared) == "kept=1")
            #expect(storage.header(for: "http://h.example/", in: other) == "theirs=1")
            #expect(storage.header(for: "http://h.example/", in: ephemeral) == nil)
            // A session cookie replacing a persistent one removes its row.
            storage.receive(["kept=now-session-only"], from: "http://h.example/", in: shared)
            storage.remove(in: other) { $0.name == "theirs" }
        }
        try Self.withStorage(directory) { storage in
            #expect(storage.header(for: "http://h.example/", in: shared) == nil)
            #expect(storage.header(for: "http://h.example/", in: other) == nil)
        }
    }

    @Test func resetEmptiesTheSharedJarAndDiscardDropsOnlyEphemeralJars() throws {
        let directory = try TempDirectory()
        defer { directory.remove() }
        let first = Self.session(.default), second = Self.session(.default), ephemeral = Self.session(.ephemeral)
        try Self.withStorage(directory) { storage in
            storage.receive(["a=1; Max-Age=3600"], from: "http://h.example/", in: CookieStorage.jar(for: first))
            storage.receive(["e=1"], from: "http://h.example/", in: CookieStorage.jar(for: ephemeral))
            #expect(storage.header(for: "http://h.example/", in: CookieStorage.jar(for: second)) == "a=1", "default sessions share")
            storage.discard(session: second)
            #expect(storage.header(for: "http://h.example/", in: CookieStorage.jar(for: first)) == "a=1")
            storage.discard(session: ephemeral)
            #expect(storage.header(for: "http://h.example/", in: CookieStorage.jar(for: ephemeral)) == nil)
            storage.reset(session: second, requester: nil)
            #expect(storage.cookies(in: CookieStorage.jar(for: first)).isEmpty)
        }
        try Self.withStorage(directory) { storage in
            #expect(storage.cookies(in: CookieStorage.jar(for: first)).isEmpty, "reset deleted the rows")
        }
    }
}
