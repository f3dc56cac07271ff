/// Not URLSession's (which always offers h2 by ALPN): which HTTP versions a session's requests
/// may speak, the session configuration's `httpVersion`. Turned into libcurl's setting by
/// `Transfer+Network.swift`.
public enum HTTPVersionPreference: String, Codable, Sendable, CaseIterable {
    /// As URLSession: h2 when the TLS handshake agrees on it (ALPN), HTTP/1.1 otherwise and
    /// over plain http.
    case auto
    /// HTTP/1.1 only, also with servers that offer h2.
    case http1_1 = "http1.1"
    /// As `auto`, and plain http requests ask the server to upgrade to h2c (Upgrade: h2c).
    case h2
    /// h2 from the first byte, without ALPN or Upgrade, also over plain http (h2c with prior
    /// knowledge, RFC 9113 3.3). A server that does not speak h2 fails the task.
    case h2PriorKnowledge = "h2-prior-knowledge"
}
