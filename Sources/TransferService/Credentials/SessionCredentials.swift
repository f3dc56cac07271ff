internal import TransferEngine
internal import TransferModel

/// The credentials a running transfer may answer challenges with: the store and the task's
/// session as its owner sees it. Handed to the engine in the `TransferJob`; read on the engine
/// thread.
struct SessionCredentials: CredentialSource {
    let store: CredentialStore
    let scope: CredentialScope

    /// The stored credentials that may answer a challenge for `space`, best first.
    func candidates(for space: ProtectionSpace) -> [Credential] { store.candidates(for: space, in: scope) }

    /// A credential was sent: one of persistence `none` is forgotten now.
    func used(_ credential: Credential) { store.used(credential, in: scope) }
}
