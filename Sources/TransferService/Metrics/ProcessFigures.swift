internal import Glibc

/// The daemon process's own figures, read from /proc at scrape time for `/metrics`'s
/// `process_*` families (the names Prometheus' client libraries use, so dashboards made for
/// them work). Linux only; a figure that cannot be read is nil and its gauge is left as it was.
struct ProcessFigures: Sendable, Equatable {
    /// User plus system CPU time since the process started.
    var cpuSeconds: Double?
    var residentBytes: Int?
    var virtualBytes: Int?
    var openDescriptors: Int?
    var maxDescriptors: Int?
    var threads: Int?
    /// Seconds since 1970 when the process started.
    var startTime: Double?

    /// Reads them now.
    static func read() -> ProcessFigures {
        var figures = ProcessFigures()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = sysconf(Int32(_SC_PAGESIZE))
        if let stat = text(of: "/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            // After "pid (comm)" the fields are space-separated; comm itself may hold spaces.
            // Field 3 (state) is the first here, so field n is at index n - 3.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ n: Int) -> Double? { fields.count > n - 3 ? Double(fields[n - 3]) : nil }
            if let user = field(14), let system = field(15), ticks > 0 { figures.cpuSeconds = (user + system) / ticks }
            figures.threads = field(20).map { Int($0) }
            figures.virtualBytes = field(23).map { Int($0) }
            if let started = field(22), ticks > 0, let boot = bootTime() { figures.startTime = boot + started / ticks }
        }
        if let statm = text(of: "/proc/self/statm") {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let pages = Int(fields[1]) { figures.residentBytes = pages * page }
        }
        figures.openDescriptors = countEntries(of: "/proc/self/fd")
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { figures.maxDescriptors = Int(clamping: limit.rlim_cur) }
        return figures
    }

    /// The system's boot time (seconds since 1970), from /proc/stat's btime line.
    private static func bootTime() -> Double? {
        guard let stat = text(of: "/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count).trimmingPrefix(" "))
        }
        return nil
    }

    /// A small /proc file's text (they report a size of 0, so read until the end).
    private static func text(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
            if bytes.count > 1 << 20 { break }
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// Entries of a folder, "." and ".." left out (the descriptor opendir itself holds is one
    /// of them while it counts, so one less).
    private static func countEntries(of path: String) -> Int? {
        guard let folder = opendir(path) else { return nil }
        defer { closedir(folder) }
        var count = 0
        while let entry = readdir(folder) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return max(0, count - 1)
    }
}
