/// `--json` output: the daemon's JSON bytes as they came, one document a line.
enum JSONOutput {
    static func print(_ body: [UInt8]) {
        var text = String(decoding: body, as: UTF8.self)
        while text.last == "\n" || text.last == " " { text.removeLast() }
        StandardStreams.out(text + "\n")
    }
}
