/// An optional kept out of line: absent, it takes one pointer instead of the value's full size.
///
/// Why: a queued task carries many parts that stay absent until it runs or completes (its
/// current request, response, error, resume state, the cache's context). Inline, each absent
/// optional still took its value's whole size, so one queued task's entry in the service's
/// table was 1,184 bytes before any string or header. Set, the value lives in an immutable box
/// (a set replaces the box, so copies of the holder never share a change).
///
/// Inlinable, and without `Optional.map`: called unspecialized (TransferTask's init is used from
/// other modules), every get, set and init looked up `Optional<Value>`'s type metadata at run
/// time, about 650 instructions each: 4% of a batch's instructions (callgrind).
@propertyWrapper
@frozen
public struct Indirect<Value: Sendable>: Sendable {
    @usableFromInline
    final class Box: Sendable {
        @usableFromInline let value: Value
        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box?

    @inlinable
    public init(wrappedValue: Value?) {
        if let wrappedValue { box = Box(wrappedValue) } else { box = nil }
    }

    @inlinable
    public var wrappedValue: Value? {
        get {
            guard let box else { return nil }
            return box.value
        }
        set {
            if let newValue { box = Box(newValue) } else { box = nil }
        }
    }
}

extension Indirect: Equatable where Value: Equatable {
    public static func == (a: Indirect, b: Indirect) -> Bool { a.wrappedValue == b.wrappedValue }
}
