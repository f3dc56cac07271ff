/// One file `get` downloads: a URL (with mirrors of the same resource), where it goes, and its
/// own request options. From the command line (each URL takes the command's options) or from an
/// `-i` list (`URLList`), where options may be set per URL.
struct DownloadItem: Equatable {
    var url: String
    var mirrors: [String] = []
    /// The local file; nil: the suggested filename in the current folder.
    var output: String?
    var headers: [HeaderArgument] = []
    var checksum: String?
    var segments: Int?
    var rate: Int64?
    /// Where it came from, for messages: "URL 2" or "FILE:7".
    var origin: String = ""
}

/// aria2's input file format, as `get -i FILE` reads it: one download a line (URLs separated by
/// tabs are mirrors of one resource), blank lines and `#` comments left out, and lines starting
/// with white space setting options of the download above them as `name=value`:
/// `out` (file name), `dir` (folder), `header` (repeatable), `checksum` (`sha-256=HEX`), `split`
/// (connections, as aria2 names them; `max-connection-per-server` is taken the same way),
/// `user-agent`, `referer`, `max-download-limit` (bytes per second, K/M/G).
enum URLList {
    static let options = ["out", "dir", "header", "checksum", "split", "max-connection-per-server", "user-agent", "referer", "max-download-limit"]

    static func parse(_ text: String, name: String) throws -> [DownloadItem] {
        var items: [DownloadItem] = []
        var folders: [String?] = []
        func fail(_ line: Int, _ message: String) -> CLIFailure {
            CLIFailure(.usage, "\(name):\(line): \(message)")
        }
        // "\r\n" is one Character in Swift: a list saved with Windows line ends splits on it too.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            let trimmed = line.trimmingSpaces
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard line.first == " " || line.first == "\t" else {
                let urls = line.split(separator: "\t").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
                items.append(DownloadItem(url: urls[0], mirrors: Array(urls.dropFirst()), origin: "\(name):\(number)"))
                folders.append(nil)
                continue
            }
            guard !items.isEmpty else { throw fail(number, "an option line before any URL") }
            guard let equals = trimmed.firstIndex(of: "=") else { throw fail(number, "an option line must be name=value, not \(trimmed)") }
            let option = String(trimmed[..<equals]).trimmingSpaces
            let value = String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces
            let last = items.count - 1
            switch option {
            case "out":
                guard let plain = DownloadRun.plainName(value), plain == value else { throw fail(number, "out must be a file name, not a path: \(value)") }
                items[last].output = value
            case "dir":
                guard !value.isEmpty else { throw fail(number, "dir is empty") }
                folders[last] = value
            case "header":
                guard let header = HeaderArgument(argument: value) else { throw fail(number, "header must be \"Name: value\", not \(value)") }
                items[last].headers.append(header)
            case "user-agent":
                items[last].headers.append(HeaderArgument(name: "User-Agent", value: value))
            case "referer":
                items[last].headers.append(HeaderArgument(name: "Referer", value: value))
            case "checksum":
                guard value.contains("=") else { throw fail(number, "checksum must be ALGORITHM=HEX, such as sha-256=…") }
                items[last].checksum = value
            case "split", "max-connection-per-server":
                guard let count = Int(value), (1...16).contains(count) else { throw fail(number, "\(option) must be 1 to 16, not \(value)") }
                items[last].segments = count
            case "max-download-limit":
                guard let rate = ByteFormat.parseRate(value) else { throw fail(number, "max-download-limit must be a rate such as 500K, not \(value)") }
                items[last].rate = rate
            default:
                throw fail(number, "unknown option \(option) (transferctl takes \(options.joined(separator: ", ")))")
            }
        }
        // A folder applies to the download's file, whether `out` names it or the server does (then
        // the folder is kept and the name comes at the end: "dir/").
        for (index, folder) in folders.enumerated() {
            guard let folder else { continue }
            let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
            items[index].output = base + "/" + (items[index].output ?? "")
        }
        return items
    }
}
