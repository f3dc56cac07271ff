internal import FoundationEssentials
internal import Curl
package import TransferModel

/// The callbacks a client decides live (`TransferJob.decisions`, issue 21).
///
/// A redirect or a challenge is decided once its response is whole: libcurl is told not to
/// follow (the 3xx ends the transfer) and a 401 is held as for stored credentials; the body
/// is kept (bounded) so that `refuse` or `rejectProtectionSpace` can deliver it as the task's.
/// `EngineLoop` then parks the transfer (out of the multi handle, its connection back in the
/// pool) and reports the decision. A response is decided as its head arrives: the write
/// callback pauses the transfer before any body byte is taken, so the connection stays open
/// and nothing is read until the answer.
enum AwaitedDecision {
    case redirect(head: ResponseHead, target: String, method: String)
    case challenge(head: ResponseHead, origin: ChallengeOrigin, offered: [AuthenticationChallenge], space: ProtectionSpace)
    case response(ResponseInfo)
    /// The system's verification refused the server's certificate (`error`); the chain comes
    /// from a probe connection (`EngineLoop.probeServerTrust`), nil until it has.
    case serverTrust(error: TaskError, chain: [String]?)
}

/// What the engine does once the transfer took an answer.
enum DecisionFollowUp {
    /// A new request: the redirect followed or rewritten, or the challenge answered.
    case restart(TransferJob)
    /// The task ends with this error.
    case fail(TaskError)
    /// The transfer goes on (a parked one completes with what it has).
    case proceed
}

extension Transfer {
    /// The most body a 3xx or 401 under decision keeps for its `refuse` / `rejectProtectionSpace`.
    static let maxHeldBody = 1 << 20

    /// Whether a redirect to `target` is the client's to decide (a client-streamed body cannot
    /// be sent again, so such a task's redirects are followed as before).
    func decidesRedirect() -> Bool {
        job.decisions.contains(.redirect) && job.bodyStream == nil
    }

    /// The method a redirect proposes (as browsers and URLSession: 303 turns any method but HEAD
    /// into GET, 301 and 302 turn POST into GET).
    func proposedMethod(after statusCode: Int) -> String {
        if statusCode == 303 && currentMethod != "HEAD" || (statusCode == 301 || statusCode == 302) && currentMethod == "POST" { return "GET" }
        return currentMethod
    }

    /// Keeps a chunk of a 3xx or 401 body while its decision is pending. Nil: no such decision.
    func holdForDecision(_ bytes: RawSpan) -> WriteDisposition? {
        switch awaited {
        case .redirect?, .challenge?:
            guard heldBody.count + bytes.byteCount <= Self.maxHeldBody else {
                failure = TaskError(.dataLengthExceedsMaximum, "the body of a response under decision exceeds \(Self.maxHeldBody) bytes")
                return .fail
            }
            bytes.withUnsafeBytes { heldBody.append(contentsOf: $0) }
            return .accept
        case .response?:
            return .pause  // curl hands the chunk back once the answer unpauses it
        case .serverTrust?, nil:
            return nil  // (a refused server sent no body)
        }
    }

    /// Reports the pending decision once (a response's at once, a redirect's and a challenge's
    /// when their response is whole).
    func reportAwaitedDecision() {
        guard let awaited, !decisionReported else { return }
        decisionReported = true
        switch awaited {
        case .redirect(let head, let target, let method):
            report(.decision(.redirect(response: info(of: head), url: URLLogin.strip(target), method: method)))
        case .challenge(let head, _, _, let space):
            let candidates = job.credentials?.candidates(for: space) ?? []
            report(.decision(.challenge(challenges.report(for: space, candidates: candidates), response: info(of: head))))
        case .response(let info):
            report(.decision(.response(info)))
        case .serverTrust(let error, let chain):
            guard let origin = ChallengeOrigin(url: currentURL) else { return }
            report(.decision(.serverTrust(origin.space(realm: nil, method: .serverTrust), certificates: chain ?? [], error: error.message)))
        }
    }

    private func info(of head: ResponseHead) -> ResponseInfo {
        ResponseInfo(statusCode: head.statusCode, headers: head.joined, url: URLLogin.strip(currentURL))
    }

    /// A final 401 whose challenge the client decides: held with its body until the answer.
    /// False when nothing in it is a challenge transferd can answer (the 401 is then final).
    func awaitChallengeDecision(_ head: ResponseHead) -> Bool {
        guard let origin = ChallengeOrigin(url: currentURL) else { return false }
        let offered = AuthenticationChallenge.parse(head.fields.filter { $0.name.equalsIgnoringASCIICase("www-authenticate") }.map(\.value))
        guard let (challenge, method) = ChallengeResponder.answerable(offered).first else { return false }
        challenges.noteFailedAnswer()
        awaited = .challenge(head: head, origin: origin, offered: offered, space: origin.space(realm: challenge.realm, method: method))
        decisionReported = false
        return true
    }

    /// Whether a failed verification of the server's certificate is the client's to decide
    /// (once: a transfer that runs on an accepted key is judged by that key).
    func decidesServerTrust(after code: CurlCode) -> Bool {
        code == .peerFailedVerification && job.decisions.contains(.challenge) && job.acceptedServerTrust == nil && job.bodyStream == nil
            && remoteScheme == nil && segmented == nil && currentURL.prefix(8).lowercased() == "https://"
    }

