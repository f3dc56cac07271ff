internal import Glibc

extension DigestAccumulator {
    /// Hashes `range` of `descriptor`'s file, read through `buffer`; false when a read failed or
    /// came short (the file no longer holds all of `range`).
    mutating func update(reading range: Range<Int>, of descriptor: Int32, through buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = pread(descriptor, buffer.baseAddress, min(buffer.count, range.upperBound - offset), off_t(offset))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += count
        }
        return true
    }
}
