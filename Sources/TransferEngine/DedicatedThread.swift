internal import Glibc

/// Starts a detached POSIX thread running `body`. A closure that captures cannot be handed to
/// pthread_create directly (it crashes the 6.3 compiler, STYLE.md), so the body travels in a box
/// through the thread's argument and a non-capturing trampoline unpacks it.
package enum DedicatedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    package static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(box).release()
            body()  // no thread to be had: run inline rather than lose the work
        }
    }
}
