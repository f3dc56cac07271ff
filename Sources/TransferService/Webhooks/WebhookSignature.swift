public import FoundationEssentials
internal import Crypto

/// The signature of a webhook delivery: HMAC-SHA256 with the session's secret over
/// `TIMESTAMP "." BODY` (TIMESTAMP in Unix seconds, as sent), sent as
/// `X-Transferd-Signature: t=TIMESTAMP,v1=HEX`. Signing the timestamp lets a receiver refuse
/// replays older than it tolerates.
public enum WebhookSignature {
    public static let header = "X-Transferd-Signature"

    /// The header value for `body` sent at `timestamp`.
    public static func value(body: Data, secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=\(hex(body: body, secret: secret, timestamp: timestamp))"
    }

    /// The lowercase hex HMAC a receiver computes to compare with `v1`.
    public static func hex(body: Data, secret: String, timestamp: Int) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]], as: UTF8.self)
        }.joined()
    }
}
