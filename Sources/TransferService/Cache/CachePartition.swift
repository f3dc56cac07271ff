internal import LibCrypto
internal import FoundationEssentials
internal import TransferModel

/// The part of a URL cache one task reads and writes. Two things split a cache:
/// - the tenant (a token's owner): one tenant's lookup never finds another's entries, and with
///   tokens a part is a shared cache in RFC 9111's sense (`CacheFreshness.isStorable`);
/// - the session's TLS trust (its CA bundle, pinned keys, protocol bounds and whether it verifies
///   the server's certificate at all): a response is served only to sessions that would have
///   accepted the connection it came over, so a session with a pin or its own CA never gets a
///   body another session fetched past a check it would have failed (issue 16, item 6), nor a
///   verifying session one fetched with `tlsVerifiesServerCertificate` false. Sessions with the
///   default trust share one part.
/// Without tokens and with the default trust the key is the URL alone, as before partitions.
struct CachePartition: Sendable, Equatable {
    /// The token's owner; nil without tokens.
    let tenant: String?
    /// A digest of the session's non-default trust settings; nil for the default trust.
    let trust: String?

    init(tenant: String?, trust: String? = nil) {
        self.tenant = tenant
        self.trust = trust
    }

    init(tenant: String?, configuration: SessionConfiguration) {
        self.init(tenant: tenant, trust: Self.trustDigest(configuration))
    }

    /// Whether the part belongs to a daemon with tokens (its responses are shared by a token's clients).
    var isShared: Bool { tenant != nil }

    /// The stored response's key for `url` in this part. A URL holds no space
    /// (`RequestURL.check`), so the suffixes cannot be forged by a URL.
    func key(_ url: String) -> String {
        var key = "GET " + url
        if let tenant { key += " " + tenant }
        if let trust { key += " trust=" + trust }
        return key
    }

    /// Whether `key` is one of `tenant`'s, whatever its trust (a tenant's cache purge), and
    /// when `url` is given, one for that URL.
    static func key(_ key: String, belongsTo tenant: String?, url: String? = nil) -> Bool {
        let fields = key.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 2, url.map({ fields[1] == $0 }) ?? true else { return false }
        let owner = fields.count >= 3 && !fields[2].hasPrefix("trust=") ? String(fields[2]) : nil
        return owner == tenant
    }

    /// The trust settings that decide whether a TLS connection is accepted, as one digest;
    /// nil when they are all the defaults.
    static func trustDigest(_ configuration: SessionConfiguration) -> String? {
        let defaults = SessionConfiguration()
        guard configuration.tlsCABundle != nil || !configuration.tlsPinnedPublicKeys.isEmpty
            || !configuration.tlsVerifiesServerCertificate
            || configuration.tlsMinimumSupportedProtocolVersion != defaults.tlsMinimumSupportedProtocolVersion
            || configuration.tlsMaximumSupportedProtocolVersion != defaults.tlsMaximumSupportedProtocolVersion else { return nil }
        var fields = [configuration.tlsCABundle ?? "", configuration.tlsPinnedPublicKeys.sorted().joined(separator: ","),
                      "\(configuration.tlsMinimumSupportedProtocolVersion.rawValue)", "\(configuration.tlsMaximumSupportedProtocolVersion.rawValue)"]
        // Only when off, so the parts of verifying sessions keep the keys they had before.
        if !configuration.tlsVerifiesServerCertificate { fields.append("unverified") }
        return hexString(HashFunction.sha256.hash(Data(fields.joined(separator: "\n").utf8)).prefix(12))
    }
}
