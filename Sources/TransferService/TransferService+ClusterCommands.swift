internal import Dispatch
internal import FoundationEssentials
internal import Logging
internal import Synchronization
public import TransferModel
internal import TransferStore

/// A command the node passed to the node that runs its task: the caller does not wait for it on
/// its own thread, it hands `answer` a completion that gets the holder's answer (the task, or the
/// error the holder's own client would get), within the lease timeout. The HTTP routes answer
/// their request with it later (`RouteResult.later`), so a holder that does not answer (stopped,
/// partitioned) holds no HTTP worker, however many such commands arrive.
public struct CommandForwarded: Error, Sendable {
    public let answer: @Sendable (@escaping @Sendable (Result<TransferTask, any Error>) -> Void) -> Void
}

/// Commands on a task another node runs (docs/cluster.md, step 4). The node a client asked
/// writes a command row for the task's holder and signals it; the holder carries it out as its
/// own client's command (`carryOut`, with the client's owner, so the same visibility checks
/// hold) and writes the answer; the asking node answers its client with it.
///
/// The asking node reads the answer when the holder's signal comes (or each second, should the
/// signal be lost) on `ClusterWork.answerQueue`, at most the lease timeout: a holder that has
/// not answered by then has lost its lease or is about to, and a command it never took is
/// withdrawn and, once no node holds the task, applied here. At most `maxAwaitedAnswers` wait
/// at once; past that a command is refused with 503 rather than queued without bound.
extension TransferService {
    static let maxAwaitedAnswers = 256

    /// Passes `command` to `holder`; throws `CommandForwarded`, whose `answer` gives the result.
    func forward(_ command: ClusterCommand, task id: Int, to holder: String, owner: String?) throws -> Never {
        guard let coordinator = store.coordinator, let work = clusterWork else {
            throw ServiceError.conflict(code: "task_held_elsewhere", message: "task \(id) runs on node \(holder)")
        }
        guard work.awaitedAnswers < Self.maxAwaitedAnswers else {
            throw StoreReadFailure(reason: "\(Self.maxAwaitedAnswers) commands already wait for other nodes' answers; retry later")
        }
        let commandId: Int
        do {
            commandId = try coordinator.sendCommand(task: id, node: holder, owner: owner, command: command.encoded)
        } catch {
            throw StoreReadFailure(reason: "the command cannot be passed to node \(holder): \(error)")
        }
        let wait = AnswerWait(deadline: .now() + configuration.leaseTimeout + 1)
        throw CommandForwarded { [weak self] completion in
            guard let self else { return completion(.failure(ServiceError.shuttingDown)) }
            wait.completion.withLock { $0 = completion }
            work.expectAnswer(commandId) { work.answerQueue.async { [weak self] in self?.readAnswer(wait, command, commandId, task: id, holder: holder, owner: owner) } }
            work.answerQueue.async { [weak self] in self?.readAnswer(wait, command, commandId, task: id, holder: holder, owner: owner) }
        }
    }

    /// One wait for a passed-on command's answer: read by whichever comes first (the answer's
    /// signal, the next second), one read at a time, answered once.
    final class AnswerWait: Sendable {
        let deadline: DispatchTime
        let completion = Mutex<(@Sendable (Result<TransferTask, any Error>) -> Void)?>(nil)
        /// Whether a read runs now (a wake meanwhile reads again after it), and whether one is due.
        let reading = Mutex<(running: Bool, again: Bool)>((false, false))

        init(deadline: DispatchTime) { self.deadline = deadline }

        /// Answers once; later calls do nothing.
        func finish(_ result: Result<TransferTask, any Error>) {
            completion.withLock { let c = $0; $0 = nil; return c }?(result)
        }

        var isFinished: Bool { completion.withLock { $0 == nil } }
    }

    private func readAnswer(_ wait: AnswerWait, _ command: ClusterCommand, _ commandId: Int, task id: Int, holder: String, owner: String?) {
        let enter = wait.reading.withLock { r -> Bool in
            if r.running { r.again = true; return false }
            r.running = true
            return true
        }
        guard enter, !wait.isFinished else { return }
        defer {
            let again = wait.reading.withLock { r -> Bool in
                r.running = false
                defer { r.again = false }
                return r.again
            }
            if again, !wait.isFinished { readAnswer(wait, command, commandId, task: id, holder: holder, owner: owner) }
        }
        guard let coordinator = store.coordinator, let work = clusterWork else { return wait.finish(.failure(ServiceError.shuttingDown)) }
        do {
            if let answer = try coordinator.answer(ofCommand: commandId) {
                work.forgetAnswer(commandId)
                return wait.finish(Result { try ClusterCommand.result(of: answer, holder: holder) })
            }
            guard DispatchTime.now() >= wait.deadline else {
                // A lost signal: look again in a second.
                work.answerQueue.asyncAfter(deadline: min(wait.deadline, .now() + 1)) { [weak self] in
                    self?.readAnswer(wait, command, commandId, task: id, holder: holder, owner: owner)
                }
                return
            }
            work.forgetAnswer(commandId)
            if try coordinator.withdrawCommand(id: commandId), case .here = try holdForCommand(id, owner: owner) {
                logger.warning("a node did not take a command on its task in time; applied here", metadata: ["task": "\(id)", "node": "\(holder)"])
                return wait.finish(Result { try carryOut(command, task: id, owner: owner, forwarding: false) })
            }
            wait.finish(.failure(StoreReadFailure(reason: "node \(holder), which runs task \(id), did not answer the command within \(Int(configuration.leaseTimeout)) s")))
        } catch {
            work.forgetAnswer(commandId)
            wait.finish(.failure(error))
        }
    }

    /// Carries out the commands other nodes wrote for this node's tasks, and answers each.
    func carryOutForwardedCommands(node: String) {
        guard let coordinator = store.coordinator else { return }
        let rows: [ClusterCommandRow]
        do {
            rows = try coordinator.takeCommands(node: node)
        } catch {
            logger.warning("commands from other nodes cannot be read", metadata: ["error": "\(error)"])
            return
        }
        for row in rows {
            let result: Result<TransferTask, any Error>
            if let command = ClusterCommand(encoded: row.command) {
                result = Result { try carryOut(command, task: row.taskId, owner: row.owner, forwarding: false) }
            } else {
                result = .failure(StoreReadFailure(reason: "a command this node does not know: \(row.command)"))
            }
            do {
                try coordinator.answerCommand(id: row.id, answer: ClusterCommand.answer(result))
            } catch {
                logger.warning("a command's answer cannot be written", metadata: ["command": "\(row.id)", "error": "\(error)"])
            }
        }
    }
}
