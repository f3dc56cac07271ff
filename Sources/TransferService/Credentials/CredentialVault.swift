internal import Crypto
internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// Seals the passwords of permanent credentials for the database: ChaChaPoly (swift-crypto)
/// under a 32-byte key in `<data>/credentials.key`, created 0600 on first use. A copy of the
/// database alone reveals no password. Each sealed box is bound to its row (owner, protection
/// space, user as authenticated data), so a password cannot be moved to another row.
struct CredentialVault: Sendable {
    /// The key's bytes (SymmetricKey is not Sendable in this swift-crypto; it is rebuilt per use).
    private let keyBytes: Data
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    let path: String

    init(dataDirectory: String) throws {
        path = dataDirectory + "/credentials.key"
        keyBytes = try KeyFile.load(path)
    }

    func seal(_ password: String, boundTo context: Data) throws -> Data {
        try ChaChaPoly.seal(Data(password.utf8), using: key, authenticating: context).combined
    }

    /// The password in `sealed`, nil when it was not sealed by this key for this row.
    func open(_ sealed: Data, boundTo context: Data) -> String? {
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: context) else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }
}
