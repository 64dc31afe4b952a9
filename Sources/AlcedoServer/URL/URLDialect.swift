/// The URL grammar image paths are read in. Each dialect parses and signs its own URLs and
/// produces the same processing plan (an ``ImgproxyPath``); nothing after parsing depends on it.
public enum URLDialect: String, Sendable, Hashable, CaseIterable {
    /// imgproxy's URLs: `/SIGNATURE/OPTIONS/plain/URL` or `/SIGNATURE/OPTIONS/BASE64` (the default).
    case imgproxy
    /// thumbor 7.8's URLs: `/unsafe|SIGNATURE/[meta/][trim/][crop/][fit-in/][WxH/][align/][smart/][filters:…/]IMAGE`.
    case thumbor
}
