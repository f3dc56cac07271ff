import Foundation
import Logging
import SQLite
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `BlobStore` and `BlobWriter` on a fresh folder: files and rows appear together or not at all.
@Suite struct BlobStoreTests {
    static let abcSHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// A store and blob store on a temporary folder, closed and removed after `body`.
    static func withBlobs(_ body: (Store, BlobStore, String) throws -> Void) throws {
        let directory = try TempDirectory(prefix: "transferd-blobstore")
        defer { directory.remove() }
        let store = try Store(dataDirectory: directory.path)
        defer { store.close() }
        try body(store, try BlobStore(store: store, directory: directory.path + "/blobs", logger: Logger(label: "test")), directory.path + "/blobs")
    }

    static func write(_ text: String, to writer: BlobWriter) throws {
        try Array(text.utf8).withUnsafeBytes { try writer.write($0.bytes) }
    }

    static func files(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func commitRecordsTheRowAndRenamesTheFile() throws {
        try Self.withBlobs { store, blobs, directory in
            let writer = try blobs.makeWriter(owner: "owner-a")
            #expect(Blob.isWellFormedID(writer.id))
            // While it is written, only a hidden temporary file exists.
            try Self.write("a", to: writer)
            try Self.write("bc", to: writer)
            #expect(try Self.files(in: directory) == [".upload-" + writer.id])
            #expect(try store.loadBlobs().isEmpty)

            let blob = try writer.commit()
            #expect(blob.id == writer.id)
            #expect(blob.size == 3)
            #expect(blob.sha256 == Self.abcSHA256)
            #expect(blob.owner == "owner-a")
            #expect(try Self.files(in: directory) == [blob.id])
            #expect(try String(contentsOfFile: blobs.path(of: blob), encoding: .utf8) == "abc")
            #expect(try store.loadBlobs() == [blob])
            #expect(try blobs.blob(blob.id, owner: "owner-a").sha256 == Self.abcSHA256)
            // A second commit or a write after it is refused; discard after commit keeps the blob.
            #expect(throws: BlobStoreError.self) { try writer.commit() }
            writer.discard()
            #expect(try Self.files(in: directory) == [blob.id])
        }
    }

    @Test func anEmptyBlobHasTheEmptyDigest() throws {
        try Self.withBlobs { _, blobs, _ in
            let blob = try blobs.makeWriter(owner: nil).commit()
            #expect(blob.size == 0)
            #expect(blob.sha256 == Self.emptySHA256)
        }
    }

    @Test func discardLeavesNoFileAndNoRow() throws {
        try Self.withBlobs { store, blobs, directory in
            let writer = try blobs.makeWriter(owner: nil)
            try Self.write("partial", to: writer)
            writer.discard()
            writer.discard()
            #expect(try Self.files(in: directory).isEmpty)
            #expect(try store.loadBlobs().isEmpty)
            #expect(throws: BlobStoreError.self) { try Self.write("more", to: writer) }
            // A writer dropped without an end removes its file too.
            do {
                let dropped = try blobs.makeWriter(owner: nil)
                try Self.write("x", to: dropped)
            }
            #expect(try Self.files(in: directory).isEmpty)
        }
    }

    @Test func aBlobIsVisibleOnlyToItsOwner() throws {
        try Self.withBlobs { _, blobs, directory in
            let owned = try blobs.makeWriter(owner: "owner-a").commit()
            let anonymous = try blobs.makeWriter(owner: nil).commit()
            #expect(throws: ServiceError.notFound("no blob \(owned.id)")) { try blobs.blob(owned.id, owner: "owner-b") }
            #expect(throws: ServiceError.notFound("no blob \(owned.id)")) { try blobs.blob(owned.id, owner: nil) }
            #expect(throws: ServiceError.self) { try blobs.delete(owned.id, owner: "owner-b") }
            // Made without tokens: everyone's, as sessions are.
            #expect(try blobs.blob(anonymous.id, owner: "owner-b").id == anonymous.id)
            // Ids of the wrong shape are never looked up (nor used as file names).
            for id in ["", "..", "../blobs", owned.id.uppercased(), owned.id + "0"] {
                #expect(throws: ServiceError.notFound("no blob \(id)")) { try blobs.blob(id, owner: "owner-a") }
            }
            try blobs.delete(owned.id, owner: "owner-a")
            #expect(try Self.files(in: directory) == [anonymous.id])
            #expect(throws: ServiceError.self) { try blobs.blob(owned.id, owner: "owner-a") }
        }
    }

    @Test func aDatabaseOfTheFirstSchemaGainsTheBlobsTable() throws {
        let directory = try TempDirectory(prefix: "transferd-blobstore")
        defer { directory.remove() }
        do {
            // The file as the release before blobs left it: migration 1 only.
            let database = try Database(path: directory.path + "/transferd.sqlite3")
            defer { database.close() }
            try database.execute(script: Schema.migrations[0] + "; PRAGMA user_version = 1;")
        }
        let store = try Store(dataDirectory: directory.path)
        defer { store.close() }
        #expect(store.schemaVersion == Schema.migrations.count)
        let blobs = try BlobStore(store: store, directory: directory.path + "/blobs", logger: Logger(label: "test"))
        let blob = try blobs.makeWriter(owner: nil).commit()
        #expect(try store.loadBlobs() == [blob])
    }

    @Test func reopeningRemovesWhatACrashLeftBehind() throws {
        let directory = try TempDirectory(prefix: "transferd-blobstore")
        defer { directory.remove() }
        let folder = directory.path + "/blobs"
        var kept: Blob?
        do {
            let store = try Store(dataDirectory: directory.path)
            defer { store.close() }
            let blobs = try BlobStore(store: store, directory: folder, logger: Logger(label: "test"))
            let good = try blobs.makeWriter(owner: nil)
            try Self.write("abc", to: good)
            kept = try good.commit()
            // A file cut short by an OS crash after its row was committed.
            let short = try blobs.makeWriter(owner: nil)
            try Self.write("abcdef", to: short)
            let cut = try short.commit()
            try Data("abc".utf8).write(to: URL(fileURLWithPath: blobs.path(of: cut)))
        }
        // A temporary file (crash mid-upload) and a file without a row (crash before the insert).
        try Data("temp".utf8).write(to: URL(fileURLWithPath: folder + "/.upload-0123456789abcdef0123456789abcdef"))
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: folder + "/fedcba9876543210fedcba9876543210"))

        let store = try Store(dataDirectory: directory.path)
        defer { store.close() }
        let blobs = try BlobStore(store: store, directory: folder, logger: Logger(label: "test"))
        let survivor = try #require(kept)
        #expect(try Self.files(in: folder) == [survivor.id])
        #expect(try store.loadBlobs().map(\.id) == [survivor.id])
        #expect(try blobs.blob(survivor.id, owner: nil).sha256 == Self.abcSHA256)
    }
}
