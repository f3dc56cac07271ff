internal import FoundationEssentials
internal import TransferModel
internal import TransferStore

/// The JSON of a long list of tasks (a batch's 201), written in parts on every core at once
/// (`PartsOnEveryCore`) and joined in order: the same bytes as `TransferTask.jsonList`. A batch
/// of 10,000 tasks answers about 10 MB; written on the request's thread alone it was an eighth
/// of the batch's time while the other core had nothing to do.
enum TaskListAnswer {
    /// Fewer tasks than this per part are not worth a thread.
    static let minimumPart = 512

    static func json(_ tasks: [TransferTask], under key: StaticString) -> Data {
        guard tasks.count >= 2 * minimumPart else { return TransferTask.jsonList(tasks, under: key) }
        let parts = PartsOnEveryCore.map(tasks, minimumPart: minimumPart) { TransferTask.jsonItems($0) }
        return TransferTask.jsonList(parts: parts, under: key)
    }
}
