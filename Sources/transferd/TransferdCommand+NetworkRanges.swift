import ArgumentParser
internal import TransferModel

extension TransferdCommand {
    /// `--deny-networks` / `--allow-networks`: each flag value a comma-separated list of CIDR
    /// ranges; without the flag, the environment variable's list. A range that does not parse
    /// stops the daemon before it starts, naming the flag and the text.
    static func networkRanges(_ flags: [String], _ environment: [String: String], flag: String, variable: String) throws -> [NetworkRange] {
        let texts = flags.isEmpty ? [environment[variable] ?? ""] : flags
        var ranges: [NetworkRange] = []
        for text in texts {
            do {
                ranges += try NetworkRange.list(text)
            } catch {
                throw ValidationError("\(flag)/\(variable): \(error)")
            }
        }
        return ranges
    }
}
