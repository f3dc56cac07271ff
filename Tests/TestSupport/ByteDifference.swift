public import Foundation

/// Where two byte strings first differ, in words (nil: equal). For large bodies in place of
/// `#expect(actual == expected)`: on a failure Swift Testing diffs two Collections element by
/// element (Myers), which for two 1 MiB bodies ran on both cores for a quarter of an hour
/// instead of failing.
public func byteDifference(_ actual: Data, _ expected: Data) -> String? {
    guard actual != expected else { return nil }
    let index = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    return "\(actual.count) bytes, expected \(expected.count); first difference at \(index.map(String.init) ?? "the end")"
}
