/// A session's task ids (`ServiceState.tasksBySession`) ascend: a creation appends ids above
/// every earlier one, and the load reads them in id order. So a list's cursor and a removal
/// find their place by binary search instead of a scan of the session's tasks, which with a
/// million stored tasks cost milliseconds a request (issue 18: nothing linear in the stored
/// tasks on a request path).
extension Array where Element == Int {
    /// The index of the first id above `id` (`endIndex` when there is none).
    func ascendingIndex(after id: Int) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Removes `id` if it is there. The ids after it still move down one place (a memmove).
    mutating func removeAscending(_ id: Int) {
        let index = ascendingIndex(after: id - 1)
        if index < count, self[index] == id { remove(at: index) }
    }
}
