internal import SQLite

extension Store {
    /// Every stored webhook secret, by session id.
    package func loadWebhookSecrets() throws -> [String: String] {
        var secrets: [String: String] = [:]
        for row in try reader.run("SELECT session_id, secret FROM webhook_secrets") {
            if let id = row.string(0), let secret = row.string(1) { secrets[id] = secret }
        }
        return secrets
    }
}
