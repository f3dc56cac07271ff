internal import SQLite

extension Store {
    /// A daemon-wide setting's JSON, nil when never saved (`StoreOperation.saveSetting`).
    package func setting(_ name: String) throws -> String? {
        try reader.run("SELECT value FROM settings WHERE name = ?", name).first?.string(0)
    }
}
