internal import Curl
package import TransferModel

/// The session settings that decide how a transfer reaches its server: proxies, TLS and the
/// HTTP versions it may speak. Taken
/// from the session's configuration when the task starts (`TransferJob.adopt(_:)`); applied by
/// `Transfer+Network.swift`.
package struct TransferNetwork: Sendable {
    var proxies: ProxyDictionary?
    package var tlsMinimum: TLSVersion = .TLSv12
    var tlsMaximum: TLSVersion = .TLSv13
    /// PEM certificates that replace the system trust store; nil: the system's.
    var caBundle: String?
    /// "sha256//BASE64" pins; empty: no pinning.
    var pinnedPublicKeys: [String] = []
    /// false: the server's certificate is not verified (the session's
    /// `tlsVerifiesServerCertificate`); pins are still checked.
    var verifiesServerCertificate = true
    var httpVersion: HTTPVersionPreference = .auto
    /// ftp:// upgrades to TLS with AUTH TLS or fails (the session's `ftpRequiresTLS`).
    var ftpRequiresTLS = false

    /// The memberwise initializer, for the layers above.
    package init(
        proxies: ProxyDictionary? = nil,
        tlsMinimum: TLSVersion = .TLSv12,
        tlsMaximum: TLSVersion = .TLSv13,
        caBundle: String? = nil,
        pinnedPublicKeys: [String] = [],
        verifiesServerCertificate: Bool = true,
        httpVersion: HTTPVersionPreference = .auto,
        ftpRequiresTLS: Bool = false
    ) {
        self.proxies = proxies
        self.tlsMinimum = tlsMinimum
        self.tlsMaximum = tlsMaximum
        self.caBundle = caBundle
        self.pinnedPublicKeys = pinnedPublicKeys
        self.verifiesServerCertificate = verifiesServerCertificate
        self.httpVersion = httpVersion
        self.ftpRequiresTLS = ftpRequiresTLS
    }
}

extension TransferNetwork {
    /// The session's TLS versions and trust (CA bundle, pinned keys, whether the certificate is
    /// verified at all) on `handle`: every connection that may speak TLS, transfers (https,
    /// FTPS, each segment of a download) and stream tasks alike.
    func applyTLS(to handle: EasyHandle) throws {
        try handle.set(.tlsVersions(minimum: tlsMinimum.curl, maximum: tlsMaximum.curl))
        // Set either way, so a handle never keeps another setting. Connections stay apart:
        // each session has its own pool, and libcurl reuses a connection or a TLS session only
        // for a handle whose verification settings match the ones it was made with.
        try handle.set(.verifyServerCertificate(verifiesServerCertificate))
        if let caBundle {
            // The bundle replaces the system store: the blob replaces the CA file, and the CA
            // folder (which OpenSSL would still search) is cleared.
            try handle.set(.caBundle(Array(caBundle.utf8)))
            try handle.set(.caPath(nil))
        }
        if !pinnedPublicKeys.isEmpty {
            try handle.set(.pinnedPublicKeys(pinnedPublicKeys.joined(separator: ";")))
        }
    }
}

extension TransferJob {
    /// Takes the session's proxy and TLS settings.
    package mutating func adopt(_ configuration: SessionConfiguration) {
        network = TransferNetwork(
            proxies: configuration.connectionProxyDictionary,
            tlsMinimum: configuration.tlsMinimumSupportedProtocolVersion,
            tlsMaximum: configuration.tlsMaximumSupportedProtocolVersion,
            caBundle: configuration.tlsCABundle,
            pinnedPublicKeys: configuration.tlsPinnedPublicKeys,
            verifiesServerCertificate: configuration.tlsVerifiesServerCertificate,
            httpVersion: configuration.httpVersion,
            ftpRequiresTLS: configuration.ftpRequiresTLS)
        sessionSegments = configuration.maximumSegmentsPerDownload
    }
}

extension HTTPVersionPreference {
    var curl: HTTPVersion {
        switch self {
        case .auto: .http2OverTLS
        case .http1_1: .http1_1
        case .h2: .http2
        case .h2PriorKnowledge: .http2PriorKnowledge
        }
    }
}

extension TLSVersion {
    var curl: TLSProtocolVersion {
        switch self {
        case .TLSv10: .tls1_0
        case .TLSv11: .tls1_1
        case .TLSv12: .tls1_2
        case .TLSv13: .tls1_3
        }
    }
}

/// Where a transfer stands with its proxy: the route of the current request of its redirect
/// chain, and whether the proxy already challenged the credentials curl then sent.
struct ProxyState {
    var route: ProxyRoute?
    var challenged = false
}
