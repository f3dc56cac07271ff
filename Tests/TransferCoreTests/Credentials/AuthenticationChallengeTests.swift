import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The WWW-Authenticate parser against RFC 9110 11.6.1's grammar and the forms servers send.
@Suite struct AuthenticationChallengeTests {
    typealias P = AuthenticationChallenge.Parameter

    @Test func oneBasicChallengeWithAQuotedRealm() {
        #expect(AuthenticationChallenge.parse(["Basic realm=\"Fake Realm\""])
            == [AuthenticationChallenge(scheme: "Basic", parameters: [P(name: "realm", value: "Fake Realm")])])
    }

    @Test func severalChallengesInOneLineAreSplitAtTheSchemeNotAtEveryComma() {
        let challenges = AuthenticationChallenge.parse([
            "Digest realm=\"me@kennethreitz.com\", nonce=\"abc\", qop=\"auth\", opaque=\"x\", algorithm=MD5, stale=FALSE, Basic realm=\"b\", charset=\"UTF-8\"",
        ])
        #expect(challenges.map(\.scheme) == ["Digest", "Basic"])
        #expect(challenges[0].realm == "me@kennethreitz.com")
        #expect(challenges[0].parameter("algorithm") == "MD5")
        #expect(challenges[0].parameter("STALE") == "FALSE")
        #expect(challenges[0].parameters.count == 6)
        #expect(challenges[1].parameters == [P(name: "realm", value: "b"), P(name: "charset", value: "UTF-8")])
    }

    @Test func quotedStringsResolveEscapesAndKeepCommasAndEquals() {
        let challenges = AuthenticationChallenge.parse([#"Basic realm="a \"quoted\", realm=x \\ here""#])
        #expect(challenges.count == 1)
        #expect(challenges[0].realm == #"a "quoted", realm=x \ here"#)
    }

    @Test func everyFieldLineCountsInOrder() {
        let challenges = AuthenticationChallenge.parse(["Newauth realm=\"apps\", type=1, title=\"Login to \\\"apps\\\"\"", "Basic realm=\"simple\""])
        #expect(challenges.map(\.scheme) == ["Newauth", "Basic"])
        #expect(challenges[0].parameter("title") == "Login to \"apps\"")
        #expect(challenges[1].realm == "simple")
    }

    @Test func token68AndBareSchemes() {
        let challenges = AuthenticationChallenge.parse(["Negotiate YIIB+w==, Bearer, Basic realm=r", "NTLM"])
        #expect(challenges.map(\.scheme) == ["Negotiate", "Bearer", "Basic", "NTLM"])
        #expect(challenges[0].token68 == "YIIB+w==")
        #expect(challenges[1].parameters.isEmpty && challenges[1].token68 == nil)
        #expect(challenges[2].realm == "r")
    }

    @Test func blanksAroundEqualsEmptyElementsAndCaseOfNames() {
        let challenges = AuthenticationChallenge.parse([" ,, Basic   REALM = \"x\" ,,  , Digest realm=y"])
        #expect(challenges.map(\.scheme) == ["Basic", "Digest"])
        #expect(challenges[0].realm == "x")
        #expect(challenges[1].realm == "y")
    }

    @Test func malformedInputIsSkippedNotFatal() {
        #expect(AuthenticationChallenge.parse([""]).isEmpty)
        #expect(AuthenticationChallenge.parse(["= , \"\" ="]).isEmpty)
        // An unterminated quoted string ends that challenge without its realm.
        let open = AuthenticationChallenge.parse(["Basic realm=\"never closed"])
        #expect(open.map(\.scheme) == ["Basic"])
        #expect(open[0].realm == nil)
        // A value missing after "=" drops the rest of that challenge, not the next one.
        let broken = AuthenticationChallenge.parse(["Digest realm=, Basic realm=\"ok\""])
        #expect(broken.last?.scheme == "Basic")
        #expect(broken.last?.realm == "ok")
    }
}
