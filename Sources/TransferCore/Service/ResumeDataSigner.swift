internal import Crypto
internal import FoundationEssentials
internal import Glibc

/// Seals and opens resume data: base64url(JSON) "." base64url(HMAC-SHA256). The key is 32
/// random bytes in `<data>/resume-data.key` (0600), made on first use, so resume data stays
/// valid across restarts of the same daemon and is useless to any other.
struct ResumeDataSigner: Sendable {
    /// The key's bytes (SymmetricKey is not Sendable in this swift-crypto; it is rebuilt per use).
    private let keyBytes: Data
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    init(dataDirectory: String) throws {
        let path = dataDirectory + "/resume-data.key"
        if let existing = FileManager.default.contents(atPath: path), existing.count == 32 {
            keyBytes = existing
        } else {
            let fresh = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            guard FileManager.default.createFile(atPath: path, contents: fresh, attributes: [.posixPermissions: 0o600]) else {
                throw TaskError(.cannotCreateFile, "cannot write \(path)")
            }
            keyBytes = fresh
        }
    }

    func seal(_ resume: ResumeData) -> String? {
        guard let payload = try? JSONCoding.encoder.encode(resume) else { return nil }
        let signature = Data(HMAC<SHA256>.authenticationCode(for: payload, using: key))
        return Self.base64url(payload) + "." + Self.base64url(signature)
    }

    /// The resume data inside `text`, or `InputError.refused` (400 invalid_resume_data).
    func open(_ text: String, field: String) throws -> ResumeData {
        func refuse(_ message: String) -> InputError {
            InputError.refused(field: field, code: "invalid_resume_data", message: "\(field) \(message)")
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 65_536, parts.count == 2,
              let payload = Self.data(base64url: parts[0]), let signature = Self.data(base64url: parts[1]) else {
            throw refuse("is not resume data made by this daemon")
        }
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key) else {
            throw refuse("was altered or made by another daemon (its signature does not match)")
        }
        guard let resume = try? JSONCoding.decoder.decode(ResumeData.self, from: payload), resume.version == 1 else {
            throw refuse("has a format this daemon does not read")
        }
        // Signed by us, so this is belt and braces: the file must be a plain name in partial/.
        let name = resume.partialFile.dropFirst("partial/".count)
        guard resume.partialFile.hasPrefix("partial/"), !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
            throw refuse("points outside the data folder")
        }
        return resume
    }

    static func base64url(_ data: Data) -> String {
        String(data.base64EncodedString().map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" })
    }

    static func data(base64url text: Substring) -> Data? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
