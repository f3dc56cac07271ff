internal import Dispatch
internal import Synchronization
internal import FoundationEssentials
internal import JSONModel
internal import TransferModel
internal import TransferEngine
internal import TransferStore

/// Decisions a client makes while its task waits (issue 21, docs/decisions.md): the engine stops
/// at a callback the task decides (`TransferJob.decisions`) and reports a `DecisionPoint`; the
/// task shows it (`decision`) and its session's feed gets the callback's event with a
/// `decisionId`; `POST /v1/tasks/{tid}/decisions/{decisionId}` (or the timeout, with the default
/// handling) answers it once, and the engine carries the answer out.
///
/// Tenancy: a decision is a task's, reached only through the task's routes, which check its
/// owner like every other task command; its events go to the task's owner alone, as all events.
extension TransferService {
    /// The engine waits for the client at `point`.
    func decisionRequested(_ s: inout ServiceState, task id: Int, _ point: DecisionPoint, _ deliveries: inout Deliveries) {
        guard let task = s.tasks[id]?.task, let session = s.sessions[task.sessionId] else { return }
        let timeout = session.configuration.decisionTimeoutInterval ?? task.originalRequest.timeoutInterval
        let decisionId = Self.newDecisionId()
        let deadline = Date().addingTimeInterval(timeout)
        var space: ProtectionSpace?
        if case .challenge(let report, _) = point { space = report.space }
        if case .serverTrust(let trusted, _, _) = point { space = trusted }
        s.tasks[id]?.task.decision = PendingDecision(id: decisionId, kind: point.kind, deadline: deadline, protectionSpace: space)
        var fields: [String: JSONValue] = [
            "decisionId": .string(decisionId), "decision": .string(point.kind.rawValue), "deadline": JSONValue(encoding: deadline),
        ]
        var actions: [TaskMachine.Action] = []
        let type: EventType
        switch point {
        case .redirect(let response, let url, let method):
            type = .willPerformHTTPRedirection
            fields["statusCode"] = .integer(Int64(response.statusCode))
            fields["url"] = .string(response.url)
            fields["newURL"] = .string(url)
            fields["response"] = response.jsonValue
            fields["proposedRequest"] = .object(["url": .string(url), "method": .string(method)])
        case .challenge(let report, let response):
            type = .didReceiveChallenge
            fields.merge(report.eventFields) { kept, _ in kept }
            fields["failureResponse"] = response.jsonValue
        case .serverTrust(let space, let certificates, let error):
            // URLSession's NSURLAuthenticationMethodServerTrust, asked only when the system's
            // evaluation refused the chain (the default handling is that refusal).
            type = .didReceiveChallenge
            fields["protectionSpace"] = JSONValue(encoding: space)
            fields["previousFailureCount"] = .integer(0)
            fields["proposedCredential"] = .null
            fields["serverTrust"] = .object(["certificates": .array(certificates.map { .string($0) }), "error": .string(error)])
        case .cache(let response, let policy):
            type = .willCacheResponse
            fields["storagePolicy"] = .string(policy)
            fields["response"] = response.jsonValue
        case .response(let response):
            // The response arrives with its decision (the engine reports no separate one).
            s.tasks[id]?.task.response = response
            actions = transition(&s, task: id, .responseReceived)
            s.tasks[id]?.task.currentRequest?.url = response.url
            s.tasks[id]?.task.progress.bytesExpectedToReceive = response.expectedContentLength
            type = .didReceiveResponse
            fields["response"] = response.jsonValue
        }
        emit(&s, session: session.id, task: id, type, fields, &deliveries)
        perform(actions, task: id, &s, &deliveries)
        // Stored at once: after a crash the task's error names the decision it waited for.
        changed(&s, task: id, persist: true, &deliveries)
        deliveries.add { [self] in
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in decisionTimedOut(task: id, decisionId) }
        }
    }

    /// No answer came: the default handling is taken, and the feed says so.
    private func decisionTimedOut(task id: Int, _ decisionId: String) {
        let deliveries = state.withLock { s -> Deliveries in
            var deliveries = Deliveries()
            guard let pending = s.tasks[id]?.task.decision, pending.id == decisionId else { return deliveries }
            try? resolveDecision(&s, task: id, decisionId, DecisionAnswer.defaultHandling(of: pending.kind), timedOut: true, &deliveries)
            return deliveries
        }
        // A held completion may go on with it: told only once it is durable, as `handle` does.
        store.afterCommit { deliveries.run() }
    }

    /// Answers the pending decision `decisionId` of task `id`; anything but the pending decision,
    /// or an answer of another kind, is refused and changes nothing.
    func resolveDecision(_ s: inout ServiceState, task id: Int, _ decisionId: String, _ answer: DecisionAnswer,
                         timedOut: Bool, _ deliveries: inout Deliveries) throws {
        guard let task = s.tasks[id]?.task, let pending = task.decision, pending.id == decisionId else {
            let waiting = s.tasks[id]?.task.decision.map { "it waits for decision \($0.id)" } ?? "it waits for no decision"
            throw ServiceError.conflict(code: "decision_not_pending", message: "task \(id) has no pending decision \(decisionId) (answered, timed out, or never asked): \(waiting)")
        }
        guard answer.kind == pending.kind else {
            throw InputError.invalidValue(field: "answer", message: "must be one of \(DecisionAnswer.names(of: pending.kind).joined(separator: ", ")) for a \(pending.kind.rawValue) decision")
        }
        let trustChallenge = pending.protectionSpace?.authenticationMethod == .serverTrust
        if case .trustServer = answer, !trustChallenge {
            throw InputError.invalidValue(field: "credential", message: "must give user and password: this challenge is the server's, for a login (pinnedPublicKey answers a server-trust challenge)")
        }
        if case .useCredential = answer, trustChallenge {
            throw InputError.invalidValue(field: "credential", message: "must give pinnedPublicKey (sha256//BASE64 of the server's SubjectPublicKeyInfo): this is a server-trust challenge")
        }
        if case .useCredential(let user, let password, let persistence) = answer, persistence != .none,
           let session = s.sessions[task.sessionId], let space = pending.protectionSpace {
            // Kept as URLSession keeps a credential the delegate answered with (for the session,
            // or in the owner's shared store), for the next challenge of the space; after the
            // lock (a permanent one is written to disk). This attempt sends it either way.
            let credential = Credential(space: space, user: user, password: password, persistence: persistence)
            let scope = CredentialScope(session, requester: task.owner)
            deliveries.add { [credentials] in try? credentials.put(credential, scope) }
        }
        s.tasks[id]?.task.decision = nil
        emit(&s, session: task.sessionId, task: id, .didResolveDecision, [
            "decisionId": .string(decisionId), "decision": .string(pending.kind.rawValue),
            "answer": .string(answer.name), "timedOut": .bool(timedOut),
        ], &deliveries)
        changed(&s, task: id, persist: false, &deliveries)
        if case .trustServer = answer {
            // A response from a server only this client trusted (by its key) is never stored in
            // the URL cache, whose entries other tasks of the partition would be served.
            s.tasks[id]?.cache = nil
        }
        if answer == .becomeStream, let live = s.tasks[id]?.liveBody {
            // URLSession's didBecome streamTask: the same task goes on, its stream reads giving
            // the body (`BodyStreamReads`); the transfer goes on as for allow.
            s.tasks[id]?.streamOfBody = BodyStreamReads(BodyFollower(live, from: 0, to: nil, holdingLastByte: false)) { [weak self] in
                self?.bodyStreamFinished(task: id)
            }
            emit(&s, session: task.sessionId, task: id, .didBecomeStreamTask, ["streamTaskId": .integer(Int64(id))], &deliveries)
        }
        if pending.kind == .cache {
            answerCacheDecision(&s, task: id, answer, &deliveries)  // the service's own: the transfer has ended
        } else {
            engine.submit(.decide(taskId: id, answer))
        }
    }

    /// 128 random bits in hex.
    static func newDecisionId() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(high) + hex(low)
    }
}
