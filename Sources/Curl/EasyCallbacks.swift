internal import CCurl
internal import Glibc

// libcurl's callbacks. They are file-scope C function pointers (never closures formed inside
// isolated code), receive the owning EasyHandle through Unmanaged userdata, and never throw,
// block, or trap. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_WRITEFUNCTION.html

let curlWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard let delegate = handle.delegate else { return length }
    let buffer = UnsafeRawBufferPointer(start: data, count: length)
    switch delegate.easyHandle(handle, didReceive: buffer.bytes) {
    case .accept: return length
    case .pause: return Int(CURL_WRITEFUNC_PAUSE)
    case .fail: return 0  // anything but `length` makes curl fail with CURLE_WRITE_ERROR
    }
}

let curlHeaderCallback: curl_write_callback = { data, size, count, userdata in
    let length = size * count
    guard let userdata, let data else { return length }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    // Trim CR/LF as bytes: Swift treats "\r\n" as one Character, so String suffix checks miss it.
    var bytes = UnsafeRawBufferPointer(start: data, count: length)
    while let last = bytes.last, last == 10 || last == 13 { bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast()) }
    let line = String(decoding: bytes, as: UTF8.self)
    guard let delegate = handle.delegate else { return length }
    // - SeeAlso: https://curl.se/libcurl/c/CURLOPT_HEADERFUNCTION.html (any other count fails the transfer)
    return delegate.easyHandle(handle, didReceiveHeaderLine: line) ? length : 0
}

/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_READFUNCTION.html (0 ends the body)
let curlReadCallback: curl_read_callback = { buffer, size, count, userdata in
    guard let userdata, let buffer else { return Int(CURL_READFUNC_ABORT) }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    guard let delegate = handle.delegate else { return Int(CURL_READFUNC_ABORT) }
    var span = UnsafeMutableRawBufferPointer(start: buffer, count: size * count).mutableBytes
    switch delegate.easyHandle(handle, fill: &span) {
    case .filled(let length): return min(length, size * count)
    case .abort: return Int(CURL_READFUNC_ABORT)
    case .pause: return Int(CURL_READFUNC_PAUSE)
    }
}

/// Asked to send the body again from `offset` (a 307/308 redirect, an authentication round, a
/// retry on a reused connection). - SeeAlso: https://curl.se/libcurl/c/CURLOPT_SEEKFUNCTION.html
let curlSeekCallback: curl_seek_callback = { userdata, offset, origin in
    guard let userdata, origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    guard let delegate = handle.delegate else { return CURL_SEEKFUNC_CANTSEEK }
    return delegate.easyHandle(handle, rewindBodyTo: Int(offset)) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
}

/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_XFERINFOFUNCTION.html (non-zero aborts)
let curlXferInfoCallback: curl_xferinfo_callback = { userdata, dltotal, dlnow, ultotal, ulnow in
    guard let userdata else { return 0 }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    let counters = TransferCounters(downloadTotal: Int(dltotal), downloaded: Int(dlnow), uploadTotal: Int(ultotal), uploaded: Int(ulnow))
    guard let delegate = handle.delegate else { return 0 }
    return delegate.easyHandle(handle, progress: counters) ? 0 : 1
}

/// Marks each socket curl opens for the transfer (CURLSOCKTYPE_IPCXN) with the handle's DSCP,
/// and records it with its multi handle's `SocketMarks`. A marking the kernel refuses leaves
/// the connection unmarked rather than failing it.
/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_SOCKOPTFUNCTION.html
let curlSockoptCallback: curl_sockopt_callback = { userdata, fd, purpose in
    guard let userdata, purpose == CURLSOCKTYPE_IPCXN else { return CURL_SOCKOPT_OK }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    // A socket handed over by `EasyHandle.adopt(socket:)` is connected already: no connect().
    if fd == handle.takenOverSocket {
        handle.socketMarks?.opened(fd, dscp: 0)
        return CURL_SOCKOPT_ALREADY_CONNECTED
    }
    let dscp = handle.dscp ?? 0
    let marked = dscp != 0 && SocketMarking.mark(fd, dscp: dscp)
    handle.socketMarks?.opened(fd, dscp: marked ? dscp : 0)
    return CURL_SOCKOPT_OK
}

/// Closes a socket curl opened, forgetting its marking. Its userdata is the multi handle's
/// `SocketMarks` (curl keeps the callback of the handle that opened the connection and may
/// close it much later, after that easy handle is gone).
/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_CLOSESOCKETFUNCTION.html
let curlCloseSocketCallback: curl_closesocket_callback = { userdata, fd in
    if let userdata { Unmanaged<SocketMarks>.fromOpaque(userdata).takeUnretainedValue().closed(fd) }
    return close(fd)
}

/// Called once the connection for a request is ready, new or reused: a reused one may carry
/// another transfer's marking. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_PREREQFUNCTION.html
let curlPrereqCallback: curl_prereq_callback = { userdata, primaryIP, _, primaryPort, localPort in
    guard let userdata, let primaryIP else { return CURL_PREREQFUNC_OK }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    let endpoints = SocketMarks.Endpoints(localPort: Int(localPort), peerAddress: String(cString: primaryIP), peerPort: Int(primaryPort))
    handle.socketMarks?.ensure(endpoints, dscp: handle.dscp ?? 0)
    return CURL_PREREQFUNC_OK
}

/// Opens each socket curl asks for, once the handle's `ConnectionGate` allows its address
/// (CURL_SOCKET_BAD refuses it: curl tries the host's next address or fails with
/// CURLE_COULDNT_CONNECT). A handle that adopted a socket (`EasyHandle.adopt(socket:)`) gets
/// it, once, instead: it is the connection the plain handle made, through the same gate; any
/// further attempt (another address of the host) then gets none.
/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_OPENSOCKETFUNCTION.html
let curlOpenSocketCallback: curl_opensocket_callback = { userdata, purpose, address in
    guard let userdata, let address else { return CURL_SOCKET_BAD }
    let handle = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    if handle.adoptedSocket >= 0 || handle.takenOverSocket >= 0 {
        let fd = handle.adoptedSocket
        guard purpose == CURLSOCKTYPE_IPCXN, fd >= 0 else { return CURL_SOCKET_BAD }
        handle.adoptedSocket = -1
        handle.takenOverSocket = fd
        return fd
    }
    guard handle.mayConnect(to: UnsafePointer(address)) else { return CURL_SOCKET_BAD }
    // What curl does without the callback (lib/cf-socket.c socket_open), close-on-exec added.
    return socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
}
