internal import Synchronization
internal import TransferModel
internal import TransferStore

/// A creation (session, tasks) is answered 201 only once its rows are committed. Its change is
/// made in memory first, so the queued writer can group many requests in one transaction; when
/// the store cannot commit it, the change is undone here and the writes withdrawn, so a refused
/// creation is neither listed now nor found after a restart. Both run inside `Store.settle`,
/// on the writer, so no commit of the withdrawn writes can slip in between.
///
/// Tasks are not started before their creation settles (`TransferService+Create`), so a refused
/// task never reached the engine or sent a request.
extension TransferService {
    /// Returns once the new session `id` (written as write `seq`) is committed; otherwise
    /// forgets it and throws the store's failure.
    func settleCreation(of id: String, _ seq: Int?) throws {
        let refused = store.settle(seq) { failure -> (StoreFailure, Deliveries)? in
            guard let failure else { return nil }
            let deliveries = state.withLock { s in
                var deliveries = Deliveries()
                forgetRefused(&s, session: id, &deliveries)
                return deliveries
            }
            store.withdraw { $0.without(session: id, tasks: []) }
            return (failure, deliveries)
        }
        guard let (failure, deliveries) = refused else { return }
        deliveries.run()
        throw failure
    }

    /// Returns once new tasks `ids` of session `sessionId` (written as write `seq`) are
    /// committed; otherwise forgets them and throws the store's failure. Tasks whose session's
    /// own creation was refused meanwhile are refused too (their rows were withdrawn with it).
    func settleCreation(of ids: Range<Int>, in sessionId: String, _ seq: Int?) throws {
        let refused = store.settle(seq) { failure -> (StoreFailure, Deliveries)? in
            state.withLock { s in
                let orphaned = s.sessions[sessionId] == nil
                guard let failure = failure ?? (orphaned ? (store.failure ?? StoreFailure(kind: .unavailable, reason: "the session's own creation was refused")) : nil) else {
                    return nil
                }
                var deliveries = Deliveries()
                for id in ids { forgetRefused(&s, task: id, &deliveries) }
                store.withdraw { $0.without(session: nil, tasks: Set(ids)) }
                return (failure, deliveries)
            }
        }
        guard let (failure, deliveries) = refused else { return }
        deliveries.run()
        throw failure
    }

    /// Under the lock: removes a session whose creation was refused, with anything made in it
    /// meanwhile (tasks are not started before they settle, so none is in the engine).
    private func forgetRefused(_ s: inout ServiceState, session id: String, _ deliveries: inout Deliveries) {
        for taskId in s.tasksBySession[id] ?? [] { forgetRefused(&s, task: taskId, &deliveries) }
        s.tasksBySession[id] = nil
        s.sessions[id] = nil
        s.sessionOrder.removeAll { $0 == id }
        s.attachments[id] = nil
        s.events[id] = nil
    }

    /// Under the lock: removes a task whose creation was refused. A change-feed reader that saw
    /// it created sees it removed.
    private func forgetRefused(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks.removeValue(forKey: id) else { return }
        s.tasksBySession[entry.task.sessionId]?.removeAscending(id)
        s.dirty.remove(id)
        noteTaskRemoval(&s, task: entry.task, &deliveries)
        let snapshot = ProgressSnapshot(entry.task)
        for waiter in s.waiters.takeProgress(task: id, below: .max) {
            deliveries.add { waiter.callback(snapshot) }
        }
    }
}
