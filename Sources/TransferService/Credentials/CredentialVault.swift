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
        if let existing = FileManager.default.contents(atPath: path), existing.count == 32 {
            chmod(path, 0o600)  // a copy restored with looser permissions is tightened again
            keyBytes = existing
        } else {
            keyBytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            try Self.writeOwnerOnly(keyBytes, to: path)
        }
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

    /// Writes a new file that is 0600 from its first byte (created with that mode, not chmod-ed
    /// after being written), replacing a broken one.
    private static func writeOwnerOnly(_ bytes: Data, to path: String) throws {
        unlink(path)
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TaskError(.cannotCreateFile, "cannot create \(path): \(FileSystem.lastError)") }
        defer { Glibc.close(descriptor) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw TaskError(.cannotWriteToFile, "cannot write \(path): \(FileSystem.lastError)")
        }
    }
}
