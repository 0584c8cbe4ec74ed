/// Whether libcurl can be loaded (`dlopen("libcurl.so.4")`), and if not, why.
///
/// Placeholder of the integration skeleton: the curl transport (issue 15) replaces this file with the real
/// loader. Until then `.curl` reports itself unavailable rather than pretending to work.
enum CurlAvailability {
    static let unavailableReason: String? = "the libcurl transport is not part of this build yet"
}
