/// What a download does when its `destination` already exists when it finishes (the task's
/// `conflict`). Never a silent overwrite unless asked: `fail` is the default.
public enum DownloadConflict: String, Codable, Sendable, CaseIterable {
    /// The task fails with `cannotCreateFile`, error.reason `destination_exists`; the
    /// downloaded file is kept at the task's default location (served by its file endpoint).
    case fail
    /// The existing file is replaced (one atomic rename).
    case replace
    /// The file gets the first free name `name (1).ext`, `name (2).ext`, ... (as aria2's
    /// auto-file-renaming); the task's `location` says which.
    case rename

    /// The `error.reason` of a download that found its destination taken.
    public static let destinationExistsReason = "destination_exists"

    /// The policy a create request names: an unknown value is refused (400 `invalid_conflict`).
    static func parse(_ text: String, field: String) throws -> DownloadConflict {
        guard let policy = DownloadConflict(rawValue: text) else {
            let allowed = allCases.map(\.rawValue).joined(separator: ", ")
            throw InputError.refused(field: field, code: "invalid_conflict", message: "\(field) must be one of \(allowed), not \"\(text)\"")
        }
        return policy
    }
}
