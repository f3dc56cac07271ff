internal import JSONModel
internal import TransferEngine
internal import TransferModel

/// A segmented download's connections beyond its first (issue 18 item 2): the engine asks for
/// them (`TransferUpdate.segmentConnections`), the scheduler grants them in admission order as
/// the hosts' per-host caps (httpMaximumConnectionsPerHost) have room, and the engine opens one
/// per grant (`EngineCommand.grantConnection`) and gives it back when its part ends with no
/// other to take.
extension TransferService {
    /// Under the lock: the download gave some connections back and wants `wanted` in all.
    func segmentConnectionsChanged(_ s: inout ServiceState, task id: Int, _ request: SegmentConnections, _ deliveries: inout Deliveries) {
        guard let session = s.tasks[id]?.task.sessionId else { return }
        for source in request.dropped {
            emit(&s, session: session, task: id, .didDropSource, ["url": .string(source.url), "error": source.error.jsonValue], &deliveries)
        }
        for origin in request.returned {
            s.scheduler.returnConnections(taskId: id, host: Scheduler.hostKey(sessionId: session, url: origin))
        }
        let hosts = request.origins.map { Scheduler.hostKey(sessionId: session, url: $0) }
        s.scheduler.wantConnections(taskId: id, hosts: hosts, wanted: request.wanted)
        admit(&s, &deliveries)
    }

    /// Under the lock: the scheduler granted task `id` a connection to `host` (a host key).
    func grantConnection(_ s: inout ServiceState, task id: Int, host: String) {
        guard let session = s.tasks[id]?.task.sessionId else { return }
        engine.submit(.grantConnection(taskId: id, origin: Scheduler.origin(ofHostKey: host, sessionId: session)))
    }
}
