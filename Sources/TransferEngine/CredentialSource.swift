package import TransferModel

/// The stored credentials a running transfer may answer a challenge with, as its session's
/// owner sees them. The service implements it over its credential store (`SessionCredentials`);
/// the engine asks it on its own thread.
package protocol CredentialSource: Sendable {
    /// The credentials that may answer a challenge for `space`, best first.
    func candidates(for space: ProtectionSpace) -> [Credential]
    /// A credential was sent (one of persistence `none` is forgotten now).
    func used(_ credential: Credential)
}
