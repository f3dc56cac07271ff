import Foundation
import Testing
@testable import TransferService

/// `FileGrants`: a grant opens one task for one owner until its expiry, and is checked by MAC.
@Suite struct FileGrantsTests {
    @Test func aGrantHoldsForItsTaskAndOwnerUntilItsExpiry() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("file-grants-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let grants = try FileGrants(dataDirectory: folder)
        let now = 1_800_000_000
        let grant = grants.make(task: 7, owner: "0123456789abcdef", expiry: now + 300)
        #expect(grants.owner(of: grant, task: 7, now: now) == .some("0123456789abcdef"))
        #expect(grants.owner(of: grant, task: 8, now: now) == nil, "another task")
        #expect(grants.owner(of: grant, task: 7, now: now + 301) == nil, "expired")
        let forged = grant.replacingOccurrences(of: "0123456789abcdef", with: "fedcba9876543210")
        #expect(grants.owner(of: forged, task: 7, now: now) == nil, "another owner under the same MAC")
        let tooLong = grants.make(task: 7, owner: nil, expiry: now + 100_000)
        #expect(grants.owner(of: tooLong, task: 7, now: now) == nil, "longer than a grant lives")
        let anonymous = grants.make(task: 7, owner: nil, expiry: now + 10)
        #expect(grants.owner(of: anonymous, task: 7, now: now) == .some(nil))
        // The key is kept: a second instance on the same folder (a restart) reads the grant.
        #expect(try FileGrants(dataDirectory: folder).owner(of: grant, task: 7, now: now) == .some("0123456789abcdef"))
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("file-grants-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        #expect(try FileGrants(dataDirectory: elsewhere).owner(of: grant, task: 7, now: now) == nil, "another daemon's key")
    }
}
