internal import FoundationEssentials

/// Checks a session's own trust settings when the session is created, so a bad value is a 422
/// naming the field rather than a failed handshake later: `tlsCABundle` and `tlsPinnedPublicKeys`.
enum TLSTrustInput {
    /// The largest CA bundle accepted (Debian's whole system bundle is about 220 KB).
    static let maxBundleBytes = 1 << 20
    static let maxPins = 32

    /// PEM text holding one or more CERTIFICATE blocks, each base64 of a DER X.509 certificate in
    /// shape (SEQUENCE of tbsCertificate, algorithm, signature), and no other PEM block (a
    /// private key does not belong in a trust store). OpenSSL parses them fully at the
    /// handshake; this catches what is plainly not a certificate while the client is listening.
    static func checkCABundle(_ pem: String, field: String) throws {
        guard pem.utf8.count <= maxBundleBytes else {
            throw InputError.invalidValue(field: field, message: "must be at most \(maxBundleBytes) bytes of PEM")
        }
        let blocks = pemBlocks(pem)
        guard !blocks.isEmpty else {
            throw InputError.invalidValue(field: field, message: "must be PEM text with at least one -----BEGIN CERTIFICATE----- block")
        }
        for (index, block) in blocks.enumerated() {
            guard block.label == "CERTIFICATE" else {
                throw InputError.invalidValue(field: field, message: "block \(index + 1) is a \(block.label), not a CERTIFICATE")
            }
            guard let der = Data(base64Encoded: block.base64), DERShape.isCertificate(Array(der)) else {
                throw InputError.invalidValue(field: field, message: "block \(index + 1) is not a DER X.509 certificate in base64")
            }
        }
    }

    /// Each pin is "sha256//" and the base64 of a 32-byte SHA-256 of the server's
    /// SubjectPublicKeyInfo (DER), as CURLOPT_PINNEDPUBLICKEY and HPKP write it.
    static func checkPins(_ pins: [String], field: String) throws {
        guard pins.count <= maxPins else {
            throw InputError.invalidValue(field: field, message: "must hold at most \(maxPins) pins")
        }
        for (index, pin) in pins.enumerated() {
            guard pin.hasPrefix("sha256//"), let digest = Data(base64Encoded: String(pin.dropFirst(8))), digest.count == 32 else {
                throw InputError.invalidValue(field: "\(field)[\(index)]", message: "must be sha256// followed by the base64 SHA-256 (32 bytes) of the server's SubjectPublicKeyInfo")
            }
        }
    }

    /// The "-----BEGIN LABEL-----" ... "-----END LABEL-----" blocks of `text`, in order, with
    /// the base64 between the two lines (RFC 7468).
    private static func pemBlocks(_ text: String) -> [(label: String, base64: String)] {
        var blocks: [(label: String, base64: String)] = []
        var open: (label: String, base64: String)?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmed()
            if trimmed.hasPrefix("-----BEGIN "), trimmed.hasSuffix("-----") {
                open = (String(trimmed.dropFirst(11).dropLast(5)), "")
            } else if let current = open {
                if trimmed == "-----END \(current.label)-----" {
                    blocks.append(current)
                    open = nil
                } else {
                    open?.base64 += trimmed
                }
            }
        }
        return blocks
    }
}
