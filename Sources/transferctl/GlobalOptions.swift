/// The options every subcommand takes (`ConnectionOptions`: --server, --token, --json) may also
/// come before the subcommand, as with curl or git: `transferctl --server URL get ...`. They are
/// moved after it before parsing, so every subcommand parses them in one place.
enum GlobalOptions {
    /// Options that take a value, as `--name VALUE` or `--name=VALUE`.
    static let withValue: Set<String> = ["--server", "--token"]
    /// Flags.
    static let flags: Set<String> = ["--json"]

    static func movedAfterSubcommand(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if flags.contains(argument) || (withValue.contains(name) && argument.contains("=")) {
                moved.append(argument)
                index += 1
            } else if withValue.contains(argument), index + 1 < arguments.count {
                moved += [argument, arguments[index + 1]]
                index += 2
            } else {
                break  // the subcommand (or --help, --version, or a mistake ArgumentParser names)
            }
        }
        guard !moved.isEmpty, index < arguments.count else { return arguments }
        // The subcommand (none has subcommands of its own), then the moved options, then the rest.
        let subcommand = arguments[index]
        return [subcommand] + moved + arguments[(index + 1)...]
    }
}
