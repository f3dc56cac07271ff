/// An optional kept out of line: absent, it takes one pointer instead of the value's full size.
///
/// Why: a queued task carries many parts that stay absent until it runs or completes (its
/// current request, response, error, resume state, the cache's context). Inline, each absent
/// optional still took its value's whole size, so one queued task's entry in the service's
/// table was 1,184 bytes before any string or header. Set, the value lives in an immutable box
/// (a set replaces the box, so copies of the holder never share a change).
@propertyWrapper
public struct Indirect<Value: Sendable>: Sendable {
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box?

    public init(wrappedValue: Value?) { box = wrappedValue.map(Box.init) }

    public var wrappedValue: Value? {
        get { box?.value }
        set { box = newValue.map(Box.init) }
    }
}

extension Indirect: Equatable where Value: Equatable {
    public static func == (a: Indirect, b: Indirect) -> Bool { a.wrappedValue == b.wrappedValue }
}
