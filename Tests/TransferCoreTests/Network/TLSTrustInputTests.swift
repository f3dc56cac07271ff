import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// tlsCABundle and tlsPinnedPublicKeys are checked when the session is created.
@Suite struct TLSTrustInputTests {
    /// A real certificate (a self-signed ECDSA one made with openssl for this test; public).
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBfTCCASOgAwIBAgIUdocY0cSMLoo8UwWAdlWGdCGD7q8wCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJdHJhbnNmZXJkMB4XDTI2MTEyMTEwMDMxOVoXDTM2MTExODEw
        MDMxOVowFDESMBAGA1UEAwwJdHJhbnNmZXJkMFkwEwYHKoZIzj0CAQYIKoZIzj0D
        AQcDQgAEe2bwUHcsvdDFsPcbp8YpmD69Nhn7cxYF6bRkAt8lCTIb6M31qUKC5TKO
        iMkJvZ6oJ/+048w9ESOz8awxMxhcQKNTMFEwHQYDVR0OBBYEFM0mtxPHMn5NqNRl
        g2uCdqJtWZoRMB8GA1UdIwQYMBaAFM0mtxPHMn5NqNRlg2uCdqJtWZoRMA8GA1Ud
        EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIga909DxYClqFQIH7YpI32yEkl
        2W8++nTnbS566xlyEIoCIQDaKYbUULRb+LBeSqqa0TwY1rkEqU7MccoWIYuJPPPU
        Yw==
        -----END CERTIFICATE-----
        """

    private func configuration(_ fields: [String: Any]) throws -> SessionConfiguration {
        try JSONCoding.decoder.decode(SessionConfiguration.self, from: try JSONSerialization.data(withJSONObject: fields))
    }

    private func refusedField(_ fields: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let error = #expect(throws: InputError.self, sourceLocation: sourceLocation) { try configuration(fields) }
        guard case .invalidValue(let field, _) = error else { return nil }
        return field
    }

    @Test func aBundleOfCertificatesIsTaken() throws {
        let bundle = Self.certificate + "\n" + Self.certificate + "\n"
        #expect(try configuration(["tlsCABundle": bundle]).tlsCABundle == bundle)
        #expect(try configuration(["tlsCABundle": Self.certificate.replacingOccurrences(of: "\n", with: "\r\n")]).tlsCABundle != nil)
    }

    @Test(arguments: [
        "not PEM at all",
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
        "",
    ])
    func anythingElseIsRefused(bundle: String) {
        #expect(refusedField(["tlsCABundle": bundle]) == "tlsCABundle")
    }

    @Test func aTruncatedCertificateIsRefused() {
        let lines = Self.certificate.split(separator: "\n")
        let truncated = (lines.prefix(4) + [lines.last!]).joined(separator: "\n")
        #expect(refusedField(["tlsCABundle": truncated]) == "tlsCABundle")
    }

    @Test func pinsAreSHA256OfThirtyTwoBytes() throws {
        let good = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        #expect(try configuration(["tlsPinnedPublicKeys": [good, good]]).tlsPinnedPublicKeys.count == 2)
        #expect(refusedField(["tlsPinnedPublicKeys": [good, "sha1//" + Data(count: 20).base64EncodedString()]]) == "tlsPinnedPublicKeys[1]")
        #expect(refusedField(["tlsPinnedPublicKeys": ["sha256//" + Data(count: 31).base64EncodedString()]]) == "tlsPinnedPublicKeys[0]")
        #expect(refusedField(["tlsPinnedPublicKeys": ["sha256//not base64"]]) == "tlsPinnedPublicKeys[0]")
    }
}
