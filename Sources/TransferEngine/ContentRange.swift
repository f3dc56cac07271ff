/// A Content-Range value (RFC 9110 14.4): `bytes FIRST-LAST/TOTAL`, or `bytes */TOTAL` on a 416.
struct ContentRange: Equatable {
    /// The first byte of the range, 0 for the `*` form.
    let first: Int
    /// The last byte of the range (inclusive), nil for the `*` form.
    let last: Int?
    /// The whole resource's size, nil when the server wrote `*`.
    let total: Int?

    init(first: Int, last: Int? = nil, total: Int?) {
        self.first = first
        self.last = last
        self.total = total
    }

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst("bytes ".count).filter { $0 != " " }
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let range = spec[..<slash], size = spec[spec.index(after: slash)...]
        let total = size == "*" ? nil : Int(size)
        guard size == "*" || total != nil else { return nil }
        if range == "*" {
            self.init(first: 0, total: total)
        } else {
            guard let dash = range.firstIndex(of: "-"), let first = Int(range[..<dash]), let last = Int(range[range.index(after: dash)...]),
                  first >= 0, last >= first, total.map({ last < $0 }) ?? true else { return nil }
            self.init(first: first, last: last, total: total)
        }
    }
}
