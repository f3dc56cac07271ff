import Foundation
import Testing
import TestSupport
import TransferAPI

/// Each token has its own downloads root (issue 16, item 3): `<downloads>/<owner>/`, the owner
/// being the token's fingerprint. The same `destination` of two tokens lands in two roots, and
/// no spelling (`..`, an absolute path, a symlink) leads one token's destination into another's.
@Suite struct DestinationTenantTests {
    static let alpha = "alpha-token-0123456789"
    static let beta = "beta-token-9876543210"

    @Test func theSameDestinationOfTwoTokensLandsInTwoRoots() async throws {
        let origin = try OriginServer { request in .text("body of \(request.path)") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            let a = try await daemon.download(origin.url("/alpha"), to: "t/a.bin", token: .some(Self.alpha))
            let b = try await daemon.download(origin.url("/beta"), to: "t/a.bin", token: .some(Self.beta))
            #expect(a.isNull("error") && b.isNull("error"), "\(a) \(b)")
            let aPath = try #require(a.string("location")), bPath = try #require(b.string("location"))
            let aRoot = tenantRoot(aPath, suffix: "/t/a.bin"), bRoot = tenantRoot(bPath, suffix: "/t/a.bin")
            #expect(aRoot != bRoot)
            for root in [aRoot, bRoot] {
                let tenant = String(root.dropFirst(daemon.downloadsRoot.count + 1))
                #expect(root.hasPrefix(daemon.downloadsRoot + "/") && tenant.count == 16 && tenant.allSatisfy(\.isHexDigit), "\(root)")
            }
            #expect(fileBytes(aPath) == Data("body of /alpha".utf8))
            #expect(fileBytes(bPath) == Data("body of /beta".utf8), "beta's download replaced alpha's or went elsewhere")
            #expect(!FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/t/a.bin"))

            // No spelling leads beta into alpha's root.
            let alphaTenant = String(aRoot.dropFirst(daemon.downloadsRoot.count + 1))
            try FileManager.default.createSymbolicLink(atPath: bRoot + "/to-alpha", withDestinationPath: aRoot)
            for destination in ["../\(alphaTenant)/t/a.bin", aPath, "to-alpha/t/a.bin", "to-alpha/new.bin"] {
                let refused = try await daemon.post("/v1/sessions/shared/tasks", json: [
                    "kind": "download", "request": ["url": origin.url("/evil")], "destination": destination, "conflict": "replace",
                ], token: .some(Self.beta))
                #expect(refused.status == 400 && refused.errorCode == "invalid_destination", "\(destination): \(refused)")
            }
            #expect(fileBytes(aPath) == Data("body of /alpha".utf8))
            #expect(FileSystemProbe.tree(aRoot) == ["t", "t/a.bin"])
            // Each token's file endpoint serves its own and not the other's.
            #expect(try await daemon.request("GET", "/v1/tasks/\(try #require(a.int("id")))/file", token: .some(Self.beta)).status == 404)
        }
    }

    /// The tenant root of a file at `path` that ends in `suffix`.
    private func tenantRoot(_ path: String, suffix: String) -> String {
        path.hasSuffix(suffix) ? String(path.dropLast(suffix.count)) : path
    }
}
