import ArgumentParser
import FoundationEssentials

/// The executable's entry point: malloc's settings first, while the main thread is the only one
/// that has allocated (glibc fixes how many arenas it may make when the second one is made, so
/// `MallocSettings` must come before any other thread allocates), then the command.
@main
enum TransferdMain {
    static func main() async {
        if ProcessInfo.processInfo.environment["TD_DEBUG_THREADS"] != nil { print("threads at main:", (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1) }
        let environment = ProcessInfo.processInfo.environment
        MallocSettings.apply(environment)
        FreedMemoryReturn.start(environment)
        await TransferdCommand.main()
    }
}
