extension ImageDownloader {
    /// Limits and defaults shared by every download of one ``ImageDownloader``.
    public struct Configuration: Sendable {
        /// Requests sent to one host (scheme, host and port) at the same time (default 6);
        /// the others wait, served by ``DownloadPriority`` and then in order.
        public var maximumConcurrentRequestsPerHost: Int
        /// How long connecting may take, for the built-in loader (default 10 s). A loader you
        /// pass in uses its own setting.
        public var connectTimeout: Duration
        /// How long one attempt may take from sending the request to the last body byte,
        /// redirects included (default 15 s). It also fires when a server stops sending in the
        /// middle of a body. Waiting for a free place under the per-host limit is not counted.
        public var timeout: Duration
        /// The largest body accepted, in bytes (default 32 MiB). A larger `Content-Length` fails
        /// before the body is read; a body without one stops as soon as it goes over.
        public var maximumBodySize: Int
        /// The status codes accepted as a success (default 200...299). A `304` is also accepted
        /// when the request carried validators (see ``ImageDownloader/revalidateData(with:validators:options:progressBlock:)``).
        public var acceptableStatusCodes: Set<Int>
        /// The most redirects followed in one attempt (default 10).
        public var maximumRedirects: Int
        /// Header fields sent with every request before the request modifier runs (default:
        /// `Accept` listing the image types Alcedo decodes, and `User-Agent: Alcedo`). Put
        /// credentials here (`Authorization`) to authenticate every request.
        public var defaultHeaders: HTTPHeaderFields
        /// Follows each download and sees each complete body before it is used, to reject or
        /// rewrite it (default `nil`). Held strongly (Kingfisher holds its delegate weakly).
        public var delegate: (any ImageDownloaderDelegate)? {
            get { delegateBox?.delegate }
            set { delegateBox = newValue.map(ImageDownloaderDelegateBox.init) }
        }
        private var delegateBox: ImageDownloaderDelegateBox?
        /// Counts each body against this budget while it arrives (default `nil`: not counted).
        /// A download reserves its `Content-Length` (256 KiB when there is none) with
        /// ``MemoryBudget/reserveMemory(_:for:)`` once the response's head is in, waiting while
        /// the memory is not free (the wait counts against ``timeout``), grows the reservation
        /// with its buffer as more arrives (without waiting), and releases it when the body is
        /// handed on; many large downloads at once then wait instead of exceeding the budget.
        /// A body that could never fit fails with ``AlcedoError/memoryBudgetError(reason:)``.
        public var memoryBudget: MemoryBudget?

        /// Creates a configuration; every parameter defaults to the value stated on its property.
        public init(maximumConcurrentRequestsPerHost: Int = 6, connectTimeout: Duration = .seconds(10),
                    timeout: Duration = .seconds(15), maximumBodySize: Int = 32 << 20,
                    acceptableStatusCodes: Set<Int> = Set(200..<300), maximumRedirects: Int = 10,
                    defaultHeaders: HTTPHeaderFields = Configuration.standardHeaders,
                    delegate: (any ImageDownloaderDelegate)? = nil, memoryBudget: MemoryBudget? = nil) {
            self.maximumConcurrentRequestsPerHost = maximumConcurrentRequestsPerHost
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.maximumBodySize = maximumBodySize
            self.acceptableStatusCodes = acceptableStatusCodes
            self.maximumRedirects = maximumRedirects
            self.defaultHeaders = defaultHeaders
            self.memoryBudget = memoryBudget
            self.delegate = delegate
        }

        /// `Accept: image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8` and `User-Agent: Alcedo`.
        public static let standardHeaders: HTTPHeaderFields = [
            "Accept": "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8",
            "User-Agent": "Alcedo",
        ]
    }
}
