internal import Glibc

/// HTTP's date (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT") to and from seconds since 1970:
/// `-R` gives a saved file the server's Last-Modified, and `-C -` sends the file's time back as
/// If-Range. Glibc's strptime is not visible to Swift here, so the one fixed format is read by hand.
enum HTTPDateText {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        // %a and %b are the C locale's English names: transferctl never calls setlocale.
        strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parse(_ text: String) -> Int? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
              let day = Int(fields[1]), let month = months.firstIndex(of: String(fields[2])), let year = Int(fields[3]) else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), year >= 1970,
              (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(clock[0])
        parts.tm_min = Int32(clock[1])
        parts.tm_sec = Int32(clock[2])
        return Int(timegm(&parts))
    }
}
