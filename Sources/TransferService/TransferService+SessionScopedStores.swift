extension TransferService {
    /// Every store kept per session (cookies, URL cache, credentials), for reset, flush and
    /// invalidation. Each store adds itself here.
    var sessionScopedStores: [any SessionScopedStore] {
        [cookieStorage, credentials, urlCaches]
    }
}
