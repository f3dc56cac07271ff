internal import FoundationEssentials

/// The body of `PUT /v1/sessions/{sid}/credentials`: one credential and its protection space.
/// Checked field by field; no message ever repeats a value (the password must not leak into an
/// error, and neither should anything else a client sent beside it).
public struct CredentialPut: Decodable, Sendable {
    package var credential: Credential

    enum CodingKeys: String, CodingKey, CaseIterable { case protectionSpace, user, password, persistence }
    enum SpaceKeys: String, CodingKey, CaseIterable { case host, port, `protocol`, realm, authenticationMethod }

    /// Longest user, password and realm accepted, in bytes.
    static let maxLength = 1024

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let spaceDecoder = try c.superDecoder(forKey: .protectionSpace)
        try spaceDecoder.rejectUnknownKeys(SpaceKeys.self)
        let s = try spaceDecoder.container(keyedBy: SpaceKeys.self)
        let spacePath = { (key: SpaceKeys) in spaceDecoder.path(key) }

        let host = try s.decode(String.self, forKey: .host)
        guard Self.isHost(host) else {
            throw InputError.invalidValue(field: spacePath(.host), message: "must be a host name or an IP address (no scheme, port or path)")
        }
        let scheme = try s.decode(String.self, forKey: .protocol)
        guard let proto = ProtectionSpaceProtocol(rawValue: scheme) else {
            throw InputError.invalidValue(field: spacePath(.protocol), message: "must be one of http, https, ftp, ftps, sftp")
        }
        var port = proto.defaultPort
        if let number = try s.decodeOmittable(Double.self, forKey: .port) {
            guard number.rounded() == number, (1...65_535).contains(number) else {
                throw InputError.invalidValue(field: spacePath(.port), message: "must be an integer from 1 to 65535")
            }
            port = Int(number)
        }
        let realm = try s.decodeIfPresent(String.self, forKey: .realm)
        if let realm { try Self.check(realm, spacePath(.realm)) }
        var method = AuthenticationMethod.default
        if let name = try s.decodeOmittable(String.self, forKey: .authenticationMethod) {
            guard let value = AuthenticationMethod(rawValue: name), value != .serverTrust else {
                throw InputError.invalidValue(field: spacePath(.authenticationMethod), message: "must be one of default, HTTPBasic, HTTPDigest")
            }
            method = value
        }

        let user = try c.decode(String.self, forKey: .user)
        try Self.check(user, decoder.path(CodingKeys.user))
        // RFC 7617: Basic joins user and password with the first colon.
        guard !user.isEmpty, !user.contains(":") else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.user), message: "must not be empty or contain a colon")
        }
        let password = try c.decode(String.self, forKey: .password)
        try Self.check(password, decoder.path(CodingKeys.password))
        var persistence = CredentialPersistence.forSession
        if let name = try c.decodeOmittable(String.self, forKey: .persistence) {
            guard let value = CredentialPersistence(rawValue: name) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.persistence), message: "must be one of none, forSession, permanent")
            }
            persistence = value
        }
        credential = Credential(
            space: ProtectionSpace(host: host, port: port, protocol: proto, realm: realm, authenticationMethod: method),
            user: user, password: password, persistence: persistence)
    }

    /// A text libcurl and the header can carry: bounded, and no control characters (a NUL would
    /// cut the C string, CR and LF would split a header).
    static func check(_ text: String, _ field: String) throws {
        guard text.utf8.count <= maxLength else {
            throw InputError.invalidValue(field: field, message: "must be at most \(maxLength) bytes")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw InputError.invalidValue(field: field, message: "must not contain control characters")
        }
    }

    /// A DNS name or an IPv4/IPv6 address (brackets allowed around IPv6).
    public static func isHost(_ text: String) -> Bool {
        var host = Substring(text)
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        return host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            default: return byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "_")
            }
        }
    }
}
