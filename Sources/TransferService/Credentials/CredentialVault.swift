internal import LibCrypto
internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// Seals the passwords of permanent credentials for the database: ChaCha20-Poly1305 (LibCrypto)
/// under a 32-byte key in `<data>/credentials.key`, created 0600 on first use. A copy of the
/// database alone reveals no password. Each sealed box is bound to its row (owner, protection
/// space, user as authenticated data), so a password cannot be moved to another row.
struct CredentialVault: Sendable {
    private let key: Data
    let path: String

    init(dataDirectory: String) throws {
        path = dataDirectory + "/credentials.key"
        key = try KeyFile.load(path)
    }

    func seal(_ password: String, boundTo context: Data) throws -> Data {
        try ChaChaPoly.seal(Data(password.utf8), key: key, authenticating: context)
    }

    /// The password in `sealed`, nil when it was not sealed by this key for this row.
    func open(_ sealed: Data, boundTo context: Data) -> String? {
        guard let plain = try? ChaChaPoly.open(sealed, key: key, authenticating: context) else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }
}
