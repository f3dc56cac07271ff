package import FoundationEssentials

/// An HTTP-date (RFC 9110 5.6.7) in any of its three forms, which recipients must all accept:
/// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`,
/// asctime `Sun Nov  6 08:49:37 1994`. Always UTC.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    package static func parse(_ text: String) -> Date? {
        var tokens = text.split { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" }.map { $0.lowercased() }
        if let first = tokens.first, month(first) == nil, first.allSatisfy(\.isLetter) { tokens.removeFirst() }  // weekday
        if tokens.last == "gmt" { tokens.removeLast() }
        guard tokens.count == 6 else { return nil }
        let day, monthIndex, year, hour, minute, second: Int?
        if let asctimeMonth = month(tokens[0]) {
            // asctime: month day hh mm ss year
            (monthIndex, day, hour, minute, second, year) = (asctimeMonth, Int(tokens[1]), Int(tokens[2]), Int(tokens[3]), Int(tokens[4]), Int(tokens[5]))
        } else {
            // IMF-fixdate and RFC 850: day month year hh mm ss
            var parsedYear = Int(tokens[2])
            // RFC 850's two-digit year: RFC 9110 reads one more than 50 years ahead as past.
            if let two = parsedYear, tokens[2].count == 2 { parsedYear = two < 70 ? 2000 + two : 1900 + two }
            (day, monthIndex, year, hour, minute, second) = (Int(tokens[0]), month(tokens[1]), parsedYear, Int(tokens[3]), Int(tokens[4]), Int(tokens[5]))
        }
        guard let day, let monthIndex, let year, let hour, let minute, let second,
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...9999).contains(year) else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func month(_ token: String) -> Int? { months.firstIndex(of: token) }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
