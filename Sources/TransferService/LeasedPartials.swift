internal import Glibc
internal import Synchronization

/// In a cluster, the name of each leased download's partial file in the shared data folder:
/// `partial/<id>.<epoch>.part`, a name of the lease's own. A node that takes a task over renames
/// the previous holder's partial file to its own name first (`takeOver`), so whatever the
/// previous holder still does by path once it lost its lease (place the file at completion,
/// delete it after a failure) finds nothing and changes nothing: the file operations are fenced
/// by the same epoch as the task's row. (Bytes it still writes through a descriptor it holds
/// open, until its lease renewal stops the transfer within a third of the lease timeout, land
/// in the renamed file only while the successor continues the same version of the resource:
/// the same bytes at the same offsets. A successor that starts from zero, because the resource
/// changed or ranges are refused, writes a new file (`DownloadFile.startOver`), out of reach.)
///
/// A task no node holds, and every task of a daemon alone, keeps `partial/<id>.part`.
final class LeasedPartials: Sendable {
    private let epochs = Mutex<[Int: Int32]>([:])
    private let folder: String

    init(dataDirectory: String) { folder = dataDirectory + "/partial" }

    /// The partial file's path for a task held under `epoch` (0: not leased).
    func path(of id: Int, epoch: Int32) -> String {
        epoch > 0 ? "\(folder)/\(id).\(epoch).part" : "\(folder)/\(id).part"
    }

    /// The path of task `id`'s partial file on this node now.
    func path(of id: Int) -> String { path(of: id, epoch: epochs.withLock { $0[id] } ?? 0) }

    /// Makes the partial file the lease's: the newest earlier one (an earlier lease's, or the
    /// unleased name) is renamed to this lease's name. One rename, under the service's lock.
    func takeOver(_ id: Int, epoch: Int32) {
        epochs.withLock { $0[id] = epoch }
        let own = path(of: id, epoch: epoch)
        var earlier = epoch - 1
        while earlier >= 0 {
            if rename(path(of: id, epoch: earlier), own) == 0 { return }
            earlier -= 1
        }
    }

    /// Gives the partial file back its unleased name as the lease ends without a completion
    /// that removes it (given back to the queue, suspended, cancelled with resume data), so the
    /// next holder, or a resume data, finds it.
    func release(_ id: Int) {
        guard let epoch = epochs.withLock({ $0.removeValue(forKey: id) }), epoch > 0 else { return }
        _ = rename(path(of: id, epoch: epoch), path(of: id, epoch: 0))
    }

    /// Forgets the task's lease name without touching the file (the lease was lost: the file is
    /// the next holder's).
    func forget(_ id: Int) {
        _ = epochs.withLock { $0.removeValue(forKey: id) }
    }
}
