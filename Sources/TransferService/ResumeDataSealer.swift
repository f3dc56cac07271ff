internal import LibCrypto
internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// Seals and opens resume data: "v2." + base64url(ChaCha20-Poly1305 sealed box of its JSON).
/// The key is 32 random bytes in `<data>/resume-data.key` (0600), made on first use, so resume
/// data stays valid across restarts of the same daemon and is useless to any other.
///
/// Partitioned per tenant: the owner (a token's fingerprint; "" without tokens) is the sealed
/// box's authenticated data, so another tenant's resume data fails to open exactly as forged
/// data does. Encrypted, because it holds the request: its URL and headers, `Authorization`
/// included, which the client that got it back must not be able to read out or change.
struct ResumeDataSealer: Sendable {
    private let key: Data
    private static let prefix = "v2."

    init(dataDirectory: String) throws {
        key = try KeyFile.load(dataDirectory + "/resume-data.key")
    }

    /// Resume data for `owner`'s eyes only.
    func seal(_ resume: ResumeData, owner: String?) -> String? {
        guard let payload = try? JSONCoding.encoder.encode(resume),
              let box = try? ChaChaPoly.seal(payload, key: key, authenticating: Self.tenant(owner)) else { return nil }
        return Self.prefix + Self.base64url(box)
    }

    /// The resume data inside `text`, sealed for `owner`, or `InputError.refused` (400
    /// invalid_resume_data). Another tenant's gets the same answer as forged data.
    func open(_ text: String, owner: String?, field: String) throws -> ResumeData {
        func refuse(_ message: String) -> InputError {
            InputError.refused(field: field, code: "invalid_resume_data", message: "\(field) \(message)")
        }
        guard text.utf8.count <= 65_536, text.hasPrefix(Self.prefix),
              let combined = Self.data(base64url: text.dropFirst(Self.prefix.count)) else {
            throw refuse("is not resume data made by this daemon (or by a version before resume data was sealed)")
        }
        guard let payload = try? ChaChaPoly.open(combined, key: key, authenticating: Self.tenant(owner)) else {
            throw refuse("was altered, or made by another daemon or for another token")
        }
        guard let resume = try? JSONCoding.decoder.decode(ResumeData.self, from: payload), resume.version == 1 else {
            throw refuse("has a format this daemon does not read")
        }
        // Sealed by us, so this is belt and braces: the file must be a plain name in partial/.
        let name = resume.partialFile.dropFirst("partial/".count)
        guard resume.partialFile.hasPrefix("partial/"), !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
            throw refuse("points outside the data folder")
        }
        return resume
    }

    private static func tenant(_ owner: String?) -> Data { Data((owner ?? "").utf8) }

    static func base64url(_ data: Data) -> String {
        String(data.base64EncodedString().map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" })
    }

    static func data(base64url text: Substring) -> Data? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
