internal import LibCrypto
internal import FoundationEssentials
internal import TransferModel

/// Short-lived links to one finished download's file (`POST /v1/tasks/{tid}/file-grant`), for a
/// browser that cannot put a bearer token on a link (the dashboard's "Open file"): the grant is
/// "EXPIRY.OWNER.MAC", MAC = HMAC-SHA256 over (task, owner, expiry) with 32 random bytes kept in
/// `<data>/file-grant.key` (0600; shared by a cluster's nodes through the shared data folder).
///
/// Partitioned per tenant: the owner (a token's fingerprint, "-" without tokens) is inside the
/// MAC, so a grant opens only its own task's file for its own tenant, and only while that token
/// is still configured (the API layer maps the owner back to a live token). Nothing is stored:
/// a grant is valid until its expiry, at most `lifetime` after it was made.
public struct FileGrants: Sendable {
    public static let lifetime = 300
    private let keyBytes: Data

    init(dataDirectory: String) throws {
        keyBytes = try KeyFile.load(dataDirectory + "/file-grant.key")
    }

    /// A grant for `task`'s file, valid until `expiry` (seconds since 1970).
    func make(task: Int, owner: String?, expiry: Int) -> String {
        "\(expiry).\(owner ?? "-").\(mac(task: task, owner: owner, expiry: expiry))"
    }

    /// The owner `grant` was made for, if it is this daemon's, for `task`, and not expired at
    /// `now`: `.some(nil)` for a daemon without tokens; nil when it is not valid.
    public func owner(of grant: String, task: Int, now: Int) -> String?? {
        let parts = grant.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiry = Int(parts[0]), expiry >= now, expiry <= now + Self.lifetime + 60 else { return nil }
        let owner: String? = parts[1] == "-" ? nil : String(parts[1])
        guard let code = ResumeDataSealer.data(base64url: parts[2]),
              // Compared in constant time.
              HMACSHA256.isValid(code, for: message(task: task, owner: owner, expiry: expiry), key: keyBytes) else { return nil }
        return .some(owner)
    }

    private func message(task: Int, owner: String?, expiry: Int) -> Data {
        Data("transferd-file-grant\u{0}\(task)\u{0}\(owner ?? "-")\u{0}\(expiry)".utf8)
    }

    private func mac(task: Int, owner: String?, expiry: Int) -> String {
        let code = HMACSHA256.code(for: message(task: task, owner: owner, expiry: expiry), key: keyBytes)
        return ResumeDataSealer.base64url(Data(code))
    }
}

extension TransferService {
    /// POST /v1/tasks/{tid}/file-grant: only for a file that `GET .../file` would serve now.
    /// The link and its expiry in seconds since 1970.
    public func fileGrant(task id: Int, owner: String?) throws -> (url: String, expiry: Int) {
        _ = try downloadedFile(task: id, owner: owner)
        let expiry = Int(Date().timeIntervalSince1970) + FileGrants.lifetime
        return ("/v1/tasks/\(id)/file?grant=\(fileGrants.make(task: id, owner: owner, expiry: expiry))", expiry)
    }
}
