import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import TransferAPI

/// Token configuration (issue 16, item 4): `--token` entries, token files, bare tokens' roles,
/// the constant-time digest comparison and the identity a token is authenticated as.
@Suite struct TokenConfigurationTests {
    private func roles(_ tokens: [AccessToken]) -> [String: TokenRole] {
        Dictionary(uniqueKeysWithValues: tokens.map { ($0.name, $0.role) })
    }

    @Test func entriesNameTheirRoleAndNamedOnesDefaultToTenant() throws {
        let tokens = try TokenConfiguration.tokens(entries: ["ops:s3cret-ops:admin", "alice:s3cret-alice", "bob:s3cret-bob:tenant"])
        #expect(roles(tokens) == ["ops": .admin, "alice": .tenant, "bob": .tenant])
        #expect(tokens.map(\.secret) == ["s3cret-ops", "s3cret-alice", "s3cret-bob"])
    }

    @Test func aBareTokenIsAnAdminOnlyWhenItIsTheOnlyToken() throws {
        let alone = try TokenConfiguration.tokens(entries: ["just-one-secret"])
        #expect(alone.map(\.role) == [.admin])
        // Named by its fingerprint, the owner key it has always had: never by its secret.
        #expect(alone[0].name == Authenticator.fingerprint("just-one-secret"))
        let several = try TokenConfiguration.tokens(entries: ["first-secret", "second-secret"])
        #expect(several.map(\.role) == [.tenant, .tenant])
        let mixed = try TokenConfiguration.tokens(entries: ["bare-secret", "ops:ops-secret:admin"])
        #expect(mixed.map(\.role) == [.tenant, .admin])
    }

    @Test(arguments: [
        ("ops:secret:root", "role \"root\""),
        ("ops::admin", "empty secret"),
        ("bad name:secret", "a token's name (before the first ':')"),
        (":secret", "a token's name"),
        ("s3cret-without-name:admin", "a role needs a name"),
        ("a:b:admin:x", "a secret holds no ':'"),
    ])
    func badEntriesAreRefusedSayingWhy(entry: String, reason: String) {
        #expect {
            _ = try TokenConfiguration.tokens(entries: [entry])
        } throws: { error in
            // Never the line itself: it may hold a secret where the name should be.
            "\(error)".contains(reason) && "\(error)".contains("--token") && !"\(error)".contains("secret\"") && !"\(error)".contains("s3cret")
        }
    }

    @Test func repeatedNamesOrSecretsAreRefused() {
        #expect(throws: TokenConfigurationError.self) { try TokenConfiguration.tokens(entries: ["a:one", "a:two"]) }
        #expect {
            _ = try TokenConfiguration.tokens(entries: ["a:same", "b:same"])
        } throws: { "\($0)".contains("same secret") && !"\($0)".contains(":same") }
    }

    @Test func aFileHasCommentsBlankLinesAndRoles() throws {
        let text = """
            # transferd tokens
            ops:ops-secret:admin

              alice:alice-secret   \r
            bob:bob-secret:tenant
            # end
            """
        let tokens = try TokenConfiguration.tokens(entries: ["carol:carol-secret"], fileText: text, filePath: "/etc/t")
        #expect(roles(tokens) == ["carol": .tenant, "ops": .admin, "alice": .tenant, "bob": .tenant])
        #expect(tokens.first { $0.name == "alice" }?.secret == "alice-secret")
    }

    @Test(arguments: [
        ("ops:x:admin\n\nbroken-line-without-name\n", "/etc/t line 3"),
        ("# c\nops:x:superuser\n", "/etc/t line 2"),
        ("ops:x:admin\nops:y\n", "used twice"),
        ("# only comments\n\n", "holds no token"),
    ])
    func aBadFileLineIsNamedByItsNumber(text: String, expected: String) {
        #expect {
            _ = try TokenConfiguration.tokens(entries: [], fileText: text, filePath: "/etc/t")
        } throws: { "\($0)".contains(expected) }
    }

    @Test func aWorldReadableFileIsRefusedAndAPrivateOneRead() throws {
        let directory = try TempDirectory()
        defer { directory.remove() }
        let path = directory.path + "/tokens"
        try Data("ops:ops-secret:admin\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        #expect { _ = try TokenFile.read(path) } throws: { "\($0)".contains("readable by every user") && "\($0)".contains("chmod 600") }
        chmod(path, 0o640)
        #expect(try TokenFile.read(path).warning?.contains("readable by its group") == true)
        chmod(path, 0o600)
        let file = try TokenFile.read(path)
        #expect(file.warning == nil && file.text == "ops:ops-secret:admin\n")
        #expect { _ = try TokenFile.read(directory.path + "/missing") } throws: { "\($0)".contains("cannot read the token file") }
    }

    @Test func constantTimeComparisonIsEquality() {
        let digest: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }
        #expect(ConstantTime.equal(digest, digest))
        #expect(ConstantTime.equal([], []))
        for index in [0, 15, 31] {
            var other = digest
            other[index] ^= 0x01
            #expect(!ConstantTime.equal(digest, other), "differs at \(index)")
        }
        #expect(!ConstantTime.equal(digest, Array(digest.prefix(31))))
        #expect(!ConstantTime.equal(digest, digest + [0]))
    }

    @Test func aTokenIsAuthenticatedAsItsNameRoleAndUnchangedFingerprint() {
        let authenticator = Authenticator(tokens: [
            AccessToken(name: "ops", secret: "ops-secret", role: .admin),
            AccessToken(name: "alice", secret: "alice-secret", role: .tenant),
        ])
        func check(_ value: String) -> Authenticator.Outcome { authenticator.check(HTTPHeaders([("Authorization", value)])) }
        // The owner is the fingerprint a bare token of the same secret always had: its data stays its own.
        #expect(check("Bearer alice-secret") == .authenticated(Identity(owner: Authenticator.fingerprint("alice-secret"), role: .tenant, name: "alice")))
        #expect(check("bearer ops-secret").identity?.isAdmin == true)
        #expect(check("Bearer ops-secre") == .rejected)
        #expect(check("Bearer ops") == .rejected)
        #expect(Authenticator(tokens: []).check(HTTPHeaders()) == .anonymous)
        #expect(Authenticator.Outcome.anonymous.identity == .anonymous && Identity.anonymous.isAdmin)
        // The fingerprint's definition, pinned: the first 8 bytes of SHA-256, in hex.
        #expect(Authenticator.fingerprint("abc") == "ba7816bf8f01cfea")
    }
}
