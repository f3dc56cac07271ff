internal import Curl
internal import TransferModel

/// Decisions the client makes while a transfer waits (`Transfer+Decisions`): parking a transfer
/// whose response came whole, and carrying out the answer.
extension EngineLoop {
    /// The transfer's response is whole and its decision pending: out of the multi handle (its
    /// connection back in the pool for the next request), kept in `transfers` so a cancel or
    /// the answer finds it.
    func park(_ taskId: Int, _ transfer: Transfer) {
        transfer.reportProgress(now: Self.now(), force: true)
        taskIds[ObjectIdentifier(transfer.handle)] = nil
        multi.remove(transfer.handle)
        transfer.parked = true
        transfer.reportAwaitedDecision()
    }

    /// The system refused the server's certificate and the client decides challenges: the
    /// transfer is parked and a probe connection reads the chain the decision shows.
    func probeServerTrust(_ taskId: Int, _ transfer: Transfer) {
        transfer.awaited = .serverTrust(error: transfer.transportError(.peerFailedVerification), chain: nil)
        transfer.decisionReported = true  // told once the probe has the chain
        park(taskId, transfer)
        do {
            let probe = try transfer.makeTrustProbe()
            try multi.add(probe)
            trustProbes[ObjectIdentifier(probe)] = (taskId, probe)
        } catch {
            serverTrustProbed(taskId, chain: [])
        }
    }

    /// A probe ended: the decision is asked with the chain it read (none if it failed).
    func trustProbeDone(_ easy: EasyHandle, _ code: CurlCode) -> Bool {
        guard let (taskId, probe) = trustProbes.removeValue(forKey: ObjectIdentifier(easy)) else { return false }
        let chain = code.isOK ? probe.certificateChain : []
        multi.remove(probe)
        serverTrustProbed(taskId, chain: chain)
        return true
    }

    private func serverTrustProbed(_ taskId: Int, chain: [String]) {
        guard let transfer = transfers[taskId], case .serverTrust(let error, nil)? = transfer.awaited else { return }
        transfer.awaited = .serverTrust(error: error, chain: chain)
        transfer.decisionReported = false
        transfer.reportAwaitedDecision()
    }

    /// Carries out an answer (the service checked it is for the pending decision's kind).
    func decide(_ taskId: Int, _ answer: DecisionAnswer) {
        guard let transfer = transfers[taskId], transfer.awaited != nil else { return }
        switch transfer.answer(answer) {
        case .restart(let job):
            _ = detach(taskId)
            apply(.start(job))
        case .fail(let error):
            finish(taskId, .failure(error))
        case .proceed:
            if transfer.parked {
                endParked(taskId, transfer)
            } else if transfer.pausedAt == nil {
                // The paused write callback takes its chunk again (a client's suspend keeps it paused).
                transfer.lastActivity = Self.now()
                try? transfer.handle.pause(false)
            }
        }
    }

    /// A parked transfer after its answer: another decision may follow (a refused redirect's
    /// response, for a data task that decides responses), else it ends with what it received.
    private func endParked(_ taskId: Int, _ transfer: Transfer) {
        if transfer.awaited != nil { return transfer.reportAwaitedDecision() }
        _ = transfer.replayHeldBody()
        transfer.reportProgress(now: Self.now(), force: true)
        switch transfer.ending(.ok) {
        case .outcome(let outcome): stepEnded(taskId, outcome)
        case .place(let placement): finish(taskId, placement)
        }
    }
}