    /// A connection to the refused server with verification off, made only to read the chain it
    /// presents (CURLOPT_CONNECT_ONLY, CURLOPT_CERTINFO): no request is sent on it. Through the
    /// same proxy as the request; the multi handle's gate applies the network policy to it.
    func makeTrustProbe() throws -> EasyHandle {
        let probe = try EasyHandle()
        try probe.set(.url(currentURL))
        try probe.set(.allowedProtocols("https"))
        try probe.set(.connectOnly(true))
        try probe.set(.certificateInfo(true))
        try job.network.applyTLS(to: probe)
        try probe.set(.verifyServerCertificate(false))
        try probe.set(.noProxy(""))
        try probe.set(.proxy(proxyState.route?.url ?? ""))
        try probe.set(.proxyUsername(proxyState.route?.username))
        try probe.set(.proxyPassword(proxyState.route?.username == nil ? nil : proxyState.route?.password ?? ""))
        try probe.set(.connectTimeoutMilliseconds(Int(job.request.timeoutInterval * 1000)))
        return probe
    }

    /// Takes the client's answer to the pending decision.
    func answer(_ answer: DecisionAnswer) -> DecisionFollowUp {
        guard let pending = awaited else { return .proceed }
        awaited = nil
        switch (pending, answer) {
        case (.redirect(let head, let target, let method), .follow):
            return .restart(redirected(head, to: target, method: method, headers: nil))
        case (.redirect(let head, _, let method), .rewrite(let request)):
            return .restart(redirected(head, to: request.url, method: request.method ?? method, headers: request.headers))
        case (.redirect(let head, _, _), .refuse):
            // The 3xx is the task's response (URLSession's completionHandler(nil)).
            exchangeCookies(head, answered: currentURL, next: currentURL)
            deliverHeld(head)
            return .proceed
        case (.challenge(_, _, _, let space), .useCredential(let user, let password, let persistence)):
            challenges.use(Credential(space: space, user: user, password: password, persistence: persistence))
            return .restart(nextAttempt())
        case (.challenge(let head, let origin, let offered, _), .performDefaultHandling):
            // The daemon's own handling: each stored credential for the space, tried once.
            if let credentials = job.credentials,
               case .answer(_, let credential) = challenges.respond(to: offered, from: origin, candidates: credentials.candidates(for:)) {
                credentials.used(credential)
                return .restart(nextAttempt())
            }
            deliverHeld(head)
            return .proceed
        case (.serverTrust, .trustServer(let pin)):
            // The same request again, on a connection that must present the accepted key.
            var next = nextAttempt(keepingAuthorization: true)
            next.acceptedServerTrust = ChallengeOrigin(url: currentURL).map { ($0, pin) }
            return .restart(next)
        case (.serverTrust(let error, _), .performDefaultHandling), (.serverTrust(let error, _), .rejectProtectionSpace):
            return .fail(error)  // the system's verdict stands
        case (.challenge, .cancelAuthenticationChallenge), (.serverTrust, .cancelAuthenticationChallenge):
            return .fail(TaskError(.cancelled, "cancelled: the client answered the authentication challenge with cancelAuthenticationChallenge"))
        case (.challenge(let head, _, _, _), .rejectProtectionSpace):
            deliverHeld(head)  // the only space offered was refused: the 401 stands
            return .proceed
        case (.response, .cancel):
            failure = TaskError(.cancelled, "cancelled: the client answered the response with cancel")
            return .proceed
        case (.response, .becomeDownload):
            guard let target = job.conversionTarget, file == nil else { return .proceed }
            do throws(TaskError) {
                file = try DownloadFile(target: target)
                report(.becameDownload)
                if let response { file?.expectDigest(announcedBy: response, method: currentMethod) }
            } catch {
                failure = error
            }
            return .proceed
        default:
            // allow, and what the service lets through for another kind (it checks the kind).
            return .proceed
        }
    }

    /// A 3xx or 401 the answer made final: delivered as the response, its held body replayed
    /// before the transfer ends (`replayHeldBody`).
    private func deliverHeld(_ head: ResponseHead) {
        deliverFinal(head)
        replaysHeldBody = true
    }

    /// Feeds a refused redirect's or a rejected challenge's body to the task, as it would have
    /// come. False: it failed the transfer (`failure` says why).
    func replayHeldBody() -> Bool {
        guard replaysHeldBody else { return true }
        replaysHeldBody = false
        let held = heldBody
        heldBody = Data()
        guard failure == nil else { return false }
        guard !held.isEmpty else { return true }
        return held.withUnsafeBytes { decode($0.bytes) }
    }

    /// The task's next request after a redirect the client followed or rewrote: cookies of the
    /// 3xx kept, the method changed as proposed (a body goes only with a method that keeps
    /// it), and on another origin no Authorization or Cookie header of the task's own.
    private func redirected(_ head: ResponseHead, to target: String, method: String, headers: [String: String]?) -> TransferJob {
        let from = currentURL
        exchangeCookies(head, answered: from, next: target)
        report(.redirect(statusCode: head.statusCode, from: URLLogin.strip(from), to: URLLogin.strip(target), method: method,
                         headers: headers, decided: true))
        var next = job
        next.challenges = challenges
        next.redirectsSoFar = redirects + 1
        let crossOrigin = ChallengeOrigin(url: target) != ChallengeOrigin(url: from)
        next.request.url = target
        if method != job.request.method {
            next.request.method = method
            if method == "GET" || method == "HEAD" {
                next.body = nil
                next.streamedBody = nil
            }
        }
        next.request.headers = (headers ?? job.request.headers).filter { name, _ in
            let lower = name.lowercased()
            return !(crossOrigin && (lower == "authorization" || lower == "cookie"))
        }
        return next
    }
}
