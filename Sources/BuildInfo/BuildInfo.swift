internal import CBuildInfo

/// What the binaries were built from: `transferd --version`, `transferctl --version` and the
/// `transferd_build_info` metric. The commit comes from the manifest (`CBuildInfo`): the
/// environment's TRANSFERD_BUILD_COMMIT (the Docker image and the .deb pass it in), else the git
/// checkout's HEAD when the package was last resolved, else "unknown".
public enum BuildInfo {
    /// The release these sources are.
    public static let version = "0.1.0"

    /// The git commit, or "unknown".
    public static let commit = String(cString: transferd_build_commit())

    /// "0.1.0 (commit 1b1ac97)": what `--version` prints.
    public static var description: String {
        "\(version) (commit \(commit == "unknown" ? commit : String(commit.prefix(12))))"
    }
}
