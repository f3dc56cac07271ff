import Foundation
import Logging
import Synchronization
@testable import TransferAPI

/// A log sink that keeps the lines it is given, and a logfmt logger that writes to it.
final class CapturedLines: Sendable {
    private let storage = Mutex<[String]>([])

    var sink: LogSink { LogSink { [self] bytes in storage.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } } }

    var all: [String] { storage.withLock { $0 } }

    /// A logger that writes logfmt lines at `level` and above here.
    func logger(level: Logger.Level = .info) -> Logger {
        Logger(label: "transferd") { [self] label in LogfmtLogHandler(label: label, level: level, sink: sink) }
    }

    /// The lines whose message is `message`, as their fields (`key=value`, values unquoted).
    func lines(_ message: String) -> [[String: String]] {
        all.map(Self.fields).filter { $0["msg"] == message }
    }

    /// A logfmt line's fields: `key=value` or `key="quoted value"`.
    static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = Substring(line.trimmingCharacters(in: .newlines))
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { value.append(character == "n" ? "\n" : character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "\"" { break }
                    else { value.append(character) }
                }
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            fields[key] = value
        }
        return fields
    }
}
