import Foundation
import Testing
import TestSupport
import TransferAPI

/// `POST /v1/tasks/{tid}/file-grant`: a short-lived link a browser follows without the token,
/// for that one task's file, for its own tenant only, and for nothing else.
@Suite struct FileGrantTests {
    static let payload = Data(count: 200_000) { UInt8(truncatingIfNeeded: $0 &* 7) }

    @Test func aGrantOpensItsTasksFileWithoutATokenAndNothingElse() async throws {
        let origin = try OriginServer { request in .ranged(Self.payload, for: request, headers: ["ETag": "\"g1\""]) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: ThreeTokens.configure, token: ThreeTokens.alice) { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/a.bin")]).int("id"))
            let other = try #require(try await daemon.downloadTask(["url": origin.url("/b.bin")]).int("id"))
            for task in [id, other] { #expect(try await daemon.waitForCompletion(task).isNull("error")) }

            let answer = try await daemon.request("POST", "/v1/tasks/\(id)/file-grant")
            #expect(answer.status == 201, "\(answer)")
            let url = try #require(try answer.object()["url"] as? String)
            #expect(url.hasPrefix("/v1/tasks/\(id)/file?grant="))
            #expect((try answer.object()["expiresAt"] as? String)?.hasSuffix("Z") == true)

            let opened = try await daemon.get(url, token: .some(nil))
            #expect(opened.status == 200 && opened.body == Self.payload)
            #expect(opened.header("Content-Disposition")?.contains("a.bin") == true)

            let grant = String(url.split(separator: "=", maxSplits: 1)[1])
            // The MAC's first character changed: its last carries only four bits, so appending "A"
            // in its place left one grant in sixteen unchanged (its last character was "A").
            let mac = try #require(grant.split(separator: ".").last)
            let altered = grant.dropLast(mac.count) + (mac.first == "A" ? "B" : "A") + mac.dropFirst()
            #expect(altered != grant)
            // Another task, another route, another method, an altered grant: the token is needed.
            for (method, path) in [("GET", "/v1/tasks/\(other)/file?grant=\(grant)"), ("GET", "/v1/tasks/\(id)/body?grant=\(grant)"),
                                   ("GET", "/v1/tasks/\(id)?grant=\(grant)"), ("DELETE", "/v1/tasks/\(id)/file?grant=\(grant)"),
                                   ("GET", "/v1/tasks/\(id)/file?grant=\(altered)"), ("GET", "/v1/tasks/\(id)/file?grant=1.-.x")] {
                let refused = try await daemon.request(method, path, token: .some(nil))
                #expect(refused.status == 401, "\(method) \(path): \(refused)")
            }
            // Bob can neither make a grant for Alice's task nor tell it exists.
            #expect(try await daemon.request("POST", "/v1/tasks/\(id)/file-grant", token: .some(ThreeTokens.bob)).status == 404)
            // Still Alice's: deleting the task takes the file, and the grant then finds nothing.
            #expect(try await daemon.request("DELETE", "/v1/tasks/\(id)").status == 204)
            #expect(try await daemon.get(url, token: .some(nil)).status == 404)
        }
    }

    @Test func noGrantForATaskWhoseFileIsNotServed() async throws {
        let origin = try OriginServer { _ in .respond(status: 404) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: ThreeTokens.configure, token: ThreeTokens.alice) { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/missing.bin")]).int("id"))
            _ = try await daemon.waitForCompletion(id)
            let refused = try await daemon.request("POST", "/v1/tasks/\(id)/file-grant")
            #expect(refused.status == 409, "\(refused)")
        }
    }
}
