package import TransferModel

/// How one task answers 401 challenges, as URLSession's default handling does: each stored
/// credential that matches the challenged protection space is tried once, in order, and when
/// none is left the 401 stands. A value carried from one attempt of the task to the next (in
/// `TransferJob`), decided without I/O so it is tested alone.
///
/// Why a new attempt per credential rather than handing libcurl a credential up front: libcurl
/// given a user and password answers a 401 from *any* realm of the host with them, and tells
/// the realm only afterwards. One host with two realms (two credentials) would get the wrong
/// one. So the first request goes without credentials; the 401 names the realm and scheme; the
/// credential stored for exactly that space (else one stored for any realm) is chosen, and the
/// request is made again with only that credential and only that scheme (CURLOPT_HTTPAUTH with
/// one bit), which libcurl then answers itself (Basic at once, Digest after its own probe for
/// the nonce).
struct ChallengeResponder: Sendable {
    /// Credentials this task already sent: each gets one try, so a wrong password cannot loop.
    private(set) var tried: Set<Credential.ID> = []
    /// Failed tries per challenged space: URLAuthenticationChallenge.previousFailureCount.
    private(set) var failures: [ProtectionSpace: Int] = [:]
    /// The credential the current attempt sends, and the challenged space it answers.
    private(set) var answering: (space: ProtectionSpace, credential: Credential)?

    /// What to do with a final 401.
    enum Decision: Sendable, Equatable {
        /// No challenge of a scheme transferd answers: the 401 is the response, no event.
        case notAnswerable
        /// Send the request again with `credential`; the event says which user is proposed.
        case answer(ChallengeReport, Credential)
        /// Nothing (left) to try: the 401 is the response.
        case giveUp(ChallengeReport)
    }

    /// Decides how to answer a 401 carrying `challenges` from `origin`; `candidates` gives the
    /// stored credentials matching a space, best first.
    mutating func respond(to challenges: [AuthenticationChallenge], from origin: ChallengeOrigin,
                          candidates: (ProtectionSpace) -> [Credential]) -> Decision {
        // A 401 to a request that carried a credential: that credential failed.
        if let (space, _) = answering {
            failures[space, default: 0] += 1
            answering = nil
        }
        let spaces = Self.answerable(challenges).map { origin.space(realm: $0.realm, method: $1) }
        guard let first = spaces.first else { return .notAnswerable }
        for space in spaces {
            guard let credential = candidates(space).first(where: { !tried.contains($0.id) }) else { continue }
            tried.insert(credential.id)
            answering = (space, credential)
            return .answer(ChallengeReport(space: space, previousFailureCount: failures[space] ?? 0, proposed: credential.info), credential)
        }
        return .giveUp(ChallengeReport(space: first, previousFailureCount: failures[first] ?? 0, proposed: nil))
    }

    /// A 401 came back while a credential was sent: that credential failed (the client decides
    /// what follows, `Transfer+Decisions`).
    mutating func noteFailedAnswer() {
        guard let (space, _) = answering else { return }
        failures[space, default: 0] += 1
        answering = nil
    }

    /// The client answered the challenge with `credential` (useCredential): the next attempt
    /// sends it, and the default handling will not try it again.
    mutating func use(_ credential: Credential) {
        tried.insert(credential.id)
        answering = (credential.space, credential)
    }

    /// What a challenge decision reports: the space, its failures so far, and the stored
    /// credential the default handling would try next (user only).
    func report(for space: ProtectionSpace, candidates: [Credential]) -> ChallengeReport {
        ChallengeReport(space: space, previousFailureCount: failures[space] ?? 0,
                        proposed: candidates.first { !tried.contains($0.id) }?.info)
    }

    /// The challenges transferd can answer with their methods, strongest first (Digest never
    /// sends the password, so it is preferred, as libcurl's CURLAUTH_ANY would), else in the
    /// server's order.
    static func answerable(_ challenges: [AuthenticationChallenge]) -> [(AuthenticationChallenge, AuthenticationMethod)] {
        let known = challenges.compactMap { challenge in AuthenticationMethod(scheme: challenge.scheme).map { (challenge, $0) } }
        return known.filter { $0.1 == .httpDigest } + known.filter { $0.1 == .httpBasic }
    }
}

/// What `didReceiveChallenge` reports: the challenged space, how often credentials for it failed
/// in this task, and the credential (user only, never the password) the daemon answers with.
package struct ChallengeReport: Sendable, Equatable {
    package var space: ProtectionSpace
    package var previousFailureCount: Int
    package var proposed: CredentialInfo?
}
