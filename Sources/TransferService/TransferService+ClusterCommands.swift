internal import Dispatch
internal import FoundationEssentials
internal import Logging
internal import TransferModel
internal import TransferStore

/// Commands on a task another node runs (docs/cluster.md, step 4). The node a client asked
/// writes a command row for the task's holder and signals it; the holder carries it out as its
/// own client's command (`carryOut`, with the client's owner, so the same visibility checks
/// hold) and writes the answer; the asking node answers its client with it.
///
/// The asking request waits on its HTTP worker thread for the answer (a round trip through the
/// database: milliseconds while the holder is alive), at most the lease timeout: a holder that
/// has not answered by then has lost its lease or is about to, and a command it never took is
/// withdrawn and, once no node holds the task, applied here.
extension TransferService {
    func forward(_ command: ClusterCommand, task id: Int, to holder: String, owner: String?) throws -> TransferTask {
        guard let coordinator = store.coordinator, let work = clusterWork else {
            throw ServiceError.conflict(code: "task_held_elsewhere", message: "task \(id) runs on node \(holder)")
        }
        let commandId: Int
        do {
            commandId = try coordinator.sendCommand(task: id, node: holder, owner: owner, command: command.encoded)
        } catch {
            throw StoreReadFailure(reason: "the command cannot be passed to node \(holder): \(error)")
        }
        let answered = work.expectAnswer(commandId)
        defer { work.forgetAnswer(commandId) }
        let deadline = DispatchTime.now() + configuration.leaseTimeout + 1
        while true {
            // Read before every wait: an answer may come before this node listened for it.
            if let answer = try coordinator.answer(ofCommand: commandId) {
                return try ClusterCommand.result(of: answer, holder: holder)
            }
            if DispatchTime.now() >= deadline { break }
            _ = answered.wait(timeout: min(deadline, .now() + 1))
        }
        if try coordinator.withdrawCommand(id: commandId), case .here = try holdForCommand(id, owner: owner) {
            logger.warning("a node did not take a command on its task in time; applied here", metadata: ["task": "\(id)", "node": "\(holder)"])
            return try carryOut(command, task: id, owner: owner, forwarding: false)
        }
        throw StoreReadFailure(reason: "node \(holder), which runs task \(id), did not answer the command within \(Int(configuration.leaseTimeout)) s")
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
