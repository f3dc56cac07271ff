import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// How a task answers 401s: realm choice, scheme preference, one try per credential.
@Suite struct ChallengeResponderTests {
    static let origin = ChallengeOrigin(url: "http://Example.org:8080/private")!

    static func credential(_ user: String, realm: String?, method: AuthenticationMethod = .default, persistence: CredentialPersistence = .forSession) -> Credential {
        Credential(space: ProtectionSpace(host: "example.org", port: 8080, protocol: .http, realm: realm, authenticationMethod: method),
                   user: user, password: "pw-\(user)", persistence: persistence)
    }

    /// What `CredentialStore.candidates` answers, over a fixed list (the store has its own tests).
    static func lookup(_ stored: [Credential]) -> (ProtectionSpace) -> [Credential] {
        { space in
            stored.filter { $0.space.authenticationMethod.answers(space.authenticationMethod) && ($0.space.realm == nil || $0.space.realm == space.realm) }
                .sorted { ($0.space.realm == nil ? 1 : 0) < ($1.space.realm == nil ? 1 : 0) }
        }
    }

    @Test func theOriginComesFromTheURL() {
        #expect(Self.origin == ChallengeOrigin(url: "http://example.org:8080/other"))
        #expect(ChallengeOrigin(url: "https://a.test/x")?.port == 443)
        #expect(ChallengeOrigin(url: "http://[::1]:81/")?.host == "::1")
        #expect(ChallengeOrigin(url: "ftp://a.test/") == nil)
    }

    @Test func theCredentialOfTheChallengedRealmIsChosenOverOneForAnyRealm() {
        let stored = [Self.credential("any", realm: nil), Self.credential("alpha", realm: "A"), Self.credential("beta", realm: "B")]
        for (realm, user) in [("A", "alpha"), ("B", "beta"), ("C", "any")] {
            var responder = ChallengeResponder()
            let decision = responder.respond(to: [AuthenticationChallenge(scheme: "Basic", parameters: [.init(name: "realm", value: realm)])],
                                             from: Self.origin, candidates: Self.lookup(stored))
            guard case .answer(let report, let credential) = decision else {
                Issue.record("realm \(realm): \(decision)")
                continue
            }
            #expect(credential.user == user)
            #expect(report.space == ProtectionSpace(host: "example.org", port: 8080, protocol: .http, realm: realm, authenticationMethod: .httpBasic))
            #expect(report.previousFailureCount == 0)
            #expect(report.proposed?.user == user)
        }
    }

    @Test func eachCredentialIsTriedOnceThenThe401Stands() {
        let stored = [Self.credential("first", realm: "R"), Self.credential("second", realm: nil)]
        let challenge = [AuthenticationChallenge(scheme: "Basic", parameters: [.init(name: "realm", value: "R")])]
        var responder = ChallengeResponder()
        var users: [String] = []
        var last: ChallengeResponder.Decision?
        for _ in 0..<4 {
            let decision = responder.respond(to: challenge, from: Self.origin, candidates: Self.lookup(stored))
            last = decision
            guard case .answer(_, let credential) = decision else { break }
            users.append(credential.user)
        }
        #expect(users == ["first", "second"])
        guard case .giveUp(let report) = last else {
            Issue.record("expected to give up, got \(String(describing: last))")
            return
        }
        #expect(report.previousFailureCount == 2)
        #expect(report.proposed == nil)
    }

    @Test func digestIsPreferredAndAMethodBoundCredentialAnswersOnlyItsScheme() {
        let both = [AuthenticationChallenge(scheme: "Basic", parameters: [.init(name: "realm", value: "R")]),
                    AuthenticationChallenge(scheme: "Digest", parameters: [.init(name: "realm", value: "R"), .init(name: "nonce", value: "n")])]
        var responder = ChallengeResponder()
        guard case .answer(let report, _) = responder.respond(to: both, from: Self.origin, candidates: Self.lookup([Self.credential("u", realm: "R")])) else {
            Issue.record("no answer")
            return
        }
        #expect(report.space.authenticationMethod == .httpDigest)

        // Stored for Basic only: the Digest challenge finds nothing, the Basic one is answered.
        var basicOnly = ChallengeResponder()
        guard case .answer(let basic, _) = basicOnly.respond(to: both, from: Self.origin, candidates: Self.lookup([Self.credential("u", realm: "R", method: .httpBasic)])) else {
            Issue.record("no answer")
            return
        }
        #expect(basic.space.authenticationMethod == .httpBasic)
        #expect(basicOnly.answering?.space.authenticationMethod == .httpBasic)
    }

    @Test func unsupportedSchemesAreNotAnswerableAndNothingStoredGivesUp() {
        var responder = ChallengeResponder()
        #expect(responder.respond(to: [AuthenticationChallenge(scheme: "Bearer")], from: Self.origin, candidates: Self.lookup([Self.credential("u", realm: nil)])) == .notAnswerable)
        #expect(responder.respond(to: [], from: Self.origin, candidates: Self.lookup([])) == .notAnswerable)
        let decision = responder.respond(to: [AuthenticationChallenge(scheme: "basic")], from: Self.origin, candidates: Self.lookup([]))
        #expect(decision == .giveUp(ChallengeReport(
            space: ProtectionSpace(host: "example.org", port: 8080, protocol: .http, realm: nil, authenticationMethod: .httpBasic),
            previousFailureCount: 0, proposed: nil)))
    }
}
