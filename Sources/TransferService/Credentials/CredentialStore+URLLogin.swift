internal import FoundationEssentials
internal import TransferModel

/// A task's URL login (`URLLogin`) in its stored row: sealed by the credential vault, bound to
/// the task and its owner, so the row (and a copy of the database) shows no password and the
/// sealed value opens for no other task. It never enters the credential store's tables.
extension CredentialStore {
    func sealLogin(_ login: URLLogin, task id: Int, owner: String?) -> String? {
        guard let json = try? JSONCoding.encoder.encode(login),
              let sealed = try? vault.seal(String(decoding: json, as: UTF8.self), boundTo: Self.loginContext(task: id, owner: owner)) else { return nil }
        return sealed.base64EncodedString()
    }

    /// The login sealed in `task`'s row; nil when it has none or it cannot be opened (the key
    /// was replaced: the task then runs without it, as curl without a user).
    func openLogin(of task: TransferTask) -> URLLogin? {
        guard let text = task.sealedLogin, let sealed = Data(base64Encoded: text),
              let json = vault.open(sealed, boundTo: Self.loginContext(task: task.id, owner: task.owner)) else { return nil }
        return try? JSONCoding.decoder.decode(URLLogin.self, from: Data(json.utf8))
    }

    private static func loginContext(task id: Int, owner: String?) -> Data {
        Data("url-login\u{0}\(id)\u{0}\(owner ?? "")".utf8)
    }
}
