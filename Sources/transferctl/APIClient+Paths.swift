/// The API's paths and queries, with every value percent-encoded.
extension APIClient {
    static func path(_ segments: String...) -> String {
        "/" + segments.map(percentEncoded).joined(separator: "/")
    }

    /// "?name=value&..." for the pairs whose value is not nil; "" when none.
    static func query(_ pairs: [(String, String?)]) -> String {
        let present = pairs.compactMap { name, value in value.map { "\(name)=\(percentEncoded($0))" } }
        return present.isEmpty ? "" : "?" + present.joined(separator: "&")
    }

    /// RFC 3986 unreserved characters stay; every other byte is %XX.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return result
    }
}
