internal import Glibc
public import FoundationEssentials

/// The growing bytes `TaskJSONWriter` writes into: one malloc'd block, grown by realloc, handed
/// to `Data` without a copy when done.
///
/// Why not `[UInt8]`: each append to an Array checks that its buffer is unique and has room, on
/// a path that is not inlined for appends of several bytes; a task record is about 250 appends,
/// and `Data(array)` copied the whole record once more. The JSON writers were half of the store
/// writer's instructions per 16 KiB download (callgrind) and an eighth of a batch's CPU.
///
/// Noncopyable: the block has one owner, freed in `deinit` or given away by `data()`.
struct JSONBytes: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        guard let block = malloc(self.capacity) else { fatalError("out of memory for \(self.capacity) bytes of JSON") }
        base = block.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(base) }

    var last: UInt8? { count > 0 ? base[count - 1] : nil }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// `,"name":`, without the comma right after a `{`: a task has about 40 keys, and one
    /// reservation and copy for the whole of each is half the cost of appending its parts.
    @inline(__always)
    mutating func appendKey(_ name: UnsafeBufferPointer<UInt8>) {
        let comma = count == 0 || base[count - 1] != UInt8(ascii: "{")
        let length = name.count + (comma ? 4 : 3)
        if count + length > capacity { grow(toHold: count + length) }
        var at = base + count
        if comma { at.pointee = UInt8(ascii: ","); at += 1 }
        at.pointee = UInt8(ascii: "\""); at += 1
        if let source = name.baseAddress { at.update(from: source, count: name.count) }
        at += name.count
        at[0] = UInt8(ascii: "\""); at[1] = UInt8(ascii: ":")
        count += length
    }

    /// `"text"` for text that needs no escapes, in one reservation.
    @inline(__always)
    mutating func appendQuoted(_ text: UnsafeBufferPointer<UInt8>) {
        let length = text.count + 2
        if count + length > capacity { grow(toHold: count + length) }
        let at = base + count
        at.pointee = UInt8(ascii: "\"")
        if let source = text.baseAddress { (at + 1).update(from: source, count: text.count) }
        at[text.count + 1] = UInt8(ascii: "\"")
        count += length
    }

    /// Bytes from any collection: contiguous ones (Data, Array, a native String's UTF-8) at once.
    mutating func append(contentsOf bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append($0) }
        guard done == nil else { return }
        if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
        for byte in bytes { append(byte) }
    }

    mutating func removeLast() {
        precondition(count > 0, "removeLast of no JSON bytes")
        count -= 1
    }

    /// Drops what was written after the first `length` bytes.
    mutating func truncate(to length: Int) {
        precondition(0 <= length && length <= count, "truncate to \(length) of \(count) JSON bytes")
        count = length
    }

    /// The bytes written, as Data that takes the block over (no copy).
    consuming func data() -> Data {
        let (block, length) = (base, count)
        discard self
        // Nothing written: freed here rather than trusting an empty Data to call the deallocator.
        guard length > 0 else {
            free(block)
            return Data()
        }
        return Data(bytesNoCopy: block, count: length, deallocator: .free)
    }

    private mutating func grow(toHold needed: Int) {
        var size = capacity
        while size < needed { size *= 2 }
        guard let block = realloc(base, size) else { fatalError("out of memory for \(size) bytes of JSON") }
        base = block.assumingMemoryBound(to: UInt8.self)
        capacity = size
    }
}
