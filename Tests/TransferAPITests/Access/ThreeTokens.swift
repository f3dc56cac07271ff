import TransferAPI

/// The tokens of the role and quota tests: an admin and two tenants (one named with its role,
/// one left to the default).
enum ThreeTokens {
    static let admin = "ops-secret-0123456789"
    static let alice = "alice-secret-0123456789"
    static let bob = "bob-secret-0123456789"

    static func configure(_ configuration: inout DaemonConfiguration) {
        configuration.tokens = ["ops:\(admin):admin", "alice:\(alice)", "bob:\(bob):tenant"]
    }
}
