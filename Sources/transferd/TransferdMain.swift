import ArgumentParser
import FoundationEssentials

/// The executable's entry point: malloc's settings and the freed-memory timer first, before
/// any other thread allocates (every buffer is then made under the same settings), then the
/// command.
@main
enum TransferdMain {
    static func main() async {
        MallocSettings.apply(ProcessInfo.processInfo.environment)
        FreedMemoryReturn.start()
        await TransferdCommand.main()
    }
}
