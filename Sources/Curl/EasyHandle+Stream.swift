internal import CCurl
internal import Glibc

/// The outcome of one non-blocking `send` or `receive` on a connect-only handle.
public enum StreamIO: Equatable {
    /// `count` bytes moved.
    case moved(Int)
    /// Nothing can move now (CURLE_AGAIN): wait for the socket.
    case again
    /// The peer closed its sending side (receive only: 0 bytes with CURLE_OK).
    case closed
    case failed(CurlCode)
}

/// Raw byte streams over a connection made with `EasyOption.connectOnly`: after the handle's
/// transfer is done (the connection, and TLS for https, are up) bytes move with
/// curl_easy_send/curl_easy_recv, non-blocking, on the thread that owns the multi handle.
/// The handle stays in its multi handle meanwhile: removing it closes the connection.
/// - SeeAlso: https://curl.se/libcurl/c/curl_easy_send.html, https://curl.se/libcurl/c/curl_easy_recv.html
extension EasyHandle {
    /// Sends from `bytes`. Over TLS, a send that answered `.again` must be repeated with the
    /// same bytes at the same address (OpenSSL's write-retry rule): pass a slice of an array
    /// that was not changed in between.
    public func send(_ bytes: ArraySlice<UInt8>) -> StreamIO {
        var sent = 0
        let code = bytes.withUnsafeBytes { buffer in
            curl_easy_send(raw, buffer.baseAddress, buffer.count, &sent)
        }
        switch code {
        case CURLE_OK: return .moved(sent)
        case CURLE_AGAIN: return .again
        default: return .failed(CurlCode(code))
        }
    }

    /// Receives up to `limit` bytes: `.moved(n)` with those `n` bytes, else no bytes.
    public func receive(upTo limit: Int) -> (StreamIO, [UInt8]) {
        var code = CURLE_OK
        let bytes = [UInt8](unsafeUninitializedCapacity: limit) { buffer, count in
            var received = 0
            code = curl_easy_recv(raw, buffer.baseAddress, limit, &received)
            count = code == CURLE_OK ? received : 0
        }
        switch code {
        case CURLE_OK: return bytes.isEmpty ? (.closed, []) : (.moved(bytes.count), bytes)
        case CURLE_AGAIN: return (.again, [])
        default: return (.failed(CurlCode(code)), [])
        }
    }

    /// The connected socket of a connect-only transfer (CURLINFO_ACTIVESOCKET), for waiting on
    /// it and for shutdown(2); nil before the connection is up or after it is gone.
    public var activeSocket: Int32? {
        var socket: curl_socket_t = CURL_SOCKET_BAD
        guard transferd_easy_getinfo_socket(raw, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket != CURL_SOCKET_BAD else { return nil }
        return socket
    }

    /// Makes the next connect use `socket`, already connected (CURLOPT_OPENSOCKETFUNCTION hands
    /// it over, CURLOPT_SOCKOPTFUNCTION answers CURL_SOCKOPT_ALREADY_CONNECTED), so curl only
    /// does TLS on it: STARTTLS-style upgrades. curl owns the socket from then on and closes
    /// it; if it never takes it, the handle closes it when freed. Set before adding the handle.
    public func adopt(socket: Int32) throws(CurlCode) {
        adoptedSocket = socket
        try setOpenSocketCallback()
        try setSocketCallbacks()  // the sockopt callback answers ALREADY_CONNECTED for it
    }
}
