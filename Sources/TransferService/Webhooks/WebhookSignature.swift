public import FoundationEssentials
internal import LibCrypto
internal import TransferModel

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
        return hexString(HMACSHA256.code(for: message, key: Data(secret.utf8)))
    }
}
