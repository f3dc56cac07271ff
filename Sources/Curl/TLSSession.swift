/// What a connection's TLS handshake settled on, read from OpenSSL's session of the transfer
/// (`EasyHandle.tlsSession`).
public struct TLSSession: Sendable, Equatable {
    /// The protocol version as TLS numbers it on the wire: 0x0303 is TLS 1.2, 0x0304 TLS 1.3.
    public var protocolVersion: Int
    /// The cipher suite's IANA number, e.g. 0x1301 for TLS_AES_128_GCM_SHA256; nil when unknown.
    public var cipherSuite: Int?
}
