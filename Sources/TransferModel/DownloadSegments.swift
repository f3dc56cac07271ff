/// How many connections one download may use (`"segments"`) and the other URLs of the same
/// resource (`"mirrors"`): the limits and their checks, shared by the task's create body and the
/// session configuration's `maximumSegmentsPerDownload` (issue 18, item 2).
public enum DownloadSegments {
    /// The segments a download may ask for; 1 is a plain download over one connection.
    public static let allowed = 1...16
    /// The most mirror URLs one download may list.
    public static let maxMirrors = 8
    /// Mirrors must speak HTTP: segments are byte ranges of an HTTP representation.
    static let mirrorSchemes: Set<String> = ["http", "https"]

    /// Checks a segment count (`field` names it in the error).
    static func check(segments: Int, field: String) throws {
        guard allowed.contains(segments) else {
            throw InputError.invalidValue(field: field, message: "must be an integer from \(allowed.lowerBound) to \(allowed.upperBound)")
        }
    }

    /// Checks a mirror list: at most `maxMirrors` absolute http(s) URLs (`RequestURL.check`,
    /// the task URL's own check), none twice. The network policy applies to each mirror's
    /// connection when it is made, as to the task URL's.
    static func check(mirrors: [String], field: String) throws {
        guard mirrors.count <= maxMirrors else {
            throw InputError.invalidValue(field: field, message: "must list at most \(maxMirrors) URLs")
        }
        for (index, mirror) in mirrors.enumerated() {
            let itemField = "\(field)[\(index)]"
            try RequestURL.check(mirror, field: itemField)
            let scheme = mirror.prefix { $0 != ":" }.lowercased()
            guard mirrorSchemes.contains(scheme) else {
                throw InputError.invalidValue(field: itemField, message: "must be an http or https URL (a mirror serves byte ranges of the same resource)")
            }
            // A mirror is served back (the task's `mirrors`, didDropSource events, webhooks):
            // a password in it would be shown to everyone who reads the task. The session's
            // credentials answer a mirror's challenge instead.
            guard URLLogin.split(mirror).login == nil else {
                throw InputError.invalidValue(field: itemField, message: "must not carry a user or password; store them as the session's credentials for its host")
            }
        }
        guard Set(mirrors).count == mirrors.count else {
            throw InputError.invalidValue(field: field, message: "must not list a URL twice")
        }
    }
}

extension KeyedDecodingContainer {
    /// `"segments"`: an integer in `DownloadSegments.allowed`, or absent. Decoded as a number
    /// first, so 2.5 or "4" is a field error, not malformed JSON.
    func decodeSegments(forKey key: Key, field: String) throws -> Int? {
        guard let number = try decodeOmittable(Double.self, forKey: key) else { return nil }
        guard number.rounded() == number, abs(number) < 1e9 else {
            throw InputError.invalidValue(field: field, message: "must be an integer from \(DownloadSegments.allowed.lowerBound) to \(DownloadSegments.allowed.upperBound)")
        }
        try DownloadSegments.check(segments: Int(number), field: field)
        return Int(number)
    }

    /// `"mirrors"`: a list of URLs, or absent.
    func decodeMirrors(forKey key: Key, field: String) throws -> [String]? {
        guard let mirrors = try decodeOmittable([String].self, forKey: key) else { return nil }
        try DownloadSegments.check(mirrors: mirrors, field: field)
        return mirrors
    }
}
