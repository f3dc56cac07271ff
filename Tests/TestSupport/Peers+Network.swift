public import Foundation

/// The proxies and TLS origins `scripts/lib/network-peers.sh` starts (tinyproxy, microsocks,
/// nginx over TLS with certificates made for the run). Missing ones fail loudly, as every peer.
extension Peers {
    /// tinyproxy, an HTTP proxy that also tunnels with CONNECT. `TRANSFERD_TEST_HTTP_PROXY`.
    public static func httpProxy() throws -> ProxyPeer { try proxy("tinyproxy", "TRANSFERD_TEST_HTTP_PROXY") }
    /// tinyproxy with BasicAuth (``proxyCredentials()``). `TRANSFERD_TEST_AUTH_HTTP_PROXY`.
    public static func authenticatingHTTPProxy() throws -> ProxyPeer { try proxy("tinyproxy-auth", "TRANSFERD_TEST_AUTH_HTTP_PROXY") }
    /// microsocks, a SOCKS5 server. `TRANSFERD_TEST_SOCKS_PROXY`.
    public static func socksProxy() throws -> ProxyPeer { try proxy("microsocks", "TRANSFERD_TEST_SOCKS_PROXY") }
    /// microsocks requiring ``proxyCredentials()`` (RFC 1929). `TRANSFERD_TEST_AUTH_SOCKS_PROXY`.
    public static func authenticatingSOCKSProxy() throws -> ProxyPeer { try proxy("microsocks-auth", "TRANSFERD_TEST_AUTH_SOCKS_PROXY") }

    /// The username and password both authenticating proxies accept (made per run).
    public static func proxyCredentials() throws -> (username: String, password: String) {
        (try value(of: "proxy credentials", variable: "TRANSFERD_TEST_PROXY_USERNAME"),
         try value(of: "proxy credentials", variable: "TRANSFERD_TEST_PROXY_PASSWORD"))
    }

    /// The nginx TLS servers, e.g. `https://127.0.0.1:PORT`, each serving `/files/` as
    /// ``nginx()`` does.
    public enum TLSOrigin: String, Sendable {
        /// A certificate for 127.0.0.1 and localhost from the test CA.
        case valid = "TRANSFERD_TEST_TLS_VALID"
        /// The same names and CA, expired yesterday.
        case expired = "TRANSFERD_TEST_TLS_EXPIRED"
        /// The same names, from a second CA that nothing trusts.
        case untrusted = "TRANSFERD_TEST_TLS_UNTRUSTED"
        /// The valid certificate, TLS 1.2 only.
        case tls12Only = "TRANSFERD_TEST_TLS_TLS12"
        /// The valid certificate, offering h2 and http/1.1 by ALPN; `/slow/` too (256 KiB/s
        /// per request, as ``nginx()``). The others offer http/1.1 only.
        case http2 = "TRANSFERD_TEST_H2"
    }

    public static func tls(_ origin: TLSOrigin) throws -> String { try baseURL(of: "nginx-tls", variable: origin.rawValue) }

    /// The same nginx speaking h2 over cleartext with prior knowledge only (no Upgrade), e.g.
    /// `http://127.0.0.1:PORT`, serving `/files/`. `TRANSFERD_TEST_H2C`.
    public static func h2c() throws -> String { try baseURL(of: "nginx-tls", variable: "TRANSFERD_TEST_H2C") }

    /// The folder where the valid and the h2 TLS servers store what is PUT to `/uploads/NAME`.
    /// `TRANSFERD_TEST_TLS_UPLOADS`.
    public static func tlsUploadsFolder() throws -> String { try value(of: "nginx-tls", variable: "TRANSFERD_TEST_TLS_UPLOADS") }

    /// The test CA's certificate (PEM): a session's `tlsCABundle`. `TRANSFERD_TEST_TLS_CA`.
    public static func tlsCertificateAuthorityPEM() throws -> String {
        try String(contentsOfFile: try value(of: "nginx-tls", variable: "TRANSFERD_TEST_TLS_CA"), encoding: .utf8)
    }

    /// The CA of the untrusted server (PEM). `TRANSFERD_TEST_TLS_OTHER_CA`.
    public static func tlsOtherCertificateAuthorityPEM() throws -> String {
        try String(contentsOfFile: try value(of: "nginx-tls", variable: "TRANSFERD_TEST_TLS_OTHER_CA"), encoding: .utf8)
    }

    /// The valid server's pin: `sha256//` and the base64 SHA-256 of its leaf's
    /// SubjectPublicKeyInfo (DER), made by openssl from the leaf. `TRANSFERD_TEST_TLS_PIN`.
    public static func tlsValidServerPin() throws -> String { try value(of: "nginx-tls", variable: "TRANSFERD_TEST_TLS_PIN") }

    private static func proxy(_ name: String, _ variable: String) throws -> ProxyPeer {
        let address = try value(of: name, variable: variable)
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
            throw PeerUnavailable(peer: name, variable: variable)
        }
        return ProxyPeer(host: String(address[..<colon]), port: port, log: ProxyLog(path: try value(of: name, variable: variable + "_LOG")))
    }
}

/// A proxy peer: where it listens and the log where it names every connection's target.
public struct ProxyPeer: Sendable {
    public let host: String
    public let port: Int
    public let log: ProxyLog
}

/// A proxy's own log file, read from a mark on: the file is shared by every test of the run
/// (and appended across runs), so a test looks only at what was written after its mark.
public struct ProxyLog: Sendable {
    public let path: String

    /// The log's current end: lines after it are the caller's.
    public func mark() -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.uint64Value ?? 0
    }

    /// The lines written since `mark`.
    public func lines(since mark: UInt64) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        try? handle.seek(toOffset: mark)
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Waits (up to `timeout`) for a line containing `text` after `mark`; the proxy writes its
    /// log line as it connects, a moment before or after the transfer ends.
    public func waitForLine(containing text: String, since mark: UInt64, timeout: Double = 5) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let line = lines(since: mark).first(where: { $0.contains(text) }) { return line }
            if Date() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}
