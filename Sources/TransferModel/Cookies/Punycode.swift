/// Punycode (RFC 3492) encoding of domain labels, for the internationalised rules of the public
/// suffix list: the list spells them in Unicode ("香港"), request hosts arrive as ASCII
/// ("xn--j6w193g").
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700

    /// A domain with each non-ASCII label in its "xn--" form.
    static func asciiDomain(_ domain: String) -> String {
        domain.split(separator: ".", omittingEmptySubsequences: false).map { label in
            label.unicodeScalars.allSatisfy(\.isASCII) ? String(label) : "xn--" + encode(Array(label.unicodeScalars.map(\.value)))
        }.joined(separator: ".")
    }

    /// RFC 3492 6.3, the encoding procedure.
    static func encode(_ input: [UInt32]) -> String {
        var output = input.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basicCount = output.count
        if basicCount > 0 { output.append("-") }
        var n: UInt32 = 0x80, delta = 0, bias = 72, handled = basicCount
        while handled < input.count {
            guard let next = input.filter({ $0 >= n }).min() else { break }
            delta += Int(next - n) * (handled + 1)
            n = next
            for scalar in input {
                if scalar < n { delta += 1 }
                guard scalar == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func digit(_ value: Int) -> Character {
        Character(Unicode.Scalar(UInt8(value < 26 ? 97 + value : 22 + value)))
    }

    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
