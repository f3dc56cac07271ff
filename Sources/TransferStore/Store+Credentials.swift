package import FoundationEssentials
internal import SQLite
package import TransferModel

/// The `credentials` table (migration 6): the permanent credentials of the shared store, each
/// password sealed by `CredentialVault`. Written at once, not through the queued writer: a PUT
/// answered 200 is committed. The connection's lock orders these with the writer's transactions.
extension Store {
    /// One row: the owner's key ("" without tokens), the space, the user and the sealed password.
    package struct CredentialRow: Sendable {
        package let ownerKey: String
        package let space: ProtectionSpace
        package let user: String
        package let sealedPassword: Data

        /// The memberwise initializer, for the layers above.
        package init(ownerKey: String, space: ProtectionSpace, user: String, sealedPassword: Data) {
            self.ownerKey = ownerKey
            self.space = space
            self.user = user
            self.sealedPassword = sealedPassword
        }
    }

    package func loadCredentialRows() throws -> [CredentialRow] {
        try reader.run("SELECT \(StoredRows.credentialColumns) FROM credentials ORDER BY rowid").compactMap(StoredRows.credential)
    }

    /// Replaces the row of the same owner, space and user (`IS` compares a null realm too).
    package func replaceCredential(_ row: CredentialRow) throws {
        try writeNow {
            try database.transaction { tx in
                try Self.deleteCredential(owner: row.ownerKey, space: row.space, user: row.user, tx)
                try tx.run("""
                    INSERT INTO credentials(owner, host, port, protocol, realm, authentication_method, user_name, password)
                    VALUES(?, ?, ?, ?, ?, ?, ?, ?)
                    """, row.ownerKey, row.space.host, row.space.port, row.space.protocol.rawValue, row.space.realm,
                    row.space.authenticationMethod.rawValue, row.user, row.sealedPassword)
            }
        }
    }

    package func deleteCredentials(owner: String, _ ids: [Credential.ID]) throws {
        guard !ids.isEmpty else { return }
        try writeNow {
            try database.transaction { tx in
                for id in ids { try Self.deleteCredential(owner: owner, space: id.space, user: id.user, tx) }
            }
        }
    }

    private static func deleteCredential(owner: String, space: ProtectionSpace, user: String, _ tx: Database.Transaction) throws {
        try tx.run("""
            DELETE FROM credentials WHERE owner = ? AND host = ? AND port = ? AND protocol = ? AND realm IS ?
            AND authentication_method = ? AND user_name = ?
            """, owner, space.host, space.port, space.protocol.rawValue, space.realm, space.authenticationMethod.rawValue, user)
    }
}
