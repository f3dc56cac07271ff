internal import TransferModel

/// Where each tenant's download destinations live. Partitioned per tenant: with tokens, a
/// task's `destination` is relative to `<downloads root>/<owner>/` (the owner is the token's
/// fingerprint, 16 hex digits), so one token can neither name nor replace another's files;
/// `RootedPath` keeps it inside (no absolute path, no `..`, no symlink leading out), checked
/// when the task is created and again when its file is moved into place. Without tokens the
/// downloads root itself, as before.
enum TenantDownloads {
    static func root(_ downloadsRoot: String, owner: String?) -> String {
        owner.map { downloadsRoot + "/" + $0 } ?? downloadsRoot
    }
}

extension TransferService {
    /// The tenant's downloads root, made when first needed (a destination is judged against
    /// its resolved path, so it must exist).
    func tenantDownloadsRoot(_ owner: String?, folders: inout RootedPath.CheckedFolders) throws -> String {
        let root = TenantDownloads.root(configuration.downloadsRoot, owner: owner)
        try folders.make(root)
        return root
    }
}
