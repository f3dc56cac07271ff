import Foundation
import Testing
import TestSupport
import TransferAPI

/// Resume data belongs to the token that made it (issue 16, item 5): another token's attempt to
/// continue it is refused with the same 400 as forged data, and the blob, though the client
/// holds it, does not show the request it carries (URL, headers, Authorization).
@Suite struct ResumeDataTenantTests {
    static let alpha = "alpha-token-0123456789"
    static let beta = "beta-token-9876543210"
    static let body = Data(count: 256 * 1024) { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }

    @Test func anotherTokenCannotUseResumeDataAndTheBlobShowsNoRequest() async throws {
        let origin = try OriginServer { request in
            request.header("Range") == nil
                // 3.2 s for the whole body: the cancel at 32 KiB comes long before the end even
                // when the machine is busy (at 10 ms a write, a slow poll once missed it).
                ? .slowBody(headers: ["ETag": "\"r\""], body: Self.body, bytesPerWrite: 4096, interval: .milliseconds(80))
                : .ranged(Self.body, for: request, headers: ["ETag": "\"r\""])
        }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            let a: String?? = .some(Self.alpha), b: String?? = .some(Self.beta)
            let created = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "download",
                "request": ["url": origin.url("/secret-path.bin"), "headers": ["Authorization": "Bearer origin-secret"]],
            ], token: a).object()
            let id = try #require(created.int("id"))
            try await daemon.waitForTask(id, token: a) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= 32 * 1024 }
            let cancelled = try await daemon.post("/v1/tasks/\(id)/cancel", json: ["produceResumeData": true], token: a).object()
            let resumeData = try #require(cancelled.object("error")?.string("resumeData"))

            // Nothing of the request reads out of it, in any base64 decoding.
            let decoded = [resumeData, String(resumeData.dropFirst(3))].compactMap { text -> Data? in
                var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                while standard.utf8.count % 4 != 0 { standard += "=" }
                return Data(base64Encoded: standard)
            }
            for data in decoded {
                let text = String(decoding: data, as: UTF8.self)
                #expect(!text.contains("secret-path") && !text.contains("origin-secret"), "resume data shows its request")
            }
            #expect(!resumeData.contains("secret"))

            let refused = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "download", "resumeData": resumeData], token: b)
            #expect(refused.status == 400)
            #expect(refused.errorCode == "invalid_resume_data")
            var forged = Array(resumeData)
            forged[10] = forged[10] == "A" ? "B" : "A"
            let forgedAnswer = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "download", "resumeData": String(forged)], token: b)
            #expect(forgedAnswer.error?.string("message") == refused.error?.string("message"), "another token's resume data is answered as forged data")

            let resumed = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "download", "resumeData": resumeData], token: a).object()
            let resumedId = try #require(resumed.int("id"))
            let done = try await daemon.waitForCompletion(resumedId, token: a)
            #expect(done.object("error") == nil, "\(done)")
            #expect(byteDifference(try await daemon.request("GET", "/v1/tasks/\(resumedId)/file", token: a).body, Self.body) == nil)
            #expect(origin.requests.last?.header("Authorization") == "Bearer origin-secret", "the sealed request still carries its headers")
        }
    }
}
