internal import FoundationEssentials
internal import TransferModel

extension TransferService {
    /// Sealed resume data for a download that stopped at `state`, its partial file kept.
    func sealedResumeData(for task: TransferTask, at state: ResumeState) -> String? {
        resumeSealer.seal(ResumeData(
            url: task.response?.url ?? task.currentRequest?.url ?? task.originalRequest.url,
            request: task.originalRequest, state: state, partialFile: "partial/\(task.id).part",
            destination: task.destination, conflict: task.conflict, login: credentials.openLogin(of: task),
            checksum: task.checksum, createdAt: Date()), owner: task.owner)
    }

    /// A download's last checkpoint, if its partial file still holds bytes. A file shorter than
    /// the checkpoint (data lost since) is detected: the download resumes from what is there.
    func checkpointedResume(of task: TransferTask) -> ResumeState? {
        guard task.kind == .download, var state = task.resume,
              let size = FileSystem.size(of: partialPath(of: task.id)), size > 0 else { return nil }
        state.offset = min(state.offset, size)
        return state
    }
}
