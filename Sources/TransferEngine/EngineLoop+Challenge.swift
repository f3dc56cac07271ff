/// Answering a challenge: the task's transfer ended on a 401 that a stored credential answers,
/// so the task runs again as a new transfer (a fresh easy handle, so nothing of the first
/// attempt carries over) with that credential.
extension EngineLoop {
    func answerChallenge(_ taskId: Int, _ transfer: Transfer, with job: TransferJob) {
        _ = detach(taskId)
        apply(.start(job))
    }
}
