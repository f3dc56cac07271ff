internal import Curl
internal import TransferModel

/// Answering 401 challenges with stored credentials (`ChallengeResponder` decides, this does).
///
/// A 401 head is held, not reported, until it is known to be the final answer: libcurl answers a
/// Digest challenge itself when it has the credential (its first request is a probe), and then
/// another head follows. A body chunk means the 401 is final (libcurl keeps the body of a 401 it
/// answers from the write callback), and so does the end of the transfer. A final 401 that a
/// stored credential can answer ends this transfer; `EngineLoop` then starts `challengeRetry`.
extension Transfer {
    /// Not for a client-streamed body (it cannot be sent twice) nor for tus steps (no credentials).
    var answersChallenges: Bool { (job.credentials != nil || job.decisions.contains(.challenge)) && job.bodyStream == nil }

    /// The credential this attempt sends, for the one scheme it was challenged with; else the
    /// URL's own user and password (`URLLogin`), with Basic at once as curl sends them, when
    /// this attempt starts at their origin.
    func configureCredential() throws {
        if let (space, credential) = job.challenges.answering {
            try handle.set(.httpAuthentication(space.authenticationMethod == .httpDigest ? .digest : .basic))
            try handle.set(.credentials(user: credential.user, password: credential.password))
        } else if let login = job.urlLogin, let origin = login.origin, ChallengeOrigin(url: job.request.url) == origin {
            try handle.set(.httpAuthentication(.basic))
            try handle.set(.credentials(user: login.user, password: login.password))
        }
    }

    /// Holds a 401 head; a later head means libcurl answered the held one itself.
    func holdsUnauthorized(_ head: ResponseHead) -> Bool {
        heldUnauthorized = nil
        guard head.statusCode == 401, answersChallenges else { return false }
        heldUnauthorized = head
        return true
    }

    /// Before each body chunk: true while the chunk is the body of a 401 that is to be answered.
    func swallowsChallengeBody() -> Bool {
        settleHeldChallenge()
        return challengeRetry != nil
    }

    /// When libcurl has finished: the job that answers the challenge, if one is to be answered.
    func retryAnsweringChallenge(after code: CurlCode) -> TransferJob? {
        if code.isOK { settleHeldChallenge() }
        return challengeRetry
    }

    /// The held 401 is final: report the challenge, then answer it or let the 401 stand.
    private func settleHeldChallenge() {
        guard let head = heldUnauthorized else { return }
        heldUnauthorized = nil
        // The client decides (`Transfer+Decisions`): held with its body until it answers.
        if job.decisions.contains(.challenge), awaitChallengeDecision(head) { return }
        guard let credentials = job.credentials, let origin = ChallengeOrigin(url: currentURL) else { return deliverFinal(head) }
        let offered = AuthenticationChallenge.parse(head.fields.filter { $0.name.equalsIgnoringASCIICase("www-authenticate") }.map(\.value))
        switch challenges.respond(to: offered, from: origin, candidates: credentials.candidates(for:)) {
        case .notAnswerable:
            deliverFinal(head)
        case .giveUp(let challenge):
            report(.challenge(challenge))
            deliverFinal(head)
        case .answer(let challenge, let credential):
            report(.challenge(challenge))
            credentials.used(credential)
            challengeRetry = nextAttempt()
        }
    }

    /// The same task from the challenged URL (after redirects) with the method it had there. The
    /// credential answers the challenge, so an Authorization header of the request or of
    /// httpAdditionalHeaders is not sent with it; when redirects led to another origin, no Cookie
    /// header either (libcurl drops both there, and the new attempt starts at that origin).
    func nextAttempt(keepingAuthorization: Bool = false) -> TransferJob {
        var next = job
        next.challenges = challenges
        let crossOrigin = ChallengeOrigin(url: currentURL) != ChallengeOrigin(url: job.request.url)
        next.request.url = currentURL
        if currentMethod != job.request.method {
            next.request.method = currentMethod
            if currentMethod == "GET" {
                next.body = nil
                next.streamedBody = nil
            }
        }
        next.request.headers = job.request.headers.filter { name, _ in
            let lower = name.lowercased()
            return (keepingAuthorization || lower != "authorization") && !(crossOrigin && lower == "cookie")
        }
        return next
    }
}
