import Foundation

/// A small reader of Prometheus' text format for the tests: every sample line as
/// (name, labels, value), and the # TYPE of every family. Fails on a line it cannot read, so a
/// malformed exposition fails the test that reads it.
struct PrometheusText {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]

    struct Malformed: Error, CustomStringConvertible {
        let line: String
        var description: String { "not a Prometheus text line: \(line)" }
    }

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw Malformed(line: String(line)) }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(line))
        }
    }

    private static func sample(_ line: Substring) throws -> Sample {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...].replacingOccurrences(of: "+Inf", with: "inf")) else {
            throw Malformed(line: String(line))
        }
        let series = line[..<space]
        guard let open = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
        guard series.last == "}" else { throw Malformed(line: String(line)) }
        var labels: [String: String] = [:]
        var rest = series[series.index(after: open)..<series.index(before: series.endIndex)]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else { throw Malformed(line: String(line)) }
            let key = String(rest[..<equals])
            var index = rest.index(equals, offsetBy: 2)
            var value = ""
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\" { index = rest.index(after: index) }
                value.append(rest[index])
                index = rest.index(after: index)
            }
            guard index < rest.endIndex else { throw Malformed(line: String(line)) }
            labels[key] = value
            rest = rest[rest.index(after: index)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return Sample(name: String(series[..<open]), labels: labels, value: value)
    }

    /// The sum of the samples named `name` whose labels include `labels`; nil if there is none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matching = samples.filter { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }
        return matching.isEmpty ? nil : matching.reduce(0) { $0 + $1.value }
    }
}
