internal import Glibc

/// What transferctl asks of the terminal: whether stderr is one (bar or plain lines) and how
/// wide it is (asked again at every redraw, so a resize is followed).
enum Terminal {
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// The width of stderr's terminal (TIOCGWINSZ), else $COLUMNS, else 80.
    static var columns: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let value = Int(text), value > 0 { return value }
        return 80
    }
}
